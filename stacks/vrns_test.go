package stacks_test

import (
	"errors"
	"fmt"
	"hash"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/fused"
	"github.com/nsrnn/nsrnn/internal/gradcheck"
	"github.com/nsrnn/nsrnn/param"
	"github.com/nsrnn/nsrnn/stacks"
	"github.com/nsrnn/nsrnn/stacks/stackstest"
)

// Tests of the VRNS stack as a gorgonia layer. Its dynamic program is
// tested against a brute-force enumeration of runs in nskernel; these
// tests check the layer: gradients through whole graphs, chunks with
// carried states, agreement with the RNS stack, parameters and errors.
// Helpers are prefixed vrns to keep clear of the other tests' helpers.

func vrnsName(c stacks.VRNSConfig) string {
	w := "unlimited"
	if c.Window > 0 {
		w = fmt.Sprintf("D=%d", c.Window)
	}
	return fmt.Sprintf("%s/%s/%v-bottom/Q=%d,Γ=%d,m=%d", c.Bottom, w, c.BottomVector, c.States, c.Symbols, c.Vector)
}

func vrnsNew(t testing.TB, hidden int, cfg stacks.VRNSConfig, scale float64, seed uint64) *stacks.VRNS {
	t.Helper()
	s, err := stacks.NewVRNS("vrns", hidden, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Init(param.Scheme{Uniform: scale}, rand.New(rand.NewPCG(seed, 23)))
	return s
}

// TestConformanceVRNS runs the conformance suite on the VRNS stack.
func TestConformanceVRNS(t *testing.T) {
	for _, bottom := range []stacks.Bottom{stacks.Original, stacks.Fixed} {
		for _, window := range []int{0, 3} {
			for _, bv := range []stacks.BottomVector{stacks.LearnedBottom, stacks.ZeroBottom} {
				cfg := stacks.VRNSConfig{States: 2, Symbols: 2, Vector: 2, Bottom: bottom, Window: window, BottomVector: bv}
				stackstest.Test(t, vrnsName(cfg), func(hidden int) (stacks.Layer, error) { return stacks.NewVRNS("vrns", hidden, cfg) })
			}
		}
	}
	cfg := stacks.VRNSConfig{States: 1, Symbols: 3, Vector: 1, Bottom: stacks.Fixed, Window: 2, BottomVector: stacks.OneBottom}
	stackstest.Test(t, vrnsName(cfg), func(hidden int) (stacks.Layer, error) { return stacks.NewVRNS("vrns", hidden, cfg) })
}

// vrnsGraph is a VRNS layer in a graph of its own: h_t input nodes, r_t =
// Step(t, h_t), and loss Σ_{t=0}^{n} ⟨C_t, r_t⟩ (r_0 the instance's
// Initial reading), computed by one node that records the readings.
type vrnsGraph struct {
	g    *G.ExprGraph
	pb   *stacks.Binding
	inst stacks.Instance
	h    G.Nodes
	loss *G.Node
	lk   *vrnsLoss
	vm   G.VM
}

// vrnsNewGraph builds a graph of steps steps; h_t and C_t are drawn from
// rng.
func vrnsNewGraph(t testing.TB, s *stacks.VRNS, rng *rand.Rand, batch, steps int, carry bool) *vrnsGraph {
	t.Helper()
	g := G.NewGraph()
	n := &vrnsGraph{g: g, pb: stacks.NewBinding(g)}
	inst, err := s.Bind(n.pb, batch, steps, carry)
	if err != nil {
		t.Fatal(err)
	}
	n.inst = inst
	rs := G.Nodes{inst.Initial()}
	for i := 1; i <= steps; i++ {
		hv := tensor.New(tensor.WithShape(batch, s.Hidden()), tensor.Of(tensor.Float64))
		for j := range hv.Float64s() {
			hv.Float64s()[j] = rng.NormFloat64()
		}
		h := G.NewMatrix(g, tensor.Float64, G.WithShape(batch, s.Hidden()), G.WithName(fmt.Sprintf("h%d", i)), G.WithValue(hv))
		r, err := inst.Step(i, h)
		if err != nil {
			t.Fatal(err)
		}
		n.h = append(n.h, h)
		rs = append(rs, r)
	}
	n.lk = &vrnsLoss{}
	for range rs {
		c := make([]float64, batch*s.ReadingSize())
		for j := range c {
			c[j] = rng.NormFloat64()
		}
		n.lk.c = append(n.lk.c, c)
	}
	if n.loss, err = fused.Apply(n.lk, rs...); err != nil {
		t.Fatal(err)
	}
	return n
}

// run runs the graph (with its gradient nodes, if any) once.
func (n *vrnsGraph) run(t testing.TB) {
	t.Helper()
	if n.vm == nil {
		n.vm = G.NewTapeMachine(n.g)
	}
	n.pb.ZeroGrads()
	n.vm.Reset()
	if err := n.vm.RunAll(); err != nil {
		t.Fatal(err)
	}
}

// runGraphOnce runs g forward once on a machine of its own.
func runGraphOnce(t testing.TB, g *G.ExprGraph) {
	t.Helper()
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
}

func (n *vrnsGraph) close() {
	if n.vm != nil {
		n.vm.Close()
	}
}

// readings returns r_0 … r_n of the latest run.
func (n *vrnsGraph) readings() [][]float64 { return n.lk.reads }

// vrnsLoss is the kernel Σ_t ⟨C_t, r_t⟩ over its inputs r_t, recording
// copies of them.
type vrnsLoss struct {
	c     [][]float64
	reads [][]float64
}

func (k *vrnsLoss) Name() string { return "vrns_test_loss" }

func (k *vrnsLoss) WriteHash(h hash.Hash) { fmt.Fprintf(h, "vrns_test_loss:%p", k) }

func (k *vrnsLoss) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	for i, s := range in {
		if s.TotalSize() != len(k.c[i]) {
			return nil, fmt.Errorf("reading %d has shape %v", i, s)
		}
	}
	return tensor.ScalarShape(), nil
}

