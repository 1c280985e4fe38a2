package stacks

import (
	"errors"
	"fmt"

	"github.com/nsrnn/nsrnn/semiring"
	"github.com/nsrnn/nsrnn/stacks/internal/nskernel"
)

// Inside runs the nondeterministic stack's dynamic program in semiring s
// over one sequence, whose step t has the action values rows[t−1]
// (cfg.NumActions of them, in the layout of the actions: see "The
// nondeterministic stack"), under cfg's bottom behaviour and memory limit
// (the reading settings do not matter), and returns α after each step:
// alpha[t−1][r·|Γ|+y] is the semiring sum, over the runs of t steps from
// the initial stack that end in state r with y on top, of the product of
// their transitions' values in step order. It is the program that the
// stacks' fast kernels compute in the log-sum semiring and that Viterbi
// runs in max-plus with back-pointers, in O(n³|Q|³|Γ|²) time.
func Inside[V any](cfg NSConfig, s semiring.Semiring[V], rows [][]V) ([][]V, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if s == nil {
		return nil, errors.New("stacks: Inside needs a semiring")
	}
	a := cfg.NumActions()
	for t, r := range rows {
		if len(r) != a {
			return nil, fmt.Errorf("stacks: step %d has %d action values, want %d", t+1, len(r), a)
		}
	}
	p := nskernel.NewProgram(cfg.kernel(), s, len(rows))
	out := make([][]V, len(rows))
	for t, r := range rows {
		p.Step(r)
		out[t] = p.Alpha(t + 1)
	}
	return out, nil
}
