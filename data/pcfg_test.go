package data

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

func TestNewPCFGErrors(t *testing.T) {
	for _, test := range []struct {
		name  string
		start string
		terms []string
		rules []Rule
		want  string // substring of the error
	}{
		{name: "empty", start: "S", terms: []string{"a"}, want: "empty grammar"},
		{
			// The empty string's weight of A is the least root of
			// ν = 0.5 + 0.5ν², 1, which iteration from 0 reaches only as
			// 1/k: refused rather than left inexact.
			name: "critical epsilon recursion", start: "S", terms: []string{"a", "b"},
			rules: []Rule{rule("S", 0.5, "a"), rule("S", 0.5, "b", "A"), rule("A", 0.5, "A", "A"), rule("A", 0.5)},
			want:  "critical",
		},
		{
			name: "sum", start: "S", terms: []string{"a"},
			rules: []Rule{rule("S", 1, "A"), rule("A", 0.5, "a"), rule("A", 0.4)},
			want:  `nonterminal "A"`,
		},
		{
			name: "sum slightly off", start: "S", terms: []string{"a"},
			rules: []Rule{rule("S", 0.5, "a"), rule("S", 0.5+1e-8)},
			want:  `nonterminal "S"`,
		},
		{
			name: "unknown symbol", start: "S", terms: []string{"a"},
			rules: []Rule{rule("S", 1, "a", "B")},
			want:  `unknown symbol "B"`,
		},
		{
			name: "start without rules", start: "X", terms: []string{"a"},
			rules: []Rule{rule("S", 1, "a")},
			want:  `start symbol "X"`,
		},
		{
			name: "negative probability", start: "S", terms: []string{"a"},
			rules: []Rule{rule("S", 1.5, "a"), rule("S", -0.5)},
			want:  "outside [0, 1]",
		},
		{
			name: "NaN probability", start: "S", terms: []string{"a"},
			rules: []Rule{rule("S", math.NaN(), "a")},
			want:  "outside [0, 1]",
		},
		{
			name: "duplicate terminal", start: "S", terms: []string{"a", "a"},
			rules: []Rule{rule("S", 1, "a")},
			want:  "twice",
		},
		{
			name: "terminal with space", start: "S", terms: []string{"a b"},
			rules: []Rule{rule("S", 1)},
			want:  "white space",
		},
		{
			name: "terminal and nonterminal", start: "S", terms: []string{"a", "S"},
			rules: []Rule{rule("S", 1, "a")},
			want:  "both a terminal and a nonterminal",
		},
	} {
		_, err := NewPCFG(test.start, test.terms, test.rules)
		if err == nil {
			t.Errorf("%s: no error", test.name)
			continue
		}
		if !strings.Contains(err.Error(), test.want) {
			t.Errorf("%s: error %q does not contain %q", test.name, err, test.want)
		}
	}
}

// Hand-made grammars for the brute-force tests.
var bruteGrammars = []struct {
	name  string
	start string
	terms []string
	rules []Rule
	maxN  int
}{
	{
		// ε rules, unary rules, a unary cycle A → B → A and nullable
		// nonterminals inside longer rules.
		name: "epsilon-unary", start: "S", terms: []string{"a", "b"}, maxN: 4,
		rules: []Rule{
			rule("S", 0.15, "A", "S", "B"),
			rule("S", 0.15, "A"),
			rule("S", 0.2, "B", "b", "A"),
			rule("S", 0.5, "a"),
			rule("A", 0.6, "a"),
			rule("A", 0.3),
			rule("A", 0.1, "B"),
			rule("B", 0.7, "b"),
			rule("B", 0.2),
			rule("B", 0.1, "A"),
		},
	},
	{
		// Ambiguous: every bracketing of a string is a derivation.
		name: "ambiguous", start: "S", terms: []string{"a", "b"}, maxN: 5,
		rules: []Rule{
			rule("S", 0.2, "S", "S"),
			rule("S", 0.5, "a"),
			rule("S", 0.3, "b"),
		},
	},
	{
		// Ambiguous with a nullable nonterminal in a long rule and a
		// self-loop S → S.
		name: "nullable-long", start: "S", terms: []string{"x", "y", "z"}, maxN: 4,
		rules: []Rule{
			rule("S", 0.25, "x", "N", "S", "N", "y"),
			rule("S", 0.1, "S"),
			rule("S", 0.15, "N", "N"),
			rule("S", 0.5, "z"),
			rule("N", 0.4, "z", "N"),
			rule("N", 0.6),
		},
	},
}