func (k *vrnsLoss) Forward(out []float64, in [][]float64) {
	k.reads = k.reads[:0]
	var l float64
	for i, r := range in {
		k.reads = append(k.reads, append([]float64(nil), r...))
		for j, v := range r {
			l += k.c[i][j] * v
		}
	}
	out[0] = l
}

func (k *vrnsLoss) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {
	for i, g := range gradIn {
		for j := range g {
			g[j] += gradOut[0] * k.c[i][j]
		}
	}
}

// magnitude bounds the scale of the loss's terms: Σ_t Σ_i |C_t[i]|·|r_t[i]|
// plus one, so that the rounding of a central difference with step h is
// about ε·magnitude/h.
func (k *vrnsLoss) magnitude() float64 {
	m := 1.0
	for i, r := range k.reads {
		for j, v := range r {
			m += math.Abs(k.c[i][j] * v)
		}
	}
	return m
}

// TestVRNSGradients compares the gradients of whole graphs (h_t input
// nodes → VRNS → Σ_{t=0}^{n} ⟨C_t, r_t⟩) with respect to every parameter
// (read from the binding, gradcheck's Options.Binding) and every h_t with
// central finite differences, for both bottom behaviours, every bottom
// vector, unlimited and limited. The loss includes r_0, so that a learned
// bottom vector gets its gradient through r_0 as well as (with the fixed
// bottom) through the dynamic program.
func TestVRNSGradients(t *testing.T) {
	const batch, hidden, steps = 2, 3, 5
	seed := uint64(0)
	for _, bottom := range []stacks.Bottom{stacks.Original, stacks.Fixed} {
		for _, window := range []int{0, 2} {
			for _, bv := range []stacks.BottomVector{stacks.LearnedBottom, stacks.ZeroBottom, stacks.OneBottom} {
				seed++
				cfg := stacks.VRNSConfig{States: 2, Symbols: 2, Vector: 2, Bottom: bottom, Window: window, BottomVector: bv}
				t.Run(vrnsName(cfg), func(t *testing.T) {
					s := vrnsNew(t, hidden, cfg, 1, seed)
					n := vrnsNewGraph(t, s, rand.New(rand.NewPCG(seed, 1)), batch, steps, false)
					defer n.close()
					var params G.Nodes
					for _, p := range s.Params() {
						params = append(params, n.pb.Node(p))
					}
					params = append(params, n.h...)
					// A forward run gives the scale of the loss's terms; the
					// rounding of a central difference is about ε times
					// that scale over the step, which sets gradcheck's
					// floor (as stackstest does).
					runGraphOnce(t, n.g)
					const h, tol = 1e-6, 1e-6
					floor := 10 * 0x1p-52 * n.lk.magnitude() / h / tol
					bad, worst, err := gradcheck.Check(n.g, n.loss, params, gradcheck.Options{Step: h, Tol: tol, Floor: floor, MaxPerParam: 24, Seed: seed, Binding: n.pb})
					if err != nil {
						t.Fatal(err)
					}
					for _, m := range bad {
						t.Error(m)
					}
					if worst == 0 {
						t.Error("no gradient was checked")
					}
				})
			}
		}
	}
}

