package main

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/protocol"
)

// tinyModelDir trains a tiny marked-reversal model and returns its run
// directory.
func tinyModelDir(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run")
	if status, _, stderr := run(tinyTrainArgs(out, "--epochs", "1")...); status != 0 {
		t.Fatalf("training: status %d: %s", status, stderr)
	}
	return out
}

func evalJSON(t *testing.T, args ...string) protocol.Report {
	t.Helper()
	status, stdout, stderr := run(append([]string{"eval"}, args...)...)
	if status != 0 {
		t.Fatalf("eval %v: status %d: %s", args, status, stderr)
	}
	var rep protocol.Report
	dec := json.NewDecoder(strings.NewReader(stdout))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rep); err != nil {
		t.Fatalf("eval output: %v:\n%s", err, stdout)
	}
	return rep
}

func TestEvalCommandJSON(t *testing.T) {
	dir := tinyModelDir(t)
	rep := evalJSON(t, "--model", dir, "--task", "marked-reversal", "--lengths", "5:12", "--per-length", "3", "--batch-size", "2")
	if rep.Task != "marked-reversal" || rep.Model != dir {
		t.Errorf("task %q, model %q", rep.Task, rep.Model)
	}
	// Marked reversal has the odd lengths.
	wantLens := []int{5, 7, 9, 11}
	if len(rep.ByLength) != len(wantLens) {
		t.Fatalf("%d lengths, want %v: %+v", len(rep.ByLength), wantLens, rep.ByLength)
	}
	var strs, syms int
	var ce, lb float64
	for i, r := range rep.ByLength {
		if r.Length != wantLens[i] || r.Strings != 3 || r.Symbols != 3*(r.Length+1) {
			t.Errorf("length %d: %d strings, %d symbols; want length %d, 3 strings, %d symbols", r.Length, r.Strings, r.Symbols, wantLens[i], 3*(wantLens[i]+1))
		}
		if !(r.LowerBound > 0) || !(r.CrossEntropy > 0) || math.Abs(r.Difference-(r.CrossEntropy-r.LowerBound)) > 1e-12 {
			t.Errorf("length %d: cross-entropy %v, lower bound %v, difference %v", r.Length, r.CrossEntropy, r.LowerBound, r.Difference)
		}
		strs += r.Strings
		syms += r.Symbols
		ce += r.CrossEntropy * float64(r.Symbols)
		lb += r.LowerBound * float64(r.Symbols)
	}
	o := rep.Overall
	if o.Length != 0 || o.Strings != strs || o.Symbols != syms {
		t.Errorf("overall %+v; want %d strings, %d symbols", o, strs, syms)
	}
	if math.Abs(o.CrossEntropy-ce/float64(syms)) > 1e-12 || math.Abs(o.LowerBound-lb/float64(syms)) > 1e-12 ||
		math.Abs(o.Difference-(o.CrossEntropy-o.LowerBound)) > 1e-12 {
		t.Errorf("overall %+v is not the symbol-weighted mean of the lengths", o)
	}
	// The overall record has every key but "length".
	_, stdout, _ := run("eval", "--model", dir, "--task", "marked-reversal", "--lengths", "5:12", "--per-length", "3")
	var generic struct {
		Overall map[string]any `json:"overall"`
	}
	if err := json.Unmarshal([]byte(stdout), &generic); err != nil {
		t.Fatal(err)
	}
	if _, ok := generic.Overall["length"]; ok {
		t.Errorf("overall has a length: %v", generic.Overall)
	}
	for _, k := range []string{"strings", "symbols", "cross_entropy", "lower_bound", "cross_entropy_diff"} {
		if _, ok := generic.Overall[k]; !ok {
			t.Errorf("overall lacks %q: %v", k, generic.Overall)
		}
	}

	// The batch size does not change the result beyond rounding; the
	// same seed gives the same test set.
	rep2 := evalJSON(t, "--model", dir, "--task", "marked-reversal", "--lengths", "5:12", "--per-length", "3", "--batch-size", "10")
	if math.Abs(rep2.Overall.CrossEntropy-o.CrossEntropy) > 1e-9 || rep2.Overall.LowerBound != o.LowerBound {
		t.Errorf("batch size 10: overall %+v, batch size 2: %+v", rep2.Overall, o)
	}
}

