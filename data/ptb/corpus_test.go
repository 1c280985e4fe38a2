package ptb

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An empty validation or test file is named with its split.
func TestLoadNamesEmptySplit(t *testing.T) {
	for _, split := range []struct{ file, what string }{{ValidFile, "validation split"}, {TestFile, "test split"}} {
		dir := t.TempDir()
		for _, f := range []string{TrainFile, ValidFile, TestFile} {
			content := "the cat sat\n"
			if f == split.file {
				content = ""
			}
			if err := os.WriteFile(filepath.Join(dir, f), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, err := Load(dir, nil)
		if err == nil || !strings.Contains(err.Error(), "reading "+split.what) || !strings.Contains(err.Error(), split.file) {
			t.Errorf("empty %s: %v", split.file, err)
		}
	}
}
