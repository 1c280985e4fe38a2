package data

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"gonum.org/v1/gonum/mat"
)

// probTol is the tolerance on the sum of the rule probabilities of one
// left-hand side.
const probTol = 1e-9

// MaxLength is the longest string length for which inside weights by length
// are computed (and so the longest string that can be sampled). Tables by
// length take memory quadratic in the length.
const MaxLength = 4096

// Rule is a production LHS → RHS with probability Prob. An empty RHS is an ε
// rule. RHS symbols are names of terminals or nonterminals.
type Rule struct {
	LHS  string
	RHS  []string
	Prob float64
}

// String returns the rule in the form "A -> B c (0.5)".
func (r Rule) String() string {
	rhs := "ε"
	if len(r.RHS) > 0 {
		rhs = strings.Join(r.RHS, " ")
	}
	return fmt.Sprintf("%s -> %s (%g)", r.LHS, rhs, r.Prob)
}

// PCFG is a probabilistic context-free grammar. It is immutable once built
// and safe for concurrent use.
//
// The nonterminals are exactly the left-hand sides of the rules. Terminals
// are identified by their index in Terminals.
type PCFG struct {
	start     string
	terms     []string
	termIndex map[string]int
	nts       []string
	ntIndex   map[string]int
	rules     []Rule

	// Binarized grammar. Symbols 0..len(nts)-1 are the user nonterminals,
	// then one preterminal per terminal, then intermediate nonterminals.
	nb      int
	startB  int
	preterm int // index of the first preterminal
	unary   []unaryRule
	binary  []binaryRule
	eps     []float64
	byLHS   []lhsRules
	byLeft  [][]binaryRule // binary rules grouped by left child
	null    []float64      // β_A(0)
	closure []closureEntry

	mu  sync.Mutex
	tab atomic.Pointer[lengthTable]
}

type unaryRule struct {
	a, b int
	p    float64
}

type binaryRule struct {
	a, b, c int
	p       float64
}

// lhsRules lists the rules of one binarized nonterminal by index.
type lhsRules struct {
	unary  []int
	binary []int
}

// closureEntry is a nonzero entry of (I - J)⁻¹, where J holds the
// same-length dependencies.
type closureEntry struct {
	a, b int
	w    float64
}

// NewPCFG returns a grammar with the given start symbol, terminals (in the
// order that defines their indices) and rules. It returns an error if there
// are no rules, a terminal is empty, contains white space or is repeated, a
// symbol is both a terminal and a nonterminal, a right-hand side names an
// unknown symbol, the start symbol has no rules, a probability is outside
// [0, 1], or the probabilities of the rules of one left-hand side do not sum
// to 1 within 1e-9. It also returns an error if unary and nullable rules
// form cycles of total probability 1 or more among nonterminals that
// derive some string (a cycle among those that derive none is only
// warned of: see Warnings), or if the probabilities of deriving the
// empty string do not converge (a critical ε-recursion).
func NewPCFG(start string, terminals []string, rules []Rule) (*PCFG, error) {
	if len(rules) == 0 {
		return nil, errors.New("data: empty grammar: no rules")
	}
	g := &PCFG{
		start:     start,
		terms:     append([]string(nil), terminals...),
		termIndex: make(map[string]int, len(terminals)),
		ntIndex:   make(map[string]int),
	}
	for i, t := range terminals {
		if t == "" || strings.IndexFunc(t, unicode.IsSpace) >= 0 {
			return nil, fmt.Errorf("data: invalid terminal %q: empty or contains white space", t)
		}
		if _, dup := g.termIndex[t]; dup {
			return nil, fmt.Errorf("data: terminal %q listed twice", t)
		}
		g.termIndex[t] = i
	}
	sums := make(map[string]float64)
	for _, r := range rules {
		if r.LHS == "" {
			return nil, fmt.Errorf("data: rule %v has an empty left-hand side", r)
		}
		if _, ok := g.termIndex[r.LHS]; ok {
			return nil, fmt.Errorf("data: symbol %q is both a terminal and a nonterminal", r.LHS)
		}
		if math.IsNaN(r.Prob) || r.Prob < 0 || r.Prob > 1 {
			return nil, fmt.Errorf("data: rule %v: probability outside [0, 1]", r)
		}
		if _, ok := g.ntIndex[r.LHS]; !ok {
			g.ntIndex[r.LHS] = len(g.nts)
			g.nts = append(g.nts, r.LHS)
		}
		sums[r.LHS] += r.Prob
		g.rules = append(g.rules, Rule{LHS: r.LHS, RHS: append([]string(nil), r.RHS...), Prob: r.Prob})
	}
	for _, r := range rules {
		for _, s := range r.RHS {
			_, isT := g.termIndex[s]
			_, isN := g.ntIndex[s]
			if !isT && !isN {
				return nil, fmt.Errorf("data: rule %v: unknown symbol %q", r, s)
			}
		}
	}
	if _, ok := g.ntIndex[start]; !ok {
		return nil, fmt.Errorf("data: start symbol %q is not a nonterminal with rules", start)
	}
	for _, a := range g.nts {
		if math.Abs(sums[a]-1) > probTol {
			return nil, fmt.Errorf("data: probabilities of the rules of nonterminal %q sum to %v, not 1", a, sums[a])
		}
	}
	g.binarize()
	if err := g.nullable(); err != nil {
		return nil, err
	}
	if err := g.sameLengthClosure(); err != nil {
		return nil, err
	}
	return g, nil
}

