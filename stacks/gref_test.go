package stacks_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/internal/gradcheck"
	"github.com/nsrnn/nsrnn/internal/param"
	"github.com/nsrnn/nsrnn/stacks"
	"github.com/nsrnn/nsrnn/stacks/internal/baseline"
)

// Helpers shared by the Gref and JM tests (prefixed bl to stay apart from
// the other stacks tests).

func blDense(rng *rand.Rand, scale float64, shape ...int) *tensor.Dense {
	d := tensor.New(tensor.WithShape(shape...), tensor.Of(tensor.Float64))
	for i := range d.Float64s() {
		d.Float64s()[i] = scale * rng.NormFloat64()
	}
	return d
}

func blInput(g *G.ExprGraph, name string, v *tensor.Dense) *G.Node {
	return G.NewMatrix(g, tensor.Float64, G.WithShape(v.Shape()...), G.WithName(name), G.WithValue(v))
}

// blNet is a stack driven by an affine controller: h_t = tanh(x_t W +
// r_{t−1} U) (without U when there is no feedback), r_t = Step(t, h_t),
// loss = Σ_t Σ r_t ⊙ C_t.
type blNet struct {
	g        *G.ExprGraph
	inst     stacks.Instance
	loss     *G.Node
	params   G.Nodes // W, U (with feedback), the stack's parameters
	readings []*G.Node
}

func blBuild(t testing.TB, layer stacks.Layer, rng *rand.Rand, batch, hidden, steps int, feedback bool) *blNet {
	t.Helper()
	const in = 3
	g := G.NewGraph()
	inst, err := layer.Bind(g, batch, steps)
	if err != nil {
		t.Fatal(err)
	}
	n := &blNet{g: g, inst: inst}
	w := blInput(g, "W", blDense(rng, 0.8, in, hidden))
	n.params = append(n.params, w)
	var u *G.Node
	if feedback {
		u = blInput(g, "U", blDense(rng, 0.8, layer.ReadingSize(), hidden))
		n.params = append(n.params, u)
	}
	for _, p := range layer.Params() {
		n.params = append(n.params, g.ByName(p.Name)[0])
	}
	r := inst.Initial()
	for s := 1; s <= steps; s++ {
		z := G.Must(G.Mul(blInput(g, fmt.Sprint("x", s), blDense(rng, 1, batch, in)), w))
		if feedback {
			z = G.Must(G.Add(z, G.Must(G.Mul(r, u))))
		}
		h := G.Must(G.Tanh(z))
		if r, err = inst.Step(s, h); err != nil {
			t.Fatal(err)
		}
		n.readings = append(n.readings, r)
		c := blInput(g, fmt.Sprint("C", s), blDense(rng, 1, batch, layer.ReadingSize()))
		term := G.Must(G.Sum(G.Must(G.HadamardProd(r, c))))
		if n.loss == nil {
			n.loss = term
		} else {
			n.loss = G.Must(G.Add(n.loss, term))
		}
	}
	return n
}

func blCheck(t *testing.T, n *blNet) {
	t.Helper()
	bad, worst, err := gradcheck.Check(n.g, n.loss, n.params, gradcheck.Options{Tol: 1e-6, Step: 1e-6})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bad {
		t.Error(b)
	}
	t.Logf("worst relative error %.3g", worst)
}

func blRun(t testing.TB, g *G.ExprGraph) {
	t.Helper()
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
}

func blNear(t *testing.T, what string, got, want []float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values %v, want %d %v", what, len(got), got, len(want), want)
	}
	for i := range got {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("%s: got %v, want %v", what, got, want)
			return
		}
	}
}

