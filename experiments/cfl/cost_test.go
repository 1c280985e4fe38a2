package main

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/stacks"
)

func TestCostAllModels(t *testing.T) {
	args := []string{"--in-process", "--train-size", "4", "--valid-size", "2", "--batch-size", "2", "--lengths", "5:7", "--epochs", "1", "--hidden", "4"}
	var stdout, stderr bytes.Buffer
	if err := runCost(args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range append([]string{"scaling", "× LSTM"}, nsrnn.KindNames()...) {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	stdout.Reset()
	if err := runCost(append(args, "--json", "--models", "lstm,rns"), &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	var rep costReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Models) != 2 || rep.Models[0].Model != "lstm" || rep.Models[1].Model != "rns" {
		t.Fatalf("report %+v", rep.Models)
	}
	// The numbers reported, recomputed: the LSTM's parameters by the
	// closed form 4H(v + H + 2) + (H + 1)(v + 1) for v = 3 inputs and
	// H = 4 units, the RNS-RNN's by nsrnn.CountParams; the epoch scaled
	// from the subset's passes to the protocol's 10,000 + 1,000 strings;
	// the time ratio to the LSTM's.
	rns, err := nsrnn.CountParams(nsrnn.Config{Kind: nsrnn.RNS, InputVocab: 3, OutputVocab: 4, Hidden: 4, States: 2, Symbols: 3})
	if err != nil {
		t.Fatal(err)
	}
	lstm := rep.Models[0]
	for i, want := range []int{4*4*(3+4+2) + 5*4, rns} {
		m := rep.Models[i]
		if m.Parameters != want {
			t.Errorf("%s: %d parameters, want %d", m.Model, m.Parameters, want)
		}
		if !(m.TrainSeconds > 0 && m.ValidSeconds > 0) {
			t.Errorf("%s: passes of %g and %g s", m.Model, m.TrainSeconds, m.ValidSeconds)
		}
		if want := m.TrainSeconds*10000/4 + m.ValidSeconds*1000/2; math.Abs(m.EpochSeconds-want) > 1e-9*want {
			t.Errorf("%s: epoch %g s, want %g from its passes", m.Model, m.EpochSeconds, want)
		}
		if want := m.EpochSeconds / lstm.EpochSeconds; math.Abs(m.TimeRatio-want) > 1e-12*want {
			t.Errorf("%s: time ratio %g, want %g", m.Model, m.TimeRatio, want)
		}
	}
}

// TestCostReleaseModels checks cost's --bottom and --push-hidden-state, the
// 2023 release's models: they reach the models that have them (the
// RNS-RNN's bottom, JM's pushed vector, which then has the hidden state's
// size and no parameters of its own) and no others, the report records
// them, and a bad --bottom is refused naming the flag.
func TestCostReleaseModels(t *testing.T) {
	task, err := data.NewTask(data.MarkedCopy)
	if err != nil {
		t.Fatal(err)
	}
	s := costSettings{Hidden: 4, States: 3, Symbols: 3, StackEmbedding: 20, Bottom: stacks.Fixed, PushHiddenState: true}
	for _, c := range []struct {
		kind   string
		bottom stacks.Bottom
		push   bool
		embed  int
	}{
		{nsrnn.RNS, stacks.Fixed, false, 0},
		{nsrnn.NSS, stacks.Fixed, false, 0},
		{nsrnn.JM, stacks.Original, true, 0},
		{nsrnn.Gref, stacks.Original, false, 20},
		{nsrnn.LSTM, stacks.Original, false, 0},
	} {
		cfg, err := costConfig(c.kind, s, task)
		if err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		if cfg.Bottom != c.bottom || cfg.PushHiddenState != c.push || cfg.StackEmbedding != c.embed {
			t.Errorf("%s: bottom %v, push hidden state %v, stack embedding %d; want %v, %v, %d",
				c.kind, cfg.Bottom, cfg.PushHiddenState, cfg.StackEmbedding, c.bottom, c.push, c.embed)
		}
	}

	args := []string{"--in-process", "--json", "--task", data.MarkedCopy, "--models", "jm,rns", "--train-size", "4", "--valid-size", "2",
		"--batch-size", "2", "--lengths", "5:7", "--epochs", "1", "--hidden", "4", "--states", "3", "--symbols", "3"}
	var stdout, stderr bytes.Buffer
	if err := runCost(append(args, "--bottom", "fixed", "--push-hidden-state"), &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var rep costReport
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Settings.Bottom != stacks.Fixed || !rep.Settings.PushHiddenState {
		t.Errorf("settings %+v: want bottom fixed and push_hidden_state", rep.Settings)
	}
	jm, err := nsrnn.CountParams(nsrnn.Config{Kind: nsrnn.JM, InputVocab: 3, OutputVocab: 4, Hidden: 4, PushHiddenState: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Models) != 2 || rep.Models[0].Parameters != jm {
		t.Errorf("models %+v: want jm first with %d parameters", rep.Models, jm)
	}
	err = runCost(append(args, "--bottom", "floating"), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--bottom") {
		t.Errorf("--bottom floating: %v, want an error naming the flag", err)
	}
}

// TestCostOtherData checks cost on a task other than marked reversal, on a
// grammar file and on the user's strings: the report names the task, the
// model has the task's vocabulary, and the epoch is scaled to the
// protocol's 10,000 + 1,000 strings for sampled data and to the files'
// strings for the user's (whose subset is at most the files); flags that
// do not apply to the user's strings are refused.
func TestCostOtherData(t *testing.T) {
	dir := t.TempDir()
	train, valid := filepath.Join(dir, "train.txt"), filepath.Join(dir, "valid.txt")
	os.WriteFile(train, []byte("x y\nx x y y\ny\nx y x y x\nx\ny y y\n"), 0o644)
	os.WriteFile(valid, []byte("x y\ny y\n"), 0o644)
	small := []string{"--in-process", "--json", "--models", "lstm", "--epochs", "1", "--hidden", "4", "--batch-size", "2"}
	for _, c := range []struct {
		name      string
		args      []string
		task      string
		inputs    int // the LSTM's input vocabulary
		sizes     [4]int
		minLength int
	}{
		{"task", []string{"--task", "dyck", "--train-size", "4", "--valid-size", "2", "--lengths", "6:8"}, "dyck", 4, [4]int{4, 2, 10000, 1000}, 6},
		{"grammar file", []string{"--grammar-file", filepath.Join("..", "..", "examples", "grammars", "marked-reversal.pcfg"), "--train-size", "4", "--valid-size", "2", "--lengths", "5:7"},
			"marked-reversal", 3, [4]int{4, 2, 10000, 1000}, 5},
		{"strings", []string{"--train", train, "--valid", valid, "--train-size", "4", "--valid-size", "50"}, "train", 2, [4]int{4, 2, 6, 2}, 1},
	} {
		var stdout, stderr bytes.Buffer
		if err := runCost(append(slices.Clone(small), c.args...), &stdout, &stderr); err != nil {
			t.Errorf("%s: %v\n%s", c.name, err, stderr.String())
			continue
		}
		var rep costReport
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		s := rep.Settings
		if !strings.Contains(rep.Task, c.task) || [4]int{s.TrainSize, s.ValidSize, s.EpochTrainSize, s.EpochValidSize} != c.sizes || s.MinLength != c.minLength {
			t.Errorf("%s: task %q, settings %+v; want %q, sizes %v, shortest %d", c.name, rep.Task, s, c.task, c.sizes, c.minLength)
		}
		m := rep.Models[0]
		// 4H(v + H + 2) + (H + 1)(v + 1) parameters for v inputs, H = 4.
		if want := 4*4*(c.inputs+4+2) + 5*(c.inputs+1); m.Parameters != want {
			t.Errorf("%s: %d parameters, want %d", c.name, m.Parameters, want)
		}
		want := m.TrainSeconds*float64(c.sizes[2])/float64(c.sizes[0]) + m.ValidSeconds*float64(c.sizes[3])/float64(c.sizes[1])
		if math.Abs(m.EpochSeconds-want) > 1e-9*want {
			t.Errorf("%s: epoch %g s, want %g from its passes", c.name, m.EpochSeconds, want)
		}
	}
	for _, args := range [][]string{
		{"--train", train, "--valid", valid, "--lengths", "3:5"},
		{"--train", train, "--valid", valid, "--task", "dyck"},
		{"--train", train},
		{"--task", "dyck", "--train-size", "100000000000"},
		{"--task", "dyck", "--grammar-file", filepath.Join("..", "..", "examples", "grammars", "dyck.pcfg")},
	} {
		if err := runCost(append(slices.Clone(small), args...), &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--") {
			t.Errorf("%v: error %v, want one naming a flag", args, err)
		}
	}
}

// TestCostBadSizes: sizes that no model can have, and lengths the task
// has no strings of, are refused before any model is measured, naming
// the flag and its value.
func TestCostBadSizes(t *testing.T) {
	for _, args := range [][]string{
		{"--states", "-1"}, {"--symbols", "-1"}, {"--stack-embedding", "0"}, {"--workers", "1099511627776"},
		{"--workers", "0"}, {"--train-size", "0"}, {"--valid-size", "-1"}, {"--batch-size", "0"}, {"--hidden", "0"},
		{"--epochs", "0"}, {"--lengths", "3:3"},
	} {
		status, _, stderr := run(append([]string{"cost", "--task", "dyck", "--models", "rns"}, args...)...)
		if status == 0 || !strings.Contains(stderr, args[0]+" "+args[1]) {
			t.Errorf("%v: status %d, stderr %q", args, status, stderr)
		}
	}
}

// TestCostTaskStates: without --states and --symbols, cost measures the
// stack that train gives the task (|Q| = 3 on the hardest CFL and the 2023
// tasks), reports those sizes, and counts the parameters of that model.
func TestCostTaskStates(t *testing.T) {
	for _, task := range []string{data.HardestCFL, data.MarkedCopy} {
		var stdout, stderr bytes.Buffer
		args := []string{"--in-process", "--json", "--task", task, "--models", "rns", "--train-size", "4", "--valid-size", "2",
			"--batch-size", "2", "--lengths", "5:7", "--epochs", "1", "--hidden", "4"}
		if err := runCost(args, &stdout, &stderr); err != nil {
			t.Fatalf("%s: %v\n%s", task, err, stderr.String())
		}
		var rep costReport
		if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
			t.Fatal(err)
		}
		tk, err := data.NewTask(task)
		if err != nil {
			t.Fatal(err)
		}
		q, g := stackDefaults(task)
		want, err := nsrnn.CountParams(nsrnn.Config{Kind: nsrnn.RNS, InputVocab: len(tk.Terminals()), OutputVocab: len(tk.Vocabulary()), Hidden: 4, States: q, Symbols: g})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Settings.States != q || rep.Settings.Symbols != g || len(rep.Models) != 1 || rep.Models[0].Parameters != want {
			t.Errorf("%s: settings %d×%d, models %+v; want %d×%d and %d parameters", task, rep.Settings.States, rep.Settings.Symbols, rep.Models, q, g, want)
		}
	}
}
