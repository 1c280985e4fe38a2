package stacks_test

import (
	"fmt"
	"hash"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/internal/fused"
	"github.com/nsrnn/nsrnn/internal/gradcheck"
	"github.com/nsrnn/nsrnn/internal/param"
	"github.com/nsrnn/nsrnn/stacks"
	"github.com/nsrnn/nsrnn/stacks/internal/nskernel"
)

// Tests of the NS stack as a gorgonia layer. The dynamic program itself is
// tested against a brute-force oracle in nskernel; these tests check the
// wiring: the actions layer, the normalization, the ordering of the
// backward passes, the memory-limited carry and the direct API. Helpers are
// prefixed nst.

// nstVariants lists the four variants of the paper.
var nstVariants = []struct {
	name                     string
	normalized, stateReading bool
}{
	{"NS", true, false},
	{"NS+S", true, true},
	{"NS+U", false, false},
	{"RNS", false, true},
}

func nstConfig(q, g int, normalized, stateReading bool, bottom stacks.Bottom, window int) stacks.NSConfig {
	return stacks.NSConfig{States: q, Symbols: g, Normalized: normalized, StateReading: stateReading, Bottom: bottom, Window: window}
}

// nstAllConfigs is every variant × bottom × window (0 for unlimited) for
// |Q| = |Γ| = 2.
func nstAllConfigs(windows ...int) []stacks.NSConfig {
	var out []stacks.NSConfig
	for _, v := range nstVariants {
		for _, b := range []stacks.Bottom{stacks.Original, stacks.Fixed} {
			for _, w := range windows {
				out = append(out, nstConfig(2, 2, v.normalized, v.stateReading, b, w))
			}
		}
	}
	return out
}

func nstName(c stacks.NSConfig) string {
	w := "unlimited"
	if c.Window > 0 {
		w = fmt.Sprintf("D=%d", c.Window)
	}
	return fmt.Sprintf("%s/%s/%s", c.Variant(), c.Bottom, w)
}

// nstNew makes an NS stack with parameters uniform in ±scale.
func nstNew(t testing.TB, hidden int, cfg stacks.NSConfig, scale float64, seed uint64) *stacks.NS {
	t.Helper()
	s, err := stacks.NewNS("ns", hidden, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Scheme = param.Scheme{Uniform: scale}
	s.Init(rand.New(rand.NewPCG(seed, 17)))
	return s
}

func nstParamNodes(g *G.ExprGraph, s *stacks.NS) G.Nodes {
	var out G.Nodes
	for _, p := range s.Params() {
		out = append(out, g.ByName(p.Name)[0])
	}
	return out
}

// nstTap is an identity kernel that records the value passing through it.
// A node's value cannot be read after a run of a TapeMachine once the node
// is dead: the machine reuses its memory for later nodes (the last reading,
// whose only consumer is its loss term, reads garbage afterwards). Values
// that tests inspect are therefore recorded as they are computed. With c
// set, the kernel instead outputs the scalar Σ c ⊙ in (a loss term).
type nstTap struct {
	id   int
	c    []float64
	seen []float64
}

var nstTapIDs int

func nstTapOf(n *G.Node, c []float64) (*nstTap, *G.Node) {
	nstTapIDs++
	k := &nstTap{id: nstTapIDs, c: c, seen: make([]float64, n.Shape().TotalSize())}
	return k, G.Must(fused.Apply(k, n))
}

func (k *nstTap) Name() string          { return fmt.Sprint("tap", k.id) }
func (k *nstTap) WriteHash(h hash.Hash) { fmt.Fprint(h, "nsttap", k.id) }
func (k *nstTap) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	if k.c != nil {
		return tensor.ScalarShape(), nil
	}
	return in[0].Clone(), nil
}

func (k *nstTap) Forward(out []float64, in [][]float64) {
	copy(k.seen, in[0])
	if k.c == nil {
		copy(out, in[0])
		return
	}
	s := 0.0
	for i, v := range in[0] {
		s += k.c[i] * v
	}
	out[0] = s
}

func (k *nstTap) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {
	for i := range gradIn[0] {
		if k.c == nil {
			gradIn[0][i] += gradOut[i]
		} else {
			gradIn[0][i] += gradOut[0] * k.c[i]
		}
	}
}

