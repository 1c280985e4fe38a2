//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// TestModeHonoursUmask checks that a written file has mode 0666 less the
// umask (0644 under umask 022), both when it is created and when it
// replaces a file of another mode; os.CreateTemp's 0600 would fail it.
func TestModeHonoursUmask(t *testing.T) {
	for _, tc := range []struct {
		umask int
		want  os.FileMode
	}{{0o022, 0o644}, {0o002, 0o664}, {0o027, 0o640}, {0o077, 0o600}} {
		dir := t.TempDir()
		path := filepath.Join(dir, "f.json")
		old := syscall.Umask(tc.umask)
		err := WriteBytes(path, []byte("new"))
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != tc.want {
			t.Errorf("umask %03o: created with mode %03o, want %03o", tc.umask, got, tc.want)
		}

		// Replacing a file of mode 0600 gives the same mode.
		if err := os.Chmod(path, 0o600); err != nil {
			t.Fatal(err)
		}
		old = syscall.Umask(tc.umask)
		err = WriteBytes(path, []byte("newer"))
		syscall.Umask(old)
		if err != nil {
			t.Fatal(err)
		}
		if fi, err = os.Stat(path); err != nil {
			t.Fatal(err)
		}
		if got := fi.Mode().Perm(); got != tc.want {
			t.Errorf("umask %03o: replaced with mode %03o, want %03o", tc.umask, got, tc.want)
		}
	}
}