// Start returns the start symbol.
func (g *PCFG) Start() string { return g.start }

// Terminals returns a copy of the terminals, in index order.
func (g *PCFG) Terminals() []string { return append([]string(nil), g.terms...) }

// Nonterminals returns a copy of the nonterminals, in order of first
// appearance as a left-hand side.
func (g *PCFG) Nonterminals() []string { return append([]string(nil), g.nts...) }

// Rules returns a copy of the rules.
func (g *PCFG) Rules() []Rule {
	rs := make([]Rule, len(g.rules))
	for i, r := range g.rules {
		rs[i] = Rule{LHS: r.LHS, RHS: append([]string(nil), r.RHS...), Prob: r.Prob}
	}
	return rs
}

// binarize builds the binarized grammar. Rules with probability 0 are
// dropped. A rule A → X₁ … X_k with k ≥ 3 becomes A → X₁ N₁, N₁ → X₂ N₂, …,
// N_{k-2} → X_{k-1} X_k, the new rules having probability 1.
func (g *PCFG) binarize() {
	g.preterm = len(g.nts)
	g.nb = len(g.nts) + len(g.terms)
	g.startB = g.ntIndex[g.start]
	sym := func(s string) int {
		if i, ok := g.ntIndex[s]; ok {
			return i
		}
		return g.preterm + g.termIndex[s]
	}
	g.eps = make([]float64, g.nb)
	for _, r := range g.rules {
		if r.Prob == 0 {
			continue
		}
		a := g.ntIndex[r.LHS]
		switch k := len(r.RHS); k {
		case 0:
			g.eps[a] += r.Prob
		case 1:
			g.unary = append(g.unary, unaryRule{a: a, b: sym(r.RHS[0]), p: r.Prob})
		default:
			p := r.Prob
			for i := 0; i < k-2; i++ {
				n := g.nb
				g.nb++
				g.eps = append(g.eps, 0)
				g.binary = append(g.binary, binaryRule{a: a, b: sym(r.RHS[i]), c: n, p: p})
				a, p = n, 1
			}
			g.binary = append(g.binary, binaryRule{a: a, b: sym(r.RHS[k-2]), c: sym(r.RHS[k-1]), p: p})
		}
	}
	g.byLeft = make([][]binaryRule, g.nb)
	for _, r := range g.binary {
		g.byLeft[r.b] = append(g.byLeft[r.b], r)
	}
	g.byLHS = make([]lhsRules, g.nb)
	for i, r := range g.unary {
		g.byLHS[r.a].unary = append(g.byLHS[r.a].unary, i)
	}
	for i, r := range g.binary {
		g.byLHS[r.a].binary = append(g.byLHS[r.a].binary, i)
	}
}

// nullable computes β_A(0) for every binarized nonterminal by fixed-point
// iteration from 0, which converges monotonically to the least fixed
// point; it returns an error where the iteration has not converged after
// maxIter steps, as for a critical or nearly critical ε-recursion (A → A A
// [0.5], A → ε [0.5]), whose weights it would otherwise leave inexact.
func (g *PCFG) nullable() error {
	x := make([]float64, g.nb)
	y := make([]float64, g.nb)
	const maxIter = 1 << 20
	for iter := 0; iter < maxIter; iter++ {
		copy(y, g.eps)
		for _, r := range g.unary {
			y[r.a] += r.p * x[r.b]
		}
		for _, r := range g.binary {
			y[r.a] += r.p * x[r.b] * x[r.c]
		}
		var delta float64
		for i := range x {
			delta = math.Max(delta, math.Abs(y[i]-x[i]))
		}
		x, y = y, x
		if delta <= 1e-17 {
			g.null = x
			return nil
		}
	}
	return fmt.Errorf("data: the probabilities that the nonterminals derive the empty string do not converge (after %d steps): the grammar's ε-rules are critical or nearly so (a derivation of the empty string goes on forever with probability near 1); such a grammar is not supported", maxIter)
}

