package ptb

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"unicode"
	"unicode/utf8"

	"github.com/nsrnn/nsrnn/internal/lines"
)

// Defaults for the zero fields of Options.
const (
	// DefaultMaxVocab is the default limit on the size of a vocabulary,
	// EOSWord and UnkWord included.
	DefaultMaxVocab = 1_000_000
	// DefaultMaxLineBytes is the default limit on the length of one line
	// of a split or vocabulary file, in bytes, without its newline.
	DefaultMaxLineBytes = 1 << 24
	// DefaultMaxTokens is the default limit on the tokens of one split,
	// EOSWord after every line included (8 GiB as ids).
	DefaultMaxTokens = 1 << 30
)

// Options are the limits and policies of reading. A nil *Options, and
// every zero field, means the default.
type Options struct {
	// MaxVocab is the largest vocabulary accepted, EOSWord and UnkWord
	// included: building a vocabulary from a training file with more
	// types, or loading a vocabulary file with more words, fails with
	// ErrVocabTooLarge instead of running out of memory. 0 means
	// DefaultMaxVocab; otherwise it must be at least 2.
	MaxVocab int
	// MaxLineBytes is the longest line accepted, in bytes without the
	// newline; a longer line fails with ErrLineTooLong. 0 means
	// DefaultMaxLineBytes.
	MaxLineBytes int
	// MaxTokens is the most tokens of a split, EOSWord after every line
	// included; a split with more fails with ErrSplitTooLarge instead of
	// running out of memory. 0 means DefaultMaxTokens.
	MaxTokens int
	// Strict makes a word of a validation or test split that is not in the
	// vocabulary an error (ErrUnknownWord, naming the file and line)
	// instead of reading it as UnkWord.
	Strict bool
	// Unknown, when set, is called (without Strict) for every word of a
	// validation or test split that is not in the vocabulary and is read
	// as UnkWord, with the split's file name (as in errors) and the
	// word's line, so that the caller can count and report them.
	Unknown func(file string, line int, word string)
	// VocabSize, when positive, limits the vocabulary that ReadTrain
	// builds to the VocabSize most frequent types of the training split
	// (EOSWord, which is not a type of the file, aside; UnkWord counts as
	// a type when the file has it): the other words of the training split
	// are read as UnkWord, which is added when it is not among them. Ties
	// in frequency go to the type that occurs first in the file, and the
	// kept types keep their ids' order, that of first occurrence. This is
	// for corpora that are not preprocessed to a vocabulary; 0 keeps every
	// type, as for the Penn Treebank. Negative is an error.
	VocabSize int
}

// resolve returns the options with defaults filled in, or an error for
// invalid values.
func (o *Options) resolve() (Options, error) {
	var r Options
	if o != nil {
		r = *o
	}
	switch {
	case r.MaxVocab < 0 || r.MaxVocab == 1:
		return r, fmt.Errorf("ptb: Options.MaxVocab is %d, want 0 (default) or at least 2", r.MaxVocab)
	case r.VocabSize < 0:
		return r, fmt.Errorf("ptb: Options.VocabSize is %d, want 0 (every type) or positive", r.VocabSize)
	case r.MaxLineBytes < 0:
		return r, fmt.Errorf("ptb: Options.MaxLineBytes is %d, want 0 (default) or positive", r.MaxLineBytes)
	case r.MaxTokens < 0:
		return r, fmt.Errorf("ptb: Options.MaxTokens is %d, want 0 (default) or positive", r.MaxTokens)
	}
	if r.MaxVocab == 0 {
		r.MaxVocab = DefaultMaxVocab
	}
	if r.MaxLineBytes == 0 {
		r.MaxLineBytes = DefaultMaxLineBytes
	}
	if r.MaxTokens == 0 {
		r.MaxTokens = DefaultMaxTokens
	}
	return r, nil
}

// ReadTrain reads the training split at path and builds the vocabulary
// from it (see the package documentation for the id order). It returns the
// vocabulary and the split as token ids, EOSWord's id after every line.
// Errors name the file and, where there is one, the line.
func ReadTrain(path string, opt *Options) (*Vocab, []int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, fmt.Errorf("ptb: reading training split: %w", err)
	}
	defer f.Close()
	return ReadTrainFrom(f, path, opt)
}

