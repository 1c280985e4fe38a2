package main

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/protocol"
)

// TestSampleTasks2023 samples every 2023 task, and marked
// reverse-and-copy and marked reversal with more symbol types: every line
// is a string of the task's language with a length in the range.
func TestSampleTasks2023(t *testing.T) {
	type test struct {
		task  string
		extra []string
		p     data.Params
	}
	var tests []test
	for _, name := range data.TaskGroupNames(data.Group2023) {
		tests = append(tests, test{task: name})
	}
	tests = append(tests,
		test{data.MarkedReverseAndCopy, []string{"--symbol-types", "5"}, data.Params{data.SymbolTypes: 5}},
		test{data.MarkedReversal, []string{"--symbol-types", "7"}, data.Params{data.SymbolTypes: 7}},
		test{data.Dyck, []string{"--bracket-types", "5"}, data.Params{data.BracketTypes: 5}},
	)
	for _, test := range tests {
		task, err := data.TaskWith(test.task, test.p, "")
		if err != nil {
			t.Fatal(err)
		}
		args := append([]string{"sample", "--task", test.task, "--count", "40", "--lengths", "6:30", "--seed", "2"}, test.extra...)
		status, stdout, stderr := run(args...)
		if status != 0 {
			t.Fatalf("%v: status %d: %s", args, status, stderr)
		}
		ws, err := data.ReadStrings(strings.NewReader(stdout), "stdout", task.Terminals())
		if err != nil {
			t.Fatalf("%s: %v", task, err)
		}
		if len(ws) != 40 {
			t.Fatalf("%s: %d strings", task, len(ws))
		}
		types := map[int]bool{}
		for _, w := range ws {
			if ok, _ := task.Contains(w); !ok || len(w) < 6 || len(w) > 30 {
				t.Errorf("%s: sampled %q", task, data.FormatString(w, task.Terminals()))
			}
			for _, x := range w {
				types[x] = true
			}
		}
		if test.p != nil && len(types) <= 3 {
			t.Errorf("%s: the samples use %d symbols", task, len(types))
		}
	}
}

// TestEntropyTasks2023 checks cfl entropy on a 2023 task against the
// closed form of its lower bound, and that a string outside the language
// is an error naming the file, the line and the task.
func TestEntropyTasks2023(t *testing.T) {
	in := writeFile(t, "0 1 # 0 1\n1 # 1\n1 1 1 # 1 1 1\n")
	status, stdout, stderr := run("entropy", "--task", data.MarkedCopy, "--lengths", "2:8", "--in", in, "--json")
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var lb data.LowerBound
	if err := json.Unmarshal([]byte(stdout), &lb); err != nil {
		t.Fatal(err)
	}
	// Valid lengths 3, 5, 7; N(n) = 2^((n−1)/2).
	want := ((2+1+3)*math.Ln2 + 3*math.Log(3)) / 18
	if lb.ValidLengths != 3 || math.Abs(lb.Entropy-want) > 1e-12 {
		t.Errorf("lower bound %+v, want %v with K = 3", lb, want)
	}
	bad := writeFile(t, "0 1 # 0 1\n0 1 # 1 0\n")
	status, _, stderr = run("entropy", "--task", data.MarkedCopy, "--lengths", "2:8", "--in", bad)
	if status == 0 || !strings.Contains(stderr, bad+":2: string not in the language of marked-copy") {
		t.Errorf("a string outside the language: status %d, %q", status, stderr)
	}
	types := writeFile(t, "0 1 2 # 2 1 0 # 0 1 2\n")
	status, stdout, stderr = run("entropy", "--task", data.MarkedReverseAndCopy, "--lengths", "11:11", "--in", types, "--symbol-types", "3", "--json")
	if status != 0 {
		t.Fatalf("marked-reverse-and-copy with 3 symbol types: status %d, %q", status, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), &lb); err != nil || math.Abs(lb.Entropy-3*math.Log(3)/12) > 1e-12 {
		t.Errorf("marked-reverse-and-copy with 3 symbol types: lower bound %v (%v), want 3·log 3 / 12", lb.Entropy, err)
	}
}

