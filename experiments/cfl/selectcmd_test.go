package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

// fakeRun writes a run directory with run.json and, when finished, a
// summary.json with the given best validation difference. With a model,
// it also saves a real (untrained) model and a two-epoch log.
func fakeRun(t *testing.T, dir, task, kind string, lr float64, seed uint64, diff float64, finished, withModel bool) {
	t.Helper()
	fakeRunGrammar(t, dir, task, data.GrammarPaper, kind, lr, seed, diff, finished, withModel)
}

// fakeRunGrammar is fakeRun for a run of task under definition g.
func fakeRunGrammar(t *testing.T, dir, task string, g data.Grammar, kind string, lr float64, seed uint64, diff float64, finished, withModel bool) {
	t.Helper()
	mf := &cli.ModelFlags{Model: nsrnn.Config{Kind: kind, Hidden: 4, Layers: 1}}
	_, cfg, err := taskModel(task, nil, g, mf)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := protocol.WriteJSON(filepath.Join(dir, protocol.RunFile), protocol.Settings{Task: task, Grammar: g, Model: cfg, LR: lr, Seed: seed}); err != nil {
		t.Fatal(err)
	}
	if withModel {
		m, err := nsrnn.New(cfg, seed)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Save(filepath.Join(dir, protocol.ModelFile)); err != nil {
			t.Fatal(err)
		}
		var log []byte
		for e := 1; e <= 3; e++ {
			b, _ := json.Marshal(nsrnn.EpochRecord{Epoch: e, ElapsedSeconds: float64(e) * 1.5, ValidDifference: diff + 0.1/float64(e)})
			log = append(append(log, b...), '\n')
		}
		if err := os.WriteFile(filepath.Join(dir, protocol.LogFile), log, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if finished {
		if err := protocol.WriteJSON(filepath.Join(dir, protocol.SummaryFile), protocol.Summary{Task: task, Model: cfg, Epochs: 3, BestEpoch: 2, BestValidCrossEntropyDiff: diff}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSelectHugeTestSet: a test set beyond memory is refused before
// selected.json is written.
func TestSelectHugeTestSet(t *testing.T) {
	root := t.TempDir()
	mr := data.MarkedReversal
	fakeRun(t, filepath.Join(root, mr, "lstm", "lr0.01", "seed1"), mr, "lstm", 0.01, 1, 0.3, true, true)
	err := runSelect([]string{"--sweep", root, "--per-length", "1099511627776"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--per-length") {
		t.Errorf("error %v, want one naming --per-length", err)
	}
	if _, err := os.Stat(filepath.Join(root, protocol.SelectedFile)); err == nil {
		t.Error("selected.json was written")
	}
	// Sizes below 1 are refused, naming the flag and its value.
	for _, f := range []string{"--per-length", "--batch-size"} {
		err = runSelect([]string{"--sweep", root, f, "0"}, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), f+" 0 must be at least 1") {
			t.Errorf("%s 0: %v", f, err)
		}
	}
	// Flags that would be ignored are refused.
	err = runSelect([]string{"--sweep", root, "--no-test", "--per-length", "5"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--per-length is for the test evaluation") {
		t.Errorf("--no-test --per-length 5: %v", err)
	}
}

// TestModelFileOfAnotherRun: a run directory whose model file is another
// run's (another kind) is refused, not evaluated under the run's name.
func TestModelFileOfAnotherRun(t *testing.T) {
	root := t.TempDir()
	mr := data.MarkedReversal
	lstm, rns := filepath.Join(root, "lstm"), filepath.Join(root, "rns")
	fakeRun(t, lstm, mr, "lstm", 0.01, 1, 0.3, true, true)
	fakeRun(t, rns, mr, "rns", 0.01, 1, 0.3, true, true)
	b, err := os.ReadFile(filepath.Join(rns, protocol.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(lstm, protocol.ModelFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"eval", "--model", lstm, "--per-length", "1", "--lengths", "5:7"},
		{"generate", "--model", lstm, "--count", "2"},
		{"viterbi", "--model", lstm},
	} {
		status, stdout, stderr := run(args...)
		if status == 0 || stdout != "" || !strings.Contains(stderr, "not the run's") {
			t.Errorf("%v: status %d, stdout %q, stderr %q", args, status, stdout, stderr)
		}
	}
	// select tests the selected run's model, and refuses it the same way.
	var stderr bytes.Buffer
	err = runSelect([]string{"--sweep", root, "--test-lengths", "5:7", "--per-length", "1"}, &bytes.Buffer{}, &stderr)
	if err == nil || !strings.Contains(err.Error()+stderr.String(), "not the run's") {
		t.Errorf("select: %v; stderr %q", err, stderr.String())
	}
}

func TestSelectCommandWithTest(t *testing.T) {
	root := t.TempDir()
	mr := data.MarkedReversal
	fakeRun(t, filepath.Join(root, mr, "lstm", "lr0.01", "seed1"), mr, "lstm", 0.01, 1, 0.3, true, true)
	fakeRun(t, filepath.Join(root, mr, "lstm", "lr0.01", "seed2"), mr, "lstm", 0.01, 2, 0.2, true, true)
	fakeRun(t, filepath.Join(root, mr, "rns", "lr0.01", "seed1"), mr, "rns", 0.01, 1, 0.1, true, true)
	fakeRun(t, filepath.Join(root, mr, "rns", "lr0.01", "seed2"), mr, "rns", 0.01, 2, 0.1, false, false)
	var stdout, stderr bytes.Buffer
	err := runSelect([]string{"--sweep", root, "--test-lengths", "5:9", "--per-length", "2"}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"lstm", "rns", "1 unfinished", "test diff"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr.String(), "ignoring 1 unfinished") {
		t.Errorf("stderr does not mention the unfinished run:\n%s", stderr.String())
	}
	var sel protocol.Selection
	b, err := os.ReadFile(filepath.Join(root, protocol.SelectedFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sel); err != nil {
		t.Fatal(err)
	}
	if len(sel.Selected) != 2 || sel.Selected[0].Seed != 2 || sel.Selected[0].TestDiff == nil {
		t.Fatalf("selected.json: %+v", sel.Selected)
	}
	for _, m := range []string{"lstm", "rns"} {
		var rep protocol.Report
		b, err := os.ReadFile(protocol.TestResultPath(root, mr, "", m))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
		// Marked reversal has odd lengths only: 5, 7, 9.
		if len(rep.ByLength) != 3 || rep.Overall.Strings != 6 {
			t.Errorf("%s: %d lengths, %d strings; want 3 and 6", m, len(rep.ByLength), rep.Overall.Strings)
		}
	}

	// plot on the same sweep, plus fake actions.
	adir := filepath.Join(root, "actions")
	writeFakeActions(t, adir, []string{"ns+s", "rns"}, 4)
	figs := t.TempDir()
	stdout.Reset()
	if err := runPlot([]string{"--sweep", root, "--out", figs}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{fig1Name(mr), fig2Name(mr), fig3Name} {
		for _, ext := range []string{".png", ".svg"} {
			fi, err := os.Stat(filepath.Join(figs, name+ext))
			if err != nil {
				t.Error(err)
			} else if fi.Size() < 1000 {
				t.Errorf("%s%s: only %d bytes", name, ext, fi.Size())
			}
		}
	}

	// Selecting again uses the reports of the same runs on the same test
	// set, even without the models; --retest, or another test set,
	// evaluates them again (and fails here without the models).
	for _, dir := range []string{"lstm/lr0.01/seed2", "rns/lr0.01/seed1"} {
		if err := os.Remove(filepath.Join(root, mr, dir, protocol.ModelFile)); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		args  []string
		reuse bool
	}{
		{nil, true},
		{[]string{"--retest"}, false},
		{[]string{"--seed", "8"}, false},
	} {
		stderr.Reset()
		err := runSelect(append([]string{"--sweep", root, "--test-lengths", "5:9", "--per-length", "2"}, c.args...), &stdout, &stderr)
		if reused := strings.Count(stderr.String(), "was tested on this test set before"); c.reuse && (err != nil || reused != 2) ||
			!c.reuse && (err == nil || reused != 0) {
			t.Errorf("select %v: %d reports used again, error %v\n%s", c.args, reused, err, stderr.String())
		}
	}
}

func TestSelectErrors(t *testing.T) {
	if err := runSelect(nil, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--sweep") {
		t.Errorf("error %v, want one naming --sweep", err)
	}
	if err := runSelect([]string{"--sweep", t.TempDir()}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "no finished runs") {
		t.Errorf("error %v, want no finished runs", err)
	}
}

// TestSelectSkipsCorruptModel checks that a selected run whose model file
// is corrupt is skipped and reported, the others are tested, and
// selected.json is written all the same.
func TestSelectSkipsCorruptModel(t *testing.T) {
	root := t.TempDir()
	mr := data.MarkedReversal
	bad := filepath.Join(root, mr, "gref", "lr0.01", "seed1")
	fakeRun(t, filepath.Join(root, mr, "lstm", "lr0.01", "seed1"), mr, "lstm", 0.01, 1, 0.3, true, true)
	fakeRun(t, bad, mr, "gref", 0.01, 1, 0.2, true, true)
	fakeRun(t, filepath.Join(root, mr, "rns", "lr0.01", "seed1"), mr, "rns", 0.01, 1, 0.1, true, true)
	if err := os.WriteFile(filepath.Join(bad, protocol.ModelFile), []byte("truncated"), 0o666); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := runSelect([]string{"--sweep", root, "--test-lengths", "5:9", "--per-length", "2"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "1 of 3") || !strings.Contains(err.Error(), bad) {
		t.Errorf("error %v, want one naming the skipped run", err)
	}
	if !strings.Contains(stderr.String(), "skipping the test of "+bad) {
		t.Errorf("stderr does not report the skipped run:\n%s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "failed") {
		t.Errorf("the table does not show the failed test:\n%s", stdout.String())
	}
	sel, err := protocol.ReadSelection(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Selected) != 3 {
		t.Fatalf("%d selected", len(sel.Selected))
	}
	for _, s := range sel.Selected {
		if tested := s.TestDiff != nil; tested == (s.Dir == bad) || (s.TestError != "") != (s.Dir == bad) {
			t.Errorf("%s: test diff %v, error %q", s.Dir, s.TestDiff, s.TestError)
		}
		if _, err := os.Stat(protocol.TestResultPath(root, mr, s.Grammar, s.Model)); (err == nil) == (s.Dir == bad) {
			t.Errorf("%s: test report: %v", s.Dir, err)
		}
	}
}

// TestSelectAlso checks that --also adds the runs of further directories
// to the candidates, records them, writes the selection into --sweep, and
// refuses a directory whose runs are already candidates.
func TestSelectAlso(t *testing.T) {
	root, more := t.TempDir(), t.TempDir()
	mr := data.MarkedReversal
	fakeRun(t, filepath.Join(root, mr, "rns", "lr0.005", "seed1"), mr, "rns", 0.005, 1, 0.3, true, false)
	fakeRun(t, filepath.Join(root, mr, "lstm", "lr0.005", "seed1"), mr, "lstm", 0.005, 1, 0.2, true, false)
	better := filepath.Join(more, mr, "rns", "lr0.01", "seed1")
	fakeRun(t, better, mr, "rns", 0.01, 1, 0.1, true, false)
	fakeRun(t, filepath.Join(more, mr, "lstm", "lr0.01", "seed1"), mr, "lstm", 0.01, 1, 0.25, true, false)
	var stdout, stderr bytes.Buffer
	if err := runSelect([]string{"--sweep", root, "--also", more, "--no-test"}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	sel, err := protocol.ReadSelection(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Also) != 1 || sel.Also[0] != more || sel.Finished != 4 {
		t.Errorf("also %q, %d finished runs; want [%s] and 4", sel.Also, sel.Finished, more)
	}
	want := map[string]string{"rns": better, "lstm": filepath.Join(root, mr, "lstm", "lr0.005", "seed1")}
	if len(sel.Selected) != 2 {
		t.Fatalf("%d selected", len(sel.Selected))
	}
	for _, s := range sel.Selected {
		if s.Dir != want[s.Model] || s.Candidates != 2 {
			t.Errorf("%s: selected %s of %d candidates; want %s of 2", s.Model, s.Dir, s.Candidates, want[s.Model])
		}
	}
	if _, err := os.Stat(filepath.Join(more, protocol.SelectedFile)); err == nil {
		t.Errorf("selection written into the --also directory")
	}
	for _, args := range [][]string{
		{"--sweep", root, "--also", root},
		{"--sweep", root, "--also", more, "--also", more},
		{"--sweep", root, "--also", filepath.Join(root, mr)},
		{"--sweep", root, "--also", more, "--also", filepath.Join(more, mr, "..", mr, "rns")},
	} {
		err := runSelect(append(args, "--no-test"), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "--also") || !strings.Contains(err.Error(), "already") {
			t.Errorf("%q: error %v, want one naming --also and the run found twice", args, err)
		}
	}
	if err := runSelect([]string{"--sweep", root, "--also", filepath.Join(more, "none")}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--also") {
		t.Errorf("missing --also directory: error %v", err)
	}
	// The same directory, written relative to the working directory.
	t.Chdir(more)
	err = runSelect([]string{"--sweep", root, "--also", more, "--also", ".", "--no-test"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "already") {
		t.Errorf("--also %s --also .: error %v, want the runs found twice", more, err)
	}
}

// TestSelectionTableStack: the table's stack column names each kind of
// stack: its vector size, "hidden" for a JM pushing its hidden state, |Q|
// and |Γ| for the nondeterministic stacks, "-" for none.
func TestSelectionTableStack(t *testing.T) {
	sel := &protocol.Selection{Selected: []protocol.Selected{
		{Task: data.Dyck, Model: nsrnn.LSTM},
		{Task: data.Dyck, Model: nsrnn.Gref, StackEmbedding: 20},
		{Task: data.Dyck, Model: nsrnn.JM, PushHiddenState: true},
		{Task: data.Dyck, Model: nsrnn.RNS, States: 3, Symbols: 3},
	}}
	var b bytes.Buffer
	if err := writeSelectionTable(&b, sel); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) < 5 {
		t.Fatalf("table:\n%s", b.String())
	}
	for i, want := range []string{"-", "e=20", "hidden", "Q=3,G=3"} {
		if f := strings.Fields(lines[i+1]); len(f) < 4 || f[3] != want {
			t.Errorf("row %d: %q, want the stack column %q", i+1, lines[i+1], want)
		}
	}
}

// TestSelectTwoDataSets: runs named alike (strings files of the same base
// name) but trained on different data are refused together, since their
// test reports and figures would share one file; runs on the same data
// are selected as before.
func TestSelectTwoDataSets(t *testing.T) {
	root, more := t.TempDir(), t.TempDir()
	mr := data.MarkedReversal
	withFiles := func(dir, train string) {
		t.Helper()
		s, err := protocol.ReadSettings(dir)
		if err != nil {
			t.Fatal(err)
		}
		s.Files = &protocol.TextFiles{
			Train: protocol.FileDigest{Path: "/a/train.txt", SHA256: train},
			Valid: protocol.FileDigest{Path: "/a/valid.txt", SHA256: "v"},
		}
		if err := protocol.WriteJSON(filepath.Join(dir, protocol.RunFile), s); err != nil {
			t.Fatal(err)
		}
	}
	a := filepath.Join(root, mr, "rns", "lr0.005", "seed1")
	fakeRun(t, a, mr, "rns", 0.005, 1, 0.3, true, false)
	withFiles(a, "one")
	b := filepath.Join(more, mr, "rns", "lr0.01", "seed1")
	fakeRun(t, b, mr, "rns", 0.01, 1, 0.1, true, false)
	withFiles(b, "two")
	c := filepath.Join(more, mr, "lstm", "lr0.01", "seed1")
	fakeRun(t, c, mr, "lstm", 0.01, 1, 0.1, true, false)
	withFiles(c, "one")
	err := runSelect([]string{"--sweep", root, "--also", more, "--no-test"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "two different data sets") {
		t.Fatalf("runs on two data sets: error %v, want a refusal", err)
	}
	if _, err := os.Stat(filepath.Join(root, protocol.SelectedFile)); err == nil {
		t.Errorf("selection written despite the refusal")
	}
	withFiles(b, "one")
	if err := runSelect([]string{"--sweep", root, "--also", more, "--no-test"}, &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatalf("runs on the same data: %v", err)
	}
}

// A report of a released-grammar selection written where reports were
// kept before they were kept per grammar (test/<task>/<model>.json) is
// reused and moved to its place, not copied beside it.
func TestSelectMovesOldReport(t *testing.T) {
	root := t.TempDir()
	mr := "marked-reversal"
	fakeRunGrammar(t, filepath.Join(root, mr, "rns", "lr0.01", "seed1"), mr, data.GrammarReleased, "rns", 0.01, 1, 0.1, true, true)
	args := []string{"--sweep", root, "--grammar", "released", "--test-lengths", "5:9", "--per-length", "2"}
	var stdout, stderr bytes.Buffer
	if err := runSelect(args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	now, old := protocol.TestResultPath(root, mr, data.GrammarReleased, "rns"), protocol.TestResultPath(root, mr, "", "rns")
	want, err := os.ReadFile(now)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(now, old); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	if err := runSelect(args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "was tested on this test set before") {
		t.Errorf("the old report was not reused:\n%s", stderr.String())
	}
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the old report is still there: %v", err)
	}
	if got, err := os.ReadFile(now); err != nil || !bytes.Equal(got, want) {
		t.Errorf("the report in its place: %v\n%s\nwant\n%s", err, got, want)
	}
	sel, err := protocol.ReadSelection(root)
	if err != nil || len(sel.Selected) != 1 || sel.Selected[0].TestFile != now {
		t.Errorf("selection %+v, %v", sel, err)
	}
}