func TestEvalCommandCSV(t *testing.T) {
	dir := tinyModelDir(t)
	args := []string{"--model", dir, "--task", "marked-reversal", "--lengths", "5:9", "--per-length", "4"}
	rep := evalJSON(t, args...)
	status, stdout, stderr := run(append([]string{"eval", "--csv"}, args...)...)
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	rows, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
	if err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	header := "length,strings,symbols,cross_entropy,lower_bound,cross_entropy_diff,cross_entropy_diff_given_length"
	if rep.ValidLengths != 3 { // lengths 5, 7 and 9
		t.Errorf("JSON report: valid_lengths %d, want 3", rep.ValidLengths)
	}
	if len(rows) != len(rep.ByLength)+2 || strings.Join(rows[0], ",") != header {
		t.Fatalf("CSV:\n%s", stdout)
	}
	want := append(append([]protocol.LengthResult(nil), rep.ByLength...), rep.Overall)
	for i, row := range rows[1:] {
		w := want[i]
		label := strconv.Itoa(w.Length)
		if i == len(rep.ByLength) {
			label = "all"
		}
		num := func(j int) float64 {
			v, err := strconv.ParseFloat(row[j], 64)
			if err != nil {
				t.Fatalf("row %d column %d: %v", i+1, j, err)
			}
			return v
		}
		if row[0] != label || row[1] != strconv.Itoa(w.Strings) || row[2] != strconv.Itoa(w.Symbols) {
			t.Errorf("row %v, want %s, %d strings, %d symbols", row, label, w.Strings, w.Symbols)
		}
		for j, v := range []float64{w.CrossEntropy, w.LowerBound, w.Difference, w.DifferenceGivenLength(3)} {
			if math.Abs(num(3+j)-v) > 1e-9*math.Max(1, math.Abs(v)) {
				t.Errorf("row %v column %d: want %v", row, 3+j, v)
			}
		}
	}
}

func TestEvalCommandTestFile(t *testing.T) {
	dir := tinyModelDir(t)
	tmp := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(tmp, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	good := write("good.txt", "0 1 # 1 0\n1 1 0 # 0 1 1\n0 # 0\n")
	rep := evalJSON(t, "--model", dir, "--task", "marked-reversal", "--lengths", "3:9", "--test", good)
	if rep.Overall.Strings != 3 || len(rep.ByLength) != 3 || rep.Overall.Symbols != 6+8+4 {
		t.Errorf("overall %+v, %d lengths; want 3 strings of 3 lengths", rep.Overall, len(rep.ByLength))
	}
	// Without --lengths, the file's strings at their own lengths (3 to 7:
	// the same cross-entropy; the lower bound conditions on the range).
	if own := evalJSON(t, "--model", dir, "--task", "marked-reversal", "--test", good); own.Overall.CrossEntropy != rep.Overall.CrossEntropy ||
		own.Overall.Strings != 3 || len(own.ByLength) != 3 {
		t.Errorf("without --lengths: overall %+v, %d lengths; with --lengths 3:9 %+v", own.Overall, len(own.ByLength), rep.Overall)
	}

	for _, test := range []struct {
		name, content, want string
	}{
		{"unknown symbol", "0 1 # 1 0\n0 2 # 2 0\n", ":2:"},
		{"not in the language", "0 # 0\n0 1 # 1 0\n0 1 # 0 1\n", ":3:"},
		{"too long", "0 # 0\n0 0 0 0 0 # 0 0 0 0 0\n", ":2: length 11 outside --lengths 3:9"},
	} {
		t.Run(test.name, func(t *testing.T) {
			p := write(strings.ReplaceAll(test.name, " ", "_")+".txt", test.content)
			status, stdout, stderr := run("eval", "--model", dir, "--task", "marked-reversal", "--lengths", "3:9", "--test", p)
			if status == 0 || stdout != "" {
				t.Fatalf("status %d, stdout %q", status, stdout)
			}
			if !strings.Contains(stderr, p+test.want) {
				t.Errorf("stderr %q does not name %s%s", stderr, p, test.want)
			}
		})
	}
	missing := filepath.Join(tmp, "missing.txt")
	if status, _, stderr := run("eval", "--model", dir, "--task", "marked-reversal", "--test", missing); status == 0 || !strings.Contains(stderr, missing) {
		t.Errorf("missing --test file: status %d, stderr %q", status, stderr)
	}
}

func TestEvalCommandErrors(t *testing.T) {
	dir := tinyModelDir(t)
	missing := filepath.Join(t.TempDir(), "no-such-run")
	for _, test := range []struct {
		name string
		args []string
		want []string
	}{
		{"missing --model", []string{"--task", "marked-reversal"}, []string{"--model is required"}},
		{"missing model dir", []string{"--model", missing, "--task", "marked-reversal"}, []string{"--model", missing}},
		{"dir without a model", []string{"--model", filepath.Dir(missing), "--task", "marked-reversal"}, []string{"--model", filepath.Dir(missing)}},
		{"unknown --task", []string{"--model", dir, "--task", "anbn", "--force"}, []string{"--task", "anbn"}},
		{"other task", []string{"--model", dir, "--task", "dyck"}, []string{"--task dyck", "marked-reversal", "--force"}},
		{"other vocabulary", []string{"--model", dir, "--task", "dyck", "--force"}, []string{"--model", "vocabulary"}},
		{"bad --lengths", []string{"--model", dir, "--task", "marked-reversal", "--lengths", "x:9"}, []string{"--lengths"}},
		{"bad --per-length", []string{"--model", dir, "--task", "marked-reversal", "--per-length", "0"}, []string{"--per-length 0 must be at least 1"}},
		{"bad --batch-size", []string{"--model", dir, "--task", "marked-reversal", "--batch-size", "0"}, []string{"--batch-size 0 must be at least 1"}},
		{"extra argument", []string{"--model", dir, "--task", "marked-reversal", "more"}, []string{"unexpected arguments"}},
		{"longest batch beyond memory", []string{"--model", dir, "--task", "marked-reversal", "--lengths", "4095:4095", "--batch-size", "100000", "--per-length", "100000"}, []string{"--lengths 4095:4095, --batch-size 100000", "GiB"}},
		{"--per-length with --test", []string{"--model", dir, "--task", "marked-reversal", "--test", dir, "--per-length", "3"}, []string{"--per-length is for a sampled test set"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			status, stdout, stderr := run(append([]string{"eval"}, test.args...)...)
			if status == 0 || stdout != "" {
				t.Fatalf("status %d, stdout %q", status, stdout)
			}
			for _, w := range test.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not contain %q", stderr, w)
				}
			}
		})
	}
	// A corrupted model file is an error naming it.
	bad := filepath.Join(t.TempDir(), "run")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, protocol.ModelFile), []byte("not a model"), 0o644)
	status, _, stderr := run("eval", "--model", bad, "--task", "marked-reversal")
	if status == 0 || !strings.Contains(stderr, bad) {
		t.Errorf("corrupted model: status %d, stderr %q", status, stderr)
	}
	// Without a run.json, --task is required.
	status, _, stderr = run("eval", "--model", filepath.Join(bad, protocol.ModelFile))
	if status == 0 || !strings.Contains(stderr, "--task is required") || !strings.Contains(stderr, "marked-reversal, ") {
		t.Errorf("no run.json, no --task: status %d, stderr %q", status, stderr)
	}
}

