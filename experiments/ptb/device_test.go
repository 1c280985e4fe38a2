package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

// tinyLSTM is tinyModel's training with an LSTM, the kind with a GPU
// implementation.
var tinyLSTM = []string{"--model", "lstm", "--hidden", "6", "--batch", "3", "--bptt", "5", "--lr", "0.5", "--clip", "0.5", "--epochs", "2", "--seed", "7"}

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
	cfg := nsrnn.Config{Kind: kind, Hidden: 3, InputVocab: 3, OutputVocab: 3}
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

// dirFiles maps each file under dir to its content (none for an absent
// dir).
func dirFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

// TestDeviceFlagRefused: every command whose model computes refuses a bad
// --device up front, naming the flag and the values it takes, and writes
// nothing.
func TestDeviceFlagRefused(t *testing.T) {
	data := tinyCorpus(t)
	for _, c := range []struct {
		name string
		args func(out string) []string
	}{
		{"train", func(out string) []string { return trainArgs(data, out, "--device", "gpu") }},
		{"train resume", func(out string) []string { return []string{"train", "--out", out, "--resume", "--device", "cuda:x"} }},
		{"eval", func(out string) []string {
			return []string{"eval", "--model", out, "--data", data, "--device", "cuda:-1"}
		}},
		{"generate", func(out string) []string { return []string{"generate", "--model", out, "--device", "GPU"} }},
		{"sg", func(out string) []string {
			return []string{"sg", "--suite", "s.json", "--model", out, "--device", "tpu"}
		}},
		{"sweep", func(out string) []string {
			return []string{"sweep", "--data", data, "--models", "lstm-256", "--runs", "1", "--out", out, "--device", "cuda0"}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			_, e, code := runCmd(c.args(out)...)
			if code == 0 || !strings.Contains(e, "--device") || !strings.Contains(e, "want cpu, cuda or cuda:N") {
				t.Errorf("status %d, stderr %q; want a refusal naming --device and its values", code, e)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was created (%v)", out, err)
			}
		})
	}
	// sg computes with a model only with --model.
	if _, e, code := runCmd("sg", "--suite", "s.json", "--surprisals", "s.tsv", "--device", "cuda"); code == 0 || !strings.Contains(e, "--device go with --model") {
		t.Errorf("sg --surprisals --device cuda: status %d, %q", code, e)
	}
}

// TestTrainDeviceUnusable: a device the run cannot compute on (a kind
// without a GPU implementation, the CUDA libraries missing, a GPU that is
// not there) stops train before it writes anything: a new run's directory
// is not made, a resumed run's is left as it was.
func TestTrainDeviceUnusable(t *testing.T) {
	data := tinyCorpus(t)
	stopped := filepath.Join(t.TempDir(), "stopped")
	mustTrain(t, trainArgs(data, stopped, "--checkpoint-every", "1ns", "--stop-after-steps", "3")...)
	cudaErr, rnsKernel := noCUDA(), gpuKernel(t, "rns")
	// Without a GPU implementation, rns is refused on any machine, saying
	// so; with one, where the CUDA libraries are missing.
	rnsWant := []string{"--device cuda:0", "library not found"}
	if !rnsKernel {
		rnsWant = []string{"--device cuda:0", "no implementation", "--device cpu"}
	}
	for _, c := range []struct {
		name string
		args []string // without --out
		skip bool     // the machine can run it
		want []string
	}{
		{"rns on cuda", append(slices.Clone(tinyModel), "--device", "cuda"), rnsKernel && cudaErr == nil, rnsWant},
		{"lstm on cuda", append(slices.Clone(tinyLSTM), "--device", "cuda"), cudaErr == nil, []string{"--device cuda:0", "library not found", "NSRNN_CUDA_LIBS"}},
		{"lstm on cuda:99", append(slices.Clone(tinyLSTM), "--device", "cuda:99"), false, []string{"--device cuda:99"}},
		{"resumed rns on cuda", []string{"--resume", "--device", "cuda"}, rnsKernel && cudaErr == nil, rnsWant},
		{"resumed rns on cuda:99", []string{"--resume", "--device", "cuda:99"}, false, []string{"--device cuda:99"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.skip {
				t.Skip("this machine can run it")
			}
			out := filepath.Join(t.TempDir(), "run")
			args := append([]string{"train", "--data", data, "--out", out}, c.args...)
			if c.args[0] == "--resume" {
				out = stopped
				args = append([]string{"train", "--out", out}, c.args...)
			}
			before := dirFiles(t, out)
			_, e, code := runCmd(args...)
			if code == 0 {
				t.Fatalf("status 0: %s", e)
			}
			for _, w := range c.want {
				if !strings.Contains(e, w) {
					t.Errorf("stderr %q lacks %q", e, w)
				}
			}
			if strings.Contains(e, "training ") {
				t.Errorf("training started: %s", e)
			}
			if after := dirFiles(t, out); len(before) == 0 && len(after) > 0 {
				t.Errorf("the refused new run wrote %v", slices.Sorted(maps.Keys(after)))
			} else if len(before) > 0 && !maps.Equal(before, after) {
				t.Errorf("the refused resume changed the run")
			}
			if _, err := os.Stat(out); len(before) == 0 && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s was created (%v)", out, err)
			}
		})
	}
}

