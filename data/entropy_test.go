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

// TestLowerBoundAllTasks checks the bound of a sample of every task
// against its definition, H = (Σ −log p(w | |w|) + N log K) / Σ (|w| + 1),
// recomputed from the sample, with K counted from the lengths where the
// language has strings (a closed form for the tasks that have one) and,
// where p(w | n) has a closed form (the tasks uniform over their strings
// of a length), each log p(w | n) against it. The bound does not depend on
// the set (strings are independent).
func TestLowerBoundAllTasks(t *testing.T) {
	ln2 := math.Log(2)
	// closed: the valid lengths and log p(w | n) of the tasks that have
	// closed forms; nil where a task has none.
	type closedForm struct {
		valid func(n int) bool
		lp    func(n int) float64
	}
	odd := func(n int) bool { return n%2 == 1 }
	even := func(n int) bool { return n%2 == 0 }
	closed := map[string]closedForm{
		MarkedReversal:                 {odd, func(n int) float64 { return -float64(n-1) / 2 * ln2 }},
		UnmarkedReversal:               {even, func(n int) float64 { return -float64(n) / 2 * ln2 }},
		Dyck:                           {even, nil},
		Count3:                         {func(n int) bool { return n%3 == 0 }, func(int) float64 { return 0 }},
		MarkedCopy:                     {odd, func(n int) float64 { return -float64(n-1) / 2 * ln2 }},
		UnmarkedCopy:                   {even, func(n int) float64 { return -float64(n) / 2 * ln2 }},
		UnmarkedReverseAndCopy:         {func(n int) bool { return n%3 == 0 }, func(n int) float64 { return -float64(n) / 3 * ln2 }},
		CountAndCopy:                   {func(n int) bool { return n%3 == 0 }, func(n int) float64 { return -float64(n) / 3 * ln2 }},
		UnmarkedCopyDifferentAlphabets: {even, func(n int) float64 { return -float64(n) / 2 * ln2 }},
		MarkedReverseAndCopy:           {func(n int) bool { return n%3 == 2 }, func(n int) float64 { return -float64(n-2) / 3 * ln2 }},
	}
	const minLen, maxLen = 40, 80
	for _, name := range AllTaskNames() {
		task := mustTask(t, name)
		ws, err := SampleStrings(task.Language(), 50, minLen, maxLen, rand.New(rand.NewPCG(8, 8)))
		if err != nil {
			t.Fatal(err)
		}
		lb, err := ComputeLowerBound(task.Language(), ws, minLen, maxLen)
		if err != nil {
			t.Fatal(err)
		}
		// K: the lengths at which the language has a string, counted
		// from the closed form or by sampling one at each length.
		k := 0
		for n := minLen; n <= maxLen; n++ {
			if cf, ok := closed[name]; ok {
				if cf.valid(n) {
					k++
				}
				continue
			}
			if _, err := task.Sample(n, rand.New(rand.NewPCG(1, uint64(n)))); err == nil {
				k++
			}
		}
		if lb.ValidLengths != k || lb.Strings != len(ws) {
			t.Errorf("%s: K = %d over %d strings, want %d over %d", name, lb.ValidLengths, lb.Strings, k, len(ws))
		}
		sum, symbols := 0.0, 0
		for i, w := range ws {
			lp := lb.LogProbsGivenLength[i]
			if cf := closed[name]; cf.lp != nil {
				if want := cf.lp(len(w)); math.Abs(lp-want) > 1e-9*(1+math.Abs(want)) {
					t.Errorf("%s: log p(w | %d) = %v, want %v", name, len(w), lp, want)
				}
			}
			if !(lp <= 0) || math.IsInf(lp, 0) {
				t.Errorf("%s: log p(w | %d) = %v", name, len(w), lp)
			}
			sum += -lp + math.Log(float64(k))
			symbols += len(w) + 1
		}
		if want := sum / float64(symbols); lb.Symbols != symbols || math.Abs(lb.Entropy-want) > 1e-12*want {
			t.Errorf("%s: bound %v over %d symbols, want %v over %d", name, lb.Entropy, lb.Symbols, want, symbols)
		}
		one, _ := ComputeLowerBound(task.Language(), ws[:1], minLen, maxLen)
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
