package data

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/stat/distuv"
)

func mustTask(t testing.TB, name string) *Task {
	t.Helper()
	task, err := NewTask(name)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func TestNewTask(t *testing.T) {
	for _, test := range []struct {
		name  string
		terms []string
	}{
		{MarkedReversal, []string{"0", "1", "#"}},
		{UnmarkedReversal, []string{"0", "1"}},
		{PaddedReversal, []string{"0", "1"}},
		{Dyck, []string{"(", ")", "[", "]"}},
		{HardestCFL, []string{"(", ")", "[", "]", ",", ";", "$"}},
	} {
		task := mustTask(t, test.name)
		if task.Name() != test.name {
			t.Errorf("Name() = %q, want %q", task.Name(), test.name)
		}
		if got := task.Terminals(); !slices.Equal(got, test.terms) {
			t.Errorf("%s: terminals %q, want %q", test.name, got, test.terms)
		}
		if got, want := task.Vocabulary(), append(slices.Clone(test.terms), EOS); !slices.Equal(got, want) {
			t.Errorf("%s: vocabulary %q, want %q", test.name, got, want)
		}
		if task.EOS() != len(test.terms) {
			t.Errorf("%s: EOS() = %d, want %d", test.name, task.EOS(), len(test.terms))
		}
	}
	_, err := NewTask("dyk")
	if err == nil {
		t.Fatal("no error for an unknown task")
	}
	for _, name := range TaskNames() {
		if !strings.Contains(err.Error(), name) {
			t.Errorf("error %q does not list %q", err, name)
		}
	}
	for _, f := range []func() (*Task, error){
		func() (*Task, error) { return NewMarkedReversal(-1) },
		func() (*Task, error) { return NewUnmarkedReversal(math.NaN()) },
		func() (*Task, error) { return NewPaddedReversal(60, math.Inf(1)) },
		func() (*Task, error) { return NewDyck(-0.5, 39) },
		func() (*Task, error) {
			p := DefaultHardestCFLParams()
			p.Q = 1.5
			return NewHardestCFL(p)
		},
	} {
		if _, err := f(); err == nil {
			t.Error("no error for an invalid parameter")
		}
	}
}

func TestValidLengths(t *testing.T) {
	var odd, even, all []int
	for n := 40; n <= 80; n++ {
		all = append(all, n)
		if n%2 == 0 {
			even = append(even, n)
		} else {
			odd = append(odd, n)
		}
	}
	for _, test := range []struct {
		task     string
		min, max int
		want     []int
	}{
		{MarkedReversal, 40, 80, odd},
		{UnmarkedReversal, 40, 80, even},
		{Dyck, 40, 80, even},
		{PaddedReversal, 40, 80, all},
		{HardestCFL, 40, 80, all},
		{MarkedReversal, 0, 6, []int{1, 3, 5}},
		{UnmarkedReversal, 0, 6, []int{0, 2, 4, 6}},
		{Dyck, 0, 6, []int{2, 4, 6}},
		{PaddedReversal, 0, 3, []int{0, 1, 2, 3}},
		{HardestCFL, 0, 8, []int{6, 7, 8}},
		{HardestCFL, 0, 5, nil},
	} {
		got, err := mustTask(t, test.task).Grammar().ValidLengths(test.min, test.max)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, test.want) {
			t.Errorf("%s [%d, %d]: valid lengths %v, want %v", test.task, test.min, test.max, got, test.want)
		}
	}
}

