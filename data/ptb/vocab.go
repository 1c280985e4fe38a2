package ptb

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"unicode/utf8"

	"github.com/nsrnn/nsrnn/internal/atomicfile"
)

// The two words every vocabulary has.
const (
	// EOSWord is the end-of-sentence token added after every line.
	EOSWord = "<eos>"
	// UnkWord is the unknown word; Mikolov's files already use it for the
	// words outside their 10,000-word vocabulary.
	UnkWord = "<unk>"
)

// Vocab is a vocabulary: a bijection between words and the ids 0 …
// Size()−1. It always contains EOSWord and UnkWord. A Vocab is not
// modified after it is built, so it is safe for concurrent use. The zero
// Vocab is empty and is only useful as the target of UnmarshalText.
type Vocab struct {
	words []string
	ids   map[string]int
	eos   int
	unk   int
}

// NewVocab returns the vocabulary whose word with id i is words[i]. The
// words must be distinct, non-empty valid UTF-8 without white space, and
// include EOSWord and UnkWord. The slice is copied.
func NewVocab(words []string) (*Vocab, error) {
	v := &Vocab{ids: make(map[string]int, len(words))}
	for i, w := range words {
		if err := v.add(w); err != nil {
			return nil, fmt.Errorf("ptb: new vocabulary: word %d: %w", i, err)
		}
	}
	if err := v.finish(); err != nil {
		return nil, fmt.Errorf("ptb: new vocabulary: %w", err)
	}
	return v, nil
}

// add appends w, checking it.
func (v *Vocab) add(w string) error {
	if err := checkWord(w); err != nil {
		return err
	}
	if j, dup := v.ids[w]; dup {
		return fmt.Errorf("%w %q (also word %d)", ErrDuplicateWord, w, j)
	}
	v.ids[w] = len(v.words)
	v.words = append(v.words, w)
	return nil
}

// finish sets the EOS and Unk ids, or fails when a word is missing.
func (v *Vocab) finish() error {
	var ok bool
	if v.eos, ok = v.ids[EOSWord]; !ok {
		return fmt.Errorf("%w %s", ErrMissingWord, EOSWord)
	}
	if v.unk, ok = v.ids[UnkWord]; !ok {
		return fmt.Errorf("%w %s", ErrMissingWord, UnkWord)
	}
	return nil
}

// checkWord reports whether w can be a vocabulary entry.
func checkWord(w string) error {
	if w == "" {
		return fmt.Errorf("%w: empty", ErrBadWord)
	}
	if !utf8.ValidString(w) {
		return ErrInvalidUTF8
	}
	b := []byte(w)
	for i := 0; i < len(b); {
		sp, size := spaceAt(b, i)
		if sp {
			return fmt.Errorf("%w %q: contains white space", ErrBadWord, w)
		}
		i += size
	}
	return nil
}

// Size returns the number of words, EOSWord and UnkWord included.
func (v *Vocab) Size() int { return len(v.words) }

// EOS returns the id of EOSWord.
func (v *Vocab) EOS() int { return v.eos }

// Unk returns the id of UnkWord.
func (v *Vocab) Unk() int { return v.unk }

// ID returns the id of word, or Unk() when word is not in the vocabulary.
func (v *Vocab) ID(word string) int {
	if id, ok := v.ids[word]; ok {
		return id
	}
	return v.unk
}

// Lookup returns the id of word and whether it is in the vocabulary.
func (v *Vocab) Lookup(word string) (int, bool) {
	id, ok := v.ids[word]
	return id, ok
}

// Word returns the word with the given id, or "" (never a word) when id is
// out of range.
func (v *Vocab) Word(id int) string {
	if id < 0 || id >= len(v.words) {
		return ""
	}
	return v.words[id]
}

// Words returns a copy of the words in id order.
func (v *Vocab) Words() []string { return append([]string(nil), v.words...) }

