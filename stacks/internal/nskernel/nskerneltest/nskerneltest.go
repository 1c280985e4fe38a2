// Package nskerneltest is the conformance suite of the nondeterministic
// stack's tape, in the style of gonum's lapack/testlapack: it defines what
// an implementation offers (Tape) and the checks every implementation
// passes (Test), against the reference of the dynamic program in the
// log-sum semiring (nskernel.Program), finite differences, and the
// tape's own promises (chunked runs through the carried state equal whole
// ones, runs repeat bit for bit). The CPU's tape (nskernel.Tape) runs it;
// another implementation (a device's) runs it the same way.
package nskerneltest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nsrnn/nsrnn/semiring"
	"github.com/nsrnn/nsrnn/stacks/internal/nskernel"
)

// Tape is what the suite needs of an implementation of the stack's tape
// (nskernel.Tape has these methods): Begin from the initial stack (nil)
// or a carried state, Step in order, Backward in reverse order, and State
// for the memory-limited variant.
type Tape interface {
	Begin(carried *nskernel.State) error
	Step(logDelta, reading []float64)
	Backward(step int, gradReading, gradLogDelta []float64)
	State() *nskernel.State
}

// Maker makes a tape of configuration c for batch sequences of up to
// maxSteps steps.
type Maker func(c nskernel.Config, batch, maxSteps int) Tape

// Configs are the configurations the suite checks: |Q| and |Γ| from 1 to
// 3, both bottoms, both readings, unlimited and windows of 1, 2 and 5.
func Configs() []nskernel.Config {
	var cs []nskernel.Config
	for _, w := range []int{0, 1, 2, 5} {
		for _, q := range []int{1, 2, 3} {
			for _, g := range []int{1, 2, 3} {
				for _, f := range []bool{false, true} {
					for _, sr := range []bool{false, true} {
						cs = append(cs, nskernel.Config{States: q, Symbols: g, Fixed: f, StateReading: sr, Window: w})
					}
				}
			}
		}
	}
	return cs
}

// Test runs every check of the suite on the tapes that newTape makes.
func Test(t *testing.T, newTape Maker) {
	t.Run("Readings", func(t *testing.T) { Readings(t, newTape) })
	t.Run("Gradients", func(t *testing.T) { Gradients(t, newTape) })
	t.Run("Chunks", func(t *testing.T) { Chunks(t, newTape) })
	t.Run("Repeat", func(t *testing.T) { Repeat(t, newTape) })
}

// logDeltas returns n steps of random log-weights for a batch, normalized
// per (state, top symbol) row as the NS stack's are, a few −∞.
func logDeltas(rng *rand.Rand, c nskernel.Config, batch, n int) [][]float64 {
	na := c.NumActions()
	out := make([][]float64, n)
	for s := range out {
		raw := make([]float64, batch*na)
		for i := range raw {
			raw[i] = 2 * rng.NormFloat64()
			if rng.IntN(17) == 0 {
				raw[i] = math.Inf(-1)
			}
		}
		out[s] = make([]float64, batch*na)
		nskernel.LogSoftmaxRows(out[s], raw, c, batch)
	}
	return out
}

// reference returns the readings of sequence b by the program in the
// log-sum semiring: α normalized, summed over states unless the reading
// has them.
func reference(c nskernel.Config, ld [][]float64, b int) [][]float64 {
	na := c.NumActions()
	p := nskernel.NewProgram[float64](c, semiring.LogSum{}, len(ld))
	out := make([][]float64, len(ld))
	for s := range ld {
		p.Step(ld[s][b*na : (b+1)*na])
		al := p.Alpha(s + 1)
		mx := math.Inf(-1)
		for _, v := range al {
			mx = math.Max(mx, v)
		}
		r := make([]float64, c.ReadingSize())
		if !math.IsInf(mx, -1) {
			z := 0.0
			for _, v := range al {
				z += math.Exp(v - mx)
			}
			for i, v := range al {
				pr := math.Exp(v-mx) / z
				if c.StateReading {
					r[i] += pr
				} else {
					r[i%c.Symbols] += pr
				}
			}
		}
		out[s] = r
	}
	return out
}

func run(t *testing.T, tp Tape, carried *nskernel.State, ld [][]float64, c nskernel.Config, batch int) [][]float64 {
	t.Helper()
	if err := tp.Begin(carried); err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, len(ld))
	for s := range ld {
		out[s] = make([]float64, batch*c.ReadingSize())
		tp.Step(ld[s], out[s])
	}
	return out
}

