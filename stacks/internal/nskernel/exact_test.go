package nskernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// extremeLD returns action weights for one sequence of n steps whose rows
// are offset by up to ±offset nats (and vary within by ±spread), so that
// the blocks of γ hold entries hundreds of nats apart: entries below the
// fast path's range (deepE), kept as exact logs, and entries that the
// fast path leaves to the exact recomputation.
func extremeLD(rng *rand.Rand, c Config, n int, offset, spread float64) [][]float64 {
	ld := randLD(rng, c, 1, n, 1)
	W := c.rowLen()
	for s := range ld {
		for o := 0; o < len(ld[s]); o += W {
			off := offset * (2*rng.Float64() - 1)
			for j := 0; j < W; j++ {
				ld[s][o+j] += off + spread*(2*rng.Float64()-1)
			}
		}
	}
	return ld
}

// extremeForward runs a forward pass of n steps over one sequence of
// extremeLD weights (offsets ±300, spread ±90, drawn with seed) and returns
// the weights, the naive program's γ blocks (naiveDPGamma) and the
// sequence's state after the pass.
func extremeForward(c Config, seed uint64, n int) ([][]float64, [][][]float64, *seq) {
	ld := extremeLD(rand.New(rand.NewPCG(seed, 61)), c, n, 300, 90)
	tp := NewTape(c, 1, n)
	tp.Run(ld)
	_, gam := naiveDPGamma(c, ld)
	return ld, gam, tp.seqs[0]
}

