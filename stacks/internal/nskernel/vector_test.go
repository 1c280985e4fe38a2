package nskernel

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// inputs are the inputs of a batch run: step log-weights, pushed vectors
// and the bottom vector.
type vecInputs struct {
	ld, vs [][]float64 // ld[t−1]: batch×NumActions; vs[t−1]: batch×m
	bottom []float64
}

// randVecInputs draws log-weights uniform in ±scale and vectors in (0, 1).
func randVecInputs(rng *rand.Rand, c Config, batch, n int, scale float64) *vecInputs {
	in := &vecInputs{bottom: make([]float64, c.Vector)}
	for range n {
		ld := make([]float64, batch*c.NumActions())
		for i := range ld {
			ld[i] = scale * (2*rng.Float64() - 1)
		}
		vs := make([]float64, batch*c.Vector)
		for i := range vs {
			vs[i] = rng.Float64()
		}
		in.ld, in.vs = append(in.ld, ld), append(in.vs, vs)
	}
	for i := range in.bottom {
		in.bottom[i] = rng.Float64()
	}
	return in
}

// seqOf returns the per-step slices of element i of a batch of B.
func seqOf(xs [][]float64, i, B int) [][]float64 {
	out := make([][]float64, len(xs))
	for t, x := range xs {
		w := len(x) / B
		out[t] = x[i*w : (i+1)*w]
	}
	return out
}

// run runs the tape from start (nil: the initial stack) over steps
// [from, to) of in and returns the readings.
func runVec(tp *Tape, start *State, in *vecInputs, from, to int) [][]float64 {
	if err := tp.BeginVector(start, in.bottom); err != nil {
		panic(err)
	}
	var out [][]float64
	for t := from; t < to; t++ {
		r := make([]float64, tp.Batch()*tp.Config().ReadingSize())
		tp.StepVector(in.ld[t], in.vs[t], r)
		out = append(out, r)
	}
	return out
}

func vecRelClose(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b)) || math.Abs(a-b) <= 1e-300
}

func vecConfigs(window int) []Config {
	var cs []Config
	for _, q := range []int{1, 2} {
		for _, g := range []int{1, 2} {
			for _, m := range []int{1, 2} {
				for _, f := range []bool{false, true} {
					cs = append(cs, Config{States: q, Symbols: g, Vector: m, Fixed: f, Window: window})
				}
			}
		}
	}
	return cs
}

// TestVectorOracle checks the tape against the brute-force enumeration of runs
// and the literal ζ equations against the same, unlimited and
// memory-limited, to 1e-10 relative.
func TestVectorOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const B, n = 2, 5
	for _, D := range []int{0, 1, 2, 3, 4} {
		for _, c := range vecConfigs(D) {
			in := randVecInputs(rng, c, B, n, 2)
			rd := runVec(NewTape(c, B, n), nil, in, 0, n)
			nr := c.ReadingSize()
			for i := 0; i < B; i++ {
				ld, vs := seqOf(in.ld, i, B), seqOf(in.vs, i, B)
				bf := bruteForceVector(c, ld, vs, in.bottom, D)
				nv := naiveZeta(c, ld, vs, in.bottom, D)
				for s := 0; s < n; s++ {
					got := rd[s][i*nr : (i+1)*nr]
					for j := range got {
						if !vecRelClose(got[j], bf[s][j], 1e-10) {
							t.Fatalf("%+v seq %d step %d: tape reads %v, brute force %v", c, i, s+1, got, bf[s])
						}
						if !vecRelClose(nv[s][j], bf[s][j], 1e-10) {
							t.Fatalf("%+v seq %d step %d: ζ equations read %v, brute force %v", c, i, s+1, nv[s], bf[s])
						}
					}
				}
			}
		}
	}
}

// TestVectorOracleImpossibleActions: with a third of the actions impossible
// (log-weight −∞), the tape still agrees with the brute force, and
// sequences without any possible run read zeros.
func TestVectorOracleImpossibleActions(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const B, n = 2, 5
	for _, D := range []int{0, 2} {
		for _, c := range vecConfigs(D) {
			in := randVecInputs(rng, c, B, n, 2)
			for _, ld := range in.ld {
				for j := range ld {
					if rng.IntN(3) == 0 {
						ld[j] = math.Inf(-1)
					}
				}
			}
			rd := runVec(NewTape(c, B, n), nil, in, 0, n)
			nr := c.ReadingSize()
			for i := 0; i < B; i++ {
				bf := bruteForceVector(c, seqOf(in.ld, i, B), seqOf(in.vs, i, B), in.bottom, D)
				for s := 0; s < n; s++ {
					got := rd[s][i*nr : (i+1)*nr]
					for j := range got {
						if math.IsNaN(got[j]) || !vecRelClose(got[j], bf[s][j], 1e-10) {
							t.Fatalf("%+v seq %d step %d: tape reads %v, brute force %v", c, i, s+1, got, bf[s])
						}
					}
				}
			}
		}
	}
}

