package protocol

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// fakeRun writes a run directory of task under definition g with run.json
// and, when finished, a summary.json with the given best validation
// difference. With a model, it also saves a real (untrained) model drawn
// from seed.
func fakeRun(t *testing.T, dir, task string, g data.Grammar, kind string, lr float64, seed uint64, diff float64, finished, withModel bool) {
	t.Helper()
	tk, err := data.TaskFor(task, g)
	if err != nil {
		t.Fatal(err)
	}
	// "jm-hidden" is JM pushing its hidden state.
	hidden := kind == "jm-hidden"
	if hidden {
		kind = nsrnn.JM
	}
	cfg := nsrnn.Config{Kind: kind, InputVocab: len(tk.Terminals()), OutputVocab: len(tk.Vocabulary()), Hidden: 4}
	switch {
	case hidden:
		cfg.PushHiddenState = true
	case kind == nsrnn.Gref || kind == nsrnn.JM:
		cfg.StackEmbedding = 20
	case nsrnn.IsNondeterministic(kind):
		cfg.States, cfg.Symbols = 2, 3
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(filepath.Join(dir, RunFile), Settings{Task: task, Grammar: g, Model: cfg, LR: lr, Seed: seed}); err != nil {
		t.Fatal(err)
	}
	if withModel {
		m, err := nsrnn.New(cfg, seed)
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Save(filepath.Join(dir, ModelFile)); err != nil {
			t.Fatal(err)
		}
	}
	if finished {
		if err := WriteJSON(filepath.Join(dir, SummaryFile), Summary{Task: task, Model: cfg, Epochs: 3, BestEpoch: 2, BestValidCrossEntropyDiff: diff}); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSelectBest(t *testing.T) {
	root := t.TempDir()
	mr, p := data.MarkedReversal, data.GrammarPaper
	fakeRun(t, filepath.Join(root, mr, "lstm", "lr0.01", "seed1"), mr, p, "lstm", 0.01, 1, 0.30, true, false)
	fakeRun(t, filepath.Join(root, mr, "lstm", "lr0.01", "seed2"), mr, p, "lstm", 0.01, 2, 0.10, true, false)
	fakeRun(t, filepath.Join(root, mr, "lstm", "lr0.001", "seed1"), mr, p, "lstm", 0.001, 1, 0.05, false, false) // unfinished, better
	fakeRun(t, filepath.Join(root, mr, "jm-e2", "lr0.01", "seed1"), mr, p, "jm", 0.01, 1, 0.20, true, false)
	fakeRun(t, filepath.Join(root, mr, "jm-e20", "lr0.005", "seed3"), mr, p, "jm", 0.005, 3, 0.02, true, false)
	fakeRun(t, filepath.Join(root, data.Dyck, "rns", "lr0.01", "seed1"), data.Dyck, p, "rns", 0.01, 1, 0.40, true, false)
	fakeRun(t, filepath.Join(root, data.Dyck, "jm-hidden", "lr0.01", "seed1"), data.Dyck, p, "jm-hidden", 0.01, 1, 0.30, true, false)
	// The same task and model under the released definition is another
	// selection, listed after the paper's.
	fakeRun(t, filepath.Join(root, "released", data.Dyck, "rns", "lr0.01", "seed1"), data.Dyck, data.GrammarReleased, "rns", 0.01, 1, 0.50, true, false)
	sel, err := SelectBest(root)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Sweep != root || sel.Finished != 7 || sel.Unfinished != 1 {
		t.Errorf("sweep %s, finished %d, unfinished %d; want %s, 7 and 1", sel.Sweep, sel.Finished, sel.Unfinished, root)
	}
	want := []struct {
		task    string
		grammar data.Grammar
		model   string
		diff    float64
		seed    uint64
		emb, n  int
		hidden  bool
	}{
		{mr, p, "lstm", 0.10, 2, 0, 2, false}, {mr, p, "jm", 0.02, 3, 20, 2, false},
		{data.Dyck, p, "jm", 0.30, 1, 0, 1, true},
		{data.Dyck, p, "rns", 0.40, 1, 0, 1, false}, {data.Dyck, data.GrammarReleased, "rns", 0.50, 1, 0, 1, false},
	}
	if len(sel.Selected) != len(want) {
		t.Fatalf("%d selected, want %d: %+v", len(sel.Selected), len(want), sel.Selected)
	}
	for i, w := range want {
		s := sel.Selected[i]
		if s.Task != w.task || s.Grammar != w.grammar || s.Model != w.model || s.ValidDiff != w.diff || s.Seed != w.seed ||
			s.StackEmbedding != w.emb || s.PushHiddenState != w.hidden || s.Candidates != w.n || s.TestDiff != nil {
			t.Errorf("selected[%d] = %+v, want %+v", i, s, w)
		}
	}

	// FindRuns sees every run, finished or not, in lexical order.
	runs, err := FindRuns(root)
	if err != nil || len(runs) != 8 || runs[0].Dir != filepath.Join(root, data.Dyck, "jm-hidden", "lr0.01", "seed1") || runs[0].Summary == nil {
		t.Errorf("FindRuns: %d runs, %v", len(runs), err)
	}
	unfinished := 0
	for _, r := range runs {
		if r.Summary == nil {
			unfinished++
		}
	}
	if unfinished != 1 {
		t.Errorf("%d unfinished runs, want 1", unfinished)
	}

	// A corrupt run.json is an error naming it.
	bad := filepath.Join(root, "bad")
	os.MkdirAll(bad, 0o755)
	os.WriteFile(filepath.Join(bad, RunFile), []byte("{"), 0o644)
	if _, err := SelectBest(root); err == nil {
		t.Error("no error for a corrupt run.json")
	}
}

// TestEvaluateReleasesEachModel checks that Selection.Evaluate works on one
// model at a time: when a model is loaded, every model loaded before it
// holds no compiled graphs any more, and after the evaluation none does, so
// memory is bounded by one model however many are selected.
func TestEvaluateReleasesEachModel(t *testing.T) {
	root := t.TempDir()
	mr, p := data.MarkedReversal, data.GrammarPaper
	kinds := []string{nsrnn.LSTM, nsrnn.Gref, nsrnn.JM, nsrnn.RNS}
	for i, k := range kinds {
		fakeRun(t, filepath.Join(root, mr, k), mr, p, k, 0.01, uint64(i+1), 0.1, true, true)
	}
	fakeRun(t, filepath.Join(root, data.Dyck, "lstm"), data.Dyck, p, "lstm", 0.01, 1, 0.1, true, true)
	sel, err := SelectBest(root)
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Selected) != 5 {
		t.Fatalf("%d selected, want 5", len(sel.Selected))
	}

	var loaded []*nsrnn.Model
	defer func(load func(string) (*nsrnn.Model, error)) { loadModel = load }(loadModel)
	load := loadModel
	loadModel = func(path string) (*nsrnn.Model, error) {
		for i, m := range loaded {
			if n := m.Graphs(); n != 0 {
				t.Errorf("loading model %d while model %d still holds %d graphs", len(loaded), i, n)
			}
		}
		m, err := load(path)
		if err == nil {
			loaded = append(loaded, m)
		}
		return m, err
	}
	var started, done []string
	spec := TestSpec{MinLength: 5, MaxLength: 9, PerLength: 2, Seed: 7}
	reps, err := sel.Evaluate(spec, TestOptions{
		BatchSize: 2,
		Start: func(s *Selected, n int) {
			started = append(started, s.Dir)
			if n != 6 && s.Task == mr {
				t.Errorf("%s: %d test strings, want 6", s.Dir, n)
			}
			if len(loaded) != len(started) {
				t.Errorf("Start of %s after %d loads", s.Dir, len(loaded))
			}
		},
		Done: func(s *Selected, rep *Report) error {
			done = append(done, s.Dir)
			if cur := loaded[len(loaded)-1]; cur.Graphs() != 0 {
				t.Errorf("%s: %d graphs left when its evaluation is done", s.Dir, cur.Graphs())
			}
			if rep.Model != s.Dir || s.TestDiff == nil || *s.TestDiff != rep.Overall.Difference {
				t.Errorf("%s: report of %s, test diff %v", s.Dir, rep.Model, s.TestDiff)
			}
			return nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(loaded) != 5 || len(started) != 5 || len(done) != 5 || len(reps) != 5 {
		t.Fatalf("%d loaded, %d started, %d done, %d reports; want 5 each", len(loaded), len(started), len(done), len(reps))
	}
	for i, m := range loaded {
		if n := m.Graphs(); n != 0 {
			t.Errorf("model %d holds %d graphs after the evaluation", i, n)
		}
		if reps[i].Model != sel.Selected[i].Dir || started[i] != sel.Selected[i].Dir {
			t.Errorf("report %d is of %s, want %s", i, reps[i].Model, sel.Selected[i].Dir)
		}
	}
	if sel.Test == nil || *sel.Test != spec {
		t.Errorf("selection's test spec %+v", sel.Test)
	}
	// The models of a task share its test set: the same lower bound.
	for i := 1; i < 4; i++ {
		if reps[i].Overall.LowerBound != reps[0].Overall.LowerBound || reps[i].Overall.Strings != 6 {
			t.Errorf("report %d: %+v; report 0: %+v", i, reps[i].Overall, reps[0].Overall)
		}
	}

	// An error from Done stops the evaluation.
	stop := errors.New("stop")
	loaded = nil
	n := 0
	_, err = sel.Evaluate(spec, TestOptions{Done: func(*Selected, *Report) error { n++; return stop }})
	if !errors.Is(err, stop) || n != 1 || len(loaded) != 1 {
		t.Errorf("Done's error: %v after %d evaluations, %d loads", err, n, len(loaded))
	}
}

// TestEvaluateUnderEachGrammar checks that each selected model is tested on
// its own run's task definition.
func TestEvaluateUnderEachGrammar(t *testing.T) {
	root := t.TempDir()
	for _, g := range []data.Grammar{data.GrammarPaper, data.GrammarReleased} {
		fakeRun(t, filepath.Join(root, string(g)), data.Dyck, g, "lstm", 0.01, 1, 0.1, true, true)
	}
	sel, err := SelectBest(root)
	if err != nil {
		t.Fatal(err)
	}
	reps, err := sel.Evaluate(TestSpec{MinLength: 4, MaxLength: 4, PerLength: 50, Seed: 7}, TestOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Given length 4, released's test strings are the 4 concatenations,
	// ( ) ( ) and the like, each with probability 1/4: ln 4 nats over 5
	// symbols; paper's are mostly nested, with probability 39/160 each.
	paper, released := reps[0].Overall, reps[1].Overall
	if sel.Selected[0].Grammar != data.GrammarPaper || sel.Selected[1].Grammar != data.GrammarReleased {
		t.Fatalf("selection %+v", sel.Selected)
	}
	if want := math.Log(4) / 5; math.Abs(released.LowerBound-want) > 1e-12 || math.Abs(paper.LowerBound-want) < 1e-3 {
		t.Errorf("lower bounds: paper %v, released %v (want %v)", paper.LowerBound, released.LowerBound, want)
	}
	b, _ := json.Marshal(sel.Selected[1])
	if !strings.Contains(string(b), `"grammar":"released"`) {
		t.Errorf("selected run's JSON lacks its grammar: %s", b)
	}
}

// TestEvaluateSkipsCorruptModel checks that a model file that cannot be
// loaded is skipped and reported, and the other models are evaluated.
func TestEvaluateSkipsCorruptModel(t *testing.T) {
	root := t.TempDir()
	mr, p := data.MarkedReversal, data.GrammarPaper
	for i, k := range []string{nsrnn.LSTM, nsrnn.JM, nsrnn.RNS} {
		fakeRun(t, filepath.Join(root, mr, k), mr, p, k, 0.01, uint64(i+1), 0.1, true, true)
	}
	bad := filepath.Join(root, mr, nsrnn.JM)
	if err := os.WriteFile(filepath.Join(bad, ModelFile), []byte("not a model"), 0o666); err != nil {
		t.Fatal(err)
	}
	sel, err := SelectBest(root)
	if err != nil {
		t.Fatal(err)
	}
	var skipped []string
	done := 0
	reps, err := sel.Evaluate(TestSpec{MinLength: 5, MaxLength: 7, PerLength: 2, Seed: 7}, TestOptions{
		Done:    func(*Selected, *Report) error { done++; return nil },
		Skipped: func(s *Selected, err error) { skipped = append(skipped, s.Dir+": "+err.Error()) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 3 || done != 2 || len(skipped) != 1 || !strings.Contains(skipped[0], bad) {
		t.Fatalf("%d reports, %d done, skipped %q", len(reps), done, skipped)
	}
	for i, s := range sel.Selected {
		switch {
		case s.Dir == bad && (reps[i] != nil || s.TestDiff != nil || !strings.Contains(s.TestError, ModelFile)):
			t.Errorf("corrupt %s: report %v, test diff %v, error %q", s.Dir, reps[i], s.TestDiff, s.TestError)
		case s.Dir != bad && (reps[i] == nil || s.TestDiff == nil || s.TestError != ""):
			t.Errorf("%s: report %v, test diff %v, error %q", s.Dir, reps[i], s.TestDiff, s.TestError)
		}
	}
}

// TestEvaluateReusesEarlierReports checks TestOptions.Reuse: a selected run
// tested before on the same test set is not loaded again, wherever its
// sweep has been moved since, also from a report written before reports
// named their run (through the directory's selected.json); a run whose
// summary changed, a report of another test set, and an old report without
// the selection that names its run are evaluated anew.
func TestEvaluateReusesEarlierReports(t *testing.T) {
	mr, p := data.MarkedReversal, data.GrammarPaper
	first := filepath.Join(t.TempDir(), "sweep")
	kinds := []string{nsrnn.LSTM, nsrnn.JM, nsrnn.RNS}
	for i, k := range kinds {
		fakeRun(t, filepath.Join(first, mr, k, "lr0.01", "seed1"), mr, p, k, 0.01, uint64(i+1), 0.1*float64(i+1), true, true)
	}
	spec := TestSpec{MinLength: 5, MaxLength: 7, PerLength: 2, Seed: 7}

	var loads int
	defer func(load func(string) (*nsrnn.Model, error)) { loadModel = load }(loadModel)
	load := loadModel
	loadModel = func(path string) (*nsrnn.Model, error) { loads++; return load(path) }
	// selectAndTest selects the runs of sweep and tests them as cfl select
	// does: reports written into sweep, and the selection.
	selectAndTest := func(sweep string, spec TestSpec, reuse ...string) (*Selection, map[string]string) {
		t.Helper()
		sel, err := SelectBest(sweep)
		if err != nil {
			t.Fatal(err)
		}
		reused := map[string]string{}
		_, err = sel.Evaluate(spec, TestOptions{
			Reuse:  reuse,
			Reused: func(s *Selected, path string) { reused[s.Model] = path },
			Done: func(s *Selected, rep *Report) error {
				if rep.Model != s.Dir || rep.Run == nil || rep.Run.Dir != s.Dir || rep.Test == nil || *rep.Test != spec {
					t.Errorf("%s: report of %s, run %+v, test %+v", s.Dir, rep.Model, rep.Run, rep.Test)
				}
				path := TestResultPath(sweep, s.Task, s.Grammar, s.Model)
				os.MkdirAll(filepath.Dir(path), 0o755)
				s.TestFile = path
				return WriteJSON(path, rep)
			},
			Skipped: func(s *Selected, err error) { t.Errorf("%s skipped: %v", s.Dir, err) },
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := WriteJSON(filepath.Join(sweep, SelectedFile), sel); err != nil {
			t.Fatal(err)
		}
		return sel, reused
	}
	diffs := func(sel *Selection) map[string]float64 {
		m := map[string]float64{}
		for _, s := range sel.Selected {
			if s.TestDiff == nil {
				t.Fatalf("%s: no test difference", s.Dir)
			}
			m[s.Model] = *s.TestDiff
		}
		return m
	}
	sel0, reused := selectAndTest(first, spec, first)
	if loads != 3 || len(reused) != 0 {
		t.Fatalf("first selection: %d loads, reused %v; want 3 and none", loads, reused)
	}
	want := diffs(sel0)

	// The sweep moved, its models gone: every report is used again.
	moved := filepath.Join(t.TempDir(), "moved")
	if err := os.Rename(first, moved); err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		os.Remove(filepath.Join(moved, mr, k, "lr0.01", "seed1", ModelFile))
	}
	loads = 0
	sel1, reused := selectAndTest(moved, spec, moved)
	if loads != 0 || len(reused) != 3 || reused[nsrnn.JM] != TestResultPath(moved, mr, "", nsrnn.JM) {
		t.Errorf("moved sweep: %d loads, reused %v; want none and all three", loads, reused)
	}
	if got := diffs(sel1); !maps.Equal(got, want) {
		t.Errorf("moved sweep: test differences %v, want %v", got, want)
	}

	// A report written before reports named their run is matched
	// through the selection.
	stripRun := func(path string) {
		t.Helper()
		var raw map[string]json.RawMessage
		if err := readJSON(path, &raw); err != nil {
			t.Fatal(err)
		}
		delete(raw, "run")
		delete(raw, "test")
		if err := WriteJSON(path, raw); err != nil {
			t.Fatal(err)
		}
	}
	jmReport := TestResultPath(moved, mr, "", nsrnn.JM)
	stripRun(jmReport)
	loads = 0
	if _, reused := selectAndTest(moved, spec, moved); loads != 0 || reused[nsrnn.JM] == "" {
		t.Errorf("old report: %d loads, reused %v", loads, reused)
	}
	var rep Report
	if err := readJSON(jmReport, &rep); err != nil || rep.Run == nil || rep.Test == nil {
		t.Errorf("old report written again without its run: %+v, %v", rep, err)
	}

	// Evaluated anew (and so failing, the models being gone): an old
	// report whose directory has no selection; a run whose summary
	// changed; another test set.
	stripRun(jmReport)
	os.Remove(filepath.Join(moved, SelectedFile))
	rnsDir := filepath.Join(moved, mr, nsrnn.RNS, "lr0.01", "seed1")
	sum, err := ReadSummary(rnsDir)
	if err != nil {
		t.Fatal(err)
	}
	sum.BestValidCrossEntropyDiff /= 2
	if err := WriteJSON(filepath.Join(rnsDir, SummaryFile), sum); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		spec TestSpec
		want []string // the kinds evaluated anew
	}{
		{"changed", spec, []string{nsrnn.JM, nsrnn.RNS}},
		{"other test set", TestSpec{MinLength: 5, MaxLength: 7, PerLength: 3, Seed: 7}, kinds},
	} {
		sel, err := SelectBest(moved)
		if err != nil {
			t.Fatal(err)
		}
		var anew []string
		_, err = sel.Evaluate(c.spec, TestOptions{Reuse: []string{moved}, Skipped: func(s *Selected, err error) { anew = append(anew, s.Model) }})
		if err != nil || strings.Join(anew, " ") != strings.Join(c.want, " ") {
			t.Errorf("%s: evaluated anew %v, want %v (%v)", c.name, anew, c.want, err)
		}
	}

	// A report in a further directory stands for the same run found in
	// another sweep; without Reuse, nothing is reused.
	other := filepath.Join(t.TempDir(), "other")
	lstmRun := filepath.Join(mr, nsrnn.LSTM, "lr0.01", "seed1")
	if err := os.MkdirAll(filepath.Join(other, lstmRun), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{RunFile, SummaryFile} {
		b, err := os.ReadFile(filepath.Join(moved, lstmRun, f))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(other, lstmRun, f), b, 0o644)
	}
	for _, reuse := range [][]string{{other, moved}, nil} {
		sel, err := SelectBest(other)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		_, err = sel.Evaluate(spec, TestOptions{Reuse: reuse, Reused: func(s *Selected, path string) { got = append(got, path) },
			Skipped: func(*Selected, error) {}})
		wantPath := []string{TestResultPath(moved, mr, "", nsrnn.LSTM)}
		if reuse == nil {
			wantPath = nil
		}
		if err != nil || strings.Join(got, " ") != strings.Join(wantPath, " ") {
			t.Errorf("reuse %v: reused %v, want %v (%v)", reuse, got, wantPath, err)
		}
		if reuse != nil && (sel.Selected[0].TestDiff == nil || *sel.Selected[0].TestDiff != want[nsrnn.LSTM]) {
			t.Errorf("reused from a further directory: %+v", sel.Selected[0])
		}
	}
}

// A selection read from a sweep directory moved since it was made names
// its runs and reports under the new directory; paths that still exist,
// and those outside the old directory, are kept.
func TestReadSelectionMoved(t *testing.T) {
	root := t.TempDir()
	old, moved, other := filepath.Join(root, "old"), filepath.Join(root, "moved"), filepath.Join(root, "other")
	run := filepath.Join("dyck", "rns", "lr0.01", "seed1")
	for _, d := range []string{filepath.Join(moved, run), filepath.Join(moved, "test", "dyck"), filepath.Join(other, run)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(moved, "test", "dyck", "rns.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	sel := Selection{Sweep: old, Selected: []Selected{
		{Task: "dyck", Model: "rns", Dir: filepath.Join(old, run), TestFile: filepath.Join(old, "test", "dyck", "rns.json")},
		{Task: "dyck", Model: "lstm", Dir: filepath.Join(other, run)},                 // exists: kept
		{Task: "dyck", Model: "ns", Dir: filepath.Join(old, "dyck", "ns", "gone")},    // nowhere: kept
		{Task: "dyck", Model: "gref", Dir: filepath.Join(root, "elsewhere", "seed1")}, // not under old: kept
	}}
	if err := WriteJSON(filepath.Join(moved, SelectedFile), sel); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSelection(moved)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(moved, run), filepath.Join(other, run), sel.Selected[2].Dir, sel.Selected[3].Dir}
	for i, s := range got.Selected {
		if s.Dir != want[i] {
			t.Errorf("selected %d: dir %s, want %s", i, s.Dir, want[i])
		}
	}
	if f := got.Selected[0].TestFile; f != filepath.Join(moved, "test", "dyck", "rns.json") {
		t.Errorf("test file %s", f)
	}
	if got.Sweep != moved {
		t.Errorf("sweep %s, want %s", got.Sweep, moved)
	}
	// Read where it was made, nothing moves.
	if err := os.MkdirAll(old, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(filepath.Join(old, SelectedFile), sel); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadSelection(old); err != nil || got.Selected[0].Dir != sel.Selected[0].Dir || got.Sweep != old {
		t.Errorf("read in place: %+v, %v", got, err)
	}
}

// TestReadSelectionCopied: a selection read from a copy of its sweep (or
// from a working directory where its relative paths name another sweep's
// runs) names the runs and reports under the sweep it is read from, even
// while the originals exist; paths outside the sweep are kept.
func TestReadSelectionCopied(t *testing.T) {
	root := t.TempDir()
	orig, cp := filepath.Join(root, "orig"), filepath.Join(root, "copy")
	run := filepath.Join("dyck", "rns", "lr0.01", "seed1")
	report := filepath.Join(TestDir, "dyck", "rns.json")
	other := filepath.Join(root, "other", "run")
	for _, d := range []string{orig, cp} {
		for _, p := range []string{filepath.Join(d, run, RunFile), filepath.Join(d, report)} {
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}
	sel := Selection{Sweep: orig, Selected: []Selected{
		{Task: "dyck", Model: "rns", Dir: filepath.Join(orig, run), TestFile: filepath.Join(orig, report)},
		{Task: "dyck", Model: "lstm", Dir: other},
	}}
	if err := WriteJSON(filepath.Join(cp, SelectedFile), &sel); err != nil {
		t.Fatal(err)
	}
	got, err := ReadSelection(cp)
	if err != nil {
		t.Fatal(err)
	}
	if got.Sweep != cp || got.Selected[0].Dir != filepath.Join(cp, run) || got.Selected[0].TestFile != filepath.Join(cp, report) || got.Selected[1].Dir != other {
		t.Errorf("read from the copy: sweep %s, paths %s, %s, %s; want those under %s and %s kept",
			got.Sweep, got.Selected[0].Dir, got.Selected[0].TestFile, got.Selected[1].Dir, cp, other)
	}
}