// logClose reports whether two log weights agree: both −∞, or within tol
// relative to the larger of 1 and |want|.
func logClose(got, want, tol float64) bool {
	return got == want || math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// seqIndex is the index within a block of the configuration of state q and
// top symbol x in the kernel's layout (symbol-major: x·|Q|+q), and
// naiveIndex the one of naiveDPGamma (state-major: q·|Γ|+x).
func seqIndex(c Config, q, x int) int   { return x*c.States + q }
func naiveIndex(c Config, q, x int) int { return q*c.Symbols + x }

// TestExactGammaDeep compares every entry of every γ block of a forward
// pass, as its exact log (lat), with the naive log-space dynamic program,
// on weights whose blocks span hundreds of nats: the entries the fast path
// leaves to exactGamma, those stored as exact logs below its range and
// those it keeps scaled must all agree to 1e-9. (Terms of exactGamma with
// a factor 0 are skipped; one with a small nonzero factor skipped makes
// hundreds of entries disagree.)
func TestExactGammaDeep(t *testing.T) {
	for i, c := range []Config{
		{States: 3, Symbols: 3, Fixed: true, StateReading: true},
		{States: 2, Symbols: 3, StateReading: true},
		{States: 3, Symbols: 2, Fixed: true, Window: 5},
	} {
		t.Run(fmt.Sprintf("Q%dG%dfixed%vD%d", c.States, c.Symbols, c.Fixed, c.Window), func(t *testing.T) {
			_, gam, sq := extremeForward(c, uint64(i), 14)
			Q, G, m := c.States, c.Symbols, c.States*c.Symbols
			deep, checked := 0, 0
			for a := range gam {
				for b := range gam[a] {
					g := gam[a][b]
					if g == nil || b >= sq.np {
						continue
					}
					bi := sq.blk(a, b)
					for q := 0; q < Q; q++ {
						for x := 0; x < G; x++ {
							for r := 0; r < Q; r++ {
								for y := 0; y < G; y++ {
									e := seqIndex(c, q, x)*m + seqIndex(c, r, y)
									want := g[naiveIndex(c, q, x)*m+naiveIndex(c, r, y)]
									got := sq.lat(bi, e)
									checked++
									if sq.E[bi*m*m+e] < deepE && want != negInf {
										deep++
									}
									if !logClose(got, want, 1e-9) {
										t.Fatalf("γ[%d→%d] (q%d x%d → r%d y%d): log %.15g, naive %.15g", a, b, q, x, r, y, got, want)
									}
								}
							}
						}
					}
				}
			}
			if deep == 0 {
				t.Fatalf("no nonzero entry of the %d checked is below the fast path's range: the test does not reach the exact logs", checked)
			}
		})
	}
}

// TestExactPopBackDeep checks the adjoint of one pop term, exactPopBack,
// against the naive weights: after a forward pass on weights spanning
// hundreds of nats, for every γ block (a,b), split point k and finite
// entry (i,j), the weight it adds to the adjoints of γ(a,k) and of the G'
// block (k,b) for each u must be exp(log γ(a,k)(i,uy) + log G'(k,b)(uy,r)
// − log γ(a,b)(i,j)), with both logs from the naive dynamic program, and
// some of those weights, with a factor below the fast path's range, must
// be large.
func TestExactPopBackDeep(t *testing.T) {
	c := Config{States: 3, Symbols: 3, Fixed: true, StateReading: true}
	ld, gam, sq := extremeForward(c, 3, 12)
	Q, G, m := c.States, c.Symbols, c.States*c.Symbols
	W := 2*m + Q
	base := 1 // the fixed bottom's column
	// naiveGp(k, b)[uy·|Q|+r]: log Σ_sz γ(k,b−1)(uy,sz)·pop_b(sz,r), naive indices.
	naiveGp := func(k, b int) []float64 {
		d := ld[b-base-1]
		out := make([]float64, m*Q)
		for uy := 0; uy < m; uy++ {
			for r := 0; r < Q; r++ {
				v := negInf
				for sz := 0; sz < m; sz++ {
					v = logAdd(v, gam[k][b-1][uy*m+sz]+d[sz*W+2*m+r])
				}
				out[uy*Q+r] = v
			}
		}
		return out
	}
	significantDeep := 0
	for b := base + 2; b < sq.np; b++ {
		for a := 0; a <= b-3; a++ {
			for k := a + 1; k <= b-2; k++ {
				gp := naiveGp(k, b)
				bk, pk := sq.blk(a, k), sq.gp(k, b)
				for q := 0; q < Q; q++ {
					for x := 0; x < G; x++ {
						for r := 0; r < Q; r++ {
							for y := 0; y < G; y++ {
								L := gam[a][b][naiveIndex(c, q, x)*m+naiveIndex(c, r, y)]
								if L == negInf {
									continue
								}
								clear(sq.AX[bk*m*m : (bk+1)*m*m])
								clear(sq.AXP[pk*m*Q : (pk+1)*m*Q])
								i, j := seqIndex(c, q, x), seqIndex(c, r, y)
								sq.exactPopBack(a, b, k, i, j, 1, sq.lat(sq.blk(a, b), i*m+j))
								for u := 0; u < Q; u++ {
									uyN, uyS := naiveIndex(c, u, y), seqIndex(c, u, y)
									want := math.Exp(gam[a][k][naiveIndex(c, q, x)*m+uyN] + gp[uyN*Q+r] - L)
									gotX, gotP := sq.AX[bk*m*m+i*m+uyS], sq.AXP[pk*m*Q+uyS*Q+r]
									if math.Abs(gotX-want) > 1e-9*want || math.Abs(gotP-want) > 1e-9*want {
										t.Fatalf("γ[%d→%d] split %d, entry (q%d x%d → r%d y%d), u = %d: weights %.15g (γ) and %.15g (G'), naive %.15g",
											a, b, k, q, x, r, y, u, gotX, gotP, want)
									}
									if want > 1e-3 && (sq.E[bk*m*m+i*m+uyS] < deepE || sq.X[pk*m*Q+uyS*Q+r] < deepE) {
										significantDeep++
									}
								}
							}
						}
					}
				}
			}
		}
	}
	if significantDeep == 0 {
		t.Fatal("no large weight has a factor below the fast path's range: the test does not reach the exact logs")
	}
}

// TestRowLive checks the invariant that lets finalize skip the exact
// recomputation of entries that are 0: after every step, from the initial
// stack and from carried states, in a tape's first run and in its next,
// rowLive[a·m+i] holds exactly when a stored block γ(a,b) has a nonzero
// entry in row i; and the fixed bottom's dead rows are met.
func TestRowLive(t *testing.T) {
	for i, c := range []Config{
		{States: 3, Symbols: 3, Fixed: true, StateReading: true},
		{States: 3, Symbols: 3, Fixed: true, StateReading: true, Window: 5},
		{States: 2, Symbols: 3, Window: 4},
	} {
		rng := rand.New(rand.NewPCG(uint64(i), 67))
		const n = 16
		chunks := []int{3, 1, 4}
		if c.Window == 0 {
			chunks = []int{n} // a carried state is for the memory-limited variant
		}
		tp := NewTape(c, 1, n)
		r := make([]float64, c.ReadingSize())
		m := c.States * c.Symbols
		dead := 0
		// Two runs on the same tape: the second must not see the first's.
		for run := 0; run < 2; run++ {
			ld := extremeLD(rng, c, n, 300, 90)
			var st *State
			for s, ci := 0, 0; s < n; ci++ {
				if err := tp.Begin(st); err != nil {
					t.Fatal(err)
				}
				for k := 0; k < chunks[ci%len(chunks)] && s < n; k++ {
					tp.Step(ld[s], r)
					s++
					sq := tp.seqs[0]
					for a := 0; a < sq.np; a++ {
						for row := 0; row < m; row++ {
							want := false
							for b := a + 1; b < sq.np; b++ {
								if sq.lo(b) > a {
									continue // outside the window: not stored
								}
								for j := 0; j < m; j++ {
									want = want || !sq.latZero(sq.blk(a, b), row*m+j)
								}
							}
							if got := sq.rowLive[a*m+row]; got != want {
								t.Fatalf("%+v step %d: rowLive of position %d row %d is %v, the stored blocks say %v", c, s, a, row, got, want)
							}
							if !want && a+1 < sq.np {
								dead++
							}
						}
					}
				}
				if c.Window > 0 {
					st = tp.State()
				}
			}
		}
		if c.Fixed && dead == 0 {
			t.Errorf("%+v: no dead row met", c)
		}
	}
}
