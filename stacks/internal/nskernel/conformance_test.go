package nskernel_test

import (
	"testing"

	"github.com/nsrnn/nsrnn/stacks"
	"github.com/nsrnn/nsrnn/stacks/internal/nskernel"
	"github.com/nsrnn/nsrnn/stacks/stackstest"
)

// kernelConfig is the tape's configuration of an NS stack's.
func kernelConfig(c stacks.NSConfig) nskernel.Config {
	return nskernel.Config{States: c.States, Symbols: c.Symbols, Fixed: c.Bottom == stacks.Fixed, StateReading: c.StateReading, Window: c.Window}
}

// TestConformance runs the tape suite on the CPU's tape, serial and with
// helper goroutines.
func TestConformance(t *testing.T) {
	for _, threads := range []int{1, 3} {
		stackstest.TestTape(t, func(c stacks.NSConfig, batch, maxSteps int) stackstest.Tape[*nskernel.State] {
			tp := nskernel.NewTape(kernelConfig(c), batch, maxSteps)
			tp.SetThreads(threads)
			return tp
		})
	}
}
