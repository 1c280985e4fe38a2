package nskernel

import (
	"fmt"
	"math"
	"strings"
)

// Two references written from the semantics, independent of the tape: a
// brute-force enumerator of PDA runs that carries the pushed vectors, and
// the literal ζ recursion (a vector per entry of γ) in real arithmetic.

// vbfElem is a stack element: its symbol and i, the time before the step
// that pushed it (−1 for the fixed bottom, −2 for the original bottom).
// Its vector is that of the push (vs[i]) or the bottom vector; a replace
// changes sym and keeps i, so the element keeps its vector.
type vbfElem struct{ sym, i int }

type vbfConf struct {
	q     int
	stack []vbfElem
}

func (c vbfConf) key() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "%d|", c.q)
	for _, e := range c.stack {
		fmt.Fprintf(&sb, "%d:%d,", e.sym, e.i)
	}
	return sb.String()
}

// bruteForceVector returns the readings r_1 … r_n (external layout, size
// |Q||Γ|m) of one sequence with step log-weights ld[t−1] and pushed
// vectors vs[t−1], by enumerating every run of the PDA: the weight of a
// run is the product of its actions' weights, and
//
//	r_t[(r·|Γ|+y)·m+j] = Σ_runs weight · [state r, top symbol y] · (top vector)_j / Σ_runs weight.
//
// The initial stack holds the bottom symbol 0 with vector bottom, in state
// 0. Original: the first step must push, the bottom is never replaced,
// and no pop uncovers it; fixed: the bottom is an ordinary symbol that
// is never popped. window > 0 discards the runs in which, at some step t,
// the top element was pushed at step i+1 with t − i > window (the fixed
// bottom counting as pushed at step 0, i = −1).
func bruteForceVector(c Config, ld, vs [][]float64, bottom []float64, window int) [][]float64 {
	Q, G, m := c.States, c.Symbols, c.Vector
	K := Q * G
	W := 2*K + Q
	b0 := vbfElem{0, -2}
	if c.Fixed {
		b0.i = -1
	}
	vecOf := func(e vbfElem) []float64 {
		if e.i < 0 {
			return bottom
		}
		return vs[e.i]
	}
	c0 := vbfConf{0, []vbfElem{b0}}
	cur := map[string]float64{c0.key(): 0}
	confs := map[string]vbfConf{c0.key(): c0}
	var out [][]float64
	for t := 1; t <= len(ld); t++ {
		next := map[string]float64{}
		nconfs := map[string]vbfConf{}
		add := func(cf vbfConf, w float64) {
			if w == math.Inf(-1) {
				return
			}
			top := cf.stack[len(cf.stack)-1]
			if window > 0 && top.i >= -1 && t-top.i > window {
				return
			}
			k := cf.key()
			if old, ok := next[k]; ok {
				next[k] = logAdd(old, w)
			} else {
				next[k] = w
				nconfs[k] = cf
			}
		}
		for k, w := range cur {
			cf := confs[k]
			n := len(cf.stack)
			top := cf.stack[n-1]
			row := ld[t-1][(cf.q*G+top.sym)*W:]
			for r := 0; r < Q; r++ {
				for y := 0; y < G; y++ {
					st := append(append([]vbfElem(nil), cf.stack...), vbfElem{y, t - 1})
					add(vbfConf{r, st}, w+row[r*G+y])
					if !(n == 1 && !c.Fixed) {
						st := append([]vbfElem(nil), cf.stack...)
						st[n-1].sym = y
						add(vbfConf{r, st}, w+row[K+r*G+y])
					}
				}
				if (c.Fixed && n >= 2) || (!c.Fixed && n >= 3) {
					add(vbfConf{r, append([]vbfElem(nil), cf.stack[:n-1]...)}, w+row[2*K+r])
				}
			}
		}
		cur, confs = next, nconfs
		mx := math.Inf(-1)
		for _, w := range cur {
			mx = math.Max(mx, w)
		}
		rd := make([]float64, K*m)
		var z float64
		for k, w := range cur {
			cf := confs[k]
			top := cf.stack[len(cf.stack)-1]
			p := math.Exp(w - mx)
			z += p
			for j, v := range vecOf(top) {
				rd[(cf.q*G+top.sym)*m+j] += p * v
			}
		}
		for j := range rd {
			if z > 0 {
				rd[j] /= z
			}
		}
		out = append(out, rd)
	}
	return out
}

