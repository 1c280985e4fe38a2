package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

// singlePair reports whether a Dyck string (symbols separated by spaces)
// is one top-level bracket pair: its depth returns to 0 only at its end.
func singlePair(line string) bool {
	syms := strings.Fields(line)
	depth := 0
	for i, s := range syms {
		if s == "(" || s == "[" {
			depth++
		} else {
			depth--
		}
		if depth == 0 {
			return i == len(syms)-1
		}
	}
	return false
}

// TestSampleGrammar checks that --grammar released drops the derivations
// S → T at the root of Dyck: never a single top-level pair, which the
// paper's grammar samples often.
func TestSampleGrammar(t *testing.T) {
	count := func(args ...string) (pairs, lines int) {
		t.Helper()
		status, out, stderr := run(append([]string{"sample", "--task", "dyck", "--count", "300", "--lengths", "2:20", "--seed", "5"}, args...)...)
		if status != 0 {
			t.Fatalf("%v: status %d: %s", args, status, stderr)
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			lines++
			if singlePair(l) {
				pairs++
			}
		}
		return pairs, lines
	}
	paper, n := count()
	if n != 300 || paper < 30 {
		t.Errorf("paper: %d single pairs in %d strings, want many", paper, n)
	}
	if explicit, _ := count("--grammar", "paper"); explicit != paper {
		t.Errorf("--grammar paper: %d single pairs, default %d", explicit, paper)
	}
	if released, n := count("--grammar", "released"); n != 300 || released != 0 {
		t.Errorf("released: %d single pairs in %d strings, want 0", released, n)
	}
}

