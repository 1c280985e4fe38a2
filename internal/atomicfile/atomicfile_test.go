package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestWriteReplacesOrKeeps(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.txt")
	if err := WriteBytes(p, []byte("one")); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	err := Write(p, func(w io.Writer) error {
		w.Write([]byte("partial"))
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got error %v, want boom", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "one" {
		t.Fatalf("failed write changed the file to %q", b)
	}
	if err := WriteBytes(p, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "two" {
		t.Fatalf("file holds %q, want two", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
}

// A file in a missing directory: the error names the file asked for, not
// the temporary one, and wraps the cause.
func TestWriteMissingDirectory(t *testing.T) {
	p := filepath.Join(t.TempDir(), "no", "such", "f.txt")
	err := WriteBytes(p, []byte("x"))
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) || pe.Path != p {
		t.Errorf("error %v, want a path error about %s", err, p)
	}
}

// TestRemoveTemps: the temporary files that a killed Write leaves are
// recognised and removed, and nothing else.
func TestRemoveTemps(t *testing.T) {
	dir := t.TempDir()
	keep := []string{"checkpoint", ".checkpoint", ".checkpoint.tmp", ".checkpoint.tmp0123", ".checkpoint.tmp0123456789abcdeg", "x.tmp0123456789abcdef", ".lock"}
	temps := []string{".checkpoint.tmp0123456789abcdef", ".model.tmpfedcba9876543210", ".run.json.tmp00000000000000ff"}
	for _, n := range append(append([]string(nil), keep...), temps...) {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A real one, as a kill −9 during Write leaves it.
	f, err := createTemp(dir, "summary.json")
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	removed, err := RemoveTemps(dir)
	if err != nil || len(removed) != len(temps)+1 {
		t.Fatalf("removed %v, %v; want %d files", removed, err, len(temps)+1)
	}
	entries, _ := os.ReadDir(dir)
	var left []string
	for _, e := range entries {
		left = append(left, e.Name())
	}
	slices.Sort(left)
	slices.Sort(keep)
	if !slices.Equal(left, keep) {
		t.Errorf("left %v, want %v", left, keep)
	}
}
