package main

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

// markedRNS is a run directory of an RNS-RNN trained on marked reversal
// until near the lower bound, checked in for the tests of viterbi and
// generate: its run.json, model and summary.json (the checkpoint and the
// log are left out). It was made by
//
//	NSRNN_REGEN_TESTDATA=1 go test ./experiments/cfl -run TestRegenerateMarkedRNS -timeout 3h
//
// which runs "cfl train" with markedRNSTrainArgs and copies those files
// here; training is deterministic, so it makes the same model again (on
// the pure-Go BLAS).
var markedRNS = filepath.Join("testdata", "marked-rns")

// markedRNSTrainArgs are the flags of the run in markedRNS: an RNS-RNN
// with 16 hidden units, |Q| = 2 and |Γ| = 3, trained on strings of
// lengths 21–41, long enough that the LSTM cannot remember the first
// half and the stack must do it (on lengths 9–21, as in
// examples/quickstart, the model gets near the bound without using the
// stack as a stack). It stops early after 49 epochs (about 15 minutes on
// two busy cores), 0.0008 nats below the validation set's lower bound.
var markedRNSTrainArgs = []string{"--task", "marked-reversal", "--model", "rns", "--hidden", "16",
	"--states", "2", "--symbols", "3", "--lengths", "21:41", "--train-size", "2000", "--valid-size", "200",
	"--lr", "0.01", "--epochs", "100", "--seed", "2", "--quiet"}

// markedRNSFiles are the files of the run kept in testdata.
var markedRNSFiles = []string{protocol.RunFile, protocol.ModelFile, protocol.SummaryFile}

