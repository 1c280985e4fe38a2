package nskernel

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// TestParallelDispatch: readings and gradients do not depend on how the
// batch is dispatched (serial, parallel, or chosen by measurement), bit for
// bit. Run with -race, it also checks the hand-off to helper goroutines.
func TestParallelDispatch(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("needs GOMAXPROCS >= 2")
	}
	c := Config{States: 2, Symbols: 3, StateReading: true}
	const B, n = 8, 40
	rng := rand.New(rand.NewPCG(29, 30))
	ld := randLD(rng, c, B, n, 2)
	coef := make([][]float64, n)
	for s := range coef {
		coef[s] = randSlice(rng, B*c.ReadingSize())
	}
	run := func(setup func(*Tape)) (float64, [][]float64) {
		tp := NewTape(c, B, n)
		setup(tp)
		return lossAndGrad(tp, false, ld, coef, true)
	}
	l0, g0 := run(func(tp *Tape) { tp.workers = 1 })
	for name, setup := range map[string]func(*Tape){
		"parallel": func(tp *Tape) { tp.rate = [2][2]float64{{1, 1e-9}, {1, 1e-9}} }, // parallel except probes
		"measured": func(tp *Tape) {},
	} {
		for rep := 0; rep < 3; rep++ {
			l, g := run(setup)
			if l != l0 {
				t.Fatalf("%s: loss %v, serial %v", name, l, l0)
			}
			for s := range g0 {
				for j := range g0[s] {
					if g[s][j] != g0[s][j] {
						t.Fatalf("%s: gradient step %d [%d] = %v, serial %v", name, s+1, j, g[s][j], g0[s][j])
					}
				}
			}
		}
	}
}

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
