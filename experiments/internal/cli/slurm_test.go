package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/nsrnn"
)

// TestSlurmBinary: a --binary that is not an executable file is refused
// when the script is written, naming the flag, and nothing is written;
// the script checks the program again, when it is submitted and in each
// array task, and says that it is missing instead of running it.
func TestSlurmBinary(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep")
	runs := sweepRuns(out, 2)
	notExec := filepath.Join(dir, "not-executable")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	job := func(script, bin string) SlurmJob {
		return SlurmJob{Name: "x-sweep", Package: "example.com/x", Program: "x", Out: out, Manifest: filepath.Join(out, "sweep.json"), Runs: runs,
			Flags: SlurmFlags{Script: script, Binary: bin, Time: "1:00:00", Mem: "1G", CPUs: 1}}
	}
	for _, tc := range []struct {
		name, bin, want string
	}{
		{"absent", filepath.Join(dir, "nonexistent"), "does not exist"},
		{"directory", dir, "is not a file"},
		{"not executable", notExec, "is not executable"},
	} {
		if tc.name == "not executable" && runtime.GOOS == "windows" {
			continue
		}
		script := filepath.Join(dir, "job.sh")
		_, err := SlurmScript(job(script, tc.bin))
		if err == nil || !strings.Contains(err.Error(), "--binary "+tc.bin) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want --binary %s %s", tc.name, err, tc.bin, tc.want)
		}
		if _, err := os.Stat(script); err == nil {
			t.Errorf("%s: the script was written", tc.name)
		}
	}

	if _, err := exec.LookPath("bash"); err != nil {
		return
	}
	// An executable --binary: written; removed since (a path that does not
	// exist where the script runs), the submission and every task say so.
	bin := filepath.Join(dir, "prog")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"args: $*\"\n"), 0o777); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "job.sh")
	if _, err := SlurmScript(job(script, bin)); err != nil {
		t.Fatal(err)
	}
	tools := t.TempDir()
	fakeTools(t, tools)
	if o, err := exec.Command("bash", script).CombinedOutput(); err != nil {
		t.Fatalf("submitting: %v\n%s", err, o)
	}
	if err := os.Remove(bin); err != nil {
		t.Fatal(err)
	}
	sbatchCalls := filepath.Join(tools, "sbatch.calls")
	if err := os.Remove(sbatchCalls); err != nil {
		t.Fatal(err)
	}
	want := "no executable file " + bin + " on this machine: it is the --binary given when the script was written"
	if o, err := exec.Command("bash", script).CombinedOutput(); err == nil || !strings.Contains(string(o), want) {
		t.Errorf("submitting without the program: %v, %s; want an error saying %q", err, o, want)
	}
	if _, err := os.Stat(sbatchCalls); err == nil {
		t.Error("submitted without the program")
	}
	cmd := exec.Command("bash", script, "0")
	cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=1")
	if o, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(o), want) {
		t.Errorf("a task without the program: %v, %s; want an error saying %q", err, o, want)
	}
	if _, err := os.Stat(runs[1].LogFile()); err == nil {
		t.Error("a task without the program wrote the run's log")
	}
}

// TestSlurmGPUWarning: a script whose runs compute on a GPU without an
// --sbatch option asking for one is warned about; with one, or on the
// CPU, it is not.
func TestSlurmGPUWarning(t *testing.T) {
	for _, c := range []struct {
		dev    nsrnn.Device
		sbatch []string
		warn   bool
	}{
		{nsrnn.CPU, nil, false},
		{nsrnn.CUDA(0), nil, true},
		{nsrnn.CUDA(0), []string{"--partition=long"}, true},
		{nsrnn.CUDA(0), []string{"--gres=gpu:1"}, false},
		{nsrnn.CUDA(1), []string{"--gpus=1"}, false},
	} {
		w := SlurmFlags{Sbatch: c.sbatch}.GPUWarning(c.dev)
		if (w != "") != c.warn || c.warn && !strings.Contains(w, "--device "+c.dev.String()) {
			t.Errorf("%v with %v: warning %q", c.dev, c.sbatch, w)
		}
	}
}