// nstNet is an NS stack in a graph.
type nstNet struct {
	g       *G.ExprGraph
	inst    stacks.Instance
	loss    *G.Node
	xs, hs  []*G.Node // inputs x_t (controller nets) and hidden states h_t
	hTaps   []*nstTap // the values of h_t of the latest run
	rTaps   []*nstTap // the readings r_t of the latest run
	wa, ba  *G.Node
	w, u    *G.Node // controller weights (nil for direct h inputs)
	lossMag float64 // a bound on |loss|: Σ_{t,b} max_i |C_t[b,i]|
}

// nstBuild builds, for steps steps with batch 2:
//
//   - controller = true: h_t = tanh(x_t W + 1 b_h [+ r_{t−1} U]) with x_t a
//     (batch, 3) input node, W (3, hidden) and U (reading, hidden) when
//     feedback is set;
//   - controller = false: h_t is itself a (batch, hidden) input node;
//
// then r_t = Step(t, h_t) and loss = Σ_t Σ C_t ⊙ r_t with fixed random C_t.
// hs, when given, are the values of the direct h inputs.
func nstBuild(t testing.TB, s *stacks.NS, rng *rand.Rand, batch, hidden, steps int, controller, feedback bool, hs []*tensor.Dense) *nstNet {
	t.Helper()
	const in = 3
	g := G.NewGraph()
	inst, err := s.Bind(g, batch, steps)
	if err != nil {
		t.Fatal(err)
	}
	n := &nstNet{g: g, inst: inst}
	ps := nstParamNodes(g, s)
	n.wa, n.ba = ps[0], ps[1]
	if controller {
		n.w = blInput(g, "W", blDense(rng, 0.8, in, hidden))
		if feedback {
			n.u = blInput(g, "U", blDense(rng, 1.5, s.ReadingSize(), hidden))
		}
	}
	r := inst.Initial()
	for k := 1; k <= steps; k++ {
		var h *G.Node
		if controller {
			x := blInput(g, fmt.Sprint("x", k), blDense(rng, 1, batch, in))
			n.xs = append(n.xs, x)
			z := G.Must(G.Mul(x, n.w))
			if feedback {
				z = G.Must(G.Add(z, G.Must(G.Mul(r, n.u))))
			}
			h = G.Must(G.Tanh(z))
		} else {
			v := blDense(rng, 1, batch, hidden)
			if hs != nil {
				v = hs[k-1]
			}
			h = blInput(g, fmt.Sprint("h", k), v)
		}
		n.hs = append(n.hs, h)
		tap, ht := nstTapOf(h, nil)
		n.hTaps = append(n.hTaps, tap)
		if r, err = inst.Step(k, ht); err != nil {
			t.Fatal(err)
		}
		cv := blDense(rng, 1, batch, s.ReadingSize())
		for b := 0; b < batch; b++ {
			mx := 0.0
			for _, v := range cv.Float64s()[b*s.ReadingSize() : (b+1)*s.ReadingSize()] {
				mx = math.Max(mx, math.Abs(v))
			}
			n.lossMag += mx
		}
		tap, term := nstTapOf(r, cv.Float64s())
		n.rTaps = append(n.rTaps, tap)
		if n.loss == nil {
			n.loss = term
		} else {
			n.loss = G.Must(G.Add(n.loss, term))
		}
	}
	return n
}

// nstCheck compares the graph's gradients with central differences with
// tolerance 1e-6 relative, plus an absolute allowance for the rounding of
// the finite difference: the loss is a sum of terms of magnitude up to
// lossMag computed with relative error of a few ε, so (f(x+h) − f(x−h)) / 2h
// carries an error up to about 10·ε·lossMag / h. gradcheck accepts |a − n| ≤
// Tol·max(Floor, |a|+|n|), so the allowance is Floor = allowance / Tol.
func nstCheck(t *testing.T, n *nstNet, wrt G.Nodes, seed uint64) {
	t.Helper()
	const tol, step = 1e-6, 1e-6
	allowance := 10 * 0x1p-52 * math.Max(n.lossMag, 1) / step
	bad, worst, err := gradcheck.Check(n.g, n.loss, wrt, gradcheck.Options{Tol: tol, Step: step, Floor: allowance / tol, Seed: seed})
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range bad {
		if i == 10 {
			t.Errorf("… %d mismatches in all", len(bad))
			break
		}
		t.Error(b)
	}
	t.Logf("worst error %.3g (absolute allowance %.2g)", worst, allowance)
}

