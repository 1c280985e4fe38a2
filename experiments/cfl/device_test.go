package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

// noCUDA returns why this machine cannot list its GPUs (the CUDA
// libraries missing), or nil where it can.
func noCUDA() error {
	_, err := nsrnn.Devices()
	return err
}

// gpuKernel reports whether models of kind have an implementation on the
// GPU: false when moving a small one to cuda:0 is refused with
// nsrnn.ErrNoDeviceKernel.
func gpuKernel(t *testing.T, kind string) bool {
	t.Helper()
	cfg := nsrnn.Config{Kind: kind, Hidden: 3, InputVocab: 3, OutputVocab: 4}
	if nsrnn.IsNondeterministic(kind) {
		cfg.States, cfg.Symbols = 2, 2
	}
	m, err := nsrnn.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	err = m.SetDevice(nsrnn.CUDA(0))
	if err == nil {
		_ = m.SetDevice(nsrnn.CPU)
	}
	return !errors.Is(err, nsrnn.ErrNoDeviceKernel)
}

// TestDeviceFlagRefused: every command whose model computes refuses a bad
// --device up front, naming the flag and the values it takes, and writes
// nothing.
func TestDeviceFlagRefused(t *testing.T) {
	for _, c := range []struct {
		name string
		args func(out string) []string
	}{
		{"train", func(out string) []string { return tinyTrainArgs(out, "--device", "gpu") }},
		{"train resume", func(out string) []string { return tinyTrainArgs(out, "--resume", "--device", "cuda:x") }},
		{"eval", func(out string) []string { return []string{"eval", "--model", out, "--device", "cuda:-1"} }},
		{"generate", func(out string) []string { return []string{"generate", "--model", out, "--device", "GPU"} }},
		{"cost", func(out string) []string { return []string{"cost", "--models", "lstm", "--device", "tpu"} }},
		{"sweep", func(out string) []string {
			return []string{"sweep", "--task", "dyck", "--models", "lstm", "--out", out, "--device", "cuda0"}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			status, stdout, stderr := run(c.args(out)...)
			if status == 0 || !strings.Contains(stderr, "--device") || !strings.Contains(stderr, "want cpu, cuda or cuda:N") || stdout != "" {
				t.Errorf("status %d, stdout %q, stderr %q; want a refusal naming --device and its values", status, stdout, stderr)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was created (%v)", out, err)
			}
		})
	}
}

