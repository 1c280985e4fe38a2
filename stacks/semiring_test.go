package stacks_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nsrnn/nsrnn/semiring"
	"github.com/nsrnn/nsrnn/stacks"
)

// Reachable is the Boolean semiring: with the allowed actions true, Inside
// tells which configurations some run reaches. A new semiring is one type
// with these five methods.
type Reachable struct{}

func (Reachable) Zero() bool                           { return false }
func (Reachable) One() bool                            { return true }
func (Reachable) Times(a, b bool) bool                 { return a && b }
func (Reachable) Plus(acc *bool, v bool) bool          { *acc = *acc || v; return false }
func (Reachable) AddProduct(acc *bool, a, b bool) bool { *acc = *acc || a && b; return false }

// Which (state, top symbol) configurations can the stack reach when only
// some transitions are allowed? Here, with two states and two symbols,
// only pushes of symbol 1 and pops to state 1 are allowed.
func ExampleInside() {
	cfg := stacks.NSConfig{States: 2, Symbols: 2}
	m := cfg.States * cfg.Symbols
	row := make([]bool, cfg.NumActions())
	for qx := range m { // each (state q, top x) row of the layout
		base := qx * (2*m + cfg.States)
		for r := range cfg.States {
			row[base+r*cfg.Symbols+1] = true // push (r, 1)
		}
		row[base+2*m+1] = true // pop to state 1
	}
	rows := [][]bool{row, row, row}
	alpha, err := stacks.Inside[bool](cfg, Reachable{}, rows)
	if err != nil {
		fmt.Println(err)
		return
	}
	for t, a := range alpha {
		fmt.Printf("after step %d: (0,0) %v, (0,1) %v, (1,0) %v, (1,1) %v\n", t+1, a[0], a[1], a[2], a[3])
	}
	// Output:
	// after step 1: (0,0) false, (0,1) true, (1,0) false, (1,1) true
	// after step 2: (0,0) false, (0,1) true, (1,0) false, (1,1) true
	// after step 3: (0,0) false, (0,1) true, (1,0) false, (1,1) true
}

// Inside in max-plus gives the weight of Viterbi's run, and in the log-sum
// semiring a sum at least as large as that best run; bad input is refused.
func TestInsideSemirings(t *testing.T) {
	cfg := stacks.NSConfig{States: 2, Symbols: 3, Normalized: true, Window: 4}
	rng := rand.New(rand.NewPCG(1, 9))
	const n = 12
	logWeights := make([][]float64, n)
	for i := range logWeights {
		logWeights[i] = make([]float64, cfg.NumActions())
		for j := range logWeights[i] {
			logWeights[i][j] = rng.NormFloat64()
		}
	}
	alpha, err := stacks.Inside[float64](cfg, semiring.LogSum{}, logWeights)
	if err != nil {
		t.Fatal(err)
	}
	best, err := stacks.Inside[semiring.Best](cfg, semiring.MaxPlus{}, lift(logWeights))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := stacks.Viterbi(cfg, 1, logWeights)
	if err != nil {
		t.Fatal(err)
	}
	top := math.Inf(-1)
	for j, b := range best[n-1] {
		if b.OK && b.W > top {
			top = b.W
		}
		// A sum of runs weighs at least its best run.
		if b.OK && alpha[n-1][j] < b.W-1e-12 {
			t.Errorf("log α %v below the best run's %v", alpha[n-1][j], b.W)
		}
	}
	if math.Abs(top-runs[0].LogWeight) > 1e-12 {
		t.Errorf("Inside in max-plus: best %v, Viterbi's run %v", top, runs[0].LogWeight)
	}
	if _, err := stacks.Inside[float64](cfg, semiring.LogSum{}, [][]float64{{1, 2}}); err == nil {
		t.Error("a row of the wrong length: no error")
	}
	if _, err := stacks.Inside[float64](stacks.NSConfig{}, semiring.LogSum{}, nil); err == nil {
		t.Error("an invalid configuration: no error")
	}
}

func lift(lw [][]float64) [][]semiring.Best {
	out := make([][]semiring.Best, len(lw))
	for t, r := range lw {
		out[t] = make([]semiring.Best, len(r))
		for j, w := range r {
			out[t][j] = semiring.Best{W: w, OK: true}
		}
	}
	return out
}

// TestInsideNilSemiring: Inside without a semiring is an error, not a
// nil dereference.
func TestInsideNilSemiring(t *testing.T) {
	cfg := stacks.NSConfig{States: 1, Symbols: 1}
	if _, err := stacks.Inside[float64](cfg, nil, nil); err == nil {
		t.Error("no error")
	}
}