// TestNSGradients checks every variant, bottom behaviour and window
// through a whole graph, with the readings fed back into the controller
// (h_t depends on r_{t−1}) and without (only nsStep's ordering input
// r_{t−1} keeps the backward passes in order).
func TestNSGradients(t *testing.T) {
	const batch, hidden, steps = 2, 3, 5
	seed := uint64(0)
	for _, cfg := range nstAllConfigs(0, 2) {
		for _, feedback := range []bool{false, true} {
			seed++
			name := nstName(cfg) + map[bool]string{false: "/no feedback", true: "/feedback"}[feedback]
			t.Run(name, func(t *testing.T) {
				// Weights large enough for decisive, uneven actions.
				s := nstNew(t, hidden, cfg, 1.5, seed)
				n := nstBuild(t, s, rand.New(rand.NewPCG(seed, 3)), batch, hidden, steps, true, feedback, nil)
				wrt := G.Nodes{n.wa, n.ba, n.w}
				if n.u != nil {
					wrt = append(wrt, n.u)
				}
				wrt = append(wrt, n.xs...)
				nstCheck(t, n, wrt, seed)
			})
		}
	}
}

// TestNSGradientsDirectH differentiates with respect to the hidden states
// themselves, given as input nodes (no controller in between), and with a
// single step.
func TestNSGradientsDirectH(t *testing.T) {
	for i, cfg := range []stacks.NSConfig{
		nstConfig(2, 2, true, false, stacks.Original, 0),
		nstConfig(2, 2, false, true, stacks.Fixed, 3),
		nstConfig(1, 3, false, false, stacks.Fixed, 0),
		nstConfig(3, 1, true, true, stacks.Original, 0),
	} {
		for _, steps := range []int{1, 4} {
			t.Run(fmt.Sprintf("%s/|Q|=%d,|Γ|=%d/%d steps", nstName(cfg), cfg.States, cfg.Symbols, steps), func(t *testing.T) {
				s := nstNew(t, 3, cfg, 1, uint64(40+i))
				n := nstBuild(t, s, rand.New(rand.NewPCG(uint64(i), 9)), 2, 3, steps, false, false, nil)
				nstCheck(t, n, append(G.Nodes{n.wa, n.ba}, n.hs...), uint64(i))
			})
		}
	}
}

// nstRun runs a graph forward (no gradients) and returns the readings.
func nstRun(t testing.TB, n *nstNet) [][]float64 {
	t.Helper()
	blRun(t, n.g)
	return nstSeen(n.rTaps)
}

// nstSeen returns copies of the values the taps recorded.
func nstSeen(taps []*nstTap) [][]float64 {
	out := make([][]float64, len(taps))
	for i, k := range taps {
		out[i] = append([]float64(nil), k.seen...)
	}
	return out
}

// nstValues returns copies of the values of nodes that are still live
// after a run (inputs and gradients, which nothing consumes).
func nstValues(ns []*G.Node) [][]float64 {
	out := make([][]float64, len(ns))
	for i, r := range ns {
		out[i] = append([]float64(nil), r.Value().Data().([]float64)...)
	}
	return out
}

// nstLogWeights computes the action log-weights of step t from the values
// of h_t, W_a and b_a, independently of the layer: scores = W_a h + b_a,
// log-softmax over each (q, x) row for the normalized variants.
func nstLogWeights(s *stacks.NS, h []float64, batch int) []float64 {
	cfg := s.Config()
	a, hidden := cfg.NumActions(), len(h)/batch
	w, bias := s.Params()[0].Data(), s.Params()[1].Data()
	out := make([]float64, batch*a)
	for b := 0; b < batch; b++ {
		for j := 0; j < a; j++ {
			v := bias[j]
			for k := 0; k < hidden; k++ {
				v += w[j*hidden+k] * h[b*hidden+k]
			}
			out[b*a+j] = v
		}
	}
	if cfg.Normalized {
		kc := nskernel.Config{States: cfg.States, Symbols: cfg.Symbols, Fixed: cfg.Bottom == stacks.Fixed, StateReading: cfg.StateReading, Window: cfg.Window}
		nskernel.LogSoftmaxRows(out, out, kc, batch)
	}
	return out
}

