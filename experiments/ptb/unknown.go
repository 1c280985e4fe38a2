package main

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/nsrnn/nsrnn/data/ptb"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
)

// maxUnknownShown is the most distinct unknown words that a report line
// shows of one file.
const maxUnknownShown = 5

// unknownWords counts, per file, the words read as <unk> because they are
// not in the vocabulary, and keeps, for messages, where the first of each
// file is and the first few distinct ones.
type unknownWords struct {
	files []string
	count map[string]int
	first map[string]string   // where the file's first unknown word is
	words map[string][]string // the file's first distinct unknown words
	more  map[string]bool     // the file has more distinct ones than words
	comma bool                // "," is among the words
	// noStrict leaves out of the report that --strict refuses them, for
	// a command without --strict.
	noStrict bool
}

func newUnknownWords() *unknownWords {
	return &unknownWords{count: map[string]int{}, first: map[string]string{}, words: map[string][]string{}, more: map[string]bool{}}
}

// add records an unknown word of file at line; it is a
// ptb.Options.Unknown.
func (u *unknownWords) add(file string, line int, word string) {
	u.addAt(file, word, fmt.Sprintf("at line %d", line))
}

// addAt records an unknown word of file, where saying where it is ("at
// line 3", "in item 2, condition x, region 1").
func (u *unknownWords) addAt(file, word, where string) {
	if _, ok := u.count[file]; !ok {
		u.files = append(u.files, file)
		u.first[file] = fmt.Sprintf("%q %s", word, where)
	}
	u.count[file]++
	switch ws := u.words[file]; {
	case slices.Contains(ws, word):
	case len(ws) < maxUnknownShown:
		u.words[file] = append(ws, word)
	default:
		u.more[file] = true
	}
	u.comma = u.comma || word == ","
}

// total is the number of unknown words of every file.
func (u *unknownWords) total() int {
	n := 0
	for _, c := range u.count {
		n += c
	}
	return n
}

// report writes to w, each line prefixed by cmd, when there were unknown
// words: a line with their number and (unless noStrict) that --strict
// refuses them, then
// one line per file with its count, where its first unknown word is and
// its first few distinct ones, and a hint when "," is among them (the
// Penn Treebank's vocabulary has no punctuation); vocab names the
// vocabulary.
func (u *unknownWords) report(w io.Writer, cmd, vocab string) {
	if len(u.files) == 0 {
		return
	}
	were, strict := "were", " (--strict refuses them)"
	if u.total() == 1 {
		were, strict = "was", " (--strict refuses it)"
	}
	if u.noStrict {
		strict = ""
	}
	fmt.Fprintf(w, "%s: %s not in %s %s read as %s%s:\n", cmd, cli.Count(u.total(), "word"), vocab, were, ptb.UnkWord, strict)
	for _, f := range u.files {
		quoted := make([]string, len(u.words[f]))
		for i, word := range u.words[f] {
			quoted[i] = fmt.Sprintf("%q", word)
		}
		more := ""
		if u.more[f] {
			more = ", …"
		}
		words := "word"
		if u.count[f] != 1 {
			words = "words"
		}
		fmt.Fprintf(w, "%s:   %s: %d unknown %s, the first %s; among them %s%s\n", cmd, f, u.count[f], words, u.first[f], strings.Join(quoted, ", "), more)
	}
	if u.comma {
		fmt.Fprintf(w, "%s: \",\" is among them: the Penn Treebank's vocabulary (Mikolov's preprocessing) has no commas or other punctuation, so each reads as %s; "+
			"text for a PTB model is best written without them\n", cmd, ptb.UnkWord)
	}
}
