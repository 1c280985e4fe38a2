package data

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A user's string longer than MaxLength symbols is refused when its file
// is read, naming the file and line; one of MaxLength symbols is read.
func TestReadTooLong(t *testing.T) {
	long := strings.TrimSpace(strings.Repeat("a ", MaxLength+1))
	ok := strings.TrimSpace(strings.Repeat("a ", MaxLength))
	dir := t.TempDir()
	for _, c := range []struct {
		name, text string
		bad        bool
	}{
		{"longest", "a a\n" + ok + "\n", false},
		{"too long", "a a\n" + long + "\n", true},
	} {
		path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
		if err := os.WriteFile(path, []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err1 := ReadStringsFile(path, []string{"a"})
		_, err2 := ReadTokens(strings.NewReader(c.text), path)
		_, err3 := ReadVocabularyFile(path)
		for i, err := range []error{err1, err2, err3} {
			if !c.bad {
				if err != nil {
					t.Errorf("%s, reader %d: %v", c.name, i+1, err)
				}
				continue
			}
			var le *LineError
			if !errors.Is(err, ErrTooLong) || !errors.As(err, &le) || le.Line != 2 || le.Name != path {
				t.Errorf("%s, reader %d: %v, want a *LineError at %s:2 wrapping ErrTooLong", c.name, i+1, err, path)
			}
		}
	}
}

// EmptyString alone on a line is the empty string, as an empty line is,
// in ReadStrings and ReadTokens, unless it is a symbol of the vocabulary.
func TestEmptyStringLine(t *testing.T) {
	src := "a b\n" + EmptyString + "\n\n  " + EmptyString + "  \nb " + EmptyString + "\n"
	ws, err := ReadStrings(strings.NewReader(src), "f", []string{"a", "b", EmptyString})
	if err != nil || len(ws) != 5 || len(ws[1]) != 1 || len(ws[4]) != 2 {
		t.Errorf("with %q a symbol: %v, %v", EmptyString, ws, err)
	}
	ws, err = ReadStrings(strings.NewReader(src), "f", []string{"a", "b"})
	if err == nil {
		t.Fatalf("%q within a string read as %v", EmptyString, ws)
	}
	ws, err = ReadStrings(strings.NewReader(strings.TrimSuffix(src, "b "+EmptyString+"\n")), "f", []string{"a", "b"})
	if err != nil || len(ws) != 4 || len(ws[1]) != 0 || len(ws[2]) != 0 || len(ws[3]) != 0 {
		t.Errorf("ReadStrings: %v, %v", ws, err)
	}
	toks, err := ReadTokens(strings.NewReader(src), "f")
	if err != nil || len(toks) != 5 || len(toks[1]) != 0 || len(toks[3]) != 0 || len(toks[4]) != 2 {
		t.Errorf("ReadTokens: %q, %v", toks, err)
	}
}