// bruteForce enumerates the leftmost derivations from nonterminal a of
// strings of length at most maxN, pruning partial derivations with
// probability below cut. It returns the probability of each string (keyed by
// its text form) and the total pruned probability, which bounds the error of
// every returned value.
func bruteForce(g *PCFG, a string, maxN int, cut float64) (map[string]float64, float64) {
	byLHS := map[string][]Rule{}
	for _, r := range g.rules {
		byLHS[r.LHS] = append(byLHS[r.LHS], r)
	}
	// minLen[A]: the shortest yield of A, for pruning by length.
	minLen := map[string]int{}
	for _, t := range g.terms {
		minLen[t] = 1
	}
	for _, nt := range g.nts {
		minLen[nt] = math.MaxInt32
	}
	for changed := true; changed; {
		changed = false
		for _, r := range g.rules {
			if r.Prob == 0 {
				continue
			}
			l := 0
			for _, s := range r.RHS {
				l += minLen[s]
			}
			if l < minLen[r.LHS] {
				minLen[r.LHS], changed = l, true
			}
		}
	}
	out := map[string]float64{}
	var pruned float64
	var rec func(prefix []string, form []string, p float64)
	rec = func(prefix, form []string, p float64) {
		l := len(prefix)
		for _, s := range form {
			l += minLen[s]
		}
		if l > maxN {
			return
		}
		if p < cut {
			pruned += p
			return
		}
		// Move leading terminals to the prefix.
		i := 0
		for i < len(form) {
			if _, isNT := g.ntIndex[form[i]]; isNT {
				break
			}
			i++
		}
		prefix = append(slices.Clip(prefix), form[:i]...)
		form = form[i:]
		if len(form) == 0 {
			out[strings.Join(prefix, " ")] += p
			return
		}
		for _, r := range byLHS[form[0]] {
			if r.Prob == 0 {
				continue
			}
			next := append(slices.Clip(r.RHS), form[1:]...)
			rec(prefix, next, p*r.Prob)
		}
	}
	rec(nil, []string{a}, 1)
	return out, pruned
}

// allStrings calls f with every string of length n over k symbols.
func allStrings(k, n int, f func(w []int)) {
	w := make([]int, n)
	for {
		f(w)
		i := n - 1
		for i >= 0 && w[i] == k-1 {
			w[i] = 0
			i--
		}
		if i < 0 {
			return
		}
		w[i]++
	}
}

func TestInsideBruteForce(t *testing.T) {
	const cut = 1e-13
	for _, test := range bruteGrammars {
		g, err := NewPCFG(test.start, test.terms, test.rules)
		if err != nil {
			t.Fatalf("%s: %v", test.name, err)
		}
		for _, a := range g.Nonterminals() {
			probs, pruned := bruteForce(g, a, test.maxN, cut)
			t.Logf("%s from %s: pruned mass %v", test.name, a, pruned)
			if pruned > 1e-6 {
				t.Fatalf("%s: pruned mass %v too large for a meaningful test", test.name, pruned)
			}
			tol := pruned + 1e-12
			byLen := make([]float64, test.maxN+1)
			for s, p := range probs {
				byLen[len(strings.Fields(s))] += p
			}
			for n, want := range byLen {
				lp, err := g.LogInside(a, n)
				if err != nil {
					t.Fatal(err)
				}
				if got := math.Exp(lp); math.Abs(got-want) > tol {
					t.Errorf("%s: β_%s(%d) = %v, brute force %v (tolerance %v)", test.name, a, n, got, want, tol)
				}
			}
			table, err := g.LogInsideByLength(test.maxN)
			if err != nil {
				t.Fatal(err)
			}
			for n := range byLen {
				lp, _ := g.LogInside(a, n)
				if got := table[n][slices.Index(g.Nonterminals(), a)]; got != lp {
					t.Errorf("%s: LogInsideByLength [%d][%s] = %v, LogInside = %v", test.name, n, a, got, lp)
				}
			}
			if a != test.start {
				continue
			}
			for n := 0; n <= test.maxN; n++ {
				allStrings(len(test.terms), n, func(w []int) {
					s := FormatString(w, test.terms)
					lp, err := g.LogProb(w)
					if err != nil {
						t.Fatal(err)
					}
					want := probs[s]
					if got := math.Exp(lp); math.Abs(got-want) > tol {
						t.Errorf("%s: p_G(%q) = %v, brute force %v", test.name, s, got, want)
					}
					if want > tol && math.IsInf(lp, -1) {
						t.Errorf("%s: p_G(%q) = 0, brute force %v", test.name, s, want)
					}
				})
			}
		}
	}
}