// ReadTrainFrom is ReadTrain for a reader; name is the file name used in
// errors.
func ReadTrainFrom(r io.Reader, name string, opt *Options) (*Vocab, []int, error) {
	o, err := opt.resolve()
	if err != nil {
		return nil, nil, err
	}
	v := &Vocab{words: []string{EOSWord}, ids: map[string]int{EOSWord: 0}, eos: 0, unk: -1}
	var toks []int
	err = scanWords(r, name, o.MaxLineBytes, o.MaxTokens,
		func(w []byte, line int) error {
			if id, ok := v.ids[string(w)]; ok {
				toks = append(toks, id)
				return nil
			}
			s := string(w)
			reserve := 1 // room for UnkWord, added at the end if never seen
			if v.unk >= 0 || s == UnkWord {
				reserve = 0
			}
			if len(v.words)+1+reserve > o.MaxVocab {
				return &LineError{File: name, Line: line, Err: fmt.Errorf("%w: more than MaxVocab = %d words with %s and %s", ErrVocabTooLarge, o.MaxVocab, EOSWord, UnkWord)}
			}
			id := len(v.words)
			v.words = append(v.words, s)
			v.ids[s] = id
			if s == UnkWord {
				v.unk = id
			}
			toks = append(toks, id)
			return nil
		},
		func() { toks = append(toks, v.eos) })
	if err != nil {
		return nil, nil, fmt.Errorf("ptb: reading training split: %w", err)
	}
	if o.VocabSize > 0 {
		v, toks = mostFrequent(v, toks, o.VocabSize)
	}
	if v.unk < 0 {
		v.unk = len(v.words)
		v.words = append(v.words, UnkWord)
		v.ids[UnkWord] = v.unk
	}
	return v, toks, nil
}

// mostFrequent limits v, built from toks (EOSWord with id 0, the types
// in order of first occurrence, UnkWord possibly not yet added: unk < 0),
// to EOSWord and the n most frequent types, ties to the earlier type,
// reading the others as UnkWord (added at the end when it is not kept),
// and returns the new vocabulary and toks in its ids.
func mostFrequent(v *Vocab, toks []int, n int) (*Vocab, []int) {
	count := make([]int, len(v.words))
	for _, t := range toks {
		count[t]++
	}
	types := make([]int, 0, len(v.words)-1)
	for id := range v.words {
		if id != v.eos {
			types = append(types, id)
		}
	}
	if len(types) <= n {
		return v, toks
	}
	// Stable: equal counts keep the order of first occurrence.
	slices.SortStableFunc(types, func(a, b int) int { return count[b] - count[a] })
	keep := make([]bool, len(v.words))
	keep[v.eos] = true
	for _, id := range types[:n] {
		keep[id] = true
	}
	w := &Vocab{ids: map[string]int{}, unk: -1}
	newID := make([]int, len(v.words))
	for id, word := range v.words {
		if !keep[id] {
			continue
		}
		newID[id] = len(w.words)
		w.ids[word] = len(w.words)
		w.words = append(w.words, word)
	}
	w.eos = newID[v.eos]
	if u, ok := w.ids[UnkWord]; ok {
		w.unk = u
	} else {
		w.unk = len(w.words)
		w.words = append(w.words, UnkWord)
		w.ids[UnkWord] = w.unk
	}
	out := make([]int, len(toks))
	for i, t := range toks {
		if keep[t] {
			out[i] = newID[t]
		} else {
			out[i] = w.unk
		}
	}
	return w, out
}

// ReadSplit reads a split (validation or test) at path into token ids with
// the vocabulary v, EOSWord's id after every line. A word not in v is read
// as v.Unk(), or, with Options.Strict, is an error. Errors name the file
// and, where there is one, the line.
func ReadSplit(path string, v *Vocab, opt *Options) ([]int, error) {
	return readSplit(path, "split", v, opt)
}

// readSplit is ReadSplit, its errors naming the split as what ("split",
// "validation split", "test split").
func readSplit(path, what string, v *Vocab, opt *Options) ([]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ptb: reading %s: %w", what, err)
	}
	defer f.Close()
	return readSplitFrom(f, path, what, v, opt)
}

// ReadSplitFrom is ReadSplit for a reader; name is the file name used in
// errors.
func ReadSplitFrom(r io.Reader, name string, v *Vocab, opt *Options) ([]int, error) {
	return readSplitFrom(r, name, "split", v, opt)
}