// TestReversalClosedForms checks p_G(n) and p_G(w)/p_G(|w|) against closed
// forms for marked and unmarked reversal, up to lengths where the
// probabilities are far below the smallest float64 without scaling.
func TestReversalClosedForms(t *testing.T) {
	c := Cont(DefaultReversalMean)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, test := range []struct {
		task   string
		marked int // 1 for marked reversal, 0 for unmarked
	}{{MarkedReversal, 1}, {UnmarkedReversal, 0}} {
		g := mustTask(t, test.task).Grammar()
		for n := 0; n <= 2100; n++ {
			lp, err := g.LogLengthProb(n)
			if err != nil {
				t.Fatal(err)
			}
			if (n-test.marked)%2 != 0 {
				if !math.IsInf(lp, -1) {
					t.Errorf("%s: log p_G(%d) = %v, want -Inf", test.task, n, lp)
				}
				continue
			}
			k := float64(n-test.marked) / 2
			if want := k*math.Log(c) + math.Log(1-c); math.Abs(lp-want) > 1e-9*math.Max(1, math.Abs(want)) {
				t.Errorf("%s: log p_G(%d) = %v, want %v", test.task, n, lp, want)
			}
		}
		for _, n := range []int{test.marked, 2 + test.marked, 10 + test.marked, 80 + test.marked, 400 + test.marked} {
			w, err := g.Sample(n, rng)
			if err != nil {
				t.Fatal(err)
			}
			if len(w) != n {
				t.Fatalf("%s: sampled length %d, want %d", test.task, len(w), n)
			}
			k := float64(n-test.marked) / 2
			lp, err := g.LogProbGivenLength(w)
			if err != nil {
				t.Fatal(err)
			}
			if want := -k * math.Ln2; math.Abs(lp-want) > 1e-9*math.Max(1, -want) {
				t.Errorf("%s: log p(w | %d) = %v, want %v", test.task, n, lp, want)
			}
			// Breaking the palindrome leaves the language.
			if n >= 2 {
				w[0] = 1 - w[len(w)-1]
				if lp, _ := g.LogProb(w); !math.IsInf(lp, -1) {
					t.Errorf("%s: non-palindrome has log probability %v", test.task, lp)
				}
			}
		}
	}
}

// TestLongStrings checks that strings of length 300 get finite
// probabilities on every task.
func TestLongStrings(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, name := range TaskNames() {
		g := mustTask(t, name).Grammar()
		ns, _ := g.ValidLengths(299, 300)
		w, err := g.Sample(ns[0], rng)
		if err != nil {
			t.Fatal(err)
		}
		lp, err := g.LogProb(w)
		if err != nil {
			t.Fatal(err)
		}
		lc, _ := g.LogProbGivenLength(w)
		if math.IsInf(lp, 0) || math.IsNaN(lp) || math.IsInf(lc, 0) || lc > 0 {
			t.Errorf("%s: length %d: log p_G(w) = %v, log p(w | n) = %v", name, len(w), lp, lc)
		}
	}
}

// enumerationLengths are the lengths for which all strings over a task's
// alphabet are enumerated.
var enumerationLengths = map[string][]int{
	MarkedReversal:   {1, 3, 5, 7},
	UnmarkedReversal: {0, 2, 4, 6, 8},
	PaddedReversal:   {0, 1, 2, 3, 4, 5, 6, 7},
	Dyck:             {2, 4, 6, 8},
	HardestCFL:       {6, 7},
}

// conditional returns p_G(w | |w| = n) for every string of length n with
// positive probability, keyed by text form. For the hardest CFL, whose
// strings all end with ";", only strings ending with ";" are enumerated when
// n > 6.
func conditional(t testing.TB, g *PCFG, n int) map[string]float64 {
	probs := map[string]float64{}
	k := n
	last := slices.Index(g.terms, ";")
	if last < 0 || n <= 6 {
		last = -1
	} else {
		k = n - 1
	}
	allStrings(len(g.terms), k, func(w []int) {
		if last >= 0 {
			w = append(slices.Clip(w), last)
		}
		lp, err := g.LogProbGivenLength(w)
		if err != nil {
			t.Fatal(err)
		}
		if !math.IsInf(lp, -1) {
			probs[FormatString(w, g.terms)] = math.Exp(lp)
		}
	})
	return probs
}