// TestTrainDeviceCPU: --device cpu is the default: the same run.json, with
// no "device", and the progress says so; a run stopped and resumed with
// --device cpu ends where an uninterrupted run does; and a run that
// trained on a GPU before (its run.json says so) resumes on the CPU, which
// run.json then records.
func TestTrainDeviceCPU(t *testing.T) {
	data := tinyCorpus(t)
	root := t.TempDir()
	def, cpu := filepath.Join(root, "default"), filepath.Join(root, "cpu")
	e := mustTrain(t, trainArgs(data, def)...)
	if !strings.Contains(e, ", device cpu; files in ") {
		t.Errorf("the training line does not name the device:\n%s", e)
	}
	mustTrain(t, trainArgs(data, cpu, "--device", "cpu")...)
	runJSON := readFile(t, filepath.Join(def, protocol.RunFile))
	if other := readFile(t, filepath.Join(cpu, protocol.RunFile)); other != runJSON {
		t.Errorf("run.json with --device cpu:\n%s\nwithout:\n%s", other, runJSON)
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal([]byte(runJSON), &keys); err != nil {
		t.Fatal(err)
	}
	if _, ok := keys["device"]; ok {
		t.Errorf("run.json of a CPU run has a device:\n%s", runJSON)
	}
	model := readFile(t, filepath.Join(def, protocol.ModelFile))

	for _, c := range []struct {
		name     string
		recorded string // the device the run's run.json says it trained on
		resume   []string
	}{
		{"cpu, resumed with --device cpu", "", []string{"--device", "cpu"}},
		{"cpu, resumed without --device", "", nil},
		{"cuda:0, resumed on the cpu", "cuda:0", []string{"--device", "cpu"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "run")
			args := trainArgs(data, out, "--checkpoint-every", "1ns")
			mustTrain(t, append(slices.Clone(args), "--device", "cpu", "--stop-after-steps", "40")...)
			if c.recorded != "" {
				// As a run started on that GPU wrote it.
				editFile(t, filepath.Join(out, protocol.RunFile), func(s string) string {
					return strings.Replace(s, "{\n", "{\n  \"device\": \""+c.recorded+"\",\n", 1)
				})
			}
			e := mustTrain(t, append(append(args, "--resume"), c.resume...)...)
			if !strings.Contains(e, "resuming at epoch") {
				t.Errorf("the resumed run does not say where it continues: %s", e)
			}
			if note := "the run trained on " + c.recorded + " before"; c.recorded != "" && !strings.Contains(e, note) {
				t.Errorf("the resume on another device does not say %q: %s", note, e)
			}
			if got := readFile(t, filepath.Join(out, protocol.RunFile)); got != runJSON {
				t.Errorf("run.json after the resume:\n%s\nwant\n%s", got, runJSON)
			}
			if readFile(t, filepath.Join(out, protocol.ModelFile)) != model {
				t.Error("the resumed run ended on another model than an uninterrupted run")
			}
		})
	}
}

// TestEvalGenerateDeviceUnusable: eval, generate and sg refuse a device
// their run's model cannot compute on (a GPU that is not there, or a kind
// without an implementation on the GPU), naming --device, before they
// print anything.
func TestEvalGenerateDeviceUnusable(t *testing.T) {
	dir, _ := generateRun(t)
	suite := sgWrite(t, filepath.Join(t.TempDir(), "agree.json"), sgSuiteJSON("agree", sgFixture[0].items))
	for _, args := range [][]string{
		{"eval", "--model", dir, "--device", "cuda:99"},
		{"generate", "--model", dir, "--device", "cuda:99"},
		{"sg", "--suite", suite, "--model", dir, "--device", "cuda:99"},
	} {
		o, e, code := runCmd(args...)
		if code == 0 || o != "" || !strings.Contains(e, "--device cuda:99") {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want a refusal naming --device", args, code, o, e)
		}
		if strings.Contains(e, "--model: --device") {
			t.Errorf("%v: the device's error is blamed on --model: %q", args, e)
		}
	}
}

