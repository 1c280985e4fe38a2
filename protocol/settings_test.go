package protocol

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ReadSettings names a ptb train run's run.json for what it is, whether
// its fields read as a cfl run's or not.
func TestReadSettingsPTBRun(t *testing.T) {
	for _, raw := range []string{
		`{"data": "/d/ptb", "model": {"kind": "lstm"}, "batch": 32, "bptt": 35, "lr": 20}`,
		`{"files": {"train": "/d/t.txt", "valid": "/d/v.txt", "test": "/d/x.txt"}, "bptt": 35}`,
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, RunFile), []byte(raw), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadSettings(dir); err == nil || !strings.Contains(err.Error(), "not a cfl run") {
			t.Errorf("%s: error %v", raw, err)
		}
	}
}
