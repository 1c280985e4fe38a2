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