// TestNullableClosedForm checks the nullable weight of S → S S | a | ε,
// the least root of 0.3x² - x + 0.2 = 0, and the length-1 weight that
// depends on it through a linear system.
func TestNullableClosedForm(t *testing.T) {
	g, err := NewPCFG("S", []string{"a"}, []Rule{rule("S", 0.3, "S", "S"), rule("S", 0.5, "a"), rule("S", 0.2)})
	if err != nil {
		t.Fatal(err)
	}
	x := (1 - math.Sqrt(1-4*0.3*0.2)) / (2 * 0.3)
	lp, _ := g.LogLengthProb(0)
	if got := math.Exp(lp); math.Abs(got-x) > 1e-14 {
		t.Errorf("β(0) = %v, want %v", got, x)
	}
	// β(1) = 0.5 + 2·0.3·x·β(1).
	want := 0.5 / (1 - 2*0.3*x)
	lp, _ = g.LogLengthProb(1)
	if got := math.Exp(lp); math.Abs(got-want) > 1e-14 {
		t.Errorf("β(1) = %v, want %v", got, want)
	}
	lp, _ = g.LogProb([]int{0})
	if got := math.Exp(lp); math.Abs(got-want) > 1e-14 {
		t.Errorf("p_G(a) = %v, want %v", got, want)
	}
}

func TestSampleBruteForce(t *testing.T) {
	// Sampled frequencies on a hand-made grammar with ε, unary and
	// ambiguous rules agree with the exact conditional probabilities.
	test := bruteGrammars[0]
	g, err := NewPCFG(test.start, test.terms, test.rules)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 1; n <= 4; n++ {
		chiSquareTest(t, test.name, g, n, 20000, rng)
	}
}

func TestPCFGErrorsForBadInput(t *testing.T) {
	task, _ := NewTask(Dyck)
	g := task.Grammar()
	if _, err := g.LogProb([]int{0, 4}); err == nil {
		t.Error("LogProb accepted an out-of-range symbol")
	}
	if _, err := g.LogInside("X", 2); err == nil {
		t.Error("LogInside accepted an unknown nonterminal")
	}
	if _, err := g.LogLengthProb(-1); err == nil {
		t.Error("LogLengthProb accepted a negative length")
	}
	if _, err := g.Sample(3, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("Sample accepted an invalid length")
	}
	if _, err := g.Sample(4, nil); err == nil {
		t.Error("Sample accepted a nil source")
	}
	if _, err := g.ValidLengths(5, 4); err == nil {
		t.Error("ValidLengths accepted min > max")
	}
	if _, err := g.ValidLengths(0, MaxLength+1); err == nil {
		t.Error("ValidLengths accepted max > MaxLength")
	}
}

func TestNormalize2(t *testing.T) {
	for _, v := range [][]float64{
		{0.3, 0.75, 0},
		{1e-310, 5e-320},
		{3e300, 1},
		{0, 0},
	} {
		orig := slices.Clone(v)
		e := normalize2(v)
		if e == zeroScale {
			if slices.Max(orig) != 0 {
				t.Errorf("%v: zero scale", orig)
			}
			continue
		}
		if mx := slices.Max(v); mx < 0.5 || mx >= 1 {
			t.Errorf("%v: maximum %v after normalization", orig, mx)
		}
		for i := range v {
			if got := math.Ldexp(v[i], e); got != orig[i] {
				t.Errorf("%v: element %d restored to %v", orig, i, got)
			}
		}
	}
}