// Readings checks every reading of runs of 12 steps against the program.
func Readings(t *testing.T, newTape Maker) {
	rng := rand.New(rand.NewPCG(1, 1))
	const batch, n = 3, 12
	for _, c := range Configs() {
		ld := logDeltas(rng, c, batch, n)
		got := run(t, newTape(c, batch, n), nil, ld, c, batch)
		nr := c.ReadingSize()
		for b := range batch {
			want := reference(c, ld, b)
			for s := range n {
				for j := range nr {
					g, w := got[s][b*nr+j], want[s][j]
					if math.Abs(g-w) > 1e-11*math.Max(1, math.Abs(w)) {
						t.Fatalf("%+v sequence %d step %d: reading[%d] = %.17g, the program's %.17g", c, b, s+1, j, g, w)
					}
				}
			}
		}
	}
}

// Gradients checks ∂L/∂logΔ for L = Σ_t ⟨coef_t, r_t⟩ against central
// differences, on a subset of the configurations and entries.
func Gradients(t *testing.T, newTape Maker) {
	rng := rand.New(rand.NewPCG(2, 2))
	const batch, n, h = 2, 6, 1e-6
	for i, c := range Configs() {
		if i%5 != 0 {
			continue
		}
		na, nr := c.NumActions(), c.ReadingSize()
		ld := logDeltas(rng, c, batch, n)
		coef := make([][]float64, n)
		for s := range coef {
			coef[s] = make([]float64, batch*nr)
			for j := range coef[s] {
				coef[s][j] = rng.NormFloat64()
			}
		}
		tp := newTape(c, batch, n)
		loss := func() float64 {
			rd := run(t, tp, nil, ld, c, batch)
			l := 0.0
			for s := range rd {
				for j, v := range rd[s] {
					l += coef[s][j] * v
				}
			}
			return l
		}
		loss()
		grads := make([][]float64, n)
		for s := n; s >= 1; s-- {
			grads[s-1] = make([]float64, batch*na)
			tp.Backward(s, coef[s-1], grads[s-1])
		}
		for k := 0; k < 8; k++ {
			s, j := rng.IntN(n), rng.IntN(batch*na)
			orig := ld[s][j]
			if math.IsInf(orig, -1) {
				if grads[s][j] != 0 {
					t.Errorf("%+v: the gradient of a −∞ log-weight is %g, want 0", c, grads[s][j])
				}
				continue
			}
			ld[s][j] = orig + h
			fp := loss()
			ld[s][j] = orig - h
			fm := loss()
			ld[s][j] = orig
			num := (fp - fm) / (2 * h)
			if math.Abs(num-grads[s][j]) > 1e-6+1e-5*math.Abs(num) {
				t.Errorf("%+v: ∂L/∂logΔ[%d][%d] = %.10g, central difference %.10g", c, s+1, j, grads[s][j], num)
			}
		}
	}
}

// Chunks checks, for the memory-limited variant, that a run continued
// from the state of its first part reads exactly as the whole run.
func Chunks(t *testing.T, newTape Maker) {
	rng := rand.New(rand.NewPCG(3, 3))
	const batch, n = 2, 11
	for _, c := range Configs() {
		if c.Window == 0 {
			continue
		}
		ld := logDeltas(rng, c, batch, n)
		whole := run(t, newTape(c, batch, n), nil, ld, c, batch)
		for _, cut := range []int{1, 4, 7} {
			first := newTape(c, batch, n)
			run(t, first, nil, ld[:cut], c, batch)
			st := first.State()
			rest := run(t, newTape(c, batch, n), st, ld[cut:], c, batch)
			for s := range rest {
				for j, v := range rest[s] {
					if w := whole[cut+s][j]; math.Abs(v-w) > 1e-12*math.Max(1, math.Abs(w)) {
						t.Fatalf("%+v cut at %d: step %d reads %.17g, the whole run %.17g", c, cut, cut+s+1, v, w)
					}
				}
			}
		}
	}
}

// Repeat checks that a tape run twice on the same input gives the same
// readings and gradients, bit for bit.
func Repeat(t *testing.T, newTape Maker) {
	rng := rand.New(rand.NewPCG(4, 4))
	const batch, n = 3, 9
	for i, c := range Configs() {
		if i%3 != 0 {
			continue
		}
		ld := logDeltas(rng, c, batch, n)
		tp := newTape(c, batch, n)
		var prev [][]float64
		for round := range 2 {
			rd := run(t, tp, nil, ld, c, batch)
			g := make([]float64, batch*c.NumActions())
			tp.Backward(n, rd[n-1], g)
			cur := append(rd, g)
			if round == 1 {
				for s := range cur {
					for j := range cur[s] {
						if math.Float64bits(cur[s][j]) != math.Float64bits(prev[s][j]) {
							t.Fatalf("%+v: the second run differs at %d,%d: %v against %v", c, s, j, cur[s][j], prev[s][j])
						}
					}
				}
			}
			prev = cur
		}
	}
}
