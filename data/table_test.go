package data

import (
	"errors"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func mustTaskWith(t testing.TB, name string, p Params, g Grammar) *Task {
	t.Helper()
	task, err := TaskWith(name, p, g)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// parse returns the string of text form s over task's terminals.
func parse(t testing.TB, task *Task, s string) []int {
	t.Helper()
	w, err := ParseString(s, task.Terminals())
	if err != nil {
		t.Fatalf("%s: %q: %v", task, s, err)
	}
	return w
}

func TestTaskTable(t *testing.T) {
	names := map[string]bool{}
	for _, info := range AllTasks() {
		if names[info.Name] {
			t.Errorf("task %s listed twice", info.Name)
		}
		names[info.Name] = true
		if info.Title == "" || info.Strings == "" || info.New == nil || info.States < 1 || info.Symbols < 1 {
			t.Errorf("%s: incomplete entry %+v", info.Name, info)
		}
		if info.Group != GroupPaper && info.Group != Group2023 {
			t.Errorf("%s: group %q", info.Name, info.Group)
		}
		for _, p := range info.Params {
			if p.Usage == "" || p.Default < p.Min || p.Default > p.Max {
				t.Errorf("%s: parameter %+v", info.Name, p)
			}
			if !slices.Contains(TaskParamNames(), p.Name) {
				t.Errorf("%s: TaskParamNames lacks %s", info.Name, p.Name)
			}
		}
		task := mustTask(t, info.Name)
		if task.Name() != info.Name || task.Params() != nil || task.Info().Title != info.Title {
			t.Errorf("%s: task %s with parameters %v", info.Name, task.Name(), task.Params())
		}
		if got, want := task.Grammar() != nil, info.Group == GroupPaper; got != want || info.IsGrammar() != want {
			t.Errorf("%s: has a grammar: %v, want %v", info.Name, got, want)
		}
	}
	if got, want := TaskNames(), []string{MarkedReversal, UnmarkedReversal, PaddedReversal, Dyck, HardestCFL}; !slices.Equal(got, want) {
		t.Errorf("TaskNames() = %v, want %v", got, want)
	}
	want2023 := []string{Count3, MarkedCopy, UnmarkedCopy, MarkedReverseAndCopy, UnmarkedReverseAndCopy, CountAndCopy, UnmarkedCopyDifferentAlphabets}
	if got := TaskGroupNames(Group2023); !slices.Equal(got, want2023) {
		t.Errorf("TaskGroupNames(2023) = %v, want %v", got, want2023)
	}
	if got := AllTaskNames(); !slices.Equal(got, append(TaskNames(), want2023...)) {
		t.Errorf("AllTaskNames() = %v", got)
	}
	if got := TaskParamNames(); !slices.Equal(got, []string{SymbolTypes, BracketTypes}) {
		t.Errorf("TaskParamNames() = %v", got)
	}
	if _, err := LookupTask("copy"); err == nil || !strings.Contains(err.Error(), UnmarkedCopyDifferentAlphabets) {
		t.Errorf("LookupTask of an unknown name: error %v, want one listing the tasks", err)
	}
}

func TestTasks2023Terminals(t *testing.T) {
	for _, test := range []struct {
		name  string
		p     Params
		terms []string
	}{
		{Count3, nil, []string{"a", "b", "c"}},
		{MarkedCopy, nil, []string{"0", "1", "#"}},
		{UnmarkedCopy, nil, []string{"0", "1"}},
		{MarkedReverseAndCopy, nil, []string{"0", "1", "#"}},
		{MarkedReverseAndCopy, Params{SymbolTypes: 4}, []string{"0", "1", "2", "3", "#"}},
		{UnmarkedReverseAndCopy, nil, []string{"0", "1"}},
		{CountAndCopy, nil, []string{"0", "1", "#"}},
		{UnmarkedCopyDifferentAlphabets, nil, []string{"0", "1", "2", "3"}},
		{MarkedReversal, Params{SymbolTypes: 3}, []string{"0", "1", "2", "#"}},
		{UnmarkedReversal, Params{SymbolTypes: 1}, []string{"0"}},
		{Dyck, Params{BracketTypes: 3}, []string{"(", ")", "[", "]", "{", "}"}},
		{Dyck, Params{BracketTypes: 5}, []string{"(", ")", "[", "]", "{", "}", "<", ">", "((", "))"}},
	} {
		task := mustTaskWith(t, test.name, test.p, GrammarPaper)
		if got := task.Terminals(); !slices.Equal(got, test.terms) {
			t.Errorf("%s: terminals %q, want %q", task, got, test.terms)
		}
		if task.EOS() != len(test.terms) || !slices.Equal(task.Vocabulary(), append(slices.Clone(test.terms), EOS)) {
			t.Errorf("%s: vocabulary %q, EOS %d", task, task.Vocabulary(), task.EOS())
		}
	}
}

// count2023 is N(n), the number of strings of length n, of the 2023 tasks
// in closed form (m symbol types where the task takes them).
func count2023(name string, m, n int) float64 {
	div := func(sections, markers int) float64 {
		if n < markers || (n-markers)%sections != 0 {
			return 0
		}
		return math.Pow(float64(m), float64((n-markers)/sections))
	}
	switch name {
	case Count3:
		m = 1
		return div(3, 0)
	case MarkedCopy:
		return div(2, 1)
	case UnmarkedCopy, UnmarkedCopyDifferentAlphabets:
		return div(2, 0)
	case MarkedReverseAndCopy:
		return div(3, 2)
	case UnmarkedReverseAndCopy, CountAndCopy:
		return div(3, 0)
	}
	panic("no closed form for " + name)
}

// enumerate returns p(w | n) for every string of length n over the task's
// terminals with positive probability, keyed by text form.
func enumerate(t testing.TB, task *Task, n int) map[string]float64 {
	t.Helper()
	terms := task.Terminals()
	probs := map[string]float64{}
	allStrings(len(terms), n, func(w []int) {
		lp, err := task.LogProbGivenLength(w)
		if err != nil {
			t.Fatal(err)
		}
		if !math.IsInf(lp, -1) {
			probs[FormatString(w, terms)] = math.Exp(lp)
		}
	})
	return probs
}

// TestTasks2023ClosedForms enumerates every string of each small length
// over each 2023 task's alphabet: the members number N(n), each has
// probability 1/N(n) given its length, so they sum to 1, and the valid
// lengths are those with N(n) > 0.
func TestTasks2023ClosedForms(t *testing.T) {
	for _, test := range []struct {
		name string
		m    int // symbol types
		maxN int
	}{
		{Count3, 1, 12},
		{MarkedCopy, 2, 11},
		{UnmarkedCopy, 2, 12},
		{MarkedReverseAndCopy, 2, 11},
		{MarkedReverseAndCopy, 3, 8},
		{UnmarkedReverseAndCopy, 2, 12},
		{CountAndCopy, 2, 9},
		{UnmarkedCopyDifferentAlphabets, 2, 8},
	} {
		var p Params
		if test.name == MarkedReverseAndCopy {
			p = Params{SymbolTypes: test.m}
		}
		task := mustTaskWith(t, test.name, p, "")
		var wantValid []int
		for n := 0; n <= test.maxN; n++ {
			want := count2023(test.name, test.m, n)
			if want > 0 {
				wantValid = append(wantValid, n)
			}
			probs := enumerate(t, task, n)
			if float64(len(probs)) != want {
				t.Errorf("%s: %d strings of length %d, want %v", task, len(probs), n, want)
			}
			var sum float64
			for s, pr := range probs {
				sum += pr
				if math.Abs(pr-1/want) > 1e-12 {
					t.Errorf("%s: p(%q | %d) = %v, want 1/%v", task, s, n, pr, want)
				}
			}
			if want > 0 && math.Abs(sum-1) > 1e-9 {
				t.Errorf("%s: the probabilities of length %d sum to %v", task, n, sum)
			}
		}
		got, err := task.ValidLengths(0, test.maxN)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, wantValid) {
			t.Errorf("%s: valid lengths %v, want %v", task, got, wantValid)
		}
	}
}

// TestTasks2023Membership checks strings of each 2023 task one by one:
// members with their exact log p(w | n), and near misses (one symbol
// changed, moved, added or removed) refused.
func TestTasks2023Membership(t *testing.T) {
	ln2 := math.Ln2
	for _, test := range []struct {
		name string
		p    Params
		in   map[string]float64 // member → log p(w | n)
		out  []string
	}{
		{Count3, nil, map[string]float64{"": 0, "a b c": 0, "a a a b b b c c c": 0},
			[]string{"a", "a b", "a c b", "b a c", "a a b b c", "a a b c c c", "a b c a b c", "c b a"}},
		{MarkedCopy, nil, map[string]float64{"#": 0, "0 # 0": -ln2, "1 0 # 1 0": -2 * ln2, "1 1 0 # 1 1 0": -3 * ln2},
			[]string{"", "0 0", "0 # 1", "1 0 # 0 1", "1 0 # 1", "1 0 1 0", "1 # 0 1 0", "0 # 0 #", "# #"}},
		{UnmarkedCopy, nil, map[string]float64{"": 0, "0 0": -ln2, "0 1 0 1": -2 * ln2, "1 1 0 1 1 0": -3 * ln2},
			[]string{"0", "0 1", "0 1 1 0", "0 1 0", "1 1 0 1 0 1"}},
		{MarkedReverseAndCopy, nil, map[string]float64{"# #": 0, "1 # 1 # 1": -ln2, "0 1 # 1 0 # 0 1": -2 * ln2},
			[]string{"#", "0 # 0 # 1", "0 1 # 0 1 # 0 1", "0 1 # 1 0 # 1 0", "0 # # 0 0", "1 # 1 1"}},
		{MarkedReverseAndCopy, Params{SymbolTypes: 3}, map[string]float64{"2 0 # 0 2 # 2 0": -2 * math.Log(3)},
			[]string{"2 0 # 2 0 # 2 0", "3", "# 2 #"}},
		{UnmarkedReverseAndCopy, nil, map[string]float64{"": 0, "1 1 1": -ln2, "0 1 1 0 0 1": -2 * ln2},
			[]string{"0 1 0", "0 1 0 1 0 1", "0 1 1 0 1 0", "0 1 1 0 0"}},
		{CountAndCopy, nil, map[string]float64{"": 0, "1 # 1": -ln2, "0 1 # # 0 1": -2 * ln2},
			[]string{"# # #", "0 1 # 0 1", "0 1 # # 1 0", "0 # # 0 0 0", "# 0 # 0 # 0", "0 1 # # # 0 1"}},
		{UnmarkedCopyDifferentAlphabets, nil, map[string]float64{"": 0, "0 2": -ln2, "1 0 3 2": -2 * ln2},
			[]string{"0 0", "2 0", "1 0 1 0", "1 0 2 3", "0 2 0 2", "3 2 1 0", "1 0 3"}},
	} {
		task := mustTaskWith(t, test.name, test.p, "")
		for s, want := range test.in {
			w := parse(t, task, s)
			lp, err := task.LogProbGivenLength(w)
			if err != nil {
				t.Fatal(err)
			}
			if ok, _ := task.Contains(w); !ok || math.Abs(lp-want) > 1e-12 {
				t.Errorf("%s: %q: log p(w | n) = %v (member: %v), want %v", task, s, lp, ok, want)
			}
		}
		for _, s := range test.out {
			w, err := ParseString(s, task.Terminals())
			if err != nil {
				continue // a symbol outside the alphabet: refused by parsing
			}
			lp, err := task.LogProbGivenLength(w)
			if err != nil {
				t.Fatal(err)
			}
			if ok, _ := task.Contains(w); ok || !math.IsInf(lp, -1) {
				t.Errorf("%s: %q accepted with log p(w | n) = %v", task, s, lp)
			}
		}
		// Indices outside the alphabet are errors, not non-members.
		if _, err := task.LogProbGivenLength([]int{len(task.Terminals())}); err == nil {
			t.Errorf("%s: no error for a symbol index outside the alphabet", task)
		}
	}
}

// TestTasks2023Samples draws strings of every 2023 task: each is a member
// of the requested length, and at small lengths their frequencies match
// the uniform distribution (χ² at level 0.001, fixed seeds).
func TestTasks2023Samples(t *testing.T) {
	for i, name := range TaskGroupNames(Group2023) {
		task := mustTask(t, name)
		rng := rand.New(rand.NewPCG(uint64(i), 23))
		ns, err := task.ValidLengths(40, 100)
		if err != nil || len(ns) == 0 {
			t.Fatalf("%s: valid lengths %v, %v", name, ns, err)
		}
		for _, n := range ns {
			w, err := task.Sample(n, rng)
			if err != nil {
				t.Fatal(err)
			}
			if ok, _ := task.Contains(w); !ok || len(w) != n {
				t.Errorf("%s: sampled %q for length %d: not a member", name, FormatString(w, task.Terminals()), n)
			}
		}
		// Every task has at least two sections, so ns[0]+1 is not valid.
		if _, err := task.Sample(ns[0]+1, rng); err == nil {
			t.Errorf("%s: no error for sampling the invalid length %d", name, ns[0]+1)
		}
		small, _ := task.ValidLengths(4, 9)
		for _, n := range small {
			chiSquareLanguage(t, task, n, 8000, rng)
		}
	}
	// More symbol types.
	task := mustTaskWith(t, MarkedReverseAndCopy, Params{SymbolTypes: 3}, "")
	chiSquareLanguage(t, task, 8, 8000, rand.New(rand.NewPCG(3, 3)))
}

// chiSquareLanguage samples count strings of length n of the task and tests
// their frequencies against the exact p(w | n) at level 0.001, pooling the
// strings with expected counts below 5.
func chiSquareLanguage(t *testing.T, task *Task, n, count int, rng *rand.Rand) {
	t.Helper()
	chiSquare(t, task.String(), n, count, enumerate(t, task, n), func() (string, error) {
		w, err := task.Sample(n, rng)
		return FormatString(w, task.Terminals()), err
	})
}

// TestTasks2023LowerBound checks the lower bound of a uniform task against
// its closed form, (Σ log N(|w|) + S·log K) / Σ (|w| + 1), and that a
// string outside the language is a *StringError naming it.
func TestTasks2023LowerBound(t *testing.T) {
	task := mustTask(t, MarkedCopy)
	ws := [][]int{parse(t, task, "0 1 # 0 1"), parse(t, task, "1 # 1"), parse(t, task, "1 1 1 # 1 1 1")}
	lb, err := ComputeLowerBound(task, ws, 2, 8) // valid lengths 3, 5, 7: K = 3
	if err != nil {
		t.Fatal(err)
	}
	want := ((2+1+3)*math.Ln2 + 3*math.Log(3)) / float64(6+4+8)
	if lb.ValidLengths != 3 || lb.Symbols != 18 || math.Abs(lb.Entropy-want) > 1e-12 {
		t.Errorf("lower bound %+v, want K = 3, 18 symbols, %v nats", lb, want)
	}
	lp, err := SourceLogProb(task, ws[0], 2, 8)
	if err != nil || math.Abs(lp-(-2*math.Ln2-math.Log(3))) > 1e-12 {
		t.Errorf("SourceLogProb = %v, %v", lp, err)
	}
	bad := append(ws, parse(t, task, "0 1 # 1 0"))
	_, err = ComputeLowerBound(task, bad, 2, 8)
	var se *StringError
	if !errors.As(err, &se) || se.Index != 3 || !strings.Contains(err.Error(), "not in the language") {
		t.Errorf("a non-member: error %v, want a StringError for string 3", err)
	}
	if _, err := SourceLogProb(task, bad[3], 2, 8); err == nil {
		t.Error("SourceLogProb of a non-member: no error")
	}
	if _, err := ComputeLowerBound(task, ws, 4, 4); err == nil {
		t.Error("no error for a range without valid lengths")
	}
}

// TestTypesClosedForms checks the reversal and Dyck grammars with m
// symbol or bracket types: every string of a length has the probability
// of its shape with one type times m^(−pairs), so the probabilities sum
// to 1; m = 2 is the paper's grammar itself.
func TestTypesClosedForms(t *testing.T) {
	for _, test := range []struct {
		name, param string
		ns          []int
		pairs       func(n int) int // the symbols whose type is free
	}{
		{MarkedReversal, SymbolTypes, []int{1, 3, 5}, func(n int) int { return (n - 1) / 2 }},
		{UnmarkedReversal, SymbolTypes, []int{0, 2, 4, 6}, func(n int) int { return n / 2 }},
		{Dyck, BracketTypes, []int{2, 4, 6}, func(n int) int { return n / 2 }},
	} {
		one := mustTaskWith(t, test.name, Params{test.param: 1}, "")
		for _, m := range []int{3, 4} {
			for _, def := range []Grammar{GrammarPaper, GrammarReleased} {
				task := mustTaskWith(t, test.name, Params{test.param: m}, def)
				if got := task.Params(); !reflect.DeepEqual(got, Params{test.param: m}) {
					t.Errorf("%s: Params() = %v", task, got)
				}
				oneDef, _ := one.WithGrammar(def)
				for _, n := range test.ns {
					if v, _ := oneDef.ValidLengths(n, n); len(v) == 0 {
						continue // the released grammar lacks this length
					}
					probs := enumerate(t, task, n)
					var sum float64
					for s, p := range probs {
						sum += p
						// The shape: every symbol of type i as type 0.
						w := parse(t, task, s)
						for j, x := range w {
							if x < 2*m && test.name == Dyck {
								w[j] = x % 2
							} else if x < m {
								w[j] = 0
							} else {
								w[j] = 1 // the marker
							}
						}
						lp1, err := oneDef.LogProbGivenLength(w)
						if err != nil {
							t.Fatal(err)
						}
						want := lp1 - float64(test.pairs(n))*math.Log(float64(m))
						if math.Abs(math.Log(p)-want) > 1e-9 {
							t.Errorf("%s: log p(%q | %d) = %v, want %v", task, s, n, math.Log(p), want)
						}
					}
					if math.Abs(sum-1) > 1e-9 {
						t.Errorf("%s: the probabilities of length %d sum to %v", task, n, sum)
					}
				}
			}
		}
		// The paper's m = 2, given or not, is the paper's task.
		two := mustTaskWith(t, test.name, Params{test.param: 2}, "")
		if two.Params() != nil || !reflect.DeepEqual(two.Grammar().Rules(), mustTask(t, test.name).Grammar().Rules()) {
			t.Errorf("%s with %s 2: parameters %v, rules differ from the paper's", test.name, test.param, two.Params())
		}
	}
}

func TestTaskParamsErrors(t *testing.T) {
	for _, test := range []struct {
		name string
		p    Params
		g    Grammar
		want []string
	}{
		{MarkedReversal, Params{BracketTypes: 3}, "", []string{"no parameter bracket-types", "symbol-types"}},
		{Count3, Params{SymbolTypes: 3}, "", []string{"no parameter symbol-types", "it has none"}},
		{Dyck, Params{BracketTypes: 0}, "", []string{"bracket-types 0 outside [1, 1000]"}},
		{MarkedReverseAndCopy, Params{SymbolTypes: MaxTypes + 1}, "", []string{"symbol-types 1001"}},
		{MarkedCopy, nil, GrammarReleased, []string{"not defined by a grammar", "hardest-cfl"}},
		{"copy", nil, "", []string{"unknown task", MarkedCopy}},
		{MarkedCopy, nil, "stated", []string{"unknown grammar", "released"}},
	} {
		_, err := TaskWith(test.name, test.p, test.g)
		if err == nil {
			t.Errorf("%s %v %q: no error", test.name, test.p, test.g)
			continue
		}
		for _, w := range test.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s %v %q: error %q lacks %q", test.name, test.p, test.g, err, w)
			}
		}
	}
	task := mustTaskWith(t, MarkedReverseAndCopy, Params{SymbolTypes: 5}, "")
	if got := task.String(); got != "marked-reverse-and-copy (symbol-types=5)" {
		t.Errorf("String() = %q", got)
	}
	if got := mustTaskFor(t, Dyck, GrammarReleased).String(); got != "dyck (released grammar)" {
		t.Errorf("String() = %q", got)
	}
}