// TestVRNSChunksEqualWhole: for the memory-limited stack, a graph of 9
// steps and the same hidden states run through graphs of 4 and 5 steps
// bound with carry, the second started with SetState from the first's
// State (directly, and through MarshalBinary and UnmarshalState), read the
// same (the second chunk's r_0 is the first's last reading); so do the
// final states.
func TestVRNSChunksEqualWhole(t *testing.T) {
	const batch, hidden = 3, 4
	for _, bottom := range []stacks.Bottom{stacks.Original, stacks.Fixed} {
		for _, window := range []int{1, 3, 12} {
			for _, bv := range []stacks.BottomVector{stacks.LearnedBottom, stacks.OneBottom} {
				cfg := stacks.VRNSConfig{States: 2, Symbols: 2, Vector: 3, Bottom: bottom, Window: window, BottomVector: bv}
				t.Run(vrnsName(cfg), func(t *testing.T) {
					s := vrnsNew(t, hidden, cfg, 1.5, 3)
					whole := vrnsNewGraph(t, s, rand.New(rand.NewPCG(4, 4)), batch, 9, true)
					defer whole.close()
					whole.run(t)
					want := whole.readings()
					wantState, err := whole.inst.State()
					if err != nil {
						t.Fatal(err)
					}
					for _, encoded := range []bool{false, true} {
						// The chunks draw the same h_t from the same source.
						rng := rand.New(rand.NewPCG(4, 4))
						first := vrnsNewGraph(t, s, rng, batch, 4, true)
						defer first.close()
						hs := vrnsHidden(first)
						second := vrnsNewGraph(t, s, rand.New(rand.NewPCG(9, 9)), batch, 5, true)
						defer second.close()
						for i, h := range second.h {
							copy(h.Value().Data().([]float64), vrnsHiddenOf(whole, 4+i))
						}
						for i, h := range hs {
							if !vrnsSame(h, vrnsHiddenOf(whole, i)) {
								t.Fatalf("chunk input %d differs", i+1)
							}
						}
						first.run(t)
						st, err := first.inst.State()
						if err != nil {
							t.Fatal(err)
						}
						if encoded {
							data, err := st.MarshalBinary()
							if err != nil {
								t.Fatal(err)
							}
							if st, err = s.UnmarshalState(data); err != nil {
								t.Fatal(err)
							}
						}
						if err := second.inst.SetState(st); err != nil {
							t.Fatal(err)
						}
						second.run(t)
						if r0 := second.readings()[0]; !vrnsSame(r0, want[4]) {
							t.Fatalf("encoded %v: r_0 of the second chunk is %v, want r_4 = %v", encoded, r0, want[4])
						}
						got := append(append([][]float64(nil), first.readings()...), second.readings()[1:]...)
						for i := range want {
							if !vrnsSame(got[i], want[i]) {
								t.Fatalf("encoded %v: r_%d = %v, whole run %v", encoded, i, got[i], want[i])
							}
						}
						gotState, err := second.inst.State()
						if err != nil {
							t.Fatal(err)
						}
						a, _ := gotState.MarshalBinary()
						b, _ := wantState.MarshalBinary()
						if string(a) != string(b) {
							t.Fatalf("encoded %v: the final states differ", encoded)
						}
					}
				})
			}
		}
	}
}

