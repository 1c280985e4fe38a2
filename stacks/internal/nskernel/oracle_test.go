package nskernel

import (
	"math"

	"github.com/nsrnn/nsrnn/semiring"
	"github.com/nsrnn/nsrnn/stacks/internal/nsenum"
)

// This file holds two independent references: the brute-force enumerator
// of PDA runs written from the semantics (package nsenum, shared with the
// tests of stacks.Viterbi), and a naive O(n⁴) log-space implementation of
// the dynamic program's equations (unlimited and memory-limited) without
// the γ' factorization or any fast path.

func logAdd(a, b float64) float64 {
	if a == math.Inf(-1) {
		return b
	}
	if b == math.Inf(-1) {
		return a
	}
	if a < b {
		a, b = b, a
	}
	return a + math.Log1p(math.Exp(b-a))
}

// bruteForce returns the log α[t] (external index r*|Γ|+y) for t = 1..n of
// one sequence: the shared enumerator of PDA runs (package nsenum) in the
// log-sum semiring. window > 0 discards runs in which an element is on top
// at a time t' with t' − (push time − 1) > window (the γ band constraint;
// the fixed bottom counts as pushed at time 0).
func bruteForce(c Config, ld [][]float64, window int) [][]float64 {
	ec := nsenum.Config{States: c.States, Symbols: c.Symbols, Fixed: c.Fixed, Window: window}
	return nsenum.Alphas[float64](ec, semiring.LogSum{}, len(ld), func(t, a int, _ nsenum.Op) float64 { return ld[t-1][a] })
}

// readingFromLogAlpha computes the reading from log α (external index).
func readingFromLogAlpha(c Config, al []float64) []float64 {
	Q, G := c.States, c.Symbols
	mx := math.Inf(-1)
	for _, v := range al {
		mx = math.Max(mx, v)
	}
	out := make([]float64, c.ReadingSize())
	if mx == math.Inf(-1) {
		return out
	}
	var z float64
	for _, v := range al {
		z += math.Exp(v - mx)
	}
	for r := 0; r < Q; r++ {
		for y := 0; y < G; y++ {
			p := math.Exp(al[r*G+y]-mx) / z
			if c.StateReading {
				out[r*G+y] = p
			} else {
				out[y] += p
			}
		}
	}
	return out
}

// naiveDP computes log α[t] (external index) for t = 1..n with the
// equations of the dynamic program, in positions (see the package comment),
// with the pop term summed over (k,u,s,z) directly.
func naiveDP(c Config, ld [][]float64) [][]float64 {
	out, _ := naiveDPGamma(c, ld)
	return out
}

// naiveDPGamma is naiveDP that also returns the log weights of the γ
// blocks: gam[a][b][i·m+j], with the index i = q·|Γ|+x of state q and
// symbol x (nil for a block outside the window or not computed).
func naiveDPGamma(c Config, ld [][]float64) ([][]float64, [][][]float64) {
	Q, G := c.States, c.Symbols
	m := Q * G
	W := 2*m + Q
	n := len(ld)
	base := 0
	if c.Fixed {
		base = 1
	}
	N := base + n + 1
	D := c.Window
	if D == 0 {
		D = N + 1
	}
	ninf := math.Inf(-1)
	newMat := func() []float64 {
		v := make([]float64, m*m)
		for i := range v {
			v[i] = ninf
		}
		return v
	}
	gam := make([][][]float64, N)
	for a := range gam {
		gam[a] = make([][]float64, N)
	}
	get := func(a, b int) []float64 {
		if a < 0 || b-a > D || gam[a][b] == nil {
			return nil
		}
		return gam[a][b]
	}
	alpha := make([][]float64, N)
	oh := make([]float64, m)
	for i := range oh {
		oh[i] = ninf
	}
	oh[0] = 0
	alpha[0] = oh
	if c.Fixed {
		alpha[1] = oh
		g := newMat()
		g[0] = 0
		gam[0][1] = g
	}
	var out [][]float64
	for t := 1; t <= n; t++ {
		b := base + t
		d := ld[t-1]
		for a := max(0, b-D); a < b; a++ {
			g := newMat()
			for qx := 0; qx < m; qx++ {
				for r := 0; r < Q; r++ {
					for y := 0; y < G; y++ {
						ry := r*G + y
						v := ninf
						if a == b-1 {
							v = d[qx*W+ry]
						} else {
							if p := get(a, b-1); p != nil {
								for sz := 0; sz < m; sz++ {
									v = logAdd(v, p[qx*m+sz]+d[sz*W+m+ry])
								}
							}
							for k := a + 1; k <= b-2; k++ {
								g1, g2 := get(a, k), get(k, b-1)
								if g1 == nil || g2 == nil {
									continue
								}
								for u := 0; u < Q; u++ {
									uy := u*G + y
									for sz := 0; sz < m; sz++ {
										v = logAdd(v, g1[qx*m+uy]+g2[uy*m+sz]+d[sz*W+2*m+r])
									}
								}
							}
						}
						g[qx*m+ry] = v
					}
				}
			}
			gam[a][b] = g
		}
		al := make([]float64, m)
		for j := range al {
			al[j] = ninf
			for a := max(0, b-D); a < b; a++ {
				g := get(a, b)
				for qx := 0; qx < m; qx++ {
					al[j] = logAdd(al[j], alpha[a][qx]+g[qx*m+j])
				}
			}
		}
		alpha[b] = al
		out = append(out, al)
	}
	return out, gam
}
