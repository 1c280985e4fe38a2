//go:build unix

package ptb

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestSaveModeUmask checks that Save creates the file with mode 0644 less
// the umask.
func TestSaveModeUmask(t *testing.T) {
	v, err := NewVocab([]string{EOSWord, UnkWord})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		umask int
		want  os.FileMode
	}{{0o022, 0o644}, {0o027, 0o640}, {0o077, 0o600}} {
		path := filepath.Join(t.TempDir(), "vocab.txt")
		old := syscall.Umask(tc.umask)
		err := v.Save(path)
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != tc.want {
			t.Errorf("umask %03o: mode %03o, want %03o", tc.umask, got, tc.want)
		}
	}
}
