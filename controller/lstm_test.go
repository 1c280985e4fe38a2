package controller

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/internal/gradcheck"
	"github.com/nsrnn/nsrnn/param"
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
		// PTB LSTM baseline (the paper's table): embedding 256 in, 256 units.
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

// TestInit checks that Init draws every parameter, biases included, by the
// scheme's Recurrent rule: uniform in ±u, or ±0.1 for the zero scheme.
func TestInit(t *testing.T) {
	for _, u := range []float64{0, 0.05, 0.3} {
		l, _ := NewLSTM("lstm", 4, 5, 2)
		l.Init(param.Scheme{Uniform: u}, rand.New(rand.NewPCG(1, 1)))
		bound := u
		if u == 0 {
			bound = 0.1
		}
		for _, p := range l.Params() {
			big := 0.0
			for _, v := range p.Data() {
				big = math.Max(big, math.Abs(v))
			}
			if big > bound || big < bound/2 {
				t.Errorf("scheme %v: %s reaches ±%v, want up to ±%v", u, p.Name, big, bound)
			}
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
	lg := l.Bind(param.NewBinding(g), 2)
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
			pb := param.NewBinding(g)
			lg := l.Bind(pb, batch)
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
				params = append(params, pb.Node(p))
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
			bad, worst, err := gradcheck.Check(g, loss, params, gradcheck.Options{Tol: 1e-6, Step: 1e-5, Binding: pb})
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
		lg := l.Bind(param.NewBinding(g), batch)
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

// TestBindings checks the gradient accumulators: a run adds the
// parameters' gradients into its own graph's binding (a second run without
// ZeroGrads doubles them), and running another graph of the same LSTM,
// with a binding of its own, leaves them alone.
func TestBindings(t *testing.T) {
	const hidden, steps = 3, 3
	rng := rand.New(rand.NewPCG(4, 4))
	l, _ := NewLSTM("lstm", 2, hidden, 2)
	l.Init(param.Scheme{Uniform: 0.5}, rng)
	type graph struct {
		pb *param.Binding
		m  G.VM
	}
	build := func(batch int) graph {
		g := G.NewGraph()
		pb := param.NewBinding(g)
		lg := l.Bind(pb, batch)
		st := lg.Zero()
		var loss *G.Node
		for s := 1; s <= steps; s++ {
			var err error
			if st, err = lg.Step(s, []*G.Node{input(g, fmt.Sprint("x", s), randDense(rng, 1, batch, 2))}, st); err != nil {
				t.Fatal(err)
			}
			term := dot(g, st.H(), randDense(rng, 1, batch, hidden), fmt.Sprint("a", s))
			if loss == nil {
				loss = term
			} else {
				loss = G.Must(G.Add(loss, term))
			}
		}
		if _, err := G.Grad(loss, pb.Anchor()); err != nil {
			t.Fatal(err)
		}
		return graph{pb, G.NewTapeMachine(g)}
	}
	a, b := build(2), build(3)
	defer a.m.Close()
	defer b.m.Close()
	runAll := func(gr graph) {
		gr.m.Reset()
		if err := gr.m.RunAll(); err != nil {
			t.Fatal(err)
		}
	}
	grads := func(pb *param.Binding) [][]float64 {
		var out [][]float64
		for _, p := range l.Params() {
			out = append(out, append([]float64(nil), pb.Grad(p)...))
		}
		return out
	}
	runAll(a)
	once := grads(a.pb)
	nonzero := false
	for _, g := range once {
		for _, v := range g {
			nonzero = nonzero || v != 0
		}
	}
	if !nonzero {
		t.Fatal("a run left every gradient zero")
	}
	runAll(b)
	for i, g := range grads(a.pb) {
		for j, v := range g {
			if v != once[i][j] {
				t.Fatalf("%s: running another graph changed the gradient from %v to %v", l.Params()[i].Name, once[i][j], v)
			}
		}
	}
	runAll(a)
	for i, g := range grads(a.pb) {
		for j, v := range g {
			if math.Abs(v-2*once[i][j]) > 1e-12*(1+math.Abs(v)) {
				t.Fatalf("%s: two runs without ZeroGrads gave %v, want twice %v", l.Params()[i].Name, v, once[i][j])
			}
		}
	}
	a.pb.ZeroGrads()
	runAll(a)
	for i, g := range grads(a.pb) {
		for j, v := range g {
			if v != once[i][j] {
				t.Fatalf("%s: a run after ZeroGrads gave %v, want %v", l.Params()[i].Name, v, once[i][j])
			}
		}
	}
}

// TestRunner checks that a Runner fed with the inputs of a graph gives the
// graph's hidden states (two layers, the input in two parts), that Reset
// returns it to the zero state, and that NewRunner refuses parts that do
// not fit.
func TestRunner(t *testing.T) {
	const batch, hidden, steps = 2, 3, 4
	rng := rand.New(rand.NewPCG(6, 6))
	l, _ := NewLSTM("lstm", 5, hidden, 2)
	l.Init(param.Scheme{Uniform: 0.8}, rng)
	g := G.NewGraph()
	lg := l.Bind(param.NewBinding(g), batch)
	st := lg.Zero()
	var xs [][2]*tensor.Dense
	var hs []*G.Node
	for s := 1; s <= steps; s++ {
		x := [2]*tensor.Dense{randDense(rng, 1, batch, 2), randDense(rng, 1, batch, 3)}
		xs = append(xs, x)
		var err error
		if st, err = lg.Step(s, []*G.Node{input(g, fmt.Sprint("a", s), x[0]), input(g, fmt.Sprint("b", s), x[1])}, st); err != nil {
			t.Fatal(err)
		}
		hs = append(hs, st.H()) // nothing consumes it: its value outlives the run
	}
	run(t, g)
	r, err := l.NewRunner(batch, []int{2, 3})
	if err != nil {
		t.Fatal(err)
	}
	for pass := range 2 {
		for s, x := range xs {
			got := r.Step([][]float64{x[0].Float64s(), x[1].Float64s()})
			want := hs[s].Value().Data().([]float64)
			for i := range want {
				if math.Abs(got[i]-want[i]) > 1e-14 {
					t.Fatalf("pass %d step %d: runner h %v, graph %v", pass, s+1, got, want)
				}
			}
			if &r.H()[0] != &got[0] {
				t.Error("H is not the latest hidden state")
			}
		}
		r.Reset()
	}
	for _, sizes := range [][]int{{2, 2}, {5, 1}, {-1, 6}} {
		if _, err := l.NewRunner(batch, sizes); err == nil {
			t.Errorf("NewRunner with parts %v gave no error", sizes)
		}
	}
	if _, err := l.NewRunner(0, []int{5}); err == nil {
		t.Error("NewRunner with batch 0 gave no error")
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
	pb := param.NewBinding(g)
	lg := l.Bind(pb, batch)
	st := lg.Zero()
	var loss *G.Node
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
	// The parameters' gradients go into pb's accumulators; the anchor
	// makes gorgonia run the cells' backward passes.
	if _, err := G.Grad(loss, pb.Anchor()); err != nil {
		b.Fatal(err)
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		pb.ZeroGrads()
		if err := m.RunAll(); err != nil {
			b.Fatal(err)
		}
		m.Reset()
	}
}

// TestFloat32 runs the same steps with the products in float64 and in
// float32 (Graph.SetFloat32): the final states differ, so the float32 path
// ran, but only by float32 rounding (sums of a few products: 1e-6
// relative), and switching back gives the float64 result exactly.
func TestFloat32(t *testing.T) {
	const batch, hidden, steps = 3, 5, 6
	rng := rand.New(rand.NewPCG(4, 4))
	l, _ := NewLSTM("lstm", 4, hidden, 2)
	l.Init(param.Scheme{Uniform: 0.8}, rng)
	g := G.NewGraph()
	lg := l.Bind(param.NewBinding(g), batch)
	st := lg.Zero()
	for s := 0; s < steps; s++ {
		var err error
		x := input(g, fmt.Sprint("x", s), randDense(rng, 1, batch, 4))
		if st, err = lg.Step(s+1, []*G.Node{x}, st); err != nil {
			t.Fatal(err)
		}
	}
	final := func(f32 bool) Carry {
		lg.SetFloat32(f32)
		run(t, g)
		c, err := st.Carry()
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	want, got, again := final(false), final(true), final(false)
	differ := false
	for i := range want {
		for j, w := range want[i] {
			if e := math.Abs(got[i][j] - w); e > 1e-6*math.Max(1, math.Abs(w)) {
				t.Errorf("layer %d value %d: float32 %v, float64 %v", i, j, got[i][j], w)
			}
			differ = differ || got[i][j] != w
			if again[i][j] != w {
				t.Fatalf("layer %d value %d: float64 again %v, first %v", i, j, again[i][j], w)
			}
		}
	}
	if !differ {
		t.Error("float32 products gave exactly the float64 states: the float32 path did not run")
	}
}

// TestNewLSTMRefusesHuge: an LSTM beyond MaxParams is an error before
// anything is allocated, whatever overflows its sizes would cause.
func TestNewLSTMRefusesHuge(t *testing.T) {
	for _, c := range [][3]int{{20000, 20000, 1}, {10, 100, 1 << 40}, {1 << 62, 1 << 62, 1}} {
		if _, err := NewLSTM("c", c[0], c[1], c[2]); err == nil || !strings.Contains(err.Error(), "MaxParams") {
			t.Errorf("NewLSTM(%d, %d, %d): %v", c[0], c[1], c[2], err)
		}
	}
	if _, err := NewLSTM("c", 10000, 256, 1); err != nil {
		t.Errorf("the paper's LSTM: %v", err)
	}
}
