package controller

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/internal/gradcheck"
	"github.com/nsrnn/nsrnn/internal/param"
)

func randDense(rng *rand.Rand, scale float64, shape ...int) *tensor.Dense {
	d := tensor.New(tensor.WithShape(shape...), tensor.Of(tensor.Float64))
	for i := range d.Float64s() {
		d.Float64s()[i] = scale * rng.NormFloat64()
	}
	return d
}

func input(g *G.ExprGraph, name string, v *tensor.Dense) *G.Node {
	return G.NewMatrix(g, tensor.Float64, G.WithShape(v.Shape()...), G.WithName(name), G.WithValue(v))
}

// dot is Σ a ⊙ b for a node a and a constant tensor b.
func dot(g *G.ExprGraph, a *G.Node, b *tensor.Dense, name string) *G.Node {
	return G.Must(G.Sum(G.Must(G.HadamardProd(a, input(g, name, b)))))
}

func run(t testing.TB, g *G.ExprGraph) {
	t.Helper()
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
}

func TestNewLSTMErrors(t *testing.T) {
	for _, c := range [][3]int{{-1, 2, 1}, {3, 0, 1}, {3, 2, 0}} {
		if _, err := NewLSTM("l", c[0], c[1], c[2]); err == nil {
			t.Errorf("NewLSTM(%v) gave no error", c)
		}
	}
}

func TestParamCount(t *testing.T) {
	for _, c := range []struct{ in, h, layers, want int }{
		{10, 20, 1, 4*20*(10+20) + 8*20},
		{10, 20, 2, 4*20*(10+20) + 8*20 + 4*20*40 + 8*20},
		// PTB LSTM baseline (DESIGN §5): embedding 256 in, 256 units.
		{256, 256, 1, 526336},
	} {
		l, err := NewLSTM("lstm", c.in, c.h, c.layers)
		if err != nil {
			t.Fatal(err)
		}
		if got := param.Count(l.Params()); got != c.want {
			t.Errorf("in %d hidden %d layers %d: %d parameters, want %d", c.in, c.h, c.layers, got, c.want)
		}
	}
	l, _ := NewLSTM("ctl", 3, 2, 2)
	want := []string{"ctl.0.W_ih", "ctl.0.W_hh", "ctl.0.b_ih", "ctl.0.b_hh", "ctl.1.W_ih", "ctl.1.W_hh", "ctl.1.b_ih", "ctl.1.b_hh"}
	for i, p := range l.Params() {
		if p.Name != want[i] {
			t.Errorf("param %d is %s, want %s", i, p.Name, want[i])
		}
	}
}

