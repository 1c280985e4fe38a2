package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/nsrnn/nsrnn/data/ptb"
)

// unknownWords counts, per file, the words read as <unk> because they are
// not in the vocabulary, and keeps the first of each file for messages.
type unknownWords struct {
	files []string
	count map[string]int
	first map[string]string
}

func newUnknownWords() *unknownWords {
	return &unknownWords{count: map[string]int{}, first: map[string]string{}}
}

// add records an unknown word of file at line (0: no line; where then
// says where it is); it is a ptb.Options.Unknown.
func (u *unknownWords) add(file string, line int, word string) {
	u.addAt(file, fmt.Sprintf("%q at line %d", word, line))
}

// addAt records an unknown word of file, described by what.
func (u *unknownWords) addAt(file, what string) {
	if _, ok := u.count[file]; !ok {
		u.files = append(u.files, file)
		u.first[file] = what
	}
	u.count[file]++
}

// total is the number of unknown words of every file.
func (u *unknownWords) total() int {
	n := 0
	for _, c := range u.count {
		n += c
	}
	return n
}

// report writes one line to w, prefixed by cmd, when there were unknown
// words: how many in each file, the first of each, and that --strict
// refuses them; vocab names the vocabulary.
func (u *unknownWords) report(w io.Writer, cmd, vocab string) {
	if len(u.files) == 0 {
		return
	}
	var parts []string
	for _, f := range u.files {
		parts = append(parts, fmt.Sprintf("%d in %s (first %s)", u.count[f], f, u.first[f]))
	}
	fmt.Fprintf(w, "%s: %d words not in %s were read as %s: %s; --strict refuses them\n", cmd, u.total(), vocab, ptb.UnkWord, strings.Join(parts, ", "))
}