// productive returns which binarized nonterminals derive some string.
func (g *PCFG) productive() []bool {
	prod := make([]bool, g.nb)
	for t := range g.terms {
		prod[g.preterm+t] = true
	}
	for a := range prod {
		if g.eps[a] > 0 {
			prod[a] = true
		}
	}
	// A worklist, in time linear in the rules: need[i] counts the
	// right-side symbols of rule i (unary rules first, then binary) not
	// yet known productive, and uses[s] lists the rules with s on their
	// right side, once per occurrence.
	nu := len(g.unary)
	need := make([]int, nu+len(g.binary))
	lhs := make([]int, len(need))
	uses := make([][]int32, g.nb)
	for i, r := range g.unary {
		need[i], lhs[i] = 1, r.a
		uses[r.b] = append(uses[r.b], int32(i))
	}
	for i, r := range g.binary {
		need[nu+i], lhs[nu+i] = 2, r.a
		uses[r.b] = append(uses[r.b], int32(nu+i))
		uses[r.c] = append(uses[r.c], int32(nu+i))
	}
	var work []int
	for s, p := range prod {
		if p {
			work = append(work, s)
		}
	}
	for len(work) > 0 {
		s := work[len(work)-1]
		work = work[:len(work)-1]
		for _, i := range uses[s] {
			if need[i]--; need[i] == 0 && !prod[lhs[i]] {
				prod[lhs[i]] = true
				work = append(work, lhs[i])
			}
		}
	}
	return prod
}

// MaxChainSymbols is the most symbols of a grammar (after binarization)
// that may depend on other nonterminals of the same length through unary
// or nullable rules (A → B, or A → B C with C deriving ε): the closure over
// them is a dense matrix inverted in cubic time. The symbols they depend on
// without depending on others in turn do not count, nor do the symbols
// that depend on words alone (A → "a", a lexicon's preterminals): their
// rows of the closure are their own rules. The task grammars have at most
// a few thousand; a grammar with more is refused.
const MaxChainSymbols = 4000

