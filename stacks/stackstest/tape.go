package stackstest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nsrnn/nsrnn/semiring"
	"github.com/nsrnn/nsrnn/stacks"
)

// Tape is what the tape suite needs of an implementation of the
// nondeterministic stack's dynamic program (the CPU's tape, or a device's)
// carrying states of type S: Begin from the initial stack (S's zero value)
// or from a carried state, Step in order (logDelta holds batch rows of
// NumActions log-weights, reading receives batch rows of ReadingSize),
// Backward in reverse order (writing ∂L/∂log Δ[step] into gradLogDelta
// given ∂L/∂r_step, the earlier steps' adjoints kept inside), and State,
// the carried state after the last step, for the memory-limited variant.
// An implementation whose device fails panics: the suite is for tests.
type Tape[S any] interface {
	Begin(carried S) error
	Step(logDelta, reading []float64)
	Backward(step int, gradReading, gradLogDelta []float64)
	State() S
}

// TapeMaker makes a tape of configuration c (whose Normalized does not
// matter: a tape takes log-weights) for batch sequences of up to maxSteps
// steps.
type TapeMaker[S any] func(c stacks.NSConfig, batch, maxSteps int) Tape[S]

// TapeConfigs are the configurations the tape suite checks: |Q| and |Γ|
// from 1 to 3, both bottoms, both readings, unlimited and windows of 1, 2
// and 5 (144 in all).
func TapeConfigs() []stacks.NSConfig {
	var cs []stacks.NSConfig
	for _, w := range []int{0, 1, 2, 5} {
		for _, q := range []int{1, 2, 3} {
			for _, g := range []int{1, 2, 3} {
				for _, b := range []stacks.Bottom{stacks.Original, stacks.Fixed} {
					for _, sr := range []bool{false, true} {
						cs = append(cs, stacks.NSConfig{States: q, Symbols: g, Bottom: b, StateReading: sr, Window: w})
					}
				}
			}
		}
	}
	return cs
}

// TestTape runs every check of the tape suite on the tapes that newTape
// makes: TapeReadings, TapeGradients, TapeChunks and TapeRepeat.
func TestTape[S any](t *testing.T, newTape TapeMaker[S]) {
	t.Run("Readings", func(t *testing.T) { TapeReadings(t, newTape) })
	t.Run("Gradients", func(t *testing.T) { TapeGradients(t, newTape) })
	t.Run("Chunks", func(t *testing.T) { TapeChunks(t, newTape) })
	t.Run("Repeat", func(t *testing.T) { TapeRepeat(t, newTape) })
}

// logDeltas returns n steps of random log-weights for a batch, normalized
// per (state, top symbol) row as the NS stack's are, a few −∞ (a row of
// only −∞ stays so).
func logDeltas(rng *rand.Rand, c stacks.NSConfig, batch, n int) [][]float64 {
	na := c.NumActions()
	w := 2*c.States*c.Symbols + c.States
	out := make([][]float64, n)
	for s := range out {
		d := make([]float64, batch*na)
		for i := range d {
			d[i] = 2 * rng.NormFloat64()
			if rng.IntN(17) == 0 {
				d[i] = math.Inf(-1)
			}
		}
		for o := 0; o < len(d); o += w {
			row := d[o : o+w]
			mx := math.Inf(-1)
			for _, v := range row {
				mx = math.Max(mx, v)
			}
			if math.IsInf(mx, -1) {
				continue
			}
			z := 0.0
			for _, v := range row {
				z += math.Exp(v - mx)
			}
			lz := mx + math.Log(z)
			for i := range row {
				row[i] -= lz
			}
		}
		out[s] = d
	}
	return out
}

// reference returns the readings of sequence b by the dynamic program in
// the log-sum semiring (stacks.Inside): α normalized, summed over states
// unless the reading has them.
func reference(t *testing.T, c stacks.NSConfig, ld [][]float64, b int) [][]float64 {
	t.Helper()
	na := c.NumActions()
	rows := make([][]float64, len(ld))
	for s := range ld {
		rows[s] = ld[s][b*na : (b+1)*na]
	}
	alpha, err := stacks.Inside(c, semiring.LogSum{}, rows)
	if err != nil {
		t.Fatal(err)
	}
	out := make([][]float64, len(ld))
	for s, al := range alpha {
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

func runTape[S any](t *testing.T, tp Tape[S], carried S, ld [][]float64, c stacks.NSConfig, batch int) [][]float64 {
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

// TapeReadings checks every reading of runs of 12 steps against the
// dynamic program of stacks.Inside, to 1e-11 relative.
func TapeReadings[S any](t *testing.T, newTape TapeMaker[S]) {
	rng := rand.New(rand.NewPCG(1, 1))
	const batch, n = 3, 12
	var initial S
	for _, c := range TapeConfigs() {
		ld := logDeltas(rng, c, batch, n)
		got := runTape(t, newTape(c, batch, n), initial, ld, c, batch)
		nr := c.ReadingSize()
		for b := range batch {
			want := reference(t, c, ld, b)
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

// TapeGradients checks ∂L/∂log Δ for L = Σ_t ⟨coef_t, r_t⟩ against
// central differences, on a fifth of the configurations and 8 entries of
// each; a −∞ log-weight has gradient 0.
func TapeGradients[S any](t *testing.T, newTape TapeMaker[S]) {
	rng := rand.New(rand.NewPCG(2, 2))
	const batch, n, h = 2, 6, 1e-6
	var initial S
	for i, c := range TapeConfigs() {
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
			rd := runTape(t, tp, initial, ld, c, batch)
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

// TapeChunks checks, for the memory-limited variant, that a run continued
// from the state of its first part (cut after 1, 4 or 7 of 11 steps) reads
// as the whole run, to 1e-12 relative.
func TapeChunks[S any](t *testing.T, newTape TapeMaker[S]) {
	rng := rand.New(rand.NewPCG(3, 3))
	const batch, n = 2, 11
	var initial S
	for _, c := range TapeConfigs() {
		if c.Window == 0 {
			continue
		}
		ld := logDeltas(rng, c, batch, n)
		whole := runTape(t, newTape(c, batch, n), initial, ld, c, batch)
		for _, cut := range []int{1, 4, 7} {
			first := newTape(c, batch, n)
			runTape(t, first, initial, ld[:cut], c, batch)
			st := first.State()
			rest := runTape(t, newTape(c, batch, n), st, ld[cut:], c, batch)
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

// TapeRepeat checks that a tape run twice on the same input gives the
// same readings and gradients, bit for bit.
func TapeRepeat[S any](t *testing.T, newTape TapeMaker[S]) {
	rng := rand.New(rand.NewPCG(4, 4))
	const batch, n = 3, 9
	var initial S
	for i, c := range TapeConfigs() {
		if i%3 != 0 {
			continue
		}
		ld := logDeltas(rng, c, batch, n)
		tp := newTape(c, batch, n)
		var prev [][]float64
		for round := range 2 {
			rd := runTape(t, tp, initial, ld, c, batch)
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
