package ptb

import (
	"errors"
	"fmt"
)

// Errors that reading, vocabulary and batching functions wrap, so that
// callers can test for them with errors.Is.
var (
	// ErrEmpty reports a split or vocabulary with no words at all.
	ErrEmpty = errors.New("no words")
	// ErrInvalidUTF8 reports a line that is not valid UTF-8.
	ErrInvalidUTF8 = errors.New("invalid UTF-8")
	// ErrLineTooLong reports a line longer than Options.MaxLineBytes.
	ErrLineTooLong = errors.New("line too long")
	// ErrVocabTooLarge reports a vocabulary larger than Options.MaxVocab.
	ErrVocabTooLarge = errors.New("vocabulary too large")
	// ErrSplitTooLarge reports a split of more than Options.MaxTokens
	// tokens.
	ErrSplitTooLarge = errors.New("split too large")
	// ErrUnknownWord reports, with Options.Strict, a word of a split that is
	// not in the vocabulary.
	ErrUnknownWord = errors.New("word not in the vocabulary")
	// ErrDuplicateWord reports a word that appears twice in a vocabulary.
	ErrDuplicateWord = errors.New("duplicate word")
	// ErrBadWord reports an empty vocabulary entry or one that contains
	// white space.
	ErrBadWord = errors.New("bad word")
	// ErrMissingWord reports a vocabulary without EOSWord or UnkWord.
	ErrMissingWord = errors.New("missing required word")
)

// LineError is an error about one line of a file: a split of the corpus or
// a vocabulary file. Line is 1-based; 0 means the error concerns the file
// as a whole (for example an empty file). File is empty for data that does
// not come from a file (Vocab.UnmarshalText).
type LineError struct {
	File string // file name, as given by the caller
	Line int    // 1-based line number, or 0 for the whole file
	Err  error  // what is wrong
}

// Error returns "file:line: message", "file: message" when Line is 0, and
// "line N: message" when File is empty.
func (e *LineError) Error() string {
	switch {
	case e.File == "" && e.Line == 0:
		return e.Err.Error()
	case e.File == "":
		return fmt.Sprintf("line %d: %v", e.Line, e.Err)
	case e.Line == 0:
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	}
	return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
}

// Unwrap returns the underlying error.
func (e *LineError) Unwrap() error { return e.Err }
