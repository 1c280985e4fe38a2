package stacks

import (
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/nsrnn/nsrnn/param"
	"github.com/nsrnn/nsrnn/stacks/internal/baseline"
)

// TestJMTapeBytes checks the memory estimate that Bind checks against
// MaxTapeBytes against the tape laid out for the same pass: at least the
// tape's stacks and gradients, and not more than twice them, with and
// without a depth limit, carried (from a full initial stack) or not.
func TestJMTapeBytes(t *testing.T) {
	const batch, m = 3, 2
	for _, depth := range []int{0, 1, 4, 9} {
		for _, carry := range []bool{false, true} {
			if carry && depth == 0 {
				continue // not carryable
			}
			for steps := 0; steps <= 20; steps++ {
				tape := baseline.NewJM(batch, m, depth)
				var init []float64
				if carry {
					init = make([]float64, batch*depth*m)
				}
				tape.Begin(steps, init, depth == 0)
				words := tape.Words()
				if carry {
					words += batch * depth * m // the captured state
				}
				got, want := jmTapeBytes(batch, m, depth, steps, carry), 8*float64(words)
				if got < want || got > 2*want {
					t.Errorf("depth %d carry %v steps %d: estimate %g bytes, tape %g", depth, carry, steps, got, want)
				}
			}
		}
	}
}

// TestJMBindTooLarge checks that a pass whose tape would exceed
// MaxTapeBytes, as a carried stack with a huge depth limit, is refused at
// Bind before anything is allocated.
func TestJMBindTooLarge(t *testing.T) {
	for _, c := range []struct {
		depth, steps int
		carry        bool
	}{
		{1e8, 35, true},
		{0, 1e6, false},
		{1e6, 1e6, false},
	} {
		s, err := NewJM("jm", 4, 10, false, c.depth)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Bind(param.NewBinding(G.NewGraph()), 32, c.steps, c.carry); err == nil {
			t.Errorf("depth %d, %d steps, carry %v: no error", c.depth, c.steps, c.carry)
		}
	}
	s, _ := NewJM("jm", 4, 10, false, 10)
	if _, err := s.Bind(param.NewBinding(G.NewGraph()), 32, 35, true); err != nil {
		t.Errorf("the paper's JM (depth 10, 35 steps): %v", err)
	}
}