func TestTaskFlagErrors(t *testing.T) {
	for _, test := range []struct {
		args []string
		want []string
	}{
		{[]string{"sample", "--task", "count-3", "--symbol-types", "3", "--count", "1", "--lengths", "3:3"}, []string{"--symbol-types", "count-3 has no parameter symbol-types"}},
		{[]string{"sample", "--task", "dyck", "--symbol-types", "3", "--count", "1", "--lengths", "2:2"}, []string{"--symbol-types", "bracket-types"}},
		{[]string{"sample", "--task", "dyck", "--bracket-types", "0", "--count", "1", "--lengths", "2:2"}, []string{"--bracket-types", "outside [1, 1000]"}},
		{[]string{"sample", "--task", "marked-copy", "--grammar", "released", "--count", "1", "--lengths", "3:3"}, []string{"--grammar released", "not defined by a grammar", "hardest-cfl"}},
		{[]string{"sample", "--task", "copy", "--count", "1", "--lengths", "3:3"}, []string{"--task", "unmarked-copy-different-alphabets"}},
		{[]string{"entropy", "--task", "count-3", "--lengths", "4:5", "--in", "x"}, []string{"--lengths", "no strings"}},
		{[]string{"params", "--task", "count-3", "--bracket-types", "4", "--model", "lstm"}, []string{"--bracket-types"}},
		{[]string{"sweep", "--task", "count-3,marked-copy", "--symbol-types", "4", "--out", "x", "--dry-run"}, []string{"--symbol-types", "none of the tasks"}},
		{[]string{"sweep", "--task", "2023", "--grammar", "released", "--out", "x", "--dry-run"}, []string{"--grammar released", "count-3"}},
	} {
		status, _, stderr := run(test.args...)
		if status == 0 {
			t.Errorf("%v: status 0", test.args)
		}
		for _, w := range test.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("%v: stderr %q lacks %q", test.args, stderr, w)
			}
		}
	}
}