// TestRegenerateMarkedRNS retrains the testdata model when
// NSRNN_REGEN_TESTDATA is set (it takes tens of minutes), and refuses one
// that is not near the bound.
func TestRegenerateMarkedRNS(t *testing.T) {
	if os.Getenv("NSRNN_REGEN_TESTDATA") == "" {
		t.Skip("set NSRNN_REGEN_TESTDATA=1 to retrain testdata/marked-rns")
	}
	out := filepath.Join(t.TempDir(), "run")
	if status, _, stderr := run(append(append([]string{"train"}, markedRNSTrainArgs...), "--out", out)...); status != 0 {
		t.Fatalf("train: status %d: %s", status, stderr)
	}
	sum, err := protocol.ReadSummary(out)
	if err != nil {
		t.Fatal(err)
	}
	if d := sum.BestValidCrossEntropyDiff; !(d < 0.02) {
		t.Fatalf("the model ends %.4f nats above the bound; want < 0.02", d)
	}
	if err := os.MkdirAll(markedRNS, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range markedRNSFiles {
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(markedRNS, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// markedStrings writes count marked-reversal strings of the testdata
// run's training lengths to a file and returns it with the strings.
func markedStrings(t *testing.T, count int, seed uint64) (string, [][]int) {
	t.Helper()
	s, err := protocol.ReadSettings(markedRNS)
	if err != nil {
		t.Fatal(err)
	}
	task, err := s.TaskDef()
	if err != nil {
		t.Fatal(err)
	}
	ws, err := data.SampleStrings(task.Grammar(), count, s.MinLength, s.MaxLength, rand.New(rand.NewPCG(seed, 9)))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "strings.txt")
	if err := data.WriteStringsFile(path, ws, task.Terminals()); err != nil {
		t.Fatal(err)
	}
	return path, ws
}

// viterbiJSON runs viterbi --json and decodes its records.
func viterbiJSON(t *testing.T, args ...string) []viterbiRecord {
	t.Helper()
	status, stdout, stderr := run(append([]string{"viterbi", "--json"}, args...)...)
	if status != 0 {
		t.Fatalf("viterbi %v: status %d: %s", args, status, stderr)
	}
	var recs []viterbiRecord
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	for dec.More() {
		var r viterbiRecord
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("viterbi output: %v:\n%s", err, stdout)
		}
		recs = append(recs, r)
	}
	return recs
}

// TestViterbiMarkedReversalPushesThenPops decodes the runs of the testdata
// model on 40 marked-reversal strings w#wᴿ, |w| = k, n = 2k+1, and checks
// that in every one of them the stack update after reading w_t is a push
// for every t = 3 … k, and a pop for every t = k+1 … n−3 (from the update
// after reading # to the one after w_{n−3}), so that the stack grows
// while w is read and shrinks while wᴿ is. The first two and the last two
// updates are left free: the model keeps the outermost symbols w_1, w_2
// in its LSTM instead (its decoded runs push at step 1, as the Original
// bottom requires, replace at step 2, and push then pop at the last two
// steps, on every string). The rule is the strictest this model meets;
// the same model after 2 epochs, one trained near the bound on strings of
// lengths 9–21 (where the LSTM alone suffices) and one trained with seed 1
// (which pops at steps 4 and 5 and stops popping six steps before the
// end) each fail it on all of 200 strings.
func TestViterbiMarkedReversalPushesThenPops(t *testing.T) {
	path, ws := markedStrings(t, 40, 1)
	recs := viterbiJSON(t, "--model", markedRNS, "--in", path)
	if len(recs) != len(ws) {
		t.Fatalf("%d records for %d strings", len(recs), len(ws))
	}
	for i, r := range recs {
		w := ws[i]
		n, k := len(w), len(w)/2
		if r.Line != i+1 || len(r.Ops) != n-1 || len(r.Depths) != n-1 || len(r.Stacks) != n-1 || len(r.States) != n-1 || r.LogWeight == nil {
			t.Fatalf("string %d: malformed record %+v", i+1, r)
		}
		for j, d := range r.Depths {
			if d != len(r.Stacks[j])-1 {
				t.Fatalf("string %d step %d: depth %d for stack %v", i+1, j+1, d, r.Stacks[j])
			}
		}
		for step := 3; step <= n-3; step++ {
			op, want := r.Ops[step-1], "pop("
			if step <= k {
				want = "push("
			}
			if !strings.HasPrefix(op, want) {
				t.Errorf("string %d (%s), step %d after reading %s: %s, want a %s), ops %v",
					i+1, r.String, step, strings.Fields(r.String)[step-1], op, want, r.Ops)
				break
			}
		}
	}
}

// TestViterbiAgreesWithModel: the records are Model.Viterbi's runs, and a
// model file may be given instead of its run directory.
func TestViterbiAgreesWithModel(t *testing.T) {
	path, ws := markedStrings(t, 3, 2)
	recs := viterbiJSON(t, "--model", filepath.Join(markedRNS, protocol.ModelFile), "--in", path)
	m, err := nsrnn.Load(filepath.Join(markedRNS, protocol.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range ws {
		r, err := m.Viterbi(w)
		if err != nil {
			t.Fatal(err)
		}
		got := recs[i]
		if got.LogWeight == nil || math.Abs(*got.LogWeight-r.LogWeight) > 1e-9*math.Abs(r.LogWeight) || len(got.Ops) != len(r.Ops) {
			t.Fatalf("string %d: record %+v, Model.Viterbi %+v", i+1, got, r)
		}
		for j, op := range r.Ops {
			if got.Ops[j] != op.String() || got.States[j] != r.States[j] {
				t.Errorf("string %d step %d: %s in state %d, Model.Viterbi %v in state %d", i+1, j+1, got.Ops[j], got.States[j], op, r.States[j])
			}
		}
	}
}

// TestViterbiText checks the table: a row per symbol, the update after
// reading it, and none after the last symbol; an empty line is the empty
// string, with no updates.
func TestViterbiText(t *testing.T) {
	in := writeFile(t, "0 1 # 1 0\n\n#\n")
	status, stdout, stderr := run("viterbi", "--model", markedRNS, "--in", in)
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	blocks := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n\n")
	if len(blocks) != 3 {
		t.Fatalf("%d blocks, want 3:\n%s", len(blocks), stdout)
	}
	lines := strings.Split(blocks[0], "\n")
	if len(lines) != 3+5 || lines[0] != in+":1: 0 1 # 1 0" || !strings.HasPrefix(lines[1], "log-weight ") ||
		!strings.Contains(lines[1], "over 4 stack updates (the sum of the model's log-weights of this run's transitions") ||
		!strings.Contains(lines[1], "one update follows each symbol but the last") ||
		!strings.HasPrefix(lines[2], "t ") {
		t.Fatalf("first block:\n%s", blocks[0])
	}
	for i, sym := range []string{"0", "1", "#", "1", "0"} {
		f := strings.Fields(lines[3+i])
		if len(f) < 3 || f[0] != string(rune('1'+i)) || f[1] != sym {
			t.Errorf("row %d: %q", i+1, lines[3+i])
			continue
		}
		if i == 4 {
			if len(f) != 3 || f[2] != "-" {
				t.Errorf("the last symbol has an update: %q", lines[3+i])
			}
		} else if len(f) < 6 || !strings.ContainsAny(f[2], "(") {
			t.Errorf("row %d has no update: %q", i+1, lines[3+i])
		}
	}
	if !strings.Contains(blocks[1], ":2: "+data.EmptyString+"\n") || !strings.Contains(blocks[1], "over 0 stack updates") {
		t.Errorf("empty string's block:\n%s", blocks[1])
	}
}

// TestViterbiErrors: unparsable strings name their file and line, and a
// model without a nondeterministic stack, or a directory that is no run,
// names --model.
func TestViterbiErrors(t *testing.T) {
	lstm := filepath.Join(t.TempDir(), "lstm")
	task, err := data.NewTask(data.MarkedReversal)
	if err != nil {
		t.Fatal(err)
	}
	cfg := nsrnn.Config{Kind: nsrnn.LSTM, InputVocab: len(task.Terminals()), OutputVocab: len(task.Vocabulary()), Hidden: 3}
	if err := protocol.PrepareRun(lstm, protocol.Settings{Task: task.Name(), Model: cfg, LR: 0.01}, false); err != nil {
		t.Fatal(err)
	}
	m, err := nsrnn.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Save(filepath.Join(lstm, protocol.ModelFile)); err != nil {
		t.Fatal(err)
	}
	good := writeFile(t, "0 # 0\n")
	bad := writeFile(t, "0 # 0\n1 # 1\n0 2 # 2 0\n")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--in", good}, "--model"},
		{[]string{"--model", lstm, "--in", good}, "--model " + lstm},
		{[]string{"--model", t.TempDir(), "--in", good}, "--model"},
		{[]string{"--model", filepath.Join(lstm, "nope"), "--in", good}, "--model"},
		{[]string{"--model", markedRNS, "--in", bad}, bad + ":3:"},
		{[]string{"--model", markedRNS, "--in", bad, "--json"}, bad + ":3:"},
		{[]string{"--model", markedRNS, "--in", filepath.Join(t.TempDir(), "nope")}, "--in"},
	} {
		status, stdout, stderr := run(append([]string{"viterbi"}, c.args...)...)
		if status == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("viterbi %v: status %d, stderr %q; want an error with %q", c.args, status, stderr, c.want)
		}
		if stdout != "" {
			t.Errorf("viterbi %v printed %q", c.args, stdout)
		}
	}
}

// TestCheckpointAsModel decodes and evaluates from checkpoint files: a
// finished train run's checkpoint holds as its best model the run's model
// file, so the two decode and evaluate alike; --last uses the model at the
// checkpoint; a cfl actions run (settings.json, no run.json) decodes from
// its checkpoint; and --last without a checkpoint, or a directory without
// a model, is refused with a pointer to the checkpoint.
func TestCheckpointAsModel(t *testing.T) {
	dir := t.TempDir()
	train := filepath.Join(dir, "train")
	tiny := []string{"--train-size", "6", "--valid-size", "2", "--batch-size", "2", "--lengths", "5:9", "--hidden", "4", "--epochs", "2"}
	if status, _, stderr := run(append([]string{"train", "--task", "marked-reversal", "--model", "rns", "--lr", "0.01", "--out", train, "--quiet"}, tiny...)...); status != 0 {
		t.Fatalf("train: %s", stderr)
	}
	actions := filepath.Join(dir, "actions")
	if err := runActions(append([]string{"--out", actions, "--models", "ns+s", "--length", "9"}, tiny...), &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	in := writeFile(t, "0 1 # 1 0\n1 1 0 # 0 1 1\n")
	decode := func(args ...string) string {
		t.Helper()
		status, stdout, stderr := run(append([]string{"viterbi", "--in", in, "--json"}, args...)...)
		if status != 0 || stdout == "" {
			t.Fatalf("viterbi %q: status %d: %s", args, status, stderr)
		}
		return stdout
	}
	ckpt := filepath.Join(train, protocol.CheckpointFile)
	if got, want := decode("--model", ckpt), decode("--model", train); got != want {
		t.Errorf("the checkpoint's best model decodes\n%s\nthe run's model\n%s", got, want)
	}
	decode("--model", ckpt, "--last")
	decode("--model", filepath.Join(actions, "ns+s", protocol.CheckpointFile), "--last")

	unfinished := filepath.Join(dir, "unfinished")
	if err := os.MkdirAll(unfinished, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{protocol.RunFile, protocol.CheckpointFile} {
		b, err := os.ReadFile(filepath.Join(train, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(unfinished, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", train, "--last"}, "--last is for a checkpoint file"},
		{[]string{"--model", unfinished}, filepath.Join(unfinished, protocol.CheckpointFile)},
	} {
		status, _, stderr := run(append([]string{"viterbi", "--in", in}, c.args...)...)
		if status == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("viterbi %q: status %d, stderr %q; want an error with %q", c.args, status, stderr, c.want)
		}
	}
	decode("--model", filepath.Join(unfinished, protocol.CheckpointFile))

	eval := func(args ...string) string {
		t.Helper()
		status, stdout, stderr := run(append([]string{"eval", "--lengths", "5:9", "--per-length", "3"}, args...)...)
		if status != 0 || stdout == "" {
			t.Fatalf("eval %q: status %d: %s", args, status, stderr)
		}
		return stdout
	}
	// The reports are alike but for the model's path.
	report := func(out string) map[string]any {
		t.Helper()
		var r map[string]any
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("%v:\n%s", err, out)
		}
		if _, ok := r["model"]; !ok {
			t.Fatalf("no model in the report:\n%s", out)
		}
		delete(r, "model")
		return r
	}
	if got, want := eval("--model", ckpt), eval("--model", train); !reflect.DeepEqual(report(got), report(want)) {
		t.Errorf("eval of the checkpoint's best model\n%s\nof the run's model\n%s", got, want)
	}
	// A cfl actions run's task comes from its settings.json, as for viterbi.
	eval("--model", filepath.Join(actions, "ns+s", protocol.CheckpointFile), "--last")
	if status, _, stderr := run("eval", "--model", filepath.Join(actions, "ns+s", protocol.CheckpointFile), "--task", "dyck"); status == 0 || !strings.Contains(stderr, actionsSettingsFile) {
		t.Errorf("eval of a cfl actions run on another task: status %d, stderr %q; want an error naming its %s", status, stderr, actionsSettingsFile)
	}
	for _, args := range [][]string{{"--model", train, "--last"}, {"--model", unfinished}} {
		status, _, stderr := run(append([]string{"eval"}, args...)...)
		if status == 0 || !strings.Contains(stderr, protocol.CheckpointFile) {
			t.Errorf("eval %q: status %d, stderr %q; want an error naming the checkpoint", args, status, stderr)
		}
	}
}
