//go:build unix

package main

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/nsrnn/nsrnn/experiment"
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
	if _, err := os.Stat(filepath.Join(out, experiment.CheckpointFile)); err != nil {
		t.Fatalf("no checkpoint after the interrupt: %v", err)
	}
}
