package data

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"github.com/nsrnn/nsrnn/internal/atomicfile"
	"github.com/nsrnn/nsrnn/internal/lines"
	"github.com/nsrnn/nsrnn/internal/readlimit"
)

// LineError is an error about one line of a text file of strings.
type LineError struct {
	Name string // file name
	Line int    // 1-based line number
	Err  error
}

// Error returns "name:line: message".
func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.Name, e.Line, e.Err) }

// Unwrap returns the underlying error.
func (e *LineError) Unwrap() error { return e.Err }

// ErrInvalidUTF8 is the reason, wrapped in a *LineError naming the file
// and line, for which a file of strings (ReadStrings, ReadTokens,
// ReadVocabularyFile) or a grammar file (ReadPCFG) is refused when a line
// is not valid UTF-8: symbols are text, and a symbol of invalid bytes
// would be recorded (in JSON, say) as U+FFFD, not as itself.
var ErrInvalidUTF8 = errors.New("invalid UTF-8")

// ErrTooLong is wrapped by the *LineError of a user's string longer than
// MaxLength symbols, the longest string the tasks are defined for: a
// model's graph for a string takes time that grows faster than its length
// (one of 2,000 symbols takes over ten seconds to build), so such a line
// is refused when the file is read, before any training.
var ErrTooLong = fmt.Errorf("a string of more than %d symbols (MaxLength)", MaxLength)

// checkStringLength returns an error wrapping ErrTooLong for a string of n
// symbols beyond MaxLength.
func checkStringLength(n int) error {
	if n > MaxLength {
		return fmt.Errorf("%w: it has %d; split it into shorter strings", ErrTooLong, n)
	}
	return nil
}

// checkUTF8 returns an error wrapping ErrInvalidUTF8, naming the 1-based
// byte of the first invalid sequence, for a line that is not valid UTF-8.
func checkUTF8(line []byte) error {
	if utf8.Valid(line) {
		return nil
	}
	for i := 0; i < len(line); {
		r, size := utf8.DecodeRune(line[i:])
		if r == utf8.RuneError && size <= 1 {
			return fmt.Errorf("%w at byte %d", ErrInvalidUTF8, i+1)
		}
		i += size
	}
	return ErrInvalidUTF8
}

// EmptyString is the text that a line may hold, alone, for the empty
// string (which an empty line is too), where it is not a symbol: the form
// in which cfl generate prints one, so that its output reads back.
const EmptyString = "(empty)"

// ParseString converts the text form of a string, symbols separated by
// spaces, to symbol indices into symbols. An empty (or all-space) line is
// the empty string, and so is EmptyString alone unless it is one of
// symbols. It returns an error naming the first unknown symbol.
func ParseString(line string, symbols []string) ([]int, error) {
	return parseString(line, newSymbolIndex(symbols))
}

// symbolIndex maps symbols to their indices; the first of repeated
// symbols wins.
type symbolIndex map[string]int

func newSymbolIndex(symbols []string) symbolIndex {
	ix := make(symbolIndex, len(symbols))
	for i, s := range symbols {
		if _, ok := ix[s]; !ok {
			ix[s] = i
		}
	}
	return ix
}

func parseString(line string, ix symbolIndex) ([]int, error) {
	fields := strings.Fields(line)
	if _, sym := ix[EmptyString]; len(fields) == 1 && fields[0] == EmptyString && !sym {
		return []int{}, nil
	}
	w := make([]int, len(fields))
	for i, f := range fields {
		j, ok := ix[f]
		if !ok {
			return nil, fmt.Errorf("unknown symbol %q at position %d", f, i+1)
		}
		w[i] = j
	}
	return w, nil
}

// FormatString returns the text form of w: the symbols, separated by single
// spaces. It panics if an index is out of range of symbols.
func FormatString(w []int, symbols []string) string {
	var b strings.Builder
	for i, x := range w {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(symbols[x])
	}
	return b.String()
}

// ReadStrings reads strings in text form, one per line, from r. Every line,
// including an empty one (or EmptyString alone, see ParseString), is a
// string; a final line end does not start
// another string. Lines end at "\n", "\r\n" or a lone "\r", and a UTF-8
// byte-order mark at the start of r is dropped. name is used in errors,
// which are *LineError values: a line that is not valid UTF-8 (wrapping
// ErrInvalidUTF8), that holds a symbol not in symbols, or that has more
// than MaxLength symbols (wrapping ErrTooLong).
func ReadStrings(r io.Reader, name string, symbols []string) ([][]int, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<26)
	sc.Split(lines.Split())
	ws := [][]int{}
	ix := newSymbolIndex(symbols)
	for line := 1; sc.Scan(); line++ {
		if err := checkUTF8(sc.Bytes()); err != nil {
			return nil, &LineError{Name: name, Line: line, Err: err}
		}
		w, err := parseString(sc.Text(), ix)
		if err == nil {
			err = checkStringLength(len(w))
		}
		if err != nil {
			return nil, &LineError{Name: name, Line: line, Err: err}
		}
		ws = append(ws, w)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ws, nil
}

// ReadTokens reads the lines of r as strings of symbols, each line split
// at white space (an empty line, or EmptyString alone, is the empty
// string), as ReadStrings does but without a vocabulary to map them to. name is used in errors; a line
// that is not valid UTF-8 is a *LineError wrapping ErrInvalidUTF8, one of
// more than MaxLength symbols one wrapping ErrTooLong.
func ReadTokens(r io.Reader, name string) ([][]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<26)
	sc.Split(lines.Split())
	ws := [][]string{}
	for line := 1; sc.Scan(); line++ {
		if err := checkUTF8(sc.Bytes()); err != nil {
			return nil, &LineError{Name: name, Line: line, Err: err}
		}
		w := strings.Fields(sc.Text())
		if len(w) == 1 && w[0] == EmptyString {
			w = w[:0]
		}
		if err := checkStringLength(len(w)); err != nil {
			return nil, &LineError{Name: name, Line: line, Err: err}
		}
		ws = append(ws, w)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return ws, nil
}

// WriteStrings writes ws in text form, one string per line. It returns an
// error if an index is out of range of symbols.
func WriteStrings(w io.Writer, ws [][]int, symbols []string) error {
	bw := bufio.NewWriter(w)
	for i, s := range ws {
		for _, x := range s {
			if x < 0 || x >= len(symbols) {
				return fmt.Errorf("data: string %d: symbol index %d out of range [0, %d)", i, x, len(symbols))
			}
		}
		bw.WriteString(FormatString(s, symbols))
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// MaxTextBytes is the largest file of strings or grammar that the File
// functions of this package read: a larger one (or a stream that does not
// end) is an error naming it.
const MaxTextBytes = readlimit.Text

// ReadStringsFile reads strings in text form from the named file, of at
// most MaxTextBytes.
func ReadStringsFile(path string, symbols []string) ([][]int, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadStrings(readlimit.Reader(f, path, MaxTextBytes), path, symbols)
}

// WriteStringsFile writes strings in text form to the named file,
// atomically: a reader sees the old file or the new one, never part of
// the new one.
func WriteStringsFile(path string, ws [][]int, symbols []string) error {
	return atomicfile.Write(path, func(w io.Writer) error { return WriteStrings(w, ws, symbols) })
}