// sameLengthClosure computes (I - J)⁻¹, where J[A][B] is the weight with
// which β_A(n) depends on β_B(n) for n ≥ 1: unary rules A → B, and binary
// rules A → B C or A → C B with C deriving ε. Entries that are structurally
// zero are kept exactly zero.
//
// Only the chain sources of J (the symbols with an edge into a symbol other
// than a preterminal, S) take part in the inversion. The other symbols
// are the lexical sources L, whose edges all lead to preterminals and so
// end there, and the symbols T with no row in J. With J_LL, J_LS, J_TS,
// J_TL and J_TT zero, and J_LT holding L's edges,
//
//	(I - J)⁻¹ = [(I - J_SS)⁻¹, (I - J_SS)⁻¹ J_SL, (I - J_SS)⁻¹ (J_ST + J_SL J_LT); 0, I, J_LT; 0, 0, I],
//
// so a chain source's entry for another symbol is a product, a lexical
// source's row is its edges and 1 on the diagonal, and a symbol with no
// row has the closure 1 on the diagonal alone.
func (g *PCFG) sameLengthClosure() error {
	n := g.nb
	prod := g.productive()
	isPreterm := func(b int) bool { return b >= g.preterm && b < g.preterm+len(g.terms) }
	type edge struct {
		a, b int
		w    float64
	}
	var edges []edge
	add := func(a, b int, w float64) {
		if w == 0 || !prod[a] || !prod[b] {
			return
		}
		edges = append(edges, edge{a, b, w})
	}
	for _, r := range g.unary {
		add(r.a, r.b, r.p)
	}
	for _, r := range g.binary {
		add(r.a, r.b, r.p*g.null[r.c])
		add(r.a, r.c, r.p*g.null[r.b])
	}
	// The chain sources of J, in increasing order, and each one's place;
	// and the edges of the lexical sources, merged by preterminal.
	pos := make([]int, n)
	for i := range pos {
		pos[i] = -1
	}
	for _, e := range edges {
		if !isPreterm(e.b) {
			pos[e.a] = 0
		}
	}
	var sources []int
	for a := range pos {
		if pos[a] == 0 {
			pos[a] = len(sources)
			sources = append(sources, a)
		}
	}
	lexW := map[int]map[int]float64{}
	for _, e := range edges {
		if pos[e.a] >= 0 {
			continue
		}
		if lexW[e.a] == nil {
			lexW[e.a] = map[int]float64{}
		}
		lexW[e.a][e.b] += e.w
	}
	lexT := make(map[int][]int, len(lexW))
	for a, w := range lexW {
		lexT[a] = slices.Sorted(maps.Keys(w))
	}
	k := len(sources)
	if k > MaxChainSymbols {
		return fmt.Errorf("data: %d symbols depend on other nonterminals through unary or nullable rules, more than the %d supported (MaxChainSymbols)", k, MaxChainSymbols)
	}
	// J_SS, dense, and J's edges into sinks, per source, merged by sink
	// (sinks: the sinks of each source, in increasing order).
	j := mat.NewDense(max(k, 1), max(k, 1), nil)
	next := make([][]int, k) // J_SS's structure, for reachability
	sinkW := make([]map[int]float64, k)
	sinks := make([][]int, k)
	for _, e := range edges {
		a := pos[e.a]
		if a < 0 {
			continue // a lexical source's edge
		}
		if b := pos[e.b]; b >= 0 {
			if j.At(a, b) == 0 {
				next[a] = append(next[a], b)
			}
			j.Set(a, b, j.At(a, b)+e.w)
			continue
		}
		if sinkW[a] == nil {
			sinkW[a] = map[int]float64{}
		}
		sinkW[a][e.b] += e.w
	}
	for a, w := range sinkW {
		sinks[a] = slices.Sorted(maps.Keys(w))
	}
	// Structural reachability through J_SS, reflexive.
	reach := make([][]bool, k)
	for a := range reach {
		reach[a] = make([]bool, k)
		reach[a][a] = true
		stack := []int{a}
		for len(stack) > 0 {
			u := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			for _, v := range next[u] {
				if j.At(u, v) != 0 && !reach[a][v] {
					reach[a][v] = true
					stack = append(stack, v)
				}
			}
		}
	}
	var inv mat.Dense
	errCycle := errors.New("data: unary and nullable rules form cycles of total probability 1 or more")
	if k > 0 {
		m := mat.NewDense(k, k, nil)
		for a := 0; a < k; a++ {
			for b := 0; b < k; b++ {
				v := -j.At(a, b)
				if a == b {
					v++
				}
				m.Set(a, b, v)
			}
		}
		if err := inv.Inverse(m); err != nil {
			return errCycle
		}
	}
	g.closure = g.closure[:0]
	row := map[int]float64{} // a source's entries, by symbol
	var cols []int
	for a := 0; a < n; a++ {
		pa := pos[a]
		if pa < 0 {
			g.closure = append(g.closure, closureEntry{a: a, b: a, w: 1})
			for _, t := range lexT[a] {
				w := lexW[a][t]
				if !(w > 0) || math.IsInf(w, 0) {
					return errCycle
				}
				g.closure = append(g.closure, closureEntry{a: a, b: t, w: w})
			}
			continue
		}
		clear(row)
		cols = cols[:0]
		for pc, c := range sources {
			if !reach[pa][pc] {
				continue
			}
			w := inv.At(pa, pc)
			row[c] = w
			cols = append(cols, c)
		}
		// Sinks: (I - J_SS)⁻¹ J_ST, and through the lexical sources
		// (I - J_SS)⁻¹ J_SL J_LT, summed over the reachable sources in
		// increasing order and their edges in increasing sink order.
		for pc := range sources {
			if !reach[pa][pc] || sinkW[pc] == nil {
				continue
			}
			w := inv.At(pa, pc)
			for _, t := range sinks[pc] {
				if _, seen := row[t]; !seen {
					cols = append(cols, t)
				}
				wt := w * sinkW[pc][t]
				row[t] += wt
				for _, u := range lexT[t] {
					if _, seen := row[u]; !seen {
						cols = append(cols, u)
					}
					row[u] += wt * lexW[t][u]
				}
			}
		}
		slices.Sort(cols)
		for _, b := range cols {
			w := row[b]
			if !(w > 0) || math.IsInf(w, 0) {
				return errCycle
			}
			g.closure = append(g.closure, closureEntry{a: a, b: b, w: w})
		}
	}
	return nil
}

