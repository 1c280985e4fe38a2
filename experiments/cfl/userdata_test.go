package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/protocol"
)

// writeText writes content to a file named name in dir and returns its
// path.
func writeText(t *testing.T, dir, name, content string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(content), 0o666); err != nil {
		t.Fatal(err)
	}
	return path
}

// textArgs are the flags of a small training run on text files.
func textArgs(out, train, valid string, extra ...string) []string {
	return append([]string{"train", "--train", train, "--valid", valid, "--model", "rns", "--hidden", "4",
		"--lr", "0.01", "--batch-size", "2", "--epochs", "2", "--quiet", "--out", out}, extra...)
}

// TestTrainTextFiles trains and evaluates on a user's text files: the
// vocabulary from the training file, no lower bound (cross-entropy and
// perplexity in the outputs, the bound null in summary.json), the test
// file for eval, Viterbi and generation from the run, and a resume on a
// changed file refused.
func TestTrainTextFiles(t *testing.T) {
	dir := t.TempDir()
	train := writeText(t, dir, "train.txt", "a b b a\nb a a b\na a\nb b\na b b a\nx a\n")
	valid := writeText(t, dir, "valid.txt", "a b\nb a a b\n")
	test := writeText(t, dir, "test.txt", "a a\nb x b\n")
	out := filepath.Join(dir, "run")
	status, _, stderr := run(textArgs(out, train, valid, "--test", test)...)
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	if !strings.Contains(stderr, "no lower bound") || !strings.Contains(stderr, "perplexity") {
		t.Errorf("stderr does not say there is no lower bound:\n%s", stderr)
	}
	if strings.Contains(stderr, "empty string") {
		t.Errorf("a note of empty strings where there are none:\n%s", stderr)
	}
	// Empty lines are empty strings, and a note says how many per file.
	other := t.TempDir()
	blank := writeText(t, other, "blank.txt", "a b b a\n\nb a a b\na a\n\n")
	status, _, stderr = run(textArgs(filepath.Join(other, "run"), blank, valid, "--epochs", "1")...)
	if status != 0 || !strings.Contains(stderr, "note: "+blank+" holds 2 empty string(s)") || strings.Contains(stderr, valid+" holds") {
		t.Errorf("empty lines: status %d, stderr %q; want a note of the 2 empty strings of %s alone", status, stderr, blank)
	}
	s, err := protocol.ReadSettings(out)
	if err != nil {
		t.Fatal(err)
	}
	if s.Files == nil || s.Task != "train.txt" || strings.Join(s.Files.Vocabulary, " ") != "a b x" ||
		s.Files.Test == nil || len(s.Files.Train.SHA256) != 64 || s.TrainSize != 6 || s.ValidSize != 2 || s.MinLength != 2 || s.MaxLength != 4 {
		t.Fatalf("settings %+v, files %+v", s, s.Files)
	}
	sum := readJSONObject(t, filepath.Join(out, protocol.SummaryFile))
	if sum["valid_lower_bound"] != nil || sum["best_valid_cross_entropy_diff"] != nil || sum["no_lower_bound"] != true {
		t.Errorf("summary.json does not say there is no bound: %v", sum)
	}
	if ce, pp := sum["best_valid_cross_entropy"].(float64), sum["best_valid_perplexity"].(float64); math.Abs(pp-math.Exp(ce)) > 1e-9*pp {
		t.Errorf("perplexity %v is not exp of the cross-entropy %v", pp, ce)
	}
	if _, ok := sum["valid_lower_bound"]; !ok {
		t.Error("summary.json leaves out valid_lower_bound instead of writing null")
	}
	log, err := os.ReadFile(filepath.Join(out, protocol.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(log), `"lower_bound":`) || !strings.Contains(string(log), `"no_lower_bound":true`) {
		t.Errorf("log.jsonl has a lower bound:\n%s", log)
	}

	// cfl eval takes the run's test file; a --test file with an unknown
	// symbol names its file and line.
	rep := evalJSON(t, "--model", out)
	if !rep.NoLowerBound || rep.Overall.Strings != 2 || math.Abs(rep.Overall.Perplexity-math.Exp(rep.Overall.CrossEntropy)) > 1e-9 {
		t.Errorf("eval report %+v", rep)
	}
	status, stdout, _ := run("eval", "--model", out, "--csv")
	if status != 0 || !strings.HasPrefix(stdout, "length,strings,symbols,cross_entropy,perplexity\n") {
		t.Errorf("eval --csv: status %d:\n%s", status, stdout)
	}
	bad := writeText(t, dir, "bad.txt", "a b\na c\n")
	if status, _, stderr := run("eval", "--model", out, "--test", bad); status == 0 || !strings.Contains(stderr, bad+":2:") || !strings.Contains(stderr, `"c"`) {
		t.Errorf("eval on an unknown symbol: status %d: %s", status, stderr)
	}

	// Viterbi and generation work from the run's vocabulary.
	in := writeText(t, dir, "in.txt", "a b b a\n")
	if status, stdout, stderr := run("viterbi", "--model", out, "--in", in); status != 0 || !strings.Contains(stdout, "a b b a") {
		t.Errorf("viterbi: status %d: %s%s", status, stdout, stderr)
	}
	status, stdout, stderr = run("generate", "--model", out, "--count", "5", "--json")
	if status != 0 || !strings.Contains(stderr, "no language to check") || strings.Contains(stdout, "in_language") {
		t.Errorf("generate: status %d: %s%s", status, stdout, stderr)
	}

	// A resume on a changed training file is refused, naming the digest.
	writeText(t, dir, "train.txt", "a b b a\nb a a b\na a\nb b\na b b a\nx a\na\n")
	if status, _, stderr := run(textArgs(out, train, valid, "--test", test, "--resume")...); status == 0 || !strings.Contains(stderr, "files.train.sha256") {
		t.Errorf("resume on a changed file: status %d: %s", status, stderr)
	}

	// Selection picks by cross-entropy and tests on the test file.
	status, stdout, stderr = run("select", "--sweep", dir)
	if status != 0 || !strings.Contains(stdout, "ce ") || !strings.Contains(stdout, "test: each run's test file") || strings.Contains(stdout, "strings per length") {
		t.Errorf("select: status %d: %s%s", status, stdout, stderr)
	}
	if want := " on " + test + " ("; !strings.Contains(stderr, want) {
		t.Errorf("select does not name the test file it tests on (%q): %s", want, stderr)
	}
	// A run's own directory is not a sweep.
	if status, _, stderr := run("select", "--sweep", out); status == 0 || !strings.Contains(stderr, "is a run's directory") {
		t.Errorf("select --sweep on a run: status %d: %s", status, stderr)
	}
	sel, err := protocol.ReadSelection(dir)
	if err != nil || len(sel.Selected) != 1 || !sel.Selected[0].NoLowerBound || sel.Selected[0].TestCrossEntropy == nil {
		t.Fatalf("selection %+v, %v", sel, err)
	}
	b, _ := json.Marshal(sel.Selected[0])
	if strings.Contains(string(b), "valid_cross_entropy_diff") {
		t.Errorf("selected.json has a difference without a bound: %s", b)
	}
	if status, _, stderr := run("plot", "--sweep", dir, "--out", filepath.Join(dir, "figs")); status != 0 {
		t.Errorf("plot: status %d: %s", status, stderr)
	}
	// Every figure, the combined ones too, plots the cross-entropy,
	// labelled as such: there is no bound to take a difference from.
	svgs, _ := filepath.Glob(filepath.Join(dir, "figs", "*.svg"))
	if len(svgs) < 2 {
		t.Fatalf("plot wrote %q; want a figure per task and the combined ones", svgs)
	}
	for _, f := range svgs {
		b, _ := os.ReadFile(f)
		if strings.Contains(string(b), "diff") || !strings.Contains(string(b), "no lower bound") {
			t.Errorf("%s: labelled as a difference, or not as a cross-entropy without a bound", filepath.Base(f))
		}
	}
}

func TestTrainTextFilesErrors(t *testing.T) {
	dir := t.TempDir()
	train := writeText(t, dir, "train.txt", "a b\nb a\n")
	valid := writeText(t, dir, "valid.txt", "a b\n\nb c a\n")
	good := writeText(t, dir, "good.txt", "a b\n")
	empty := writeText(t, dir, "empty.txt", "")
	eos := writeText(t, dir, "eos.txt", "a EOS\n")
	latin1 := writeText(t, dir, "latin1.txt", "a b\nb \xe9 a\n")
	badValid := writeText(t, dir, "bad-valid.txt", "a b\n\na \xff\n")
	for _, test := range []struct {
		name string
		args []string
		want []string
	}{
		{"unknown symbol", textArgs(filepath.Join(dir, "r1"), train, valid), []string{valid + ":3:", `unknown symbol "c"`}},
		{"unknown in test", textArgs(filepath.Join(dir, "r2"), train, good, "--test", valid), []string{valid + ":3:"}},
		{"no valid", []string{"train", "--train", train, "--model", "lstm", "--lr", "0.01", "--out", filepath.Join(dir, "r3")}, []string{"--valid is required"}},
		{"with task", textArgs(filepath.Join(dir, "r4"), train, good, "--task", "dyck"), []string{"--task does not apply"}},
		{"with lengths", textArgs(filepath.Join(dir, "r5"), train, good, "--lengths", "2:4"), []string{"--lengths does not apply"}},
		{"empty valid", textArgs(filepath.Join(dir, "r6"), train, empty), []string{empty, "no strings"}},
		{"EOS", textArgs(filepath.Join(dir, "r7"), eos, good), []string{eos + ":1:", "EOS"}},
		{"missing file", textArgs(filepath.Join(dir, "r8"), filepath.Join(dir, "none.txt"), good), []string{"none.txt"}},
		{"non-UTF-8 train", textArgs(filepath.Join(dir, "r9"), latin1, good), []string{latin1 + ":2:", "invalid UTF-8"}},
		{"non-UTF-8 valid", textArgs(filepath.Join(dir, "r10"), train, badValid), []string{badValid + ":3:", "invalid UTF-8"}},
	} {
		t.Run(test.name, func(t *testing.T) { wantRefusal(t, test.args, test.want) })
	}
	// Refused at the start: no run directory was made.
	for _, r := range []string{"r9", "r10"} {
		if _, err := os.Stat(filepath.Join(dir, r)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: the refused run left its directory (%v)", r, err)
		}
	}
}

// TestGrammarFile uses a grammar file of the user's as --task is used:
// sample, entropy, params, and a run that trains and evaluates with its
// lower bound, which is the built-in task's when the file is its grammar.
func TestGrammarFile(t *testing.T) {
	dir := t.TempDir()
	g := writeText(t, dir, "mr.pcfg", "# marked reversal\nS -> \"0\" S \"0\" [0.4]\nS -> \"1\" S \"1\" [0.4]\nS -> \"#\" [0.2]\n")
	status, stdout, stderr := run("sample", "--grammar-file", g, "--count", "5", "--lengths", "3:7", "--seed", "2")
	if status != 0 || len(strings.Split(strings.TrimSpace(stdout), "\n")) != 5 {
		t.Fatalf("sample: status %d: %s%s", status, stdout, stderr)
	}
	strs := writeText(t, dir, "strs.txt", stdout)
	status, stdout, stderr = run("entropy", "--grammar-file", g, "--lengths", "3:7", "--in", strs, "--json")
	if status != 0 {
		t.Fatalf("entropy: status %d: %s", status, stderr)
	}
	var lb data.LowerBound
	if err := json.Unmarshal([]byte(stdout), &lb); err != nil || lb.ValidLengths != 3 || !(lb.Entropy > 0) {
		t.Errorf("entropy %s: %+v, %v", stdout, lb, err)
	}
	if status, stdout, _ := run("params", "--grammar-file", g, "--model", "rns"); status != 0 || !strings.Contains(stdout, "mr.pcfg") {
		t.Errorf("params: status %d: %s", status, stdout)
	}

	// The shipped marked-reversal grammar file trains on the same data
	// with the same lower bound as --task marked-reversal.
	shipped := filepath.Join("..", "..", "examples", "grammars", "marked-reversal.pcfg")
	args := func(out string, src ...string) []string {
		return append([]string{"train", "--model", "lstm", "--hidden", "4", "--lr", "0.01", "--train-size", "10",
			"--valid-size", "6", "--batch-size", "3", "--lengths", "5:9", "--epochs", "1", "--quiet", "--out", out}, src...)
	}
	outF, outT := filepath.Join(dir, "runs", "file"), filepath.Join(dir, "runs", "task")
	if status, _, stderr := run(args(outF, "--grammar-file", shipped)...); status != 0 {
		t.Fatalf("train --grammar-file: status %d: %s", status, stderr)
	}
	if status, _, stderr := run(args(outT, "--task", "marked-reversal")...); status != 0 {
		t.Fatalf("train --task: status %d: %s", status, stderr)
	}
	sf, st := readJSONObject(t, filepath.Join(outF, protocol.SummaryFile)), readJSONObject(t, filepath.Join(outT, protocol.SummaryFile))
	if sf["valid_lower_bound"] != st["valid_lower_bound"] || sf["best_valid_cross_entropy"] != st["best_valid_cross_entropy"] || sf["task"] != "marked-reversal.pcfg" {
		t.Errorf("grammar file summary %v, task summary %v", sf, st)
	}
	s, err := protocol.ReadSettings(outF)
	if err != nil || s.GrammarFile == nil || len(s.GrammarFile.SHA256) != 64 {
		t.Fatalf("settings %+v, %v", s, err)
	}
	repF := evalJSON(t, "--model", outF, "--lengths", "5:9", "--per-length", "3")
	repT := evalJSON(t, "--model", outT, "--lengths", "5:9", "--per-length", "3")
	if repF.NoLowerBound || repF.Overall.LowerBound != repT.Overall.LowerBound || repF.Overall.Difference != repT.Overall.Difference {
		t.Errorf("eval of the file's run %+v, of the task's %+v", repF.Overall, repT.Overall)
	}
	if status, _, stderr := run("select", "--sweep", filepath.Join(dir, "runs"), "--per-length", "2", "--test-lengths", "5:9"); status != 0 {
		t.Errorf("select: status %d: %s", status, stderr)
	}
	if status, _, stderr := run("plot", "--sweep", filepath.Join(dir, "runs"), "--out", filepath.Join(dir, "figs")); status != 0 {
		t.Errorf("plot: status %d: %s", status, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "figs")); err != nil {
		t.Error(err)
	}
}

func TestGrammarFileErrors(t *testing.T) {
	dir := t.TempDir()
	sum := writeText(t, dir, "sum.pcfg", "S -> a S [0.5]\n# comment\nS -> [0.4]\n")
	bad := writeText(t, dir, "bad.pcfg", "S -> a [1]\nS a\n")
	good := writeText(t, dir, "good.pcfg", "S -> a S [0.5]\nS -> [0.5]\n")
	quoted := writeText(t, dir, "quoted.pcfg", "S -> a S [0.5]\nS -> \"\\xff\" [0.5]\n")
	for _, test := range []struct {
		name string
		args []string
		want []string
	}{
		{"sum", []string{"sample", "--grammar-file", sum, "--count", "1", "--lengths", "1:2"}, []string{sum + ":1:", "sum to 0.9"}},
		{"bad line", []string{"entropy", "--grammar-file", bad, "--lengths", "1:2"}, []string{bad + ":2:", "want a rule"}},
		{"both", []string{"sample", "--grammar-file", good, "--task", "dyck", "--count", "1", "--lengths", "1:2"}, []string{"give one of them"}},
		{"task parameter", []string{"sample", "--grammar-file", good, "--symbol-types", "3", "--count", "1", "--lengths", "1:2"}, []string{"apply to --task only"}},
		{"train", []string{"train", "--grammar-file", sum, "--model", "lstm", "--lr", "0.01", "--out", filepath.Join(dir, "r")}, []string{sum + ":1:"}},
		{"quoted non-UTF-8 terminal", []string{"train", "--grammar-file", quoted, "--model", "lstm", "--lr", "0.01", "--out", filepath.Join(dir, "r2")}, []string{quoted + ":2:", "not valid UTF-8"}},
	} {
		t.Run(test.name, func(t *testing.T) { wantRefusal(t, test.args, test.want) })
	}
}

// TestTrainTextFilesResume interrupts a run on text files after its first
// checkpoint and resumes it: it ends with the model and summary of an
// uninterrupted run (the checkpoint keeps the absence of a bound).
func TestTrainTextFilesResume(t *testing.T) {
	dir := t.TempDir()
	var b strings.Builder
	for i := range 60 {
		b.WriteString(strings.Repeat("a b ", 1+i%5) + "c\n")
	}
	train := writeText(t, dir, "train.txt", b.String())
	valid := writeText(t, dir, "valid.txt", "a b c\na b a b c\n")
	whole, part := filepath.Join(dir, "whole"), filepath.Join(dir, "part")
	extra := []string{"--epochs", "4", "--workers", "1"}
	if status, _, stderr := run(textArgs(whole, train, valid, extra...)...); status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	if !interruptAtCheckpoint(t, part, textArgs(part, train, valid, extra...)...) {
		t.Skip("the run finished before the interrupt")
	}
	if status, _, stderr := run(textArgs(part, train, valid, append(extra, "--resume")...)...); status != 0 {
		t.Fatalf("resume: status %d: %s", status, stderr)
	}
	a, _ := os.ReadFile(filepath.Join(whole, protocol.ModelFile))
	c, _ := os.ReadFile(filepath.Join(part, protocol.ModelFile))
	if len(a) == 0 || string(a) != string(c) {
		t.Error("the resumed run's model differs from the uninterrupted run's")
	}
	sw, sp := readJSONObject(t, filepath.Join(whole, protocol.SummaryFile)), readJSONObject(t, filepath.Join(part, protocol.SummaryFile))
	if sw["best_valid_cross_entropy"] != sp["best_valid_cross_entropy"] || sp["no_lower_bound"] != true {
		t.Errorf("summaries %v and %v", sw, sp)
	}
}

// wantRefusal runs the command args and checks that it fails with every
// string of want in its error output.
func wantRefusal(t *testing.T, args, want []string) {
	t.Helper()
	status, _, stderr := run(args...)
	if status == 0 {
		t.Fatal("no error")
	}
	for _, w := range want {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q does not say %q", stderr, w)
		}
	}
}

