package data

import (
	"fmt"
	"math"
)

// checkString returns an error if w contains an index that is not a
// terminal of g.
func (g *PCFG) checkString(w []int) error {
	for i, x := range w {
		if x < 0 || x >= len(g.terms) {
			return fmt.Errorf("data: symbol %d at position %d is not a terminal index in [0, %d)", x, i, len(g.terms))
		}
	}
	return nil
}

// LogProb returns log p_G(w), the log of the total probability of all
// derivations of w, computed by an inside (CKY) pass over the binarized
// grammar with the same ε and unary handling as the weights by length. It is
// -Inf if w is not in the language. It returns an error if w contains an
// index that is not a terminal or is longer than MaxLength.
func (g *PCFG) LogProb(w []int) (float64, error) {
	if err := checkLength(len(w)); err != nil {
		return 0, err
	}
	if err := g.checkString(w); err != nil {
		return 0, err
	}
	n := len(w)
	if n == 0 {
		return math.Log(g.null[g.startB]), nil
	}
	nb := g.nb
	// Cell (i, j), 0 ≤ i < j ≤ n, holds the inside weights of span w[i:j]
	// as v[cell*nb:(cell+1)*nb]·2^s[cell]. Scaling by powers of two is
	// exact. Empty spans use g.null.
	cell := func(i, j int) int { return i*n - i*(i-1)/2 + (j - i - 1) }
	ncell := n * (n + 1) / 2
	v := make([]float64, ncell*nb)
	s := make([]int, ncell)
	c := make([]float64, nb)
	// Splits of the current span with nonzero weight: the left and right
	// cells and the sum of their log scales.
	type split struct {
		lc, rc, e int
	}
	splits := make([]split, 0, n)
	// ends[i] lists, in increasing order, the ends k of the cells (i, k)
	// computed so far with nonzero weight.
	ends := make([][]int, n)
	for l := 1; l <= n; l++ {
		for i := 0; i+l <= n; i++ {
			j := i + l
			ij := cell(i, j)
			beta := v[ij*nb : (ij+1)*nb]
			if l == 1 {
				clear(c)
				c[g.preterm+w[i]] = 1
				g.solve(beta, c)
				s[ij] = normalize2(beta)
				if s[ij] != zeroScale {
					ends[i] = append(ends[i], j)
				}
				continue
			}
			top := math.MinInt
			splits = splits[:0]
			for _, k := range ends[i] {
				lc := ij - (j - k) // cell(i, k)
				rc := cell(k, j)
				if s[rc] == zeroScale {
					continue
				}
				e := s[lc] + s[rc]
				splits = append(splits, split{lc, rc, e})
				top = max(top, e)
			}
			if len(splits) == 0 {
				s[ij] = zeroScale
				continue
			}
			clear(c)
			for _, sp := range splits {
				fk := pow2(sp.e - top)
				vl := v[sp.lc*nb : (sp.lc+1)*nb]
				vr := v[sp.rc*nb : (sp.rc+1)*nb]
				for b, rules := range g.byLeft {
					x := vl[b]
					if x == 0 {
						continue
					}
					x *= fk
					for _, r := range rules {
						c[r.a] += x * r.p * vr[r.c]
					}
				}
			}
			g.solve(beta, c)
			if e := normalize2(beta); e != zeroScale {
				s[ij] = top + e
				ends[i] = append(ends[i], j)
			} else {
				s[ij] = zeroScale
			}
		}
	}
	root := cell(0, n)
	if s[root] == zeroScale {
		return math.Inf(-1), nil
	}
	return math.Log(v[root*nb+g.startB]) + float64(s[root])*math.Ln2, nil
}

// LogProbGivenLength returns log(p_G(w) / p_G(|w|)), the log of the
// probability of w conditioned on its length. It is -Inf if w is not in the
// language.
func (g *PCFG) LogProbGivenLength(w []int) (float64, error) {
	if err := checkLength(len(w)); err != nil {
		return 0, err
	}
	lp, err := g.LogProb(w)
	if err != nil {
		return 0, err
	}
	if math.IsInf(lp, -1) {
		return lp, nil
	}
	ln, err := g.LogLengthProb(len(w))
	if err != nil {
		return 0, err
	}
	return lp - ln, nil
}

// zeroScale marks a chart cell whose weights are all zero.
const zeroScale = math.MinInt

// normalize2 divides v exactly by a power of two 2^e so that its maximum
// is in [0.5, 1), and returns e, or zeroScale if v is zero.
func normalize2(v []float64) int {
	var mx float64
	for _, x := range v {
		if x > mx {
			mx = x
		}
	}
	if mx == 0 {
		return zeroScale
	}
	_, e := math.Frexp(mx)
	if -e > 1023 {
		// 2^-e overflows; scale each element instead.
		for i := range v {
			v[i] = math.Ldexp(v[i], -e)
		}
		return e
	}
	f := pow2(-e)
	for i := range v {
		v[i] *= f
	}
	return e
}

// pow2 returns 2^k.
func pow2(k int) float64 {
	if k >= -1022 && k <= 1023 {
		return math.Float64frombits(uint64(k+1023) << 52)
	}
	return math.Ldexp(1, k)
}