func nstClose(t *testing.T, what string, got, want [][]float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d steps, want %d", what, len(got), len(want))
	}
	for k := range got {
		if len(got[k]) != len(want[k]) {
			t.Fatalf("%s: step %d has %d values, want %d", what, k+1, len(got[k]), len(want[k]))
		}
		for i := range got[k] {
			if !(math.Abs(got[k][i]-want[k][i]) <= tol) {
				t.Errorf("%s: step %d: got %v, want %v", what, k+1, got[k], want[k])
				break
			}
		}
	}
}

// TestNSRunMatchesGraph checks that Run on the log-weights computed from
// the graph's own hidden states gives the graph's readings, and that the
// readings are distributions.
func TestNSRunMatchesGraph(t *testing.T) {
	const batch, hidden, steps = 3, 4, 7
	for i, cfg := range nstAllConfigs(0, 3) {
		t.Run(nstName(cfg), func(t *testing.T) {
			s := nstNew(t, hidden, cfg, 2, uint64(i))
			n := nstBuild(t, s, rand.New(rand.NewPCG(uint64(i), 5)), batch, hidden, steps, true, true, nil)
			got := nstRun(t, n)
			var lw [][]float64
			for _, h := range nstSeen(n.hTaps) {
				lw = append(lw, nstLogWeights(s, h, batch))
			}
			want, err := stacks.Run(cfg, batch, lw)
			if err != nil {
				t.Fatal(err)
			}
			nstClose(t, "graph vs Run", got, want, 1e-12)
			nstDistributions(t, got, cfg.ReadingSize())
			r0 := n.inst.Initial().Value().Data().([]float64)
			for b := 0; b < batch; b++ {
				for j, v := range r0[b*cfg.ReadingSize() : (b+1)*cfg.ReadingSize()] {
					if (j == 0 && v != 1) || (j > 0 && v != 0) {
						t.Errorf("r_0 = %v, want one-hot at 0", r0)
					}
				}
			}
		})
	}
	if _, err := stacks.Run(nstConfig(2, 2, true, false, stacks.Original, 0), 2, [][]float64{make([]float64, 5)}); err == nil {
		t.Error("Run with too few log-weights gave no error")
	}
	if _, err := stacks.Run(nstConfig(0, 2, true, false, stacks.Original, 0), 1, nil); err == nil {
		t.Error("Run with an invalid configuration gave no error")
	}
}

// nstDistributions checks that every reading is finite, non-negative and
// sums to 1 per batch element.
func nstDistributions(t *testing.T, rs [][]float64, size int) {
	t.Helper()
	for k, r := range rs {
		for b := 0; b < len(r)/size; b++ {
			sum := 0.0
			for _, v := range r[b*size : (b+1)*size] {
				if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
					t.Fatalf("step %d batch %d: reading %v", k+1, b, r[b*size:(b+1)*size])
				}
				sum += v
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Fatalf("step %d batch %d: reading %v sums to %v", k+1, b, r[b*size:(b+1)*size], sum)
			}
		}
	}
}

// nstCopyParams makes dst's parameters equal src's.
func nstCopyParams(dst, src *stacks.NS) {
	for i, p := range src.Params() {
		copy(dst.Params()[i].Data(), p.Data())
	}
}

// nstGradients builds the gradient nodes of loss with respect to wrt, runs
// the graph and returns the gradients and the readings.
func nstGradients(t testing.TB, n *nstNet, wrt G.Nodes) ([][]float64, [][]float64) {
	t.Helper()
	grads, err := G.Grad(n.loss, wrt...)
	if err != nil {
		t.Fatal(err)
	}
	blRun(t, n.g)
	return nstValues(grads), nstSeen(n.rTaps)
}