func vrnsHidden(n *vrnsGraph) [][]float64 {
	var out [][]float64
	for _, h := range n.h {
		out = append(out, h.Value().Data().([]float64))
	}
	return out
}

func vrnsHiddenOf(n *vrnsGraph, i int) []float64 { return n.h[i].Value().Data().([]float64) }

func vrnsSame(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestVRNSMatchesRNS: with m = 1, a bottom vector of ones and W_v = 0,
// b_v = 40 (so that every pushed vector is σ(40) = 1 in float64), the
// VRNS readings are those of stacks.Run for the RNS stack on the same
// action log-weights W_a h_t + b_a, and r_0 is one-hot at (0, 0).
func TestVRNSMatchesRNS(t *testing.T) {
	const batch, hidden, steps = 2, 3, 7
	for _, bottom := range []stacks.Bottom{stacks.Original, stacks.Fixed} {
		for _, window := range []int{0, 2, 5} {
			for _, qg := range [][2]int{{2, 2}, {2, 3}, {1, 2}} {
				cfg := stacks.VRNSConfig{States: qg[0], Symbols: qg[1], Vector: 1, Bottom: bottom, Window: window, BottomVector: stacks.OneBottom}
				t.Run(vrnsName(cfg), func(t *testing.T) {
					s := vrnsNew(t, hidden, cfg, 2, 5)
					ps := s.Params()
					clear(ps[2].Data())
					ps[3].Data()[0] = 40
					n := vrnsNewGraph(t, s, rand.New(rand.NewPCG(6, 6)), batch, steps, false)
					defer n.close()
					n.run(t)
					var lw [][]float64
					for _, h := range vrnsHidden(n) {
						lw = append(lw, vrnsAffine(h, ps[0].Data(), ps[1].Data(), batch))
					}
					rns := stacks.NSConfig{States: qg[0], Symbols: qg[1], StateReading: true, Bottom: bottom, Window: window}
					want, err := stacks.Run(rns, batch, lw)
					if err != nil {
						t.Fatal(err)
					}
					got := n.readings()
					for b := 0; b < batch; b++ {
						r0 := got[0][b*s.ReadingSize() : (b+1)*s.ReadingSize()]
						for j, v := range r0 {
							if (j == 0) != (v == 1) || (j > 0 && v != 0) {
								t.Fatalf("r_0 = %v, want one-hot at 0", r0)
							}
						}
					}
					for i := range want {
						for j := range want[i] {
							if d := math.Abs(got[i+1][j] - want[i][j]); !(d <= 1e-12) {
								t.Fatalf("r_%d = %v, RNS reads %v", i+1, got[i+1], want[i])
							}
						}
					}
				})
			}
		}
	}
}

// vrnsAffine returns h W_aᵀ + b_a for h (batch, hidden), W_a (out, hidden).
func vrnsAffine(h, w, b []float64, batch int) []float64 {
	out, hidden := len(b), len(h)/batch
	y := make([]float64, batch*out)
	for i := 0; i < batch; i++ {
		for j := 0; j < out; j++ {
			v := b[j]
			for k := 0; k < hidden; k++ {
				v += w[j*hidden+k] * h[i*hidden+k]
			}
			y[i*out+j] = v
		}
	}
	return y
}

// TestVRNSParams checks NumParams against the formula (hidden+1)·
// (|Q||Γ|(2|Q||Γ|+|Q|) + m) + m·[learned bottom vector], against the
// parameters themselves, and the parameters' names and shapes.
func TestVRNSParams(t *testing.T) {
	for _, tc := range []struct {
		q, g, m, hidden int
		bv              stacks.BottomVector
		want            int
	}{
		{2, 3, 5, 20, stacks.LearnedBottom, 21*(6*14+5) + 5},
		{2, 3, 5, 20, stacks.ZeroBottom, 21 * (6*14 + 5)},
		{1, 1, 1, 1, stacks.OneBottom, 2 * (3 + 1)},
		{3, 2, 4, 7, stacks.LearnedBottom, 8*(6*15+4) + 4},
	} {
		cfg := stacks.VRNSConfig{States: tc.q, Symbols: tc.g, Vector: tc.m, BottomVector: tc.bv}
		if got := cfg.NumParams(tc.hidden); got != tc.want {
			t.Errorf("%+v hidden %d: NumParams %d, want %d", cfg, tc.hidden, got, tc.want)
		}
		s, err := stacks.NewVRNS("st", tc.hidden, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := param.Count(s.Params()); got != tc.want {
			t.Errorf("%+v hidden %d: %d parameters, want %d", cfg, tc.hidden, got, tc.want)
		}
		a := cfg.NumActions()
		want := []struct {
			name  string
			shape tensor.Shape
		}{{"st.W_a", tensor.Shape{a, tc.hidden}}, {"st.b_a", tensor.Shape{a}}, {"st.W_v", tensor.Shape{tc.m, tc.hidden}}, {"st.b_v", tensor.Shape{tc.m}}}
		if tc.bv == stacks.LearnedBottom {
			want = append(want, struct {
				name  string
				shape tensor.Shape
			}{"st.w_0", tensor.Shape{tc.m}})
		}
		ps := s.Params()
		if len(ps) != len(want) {
			t.Fatalf("%+v: %d parameters, want %d", cfg, len(ps), len(want))
		}
		for i, p := range ps {
			if p.Name != want[i].name || !p.Value.Shape().Eq(want[i].shape) {
				t.Errorf("%+v: parameter %d is %s %v, want %s %v", cfg, i, p.Name, p.Value.Shape(), want[i].name, want[i].shape)
			}
		}
		if s.ReadingSize() != tc.q*tc.g*tc.m || cfg.ReadingSize() != tc.q*tc.g*tc.m {
			t.Errorf("%+v: reading size %d", cfg, s.ReadingSize())
		}
	}
}

// TestVRNSInit checks the initialization rules: with the zero Scheme the
// Actions layer and w_0 are uniform in ±0.1 (Recurrent) and the vector
// layer Xavier-uniform with a zero bias (Affine).
func TestVRNSInit(t *testing.T) {
	s, err := stacks.NewVRNS("st", 20, stacks.VRNSConfig{States: 2, Symbols: 3, Vector: 5})
	if err != nil {
		t.Fatal(err)
	}
	s.Init(param.Scheme{}, rand.New(rand.NewPCG(1, 2)))
	ps := s.Params()
	xavier := math.Sqrt(6.0 / 25)
	for i, bound := range []float64{0.1, 0.1, xavier, 0, 0.1} {
		top := 0.0
		for _, v := range ps[i].Data() {
			top = math.Max(top, math.Abs(v))
		}
		if top > bound || (bound > 0 && top < bound/2) {
			t.Errorf("%s: largest |value| %g, want at most %g (and not much less)", ps[i].Name, top, bound)
		}
	}
}

// TestVRNSErrors checks the validation of configurations, the carrying
// errors and the refusal of states of another configuration.
func TestVRNSErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cfg    stacks.VRNSConfig
		hidden int
		want   string
	}{
		{"no states", stacks.VRNSConfig{Symbols: 2, Vector: 1}, 3, "States"},
		{"no symbols", stacks.VRNSConfig{States: 2, Vector: 1}, 3, "Symbols"},
		{"no vector", stacks.VRNSConfig{States: 2, Symbols: 2}, 3, "Vector"},
		{"negative window", stacks.VRNSConfig{States: 1, Symbols: 1, Vector: 1, Window: -1}, 3, "Window"},
		{"bad bottom", stacks.VRNSConfig{States: 1, Symbols: 1, Vector: 1, Bottom: 2}, 3, "bottom"},
		{"bad bottom vector", stacks.VRNSConfig{States: 1, Symbols: 1, Vector: 1, BottomVector: 3}, 3, "bottom vector"},
		{"no hidden", stacks.VRNSConfig{States: 1, Symbols: 1, Vector: 1}, 0, "hidden"},
	} {
		if _, err := stacks.NewVRNS("v", tc.hidden, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewVRNS gave %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
	s := vrnsNew(t, 3, stacks.VRNSConfig{States: 2, Symbols: 2, Vector: 2}, 1, 1)
	if err := s.Carryable(); !errors.Is(err, stacks.ErrNoCarry) {
		t.Errorf("unlimited Carryable: %v", err)
	}
	if _, err := s.Bind(stacks.NewBinding(G.NewGraph()), 2, 3, true); !errors.Is(err, stacks.ErrNoCarry) {
		t.Errorf("unlimited Bind with carry: %v", err)
	}
	if _, err := s.UnmarshalState([]byte("anything")); !errors.Is(err, stacks.ErrNoCarry) {
		t.Errorf("unlimited UnmarshalState: %v", err)
	}
	for _, b := range []stacks.BottomVector{stacks.LearnedBottom, stacks.ZeroBottom, stacks.OneBottom, 7} {
		if b.String() == "" || (b == 7) != strings.Contains(b.String(), "7") {
			t.Errorf("BottomVector(%d).String() = %q", int(b), b.String())
		}
	}

	// States of other configurations are refused, as values and as
	// encodings.
	const batch, hidden = 2, 3
	var layers []*stacks.VRNS
	for _, cfg := range []stacks.VRNSConfig{
		{States: 2, Symbols: 2, Vector: 2, Window: 2},
		{States: 2, Symbols: 2, Vector: 3, Window: 2},
		{States: 2, Symbols: 2, Vector: 2, Window: 3},
		{States: 2, Symbols: 2, Vector: 2, Window: 2, Bottom: stacks.Fixed},
		{States: 2, Symbols: 2, Vector: 2, Window: 2, BottomVector: stacks.ZeroBottom},
	} {
		layers = append(layers, vrnsNew(t, hidden, cfg, 1, 1))
	}
	states := make([]stacks.State, len(layers))
	encs := make([][]byte, len(layers))
	graphs := make([]*vrnsGraph, len(layers))
	for i, l := range layers {
		graphs[i] = vrnsNewGraph(t, l, rand.New(rand.NewPCG(2, 2)), batch, 3, true)
		defer graphs[i].close()
		if _, err := graphs[i].inst.State(); err == nil {
			t.Error("State before a run gave no error")
		}
		graphs[i].run(t)
		var err error
		if states[i], err = graphs[i].inst.State(); err != nil {
			t.Fatal(err)
		}
		if encs[i], err = states[i].MarshalBinary(); err != nil {
			t.Fatal(err)
		}
	}
	for i, l := range layers {
		for j := range layers {
			err := graphs[i].inst.SetState(states[j])
			_, uerr := l.UnmarshalState(encs[j])
			if i == j {
				if err != nil || uerr != nil {
					t.Errorf("layer %d refused its own state: %v, %v", i, err, uerr)
				}
				continue
			}
			if err == nil {
				t.Errorf("layer %d accepted the state of layer %d", i, j)
			}
			if uerr == nil {
				t.Errorf("layer %d decoded the encoding of layer %d", i, j)
			}
		}
		for _, bad := range [][]byte{nil, encs[i][:20], encs[i][:len(encs[i])-1], append(append([]byte(nil), encs[i]...), 0)} {
			if _, err := l.UnmarshalState(bad); err == nil {
				t.Errorf("layer %d decoded a malformed encoding of %d bytes", i, len(bad))
			}
		}
	}
}

// TestVRNSBindRefusesHugeTape: a batch and length whose dynamic program
// would exceed MaxTapeBytes are refused at Bind, before anything is
// allocated, as for NS.
func TestVRNSBindRefusesHugeTape(t *testing.T) {
	s, err := stacks.NewVRNS("v", 4, stacks.VRNSConfig{States: 3, Symbols: 3, Vector: 8})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Bind(stacks.NewBinding(G.NewGraph()), 1000, 5000, false)
	if err == nil || !strings.Contains(err.Error(), "more than the limit") {
		t.Fatalf("Bind of a batch of 1000 over 5000 steps: %v, want a refusal over the memory limit", err)
	}
	if _, err := s.Bind(stacks.NewBinding(G.NewGraph()), 2, 3, false); err != nil {
		t.Fatalf("a small Bind refused: %v", err)
	}
}
