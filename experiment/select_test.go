package experiment

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// fakeRun writes a run directory of task with run.json
// and, when finished, a summary.json with the given best validation
// difference. With a model, it also saves a real (untrained) model drawn
// from seed.
func fakeRun(t *testing.T, dir, task, kind string, lr float64, seed uint64, diff float64, finished, withModel bool) {
	t.Helper()
	tk, err := data.NewTask(task)
	if err != nil {
		t.Fatal(err)
	}
	cfg := nsrnn.Config{Kind: kind, InputVocab: len(tk.Terminals()), OutputVocab: len(tk.Vocabulary()), Hidden: 4}
	switch kind {
	case nsrnn.Gref, nsrnn.JM:
		cfg.StackEmbedding = 20
	case nsrnn.NS, nsrnn.NSS, nsrnn.NSU, nsrnn.RNS:
		cfg.States, cfg.Symbols = 2, 3
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(filepath.Join(dir, RunFile), Settings{Task: task, Model: cfg, LR: lr, Seed: seed}); err != nil {
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
	mr := data.MarkedReversal
	fakeRun(t, filepath.Join(root, mr, "lstm", "lr0.01", "seed1"), mr, "lstm", 0.01, 1, 0.30, true, false)
	fakeRun(t, filepath.Join(root, mr, "lstm", "lr0.01", "seed2"), mr, "lstm", 0.01, 2, 0.10, true, false)
	fakeRun(t, filepath.Join(root, mr, "lstm", "lr0.001", "seed1"), mr, "lstm", 0.001, 1, 0.05, false, false) // unfinished, better
	fakeRun(t, filepath.Join(root, mr, "jm-e2", "lr0.01", "seed1"), mr, "jm", 0.01, 1, 0.20, true, false)
	fakeRun(t, filepath.Join(root, mr, "jm-e20", "lr0.005", "seed3"), mr, "jm", 0.005, 3, 0.02, true, false)
	fakeRun(t, filepath.Join(root, data.Dyck, "rns", "lr0.01", "seed1"), data.Dyck, "rns", 0.01, 1, 0.40, true, false)
	sel, err := SelectBest(root)
	if err != nil {
		t.Fatal(err)
	}
	if sel.Sweep != root || sel.Finished != 5 || sel.Unfinished != 1 {
		t.Errorf("sweep %s, finished %d, unfinished %d; want %s, 5 and 1", sel.Sweep, sel.Finished, sel.Unfinished, root)
	}
	want := []struct {
		task, model string
		diff        float64
		seed        uint64
		emb, n      int
	}{{mr, "lstm", 0.10, 2, 0, 2}, {mr, "jm", 0.02, 3, 20, 2}, {data.Dyck, "rns", 0.40, 1, 0, 1}}
	if len(sel.Selected) != len(want) {
		t.Fatalf("%d selected, want %d: %+v", len(sel.Selected), len(want), sel.Selected)
	}
	for i, w := range want {
		s := sel.Selected[i]
		if s.Task != w.task || s.Model != w.model || s.ValidDiff != w.diff || s.Seed != w.seed ||
			s.StackEmbedding != w.emb || s.Candidates != w.n || s.TestDiff != nil {
			t.Errorf("selected[%d] = %+v, want %+v", i, s, w)
		}
	}

	// FindRuns sees every run, finished or not, in lexical order.
	runs, err := FindRuns(root)
	if err != nil || len(runs) != 6 || runs[0].Dir != filepath.Join(root, data.Dyck, "rns", "lr0.01", "seed1") || runs[0].Summary == nil {
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
