package protocol

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestLockDir: a second lock on a held directory is refused naming the
// directory and the holder; a released one can be taken again; taking it
// removes the temporary files of killed atomic writes and nothing else,
// and PrepareRun ignores the lock file.
func TestLockDir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock(2)")
	}
	dir := filepath.Join(t.TempDir(), "run")
	l, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := PrepareRun(dir, Settings{Task: "dyck", LR: 0.01}, false); err != nil {
		t.Fatalf("PrepareRun in a locked, otherwise empty directory: %v", err)
	}
	_, err = LockDir(dir)
	if !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), fmt.Sprintf("process %d", os.Getpid())) {
		t.Fatalf("second lock: %v; want ErrLocked naming %s and this process", err, dir)
	}
	l.Release()
	l.Release()
	if _, err := os.Stat(filepath.Join(dir, LockFile)); err == nil {
		t.Error("Release left the lock file")
	}
	stale := []string{".checkpoint.tmp0123456789abcdef", ".model.tmpfedcba9876543210"}
	for _, n := range append(stale, "checkpoint") {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l, err = LockDir(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	defer l.Release()
	if len(l.Removed) != len(stale) {
		t.Errorf("removed %v, want %v", l.Removed, stale)
	}
	for _, n := range stale {
		if _, err := os.Stat(filepath.Join(dir, n)); err == nil {
			t.Errorf("%s left", n)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "checkpoint")); err != nil {
		t.Errorf("the checkpoint was removed: %v", err)
	}
}

// TestRunStatusTrainingNow: an unfinished run whose lock a process holds
// is reported as training now, naming the process, without the status
// taking or removing the lock; once released it is an interrupted run.
func TestRunStatusTrainingNow(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock(2)")
	}
	dir := filepath.Join(t.TempDir(), "run")
	lock, err := LockDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, RunFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	state, progress, err := RunStatus(dir, false)
	if err != nil || state != RunResume || !strings.Contains(progress, fmt.Sprintf("training now (process %d", os.Getpid())) {
		t.Errorf("held: %q, %q, %v", state, progress, err)
	}
	if _, err := os.Stat(filepath.Join(dir, LockFile)); err != nil {
		t.Errorf("the status removed the lock file: %v", err)
	}
	if _, err := LockDir(dir); !errors.Is(err, ErrLocked) {
		t.Errorf("the status took the lock: %v", err)
	}
	lock.Release()
	if _, progress, _ := RunStatus(dir, false); strings.Contains(progress, "training now") {
		t.Errorf("released: %q", progress)
	}
}