// TestSweepDevice: a sweep passes --device to its runs, without making it
// one of the settings of sweep.json (the same sweep goes on on another
// device), and refuses, before anything is written, a device its runs
// could not compute on: a kind without a GPU implementation, or, for runs
// that compute here, a device this machine cannot use.
func TestSweepDevice(t *testing.T) {
	data := tinyCorpus(t)
	sweep := func(out string, extra ...string) []string {
		return append([]string{"sweep", "--data", data, "--runs", "2", "--epochs", "1", "--batch", "3", "--bptt", "5", "--hidden", "4", "--out", out}, extra...)
	}
	rnsKernel := gpuKernel(t, "rns")
	for _, c := range []struct {
		name string
		args []string
		skip bool
		want []string
	}{
		{"rns here", []string{"--models", "lstm-256,rns-1-2", "--device", "cuda"}, rnsKernel, []string{"--models rns-1-2", "--device cuda:0", "no implementation"}},
		{"rns on Slurm", []string{"--models", "rns-1-2", "--device", "cuda", "--slurm", filepath.Join(t.TempDir(), "job.sh")}, rnsKernel, []string{"--models rns-1-2", "no implementation"}},
		{"no such GPU here", []string{"--models", "lstm-256", "--device", "cuda:99"}, false, []string{"--device cuda:99"}},
	} {
		if c.skip {
			continue // rns has a GPU implementation
		}
		out := filepath.Join(t.TempDir(), "sweep")
		_, e, code := runCmd(sweep(out, c.args...)...)
		if code == 0 {
			t.Errorf("%s: status 0: %s", c.name, e)
		}
		for _, w := range c.want {
			if !strings.Contains(e, w) {
				t.Errorf("%s: stderr %q lacks %q", c.name, e, w)
			}
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: %s was created (%v)", c.name, out, err)
		}
	}

	// A Slurm script computes elsewhere: the GPU need not be here. Its
	// runs get --device; the same sweep written again for the CPU is
	// the same sweep, and its runs get no --device.
	out := filepath.Join(t.TempDir(), "sweep")
	script := filepath.Join(t.TempDir(), "job.sh")
	if _, e, code := runCmd(sweep(out, "--models", "lstm-256", "--device", "cuda:1", "--slurm", script, "--sbatch=--gres=gpu:1")...); code != 0 {
		t.Fatalf("Slurm sweep on cuda:1: %s", e)
	}
	sc := readFile(t, script)
	if strings.Count(sc, "set -- train ") != 2 || strings.Count(sc, " --device cuda:1") != 2 || !strings.Contains(sc, "#SBATCH --gres=gpu:1\n") {
		t.Errorf("Slurm script for cuda:1:\n%s", sc)
	}
	manifest := readFile(t, filepath.Join(out, "sweep.json"))
	if strings.Contains(manifest, "device") || strings.Contains(manifest, "cuda") {
		t.Errorf("sweep.json records the device:\n%s", manifest)
	}
	if _, e, code := runCmd(sweep(out, "--models", "lstm-256", "--slurm", script)...); code != 0 {
		t.Fatalf("the same sweep on the CPU: %s", e)
	}
	if sc := readFile(t, script); strings.Count(sc, "set -- train ") != 2 || strings.Contains(sc, "--device") {
		t.Errorf("Slurm script for the CPU:\n%s", sc)
	}
	if readFile(t, filepath.Join(out, "sweep.json")) != manifest {
		t.Error("sweep.json changed")
	}
	// plan's runs pass --device only when it is not the CPU: runSweep
	// adds it; the runs' own arguments are the CPU's.
	runs, err := plan(sweepSettings{Data: data, Models: []string{"lstm-256"}, Runs: 1, Seed: 1, Epochs: 1, Batch: 3, BPTT: 5}, out)
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(runs[0].Args, "--device") {
		t.Errorf("plan's run arguments hold --device: %q", runs[0].Args)
	}
}