// MarshalText returns the text form of the vocabulary: one word per line in
// id order, each line ending in a newline. It is the content of the file
// Save writes, and implements encoding.TextMarshaler.
func (v *Vocab) MarshalText() ([]byte, error) {
	if len(v.words) == 0 {
		return nil, errors.New("ptb: marshal vocabulary: empty vocabulary")
	}
	n := 0
	for _, w := range v.words {
		n += len(w) + 1
	}
	b := make([]byte, 0, n)
	for _, w := range v.words {
		b = append(b, w...)
		b = append(b, '\n')
	}
	return b, nil
}

// UnmarshalText replaces v with the vocabulary whose text form (see
// MarshalText) is text, with the default Options; it implements
// encoding.TextUnmarshaler. The newline after the last word may be
// missing. Errors name the line. On error v is unchanged.
func (v *Vocab) UnmarshalText(text []byte) error {
	nv, err := readVocab(bytes.NewReader(text), "", nil)
	if err != nil {
		return fmt.Errorf("ptb: unmarshal vocabulary: %w", err)
	}
	*v = *nv
	return nil
}

// Save writes the vocabulary's text form (see MarshalText) to path
// atomically: it writes a temporary file in the same directory, syncs it
// and renames it over path, so that path holds either its old content or
// the whole vocabulary. The file's mode is 0666 less the umask (0644
// under the usual umask 022).
func (v *Vocab) Save(path string) error {
	b, err := v.MarshalText()
	if err != nil {
		return fmt.Errorf("ptb: save vocabulary %s: %w", path, err)
	}
	if err := atomicfile.WriteBytes(path, b); err != nil {
		return fmt.Errorf("ptb: save vocabulary %s: %w", path, err)
	}
	return nil
}

// LoadVocab reads a vocabulary file written by Save (one word per line,
// the line number minus one being the id). Errors name the file and line:
// empty words or words with white space, invalid UTF-8, duplicates, more
// than Options.MaxVocab words; and the file when EOSWord or UnkWord is
// missing.
func LoadVocab(path string, opt *Options) (*Vocab, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("ptb: load vocabulary: %w", err)
	}
	defer f.Close()
	v, err := readVocab(f, path, opt)
	if err != nil {
		return nil, fmt.Errorf("ptb: load vocabulary: %w", err)
	}
	return v, nil
}

// readVocab parses the text form of a vocabulary; name is the file name
// for errors ("" for none).
func readVocab(r io.Reader, name string, opt *Options) (*Vocab, error) {
	o, err := opt.resolve()
	if err != nil {
		return nil, err
	}
	v := &Vocab{ids: make(map[string]int)}
	sc := newScanner(r, o.MaxLineBytes)
	line := 0
	for sc.Scan() {
		line++
		if len(v.words) >= o.MaxVocab {
			return nil, &LineError{File: name, Line: line, Err: fmt.Errorf("%w: more than MaxVocab = %d words", ErrVocabTooLarge, o.MaxVocab)}
		}
		if len(sc.Bytes()) > o.MaxLineBytes {
			return nil, &LineError{File: name, Line: line, Err: tooLong(o.MaxLineBytes)}
		}
		w := sc.Text()
		if err := v.add(w); err != nil {
			if errors.Is(err, ErrDuplicateWord) {
				// Name the earlier line rather than the id.
				err = fmt.Errorf("%w %q (also line %d)", ErrDuplicateWord, w, v.ids[w]+1)
			}
			return nil, &LineError{File: name, Line: line, Err: err}
		}
	}
	if err := scanErr(sc, o.MaxLineBytes); err != nil {
		return nil, &LineError{File: name, Line: line + 1, Err: err}
	}
	if len(v.words) == 0 {
		return nil, &LineError{File: name, Err: ErrEmpty}
	}
	if err := v.finish(); err != nil {
		return nil, &LineError{File: name, Err: err}
	}
	return v, nil
}
