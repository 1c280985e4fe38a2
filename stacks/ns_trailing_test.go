package stacks_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/nsrnn/nsrnn/internal/gradcheck"
)

// TestNSUnusedTrailingSteps builds graphs whose loss ignores the readings
// of the last steps, so that gorgonia makes no backward node for them: the
// backward pass must still run (the tape gets zero gradients for those
// steps) and be exact.
func TestNSUnusedTrailingSteps(t *testing.T) {
	const batch, hidden, steps, used = 2, 3, 4, 2
	for i, cfg := range nstAllConfigs(0, 2) {
		s := nstNew(t, hidden, cfg, 1, uint64(i+1))
		rng := rand.New(rand.NewPCG(uint64(i), 9))
		g := G.NewGraph()
		inst, err := s.Bind(g, batch, steps)
		if err != nil {
			t.Fatal(err)
		}
		wrt := nstParamNodes(g, s)
		var loss *G.Node
		for k := 1; k <= steps; k++ {
			h := blInput(g, fmt.Sprint("h", k), blDense(rng, 1, batch, hidden))
			r, err := inst.Step(k, h)
			if err != nil {
				t.Fatal(err)
			}
			if k > used {
				continue
			}
			_, term := nstTapOf(r, blDense(rng, 1, batch, s.ReadingSize()).Float64s())
			if loss == nil {
				loss = term
			} else {
				loss = G.Must(G.Add(loss, term))
			}
		}
		bad, _, err := gradcheck.Check(g, loss, wrt, gradcheck.Options{Floor: 1e-2})
		if err != nil {
			t.Fatalf("%s: %v", nstName(cfg), err)
		}
		for _, b := range bad {
			t.Errorf("%s: %v", nstName(cfg), b)
		}
	}
}