// TestTaskSampleBatches checks that Task.SampleBatches draws, for the
// paper's tasks, what SampleBatches of its grammar draws from the same
// seed, and that it follows the protocol (one valid length per batch) for
// the 2023 tasks.
func TestTaskSampleBatches(t *testing.T) {
	for _, name := range AllTaskNames() {
		task := mustTask(t, name)
		got, err := task.SampleBatches(23, 5, 20, 40, rand.New(rand.NewPCG(4, 5)))
		if err != nil {
			t.Fatal(err)
		}
		if g := task.Grammar(); g != nil {
			want, err := SampleBatches(g, 23, 5, 20, 40, rand.New(rand.NewPCG(4, 5)))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: Task.SampleBatches differs from SampleBatches of its grammar", name)
			}
		}
		if len(got) != 5 || len(got[4]) != 3 {
			t.Fatalf("%s: batches of %d", name, len(got))
		}
		for _, b := range got {
			for _, w := range b {
				if ok, _ := task.Contains(w); !ok || len(w) != len(b[0]) || len(w) < 20 || len(w) > 40 {
					t.Errorf("%s: batch string %v", name, w)
				}
			}
		}
	}
	if _, err := mustTask(t, Count3).SampleBatches(10, 5, 4, 5, rand.New(rand.NewPCG(1, 1))); err == nil {
		t.Error("count-3 in [4, 5]: no error")
	}
}
