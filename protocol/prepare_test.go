package protocol

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data"
)

func TestPrepareDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	s := tinySettings()
	created, err := PrepareDir(dir, "settings.json", s, false)
	if err != nil || !created {
		t.Fatalf("new run: created %v, %v", created, err)
	}
	if _, err := os.Stat(filepath.Join(dir, RunFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("PrepareDir wrote %s: %v", RunFile, err)
	}
	// Resuming: nothing written, not created.
	created, err = PrepareDir(dir, "settings.json", s, true)
	if err != nil || created {
		t.Errorf("resume: created %v, %v", created, err)
	}
	s.LR = 0.5
	_, err = PrepareDir(dir, "settings.json", s, true)
	if se, ok := errors.AsType[*SettingsError](err); !ok || len(se.Diffs) != 1 || !strings.HasPrefix(se.Diffs[0], "lr: 0.01 → 0.5") {
		t.Errorf("other settings: %v", err)
	}
	// No temporary files left by the writability probe.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want settings.json alone", len(entries))
	}
}

func TestCheckSettingsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.json")
	type grid struct {
		LRs  []float64 `json:"lrs"`
		Runs int       `json:"runs"`
	}
	if exists, err := CheckSettingsFile(path, grid{}); exists || err != nil {
		t.Errorf("absent file: %v, %v", exists, err)
	}
	// Other keys of the file (a manifest's list of runs) are ignored.
	if err := os.WriteFile(path, []byte(`{"lrs": [0.1], "runs": 2, "created": "today"}`), 0o666); err != nil {
		t.Fatal(err)
	}
	if exists, err := CheckSettingsFile(path, grid{LRs: []float64{0.1}, Runs: 2}); !exists || err != nil {
		t.Errorf("same settings: %v, %v", exists, err)
	}
	_, err := CheckSettingsFile(path, grid{LRs: []float64{0.1, 0.2}, Runs: 3})
	se, ok := errors.AsType[*SettingsError](err)
	if !ok || strings.Join(se.Diffs, "; ") != "lrs: [0.1] → [0.1,0.2]; runs: 2 → 3" || se.Path != path {
		t.Errorf("other settings: %v", err)
	}
}

// TestPrepareRunReadOnly checks that a directory that cannot be written is
// found when the run is prepared, resumed or not, rather than at its
// first checkpoint.
func TestPrepareRunReadOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	s := tinySettings()
	if err := PrepareRun(dir, s, false); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o755)
	if CheckWritable(dir) == nil {
		t.Skip("the directory is writable all the same (running as root?)")
	}
	if err := PrepareRun(dir, s, true); err == nil || !strings.Contains(err.Error(), dir) || !errors.Is(err, os.ErrPermission) {
		t.Errorf("resuming in a read-only directory: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	os.Mkdir(empty, 0o555)
	defer os.Chmod(empty, 0o755)
	if err := PrepareRun(empty, s, false); err == nil || !errors.Is(err, os.ErrPermission) {
		t.Errorf("new run in a read-only directory: %v", err)
	}
}

func TestTaskTitle(t *testing.T) {
	for _, task := range data.TaskNames() {
		if title := TaskTitle(task); title == task || title == "" || strings.Contains(title, "-") {
			t.Errorf("TaskTitle(%q) = %q", task, title)
		}
	}
	if TaskTitle("other") != "other" {
		t.Error("unknown task")
	}
}