// solve sets beta = (I - J)⁻¹ c.
func (g *PCFG) solve(beta, c []float64) {
	clear(beta)
	for _, e := range g.closure {
		beta[e.a] += e.w * c[e.b]
	}
}

// normalize divides v by its maximum, returning the log of that maximum,
// or -Inf if v is zero.
func normalize(v []float64) float64 {
	var mx float64
	for _, x := range v {
		if x > mx {
			mx = x
		}
	}
	if mx == 0 {
		return math.Inf(-1)
	}
	for i := range v {
		v[i] /= mx
	}
	return math.Log(mx)
}

// nonterminal returns the binarized index of the nonterminal named a.
func (g *PCFG) nonterminal(a string) (int, error) {
	i, ok := g.ntIndex[a]
	if !ok {
		return 0, fmt.Errorf("data: unknown nonterminal %q", a)
	}
	return i, nil
}

// Warnings returns what in the grammar is probably a mistake, although the
// grammar is valid (sampling, p(w | n) and the lower bound condition on
// the length, and are exact all the same), one sentence each, in a fixed
// order:
//
//   - nonterminals that the start symbol never reaches (their rules are
//     dead);
//   - terminals in no string (held only by dead rules, rules of
//     probability 0 or rules with a nonterminal that derives no string):
//     they are in the alphabet, and so in a model's vocabulary;
//   - nonterminals reached from the start symbol that derive no string.
//
// An improper grammar, whose derivations may never end, is not warned of:
// the paper's Dyck and hardest-CFL grammars are (their finite derivations
// have probability 0.026 and 0.22), and conditioned on a length they are
// distributions all the same.
func (g *PCFG) Warnings() []string {
	var out []string
	byLHS := map[string][]int{} // rules of positive probability by left side
	for i, r := range g.rules {
		if r.Prob != 0 {
			byLHS[r.LHS] = append(byLHS[r.LHS], i)
		}
	}
	reached := map[string]bool{g.start: true}
	for queue := []string{g.start}; len(queue) > 0; queue = queue[1:] {
		for _, ri := range byLHS[queue[0]] {
			for _, x := range g.rules[ri].RHS {
				if !reached[x] {
					reached[x] = true
					if _, nt := g.ntIndex[x]; nt {
						queue = append(queue, x)
					}
				}
			}
		}
	}
	var dead, unused []string
	for _, a := range g.nts {
		if !reached[a] {
			dead = append(dead, a)
		}
	}
	// The terminals of strings: those of the rules of positive probability
	// whose nonterminals all derive a string, reached from the start
	// symbol through such rules alone.
	prod := g.productive()
	derives := func(x string) bool { i, nt := g.ntIndex[x]; return !nt || prod[i] }
	used := map[string]bool{}
	if derives(g.start) {
		used[g.start] = true
		for queue := []string{g.start}; len(queue) > 0; queue = queue[1:] {
			for _, ri := range byLHS[queue[0]] {
				if !slices.ContainsFunc(g.rules[ri].RHS, func(x string) bool { return !derives(x) }) {
					for _, x := range g.rules[ri].RHS {
						if !used[x] {
							used[x] = true
							if _, nt := g.ntIndex[x]; nt {
								queue = append(queue, x)
							}
						}
					}
				}
			}
		}
	}
	for _, t := range g.terms {
		if !used[t] {
			unused = append(unused, t)
		}
	}
	if len(dead) > 0 {
		out = append(out, fmt.Sprintf("nonterminals never reached from the start symbol %s, whose rules are dead: %s", g.start, someNames(dead)))
	}
	if len(unused) > 0 {
		out = append(out, fmt.Sprintf("terminals held only by rules that are dead, have probability 0 or have a nonterminal that derives no string, in the alphabet (and a model's vocabulary) but in no string: %s", someNames(unused)))
	}
	var barren []string
	for i, a := range g.nts {
		if reached[a] && !prod[i] {
			barren = append(barren, a)
		}
	}
	if len(barren) > 0 {
		out = append(out, fmt.Sprintf("nonterminals that derive no string (every derivation from them goes on forever): %s", someNames(barren)))
	}
	return out
}

// someNames joins names with commas, the first 20 of them when there are
// more, with how many more.
func someNames(names []string) string {
	const most = 20
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
}