// TestConditionalSumsToOne checks, under both definitions, that the
// probabilities of the strings of each enumerated length sum to 1, or that
// there are no strings for a length that is not valid.
func TestConditionalSumsToOne(t *testing.T) {
	for _, name := range TaskNames() {
		for _, def := range []Grammar{GrammarPaper, GrammarReleased} {
			g := mustTaskFor(t, name, def).Grammar()
			for _, n := range enumerationLengths[name] {
				probs := taskConditional(t, name, def, n)
				var sum float64
				for _, p := range probs {
					sum += p
				}
				valid, _ := g.ValidLengths(n, n)
				if len(valid) == 0 {
					if len(probs) != 0 {
						t.Errorf("%s under %s: %d strings of invalid length %d", name, def, len(probs), n)
					}
				} else if math.Abs(sum-1) > 1e-9 {
					t.Errorf("%s under %s: probabilities of the strings of length %d sum to %v", name, def, n, sum)
				}
			}
			// An invalid length has no strings.
			if name == HardestCFL {
				if probs := conditional(t, g, 5); len(probs) != 0 {
					t.Errorf("%s under %s: %d strings of length 5", name, def, len(probs))
				}
			}
		}
	}
}

// chiSquareTest samples count strings of length n of the grammar and
// tests their frequencies against the exact conditional probabilities.
func chiSquareTest(t *testing.T, name string, g *PCFG, n, count int, rng *rand.Rand) {
	t.Helper()
	chiSquare(t, name, n, count, conditional(t, g, n), func() (string, error) {
		w, err := g.Sample(n, rng)
		return FormatString(w, g.terms), err
	})
}

// chiSquare draws count strings of length n with sample and tests their
// frequencies against the exact probabilities probs (string → p(w | n))
// at level 0.001, pooling the strings with expected count below 5.
func chiSquare(t *testing.T, name string, n, count int, probs map[string]float64, sample func() (string, error)) {
	t.Helper()
	observed := map[string]int{}
	for range count {
		s, err := sample()
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := probs[s]; !ok {
			t.Fatalf("%s: sampled %q, which has probability 0", name, s)
		}
		observed[s]++
	}
	var stat, poolExp float64
	var poolObs, cells int
	for s, p := range probs {
		e := p * float64(count)
		if e < 5 {
			poolExp += e
			poolObs += observed[s]
			continue
		}
		d := float64(observed[s]) - e
		stat += d * d / e
		cells++
	}
	if poolExp > 0 {
		d := float64(poolObs) - poolExp
		stat += d * d / poolExp
		cells++
	}
	if cells < 2 {
		return
	}
	if crit := (distuv.ChiSquared{K: float64(cells - 1)}).Quantile(0.999); stat > crit {
		t.Errorf("%s, length %d: χ² = %.1f with %d degrees of freedom, critical value %.1f", name, n, stat, cells-1, crit)
	}
}

func TestSampleChiSquare(t *testing.T) {
	for i, test := range []struct {
		task string
		ns   []int
	}{
		{MarkedReversal, []int{5, 7}},
		{UnmarkedReversal, []int{6, 8}},
		{PaddedReversal, []int{5, 6}},
		{Dyck, []int{6, 8}},
		{HardestCFL, []int{7}},
	} {
		g := mustTask(t, test.task).Grammar()
		for _, n := range test.ns {
			rng := rand.New(rand.NewPCG(uint64(i), uint64(n)))
			chiSquareTest(t, test.task, g, n, 20000, rng)
		}
	}
}

func TestHardestCFLExample(t *testing.T) {
	// A shortest string: R → U , R′ with U, R′ → ε; $; Q → ε;
	// S → T → ( Q ); L → L′ , U with L′, U → ε; ;.
	task := mustTask(t, HardestCFL)
	w, err := ParseString(", $ ( ) , ;", task.Terminals())
	if err != nil {
		t.Fatal(err)
	}
	lp, err := task.Grammar().LogProb(w)
	if err != nil {
		t.Fatal(err)
	}
	p := DefaultHardestCFLParams()
	c, u, s, tt := Cont(p.C), Cont(p.U), Cont(p.S), Cont(p.T)
	// R′ and L′ take ε (1-c each); the two U take ε (1-u each); the Q's
	// take ε (1-q each: after $, and inside ( Q )).
	want := math.Log((1 - u) * (1 - c) * (1 - p.Q) * (1 - s) * (1 - tt) / 2 * (1 - p.Q) * (1 - c) * (1 - u))
	if math.Abs(lp-want) > 1e-12 {
		t.Errorf("log p_G(%q) = %v, want %v", ", $ ( ) , ;", lp, want)
	}
}