func readSplitFrom(r io.Reader, name, what string, v *Vocab, opt *Options) ([]int, error) {
	o, err := opt.resolve()
	if err != nil {
		return nil, err
	}
	if v == nil || len(v.words) == 0 {
		return nil, fmt.Errorf("ptb: reading %s: empty vocabulary", what)
	}
	var toks []int
	err = scanWords(r, name, o.MaxLineBytes, o.MaxTokens,
		func(w []byte, line int) error {
			id, ok := v.ids[string(w)]
			if !ok {
				if o.Strict {
					return &LineError{File: name, Line: line, Err: fmt.Errorf("%w: %q", ErrUnknownWord, w)}
				}
				if o.Unknown != nil {
					o.Unknown(name, line, string(w))
				}
				id = v.unk
			}
			toks = append(toks, id)
			return nil
		},
		func() { toks = append(toks, v.eos) })
	if err != nil {
		return nil, fmt.Errorf("ptb: reading %s: %w", what, err)
	}
	return toks, nil
}

// scanWords reads r line by line. It calls word for every white-space
// separated word of a line and eol at the end of every line, including
// empty lines and a last line without a newline. It fails on invalid
// UTF-8, on lines longer than maxLine bytes, on more than maxTokens words
// and line ends (checked at each line's start, so a line's words may
// exceed it by a line's worth), and when there is no word at all.
func scanWords(r io.Reader, name string, maxLine, maxTokens int, word func(w []byte, line int) error, eol func()) error {
	sc := newScanner(r, maxLine)
	line, words := 0, 0
	for sc.Scan() {
		line++
		if words+line > maxTokens {
			return &LineError{File: name, Line: line, Err: fmt.Errorf("%w: more than MaxTokens = %d tokens", ErrSplitTooLarge, maxTokens)}
		}
		b := sc.Bytes()
		if len(b) > maxLine {
			return &LineError{File: name, Line: line, Err: tooLong(maxLine)}
		}
		if !utf8.Valid(b) {
			return &LineError{File: name, Line: line, Err: fmt.Errorf("%w at byte %d", ErrInvalidUTF8, invalidAt(b)+1)}
		}
		if err := forEachWord(b, func(w []byte) error {
			words++
			return word(w, line)
		}); err != nil {
			return err
		}
		eol()
	}
	if err := scanErr(sc, maxLine); err != nil {
		at := line + 1
		if line == 0 && !errors.Is(err, ErrLineTooLong) {
			at = 0 // nothing was read (a directory, say): no line to name
		}
		return &LineError{File: name, Line: at, Err: err}
	}
	if words == 0 {
		return &LineError{File: name, Err: ErrEmpty}
	}
	return nil
}

// newScanner returns a line scanner of r that accepts lines of up to
// maxLine bytes without the line end. A line ends at "\n", "\r\n" or a
// lone "\r" (old Mac files), which are not part of it; a line end at the
// very end does not start another line; and a UTF-8 byte-order mark at
// the start of r is dropped.
func newScanner(r io.Reader, maxLine int) *bufio.Scanner {
	sc := bufio.NewScanner(r)
	bufMax := maxLine + 2 // room for "\r\n"
	if maxLine >= math.MaxInt-2 {
		bufMax = math.MaxInt
	}
	sc.Buffer(make([]byte, 0, min(64<<10, bufMax)), bufMax)
	sc.Split(lines.Split())
	return sc
}

// scanErr returns the error of sc, ErrLineTooLong for a line over maxLine
// bytes.
func scanErr(sc *bufio.Scanner, maxLine int) error {
	err := sc.Err()
	if errors.Is(err, bufio.ErrTooLong) {
		return tooLong(maxLine)
	}
	return err
}

// tooLong returns the error for a line of more than maxLine bytes.
func tooLong(maxLine int) error {
	return fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, maxLine)
}

// invalidAt returns the byte offset of the first invalid UTF-8 sequence of
// b, or len(b).
func invalidAt(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// spaceAt reports whether b[i:] starts with a white-space rune (as
// unicode.IsSpace, the separators of strings.Fields) and the rune's size.
func spaceAt(b []byte, i int) (bool, int) {
	if c := b[i]; c < utf8.RuneSelf {
		return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r', 1
	}
	r, size := utf8.DecodeRune(b[i:])
	return unicode.IsSpace(r), size
}

// forEachWord calls f for every maximal run of non-space runes of line, as
// strings.Fields splits, without allocating.
func forEachWord(line []byte, f func(w []byte) error) error {
	i := 0
	for i < len(line) {
		for i < len(line) {
			sp, size := spaceAt(line, i)
			if !sp {
				break
			}
			i += size
		}
		start := i
		for i < len(line) {
			sp, size := spaceAt(line, i)
			if sp {
				break
			}
			i += size
		}
		if start < i {
			if err := f(line[start:i]); err != nil {
				return err
			}
		}
	}
	return nil
}
