package stacks_test

import (
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"

	"github.com/nsrnn/nsrnn/param"
	"github.com/nsrnn/nsrnn/stacks"
	"github.com/nsrnn/nsrnn/stacks/internal/baseline"
	"github.com/nsrnn/nsrnn/stacks/stackstest"
)

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
	near(t, "s_1 (0)", tape.Strengths(1, 0), []float64{0.8}, 1e-12)
	near(t, "s_1 (1)", tape.Strengths(1, 1), []float64{0.9}, 1e-12)
	near(t, "r_1", r, []float64{0.8, 0, 0.9, 0}, 1e-12)
	tape.Forward(2, []float64{0.1, 0}, []float64{0.5, 0.6}, vs(v2, v2), r)
	// (0): s_2[1] = max(0, 0.8 − max(0, 0.1 − 0)) = 0.7, s_2[2] = 0.5;
	//      r_2 = 0.5·v2 + min(0.7, 1 − 0.5)·v1 = (0.5, 0.5).
	// (1): s_2 = [0.9, 0.6]; r_2 = 0.6·v2 + min(0.9, 0.4)·v1 = (0.4, 0.6).
	near(t, "s_2 (0)", tape.Strengths(2, 0), []float64{0.7, 0.5}, 1e-12)
	near(t, "s_2 (1)", tape.Strengths(2, 1), []float64{0.9, 0.6}, 1e-12)
	near(t, "r_2", r, []float64{0.5, 0.5, 0.4, 0.6}, 1e-12)
	tape.Forward(3, []float64{0.9, 0.7}, []float64{0.4, 0.2}, vs(v3, v3), r)
	// (0): s_3[2] = max(0, 0.5 − 0.9) = 0; s_3[1] = max(0, 0.7 − max(0,
	//      0.9 − 0.5)) = 0.3; s_3[3] = 0.4; r_3 = 0.4·v3 + 0·v2 +
	//      min(0.3, 0.6)·v1 = (0.5, −0.2).
	// (1): s_3[2] = max(0, 0.6 − 0.7) = 0; s_3[1] = 0.9 − (0.7 − 0.6) =
	//      0.8; s_3[3] = 0.2; r_3 = 0.2·v3 + min(0.8, 0.8)·v1 = (0.9, −0.1).
	near(t, "s_3 (0)", tape.Strengths(3, 0), []float64{0.3, 0, 0.4}, 1e-12)
	near(t, "s_3 (1)", tape.Strengths(3, 1), []float64{0.8, 0, 0.2}, 1e-12)
	near(t, "r_3", r, []float64{0.5, -0.2, 0.9, -0.1}, 1e-12)
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
	d := stackstest.NewData(rand.New(rand.NewPCG(1, 1)), 1, 2, 2, 2)
	n := newNet(t, s, d, stackstest.Options{Steps: 2})
	defer n.Close()
	runNet(t, n)
	near(t, "r_0", n.Instance.Initial().Value().Data().([]float64), []float64{0, 0}, 0)
	nearAll(t, "r", n.Readings(), [][]float64{{0.8 * v[0], 0.8 * v[1]}, v}, 1e-12)
}

// TestGrefGradientsPartialPops checks gradients where thin pushes make
// pops reach through fully popped elements into a partly popped one that
// is still read (b_u and b_d shifted down), beyond the conformance suite's
// graphs.
func TestGrefGradientsPartialPops(t *testing.T) {
	for i, tc := range []struct {
		name          string
		batch, hidden int
		m             int
		bu, bd        float64
		seed          uint64
	}{
		{"thin pushes and pops", 3, 3, 2, -1, -1.5, 2},
		{"thin pushes", 3, 3, 2, 0, -1.5, 10},
		{"wide", 3, 4, 3, 0, 0, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const steps = 7
			rng := rand.New(rand.NewPCG(tc.seed, 11))
			s, err := stacks.NewGref("gref", tc.hidden, tc.m)
			if err != nil {
				t.Fatal(err)
			}
			s.Init(param.Scheme{Uniform: 1}, rng)
			s.Params()[1].Data()[0] += tc.bu
			s.Params()[3].Data()[0] += tc.bd
			n := newNet(t, s, stackstest.NewData(rng, tc.batch, tc.hidden, tc.m, steps), stackstest.Options{Steps: steps, Feedback: true})
			n.MaxPerParam = -1
			n.CheckGradients(t, uint64(i))
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
		if s.ReadingSize() != c[1] || s.Hidden() != c[0] {
			t.Errorf("reading size %d, hidden %d, want %d, %d", s.ReadingSize(), s.Hidden(), c[1], c[0])
		}
	}
	for _, c := range [][2]int{{0, 2}, {3, 0}, {-1, 2}} {
		if _, err := stacks.NewGref("gref", c[0], c[1]); err == nil {
			t.Errorf("NewGref(%d, %d) gave no error", c[0], c[1])
		}
	}
	// Steps must be added in order.
	s, _ := stacks.NewGref("gref", 3, 2)
	g := G.NewGraph()
	inst, err := s.Bind(param.NewBinding(g), 1, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	h := input(g, "h", dense(rand.New(rand.NewPCG(1, 1)), 1, 1, 3))
	if _, err := inst.Step(2, h); err == nil {
		t.Error("step 2 before step 1 gave no error")
	}
	// The default scheme: Xavier-uniform weights, zero biases.
	s, _ = stacks.NewGref("gref", 20, 4)
	s.Init(param.Scheme{}, rand.New(rand.NewPCG(1, 2)))
	for i, p := range s.Params() {
		bound := 0.0
		if i%2 == 0 {
			sh := p.Value.Shape()
			bound = math.Sqrt(6 / float64(sh[0]+sh[1]))
		}
		big := 0.0
		for _, v := range p.Data() {
			if math.Abs(v) > bound {
				t.Fatalf("%s has %v outside ±%v", p.Name, v, bound)
			}
			big = math.Max(big, math.Abs(v))
		}
		if i%2 == 0 && big < bound/2 {
			t.Errorf("%s reaches only %v of ±%v", p.Name, big, bound)
		}
	}
}

func BenchmarkGref60(b *testing.B) {
	s, _ := stacks.NewGref("gref", 20, 20)
	bench(b, s)
}
