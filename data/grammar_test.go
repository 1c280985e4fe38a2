package data

import (
	"errors"
	"flag"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

var _ flag.Value = new(Grammar)

func mustTaskFor(t testing.TB, name string, g Grammar) *Task {
	t.Helper()
	task, err := TaskFor(name, g)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

func TestParseGrammar(t *testing.T) {
	if got := GrammarNames(); !slices.Equal(got, []string{"paper", "released"}) {
		t.Errorf("GrammarNames() = %q", got)
	}
	for _, name := range GrammarNames() {
		g, err := ParseGrammar(name)
		if err != nil {
			t.Fatal(err)
		}
		if g.String() != name {
			t.Errorf("ParseGrammar(%q).String() = %q", name, g)
		}
		var h Grammar
		if err := h.Set(name); err != nil || h != g {
			t.Errorf("Set(%q): %v, %q", name, err, h)
		}
	}
	if got := Grammar("").String(); got != "paper" {
		t.Errorf("zero Grammar is %q, want paper", got)
	}
	for _, bad := range []string{"", "Paper", "release", "stated"} {
		_, err := ParseGrammar(bad)
		if err == nil {
			t.Errorf("ParseGrammar(%q): no error", bad)
			continue
		}
		for _, name := range GrammarNames() {
			if !strings.Contains(err.Error(), name) {
				t.Errorf("error %q does not list %q", err, name)
			}
		}
		h := GrammarReleased
		if err := h.Set(bad); err == nil || h != GrammarReleased {
			t.Errorf("Set(%q): error %v, value %q", bad, err, h)
		}
	}
	if _, err := TaskFor(Dyck, "both"); err == nil || !strings.Contains(err.Error(), "released") {
		t.Errorf("TaskFor with an unknown grammar: error %v", err)
	}
	if _, err := TaskFor("dyk", GrammarReleased); err == nil || !strings.Contains(err.Error(), Dyck) {
		t.Errorf("TaskFor with an unknown task: error %v", err)
	}
	if _, err := mustTask(t, Dyck).WithGrammar("x"); err == nil {
		t.Error("WithGrammar accepted an unknown grammar")
	}
}

func TestTaskFor(t *testing.T) {
	for _, name := range TaskNames() {
		paper := mustTask(t, name)
		if paper.Definition() != GrammarPaper {
			t.Errorf("%s: NewTask gives definition %q", name, paper.Definition())
		}
		for _, test := range []struct {
			g, want Grammar
		}{{"", GrammarPaper}, {GrammarPaper, GrammarPaper}, {GrammarReleased, GrammarReleased}} {
			task := mustTaskFor(t, name, test.g)
			if task.Definition() != test.want || task.Name() != name {
				t.Errorf("TaskFor(%q, %q): %s under %q", name, test.g, task.Name(), task.Definition())
			}
			if !slices.Equal(task.Vocabulary(), paper.Vocabulary()) {
				t.Errorf("%s under %q: vocabulary %q, want %q", name, test.g, task.Vocabulary(), paper.Vocabulary())
			}
		}
		released := mustTaskFor(t, name, GrammarReleased)
		back, err := released.WithGrammar(GrammarPaper)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(back.Grammar().Rules(), paper.Grammar().Rules(), func(a, b Rule) bool { return a.String() == b.String() }) {
			t.Errorf("%s: released then paper does not give the stated grammar", name)
		}
		for _, r := range released.Grammar().Rules() {
			if len(r.RHS) == 0 || len(r.RHS) == 1 && slices.Contains(released.Grammar().Nonterminals(), r.RHS[0]) {
				t.Errorf("%s: released grammar has the rule %v", name, r)
			}
		}
	}
	// Parameters other than the paper's carry over.
	custom, err := NewDyck(3, 9)
	if err != nil {
		t.Fatal(err)
	}
	rel, err := custom.WithGrammar(GrammarReleased)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rel.Grammar().Rules() {
		if r.LHS == "S" && math.Abs(r.Prob-0.5) < 1e-9 {
			t.Errorf("custom Dyck under released has the default rule %v", r)
		}
	}
}

// TestRemoveEpsilonAndUnaryExact checks the general transformation on
// grammars with ε rules, unary rules and cycles, and nullable nonterminals
// inside long rules, behind a start rule S0 → < S > that is never removed:
// then the transformation must keep every string's probability exactly.
func TestRemoveEpsilonAndUnaryExact(t *testing.T) {
	for _, test := range bruteGrammars {
		terms := append(slices.Clone(test.terms), "<", ">")
		rules := append([]Rule{rule("S0", 1, "<", test.start, ">")}, test.rules...)
		g, err := NewPCFG("S0", terms, rules)
		if err != nil {
			t.Fatal(err)
		}
		h, kept, err := g.RemoveEpsilonAndUnaryRules()
		if err != nil {
			t.Fatalf("%s: %v", test.name, err)
		}
		if kept != 1 {
			t.Errorf("%s: kept %v, want 1", test.name, kept)
		}
		for _, r := range h.Rules() {
			if len(r.RHS) == 0 || len(r.RHS) == 1 && slices.Contains(h.Nonterminals(), r.RHS[0]) {
				t.Errorf("%s: rule %v left", test.name, r)
			}
		}
		for n := 0; n <= 6; n++ {
			allStrings(len(terms), n, func(w []int) {
				a, _ := g.LogProb(w)
				b, _ := h.LogProb(w)
				if d := math.Abs(math.Exp(a) - math.Exp(b)); d > 1e-12 {
					t.Errorf("%s: p(%q) = %v, %v after removal", test.name, FormatString(w, terms), math.Exp(a), math.Exp(b))
				}
			})
		}
	}
}

// TestRemoveEpsilonAndUnaryRoot checks what the transformation loses at the
// root on small grammars with closed forms.
func TestRemoveEpsilonAndUnaryRoot(t *testing.T) {
	// S → a S (0.5) | A (0.5); A → b (0.6) | ε (0.4). The root loses
	// S → A, with probability 0.5: a string aᵏ b or aᵏ with k ≥ 1 keeps
	// its probability, divided by 0.5.
	g, err := NewPCFG("S", []string{"a", "b"}, []Rule{
		rule("S", 0.5, "a", "S"), rule("S", 0.5, "A"),
		rule("A", 0.6, "b"), rule("A", 0.4),
	})
	if err != nil {
		t.Fatal(err)
	}
	h, kept, err := g.RemoveEpsilonAndUnaryRules()
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(kept-0.5) > 1e-15 {
		t.Errorf("kept %v, want 0.5", kept)
	}
	for n := 0; n <= 6; n++ {
		allStrings(2, n, func(w []int) {
			s := FormatString(w, []string{"a", "b"})
			var want float64
			k := strings.Count(s, "a")
			switch {
			case k == 0:
			case k == n:
				want = math.Pow(0.5, float64(k)) * 0.5 * 0.4 / kept
			case k == n-1 && w[n-1] == 1:
				want = math.Pow(0.5, float64(k)) * 0.5 * 0.6 / kept
			}
			lp, _ := h.LogProb(w)
			if got := math.Exp(lp); math.Abs(got-want) > 1e-14 {
				t.Errorf("p(%q) = %v, want %v", s, got, want)
			}
		})
	}
	// A grammar of ε alone has nothing left.
	g, _ = NewPCFG("S", []string{"a"}, []Rule{rule("S", 1, "A"), rule("A", 1)})
	if _, _, err := g.RemoveEpsilonAndUnaryRules(); err == nil {
		t.Error("no error for a grammar left without rules")
	}
	// The probability kept by each task.
	for _, test := range []struct {
		task string
		kept float64
	}{
		{MarkedReversal, 1},
		{UnmarkedReversal, Cont(DefaultReversalMean)},
		{PaddedReversal, Cont(DefaultReversalMean)},
		{Dyck, Cont(DefaultDyckConcatMean)},
		{HardestCFL, 1},
	} {
		_, kept, err := mustTask(t, test.task).Grammar().RemoveEpsilonAndUnaryRules()
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(kept-test.kept) > 1e-14 {
			t.Errorf("%s: kept %v, want %v", test.task, kept, test.kept)
		}
	}
}

func TestGrammarValidLengths(t *testing.T) {
	var all []int
	for n := 40; n <= 80; n++ {
		all = append(all, n)
	}
	for _, test := range []struct {
		task            string
		min, max        int
		paper, released []int
	}{
		{MarkedReversal, 0, 6, []int{1, 3, 5}, []int{1, 3, 5}},
		{UnmarkedReversal, 0, 6, []int{0, 2, 4, 6}, []int{2, 4, 6}},
		{PaddedReversal, 0, 4, []int{0, 1, 2, 3, 4}, []int{2, 3, 4}},
		{Dyck, 0, 6, []int{2, 4, 6}, []int{4, 6}},
		{HardestCFL, 0, 8, []int{6, 7, 8}, []int{6, 7, 8}},
	} {
		for _, g := range []Grammar{GrammarPaper, GrammarReleased} {
			want := test.paper
			if g == GrammarReleased {
				want = test.released
			}
			pg := mustTaskFor(t, test.task, g).Grammar()
			got, err := pg.ValidLengths(test.min, test.max)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s under %s, [%d, %d]: valid lengths %v, want %v", test.task, g, test.min, test.max, got, want)
			}
			// On the paper's range [40, 80] the definitions agree.
			paper, _ := mustTask(t, test.task).Grammar().ValidLengths(40, 80)
			got, _ = pg.ValidLengths(40, 80)
			if !slices.Equal(got, paper) || test.task == PaddedReversal && !slices.Equal(got, all) {
				t.Errorf("%s under %s: valid lengths in [40, 80] %v, paper %v", test.task, g, got, paper)
			}
		}
	}
}

// TestGrammarClosedForms checks p(w | |w| = n) for every string of a few
// small lengths against closed forms under both definitions. Strings not
// listed must have probability 0.
func TestGrammarClosedForms(t *testing.T) {
	c, d := Cont(DefaultReversalMean), Cont(DefaultPadMean)
	// Padded reversal under the paper's grammar, length 3: x y x has one
	// derivation, v = x and padding y; 0 0 0 and 1 1 1 can also be pure
	// padding.
	xyx3 := c / 2
	aaa3 := c/2 + d*d
	z3 := 2*xyx3 + 2*aaa3
	// Length 4: x y y x with v = x y and no padding, or v = x and padding
	// y y; 0 0 0 0 and 1 1 1 1 can also be pure padding.
	xyyx4 := c/2*c/2*(1-c)*(1-d) + c/2*(1-c)/2*d*d*(1-d)
	aaaa4 := xyyx4 + (1-c)/2*d*d*d*d*(1-d)
	z4 := 2*xyyx4 + 2*aaaa4
	uniform := func(ws ...string) map[string]float64 {
		m := map[string]float64{}
		for _, w := range ws {
			m[w] = 1 / float64(len(ws))
		}
		return m
	}
	for _, test := range []struct {
		task string
		g    Grammar
		n    int
		want map[string]float64
	}{
		// Dyck: the paper's S → T makes a single pair, nested or not,
		// possible at the root.
		{Dyck, GrammarPaper, 2, uniform("( )", "[ ]")},
		{Dyck, GrammarReleased, 2, nil},
		{Dyck, GrammarPaper, 4, map[string]float64{
			"( ) ( )": 1.0 / 160, "( ) [ ]": 1.0 / 160, "[ ] ( )": 1.0 / 160, "[ ] [ ]": 1.0 / 160,
			"( ( ) )": 39.0 / 160, "( [ ] )": 39.0 / 160, "[ ( ) ]": 39.0 / 160, "[ [ ] ]": 39.0 / 160,
		}},
		{Dyck, GrammarReleased, 4, uniform("( ) ( )", "( ) [ ]", "[ ] ( )", "[ ] [ ]")},
		// Padded reversal: the released grammar has no S → T_a at the
		// root, so v is never empty.
		{PaddedReversal, GrammarPaper, 0, uniform("")},
		{PaddedReversal, GrammarReleased, 0, nil},
		{PaddedReversal, GrammarPaper, 1, uniform("0", "1")},
		{PaddedReversal, GrammarReleased, 1, nil},
		{PaddedReversal, GrammarPaper, 2, uniform("0 0", "1 1")},
		{PaddedReversal, GrammarReleased, 2, uniform("0 0", "1 1")},
		{PaddedReversal, GrammarPaper, 3, map[string]float64{
			"0 0 0": aaa3 / z3, "0 1 0": xyx3 / z3, "1 0 1": xyx3 / z3, "1 1 1": aaa3 / z3,
		}},
		{PaddedReversal, GrammarReleased, 3, uniform("0 0 0", "0 1 0", "1 0 1", "1 1 1")},
		{PaddedReversal, GrammarPaper, 4, map[string]float64{
			"0 0 0 0": aaaa4 / z4, "0 1 1 0": xyyx4 / z4, "1 0 0 1": xyyx4 / z4, "1 1 1 1": aaaa4 / z4,
		}},
		{PaddedReversal, GrammarReleased, 4, uniform("0 0 0 0", "0 1 1 0", "1 0 0 1", "1 1 1 1")},
		// Unmarked reversal loses only the empty string.
		{UnmarkedReversal, GrammarPaper, 0, uniform("")},
		{UnmarkedReversal, GrammarReleased, 0, nil},
		{UnmarkedReversal, GrammarPaper, 2, uniform("0 0", "1 1")},
		{UnmarkedReversal, GrammarReleased, 2, uniform("0 0", "1 1")},
		{MarkedReversal, GrammarReleased, 1, uniform("#")},
		{MarkedReversal, GrammarReleased, 3, uniform("0 # 0", "1 # 1")},
	} {
		got := conditional(t, mustTaskFor(t, test.task, test.g).Grammar(), test.n)
		for s, p := range got {
			if want, ok := test.want[s]; !ok || math.Abs(p-want) > 1e-12 {
				t.Errorf("%s under %s: p(%q | %d) = %v, want %v", test.task, test.g, s, test.n, p, want)
			}
		}
		for s, want := range test.want {
			if _, ok := got[s]; !ok {
				t.Errorf("%s under %s: p(%q | %d) = 0, want %v", test.task, test.g, s, test.n, want)
			}
		}
	}
}

// singlePair reports whether a Dyck string is one top-level bracket pair.
func singlePair(w []int) bool {
	depth := 0
	for i, x := range w {
		if x%2 == 0 {
			depth++
		} else {
			depth--
		}
		if depth == 0 && i < len(w)-1 {
			return false
		}
	}
	return len(w) > 0
}

// condCache holds p(w | |w| = n) by task, definition and length, shared by
// the tests that enumerate strings.
var condCache = struct {
	sync.Mutex
	m map[condKey]map[string]float64
}{m: map[condKey]map[string]float64{}}

type condKey struct {
	task string
	def  Grammar
	n    int
}

// taskConditional returns conditional(t, g, n) for the task's grammar g
// under def, computing it once per test binary.
func taskConditional(t testing.TB, name string, def Grammar, n int) map[string]float64 {
	condCache.Lock()
	defer condCache.Unlock()
	k := condKey{name, def, n}
	if probs, ok := condCache.m[k]; ok {
		return probs
	}
	probs := conditional(t, mustTaskFor(t, name, def).Grammar(), n)
	condCache.m[k] = probs
	return probs
}

// TestGrammarsEnumerated enumerates all strings of small lengths over each
// task's alphabet under both definitions (TestConditionalSumsToOne checks
// that they sum to 1). Marked reversal, unmarked reversal (for non-empty
// strings) and the hardest CFL give the same probabilities under both
// definitions. Released Dyck is the paper's conditioned on not being a
// single top-level pair, and released padded reversal is the paper's
// without the derivations that are pure padding.
func TestGrammarsEnumerated(t *testing.T) {
	c, d := Cont(DefaultReversalMean), Cont(DefaultPadMean)
	for _, name := range TaskNames() {
		paperTask := mustTask(t, name)
		paper := paperTask.Grammar()
		for _, n := range enumerationLengths[name] {
			pp := taskConditional(t, name, GrammarPaper, n)
			pr := taskConditional(t, name, GrammarReleased, n)
			// want returns the released p(w | n) derived from the paper's
			// grammar, for the strings in pp.
			want := map[string]float64{}
			switch name {
			case MarkedReversal, HardestCFL:
				want = pp
			case UnmarkedReversal:
				if n > 0 {
					want = pp
				}
			case Dyck:
				var z float64
				for s, p := range pp {
					w, _ := ParseString(s, paperTask.Terminals())
					if !singlePair(w) {
						want[s] = p
						z += p
					}
				}
				for s := range want {
					want[s] /= z
				}
			case PaddedReversal:
				// p_G(aⁿ) includes (1-c)/2·dⁿ(1-d) from pure padding, and
				// p_G(ε) twice that (T_0 and T_1).
				pure := (1 - c) / 2 * math.Pow(d, float64(n)) * (1 - d)
				if n == 0 {
					pure *= 2
				}
				var z float64
				for s := range pp {
					w, _ := ParseString(s, paperTask.Terminals())
					lp, _ := paper.LogProb(w)
					p := math.Exp(lp)
					if !slices.ContainsFunc(w, func(x int) bool { return x != w[0] }) {
						p -= pure
					}
					if p > 1e-9*math.Exp(lp) {
						want[s] = p
						z += p
					}
				}
				for s := range want {
					want[s] /= z
				}
			}
			if len(want) != len(pr) {
				t.Errorf("%s, length %d: %d strings under released, want %d", name, n, len(pr), len(want))
			}
			for s, p := range want {
				if math.Abs(pr[s]-p) > 1e-12 {
					t.Errorf("%s: released p(%q | %d) = %v, want %v", name, s, n, pr[s], p)
				}
			}
		}
	}
}

// TestReleasedSamples checks samples of lengths 40–80 under the released
// definition: no Dyck string is a single top-level pair, and every padded
// reversal starts and ends with the same symbol (v is not empty). Under the
// paper's definition Dyck strings often are a single pair.
func TestReleasedSamples(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, name := range TaskNames() {
		for _, g := range []Grammar{GrammarPaper, GrammarReleased} {
			task := mustTaskFor(t, name, g)
			batches, err := SampleBatches(task.Grammar(), 500, 10, 40, 80, rng)
			if err != nil {
				t.Fatal(err)
			}
			ws := Flatten(batches)
			var pairs int
			for _, w := range ws {
				if len(w) < 40 || len(w) > 80 {
					t.Fatalf("%s under %s: sampled length %d", name, g, len(w))
				}
				switch {
				case name == Dyck && singlePair(w):
					pairs++
				case name == PaddedReversal && g == GrammarReleased && w[0] != w[len(w)-1]:
					t.Errorf("%s under %s: sampled %q", name, g, FormatString(w, task.Terminals()))
				}
			}
			if name == Dyck {
				if g == GrammarReleased && pairs > 0 {
					t.Errorf("%s under %s: %d of %d samples are a single top-level pair", name, g, pairs, len(ws))
				}
				if g == GrammarPaper && pairs < 150 {
					t.Errorf("%s under %s: only %d of %d samples are a single top-level pair", name, g, pairs, len(ws))
				}
			}
			lb, err := ComputeLowerBound(task.Grammar(), ws, 40, 80)
			if err != nil {
				t.Fatalf("%s under %s: %v", name, g, err)
			}
			if !(lb.Entropy > 0) || math.IsInf(lb.Entropy, 0) {
				t.Errorf("%s under %s: lower bound %v", name, g, lb.Entropy)
			}
			test, err := SampleTestSet(task.Grammar(), 2, 40, 80, rng)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range test {
				if _, err := SourceLogProb(task.Grammar(), w, 40, 80); err != nil {
					t.Errorf("%s under %s: %v", name, g, err)
				}
			}
		}
		// Long strings of the unaffected tasks have the same probability
		// under both definitions.
		if name == Dyck || name == PaddedReversal {
			continue
		}
		paper, released := mustTask(t, name).Grammar(), mustTaskFor(t, name, GrammarReleased).Grammar()
		ws, err := SampleStrings(paper, 20, 40, 80, rng)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			a, _ := SourceLogProb(paper, w, 40, 80)
			b, err := SourceLogProb(released, w, 40, 80)
			if err != nil || math.Abs(a-b) > 1e-9*math.Abs(a) {
				t.Errorf("%s: log p(w) = %v under paper, %v (%v) under released", name, a, b, err)
			}
		}
	}
}