// naiveZeta computes the readings of one sequence with the literal
// equations, in real arithmetic (for small weights), over positions as the
// tape numbers them (for the fixed bottom, position 0 is i = −1 and
// position 1 time 0), with configurations indexed q·|Γ|+x:
//
//	γ[t−1→t][qx→ry] = Δ[t][qx→r,•y]                ζ[t−1→t] = Δ[t][qx→r,•y]·v_t
//	γ[i→t][qx→ry] = Σ_{sz} γ[i→t−1][qx→sz] Δ[t][sz→ry]
//	             + Σ_{k=i+1}^{t−2} Σ_u γ[i→k][qx→uy] γ′[k→t][uy→r]
//	ζ[i→t][qx→ry] = Σ_{sz} ζ[i→t−1][qx→sz] Δ[t][sz→ry]
//	             + Σ_{k=i+1}^{t−2} Σ_u ζ[i→k][qx→uy] γ′[k→t][uy→r]
//	γ′[k→t][uy→r] = Σ_{sz} γ[k→t−1][uy→sz] Δ[t][sz→r,ε]
//	α[t] = Σ_i α[i] γ[i→t],  η[t] = Σ_i α[i] ζ[i→t],  r_t = η[t] / Σ α[t]
//
// with, for the fixed bottom, γ[−1→0] and ζ[−1→0] one-hot at (0,0)→(0,0)
// (ζ carrying the bottom vector), and only t − i ≤ window kept when
// window > 0.
func naiveZeta(c Config, ld, vs [][]float64, bottom []float64, window int) [][]float64 {
	Q, G, m := c.States, c.Symbols, c.Vector
	K := Q * G
	W := 2*K + Q
	n := len(ld)
	base := 0
	if c.Fixed {
		base = 1
	}
	N := base + n + 1
	D := window
	if D == 0 {
		D = N + 1
	}
	gam := make([][][]float64, N)
	zeta := make([][][]float64, N) // [a][b][(qx·K+ry)·m+j]
	for a := range gam {
		gam[a] = make([][]float64, N)
		zeta[a] = make([][]float64, N)
	}
	in := func(a, b int) bool { return a >= 0 && b-a <= D && gam[a][b] != nil }
	alpha := make([][]float64, N)
	alpha[0] = make([]float64, K)
	alpha[0][0] = 1
	if c.Fixed {
		alpha[1] = alpha[0]
		gam[0][1] = make([]float64, K*K)
		gam[0][1][0] = 1
		zeta[0][1] = make([]float64, K*K*m)
		copy(zeta[0][1], bottom)
	}
	var out [][]float64
	for t := 1; t <= n; t++ {
		b := base + t
		d := ld[t-1]
		push := func(qx, ry int) float64 { return math.Exp(d[qx*W+ry]) }
		rep := func(sz, ry int) float64 { return math.Exp(d[sz*W+K+ry]) }
		pop := func(sz, r int) float64 { return math.Exp(d[sz*W+2*K+r]) }
		gp := make([][]float64, b) // γ′[k→b]
		for k := max(0, b-D) + 1; k <= b-2; k++ {
			if !in(k, b-1) {
				continue
			}
			gp[k] = make([]float64, K*Q)
			for uy := 0; uy < K; uy++ {
				for r := 0; r < Q; r++ {
					for sz := 0; sz < K; sz++ {
						gp[k][uy*Q+r] += gam[k][b-1][uy*K+sz] * pop(sz, r)
					}
				}
			}
		}
		for a := max(0, b-D); a < b; a++ {
			g := make([]float64, K*K)
			z := make([]float64, K*K*m)
			for qx := 0; qx < K; qx++ {
				for r := 0; r < Q; r++ {
					for y := 0; y < G; y++ {
						ry := r*G + y
						e := qx*K + ry
						if a == b-1 {
							g[e] = push(qx, ry)
							for j := 0; j < m; j++ {
								z[e*m+j] = g[e] * vs[t-1][j]
							}
							continue
						}
						if in(a, b-1) {
							for sz := 0; sz < K; sz++ {
								w := rep(sz, ry)
								g[e] += gam[a][b-1][qx*K+sz] * w
								for j := 0; j < m; j++ {
									z[e*m+j] += zeta[a][b-1][(qx*K+sz)*m+j] * w
								}
							}
						}
						for k := a + 1; k <= b-2; k++ {
							if !in(a, k) || gp[k] == nil {
								continue
							}
							for u := 0; u < Q; u++ {
								uy := u*G + y
								w := gp[k][uy*Q+r]
								g[e] += gam[a][k][qx*K+uy] * w
								for j := 0; j < m; j++ {
									z[e*m+j] += zeta[a][k][(qx*K+uy)*m+j] * w
								}
							}
						}
					}
				}
			}
			gam[a][b], zeta[a][b] = g, z
		}
		al := make([]float64, K)
		eta := make([]float64, K*m)
		for a := max(0, b-D); a < b; a++ {
			for qx := 0; qx < K; qx++ {
				for ry := 0; ry < K; ry++ {
					al[ry] += alpha[a][qx] * gam[a][b][qx*K+ry]
					for j := 0; j < m; j++ {
						eta[ry*m+j] += alpha[a][qx] * zeta[a][b][(qx*K+ry)*m+j]
					}
				}
			}
		}
		alpha[b] = al
		var sum float64
		for _, v := range al {
			sum += v
		}
		for i := range eta {
			if sum > 0 {
				eta[i] /= sum
			}
		}
		out = append(out, eta)
	}
	return out
}
