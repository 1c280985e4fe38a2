//go:build unix

package protocol

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A named pipe in place of a run's log, settings or summary is refused
// as not a regular file, rather than blocking the open until a writer
// comes.
func TestReadRunFilesNamedPipe(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	os.MkdirAll(run, 0o755)
	for _, name := range []string{LogFile, RunFile, SummaryFile} {
		if err := syscall.Mkfifo(filepath.Join(run, name), 0o644); err != nil {
			t.Skipf("no named pipes here: %v", err)
		}
	}
	done := make(chan [3]error, 1)
	go func() {
		_, e1 := ReadLog(filepath.Join(run, LogFile))
		_, e2 := ReadSettings(run)
		_, e3 := ReadSummary(run)
		done <- [3]error{e1, e2, e3}
	}()
	select {
	case errs := <-done:
		for i, err := range errs {
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("named pipe %d: error %v", i, err)
			}
		}
	case <-time.After(time.Minute):
		t.Fatal("reading a named pipe in place of a run's file blocked")
	}
}
