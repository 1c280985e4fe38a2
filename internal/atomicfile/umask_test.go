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

// TestNonRegularTargets: a named pipe or a directory at the path is
// refused and left as it was; a symbolic link writes the file it leads
// to and stays a link; a link that leads nowhere is refused.
func TestNonRegularTargets(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no named pipe here: %v", err)
	}
	sub := filepath.Join(dir, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{fifo, sub} {
		before, _ := os.Lstat(p)
		if err := WriteBytes(p, []byte("x")); err == nil {
			t.Errorf("%s: no error", p)
		}
		if after, err := os.Lstat(p); err != nil || after.Mode() != before.Mode() {
			t.Errorf("%s: now %v (%v), was %v", p, after.Mode(), err, before.Mode())
		}
	}
	real := filepath.Join(sub, "real.json")
	if err := os.WriteFile(real, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteBytes(link, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link is no longer a link: %v, %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(real); string(b) != "new" {
		t.Errorf("the link's file holds %q, want new", b)
	}
	toPipe := filepath.Join(dir, "to-pipe")
	dangling := filepath.Join(dir, "dangling")
	os.Symlink(fifo, toPipe)
	os.Symlink(filepath.Join(dir, "absent"), dangling)
	for _, p := range []string{toPipe, dangling} {
		if err := WriteBytes(p, []byte("x")); err == nil {
			t.Errorf("%s: no error", p)
		}
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe behind a link was replaced: %v, %v", fi.Mode(), err)
	}
}
