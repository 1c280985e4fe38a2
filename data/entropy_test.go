package data

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestLowerBoundMarkedReversal(t *testing.T) {
	// For marked reversal p(w) = (1/K)·2^{-(|w|-1)/2}.
	g := mustTask(t, MarkedReversal).Grammar()
	ws, err := SampleStrings(g, 200, 40, 80, rand.New(rand.NewPCG(4, 4)))
	if err != nil {
		t.Fatal(err)
	}
	lb, err := ComputeLowerBound(g, ws, 40, 80)
	if err != nil {
		t.Fatal(err)
	}
	const k = 20 // odd lengths in [40, 80]
	var nll float64
	var syms int
	for i, w := range ws {
		want := -float64(len(w)-1) / 2 * math.Ln2
		if math.Abs(lb.LogProbsGivenLength[i]-want) > 1e-9 {
			t.Errorf("string %d: log p(w | n) = %v, want %v", i, lb.LogProbsGivenLength[i], want)
		}
		nll -= want - math.Log(k)
		syms += len(w) + 1
		lp, err := SourceLogProb(g, w, 40, 80)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(lp-(want-math.Log(k))) > 1e-9 {
			t.Errorf("string %d: log p(w) = %v, want %v", i, lp, want-math.Log(k))
		}
	}
	if lb.Strings != len(ws) || lb.Symbols != syms || lb.ValidLengths != k {
		t.Errorf("got %d strings, %d symbols, K = %d; want %d, %d, %d", lb.Strings, lb.Symbols, lb.ValidLengths, len(ws), syms, k)
	}
	if want := nll / float64(syms); math.Abs(lb.Entropy-want) > 1e-12 {
		t.Errorf("lower bound %v, want %v", lb.Entropy, want)
	}
}

func TestLowerBoundAllTasks(t *testing.T) {
	// The lower bound is positive and finite and does not depend on the
	// number of goroutines (strings are independent).
	for _, name := range TaskNames() {
		g := mustTask(t, name).Grammar()
		ws, err := SampleStrings(g, 50, 40, 80, rand.New(rand.NewPCG(8, 8)))
		if err != nil {
			t.Fatal(err)
		}
		lb, err := ComputeLowerBound(g, ws, 40, 80)
		if err != nil {
			t.Fatal(err)
		}
		if !(lb.Entropy > 0) || math.IsInf(lb.Entropy, 0) {
			t.Errorf("%s: lower bound %v", name, lb.Entropy)
		}
		one, _ := ComputeLowerBound(g, ws[:1], 40, 80)
		if one.LogProbsGivenLength[0] != lb.LogProbsGivenLength[0] {
			t.Errorf("%s: log probability depends on the set", name)
		}
	}
}

func TestLowerBoundErrors(t *testing.T) {
	task := mustTask(t, Dyck)
	g := task.Grammar()
	parse := func(s string) []int {
		w, err := ParseString(s, task.Terminals())
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	for _, test := range []struct {
		name     string
		ws       [][]int
		min, max int
		index    int // -1: not a StringError
	}{
		{"not in language", [][]int{parse("( )"), parse("( ]"), parse("[ ]")}, 0, 10, 1},
		{"too long", [][]int{parse("( )"), parse("( ) [ ] ( )")}, 0, 4, 1},
		{"too short", [][]int{parse("( ( ) )"), parse("( )")}, 4, 10, 1},
		{"empty set", nil, 0, 10, -1},
		{"no valid lengths", [][]int{parse("( )")}, 3, 3, -1},
		{"bad range", [][]int{parse("( )")}, 3, 2, -1},
		{"bad symbol", [][]int{{0, 9}}, 0, 10, 0},
	} {
		_, err := ComputeLowerBound(g, test.ws, test.min, test.max)
		if err == nil {
			t.Errorf("%s: no error", test.name)
			continue
		}
		var se *StringError
		if isSE := errors.As(err, &se); isSE != (test.index >= 0) || (isSE && se.Index != test.index) {
			t.Errorf("%s: error %v, want string index %d", test.name, err, test.index)
		}
	}
	if _, err := SourceLogProb(g, parse("( ]"), 0, 10); err == nil {
		t.Error("SourceLogProb accepted a string outside the language")
	}
	if _, err := SourceLogProb(g, parse("( )"), 4, 10); err == nil {
		t.Error("SourceLogProb accepted a length outside the range")
	}
}