// TestTrainDeviceUnusable: a device the run cannot compute on (a kind
// without a GPU implementation, the CUDA libraries missing, a GPU that is
// not there) stops train before it writes anything: a new run's directory
// is not made, a resumed run's is left as it was.
func TestTrainDeviceUnusable(t *testing.T) {
	finished := tinyModelDir(t)
	cudaErr, rnsKernel := noCUDA(), gpuKernel(t, "rns")
	for _, c := range []struct {
		name  string
		args  func(out string) []string
		skip  bool
		wants []string
	}{
		{"rns on cuda", func(out string) []string { return tinyTrainArgs(out, "--device", "cuda") },
			rnsKernel && cudaErr == nil, []string{"--device cuda:0"}},
		{"lstm on cuda", func(out string) []string { return tinyTrainArgs(out, "--model", "lstm", "--device", "cuda") },
			cudaErr == nil, []string{"--device cuda:0", "library not found", "NSRNN_CUDA_LIBS"}},
		{"lstm on cuda:99", func(out string) []string { return tinyTrainArgs(out, "--model", "lstm", "--device", "cuda:99") },
			false, []string{"--device cuda:99"}},
		{"resumed on cuda:99", func(string) []string {
			return tinyTrainArgs(finished, "--epochs", "1", "--resume", "--device", "cuda:99")
		},
			false, []string{"--device cuda:99"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.skip {
				t.Skip("this machine can run it")
			}
			out := filepath.Join(t.TempDir(), "run")
			args := c.args(out)
			if strings.HasPrefix(c.name, "resumed") {
				out = finished
			}
			before := dirContents(t, out)
			status, _, stderr := run(args...)
			if status == 0 {
				t.Fatalf("status 0: %s", stderr)
			}
			wants := c.wants
			if c.name == "rns on cuda" && !rnsKernel {
				wants = append(wants, "no implementation", "--device cpu")
			}
			for _, w := range wants {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
			if strings.Contains(stderr, "training ") {
				t.Errorf("training started: %s", stderr)
			}
			if after := dirContents(t, out); !maps.Equal(before, after) {
				t.Errorf("the refused run changed %s: %v → %v", out, slices.Sorted(maps.Keys(before)), slices.Sorted(maps.Keys(after)))
			}
		})
	}
}

// TestTrainDeviceCPU: --device cpu is the default: the same run.json, with
// no "device", and the progress says so; a run interrupted and resumed
// with --device cpu ends where an uninterrupted run does; and a run that
// trained on a GPU before (its run.json says so) resumes on the CPU, which
// run.json then records.
func TestTrainDeviceCPU(t *testing.T) {
	root := t.TempDir()
	args := func(out string, extra ...string) []string {
		return tinyTrainArgs(out, append([]string{"--train-size", "200", "--workers", "1"}, extra...)...)
	}
	def, cpu := filepath.Join(root, "default"), filepath.Join(root, "cpu")
	status, _, stderr := run(args(def)...)
	if status != 0 {
		t.Fatalf("train: %s", stderr)
	}
	if !strings.Contains(stderr, ", device cpu; files in ") {
		t.Errorf("the training line does not name the device:\n%s", stderr)
	}
	if status, _, stderr := run(args(cpu, "--device", "cpu")...); status != 0 {
		t.Fatalf("train --device cpu: %s", stderr)
	}
	runJSON := readFileString(t, filepath.Join(def, protocol.RunFile))
	if other := readFileString(t, filepath.Join(cpu, protocol.RunFile)); other != runJSON {
		t.Errorf("run.json with --device cpu:\n%s\nwithout:\n%s", other, runJSON)
	}
	if _, ok := readJSONObject(t, filepath.Join(def, protocol.RunFile))["device"]; ok {
		t.Errorf("run.json of a CPU run has a device:\n%s", runJSON)
	}
	model := readFileString(t, filepath.Join(def, protocol.ModelFile))

	for _, c := range []struct {
		name     string
		recorded string // the device the run's run.json says it trained on
		resume   []string
	}{
		{"cpu, resumed with --device cpu", "", []string{"--device", "cpu"}},
		{"cuda:0, resumed on the cpu", "cuda:0", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			if !interruptAtCheckpoint(t, out, args(out, "--device", "cpu", "--checkpoint-every", "1ns")...) {
				t.Skip("the run finished before the interrupt reached it")
			}
			if c.recorded != "" {
				// As a run started on that GPU wrote it.
				path := filepath.Join(out, protocol.RunFile)
				s, err := protocol.ReadSettings(out)
				if err != nil {
					t.Fatal(err)
				}
				s.Device = c.recorded
				if err := protocol.WriteJSON(path, s); err != nil {
					t.Fatal(err)
				}
			}
			status, _, stderr := run(args(out, append([]string{"--resume"}, c.resume...)...)...)
			if status != 0 {
				t.Fatalf("resume: %s", stderr)
			}
			if note := "the run trained on " + c.recorded + " before"; c.recorded != "" && !strings.Contains(stderr, note) {
				t.Errorf("the resume on another device does not say %q: %s", note, stderr)
			}
			if got := readFileString(t, filepath.Join(out, protocol.RunFile)); got != runJSON {
				t.Errorf("run.json after the resume:\n%s\nwant\n%s", got, runJSON)
			}
			if readFileString(t, filepath.Join(out, protocol.ModelFile)) != model {
				t.Error("the resumed run ended on another model than an uninterrupted run")
			}
		})
	}
}