// TestNSLimitedWideWindowEqualsUnlimited: with D ≥ n (D ≥ n+1 for the fixed
// bottom, whose extra bottom row counts as a position) the memory-limited
// stack gives the unlimited one's readings and gradients through a graph.
func TestNSLimitedWideWindowEqualsUnlimited(t *testing.T) {
	const batch, hidden, steps = 2, 3, 6
	for i, cfg := range nstAllConfigs(0) {
		for _, extra := range []int{0, 2} {
			lim := cfg
			lim.Window = steps + extra
			if cfg.Bottom == stacks.Fixed {
				lim.Window++
			}
			t.Run(nstName(lim), func(t *testing.T) {
				su := nstNew(t, hidden, cfg, 1.5, uint64(i))
				sl := nstNew(t, hidden, lim, 0, 0)
				nstCopyParams(sl, su)
				nu := nstBuild(t, su, rand.New(rand.NewPCG(uint64(i), 7)), batch, hidden, steps, true, true, nil)
				nl := nstBuild(t, sl, rand.New(rand.NewPCG(uint64(i), 7)), batch, hidden, steps, true, true, nil)
				gu, ru := nstGradients(t, nu, append(G.Nodes{nu.wa, nu.ba}, nu.xs...))
				gl, rl := nstGradients(t, nl, append(G.Nodes{nl.wa, nl.ba}, nl.xs...))
				nstClose(t, "readings", rl, ru, 1e-12)
				nstClose(t, "gradients", gl, gu, 1e-10)
			})
		}
	}
	// A window one short of the fixed bottom's requirement differs: the
	// test above is not vacuous.
	cfg := nstConfig(2, 2, false, true, stacks.Fixed, 0)
	lim := cfg
	lim.Window = steps
	su := nstNew(t, hidden, cfg, 1.5, 1)
	sl := nstNew(t, hidden, lim, 0, 0)
	nstCopyParams(sl, su)
	ru := nstRun(t, nstBuild(t, su, rand.New(rand.NewPCG(1, 7)), batch, hidden, steps, true, true, nil))
	rl := nstRun(t, nstBuild(t, sl, rand.New(rand.NewPCG(1, 7)), batch, hidden, steps, true, true, nil))
	differ := false
	for i := range ru[steps-1] {
		differ = differ || math.Abs(ru[steps-1][i]-rl[steps-1][i]) > 1e-9
	}
	if !differ {
		t.Errorf("fixed bottom with D = n reads %v, the same as unlimited", rl[steps-1])
	}
}

// TestNSCarry runs a sequence of 8 hidden states through one graph of 8
// steps and through a graph of 4 steps run twice, carrying the state with
// Carrier.Carry in between: the readings agree, the carried r_0 is the
// whole run's r_4, the second chunk's gradients (with respect to W_a, b_a
// and h, the carried state being detached) match finite differences, and
// ResetCarry starts afresh.
func TestNSCarry(t *testing.T) {
	const batch, hidden, steps, chunk = 2, 3, 8, 4
	for i, cfg := range nstAllConfigs(3) {
		t.Run(nstName(cfg), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(i), 13))
			hs := make([]*tensor.Dense, steps)
			for k := range hs {
				hs[k] = blDense(rng, 1, batch, hidden)
			}
			s := nstNew(t, hidden, cfg, 1.5, uint64(i))
			whole := nstRun(t, nstBuild(t, s, rng, batch, hidden, steps, false, false, hs))

			// The chunk graph's h inputs hold copies that are refilled
			// before each run.
			vals := make([]*tensor.Dense, chunk)
			for k := range vals {
				vals[k] = hs[k].Clone().(*tensor.Dense)
			}
			n := nstBuild(t, s, rng, batch, hidden, chunk, false, false, vals)
			m := G.NewTapeMachine(n.g)
			defer m.Close()
			run := func() [][]float64 {
				m.Reset()
				if err := m.RunAll(); err != nil {
					t.Fatal(err)
				}
				return nstSeen(n.rTaps)
			}
			first := run()
			nstClose(t, "first chunk", first, whole[:chunk], 1e-12)
			c, ok := n.inst.(stacks.Carrier)
			if !ok {
				t.Fatal("a memory-limited NS instance is not a Carrier")
			}
			c.Carry()
			for k := range vals {
				copy(vals[k].Float64s(), hs[chunk+k].Float64s())
			}
			second := run()
			nstClose(t, "second chunk", second, whole[chunk:], 1e-12)
			nstClose(t, "carried r_0", [][]float64{n.inst.Initial().Value().Data().([]float64)}, whole[chunk-1:chunk], 0)
			// Running again from the same carried state is repeatable.
			nstClose(t, "second chunk again", run(), whole[chunk:], 1e-12)

			// Gradients of the second chunk, from the carried state.
			nstCheck(t, n, append(G.Nodes{n.wa, n.ba}, n.hs...), uint64(i))

			c.ResetCarry()
			for k := range vals {
				copy(vals[k].Float64s(), hs[k].Float64s())
			}
			nstClose(t, "after ResetCarry", run(), whole[:chunk], 1e-12)
		})
	}
}

