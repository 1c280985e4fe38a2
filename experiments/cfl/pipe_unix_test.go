//go:build unix

package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsrnn/nsrnn/protocol"
)

// Ctrl-C on `cfl train … 2>&1 | tee log` kills the pipe's reader too: the
// program must still stop after its batch with a checkpoint and the exit
// status of the interrupt, not die of SIGPIPE at its next write.
func TestTrainInterruptWithBrokenPipe(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	out := filepath.Join(t.TempDir(), "run")
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestCFLChild$", "--", "train", "--task", "marked-reversal", "--model", "rns",
		"--hidden", "8", "--lr", "0.01", "--train-size", "200", "--valid-size", "20", "--batch-size", "5",
		"--lengths", "9:15", "--epochs", "50", "--seed", "2", "--out", out)
	cmd.Env = append(os.Environ(), cflChildEnv+"=1")
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Read until training has started, then go away as tee would.
	lines := bufio.NewScanner(r)
	started := time.After(60 * time.Second)
	for lines.Scan() {
		select {
		case <-started:
			cmd.Process.Kill()
			t.Fatal("no epoch line after 60 s")
		default:
		}
		if len(lines.Text()) > 0 && lines.Text()[0] == 'r' { // "rns epoch 1 …"
			break
		}
	}
	r.Close()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the child did not stop within 60 s of SIGINT")
	}
	var ee *exec.ExitError
	if !errors.As(waitErr, &ee) {
		t.Fatalf("the child exited with %v, want the interrupt's status", waitErr)
	}
	if ws := ee.Sys().(syscall.WaitStatus); ws.Signaled() || ee.ExitCode() != 130 {
		t.Fatalf("the child ended with %v (signaled %v), want exit status 130", ee, ws.Signaled())
	}
	if _, err := os.Stat(filepath.Join(out, protocol.CheckpointFile)); err != nil {
		t.Fatalf("no checkpoint after the interrupt: %v", err)
	}
}

// A signal while a batch runs for long (here a string of 4,000 symbols
// through the RNS stack with |Q| = 3, |Γ| = 4 and a window of 35, several
// seconds of dynamic program) stops the program
// StopGrace after it, not when the batch ends: a new run without a
// checkpoint is removed, with a message saying so, and the exit status is
// the signal's.
func TestTrainSignalDuringLongBatch(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	long := strings.TrimSpace(strings.Repeat("a b ", 2000))
	train := filepath.Join(dir, "train.txt")
	valid := filepath.Join(dir, "valid.txt")
	if err := os.WriteFile(train, []byte(long+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(valid, []byte("a b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	cmd := exec.Command(os.Args[0], "-test.run=^TestCFLChild$", "--", "train", "--train", train, "--valid", valid,
		"--model", "rns", "--states", "3", "--symbols", "4", "--window", "35", "--hidden", "4", "--lr", "0.01", "--epochs", "2", "--out", out)
	cmd.Env = append(os.Environ(), cflChildEnv+"=1", "NSRNN_TEST_STOP_GRACE=1s")
	var stderr screenBuffer // the child writes it while the test reads it
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Wait for the training line (the batch runs after it).
	for deadline := time.Now().Add(60 * time.Second); !strings.Contains(stderr.String(), "training rns"); {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("no training line after 60 s: %s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	var waitErr error
	select {
	case waitErr = <-exited:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the child did not stop within 60 s of SIGTERM")
	}
	took := time.Since(sent)
	var ee *exec.ExitError
	if !errors.As(waitErr, &ee) || ee.ExitCode() != 128+int(syscall.SIGTERM) {
		t.Fatalf("the child exited with %v, want status %d; stderr:\n%s", waitErr, 128+int(syscall.SIGTERM), stderr.String())
	}
	if !strings.Contains(stderr.String(), "has not ended 1s after the signal: exiting without it; no checkpoint was written yet: the new run was removed") {
		t.Errorf("stderr lacks the forced exit's message (the child stopped %v after the signal):\n%s", took, stderr.String())
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the new run without a checkpoint was left in %s (%v)", out, err)
	}
}