// TestStepByHand checks one step of a one-unit LSTM against the equations
// written out by hand, for two batch rows, with the input in two parts.
func TestStepByHand(t *testing.T) {
	l, err := NewLSTM("lstm", 2, 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	ps := l.Params()
	// Rows are the gates i, f, g, o.
	copy(ps[0].Data(), []float64{0.5, -0.3, 0.2, 0.8, -0.7, 0.1, 0.4, 0.6}) // W_ih (4×2)
	copy(ps[1].Data(), []float64{0.3, -0.2, 0.9, -0.5})                     // W_hh (4×1)
	copy(ps[2].Data(), []float64{0.1, 0.2, -0.1, 0.05})                     // b_ih
	copy(ps[3].Data(), []float64{-0.05, 0.3, 0.2, 0.1})                     // b_hh
	x0 := []float64{1.0, -0.5}                                              // part 0, rows 0 and 1
	x1 := []float64{0.3, 2.0}                                               // part 1
	h0 := []float64{0.4, -0.6}
	c0 := []float64{-0.2, 0.7}

	g := G.NewGraph()
	lg := l.Bind(g, 2)
	in := lg.Input()
	if err := lg.SetInput(Carry{{h0[0], c0[0], h0[1], c0[1]}}); err != nil {
		t.Fatal(err)
	}
	p0 := input(g, "x0", tensor.New(tensor.WithShape(2, 1), tensor.WithBacking([]float64{x0[0], x0[1]})))
	p1 := input(g, "x1", tensor.New(tensor.WithShape(2, 1), tensor.WithBacking([]float64{x1[0], x1[1]})))
	s, err := lg.Step(1, []*G.Node{p0, p1}, in)
	if err != nil {
		t.Fatal(err)
	}
	h, c := s.H(), s.C()
	run(t, g)
	sig := func(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
	for b := 0; b < 2; b++ {
		zi := 0.5*x0[b] - 0.3*x1[b] + 0.1 + 0.3*h0[b] - 0.05
		zf := 0.2*x0[b] + 0.8*x1[b] + 0.2 - 0.2*h0[b] + 0.3
		zg := -0.7*x0[b] + 0.1*x1[b] - 0.1 + 0.9*h0[b] + 0.2
		zo := 0.4*x0[b] + 0.6*x1[b] + 0.05 - 0.5*h0[b] + 0.1
		cw := sig(zf)*c0[b] + sig(zi)*math.Tanh(zg)
		hw := sig(zo) * math.Tanh(cw)
		gh := h.Value().Data().([]float64)[b]
		gc := c.Value().Data().([]float64)[b]
		if math.Abs(gh-hw) > 1e-14 || math.Abs(gc-cw) > 1e-14 {
			t.Errorf("row %d: h %.17g c %.17g, want %.17g %.17g", b, gh, gc, hw, cw)
		}
	}
}

func TestGradients(t *testing.T) {
	for _, tc := range []struct {
		name     string
		layers   int
		parts    []int
		constant bool // first part constant
		steps    int
	}{
		{"1 layer", 1, []int{3, 2}, false, 4},
		{"2 layers", 2, []int{3, 2}, false, 4},
		{"2 layers constant part", 2, []int{3, 2}, true, 3},
		{"3 layers one part", 3, []int{4}, false, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const batch, hidden = 3, 4
			rng := rand.New(rand.NewPCG(7, uint64(tc.layers)))
			total := 0
			for _, s := range tc.parts {
				total += s
			}
			l, err := NewLSTM("lstm", total, hidden, tc.layers)
			if err != nil {
				t.Fatal(err)
			}
			l.Init(param.Scheme{Uniform: 0.8}, rng)
			g := G.NewGraph()
			lg := l.Bind(g, batch)
			st := lg.Input()
			carry := make(Carry, tc.layers)
			for i := range carry {
				carry[i] = randDense(rng, 0.5, batch, 2*hidden).Float64s()
			}
			if err := lg.SetInput(carry); err != nil {
				t.Fatal(err)
			}
			var params G.Nodes
			for _, p := range l.Params() {
				params = append(params, g.ByName(p.Name)[0])
			}
			for i := 0; i < tc.layers; i++ {
				params = append(params, st.Layer(i))
			}
			var loss *G.Node
			for step := 1; step <= tc.steps; step++ {
				var parts []Part
				for i, s := range tc.parts {
					x := input(g, fmt.Sprintf("x%d_%d", step, i), randDense(rng, 1, batch, s))
					c := tc.constant && i == 0
					parts = append(parts, Part{Node: x, Constant: c})
					if !c {
						params = append(params, x)
					}
				}
				if st, err = lg.StepParts(step, parts, st); err != nil {
					t.Fatal(err)
				}
				term := dot(g, st.H(), randDense(rng, 1, batch, hidden), fmt.Sprintf("a%d", step))
				if loss == nil {
					loss = term
				} else {
					loss = G.Must(G.Add(loss, term))
				}
			}
			loss = G.Must(G.Add(loss, dot(g, st.C(), randDense(rng, 1, batch, hidden), "cfinal")))
			bad, worst, err := gradcheck.Check(g, loss, params, gradcheck.Options{Tol: 1e-6, Step: 1e-5})
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bad {
				t.Error(b)
			}
			t.Logf("%d parameters checked, worst relative error %.3g", len(params), worst)
		})
	}
}

// TestCarry checks that running 5 steps in chunks of 2 and 3, carrying the
// state, gives the same final state as running them at once.
func TestCarry(t *testing.T) {
	const batch, hidden, steps = 2, 3, 5
	rng := rand.New(rand.NewPCG(3, 3))
	l, _ := NewLSTM("lstm", 2, hidden, 2)
	l.Init(param.Scheme{}, rng)
	xs := make([]*tensor.Dense, steps)
	for i := range xs {
		xs[i] = randDense(rng, 1, batch, 2)
	}
	chain := func(from, to int, c Carry) Carry {
		g := G.NewGraph()
		lg := l.Bind(g, batch)
		st := lg.Zero()
		if c != nil {
			st = lg.Input()
			if err := lg.SetInput(c); err != nil {
				t.Fatal(err)
			}
		}
		for s := from; s < to; s++ {
			var err error
			if st, err = lg.Step(s+1, []*G.Node{input(g, fmt.Sprint("x", s), xs[s])}, st); err != nil {
				t.Fatal(err)
			}
		}
		run(t, g)
		out, err := st.Carry()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	whole := chain(0, steps, nil)
	parts := chain(2, steps, chain(0, 2, nil))
	for i := range whole {
		for j := range whole[i] {
			if whole[i][j] != parts[i][j] {
				t.Fatalf("layer %d value %d: whole %v chunked %v", i, j, whole[i][j], parts[i][j])
			}
		}
	}
}

// BenchmarkLSTM60 runs forward and backward of 60 steps, batch 10, input
// 4+6, hidden 20, one layer, through a TapeMachine.
func BenchmarkLSTM60(b *testing.B) {
	const batch, hidden, steps = 10, 20, 60
	rng := rand.New(rand.NewPCG(1, 1))
	l, _ := NewLSTM("lstm", 10, hidden, 1)
	l.Init(param.Scheme{Uniform: 0.1}, rng)
	g := G.NewGraph()
	lg := l.Bind(g, batch)
	st := lg.Zero()
	var loss *G.Node
	var params G.Nodes
	for _, p := range l.Params() {
		params = append(params, g.ByName(p.Name)[0])
	}
	for s := 1; s <= steps; s++ {
		x := input(g, fmt.Sprint("x", s), randDense(rng, 1, batch, 4))
		r := input(g, fmt.Sprint("r", s), randDense(rng, 1, batch, 6))
		var err error
		if st, err = lg.StepParts(s, []Part{{Node: x, Constant: true}, {Node: r}}, st); err != nil {
			b.Fatal(err)
		}
		term := G.Must(G.Sum(st.H()))
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