// TestParamsSymbolTypes checks that the number of parameters follows the
// alphabet's size, and the 2023 tasks' |Q| and |Γ| (3 and 3).
func TestParamsSymbolTypes(t *testing.T) {
	count := func(args ...string) string {
		t.Helper()
		status, stdout, stderr := run(append([]string{"params"}, args...)...)
		if status != 0 {
			t.Fatalf("%v: status %d: %s", args, status, stderr)
		}
		// "lstm on marked-reversal: 2,084 parameters"
		_, n, _ := strings.Cut(strings.TrimSpace(stdout), ": ")
		return strings.ReplaceAll(strings.TrimSuffix(n, " parameters"), ",", "")
	}
	// An LSTM of 20 units with two bias vectors, and its output layer:
	// 4·20·(v + 20 + 2) + 21·(v + 1) for v inputs.
	lstm := func(v int) string {
		return itoa(4*20*(v+20+2) + 21*(v+1))
	}
	if got := count("--task", "marked-reversal", "--model", "lstm"); got != lstm(3) {
		t.Errorf("marked-reversal: %s parameters, want %s", got, lstm(3))
	}
	if got := count("--task", "marked-reversal", "--symbol-types", "40", "--model", "lstm"); got != lstm(41) {
		t.Errorf("marked-reversal with 40 symbol types: %s parameters, want %s", got, lstm(41))
	}
	if got := count("--task", "dyck", "--bracket-types", "40", "--model", "lstm"); got != lstm(80) {
		t.Errorf("dyck with 40 bracket types: %s parameters, want %s", got, lstm(80))
	}
	if a, b := count("--task", "count-3", "--model", "rns"), count("--task", "count-3", "--model", "rns", "--states", "3", "--symbols", "3"); a != b {
		t.Errorf("count-3's default |Q| and |Γ|: %s parameters, with 3 and 3: %s", a, b)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// TestTrainTasks trains tiny models on a 2023 task and on marked reversal
// with 3 symbol types, then evaluates them and samples from them with the
// task and its parameters taken from run.json; a resumed run with other
// parameters is refused.
func TestTrainTasks(t *testing.T) {
	dir := t.TempDir()
	for _, test := range []struct {
		task  string
		extra []string
		p     data.Params
	}{
		{data.CountAndCopy, nil, nil},
		{data.MarkedReversal, []string{"--symbol-types", "3"}, data.Params{data.SymbolTypes: 3}},
	} {
		out := filepath.Join(dir, test.task)
		args := append([]string{"train", "--task", test.task, "--model", "rns", "--hidden", "4",
			"--lr", "0.01", "--train-size", "20", "--valid-size", "10", "--batch-size", "5",
			"--lengths", "6:12", "--epochs", "1", "--quiet", "--out", out}, test.extra...)
		if status, _, stderr := run(args...); status != 0 {
			t.Fatalf("%v: status %d: %s", args, status, stderr)
		}
		s, err := protocol.ReadSettings(out)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(filepath.Join(out, protocol.RunFile))
		if s.Task != test.task || s.TaskParams.String() != test.p.String() || (test.p == nil) == strings.Contains(string(b), "task_params") {
			t.Errorf("%s: run.json %s", test.task, b)
		}
		status, stdout, stderr := run("eval", "--model", out, "--lengths", "6:15", "--per-length", "2")
		if status != 0 {
			t.Fatalf("eval %s: status %d: %s", test.task, status, stderr)
		}
		var rep protocol.Report
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if rep.Task != test.task || rep.TaskParams.String() != test.p.String() || !(rep.Overall.Difference > 0) {
			t.Errorf("eval %s: %+v", test.task, rep)
		}
		status, _, stderr = run("generate", "--model", out, "--count", "5", "--max-length", "20")
		if status != 0 || !strings.Contains(stderr, "are in the language of "+test.task) {
			t.Errorf("generate %s: status %d: %s", test.task, status, stderr)
		}
	}
	// Resuming with other parameters, or evaluating under them, is refused.
	out := filepath.Join(dir, data.MarkedReversal)
	status, _, stderr := run("train", "--task", "marked-reversal", "--symbol-types", "4", "--model", "rns", "--hidden", "4",
		"--lr", "0.01", "--train-size", "20", "--valid-size", "10", "--batch-size", "5",
		"--lengths", "6:12", "--epochs", "1", "--quiet", "--out", out, "--resume")
	if status == 0 || !strings.Contains(stderr, "task_params.symbol-types: 3 → 4") {
		t.Errorf("resume with 4 symbol types: status %d: %s", status, stderr)
	}
	status, _, stderr = run("eval", "--model", out, "--symbol-types", "2")
	if status == 0 || !strings.Contains(stderr, "differ from those of the run") {
		t.Errorf("eval with 2 symbol types: status %d: %s", status, stderr)
	}
}

// TestSweepTasks checks the grid of a sweep of the 2023 tasks and of one
// with task parameters.
func TestSweepTasks(t *testing.T) {
	g := sweepGrid{Tasks: data.TaskGroupNames(data.Group2023), Models: []string{"lstm", "rns"}, LRs: []float64{0.01}, Restarts: 1, Out: "S"}
	runs := g.enumerate()
	if len(runs) != 14 {
		t.Fatalf("%d runs, want 14", len(runs))
	}
	for _, r := range runs {
		if r.Model == "rns" && (r.States != 3 || r.Symbols != 3) {
			t.Errorf("%s: |Q| = %d, |Γ| = %d", r.Dir, r.States, r.Symbols)
		}
	}
	var stdout, stderr strings.Builder
	out := filepath.Join(t.TempDir(), "sweep")
	err := sweepCommand([]string{"--task", "marked-reversal,dyck,count-3", "--symbol-types", "40", "--bracket-types", "2",
		"--models", "lstm", "--lrs", "0.01", "--restarts", "1", "--out", out, "--dry-run"}, &stdout, &stderr, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		filepath.Join(out, "marked-reversal-symbol-types40", "lstm", "lr0.01", "seed1"),
		"--task marked-reversal --symbol-types 40 --model lstm",
		filepath.Join(out, "dyck", "lstm"),
		"--task dyck --model lstm",
		"--task count-3 --model lstm",
		"\n3 runs: 0 finished, 0 to resume, 3 new\n",
	} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("dry run lacks %q:\n%s", want, stdout.String())
		}
	}
	if strings.Contains(stdout.String(), "bracket-types") {
		t.Errorf("the default --bracket-types is passed on:\n%s", stdout.String())
	}
}

func TestTasksCommand(t *testing.T) {
	status, stdout, stderr := run("tasks")
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if len(lines) != 1+len(data.AllTaskNames()) {
		t.Fatalf("%d lines:\n%s", len(lines), stdout)
	}
	for i, name := range data.AllTaskNames() {
		if f := strings.Fields(lines[i+1]); f[0] != name {
			t.Errorf("line %d: %q, want task %s", i+2, lines[i+1], name)
		}
	}
	for i, want := range map[int]string{
		1:  "marked-reversal paper 0 1 # --symbol-types 2 2 3",
		4:  "dyck paper ( ) [ ] --bracket-types 2 2 3",
		6:  "count-3 2023 a b c - 3 3",
		9:  "marked-reverse-and-copy 2023 0 1 # --symbol-types 2 3 3",
		12: "unmarked-copy-different-alphabets 2023 0 1 2 3 - 3 3",
	} {
		if got := strings.Join(strings.Fields(lines[i]), " "); !strings.HasPrefix(got, want+" ") {
			t.Errorf("line %d: %q, want it to begin with %q", i+1, lines[i], want)
		}
	}
}
