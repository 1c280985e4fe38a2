package nskernel

import (
	"math/rand/v2"
	"testing"
)

// deepInputs draws log-weights in ±3 and subtracts 800 from every action
// taken in state 0. Every run pays it at step 1 (the stack starts in state
// 0), so the runs that begin in state 0 are the only ones there are, but in
// every γ block whose row for state 0 competes with rows for state 1 (runs
// that would have begun in state 1, which α gives no weight) that row lies
// more than 700 nats below the block's largest entry: the contractions
// need the exact fallbacks for it, and the terms P_a = α[a]·γ[a→b] of the
// reading are carried by such rows.
func deepInputs(rng *rand.Rand, c Config, batch, n int) *vecInputs {
	in := randVecInputs(rng, c, batch, n, 3)
	W := 2*c.States*c.Symbols + c.States
	for _, ld := range in.ld {
		for o := 0; o < len(ld); o += c.NumActions() {
			for x := 0; x < c.Symbols; x++ {
				row := ld[o+x*W : o+(x+1)*W] // row (q = 0, x)
				for j := range row {
					row[j] -= 800
				}
			}
		}
	}
	return in
}

// TestVectorExactFallback: with entries of γ blocks more than 700 nats
// below their block's largest entry, and carrying the runs that matter
// (see deepInputs), the readings agree with the brute-force enumeration to
// 1e-10 relative and the gradients with finite differences, as in
// TestVectorOracle and TestVectorGradients. Flushing such entries to zero
// loses the runs whose lowest pushed element is never popped.
func TestVectorExactFallback(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	const B, n = 2, 5
	seed := uint64(40)
	for _, D := range []int{0, 2, 3} {
		for _, f := range []bool{false, true} {
			for _, gm := range [][2]int{{1, 1}, {2, 2}, {3, 1}} {
				c := Config{States: 2, Symbols: gm[0], Vector: gm[1], Fixed: f, Window: D}
				in := deepInputs(rng, c, B, n)
				rd := runVec(NewTape(c, B, n), nil, in, 0, n)
				nr := c.ReadingSize()
				for i := 0; i < B; i++ {
					bf := bruteForceVector(c, seqOf(in.ld, i, B), seqOf(in.vs, i, B), in.bottom, D)
					for s := 0; s < n; s++ {
						got := rd[s][i*nr : (i+1)*nr]
						for j := range got {
							if !vecRelClose(got[j], bf[s][j], 1e-10) {
								t.Fatalf("%+v seq %d step %d: tape reads %v, brute force %v", c, i, s+1, got, bf[s])
							}
						}
					}
				}
				seed++
				vecGradCheck(t, c, nil, deepInputs(rng, c, B, 4), seed)
			}
		}
	}
}