// TestVectorRNS: with m = 1, every pushed vector 1 and the bottom vector 1, the
// readings are the RNS stack's state-and-symbol readings and the
// gradients of the log-weights are the RNS stack's (nskernel), for every
// bottom and window, with log-weights of ±3 over 9 steps and of ±50 over
// 60 steps.
func TestVectorRNS(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const B = 2
	for _, scale := range []float64{3, 50} {
		for _, D := range []int{0, 1, 3, 7} {
			for _, f := range []bool{false, true} {
				for _, qg := range [][2]int{{1, 1}, {2, 3}, {3, 2}} {
					n := 9
					if scale == 50 {
						n = 60
					}
					c := Config{States: qg[0], Symbols: qg[1], Vector: 1, Fixed: f, Window: D}
					in := randVecInputs(rng, c, B, n, scale)
					for _, v := range in.vs {
						for j := range v {
							v[j] = 1
						}
					}
					in.bottom[0] = 1
					rc := Config{States: qg[0], Symbols: qg[1], Fixed: f, StateReading: true, Window: D}
					rt := NewTape(rc, B, n)
					want := rt.Run(in.ld)
					tp := NewTape(c, B, n)
					got := runVec(tp, nil, in, 0, n)
					name := fmt.Sprintf("%+v scale %g", c, scale)
					for s := range got {
						for j := range got[s] {
							if !vecRelClose(got[s][j], want[s][j], 1e-11) && math.Abs(got[s][j]-want[s][j]) > 1e-14 {
								t.Fatalf("%s step %d: reads %v, RNS %v", name, s+1, got[s], want[s])
							}
						}
					}
					na := c.NumActions()
					gr := make([]float64, B*c.ReadingSize())
					g1, g2 := make([]float64, B*na), make([]float64, B*na)
					gv := make([]float64, B)
					for s := n; s >= 1; s-- {
						for j := range gr {
							gr[j] = math.Sin(float64(7*s + j))
						}
						tp.BackwardVector(s, gr, g1, gv, nil)
						rt.Backward(s, gr, g2)
						// Both passes compute each entry with an absolute
						// rounding error relative to the step's largest
						// gradients.
						top := 1.0
						for _, v := range g2 {
							top = math.Max(top, math.Abs(v))
						}
						for j := range g1 {
							if !vecRelClose(g1[j], g2[j], 1e-8) && math.Abs(g1[j]-g2[j]) > 1e-10*top {
								t.Fatalf("%s step %d: ∂L/∂logΔ[%d] = %.15g, RNS %.15g", name, s, j, g1[j], g2[j])
							}
						}
					}
				}
			}
		}
	}
}

// vecLossAndGrad runs the tape from start over in and returns the loss Σ_t
// ⟨coef_t, r_t⟩ and, when grad, its gradients with respect to the
// log-weights, the vectors and the bottom vector.
func vecLossAndGrad(tp *Tape, start *State, in *vecInputs, coef [][]float64, grad bool) (float64, [][]float64, [][]float64, []float64) {
	n := len(in.ld)
	rd := runVec(tp, start, in, 0, n)
	var loss float64
	for s := range rd {
		for j, v := range rd[s] {
			loss += coef[s][j] * v
		}
	}
	if !grad {
		return loss, nil, nil, nil
	}
	gl, gv := make([][]float64, n), make([][]float64, n)
	gb := make([]float64, len(in.bottom))
	for s := n; s >= 1; s-- {
		gl[s-1] = make([]float64, len(in.ld[s-1]))
		gv[s-1] = make([]float64, len(in.vs[s-1]))
		tp.BackwardVector(s, coef[s-1], gl[s-1], gv[s-1], gb)
	}
	return loss, gl, gv, gb
}

