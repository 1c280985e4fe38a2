package protocol

import (
	"testing"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// TestEvaluateByLengthBoundsGraphs checks that evaluating by length keeps
// the graphs of one length at a time, not one per length (cfl select and
// eval peaked at 900 MB on a small model over lengths 40–100), gives the
// same result as with a graph built for every batch, and restores
// Model.MaxGraphs.
func TestEvaluateByLengthBoundsGraphs(t *testing.T) {
	task, _ := data.NewTask(data.MarkedReversal)
	strs, err := SampleTestSet(task, TestSpec{MinLength: 5, MaxLength: 29, PerLength: 3, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	for _, workers := range []int{0, 2} {
		m, err := nsrnn.New(tinySettings().Model, 1)
		if err != nil {
			t.Fatal(err)
		}
		m.Workers = workers
		m.MaxGraphs = 256 // a caller's bound, restored afterwards
		rep, err := EvaluateByLength(m, task, strs, 5, 29, 2)
		if err != nil {
			t.Fatal(err)
		}
		peak := m.Graphs()
		if len(rep.ByLength) != 13 {
			t.Fatalf("%d lengths", len(rep.ByLength))
		}
		if limit := 2 * max(workers, 1); peak > limit {
			t.Errorf("workers %d: %d graphs kept after 13 lengths, want at most %d", workers, peak, limit)
		}
		if m.MaxGraphs != 256 {
			t.Errorf("MaxGraphs %d after the evaluation, want 256 restored", m.MaxGraphs)
		}
		// The same numbers with a graph built for every batch.
		all, _ := nsrnn.New(tinySettings().Model, 1)
		all.Workers, all.MaxGraphs = workers, 1
		want, err := EvaluateByLength(all, task, strs, 5, 29, 2)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Overall != want.Overall {
			t.Errorf("workers %d: overall %+v, with a graph per batch %+v", workers, rep.Overall, want.Overall)
		}
	}
}
