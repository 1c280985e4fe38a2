package data

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// lengthTable holds inside weights by length for lengths 0..len(s)-1. The
// inside weight of binarized nonterminal A at length n is v[n][A]·exp(s[n]).
// Tables are immutable once published.
type lengthTable struct {
	v [][]float64
	s []float64
	// f[n][k] = exp(s[k] + s[n-k] - s[n]), the factor that brings a
	// product of weights at lengths k and n-k to the scale of length n.
	f [][]float64
}

func (t *lengthTable) maxLen() int { return len(t.s) - 1 }

// table returns inside weights by length up to at least n, computing more
// lengths if needed. n must be in [0, MaxLength].
func (g *PCFG) table(n int) *lengthTable {
	if t := g.tab.Load(); t != nil && t.maxLen() >= n {
		return t
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	old := g.tab.Load()
	if old != nil && old.maxLen() >= n {
		return old
	}
	// Lengths are computed ahead, to 128 at first, so that asking for
	// one more at a time costs little; a length costs time in the number
	// of binary rules times the length, so a grammar of very many rules
	// gets the lengths asked for alone (and twice as many as before when
	// it needs more).
	target := max(n, 128)
	if len(g.binary) > 1<<14 {
		target = n
	}
	if old != nil {
		target = max(target, 2*old.maxLen())
	}
	target = min(target, MaxLength)
	t := &lengthTable{}
	if old != nil {
		t.v = append(t.v, old.v...)
		t.s = append(t.s, old.s...)
		t.f = append(t.f, old.f...)
	}
	c := make([]float64, g.nb)
	for m := len(t.s); m <= target; m++ {
		v := make([]float64, g.nb)
		var scale float64
		switch m {
		case 0:
			copy(v, g.null)
		case 1:
			clear(c)
			for i := range g.terms {
				c[g.preterm+i] = 1
			}
			g.solve(v, c)
			scale = normalize(v)
		default:
			clear(c)
			top := math.Inf(-1)
			for k := 1; k < m; k++ {
				top = math.Max(top, t.s[k]+t.s[m-k])
			}
			if !math.IsInf(top, -1) {
				for k := 1; k < m; k++ {
					e := t.s[k] + t.s[m-k]
					if math.IsInf(e, -1) {
						continue
					}
					fk := math.Exp(e - top)
					vl, vr := t.v[k], t.v[m-k]
					for _, r := range g.binary {
						c[r.a] += fk * r.p * vl[r.b] * vr[r.c]
					}
				}
			}
			g.solve(v, c)
			scale = top + normalize(v)
		}
		t.v = append(t.v, v)
		t.s = append(t.s, scale)
		f := make([]float64, m+1)
		if !math.IsInf(scale, -1) {
			for k := range f {
				if e := t.s[k] + t.s[m-k]; !math.IsInf(e, -1) {
					f[k] = math.Exp(e - scale)
				}
			}
		}
		t.f = append(t.f, f)
	}
	g.tab.Store(t)
	return t
}

func checkLength(n int) error {
	if n < 0 || n > MaxLength {
		return fmt.Errorf("data: length %d outside [0, %d]", n, MaxLength)
	}
	return nil
}

// LogInside returns log β_A(n), the log of the total probability of all
// derivations from nonterminal a of strings of length n. It is -Inf when
// there are none.
func (g *PCFG) LogInside(a string, n int) (float64, error) {
	i, err := g.nonterminal(a)
	if err != nil {
		return 0, err
	}
	if err := checkLength(n); err != nil {
		return 0, err
	}
	t := g.table(n)
	return math.Log(t.v[n][i]) + t.s[n], nil
}

// LogInsideByLength returns the table of log inside weights of every
// nonterminal for every length up to maxLen: element [n][i] is log β_A(n)
// for A = g.Nonterminals()[i].
func (g *PCFG) LogInsideByLength(maxLen int) ([][]float64, error) {
	if err := checkLength(maxLen); err != nil {
		return nil, err
	}
	t := g.table(maxLen)
	out := make([][]float64, maxLen+1)
	for n := range out {
		out[n] = make([]float64, len(g.nts))
		for i := range g.nts {
			out[n][i] = math.Log(t.v[n][i]) + t.s[n]
		}
	}
	return out, nil
}

// LogLengthProb returns log p_G(|w| = n), the log of the probability that
// the grammar generates a string of length n. It is -Inf for lengths that
// the grammar cannot generate.
func (g *PCFG) LogLengthProb(n int) (float64, error) {
	if err := checkLength(n); err != nil {
		return 0, err
	}
	t := g.table(n)
	return math.Log(t.v[n][g.startB]) + t.s[n], nil
}

// ValidLengths returns, in increasing order, the lengths n in [minLen,
// maxLen] with p_G(|w| = n) > 0.
func (g *PCFG) ValidLengths(minLen, maxLen int) ([]int, error) {
	if err := checkRange(minLen, maxLen); err != nil {
		return nil, err
	}
	t := g.table(maxLen)
	var ns []int
	for n := minLen; n <= maxLen; n++ {
		if t.v[n][g.startB] > 0 {
			ns = append(ns, n)
		}
	}
	return ns, nil
}

func checkRange(minLen, maxLen int) error {
	if minLen < 0 || maxLen > MaxLength || minLen > maxLen {
		return fmt.Errorf("data: invalid length range [%d, %d]: need 0 <= min <= max <= %d", minLen, maxLen, MaxLength)
	}
	return nil
}

// Sample returns a string drawn from the grammar's distribution conditioned
// on length n, p_G(w | |w| = n). It returns an error if the grammar cannot
// generate strings of length n or rng is nil.
//
// rng is a *rand.Rand of math/rand/v2, e.g. rand.New(rand.NewPCG(seed, 0)).
func (g *PCFG) Sample(n int, rng *rand.Rand) ([]int, error) {
	if rng == nil {
		return nil, errors.New("data: nil random source")
	}
	if err := checkLength(n); err != nil {
		return nil, err
	}
	t := g.table(n)
	if !(t.v[n][g.startB] > 0) {
		return nil, fmt.Errorf("data: the grammar generates no strings of length %d", n)
	}
	return g.sample(t, g.startB, n, rng, make([]int, 0, n)), nil
}

// sample appends to out a yield drawn from the derivations of binarized
// nonterminal a with yield length n, in proportion to their probability.
// β_a(n) must be positive.
func (g *PCFG) sample(t *lengthTable, a, n int, rng *rand.Rand, out []int) []int {
	for {
		if n == 0 {
			// Every derivation of ε has the same, empty yield.
			return out
		}
		if a >= g.preterm && a < g.preterm+len(g.terms) {
			// Preterminals have the single rule P_t → t.
			return append(out, a-g.preterm)
		}
		b, c, k := g.choose(t, a, n, rng)
		if c < 0 {
			a = b
			continue
		}
		out = g.sample(t, b, k, rng, out)
		a, n = c, n-k
	}
}

// choose draws the first step of a derivation from a with yield length
// n ≥ 1: either a unary rule a → b (c < 0) or a binary rule a → b c with b
// deriving the first k symbols.
func (g *PCFG) choose(t *lengthTable, a, n int, rng *rand.Rand) (b, c, k int) {
	vn := t.v[n]
	u := rng.Float64() * vn[a]
	// The last option with positive weight is taken if rounding leaves u
	// above the running sum.
	b, c, k = -1, -1, -1
	for _, i := range g.byLHS[a].unary {
		r := g.unary[i]
		w := r.p * vn[r.b]
		if w <= 0 {
			continue
		}
		b, c = r.b, -1
		if u < w {
			return b, c, k
		}
		u -= w
	}
	f := t.f[n]
	for _, i := range g.byLHS[a].binary {
		r := g.binary[i]
		for j := 0; j <= n; j++ {
			w := r.p * t.v[j][r.b] * t.v[n-j][r.c] * f[j]
			if w <= 0 {
				continue
			}
			b, c, k = r.b, r.c, j
			if u < w {
				return b, c, k
			}
			u -= w
		}
	}
	return b, c, k
}