// vecGradCheck compares the gradients of vecLossAndGrad with central finite
// differences, for every log-weight, vector entry and bottom entry.
func vecGradCheck(t *testing.T, c Config, start *State, in *vecInputs, seed uint64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	B := len(in.vs[0]) / c.Vector
	n := len(in.ld)
	coef := make([][]float64, n)
	for s := range coef {
		coef[s] = make([]float64, B*c.ReadingSize())
		for j := range coef[s] {
			coef[s][j] = 2*rng.Float64() - 1
		}
	}
	tp := NewTape(c, B, n)
	_, gl, gv, gb := vecLossAndGrad(tp, start, in, coef, true)
	const h = 1e-5
	check := func(what string, x []float64, j int, g float64) {
		old := x[j]
		x[j] = old + h
		lp, _, _, _ := vecLossAndGrad(tp, start, in, coef, false)
		x[j] = old - h
		lm, _, _, _ := vecLossAndGrad(tp, start, in, coef, false)
		x[j] = old
		fd := (lp - lm) / (2 * h)
		if d := math.Abs(fd - g); d > 1e-6*(1e-2+math.Abs(fd)) {
			t.Fatalf("%+v: ∂L/∂%s[%d] = %.12g, finite difference %.12g", c, what, j, g, fd)
		}
	}
	for s := range in.ld {
		for j := range in.ld[s] {
			check(fmt.Sprintf("logΔ_%d", s+1), in.ld[s], j, gl[s][j])
		}
		for j := range in.vs[s] {
			check(fmt.Sprintf("v_%d", s+1), in.vs[s], j, gv[s][j])
		}
	}
	for j := range in.bottom {
		check("bottom", in.bottom, j, gb[j])
	}
}

// TestVectorGradients compares Backward with central finite differences of the
// loss Σ_t ⟨C_t, r_t⟩ for the log-weights, the pushed vectors and the
// bottom vector, for both bottoms, unlimited and limited, from the
// initial stack and from a carried state.
func TestVectorGradients(t *testing.T) {
	seed := uint64(10)
	for _, D := range []int{0, 2, 3} {
		for _, f := range []bool{false, true} {
			for _, qgm := range [][3]int{{2, 2, 2}, {1, 3, 1}, {3, 1, 2}, {2, 3, 3}} {
				c := Config{States: qgm[0], Symbols: qgm[1], Vector: qgm[2], Fixed: f, Window: D}
				n := 5
				if qgm[0]*qgm[1] == 6 {
					n = 4
				}
				seed++
				rng := rand.New(rand.NewPCG(seed, 3))
				vecGradCheck(t, c, nil, randVecInputs(rng, c, 2, n, 2), seed)
				if D > 0 {
					// From the state after three steps of other inputs.
					pre := randVecInputs(rng, c, 2, 3, 2)
					tp := NewTape(c, 2, 3)
					runVec(tp, nil, pre, 0, 3)
					vecGradCheck(t, c, tp.State(), randVecInputs(rng, c, 2, n, 2), seed)
				}
			}
		}
	}
}

// TestVectorImpossibleActionsGradient: log-weights of −∞ get a gradient of
// exactly 0 and no gradient is NaN, including a sequence without any
// possible run.
func TestVectorImpossibleActionsGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, c := range []Config{{States: 2, Symbols: 2, Vector: 2}, {States: 2, Symbols: 2, Vector: 2, Fixed: true, Window: 3}} {
		const B, n = 2, 6
		in := randVecInputs(rng, c, B, n, 2)
		for s, ld := range in.ld {
			for j := range ld {
				if rng.IntN(3) == 0 || (s == 2 && j >= c.NumActions()) {
					ld[j] = math.Inf(-1)
				}
			}
		}
		coef := make([][]float64, n)
		for s := range coef {
			coef[s] = make([]float64, B*c.ReadingSize())
			for j := range coef[s] {
				coef[s][j] = rng.NormFloat64()
			}
		}
		_, gl, gv, gb := vecLossAndGrad(NewTape(c, B, n), nil, in, coef, true)
		for s := range gl {
			for j, g := range gl[s] {
				if math.IsNaN(g) || (math.IsInf(in.ld[s][j], -1) && g != 0) {
					t.Fatalf("%+v: log-weight %g at step %d gets gradient %g", c, in.ld[s][j], s+1, g)
				}
			}
			for _, g := range gv[s] {
				if math.IsNaN(g) || math.IsInf(g, 0) {
					t.Fatalf("%+v: vector gradient %g", c, g)
				}
			}
		}
		for _, g := range gb {
			if math.IsNaN(g) {
				t.Fatalf("%+v: bottom gradient %g", c, g)
			}
		}
	}
}

