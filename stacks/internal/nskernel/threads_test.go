package nskernel

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestSetThreads checks that a tape bounded to one thread never starts a
// helper goroutine, where an unbounded one (two threads available, work
// far above parallelWork) does, and that both compute the same readings
// and gradients.
func TestSetThreads(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	c := Config{States: 2, Symbols: 3, StateReading: true}
	const B, n = 4, 40
	rng := rand.New(rand.NewPCG(41, 42))
	ld := randLD(rng, c, B, n, 1)
	gr := make([]float64, B*c.ReadingSize())
	for i := range gr {
		gr[i] = rng.NormFloat64()
	}
	run := func(tp *Tape) (reads, grads []float64) {
		for range 3 { // the dispatcher alternates to sample both ways
			tp.Begin(nil)
			reads = reads[:0]
			r := make([]float64, B*c.ReadingSize())
			for s := 0; s < n; s++ {
				tp.Step(ld[s], r)
				reads = append(reads, r...)
			}
			grads = grads[:0]
			g := make([]float64, B*c.NumActions())
			for s := n; s >= 1; s-- {
				tp.Backward(s, gr, g)
				grads = append(grads, g...)
			}
		}
		return reads, grads
	}
	one := NewTape(c, B, n)
	one.SetThreads(1)
	r1, g1 := run(one)
	if one.started != 0 {
		t.Fatalf("a tape bounded to one thread started %d helpers", one.started)
	}
	two := NewTape(c, B, n)
	r2, g2 := run(two)
	if two.started == 0 {
		t.Fatalf("an unbounded tape started no helper on two threads")
	}
	closeSlices(t, "readings", r1, r2)
	closeSlices(t, "gradients", g1, g2)
}
