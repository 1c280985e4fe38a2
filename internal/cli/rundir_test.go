package cli

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/nsrnn/nsrnn/experiment"
)

// TestRunDirLeavesNothing: a new run abandoned before its first
// checkpoint leaves neither its directory nor the ancestors made for it,
// while ancestors that existed stay; a run with a checkpoint stays.
func TestRunDirLeavesNothing(t *testing.T) {
	type settings struct{ X int }
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b", "run")
	r, err := OpenRunDir(dir, experiment.RunFile, settings{1}, false, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Created {
		t.Fatal("a new run was not created")
	}
	r.Close(false)
	if _, err := os.Stat(filepath.Join(root, "a")); !os.IsNotExist(err) {
		t.Errorf("the made ancestor %s is left: %v", filepath.Join(root, "a"), err)
	}
	if _, err := os.Stat(root); err != nil {
		t.Errorf("the existing ancestor is gone: %v", err)
	}
	// A refusal (another run's directory without resume) keeps what was
	// there before.
	other := filepath.Join(root, "other")
	if err := os.MkdirAll(other, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenRunDir(other, experiment.RunFile, settings{1}, false, io.Discard); err == nil {
		t.Error("a non-empty directory was taken without resume")
	}
	if _, err := os.Stat(filepath.Join(other, "x")); err != nil {
		t.Errorf("a refused directory lost its file: %v", err)
	}
	// A run with a checkpoint is kept for resuming, with its ancestors.
	dir = filepath.Join(root, "c", "run")
	r, err = OpenRunDir(dir, experiment.RunFile, settings{1}, false, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, experiment.CheckpointFile), []byte("ckpt"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.Close(false)
	if _, err := os.Stat(filepath.Join(dir, experiment.CheckpointFile)); err != nil {
		t.Errorf("a run with a checkpoint was removed: %v", err)
	}
}