// TestEntropyGrammar checks that the lower bound of the same Dyck strings
// depends on the definition: given length 4, ( ) ( ) has probability 1/4
// under released and 1/160 under paper.
func TestEntropyGrammar(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dyck.txt")
	if err := os.WriteFile(path, []byte("( ) ( )\n[ ] ( )\n( ) [ ]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bound := func(args ...string) float64 {
		t.Helper()
		status, out, stderr := run(append([]string{"entropy", "--task", "dyck", "--lengths", "4:4", "--in", path, "--json"}, args...)...)
		if status != 0 {
			t.Fatalf("%v: status %d: %s", args, status, stderr)
		}
		var lb data.LowerBound
		if err := json.Unmarshal([]byte(out), &lb); err != nil {
			t.Fatal(err)
		}
		return lb.Entropy
	}
	paper, released := bound(), bound("--grammar", "released")
	if want := math.Log(160) / 5; math.Abs(paper-want) > 1e-9 {
		t.Errorf("paper: lower bound %v, want ln(160)/5 = %v", paper, want)
	}
	if want := math.Log(4) / 5; math.Abs(released-want) > 1e-9 {
		t.Errorf("released: lower bound %v, want ln(4)/5 = %v", released, want)
	}
	// Marked reversal has no ε or unary rules: the same under both.
	mr := filepath.Join(t.TempDir(), "mr.txt")
	os.WriteFile(mr, []byte("0 1 # 1 0\n1 # 1\n"), 0o644)
	var outs []string
	for _, g := range data.GrammarNames() {
		_, out, _ := run("entropy", "--task", "marked-reversal", "--lengths", "3:5", "--in", mr, "--grammar", g)
		outs = append(outs, out)
	}
	if outs[0] == "" || outs[0] != outs[1] {
		t.Errorf("marked reversal: %q under paper, %q under released", outs[0], outs[1])
	}
}

// TestUnknownGrammar checks that every command that takes a task refuses
// an unknown --grammar with an error naming the flag and the valid names.
func TestUnknownGrammar(t *testing.T) {
	dir := t.TempDir()
	for _, args := range [][]string{
		{"sample", "--task", "dyck", "--count", "1", "--lengths", "2:4"},
		{"entropy", "--task", "dyck", "--lengths", "2:4"},
		{"params", "--task", "dyck", "--model", "lstm"},
		{"train", "--task", "dyck", "--model", "lstm", "--lr", "0.01", "--out", filepath.Join(dir, "train")},
		{"eval", "--task", "dyck", "--model", dir},
		{"sweep", "--task", "dyck", "--out", filepath.Join(dir, "sweep"), "--dry-run"},
		{"actions", "--out", filepath.Join(dir, "actions")},
		{"select", "--sweep", dir},
	} {
		status, stdout, stderr := run(append(args, "--grammar", "authors")...)
		if status == 0 || stdout != "" {
			t.Errorf("%s: status %d, stdout %q", args[0], status, stdout)
		}
		for _, want := range []string{"--grammar", `"authors"`, "paper", "released"} {
			if !strings.Contains(stderr, want) {
				t.Errorf("%s: stderr %q does not contain %s", args[0], stderr, want)
			}
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused commands wrote %v", entries)
	}
}

// TestTrainGrammar checks that train records the definition in run.json,
// "paper" by default, and that a run cannot be resumed under the other
// one.
func TestTrainGrammar(t *testing.T) {
	dir := t.TempDir()
	args := func(out string, extra ...string) []string {
		return append([]string{"train", "--task", "dyck", "--model", "lstm", "--hidden", "4", "--lr", "0.01",
			"--train-size", "10", "--valid-size", "5", "--batch-size", "5", "--lengths", "4:8", "--epochs", "1", "--quiet", "--out", out}, extra...)
	}
	for _, g := range []string{"", "paper", "released"} {
		out := filepath.Join(dir, "g"+g)
		extra := []string{}
		if g != "" {
			extra = []string{"--grammar", g}
		}
		status, _, stderr := run(args(out, extra...)...)
		if status != 0 {
			t.Fatalf("--grammar %q: status %d: %s", g, status, stderr)
		}
		want := g
		if want == "" {
			want = "paper"
		}
		rs := readJSONObject(t, filepath.Join(out, protocol.RunFile))
		if rs["grammar"] != want {
			t.Errorf("--grammar %q: run.json grammar %v, want %s", g, rs["grammar"], want)
		}
		if g == "released" && !strings.Contains(stderr, "dyck (released grammar)") {
			t.Errorf("released: stderr does not name the grammar:\n%s", stderr)
		}
	}
	s, err := protocol.ReadSettings(filepath.Join(dir, "greleased"))
	if err != nil || s.Grammar != data.GrammarReleased {
		t.Fatalf("settings %+v, %v", s, err)
	}

	// Resuming under the other definition is refused, naming it.
	before := dirContents(t, filepath.Join(dir, "greleased"))
	status, _, stderr := run(args(filepath.Join(dir, "greleased"), "--resume")...)
	if status == 0 || !strings.Contains(stderr, `grammar: "released" → "paper"`) {
		t.Errorf("resume under paper: status %d, stderr %q", status, stderr)
	}
	if after := dirContents(t, filepath.Join(dir, "greleased")); len(after) != len(before) {
		t.Error("the refused resume changed the run")
	}
	if status, _, stderr := run(args(filepath.Join(dir, "greleased"), "--resume", "--grammar", "released")...); status != 0 {
		t.Errorf("resume under released: status %d: %s", status, stderr)
	}

	// A run.json from before the flag (no "grammar") resumes as paper.
	old := filepath.Join(dir, "gpaper")
	rs := readJSONObject(t, filepath.Join(old, protocol.RunFile))
	delete(rs, "grammar")
	b, _ := json.MarshalIndent(rs, "", "  ")
	os.WriteFile(filepath.Join(old, protocol.RunFile), b, 0o644)
	if status, _, stderr := run(args(old, "--resume")...); status != 0 {
		t.Errorf("resuming a run.json without grammar: status %d: %s", status, stderr)
	}
}

// fakeDyckRun writes a run directory of an untrained Dyck LSTM with a
// run.json of definition g (none when g is empty).
func fakeDyckRun(t *testing.T, dir string, g data.Grammar) {
	t.Helper()
	cfg := nsrnn.Config{Kind: nsrnn.LSTM, InputVocab: 4, OutputVocab: 5, Hidden: 4}
	m, err := nsrnn.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(dir, 0o755)
	if err := m.Save(filepath.Join(dir, protocol.ModelFile)); err != nil {
		t.Fatal(err)
	}
	if g != "" {
		if err := protocol.WriteJSON(filepath.Join(dir, protocol.RunFile), protocol.Settings{Task: data.Dyck, Grammar: g, Model: cfg}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestEvalGrammar checks that eval uses the run's definition by default
// and refuses another unless forced.
func TestEvalGrammar(t *testing.T) {
	root := t.TempDir()
	rel, none := filepath.Join(root, "released"), filepath.Join(root, "none")
	fakeDyckRun(t, rel, data.GrammarReleased)
	fakeDyckRun(t, none, "")
	base := []string{"--task", "dyck", "--lengths", "4:4", "--per-length", "20"}
	released, paper := math.Log(4)/5, 0.0

	// The run's definition, from its run.json.
	rep := evalJSON(t, append([]string{"--model", rel}, base...)...)
	if math.Abs(rep.Overall.LowerBound-released) > 1e-9 {
		t.Errorf("default: lower bound %v, want released's %v", rep.Overall.LowerBound, released)
	}
	rep = evalJSON(t, append([]string{"--model", rel, "--grammar", "released"}, base...)...)
	if math.Abs(rep.Overall.LowerBound-released) > 1e-9 {
		t.Errorf("--grammar released: lower bound %v", rep.Overall.LowerBound)
	}
	// Another one is refused, naming both and --force.
	status, stdout, stderr := run(append([]string{"eval", "--model", rel, "--grammar", "paper"}, base...)...)
	if status == 0 || stdout != "" {
		t.Errorf("--grammar paper on a released run: status %d, stdout %q", status, stdout)
	}
	for _, w := range []string{"--grammar paper", "released", "--force", protocol.RunFile} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr %q lacks %q", stderr, w)
		}
	}
	// … unless forced.
	rep = evalJSON(t, append([]string{"--model", rel, "--grammar", "paper", "--force"}, base...)...)
	if paper = rep.Overall.LowerBound; math.Abs(paper-released) < 1e-3 {
		t.Errorf("--force --grammar paper: lower bound %v, the released one", paper)
	}
	// Without run.json: the flag, paper by default.
	if rep = evalJSON(t, append([]string{"--model", none}, base...)...); rep.Overall.LowerBound != paper {
		t.Errorf("no run.json: lower bound %v, want paper's %v", rep.Overall.LowerBound, paper)
	}
	if rep = evalJSON(t, append([]string{"--model", none, "--grammar", "released"}, base...)...); math.Abs(rep.Overall.LowerBound-released) > 1e-9 {
		t.Errorf("no run.json, --grammar released: lower bound %v", rep.Overall.LowerBound)
	}
}

// TestSweepGrammar checks that a sweep passes a non-default --grammar to
// its runs, and nothing by default (the same commands as before).
func TestSweepGrammar(t *testing.T) {
	for _, g := range []string{"", "paper", "released"} {
		args := []string{"--task", "dyck", "--models", "lstm", "--lrs", "0.01", "--restarts", "1", "--out", t.TempDir(), "--jobs", "1"}
		if g != "" {
			args = append(args, "--grammar", g)
		}
		var f fakeRunner
		if err := sweepCommand(args, &bytes.Buffer{}, &bytes.Buffer{}, f.run); err != nil {
			t.Fatal(err)
		}
		if len(f.args) != 1 {
			t.Fatalf("%d runs", len(f.args))
		}
		i := slices.Index(f.args[0], "--grammar")
		switch {
		case g == "released" && (i < 0 || f.args[0][i+1] != "released"):
			t.Errorf("--grammar released: run args %v", f.args[0])
		case g != "released" && i >= 0:
			t.Errorf("--grammar %q: run args %v", g, f.args[0])
		}
		man := readJSONObject(t, filepath.Join(args[9], sweepManifestFile))
		r := man["runs"].([]any)[0].(map[string]any)
		if got, _ := r["grammar"].(string); (g == "released") != (got == "released") {
			t.Errorf("--grammar %q: manifest run %v", g, r)
		}
	}
}

// TestSelectGrammar checks that select tests each run under its own
// definition, refuses a task under two definitions, and selects one with
// --grammar.
func TestSelectGrammar(t *testing.T) {
	root := t.TempDir()
	fakeRunGrammar(t, filepath.Join(root, "dyck", "lstm", "a"), data.Dyck, data.GrammarReleased, "lstm", 0.01, 1, 0.2, true, true)
	fakeRunGrammar(t, filepath.Join(root, "dyck", "rns", "a"), data.Dyck, data.GrammarReleased, "rns", 0.01, 1, 0.1, true, true)
	var stdout, stderr bytes.Buffer
	if err := runSelect([]string{"--sweep", root, "--test-lengths", "4:4", "--per-length", "10", "--json"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var sel protocol.Selection
	if err := json.Unmarshal(stdout.Bytes(), &sel); err != nil {
		t.Fatal(err)
	}
	if len(sel.Selected) != 2 || sel.Selected[0].Grammar != data.GrammarReleased {
		t.Fatalf("selection %+v", sel.Selected)
	}
	var rep protocol.Report
	b, _ := os.ReadFile(protocol.TestResultPath(root, data.Dyck, data.GrammarReleased, "rns"))
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if want := math.Log(4) / 5; math.Abs(rep.Overall.LowerBound-want) > 1e-9 {
		t.Errorf("test lower bound %v, want released's %v", rep.Overall.LowerBound, want)
	}
	if rep.Grammar != data.GrammarReleased {
		t.Errorf("the test report says grammar %q, want released", rep.Grammar)
	}
	stdout.Reset()
	if err := runSelect([]string{"--sweep", root, "--no-test"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "dyck (released grammar)") {
		t.Errorf("table does not name the grammar:\n%s", stdout.String())
	}

	// A paper run of the same task: refused, then chosen by --grammar.
	fakeRunGrammar(t, filepath.Join(root, "paper", "dyck", "lstm"), data.Dyck, data.GrammarPaper, "lstm", 0.01, 1, 0.3, true, true)
	err := runSelect([]string{"--sweep", root, "--no-test"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "--grammar") || !strings.Contains(err.Error(), "two grammars") {
		t.Errorf("mixed grammars: error %v", err)
	}
	for _, g := range []string{"paper", "released"} {
		stdout.Reset()
		if err := runSelect([]string{"--sweep", root, "--no-test", "--json", "--grammar", g}, &stdout, &stderr); err != nil {
			t.Fatalf("--grammar %s: %v", g, err)
		}
		var sel protocol.Selection
		json.Unmarshal(stdout.Bytes(), &sel)
		want := map[string]int{"paper": 1, "released": 2}[g]
		if len(sel.Selected) != want || string(sel.Selected[0].Grammar) != g || sel.Finished != want {
			t.Errorf("--grammar %s: %+v", g, sel)
		}
	}
	// Tested under each grammar in turn, the two selections keep their
	// reports apart: the paper's LSTM does not replace the released one's.
	for _, g := range []string{"paper", "released"} {
		if err := runSelect([]string{"--sweep", root, "--grammar", g, "--test-lengths", "4:4", "--per-length", "10"}, &bytes.Buffer{}, &stderr); err != nil {
			t.Fatalf("--grammar %s: %v\n%s", g, err, stderr.String())
		}
	}
	for _, g := range []data.Grammar{data.GrammarPaper, data.GrammarReleased} {
		var rep protocol.Report
		b, err := os.ReadFile(protocol.TestResultPath(root, data.Dyck, g, "lstm"))
		if err != nil || json.Unmarshal(b, &rep) != nil || rep.Grammar != g {
			t.Errorf("%s: the LSTM's report: %v, grammar %q", g, err, rep.Grammar)
		}
	}
}

// TestParamsAndActionsGrammar checks that params accepts --grammar (the
// definition does not change the vocabulary) and actions records it.
func TestParamsAndActionsGrammar(t *testing.T) {
	_, paper, _ := run("params", "--task", "dyck", "--model", "rns")
	status, released, stderr := run("params", "--task", "dyck", "--model", "rns", "--grammar", "released")
	if status != 0 || paper == "" || released != paper {
		t.Errorf("params: %q under paper, %q under released (status %d, %s)", paper, released, status, stderr)
	}
	out := t.TempDir()
	args := []string{"--out", out, "--epochs", "1", "--train-size", "4", "--valid-size", "2", "--batch-size", "2",
		"--lengths", "4:8", "--length", "8", "--hidden", "4", "--models", "rns", "--task", "dyck", "--grammar", "released"}
	if err := runActions(args, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	s := readJSONObject(t, filepath.Join(out, "rns", actionsSettingsFile))
	if r, ok := s["run"].(map[string]any); !ok || r["grammar"] != "released" || r["task"] != "dyck" {
		t.Errorf("%s: %v", actionsSettingsFile, s)
	}
}

// TestActionsGrammarFile records actions on a grammar file: the shipped
// marked-reversal file gives the string and the action weights of --task
// marked-reversal, and settings.json records the file with its digest.
func TestActionsGrammarFile(t *testing.T) {
	shipped := filepath.Join("..", "..", "examples", "grammars", "marked-reversal.pcfg")
	base := []string{"--epochs", "2", "--train-size", "4", "--valid-size", "2", "--batch-size", "2",
		"--lengths", "5:9", "--length", "9", "--hidden", "4", "--models", "rns", "--quiet"}
	outF, outT := t.TempDir(), t.TempDir()
	if err := runActions(append(slices.Clone(base), "--out", outF, "--grammar-file", shipped), &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if err := runActions(append(slices.Clone(base), "--out", outT, "--task", "marked-reversal"), &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	recF, err := readActions(filepath.Join(outF, "rns", actionsFile))
	if err != nil {
		t.Fatal(err)
	}
	recT, err := readActions(filepath.Join(outT, "rns", actionsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(recF) != 2 || !reflect.DeepEqual(recF, recT) {
		t.Errorf("grammar file actions %v, task actions %v", recF, recT)
	}
	s := readJSONObject(t, filepath.Join(outF, "rns", actionsSettingsFile))
	r, _ := s["run"].(map[string]any)
	gf, _ := r["grammar_file"].(map[string]any)
	if r["task"] != "marked-reversal.pcfg" || len(fmt.Sprint(gf["sha256"])) != 64 {
		t.Errorf("%s: %v", actionsSettingsFile, s)
	}
	figs := filepath.Join(t.TempDir(), "figs")
	if status, _, stderr := run("plot", "--actions", outF, "--out", figs); status != 0 {
		t.Errorf("plot --actions: status %d: %s", status, stderr)
	}
	if m, _ := filepath.Glob(filepath.Join(figs, "*.png")); len(m) == 0 {
		t.Errorf("plot --actions wrote no figure in %s", figs)
	}
	err = runActions(append(slices.Clone(base), "--out", t.TempDir(), "--grammar-file", shipped, "--task", "dyck"), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "give one of them") {
		t.Errorf("--task and --grammar-file: %v", err)
	}
}

// A grammar file with a dead rule, and a nonterminal that derives no
// string, is used with a warning naming them; a clean one gets none.
func TestGrammarFileWarnings(t *testing.T) {
	dir := t.TempDir()
	dead := writeText(t, dir, "dead.pcfg", "S -> a S b [0.4]\nS -> [0.6]\nX -> c [1]\n")
	clean := writeText(t, dir, "clean.pcfg", "S -> a S b [0.4]\nS -> [0.6]\n")
	status, _, stderr := run("params", "--grammar-file", dead, "--model", "lstm")
	if status != 0 || !strings.Contains(stderr, "warning: --grammar-file "+dead+": nonterminals never reached from the start symbol S, whose rules are dead: X") ||
		!strings.Contains(stderr, "in no string: c") {
		t.Errorf("params on a grammar with a dead rule: status %d, stderr %q", status, stderr)
	}
	if status, _, stderr := run("params", "--grammar-file", clean, "--model", "lstm"); status != 0 || strings.Contains(stderr, "warning") {
		t.Errorf("params on a clean grammar: status %d, stderr %q", status, stderr)
	}
	// Under --grammar released the warnings are the transformed
	// grammar's, and say so: A is reached in the file only through the
	// start symbol's unary rule, which the transformation removes.
	cycle := writeText(t, dir, "cycle.pcfg", "S -> A [0.5]\nS -> a [0.5]\nA -> S [0.5]\nA -> b [0.5]\n")
	if status, _, stderr := run("params", "--grammar-file", cycle, "--model", "lstm"); status != 0 || strings.Contains(stderr, "warning") {
		t.Errorf("params on a grammar with a unary cycle: status %d, stderr %q", status, stderr)
	}
	status, _, stderr = run("params", "--grammar-file", cycle, "--grammar", "released", "--model", "lstm")
	if status != 0 || !strings.Contains(stderr, "warning: --grammar-file "+cycle+" (under --grammar released, after its ε- and unary-rule removal): nonterminals never reached from the start symbol S, whose rules are dead: A") {
		t.Errorf("params on a grammar with a unary cycle under --grammar released: status %d, stderr %q", status, stderr)
	}
}

// TestGrammarFileRunKeepsCopy: a run on a grammar file keeps a copy of it
// (grammar.pcfg), so that generate, viterbi and eval use the run after
// the file moved or changed; a run without the copy (made before there
// was one) names the file to restore.
func TestGrammarFileRunKeepsCopy(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile(filepath.Join("..", "..", "examples", "grammars", "dyck.pcfg"))
	if err != nil {
		t.Fatal(err)
	}
	gf := filepath.Join(dir, "my.pcfg")
	if err := os.WriteFile(gf, src, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	if status, _, stderr := run("train", "--grammar-file", gf, "--model", "rns", "--hidden", "4", "--lr", "0.01",
		"--train-size", "10", "--valid-size", "5", "--batch-size", "5", "--lengths", "4:8", "--epochs", "1", "--quiet", "--out", out); status != 0 {
		t.Fatalf("train: %s", stderr)
	}
	if c, err := os.ReadFile(filepath.Join(out, protocol.GrammarCopyFile)); err != nil || !bytes.Equal(c, src) {
		t.Fatalf("the run's copy of its grammar: %v (equal: %v)", err, bytes.Equal(c, src))
	}
	// A new run that fails before its first checkpoint leaves nothing,
	// the copy included.
	failed := filepath.Join(dir, "failed")
	if status, _, _ := run("train", "--grammar-file", gf, "--model", "rns", "--hidden", "4", "--lr", "1e308",
		"--train-size", "10", "--valid-size", "5", "--batch-size", "5", "--lengths", "4:8", "--epochs", "1", "--quiet", "--out", failed); status == 0 {
		t.Fatal("a run with --lr 1e308 did not fail")
	}
	if _, err := os.Stat(failed); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed run left %s behind: %v", failed, dirContents(t, failed))
	}
	strs := filepath.Join(dir, "strings.txt")
	if err := os.WriteFile(strs, []byte("( ) [ ]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	uses := [][]string{
		{"generate", "--model", out, "--count", "2"},
		{"viterbi", "--model", out, "--in", strs},
		{"eval", "--model", out, "--lengths", "4:4", "--per-length", "3"},
	}
	check := func(when string) {
		t.Helper()
		for _, u := range uses {
			if status, _, stderr := run(u...); status != 0 {
				t.Errorf("%s: %s: status %d: %s", when, u[0], status, stderr)
			}
		}
	}
	check("in place")
	moved := filepath.Join(dir, "moved.pcfg")
	if err := os.Rename(gf, moved); err != nil {
		t.Fatal(err)
	}
	check("moved")
	if err := os.WriteFile(gf, append(slices.Clone(src), "# a comment\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	check("changed")
	// Without the copy: the changed file is refused, and so is a missing
	// one, each naming what to restore.
	if err := os.Remove(filepath.Join(out, protocol.GrammarCopyFile)); err != nil {
		t.Fatal(err)
	}
	for _, when := range []string{"changed", "missing"} {
		if when == "missing" {
			os.Remove(gf)
		}
		for _, u := range uses {
			status, _, stderr := run(u...)
			if status == 0 || !strings.Contains(stderr, "restore") || !strings.Contains(stderr, "my.pcfg") {
				t.Errorf("%s, no copy: %s: status %d, stderr %q; want a refusal naming the file to restore", when, u[0], status, stderr)
			}
		}
	}
}