// TestVectorChunks: for the memory-limited stack, running a sequence in chunks,
// each begun from the State of the one before (and from its encoding),
// gives bit for bit the readings of running it whole.
func TestVectorChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	const B, n = 3, 11
	for _, D := range []int{1, 2, 4} {
		for _, f := range []bool{false, true} {
			c := Config{States: 2, Symbols: 2, Vector: 3, Fixed: f, Window: D}
			in := randVecInputs(rng, c, B, n, 3)
			whole := runVec(NewTape(c, B, n), nil, in, 0, n)
			for _, chunks := range [][]int{{1, 10}, {3, 3, 5}, {5, 6}, {2, 1, 1, 7}} {
				tp := NewTape(c, B, 10)
				var st *State
				from := 0
				for k, size := range chunks {
					if k%2 == 1 {
						// Through the encoding.
						data, err := st.MarshalBinary()
						if err != nil {
							t.Fatal(err)
						}
						if st, err = UnmarshalState(data); err != nil {
							t.Fatal(err)
						}
						again, _ := st.MarshalBinary()
						if !bytes.Equal(again, data) {
							t.Fatal("state encoding does not round-trip")
						}
					}
					got := runVec(tp, st, in, from, from+size)
					for s := range got {
						for j := range got[s] {
							if got[s][j] != whole[from+s][j] {
								t.Fatalf("%+v chunks %v: step %d reads %v, whole runVec %v", c, chunks, from+s+1, got[s], whole[from+s])
							}
						}
					}
					st = tp.State()
					from += size
				}
			}
		}
	}
}

// TestVectorStateErrors: a state is refused by a tape of another configuration
// or batch, or by the unlimited stack, and malformed encodings are
// refused.
func TestVectorStateErrors(t *testing.T) {
	c := Config{States: 2, Symbols: 2, Vector: 2, Window: 3}
	tp := NewTape(c, 2, 4)
	in := randVecInputs(rand.New(rand.NewPCG(1, 1)), c, 2, 4, 1)
	runVec(tp, nil, in, 0, 4)
	st := tp.State()
	for _, other := range []*Tape{
		NewTape(Config{States: 2, Symbols: 2, Vector: 1, Window: 3}, 2, 4),
		NewTape(Config{States: 2, Symbols: 2, Vector: 2, Window: 4}, 2, 4),
		NewTape(Config{States: 2, Symbols: 2, Vector: 2, Window: 3, Fixed: true}, 2, 4),
		NewTape(c, 3, 4),
		NewTape(Config{States: 2, Symbols: 2, Vector: 2}, 2, 4),
	} {
		if err := other.BeginVector(st, nil); err == nil {
			t.Errorf("tape %+v batch %d accepted a state of %+v batch 2", other.Config(), other.Batch(), c)
		}
	}
	data, _ := st.MarshalBinary()
	for _, bad := range [][]byte{nil, data[:10], data[:len(data)-8], append(append([]byte(nil), data...), 0)} {
		if _, err := UnmarshalState(bad); err == nil {
			t.Errorf("an encoding of %d bytes (of %d) was accepted", len(bad), len(data))
		}
	}
	if err := NewTape(Config{States: 1, Symbols: 1, Vector: 2, Fixed: true}, 1, 1).BeginVector(nil, []float64{1}); err == nil {
		t.Error("a bottom vector of the wrong size was accepted")
	}
}

// TestVectorStability drives the stack with log-weights of ±50 for 60 steps:
// the readings are finite, non-negative and, for every vector component,
// sum over (state, symbol) to at most 1 (vectors lie in [0, 1]); the
// gradients are finite.
func TestVectorStability(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	const B, n = 2, 60
	for _, c := range []Config{{States: 2, Symbols: 3, Vector: 3}, {States: 2, Symbols: 3, Vector: 2, Fixed: true, Window: 20}} {
		in := randVecInputs(rng, c, B, n, 50)
		coef := make([][]float64, n)
		for s := range coef {
			coef[s] = make([]float64, B*c.ReadingSize())
			for j := range coef[s] {
				coef[s][j] = rng.NormFloat64()
			}
		}
		tp := NewTape(c, B, n)
		_, gl, gv, gb := vecLossAndGrad(tp, nil, in, coef, true)
		rd := runVec(tp, nil, in, 0, n)
		m := c.Vector
		for s, r := range rd {
			for b := 0; b < B; b++ {
				for j := 0; j < m; j++ {
					var sum float64
					for k := 0; k < c.States*c.Symbols; k++ {
						v := r[b*c.ReadingSize()+k*m+j]
						if math.IsNaN(v) || v < 0 {
							t.Fatalf("%+v step %d: reading %v", c, s+1, r)
						}
						sum += v
					}
					if sum > 1+1e-12 {
						t.Fatalf("%+v step %d: component %d sums to %v", c, s+1, j, sum)
					}
				}
			}
		}
		for _, gs := range [][][]float64{gl, gv, {gb}} {
			for _, g := range gs {
				for _, v := range g {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("%+v: gradient %v", c, v)
					}
				}
			}
		}
	}
}