// TestDevicesCommand: devices exits 0 with or without CUDA: without, it
// prints why; the CPU is always listed as available.
func TestDevicesCommand(t *testing.T) {
	o, e, code := runCmd("devices")
	if code != 0 || e != "" || !strings.Contains(o, "always available") {
		t.Fatalf("devices: status %d, stdout %q, stderr %q", code, o, e)
	}
	if err := noCUDA(); err != nil {
		if !strings.Contains(o, err.Error()) {
			t.Errorf("devices without CUDA does not print why (%v):\n%s", err, o)
		}
	} else if !strings.Contains(o, "cuda:0") {
		t.Errorf("devices with CUDA lists no cuda:0:\n%s", o)
	}
	if _, e, code := runCmd("devices", "extra"); code == 0 || !strings.Contains(e, "unexpected arguments") {
		t.Errorf("devices extra: status %d, %q", code, e)
	}
	var b bytes.Buffer
	if code := prog.Main([]string{"help"}, &b, &b); code != 0 || !strings.Contains(b.String(), "devices") {
		t.Errorf("help does not list devices:\n%s", b.String())
	}
}

// TestCheckpointSettingsLeaveOutDevice: a checkpoint's settings do not
// depend on the device, so that a run resumes on another.
func TestCheckpointSettingsLeaveOutDevice(t *testing.T) {
	s := settings{Data: "/data", Batch: 3, BPTT: 5, LR: 1, Clip: 1, Epochs: 2, Seed: 7}
	cpu, err := checkpointSettings(s)
	if err != nil {
		t.Fatal(err)
	}
	s.Device = "cuda:0"
	gpu, err := checkpointSettings(s)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(cpu, gpu) || cpu["seed"] != "7" {
		t.Errorf("checkpoint settings on the CPU %v, on cuda:0 %v; want the same, with the seed", cpu, gpu)
	}
}

// TestTrainDeviceGPU, where a GPU can be used (or the emulator,
// NSRNN_GPU_EMULATOR=1): a run started on the GPU records it in run.json
// and prints it, and its resume command keeps it; resumed on the CPU,
// run.json records the CPU (no "device"), and resumed on the GPU again,
// the GPU; eval on either device agrees.
func TestTrainDeviceGPU(t *testing.T) {
	if err := noCUDA(); err != nil {
		t.Skipf("no GPU: %v", err)
	}
	data := tinyCorpus(t)
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"train", "--data", data, "--out", out, "--checkpoint-every", "1ns"}
	e := mustTrain(t, append(append(slices.Clone(args), tinyLSTM...), "--device", "cuda", "--stop-after-steps", "10")...)
	if !strings.Contains(e, ", device cuda:0 (") || !strings.Contains(e, "--resume --device cuda:0") {
		t.Errorf("a run on the GPU does not say so, or its resume command drops --device:\n%s", e)
	}
	device := func() string {
		t.Helper()
		s, _, err := readRunSettings(out)
		if err != nil {
			t.Fatal(err)
		}
		return s.Device
	}
	if d := device(); d != "cuda:0" {
		t.Errorf("run.json records device %q, want cuda:0", d)
	}
	resume := []string{"train", "--out", out, "--resume", "--checkpoint-every", "1ns"}
	e = mustTrain(t, append(slices.Clone(resume), "--stop-after-steps", "10")...)
	if d := device(); d != "" || !strings.Contains(e, "--device cpu: the run trained on cuda:0 before") {
		t.Errorf("resumed on the CPU: run.json records device %q; stderr:\n%s", d, e)
	}
	mustTrain(t, append(slices.Clone(resume), "--device", "cuda")...)
	if d := device(); d != "cuda:0" {
		t.Errorf("resumed on the GPU: run.json records device %q", d)
	}
	ppl := func(extra ...string) float64 {
		t.Helper()
		o, e, code := runCmd(append([]string{"eval", "--model", out, "--json"}, extra...)...)
		if code != 0 {
			t.Fatal(e)
		}
		var r evalResult
		if err := json.Unmarshal([]byte(o), &r); err != nil {
			t.Fatal(err)
		}
		return r.Perplexity
	}
	if cpu, gpu := ppl(), ppl("--device", "cuda"); !(gpu > 1) || math.Abs(cpu-gpu) > 1e-5*cpu {
		t.Errorf("eval: perplexity %v on the CPU, %v on the GPU; want them within 1e-5", cpu, gpu)
	}
}