func TestReleasedChiSquare(t *testing.T) {
	for i, test := range []struct {
		task string
		ns   []int
	}{
		{Dyck, []int{6, 8}},
		{PaddedReversal, []int{4, 5}},
	} {
		g := mustTaskFor(t, test.task, GrammarReleased).Grammar()
		for _, n := range test.ns {
			rng := rand.New(rand.NewPCG(uint64(100+i), uint64(n)))
			chiSquareTest(t, test.task+" (released)", g, n, 20000, rng)
		}
	}
}

// TestReleasedSourceLogProb checks that K counts the lengths valid under the
// definition, and that a string the released grammar cannot generate is an
// error, not a probability.
func TestReleasedSourceLogProb(t *testing.T) {
	paper, released := mustTask(t, Dyck), mustTaskFor(t, Dyck, GrammarReleased)
	w, _ := ParseString("( ) [ ]", paper.Terminals())
	for _, test := range []struct {
		task *Task
		want float64
	}{
		{paper, math.Log(1.0/160) - math.Log(3)}, // K = 3: lengths 2, 4, 6
		{released, math.Log(0.25) - math.Log(2)}, // K = 2: lengths 4, 6
	} {
		got, err := SourceLogProb(test.task.Grammar(), w, 2, 6)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(got-test.want) > 1e-12 {
			t.Errorf("%s: log p(w) = %v, want %v", test.task.Definition(), got, test.want)
		}
	}
	pair, _ := ParseString("( ( ) )", paper.Terminals())
	if _, err := SourceLogProb(released.Grammar(), pair, 2, 6); err == nil {
		t.Error("released Dyck gave a probability to a single top-level pair")
	}
	_, err := ComputeLowerBound(released.Grammar(), [][]int{w, pair}, 2, 6)
	var se *StringError
	if !errors.As(err, &se) || se.Index != 1 {
		t.Errorf("lower bound with a single pair under released: error %v", err)
	}
}
