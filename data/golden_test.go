package data

import (
	"encoding/json"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

var updateGolden = flag.Bool("update", false, "rewrite testdata/tasks-golden.json from the current code")

// goldenTask is what testdata/tasks-golden.json records of one PCFG task
// under one definition: batches drawn with a fixed seed, each string's
// log p(w | n), and the lower bound of the strings. The file was written
// by the code before the task table existed, so the test pins the five
// tasks' samples and probabilities across the move.
type goldenTask struct {
	Task       string    `json:"task"`
	Grammar    Grammar   `json:"grammar"`
	Batches    [][][]int `json:"batches"`
	LogProbs   []float64 `json:"log_probs_given_length"`
	LowerBound float64   `json:"lower_bound"`
	TestSet    [][]int   `json:"test_set"`
}

const goldenFile = "testdata/tasks-golden.json"

func TestTasksGolden(t *testing.T) {
	var got []goldenTask
	for _, name := range TaskNames() {
		for _, g := range []Grammar{GrammarPaper, GrammarReleased} {
			task := mustTaskFor(t, name, g)
			rng := rand.New(rand.NewPCG(11, 12))
			bs, err := SampleBatches(task.Grammar(), 24, 5, 6, 14, rng)
			if err != nil {
				t.Fatal(err)
			}
			ws := Flatten(bs)
			lb, err := ComputeLowerBound(task.Grammar(), ws, 6, 14)
			if err != nil {
				t.Fatal(err)
			}
			test, err := SampleTestSet(task.Grammar(), 2, 6, 10, rand.New(rand.NewPCG(7, 2)))
			if err != nil {
				t.Fatal(err)
			}
			// The task itself, as a Language, gives the same.
			tbs, err := task.SampleBatches(24, 5, 6, 14, rand.New(rand.NewPCG(11, 12)))
			if err != nil {
				t.Fatal(err)
			}
			tlb, err := ComputeLowerBound(task, ws, 6, 14)
			if err != nil {
				t.Fatal(err)
			}
			ttest, err := SampleTestSet(task, 2, 6, 10, rand.New(rand.NewPCG(7, 2)))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(tbs, bs) || !reflect.DeepEqual(tlb, lb) || !reflect.DeepEqual(ttest, test) {
				t.Errorf("%s (%s): the task's own sampling and lower bound differ from its grammar's", name, g)
			}
			got = append(got, goldenTask{Task: name, Grammar: g, Batches: bs, LogProbs: lb.LogProbsGivenLength, LowerBound: lb.Entropy, TestSet: test})
		}
	}
	if *updateGolden {
		b, err := json.MarshalIndent(got, "", " ")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(goldenFile), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(goldenFile, append(b, '\n'), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(goldenFile)
	if err != nil {
		t.Fatal(err)
	}
	var want []goldenTask
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d tasks, the file has %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Task != w.Task || g.Grammar != w.Grammar {
			t.Fatalf("entry %d: %s (%s), the file has %s (%s)", i, g.Task, g.Grammar, w.Task, w.Grammar)
		}
		if !reflect.DeepEqual(g.Batches, w.Batches) || !reflect.DeepEqual(g.TestSet, w.TestSet) {
			t.Errorf("%s (%s): the samples differ from the file's", w.Task, w.Grammar)
		}
		// JSON round-trips float64 exactly; allow only the last bits of
		// a different summation order.
		for j := range w.LogProbs {
			if math.Abs(g.LogProbs[j]-w.LogProbs[j]) > 1e-12*math.Max(1, math.Abs(w.LogProbs[j])) {
				t.Errorf("%s (%s): string %d: log p(w | n) = %v, the file has %v", w.Task, w.Grammar, j, g.LogProbs[j], w.LogProbs[j])
			}
		}
		if math.Abs(g.LowerBound-w.LowerBound) > 1e-12 {
			t.Errorf("%s (%s): lower bound %v, the file has %v", w.Task, w.Grammar, g.LowerBound, w.LowerBound)
		}
	}
}