// TestEvalCommandFromRun checks that eval takes the task from the run's
// run.json, accepts the model file as well as the run directory, says
// when a run has not finished, and names an empty --test file.
func TestEvalCommandFromRun(t *testing.T) {
	dir := tinyModelDir(t)
	args := []string{"--lengths", "5:9", "--per-length", "2"}
	withTask := evalJSON(t, append([]string{"--model", dir, "--task", "marked-reversal"}, args...)...)
	fromRun := evalJSON(t, append([]string{"--model", dir}, args...)...)
	fromFile := evalJSON(t, append([]string{"--model", filepath.Join(dir, protocol.ModelFile)}, args...)...)
	if fromRun.Task != "marked-reversal" || fromRun.Overall != withTask.Overall || fromFile.Overall != withTask.Overall {
		t.Errorf("task %q: overall %+v from the run, %+v from the model file, %+v with --task", fromRun.Task, fromRun.Overall, fromFile.Overall, withTask.Overall)
	}

	// An unfinished run: run.json, no model yet.
	unfinished := filepath.Join(t.TempDir(), "run")
	os.MkdirAll(unfinished, 0o755)
	b, _ := os.ReadFile(filepath.Join(dir, protocol.RunFile))
	os.WriteFile(filepath.Join(unfinished, protocol.RunFile), b, 0o644)
	status, stdout, stderr := run("eval", "--model", unfinished)
	if status == 0 || stdout != "" || !strings.Contains(stderr, "the run has not finished and has no checkpoint yet") || !strings.Contains(stderr, unfinished) {
		t.Errorf("unfinished run: status %d, stderr %q", status, stderr)
	}
	// A finished run copied without its model (as results directories
	// keep runs): run.json and summary.json, no model.
	b, _ = os.ReadFile(filepath.Join(dir, protocol.SummaryFile))
	os.WriteFile(filepath.Join(unfinished, protocol.SummaryFile), b, 0o644)
	status, stdout, stderr = run("eval", "--model", unfinished)
	if status == 0 || stdout != "" || !strings.Contains(stderr, "the run has finished, but its model file is missing") || !strings.Contains(stderr, unfinished) {
		t.Errorf("finished run without its model: status %d, stderr %q", status, stderr)
	}

	empty := filepath.Join(t.TempDir(), "empty.txt")
	os.WriteFile(empty, nil, 0o644)
	status, _, stderr = run("eval", "--model", dir, "--test", empty)
	if status == 0 || !strings.Contains(stderr, "--test "+empty) || !strings.Contains(stderr, "no strings") {
		t.Errorf("empty --test: status %d, stderr %q", status, stderr)
	}
}

// TestEvalProgress checks that eval says on stderr which run it evaluates
// on how many strings, and when it is done, and keeps stdout for the
// report alone.
func TestEvalProgress(t *testing.T) {
	dir := tinyModelDir(t)
	for _, format := range [][]string{nil, {"--csv"}} {
		args := append([]string{"eval", "--model", dir, "--task", "marked-reversal", "--lengths", "5:12", "--per-length", "3"}, format...)
		status, stdout, stderr := run(args...)
		if status != 0 {
			t.Fatalf("%v: status %d: %s", format, status, stderr)
		}
		for _, want := range []string{"evaluating " + dir + " on 12 strings…\n", "evaluated " + dir + " in "} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%v: stderr lacks %q:\n%s", format, want, stderr)
			}
		}
		if strings.Contains(stdout, "evaluat") {
			t.Errorf("%v: progress on stdout:\n%s", format, stdout)
		}
	}
}
