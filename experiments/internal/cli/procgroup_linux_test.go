package cli

import (
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// TestSubprocessStopsWhenSweepKilled: a sweep killed outright (SIGKILL,
// which it cannot pass on) has its run sent SIGTERM, which the programs
// answer with a checkpoint and a stop, instead of leaving it to train
// unsupervised. The test binary plays the sweep and the run.
func TestSubprocessStopsWhenSweepKilled(t *testing.T) {
	const role = "NSRNN_CLI_TEST_ROLE"
	dir := os.Getenv("NSRNN_CLI_TEST_DIR")
	switch os.Getenv(role) {
	case "run":
		term := make(chan os.Signal, 1)
		signal.Notify(term, syscall.SIGTERM)
		os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(os.Getpid())), 0o644)
		select {
		case <-term:
			os.WriteFile(filepath.Join(dir, "term"), nil, 0o644)
		case <-time.After(30 * time.Second):
		}
		os.Exit(0)
	case "sweep":
		os.Setenv(role, "run")
		Subprocess(os.Args[0])([]string{"-test.run=^TestSubprocessStopsWhenSweepKilled$"}, filepath.Join(dir, "run.log"), 1, make(chan os.Signal))
		os.Exit(0)
	}
	dir = t.TempDir()
	sweep := exec.Command(os.Args[0], "-test.run=^TestSubprocessStopsWhenSweepKilled$")
	sweep.Env = append(os.Environ(), role+"=sweep", "NSRNN_CLI_TEST_DIR="+dir)
	if err := sweep.Start(); err != nil {
		t.Fatal(err)
	}
	wait := func(name string) bool {
		for range 200 {
			if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
				return true
			}
			time.Sleep(50 * time.Millisecond)
		}
		return false
	}
	if !wait("pid") {
		sweep.Process.Kill()
		t.Fatal("the run did not start")
	}
	sweep.Process.Kill()
	sweep.Wait()
	if !wait("term") {
		b, _ := os.ReadFile(filepath.Join(dir, "pid"))
		if pid, err := strconv.Atoi(string(b)); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		t.Fatal("the run was not sent SIGTERM when its sweep was killed")
	}
}
