// Package stackstest holds the conformance suites of package stacks, in
// the manner of gonum's lapack/testlapack: exported functions that take a
// *testing.T and a way to make the thing under test, and run the checks
// that every implementation must pass. There are two: one for the stack
// layers (stacks.Layer and stacks.Instance, made by a Factory), and one
// for the nondeterministic stack's dynamic program (a Tape, made by a
// TapeMaker), which the CPU's tape and the GPU's run alike.
//
// # Stack layers
//
// The checks are:
//
//   - Init: a positive Scheme.Uniform bounds every parameter, and Init is
//     deterministic given the random source.
//   - Gradients: in a small graph (batch 3, hidden 3, five steps, and a
//     single step) where the hidden states are input nodes x_t, with and
//     without feedback h_t = x_t + tanh(r_{t−1} A) of the readings through
//     a fixed random A, and loss Σ_t ⟨C_t, r_t⟩ with fixed random C_t, the
//     gradients with respect to every parameter (read from the binding's
//     accumulators) and every x_t agree with central finite differences.
//   - TrailingSteps: a graph whose loss ignores the readings of its last
//     steps (so that gorgonia makes no backward node for them) still has
//     exact gradients, equal to those of the graph without those steps.
//   - Carry (only for a layer whose Carryable is nil): a run of 8 steps
//     and the same inputs run in chunks (3+5, 1+1+6, 4+4), each chunk
//     started with SetState from the State of the one before, read the
//     same; states survive MarshalBinary and UnmarshalState bit for bit;
//     states are detached values; a state of another batch size is
//     refused; gradients of a chunk started from a carried state are
//     exact.
//   - NoCarry (only for a layer whose Carryable is not nil): Carryable,
//     Bind with carry and UnmarshalState fail with errors that wrap
//     stacks.ErrNoCarry, without panicking.
//   - Errors: Bind with a batch below 1 or negative steps, steps out of
//     range, hidden states of the wrong shape, and SetState or State on an
//     instance bound without carry are errors; the steps taken after the
//     refused ones read finite readings.
//   - Runner (only for a layer that implements stacks.Runners): a runner
//     fed with the hidden states of a graph's run reads what the graph
//     read.
//
// The gradient checks use an honest tolerance: 1e-6 relative, plus an
// absolute allowance for the rounding of the finite difference computed
// from the magnitude of the loss's terms (see Net.CheckGradients), never a
// tolerance loosened until the check passes.
//
// Net, the harness the checks build their graphs with, is exported for
// tests of one stack kind that need a graph of their own (hand-set
// parameters, several layers run on the same data, benchmarks).
//
// # Usage
//
// In a test of a package that implements stacks.Layer, run the whole suite
// for each configuration:
//
//	func TestConformance(t *testing.T) {
//		stackstest.Test(t, "jm/depth3", func(hidden int) (stacks.Layer, error) {
//			return stacks.NewJM("jm", hidden, 2, false, 3)
//		})
//	}
//
// Test runs the checks as subtests of a subtest named by its second
// argument, choosing Carry or NoCarry by the layer's Carryable. Each check
// is also exported on its own (Init, Gradients, TrailingSteps, Carry,
// NoCarry, Errors, Runner), for a test that wants only some of them. The factory is
// called once or more per check with the size of the hidden states; it
// must return a new layer each time (the suite initializes it with
// Layer.Init).
//
// To check a layer with parameters set by hand, build a Net and check it:
//
//	layer, _ := stacks.NewGref("gref", 3, 2)
//	layer.Init(param.Scheme{Uniform: 1}, rng)
//	layer.Params()[1].Data()[0] -= 1 // thin pops
//	d := stackstest.NewData(rng, 2, 3, layer.ReadingSize(), 7)
//	n, err := stackstest.NewNet(layer, d, stackstest.Options{Steps: 7, Feedback: true})
//	if err != nil {
//		t.Fatal(err)
//	}
//	n.CheckGradients(t, 1)
//
// # The nondeterministic stack's tape
//
// A tape runs the dynamic program of the NS stacks (RNS, NS, NS+S, NS+U)
// from given action log-weights: Begin, Step for t = 1 … n, Backward for
// t = n … 1, and State for the memory-limited variant. TestTape runs its
// checks over TapeConfigs (|Q| and |Γ| from 1 to 3, both bottoms, both
// readings, unlimited and windows of 1, 2 and 5):
//
//   - TapeReadings: every reading of runs of 12 steps against the dynamic
//     program of stacks.Inside in the log-sum semiring, to 1e-11.
//   - TapeGradients: ∂L/∂log Δ for a random linear loss of the readings
//     against central differences; −∞ log-weights have gradient 0.
//   - TapeChunks: a run continued from the carried state of its first
//     part reads as the whole run, to 1e-12.
//   - TapeRepeat: a second run reads and differentiates bit for bit as
//     the first.
//
// Tape is generic in its carried state, so that each implementation keeps
// its own: the CPU's tape runs it as
//
//	stackstest.TestTape(t, func(c stacks.NSConfig, batch, maxSteps int) stackstest.Tape[*nskernel.State] {
//		return nskernel.NewTape(kernelConfig(c), batch, maxSteps)
//	})
package stackstest
