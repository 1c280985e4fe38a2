package nskernel

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// BenchmarkVectorForwardBackward times a forward and a backward pass over a
// batch of 10 sequences of 60 steps with |Q| = 2, |Γ| = 3 (unlimited,
// original bottom, log-weights uniform in ±1): the RNS stack's kernel
// (nskernel, state-and-symbol reading) and the VRNS kernel with vectors
// of size 1 and 5.
func BenchmarkVectorForwardBackward(b *testing.B) {
	const B, n, Q, G = 10, 60, 2, 3
	b.Run("RNS", func(b *testing.B) {
		c := Config{States: Q, Symbols: G, StateReading: true}
		rng := rand.New(rand.NewPCG(1, 1))
		in := randVecInputs(rng, Config{States: Q, Symbols: G, Vector: 1}, B, n, 1)
		tp := NewTape(c, B, n)
		r := make([]float64, B*c.ReadingSize())
		gr := make([]float64, B*c.ReadingSize())
		for i := range gr {
			gr[i] = rng.NormFloat64()
		}
		gd := make([]float64, B*c.NumActions())
		b.ResetTimer()
		for range b.N {
			if err := tp.Begin(nil); err != nil {
				b.Fatal(err)
			}
			for s := 0; s < n; s++ {
				tp.Step(in.ld[s], r)
			}
			for s := n; s >= 1; s-- {
				tp.Backward(s, gr, gd)
			}
		}
	})
	for _, m := range []int{1, 5} {
		b.Run(fmt.Sprintf("VRNS/m=%d", m), func(b *testing.B) {
			c := Config{States: Q, Symbols: G, Vector: m}
			rng := rand.New(rand.NewPCG(1, 1))
			in := randVecInputs(rng, c, B, n, 1)
			tp := NewTape(c, B, n)
			r := make([]float64, B*c.ReadingSize())
			gr := make([]float64, B*c.ReadingSize())
			for i := range gr {
				gr[i] = rng.NormFloat64()
			}
			gd := make([]float64, B*c.NumActions())
			gv := make([]float64, B*m)
			gb := make([]float64, m)
			b.ResetTimer()
			for range b.N {
				if err := tp.BeginVector(nil, in.bottom); err != nil {
					b.Fatal(err)
				}
				for s := 0; s < n; s++ {
					tp.StepVector(in.ld[s], in.vs[s], r)
				}
				for s := n; s >= 1; s-- {
					tp.BackwardVector(s, gr, gd, gv, gb)
				}
			}
		})
	}
}