func readFileString(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEvalGenerateCostDeviceUnusable: eval, generate and cost refuse a
// device their models cannot compute on, naming --device, before they
// print anything.
func TestEvalGenerateCostDeviceUnusable(t *testing.T) {
	dir := tinyModelDir(t)
	for _, args := range [][]string{
		{"eval", "--model", dir, "--device", "cuda:99"},
		{"generate", "--model", dir, "--device", "cuda:99"},
		{"cost", "--task", "dyck", "--models", "lstm", "--train-size", "5", "--valid-size", "5", "--in-process", "--device", "cuda:99"},
	} {
		status, stdout, stderr := run(args...)
		if status == 0 || stdout != "" || !strings.Contains(stderr, "--device cuda:99") || strings.Contains(stderr, "cost: lstm") {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want a refusal naming --device", args, status, stdout, stderr)
		}
	}
	// A kind without a GPU implementation is named, before anything is
	// measured.
	if !gpuKernel(t, "ns") {
		status, _, stderr := run("cost", "--task", "dyck", "--models", "lstm,ns", "--device", "cuda")
		if status == 0 || !strings.Contains(stderr, "--models ns: --device cuda:0") || !strings.Contains(stderr, "no implementation") {
			t.Errorf("cost --models lstm,ns --device cuda: status %d, %q", status, stderr)
		}
	}
}

// TestSweepDevice: a sweep passes --device to its runs, without making it
// one of the settings of sweep.json (the same sweep goes on on another
// device); a device this machine cannot use is refused before anything is
// written for runs that compute here, not for a Slurm script's or a dry
// run.
func TestSweepDevice(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep")
	base := []string{"--task", "dyck", "--models", "lstm", "--lrs", "0.01", "--restarts", "2", "--out", out}
	var stdout, stderr bytes.Buffer
	if err := sweepCommand(append(slices.Clone(base), "--dry-run", "--device", "cuda:1"), &stdout, &stderr, nil); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(stdout.String(), " --device cuda:1\n"); n != 2 {
		t.Errorf("dry run on cuda:1: %d commands with --device, want 2:\n%s", n, stdout.String())
	}
	if err := sweepCommand(append(slices.Clone(base), "--device", "cuda:99"), &stdout, &stderr, nil); err == nil || !strings.Contains(err.Error(), "--device cuda:99") {
		t.Errorf("a sweep here on cuda:99: %v", err)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s was created (%v)", out, err)
	}
	script := filepath.Join(t.TempDir(), "job.sh")
	slurm := append(slices.Clone(base), "--slurm", script, "--sbatch=--gres=gpu:1")
	if err := sweepCommand(append(slices.Clone(slurm), "--device", "cuda:1"), &stdout, &stderr, nil); err != nil {
		t.Fatal(err)
	}
	sc := readFileString(t, script)
	lines := regexp.MustCompile(`(?m)^\d+\) DIR=.*; set -- train .* --device cuda:1 ;;$`).FindAllString(sc, -1)
	if len(lines) != 2 || !strings.Contains(sc, "#SBATCH --gres=gpu:1\n") {
		t.Errorf("Slurm script on cuda:1:\n%s", sc)
	}
	manifest := readFileString(t, filepath.Join(out, sweepManifestFile))
	if strings.Contains(manifest, "device") || strings.Contains(manifest, "cuda") {
		t.Errorf("%s records the device:\n%s", sweepManifestFile, manifest)
	}
	if err := sweepCommand(slurm, &stdout, &stderr, nil); err != nil {
		t.Fatalf("the same sweep on the CPU: %v", err)
	}
	if sc := readFileString(t, script); strings.Contains(sc, "--device") {
		t.Errorf("Slurm script on the CPU:\n%s", sc)
	}
	if readFileString(t, filepath.Join(out, sweepManifestFile)) != manifest {
		t.Errorf("%s changed", sweepManifestFile)
	}
	var m sweepManifest
	if err := json.Unmarshal([]byte(manifest), &m); err != nil {
		t.Fatal(err)
	}
	for _, r := range m.Runs {
		if slices.Contains(r.Args, "--device") {
			t.Errorf("%s: the run's arguments in %s hold --device: %q", r.Dir, sweepManifestFile, r.Args)
		}
	}
}

// TestDevicesCommand: devices exits 0 with or without CUDA: without, it
// prints why; the CPU is always listed as available.
func TestDevicesCommand(t *testing.T) {
	status, stdout, stderr := run("devices")
	if status != 0 || stderr != "" || !strings.Contains(stdout, "always available") {
		t.Fatalf("devices: status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	if err := noCUDA(); err != nil {
		if !strings.Contains(stdout, err.Error()) {
			t.Errorf("devices without CUDA does not print why (%v):\n%s", err, stdout)
		}
	} else if !strings.Contains(stdout, "cuda:0") {
		t.Errorf("devices with CUDA lists no cuda:0:\n%s", stdout)
	}
}

// TestTrainDeviceGPU, where a GPU can be used (or the emulator,
// NSRNN_GPU_EMULATOR=1): a run on the GPU records it in run.json and
// prints it; eval on either device agrees, and generate runs there.
func TestTrainDeviceGPU(t *testing.T) {
	if err := noCUDA(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	out := filepath.Join(t.TempDir(), "run")
	status, _, stderr := run(tinyTrainArgs(out, "--model", "lstm", "--epochs", "1", "--device", "cuda")...)
	if status != 0 {
		t.Fatalf("train on the GPU: %s", stderr)
	}
	if !strings.Contains(stderr, ", device cuda:0 (") {
		t.Errorf("a run on the GPU does not say so:\n%s", stderr)
	}
	if s, err := protocol.ReadSettings(out); err != nil || s.Device != "cuda:0" {
		t.Errorf("run.json: device %q (%v), want cuda:0", s.Device, err)
	}
	eval := func(extra ...string) float64 {
		t.Helper()
		rep := evalJSON(t, append([]string{"--model", out, "--lengths", "5:9", "--per-length", "2"}, extra...)...)
		return rep.Overall.CrossEntropy
	}
	if cpu, gpu := eval(), eval("--device", "cuda"); !(gpu > 0) || math.Abs(cpu-gpu) > 1e-9*cpu {
		t.Errorf("eval: cross-entropy %v on the CPU, %v on the GPU; want them within 1e-9", cpu, gpu)
	}
	if status, stdout, stderr := run("generate", "--model", out, "--count", "3", "--device", "cuda"); status != 0 || strings.Count(stdout, "\n") != 3 {
		t.Errorf("generate on the GPU: status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
}