// TestNSCarryUnlimitedPanics: only memory-limited stacks can carry state.
func TestNSCarryUnlimitedPanics(t *testing.T) {
	s := nstNew(t, 2, nstConfig(1, 1, false, true, stacks.Original, 0), 0.1, 1)
	n := nstBuild(t, s, rand.New(rand.NewPCG(1, 1)), 1, 2, 2, false, false, nil)
	nstRun(t, n)
	defer func() {
		if recover() == nil {
			t.Error("Carry on an unlimited stack did not panic")
		}
	}()
	n.inst.(stacks.Carrier).Carry()
}

// TestNSStability drives the stack with action scores reaching ±500 for 60
// steps: readings stay finite distributions and gradients finite.
func TestNSStability(t *testing.T) {
	const batch, hidden, steps = 2, 3, 60
	for i, cfg := range nstAllConfigs(0, 5) {
		t.Run(nstName(cfg), func(t *testing.T) {
			s := nstNew(t, hidden, cfg, 250, uint64(i))
			rng := rand.New(rand.NewPCG(uint64(i), 21))
			hs := make([]*tensor.Dense, steps)
			for k := range hs {
				// Entries ±1 so that the scores reach the weights' scale.
				hs[k] = blDense(rng, 1, batch, hidden)
				for j, v := range hs[k].Float64s() {
					hs[k].Float64s()[j] = math.Copysign(1, v)
				}
			}
			n := nstBuild(t, s, rng, batch, hidden, steps, false, false, hs)
			top := 0.0
			w, b := s.Params()[0].Data(), s.Params()[1].Data()
			for _, h := range hs {
				for bi := 0; bi < batch; bi++ {
					for j := range b {
						v := b[j]
						for k := 0; k < hidden; k++ {
							v += w[j*hidden+k] * h.Float64s()[bi*hidden+k]
						}
						top = math.Max(top, math.Abs(v))
					}
				}
			}
			if top < 500 {
				t.Fatalf("scores reach only ±%.0f", top)
			}
			grads, readings := nstGradients(t, n, append(G.Nodes{n.wa, n.ba}, n.hs...))
			nstDistributions(t, readings, cfg.ReadingSize())
			for k, g := range grads {
				for _, v := range g {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("gradient %d has %v", k, v)
					}
				}
			}
		})
	}
}