// TestGrefByHand runs three steps of two stratification stacks with given
// actions; the expected strengths and readings are worked out by hand
// from the appendix's equations.
func TestGrefByHand(t *testing.T) {
	tape := baseline.NewGref(2, 2, 3)
	v1, v2, v3 := []float64{1, 0}, []float64{0, 1}, []float64{0.5, -0.5}
	vs := func(a, b []float64) []float64 { return append(append([]float64{}, a...), b...) }
	r := make([]float64, 4)
	// Batch 0: u = (0.3, 0.1, 0.9), d = (0.8, 0.5, 0.4).
	// Batch 1: u = (0.3, 0, 0.7), d = (0.9, 0.6, 0.2).
	// Both push v1, v2, v3.
	tape.Forward(1, []float64{0.3, 0.3}, []float64{0.8, 0.9}, vs(v1, v1), r)
	// s_1 = [d_1]; r_1 = min(d_1, 1)·v1.
	blNear(t, "s_1 (0)", tape.Strengths(1, 0), []float64{0.8})
	blNear(t, "s_1 (1)", tape.Strengths(1, 1), []float64{0.9})
	blNear(t, "r_1", r, []float64{0.8, 0, 0.9, 0})
	tape.Forward(2, []float64{0.1, 0}, []float64{0.5, 0.6}, vs(v2, v2), r)
	// (0): s_2[1] = max(0, 0.8 − max(0, 0.1 − 0)) = 0.7, s_2[2] = 0.5;
	//      r_2 = 0.5·v2 + min(0.7, 1 − 0.5)·v1 = (0.5, 0.5).
	// (1): s_2 = [0.9, 0.6]; r_2 = 0.6·v2 + min(0.9, 0.4)·v1 = (0.4, 0.6).
	blNear(t, "s_2 (0)", tape.Strengths(2, 0), []float64{0.7, 0.5})
	blNear(t, "s_2 (1)", tape.Strengths(2, 1), []float64{0.9, 0.6})
	blNear(t, "r_2", r, []float64{0.5, 0.5, 0.4, 0.6})
	tape.Forward(3, []float64{0.9, 0.7}, []float64{0.4, 0.2}, vs(v3, v3), r)
	// (0): s_3[2] = max(0, 0.5 − 0.9) = 0; s_3[1] = max(0, 0.7 − max(0,
	//      0.9 − 0.5)) = 0.3; s_3[3] = 0.4; r_3 = 0.4·v3 + 0·v2 +
	//      min(0.3, 0.6)·v1 = (0.5, −0.2).
	// (1): s_3[2] = max(0, 0.6 − 0.7) = 0; s_3[1] = 0.9 − (0.7 − 0.6) =
	//      0.8; s_3[3] = 0.2; r_3 = 0.2·v3 + min(0.8, 0.8)·v1 = (0.9, −0.1).
	blNear(t, "s_3 (0)", tape.Strengths(3, 0), []float64{0.3, 0, 0.4})
	blNear(t, "s_3 (1)", tape.Strengths(3, 1), []float64{0.8, 0, 0.2})
	blNear(t, "r_3", r, []float64{0.5, -0.2, 0.9, -0.1})
}

// TestGrefLayerByHand checks the Actions layer's wiring: with zero weights
// the actions are the activated biases, u = σ(0) = 0.5, d = σ(ln 4) = 0.8,
// v = tanh(b_v), so s_1 = [0.8], r_1 = 0.8·v, s_2 = [0.3, 0.8] and
// r_2 = 0.8·v + min(0.3, 0.2)·v = v.
func TestGrefLayerByHand(t *testing.T) {
	s, err := stacks.NewGref("gref", 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	ps := s.Params()
	ps[3].Data()[0] = math.Log(4)
	copy(ps[5].Data(), []float64{0.3, -1.2})
	v := []float64{math.Tanh(0.3), math.Tanh(-1.2)}
	g := G.NewGraph()
	inst, err := s.Bind(g, 1, 2)
	if err != nil {
		t.Fatal(err)
	}
	h := blInput(g, "h", blDense(rand.New(rand.NewPCG(1, 1)), 1, 1, 2))
	r1, err := inst.Step(1, h)
	if err != nil {
		t.Fatal(err)
	}
	r2, err := inst.Step(2, h)
	if err != nil {
		t.Fatal(err)
	}
	blRun(t, g)
	blNear(t, "r_0", inst.Initial().Value().Data().([]float64), []float64{0, 0})
	blNear(t, "r_1", r1.Value().Data().([]float64), []float64{0.8 * v[0], 0.8 * v[1]})
	blNear(t, "r_2", r2.Value().Data().([]float64), v)
}

func TestGrefGradients(t *testing.T) {
	for _, tc := range []struct {
		name          string
		batch, hidden int
		m, steps      int
		feedback      bool
		uniform       float64
		seed          uint64
		// bu and bd are added to b_u and b_d: thin pushes make pops reach
		// through fully popped elements into a partly popped one that is
		// still read.
		bu, bd float64
	}{
		{"no feedback", 2, 3, 2, 5, false, 1, 1, 0, 0},
		{"feedback", 2, 3, 2, 6, true, 1, 2, 0, 0},
		{"feedback wide", 3, 4, 3, 5, true, 1.5, 3, 0, 0},
		{"partial pops", 3, 3, 2, 7, true, 1, 2, -1, -1.5},
		{"partial pops 2", 3, 3, 2, 7, true, 1, 10, 0, -1.5},
		{"one step", 2, 3, 2, 1, false, 1, 4, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(tc.seed, 11))
			s, err := stacks.NewGref("gref", tc.hidden, tc.m)
			if err != nil {
				t.Fatal(err)
			}
			s.Scheme = param.Scheme{Uniform: tc.uniform}
			s.Init(rng)
			s.Params()[1].Data()[0] += tc.bu
			s.Params()[3].Data()[0] += tc.bd
			blCheck(t, blBuild(t, s, rng, tc.batch, tc.hidden, tc.steps, tc.feedback))
		})
	}
}

