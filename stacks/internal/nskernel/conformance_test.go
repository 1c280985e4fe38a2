package nskernel_test

import (
	"testing"

	"github.com/nsrnn/nsrnn/stacks/internal/nskernel"
	"github.com/nsrnn/nsrnn/stacks/internal/nskernel/nskerneltest"
)

// TestConformance runs the tape's conformance suite on the CPU's tape,
// serial and with helper goroutines.
func TestConformance(t *testing.T) {
	for _, threads := range []int{1, 3} {
		nskerneltest.Test(t, func(c nskernel.Config, batch, maxSteps int) nskerneltest.Tape {
			tp := nskernel.NewTape(c, batch, maxSteps)
			tp.SetThreads(threads)
			return tp
		})
	}
}