func TestNSConfigAndErrors(t *testing.T) {
	for _, v := range nstVariants {
		c := nstConfig(2, 3, v.normalized, v.stateReading, stacks.Original, 0)
		if c.Variant() != v.name {
			t.Errorf("normalized %v state reading %v: variant %q, want %q", v.normalized, v.stateReading, c.Variant(), v.name)
		}
		if got, want := c.NumActions(), 6*(12+2); got != want {
			t.Errorf("%s: %d actions, want %d", v.name, got, want)
		}
		want := 3
		if v.stateReading {
			want = 6
		}
		if c.ReadingSize() != want {
			t.Errorf("%s: reading size %d, want %d", v.name, c.ReadingSize(), want)
		}
		s, err := stacks.NewNS("stack", 20, c)
		if err != nil {
			t.Fatal(err)
		}
		if s.ReadingSize() != want || s.Config() != c {
			t.Errorf("%s: layer reading size %d, config %+v", v.name, s.ReadingSize(), s.Config())
		}
		ps := s.Params()
		if len(ps) != 2 || ps[0].Name != "stack.W_a" || ps[1].Name != "stack.b_a" ||
			!ps[0].Value.Shape().Eq(tensor.Shape{84, 20}) || !ps[1].Value.Shape().Eq(tensor.Shape{84}) {
			t.Errorf("%s: parameters %v", v.name, ps)
		}
	}
	if stacks.Original.String() != "original" || stacks.Fixed.String() != "fixed" {
		t.Errorf("bottom names %q, %q", stacks.Original, stacks.Fixed)
	}
	for _, tc := range []struct {
		name   string
		cfg    stacks.NSConfig
		hidden int
		want   string
	}{
		{"no states", stacks.NSConfig{Symbols: 2}, 3, "States"},
		{"no symbols", stacks.NSConfig{States: 2}, 3, "Symbols"},
		{"negative states", stacks.NSConfig{States: -1, Symbols: 2}, 3, "States"},
		{"negative window", stacks.NSConfig{States: 1, Symbols: 1, Window: -1}, 3, "Window"},
		{"bad bottom", stacks.NSConfig{States: 1, Symbols: 1, Bottom: 2}, 3, "bottom"},
		{"no hidden", stacks.NSConfig{States: 1, Symbols: 1}, 0, "hidden"},
	} {
		if tc.hidden > 0 {
			if err := tc.cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: Validate gave %v, want an error mentioning %q", tc.name, err, tc.want)
			}
		}
		if _, err := stacks.NewNS("ns", tc.hidden, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewNS gave %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
	if err := nstConfig(1, 1, false, false, stacks.Fixed, 1).Validate(); err != nil {
		t.Errorf("valid configuration: %v", err)
	}

	s := nstNew(t, 3, nstConfig(2, 2, true, false, stacks.Original, 0), 0.1, 1)
	g := G.NewGraph()
	for _, bs := range [][2]int{{0, 3}, {-1, 3}, {1, -1}} {
		if _, err := s.Bind(g, bs[0], bs[1]); err == nil {
			t.Errorf("Bind(batch %d, steps %d) gave no error", bs[0], bs[1])
		}
	}
	inst, err := s.Bind(g, 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	h := blInput(g, "h", blDense(rand.New(rand.NewPCG(1, 1)), 1, 2, 3))
	for _, k := range []int{0, 4} {
		if _, err := inst.Step(k, h); err == nil {
			t.Errorf("step %d of 3 gave no error", k)
		}
	}
	if _, err := inst.Step(1, blInput(g, "h wide", blDense(rand.New(rand.NewPCG(1, 1)), 1, 2, 4))); err == nil {
		t.Error("h of the wrong width gave no error")
	}
	if _, err := inst.Step(1, blInput(g, "h batch", blDense(rand.New(rand.NewPCG(1, 1)), 1, 3, 3))); err == nil {
		t.Error("h of the wrong batch size gave no error")
	}
}

// nstSoftmax3 is the softmax of three scores.
func nstSoftmax3(s [3]float64) [3]float64 {
	mx := math.Max(s[0], math.Max(s[1], s[2]))
	var out [3]float64
	z := 0.0
	for i, v := range s {
		out[i] = math.Exp(v - mx)
		z += out[i]
	}
	for i := range out {
		out[i] /= z
	}
	return out
}

// TestNSActionTypeWeightsByHand: with |Q| = |Γ| = 1 there is one action of
// each type, (push, replace, pop) in that order, and the reading is always
// [1], so the normalized type weights are the softmax of the three scores
// W_a h_t + b_a — for the normalized and unnormalized variants alike, and
// for both bottoms (the weights count actions, feasible or not).
func TestNSActionTypeWeightsByHand(t *testing.T) {
	const batch, hidden, steps = 2, 2, 3
	for _, normalized := range []bool{true, false} {
		for _, bottom := range []stacks.Bottom{stacks.Original, stacks.Fixed} {
			cfg := nstConfig(1, 1, normalized, true, bottom, 0)
			t.Run(nstName(cfg), func(t *testing.T) {
				s, err := stacks.NewNS("ns", hidden, cfg)
				if err != nil {
					t.Fatal(err)
				}
				// Scores (push, replace, pop) = W_a h + b_a.
				copy(s.Params()[0].Data(), []float64{1, -2, 0.5, 3, -1, 0})
				copy(s.Params()[1].Data(), []float64{0.2, -0.3, 1.1})
				hs := []*tensor.Dense{
					tensor.New(tensor.WithShape(batch, hidden), tensor.WithBacking([]float64{0, 0, 1, 0})),
					tensor.New(tensor.WithShape(batch, hidden), tensor.WithBacking([]float64{0, 1, 2, -1})),
					tensor.New(tensor.WithShape(batch, hidden), tensor.WithBacking([]float64{-1, 0.5, 30, 30})),
				}
				want := [][][3]float64{
					{nstSoftmax3([3]float64{0.2, -0.3, 1.1}), nstSoftmax3([3]float64{1.2, 0.2, 0.1})},
					{nstSoftmax3([3]float64{-1.8, 2.7, 1.1}), nstSoftmax3([3]float64{4.2, -2.3, -0.9})},
					{nstSoftmax3([3]float64{-1.8, 0.7, 2.1}), nstSoftmax3([3]float64{-29.8, 104.7, -28.9})},
				}
				n := nstBuild(t, s, rand.New(rand.NewPCG(1, 1)), batch, hidden, steps, false, false, hs)
				nstRun(t, n)
				got, err := n.inst.(stacks.ActionRecorder).ActionTypeWeights()
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != batch {
					t.Fatalf("%d sequences, want %d", len(got), batch)
				}
				for b := range got {
					if len(got[b]) != steps {
						t.Fatalf("sequence %d: %d steps, want %d", b, len(got[b]), steps)
					}
					for k := range got[b] {
						for j := range 3 {
							if math.Abs(got[b][k][j]-want[k][b][j]) > 1e-12 {
								t.Errorf("sequence %d step %d: %v, want %v", b, k+1, got[b][k], want[k][b])
								break
							}
						}
					}
				}
			})
		}
	}
}

// TestNSActionTypeWeightsFormula checks the weights for |Q| = |Γ| = 2,
// where α̂ is not one-hot, against the definition evaluated from the
// graph's readings and independently computed log-weights.
func TestNSActionTypeWeightsFormula(t *testing.T) {
	const batch, hidden, steps = 2, 3, 5
	for i, cfg := range []stacks.NSConfig{
		nstConfig(2, 2, false, true, stacks.Original, 0),
		nstConfig(2, 2, true, true, stacks.Fixed, 2),
	} {
		t.Run(nstName(cfg), func(t *testing.T) {
			s := nstNew(t, hidden, cfg, 2, uint64(i))
			n := nstBuild(t, s, rand.New(rand.NewPCG(uint64(i), 2)), batch, hidden, steps, true, true, nil)
			rs := nstRun(t, n)
			got, err := n.inst.(stacks.ActionRecorder).ActionTypeWeights()
			if err != nil {
				t.Fatal(err)
			}
			hs := nstSeen(n.hTaps)
			qg, a := cfg.States*cfg.Symbols, cfg.NumActions()
			row := a / qg
			for b := 0; b < batch; b++ {
				prev := n.inst.Initial().Value().Data().([]float64)[b*qg : (b+1)*qg]
				for k := 0; k < steps; k++ {
					lw := nstLogWeights(s, hs[k], batch)[b*a : (b+1)*a]
					var w [3]float64
					for c := 0; c < qg; c++ {
						for j := 0; j < row; j++ {
							typ := min(j/qg, 2)
							w[typ] += prev[c] * math.Exp(lw[c*row+j])
						}
					}
					total := w[0] + w[1] + w[2]
					for j := range w {
						if math.Abs(got[b][k][j]-w[j]/total) > 1e-12 {
							t.Errorf("sequence %d step %d: %v, want %v", b, k+1, got[b][k], [3]float64{w[0] / total, w[1] / total, w[2] / total})
							break
						}
					}
					prev = rs[k][b*qg : (b+1)*qg]
				}
			}
		})
	}
	for _, v := range nstVariants {
		if v.stateReading {
			continue
		}
		s := nstNew(t, 2, nstConfig(2, 2, v.normalized, false, stacks.Original, 0), 0.1, 1)
		n := nstBuild(t, s, rand.New(rand.NewPCG(1, 1)), 1, 2, 2, false, false, nil)
		nstRun(t, n)
		rec, ok := n.inst.(stacks.ActionRecorder)
		if !ok {
			t.Fatalf("%s: instance is not an ActionRecorder", v.name)
		}
		if _, err := rec.ActionTypeWeights(); err == nil || !strings.Contains(err.Error(), v.name) {
			t.Errorf("%s: ActionTypeWeights gave %v, want an error naming the variant", v.name, err)
		}
	}
}