func TestConcurrentTables(t *testing.T) {
	// Tables grow on demand; concurrent growth gives the same weights as
	// sequential computation.
	want := mustTask(t, Dyck).Grammar()
	g := mustTask(t, Dyck).Grammar()
	done := make(chan []float64)
	for k := range 4 {
		go func() {
			var lps []float64
			for n := 0; n <= 600; n += 50 * (k + 1) {
				lp, _ := g.LogLengthProb(n)
				lps = append(lps, lp)
			}
			done <- lps
		}()
	}
	for range 4 {
		<-done
	}
	for n := 0; n <= 600; n += 7 {
		a, _ := g.LogLengthProb(n)
		b, _ := want.LogLengthProb(n)
		if a != b && !(math.IsInf(a, -1) && math.IsInf(b, -1)) {
			t.Errorf("length %d: %v concurrently, %v sequentially", n, a, b)
		}
	}
}

// TestLargeGrammars: a long rule (4,000 terminals, binarized into as many
// symbols, none in a unary or nullable chain) is read at once, since only the symbols of chains take part in the closure (a
// dense closure over all 8,000 symbols took gigabytes and minutes); a
// grammar with more chain symbols than MaxChainSymbols is refused.
func TestLargeGrammars(t *testing.T) {
	var terms, rhs []string
	for i := range 4000 {
		terms = append(terms, fmt.Sprintf("t%d", i))
	}
	rhs = append(rhs, terms...)
	g, err := NewPCFG("S", terms, []Rule{{LHS: "S", RHS: rhs, Prob: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if ns, err := g.ValidLengths(0, 100); err != nil || len(ns) != 0 {
		t.Fatalf("valid lengths up to 100: %v, %v; want none", ns, err)
	}
	// A chain S → A1 → A2 → … → A_k → "x", each unary rule with
	// probability 1/2 and "x" with the other half.
	chain := func(k int) []Rule {
		var rules []Rule
		for i := range k {
			a, b := fmt.Sprintf("A%d", i), fmt.Sprintf("A%d", i+1)
			rules = append(rules, Rule{LHS: a, RHS: []string{b}, Prob: 0.5}, Rule{LHS: a, RHS: []string{"x"}, Prob: 0.5})
		}
		return append(rules, Rule{LHS: fmt.Sprintf("A%d", k), RHS: []string{"x"}, Prob: 1})
	}
	g, err = NewPCFG("A0", []string{"x"}, chain(100))
	if err != nil {
		t.Fatal(err)
	}
	if lp, err := g.LogProb([]int{0}); err != nil || math.Abs(lp) > 1e-12 {
		t.Errorf("chain of 100: log p(x) = %v, %v; want 0", lp, err)
	}
	if _, err := NewPCFG("A0", []string{"x"}, chain(MaxChainSymbols+1)); err == nil || !strings.Contains(err.Error(), "MaxChainSymbols") {
		t.Errorf("chain of %d: %v, want a refusal naming MaxChainSymbols", MaxChainSymbols+1, err)
	}
	// A lexicon of 5,000 words reached by unary rules: the words do not
	// depend on other symbols, so they do not count; p(w | n = 1) is 1/5,000
	// for each word.
	words := make([]string, 5000)
	rules := []Rule{{LHS: "S", RHS: []string{"N"}, Prob: 0.5}, {LHS: "S", RHS: []string{"N", "S"}, Prob: 0.5}}
	for i := range words {
		words[i] = fmt.Sprint("w", i)
		rules = append(rules, Rule{LHS: "N", RHS: []string{words[i]}, Prob: 1.0 / 5000})
	}
	g, err = NewPCFG("S", words, rules)
	if err != nil {
		t.Fatalf("lexicon of 5,000 words: %v", err)
	}
	for _, w := range [][]int{{0}, {4999}} {
		if lp, err := g.LogProbGivenLength(w); err != nil || math.Abs(lp-math.Log(1.0/5000)) > 1e-9 {
			t.Errorf("log p(%v | 1) = %v, %v; want log 1/5,000", w, lp, err)
		}
	}
}

// TestLogProbTooLong: a string longer than MaxLength is an error, not a
// chart of its length squared.
func TestLogProbTooLong(t *testing.T) {
	g, err := NewPCFG("S", []string{"a"}, []Rule{{LHS: "S", RHS: []string{"a", "S"}, Prob: 0.5}, {LHS: "S", RHS: []string{"a"}, Prob: 0.5}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.LogProb(make([]int, 100000)); err == nil {
		t.Error("LogProb of 100,000 symbols: no error")
	}
	if lp, err := g.LogProb([]int{0, 0}); err != nil || math.Abs(lp-math.Log(0.25)) > 1e-12 {
		t.Errorf("LogProb(a a) = %v, %v; want log 1/4", lp, err)
	}
}

// productive agrees with the plain fixpoint over the rules on random
// grammars, and takes a long chain of rules written top-down (the order
// that made the fixpoint's passes quadratic) in one sweep.
func TestProductiveWorklist(t *testing.T) {
	naive := func(g *PCFG) []bool {
		prod := make([]bool, g.nb)
		for tm := range g.terms {
			prod[g.preterm+tm] = true
		}
		for a := range prod {
			if g.eps[a] > 0 {
				prod[a] = true
			}
		}
		for changed := true; changed; {
			changed = false
			for _, r := range g.unary {
				if !prod[r.a] && prod[r.b] {
					prod[r.a], changed = true, true
				}
			}
			for _, r := range g.binary {
				if !prod[r.a] && prod[r.b] && prod[r.c] {
					prod[r.a], changed = true, true
				}
			}
		}
		return prod
	}
	rng := rand.New(rand.NewPCG(3, 4))
	terms := []string{"a", "b"}
	checked := 0
	defer func() {
		if checked < 100 {
			t.Errorf("only %d of 300 random grammars were valid", checked)
		}
	}()
	for trial := 0; trial < 300; trial++ {
		nn := 1 + rng.IntN(8)
		name := func(i int) string { return fmt.Sprint("N", i) }
		var rules []Rule
		for a := 0; a < nn; a++ {
			k := 1 + rng.IntN(3)
			for j := 0; j < k; j++ {
				rhs := []string{}
				for l := rng.IntN(4); l > 0; l-- {
					if rng.IntN(4) == 0 {
						rhs = append(rhs, terms[rng.IntN(2)])
					} else {
						rhs = append(rhs, name(rng.IntN(nn)))
					}
				}
				if len(rhs) == 0 && rng.IntN(3) > 0 {
					rhs = []string{name(rng.IntN(nn))} // fewer ε rules
				}
				rules = append(rules, Rule{LHS: name(a), Prob: 1 / float64(k), RHS: rhs})
			}
		}
		g, err := NewPCFG(name(0), terms, rules)
		if err != nil {
			continue // e.g. no rule reaches a terminal
		}
		checked++
		if got, want := g.productive(), naive(g); !slices.Equal(got, want) {
			t.Fatalf("trial %d: productive %v, the fixpoint %v; rules %v", trial, got, want, rules)
		}
	}
	const n = 100000
	rules := make([]Rule, 0, n)
	for i := 0; i < n-1; i++ {
		rules = append(rules, Rule{LHS: fmt.Sprint("N", i), Prob: 1, RHS: []string{"a", fmt.Sprint("N", i+1)}})
	}
	rules = append(rules, Rule{LHS: fmt.Sprint("N", n-1), Prob: 1, RHS: []string{"a"}})
	g, err := NewPCFG("N0", []string{"a"}, rules)
	if err != nil {
		t.Fatalf("a chain of %d rules: %v", n, err)
	}
	for s, p := range g.productive() {
		if !p {
			t.Fatalf("symbol %d of the chain is not productive", s)
		}
	}
}