func TestGrefParams(t *testing.T) {
	for _, c := range [][2]int{{20, 2}, {20, 20}, {20, 40}, {256, 22}} {
		s, err := stacks.NewGref("gref", c[0], c[1])
		if err != nil {
			t.Fatal(err)
		}
		if got, want := param.Count(s.Params()), (c[0]+1)*(c[1]+2); got != want {
			t.Errorf("hidden %d m %d: %d parameters, want %d", c[0], c[1], got, want)
		}
		if s.ReadingSize() != c[1] {
			t.Errorf("reading size %d, want %d", s.ReadingSize(), c[1])
		}
	}
	for _, c := range [][2]int{{0, 2}, {3, 0}, {-1, 2}} {
		if _, err := stacks.NewGref("gref", c[0], c[1]); err == nil {
			t.Errorf("NewGref(%d, %d) gave no error", c[0], c[1])
		}
	}
	s, _ := stacks.NewGref("gref", 3, 2)
	g := G.NewGraph()
	inst, _ := s.Bind(g, 1, 2)
	h := blInput(g, "h", blDense(rand.New(rand.NewPCG(1, 1)), 1, 1, 3))
	if _, err := inst.Step(2, h); err == nil {
		t.Error("step 2 before step 1 gave no error")
	}
}

// blBench runs forward and backward of 60 steps, batch 10, hidden 20 of a
// stack fed with fixed hidden states.
func blBench(b *testing.B, layer stacks.Layer) {
	const batch, hidden, steps = 10, 20, 60
	rng := rand.New(rand.NewPCG(5, 5))
	layer.Init(rng)
	g := G.NewGraph()
	inst, err := layer.Bind(g, batch, steps)
	if err != nil {
		b.Fatal(err)
	}
	var params G.Nodes
	for _, p := range layer.Params() {
		params = append(params, g.ByName(p.Name)[0])
	}
	var loss *G.Node
	for s := 1; s <= steps; s++ {
		h := blInput(g, fmt.Sprint("h", s), blDense(rng, 1, batch, hidden))
		params = append(params, h)
		r, err := inst.Step(s, h)
		if err != nil {
			b.Fatal(err)
		}
		term := G.Must(G.Sum(r))
		if loss == nil {
			loss = term
		} else {
			loss = G.Must(G.Add(loss, term))
		}
	}
	if _, err := G.Grad(loss, params...); err != nil {
		b.Fatal(err)
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := m.RunAll(); err != nil {
			b.Fatal(err)
		}
		m.Reset()
	}
}

func BenchmarkGref60(b *testing.B) {
	s, _ := stacks.NewGref("gref", 20, 20)
	blBench(b, s)
}
