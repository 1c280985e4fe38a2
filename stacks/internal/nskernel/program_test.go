package nskernel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nsrnn/nsrnn/semiring"
	"github.com/nsrnn/nsrnn/stacks/internal/nsenum"
)

// program runs the program in semiring s over rows of log-weights lifted
// into it, and returns α after each step (external index).
func program[V any](c Config, s semiring.Semiring[V], ld [][]float64, lift func(float64) V) [][]V {
	p := NewProgram(c, s, len(ld))
	var out [][]V
	row := make([]V, c.NumActions())
	for _, r := range ld {
		for i, w := range r {
			row[i] = lift(w)
		}
		p.Step(row)
		out = append(out, p.Alpha(p.steps))
	}
	return out
}

// The program in the log-sum semiring is the recurrences that the fast
// kernels compute: its α equals the enumerator's on short sequences, and
// its readings the Tape's on long ones (unlimited and memory-limited, both
// bottoms, both readings).
func TestProgramLogSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	id := func(w float64) float64 { return w }
	for _, D := range []int{0, 1, 3} {
		for _, c := range allConfigs(D) {
			if c.States*c.Symbols > 6 {
				continue
			}
			n := 5
			ld := randLD(rng, c, 1, n, 2)
			got := program[float64](c, semiring.LogSum{}, ld, id)
			want := bruteForce(c, ld, D)
			for s := range n {
				for j := range want[s] {
					if !relClose(got[s][j], want[s][j], 1e-12) && !(math.IsInf(got[s][j], -1) && math.IsInf(want[s][j], -1)) {
						t.Fatalf("%+v step %d: log α[%d] = %.17g, the enumerator's %.17g", c, s+1, j, got[s][j], want[s][j])
					}
				}
			}
			// Long: the fast kernels against the program.
			const B, long = 2, 40
			ld = randLD(rng, c, B, long, 3)
			rd := NewTape(c, B, long).Run(ld)
			for i := range B {
				al := program[float64](c, semiring.LogSum{}, seqLD(ld, c, i), id)
				for s := range long {
					name := fmt.Sprintf("%+v seq %d step %d (tape vs program)", c, i, s+1)
					checkReadings(t, name, c, rd[s][i*c.ReadingSize():(i+1)*c.ReadingSize()], al[s], 1e-11)
				}
			}
		}
	}
}

// The counting semiring counts runs: with every action worth 1, α is the
// number of runs of t steps ending in each configuration, and with some
// actions forbidden (0), the number of runs that avoid them, as the
// enumerator counts; also against a count in closed form: with one state,
// one symbol and the original bottom, the runs of t steps are the Motzkin
// paths' prefixes, counted by the enumerator here and by the program.
func TestProgramCounting(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, D := range []int{0, 2} {
		for _, c := range allConfigs(D) {
			if c.States*c.Symbols > 6 || c.StateReading {
				continue
			}
			for _, forbid := range []bool{false, true} {
				n := 5
				ld := randLD(rng, c, 1, n, 1)
				val := func(w float64) float64 {
					if forbid && w < -0.5 {
						return 0
					}
					return 1
				}
				got := program[float64](c, semiring.Counting{}, ld, val)
				ec := nsenum.Config{States: c.States, Symbols: c.Symbols, Fixed: c.Fixed, Window: D}
				want := nsenum.Alphas[float64](ec, semiring.Counting{}, n, func(t, a int, _ nsenum.Op) float64 { return val(ld[t-1][a]) })
				for s := range n {
					for j := range want[s] {
						if got[s][j] != want[s][j] {
							t.Fatalf("%+v forbid %v step %d: %v runs end in %d, the enumerator counts %v", c, forbid, s+1, got[s][j], j, want[s][j])
						}
					}
				}
			}
		}
	}
	// One state, one symbol, the original bottom, no limit: from the bottom
	// a run must push first; after that each step pushes, replaces or
	// (above the first element) pops. The runs of t steps are counted by
	// the recurrence on depth below.
	c := Config{States: 1, Symbols: 1}
	const n = 12
	ld := make([][]float64, n)
	for i := range ld {
		ld[i] = make([]float64, c.NumActions())
	}
	got := program[float64](c, semiring.Counting{}, ld, func(float64) float64 { return 1 })
	ways := map[int]float64{0: 1} // depth above the bottom → runs
	for s := range n {
		next := map[int]float64{}
		for d, w := range ways {
			next[d+1] += w // push
			if d >= 1 {
				next[d] += w // replace
			}
			if d >= 2 {
				next[d-1] += w // pop
			}
		}
		ways = next
		total := 0.0
		for _, w := range ways {
			total += w
		}
		if got[s][0] != total {
			t.Errorf("step %d: %v runs, want %v", s+1, got[s][0], total)
		}
	}
}

// The max-plus program's best final value is the enumerator's best run
// weight.
func TestProgramMaxPlus(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 9))
	lift := func(w float64) semiring.Best { return semiring.Best{W: w, OK: true} }
	for _, D := range []int{0, 2} {
		for _, c := range allConfigs(D) {
			if c.States*c.Symbols > 6 || c.StateReading {
				continue
			}
			n := 5
			ld := randLD(rng, c, 1, n, 2)
			got := program[semiring.Best](c, semiring.MaxPlus{}, ld, lift)
			ec := nsenum.Config{States: c.States, Symbols: c.Symbols, Fixed: c.Fixed, Window: D}
			want := nsenum.Alphas[semiring.Best](ec, semiring.MaxPlus{}, n, func(t, a int, _ nsenum.Op) semiring.Best { return lift(ld[t-1][a]) })
			for s := range n {
				for j := range want[s] {
					g, w := got[s][j], want[s][j]
					if g.OK != w.OK || g.OK && math.Abs(g.W-w.W) > 1e-12 {
						t.Fatalf("%+v step %d: best %+v ending in %d, the enumerator's %+v", c, s+1, g, j, w)
					}
				}
			}
		}
	}
}
