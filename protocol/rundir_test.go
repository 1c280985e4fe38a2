package protocol

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunDirLeavesNothing: a new run abandoned before its first
// checkpoint leaves neither its directory nor the ancestors made for it,
// while ancestors that existed stay; a run with a checkpoint stays.
func TestRunDirLeavesNothing(t *testing.T) {
	type settings struct{ X int }
	root := t.TempDir()
	dir := filepath.Join(root, "a", "b", "run")
	r, err := OpenRunDir(dir, RunFile, settings{1}, false, io.Discard)
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
	if _, err := OpenRunDir(other, RunFile, settings{1}, false, io.Discard); err == nil {
		t.Error("a non-empty directory was taken without resume")
	}
	if _, err := os.Stat(filepath.Join(other, "x")); err != nil {
		t.Errorf("a refused directory lost its file: %v", err)
	}
	// A run with a checkpoint is kept for resuming, with its ancestors.
	dir = filepath.Join(root, "c", "run")
	r, err = OpenRunDir(dir, RunFile, settings{1}, false, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, CheckpointFile), []byte("ckpt"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.Close(false)
	if _, err := os.Stat(filepath.Join(dir, CheckpointFile)); err != nil {
		t.Errorf("a run with a checkpoint was removed: %v", err)
	}
}

// TestCheckResumable: only a directory with its settings file and log and
// neither a checkpoint nor a summary is refused, naming the directory and the
// missing checkpoint; nothing is written.
func TestCheckResumable(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []string // made in the directory; nil: no directory
		ok    bool
	}{
		{"absent", nil, true},
		{"empty", []string{}, true},
		{"no run", []string{"notes.txt"}, true},
		{"interrupted", []string{RunFile, LogFile, CheckpointFile}, true},
		{"finished", []string{RunFile, LogFile, CheckpointFile, SummaryFile}, true},
		{"finished without checkpoint", []string{RunFile, LogFile, SummaryFile}, true},
		{"killed before its first checkpoint", []string{RunFile, LogFile}, false},
		{"not started", []string{RunFile}, true},
		{"not started, with other files", []string{RunFile, "vocab.txt"}, true},
		{"killed, with other files", []string{RunFile, LogFile, "vocab.txt"}, false},
	} {
		dir := filepath.Join(t.TempDir(), "run")
		if tc.files != nil {
			if err := os.Mkdir(dir, 0o777); err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("{}"), 0o666); err != nil {
					t.Fatal(err)
				}
			}
		}
		err := CheckResumable(dir, RunFile)
		if tc.ok {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
		} else if err == nil || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), "no "+CheckpointFile) {
			t.Errorf("%s: error %v, want one naming %s and the missing %s", tc.name, err, dir, CheckpointFile)
		}
		entries, _ := os.ReadDir(dir)
		if len(entries) != len(tc.files) {
			t.Errorf("%s: %d files after the check, want %d", tc.name, len(entries), len(tc.files))
		}
	}
}

// A run started under resume, in an absent directory, is announced: a
// mistyped --out does not start a run unnoticed. A resumed run is not.
func TestOpenRunDirAnnouncesNewRunUnderResume(t *testing.T) {
	type settings struct{ A int }
	dir := filepath.Join(t.TempDir(), "typo")
	var msg strings.Builder
	r, err := OpenRunDir(dir, RunFile, settings{1}, true, &msg)
	if err != nil {
		t.Fatal(err)
	}
	r.Close(true)
	if !strings.Contains(msg.String(), "no run in "+dir+" yet: starting it") {
		t.Errorf("stderr %q does not announce the new run", msg.String())
	}
	msg.Reset()
	if r, err = OpenRunDir(dir, RunFile, settings{1}, true, &msg); err != nil {
		t.Fatal(err)
	}
	r.Close(true)
	if msg.Len() != 0 {
		t.Errorf("resuming the run said %q", msg.String())
	}
}