// inProcess runs a sweep's train commands in this process, with their
// output in their log files, as the sweep's subprocesses would.
func inProcess(args []string, logPath string, threads int, _ <-chan os.Signal) error {
	f, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer f.Close()
	if status := prog.Main(args, f, f); status != 0 {
		return fmt.Errorf("%v: status %d", args, status)
	}
	return nil
}

// TestSweepUserData runs sweeps on a user's text files and on a grammar
// file end to end: the runs get the files in place of --task (and
// --states/--symbols where given), sweep.json records them, select picks
// and tests the runs, a rerun with another file is refused, and bad
// input is refused before anything is written.
func TestSweepUserData(t *testing.T) {
	dir := t.TempDir()
	train := writeText(t, dir, "train.txt", "a b b a\nb a a b\na a\nb b\na b b a\n")
	valid := writeText(t, dir, "valid.txt", "a b\nb a a b\n")
	test := writeText(t, dir, "test.txt", "a a\nb b a\n")
	out := filepath.Join(dir, "text")
	base := []string{"--train", train, "--valid", valid, "--test", test, "--models", "lstm,rns", "--lrs", "0.01",
		"--restarts", "1", "--epochs", "1", "--states", "3", "--symbols", "2", "--out", out, "--jobs", "1"}
	if err := sweepCommand(base, &bytes.Buffer{}, &bytes.Buffer{}, inProcess); err != nil {
		t.Fatal(err)
	}
	man := readJSONObject(t, filepath.Join(out, sweepManifestFile))
	if src, _ := man["source"].(map[string]any); src["train"] != train || src["test"] != test || man["tasks"].([]any)[0] != "train.txt" {
		t.Errorf("sweep.json: %v", man)
	}
	for _, r := range man["runs"].([]any) {
		args := fmt.Sprint(r.(map[string]any)["args"])
		rns := strings.Contains(args, "--model rns")
		if strings.Contains(args, "--task") || !strings.Contains(args, "--train "+train+" --valid "+valid+" --test "+test) ||
			rns != strings.Contains(args, "--states 3 --symbols 2") {
			t.Errorf("run args %s", args)
		}
	}
	s, err := protocol.ReadSettings(filepath.Join(out, "train.txt", "rns", "lr0.01", "seed1"))
	if err != nil || s.Files == nil || s.Model.States != 3 || s.Model.Symbols != 2 {
		t.Fatalf("rns run settings %+v, %v", s, err)
	}
	if status, stdout, stderr := run("select", "--sweep", out); status != 0 || strings.Count(stdout, "train.txt") != 2 {
		t.Errorf("select: status %d: %s%s", status, stdout, stderr)
	}
	sel, err := protocol.ReadSelection(out)
	if err != nil || len(sel.Selected) != 2 || sel.Selected[0].TestCrossEntropy == nil || sel.Selected[1].TestCrossEntropy == nil {
		t.Fatalf("selection %+v, %v", sel, err)
	}
	// Tested on their test file, not on a sampled set: neither the
	// selection nor the reports record a sampled set's spec, nor a
	// grammar, which the user's strings do not have.
	if sel.Test != nil {
		t.Errorf("selected.json records a sampled test set %+v", *sel.Test)
	}
	for _, s := range sel.Selected {
		rep := readJSONObject(t, s.TestFile)
		if _, ok := rep["test"]; ok || rep["grammar"] != nil || rep["no_lower_bound"] != true {
			t.Errorf("%s records test %v, grammar %v", s.TestFile, rep["test"], rep["grammar"])
		}
	}
	other := writeText(t, dir, "valid2.txt", "a b\n")
	args := slices.Clone(base)
	args[slices.Index(args, valid)] = other
	if err := sweepCommand(args, &bytes.Buffer{}, &bytes.Buffer{}, inProcess); err == nil || !strings.Contains(err.Error(), "other settings") {
		t.Errorf("rerun with another --valid: %v", err)
	}

	g := writeText(t, dir, "mr.pcfg", "S -> \"0\" S \"0\" [0.4]\nS -> \"1\" S \"1\" [0.4]\nS -> \"#\" [0.2]\n")
	gout := filepath.Join(dir, "grammar")
	gargs := []string{"--grammar-file", g, "--models", "rns", "--lrs", "0.01", "--restarts", "1", "--epochs", "1",
		"--train-size", "6", "--valid-size", "4", "--out", gout, "--jobs", "1"}
	if err := sweepCommand(gargs, &bytes.Buffer{}, &bytes.Buffer{}, inProcess); err != nil {
		t.Fatal(err)
	}
	s, err = protocol.ReadSettings(filepath.Join(gout, "mr.pcfg", "rns", "lr0.01", "seed1"))
	if err != nil || s.GrammarFile == nil || s.Model.States != 2 || s.Model.Symbols != 3 {
		t.Fatalf("grammar-file run settings %+v, %v", s, err)
	}
	sum := readJSONObject(t, filepath.Join(gout, "mr.pcfg", "rns", "lr0.01", "seed1", protocol.SummaryFile))
	if sum["task"] != "mr.pcfg" || sum["valid_lower_bound"] == nil {
		t.Errorf("grammar-file run summary %v", sum)
	}

	unknown := writeText(t, dir, "unknown.txt", "a b\na c\n")
	for _, test := range []struct {
		name string
		args []string
		want []string
	}{
		{"task and files", []string{"--task", "dyck", "--train", train, "--valid", valid}, []string{"--task does not apply"}},
		{"task and grammar file", []string{"--task", "dyck", "--grammar-file", g}, []string{"give one of them"}},
		{"train size", []string{"--train", train, "--valid", valid, "--train-size", "5"}, []string{"--train-size does not apply"}},
		{"no valid", []string{"--train", train}, []string{"--valid is required"}},
		{"unknown symbol", []string{"--train", train, "--valid", unknown}, []string{unknown + ":2:"}},
		{"negative states", []string{"--train", train, "--valid", valid, "--states", "-1"}, []string{"--states -1"}},
	} {
		t.Run(test.name, func(t *testing.T) {
			o := filepath.Join(dir, "refused")
			err := sweepCommand(append(test.args, "--out", o, "--models", "rns", "--lrs", "0.01", "--restarts", "1"), &bytes.Buffer{}, &bytes.Buffer{}, inProcess)
			for _, w := range test.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("error %v, want one containing %q", err, w)
				}
			}
			if _, err := os.Stat(o); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s written: %v", o, err)
			}
		})
	}
}

// TestTrainRefusesOversizedBatches: a string too long for the memory
// rules (the RNS stack's unlimited dynamic program over 3,000 symbols
// would take about 10 GiB, over stacks.MaxTapeBytes) is refused before
// anything is written, naming the split, its length and the batch,
// rather than in the middle of the first epoch.
func TestTrainRefusesOversizedBatches(t *testing.T) {
	dir := t.TempDir()
	long := strings.TrimSpace(strings.Repeat("a b ", 1500))
	train := writeText(t, dir, "train.txt", "a b\nb a\n"+long+"\n")
	valid := writeText(t, dir, "valid.txt", "a b\n")
	out := filepath.Join(dir, "run")
	code, _, errs := run(textArgs(out, train, valid, "--states", "2", "--symbols", "3")...)
	if code == 0 || !strings.Contains(errs, "training strings of length 3000") || !strings.Contains(errs, "memory limit") {
		t.Errorf("status %d, stderr %q: want a refusal of the training strings of length 3000", code, errs)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Errorf("the refused run left %s (%v)", out, err)
	}
}
