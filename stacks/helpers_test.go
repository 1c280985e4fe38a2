package stacks_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/param"
	"github.com/nsrnn/nsrnn/stacks"
	"github.com/nsrnn/nsrnn/stacks/stackstest"
)

// Helpers shared by the tests of package stacks. Graphs are built with
// stackstest.Net, the conformance suite's harness.

// nsVariants lists the four variants of the paper.
var nsVariants = []struct {
	name                     string
	normalized, stateReading bool
}{
	{"NS", true, false},
	{"NS+S", true, true},
	{"NS+U", false, false},
	{"RNS", false, true},
}

func nsConfig(q, g int, normalized, stateReading bool, bottom stacks.Bottom, window int) stacks.NSConfig {
	return stacks.NSConfig{States: q, Symbols: g, Normalized: normalized, StateReading: stateReading, Bottom: bottom, Window: window}
}

// nsAllConfigs is every variant × bottom × window (0 for unlimited) for
// |Q| = |Γ| = 2.
func nsAllConfigs(windows ...int) []stacks.NSConfig {
	var out []stacks.NSConfig
	for _, v := range nsVariants {
		for _, b := range []stacks.Bottom{stacks.Original, stacks.Fixed} {
			for _, w := range windows {
				out = append(out, nsConfig(2, 2, v.normalized, v.stateReading, b, w))
			}
		}
	}
	return out
}

func nsName(c stacks.NSConfig) string {
	w := "unlimited"
	if c.Window > 0 {
		w = fmt.Sprintf("D=%d", c.Window)
	}
	return fmt.Sprintf("%s/%s/%s/Q=%d,Γ=%d", c.Variant(), c.Bottom, w, c.States, c.Symbols)
}

// nsNew makes an NS stack with parameters uniform in ±scale.
func nsNew(t testing.TB, hidden int, cfg stacks.NSConfig, scale float64, seed uint64) *stacks.NS {
	t.Helper()
	s, err := stacks.NewNS("ns", hidden, cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.Init(param.Scheme{Uniform: scale}, rand.New(rand.NewPCG(seed, 17)))
	return s
}

// newNet builds a stackstest.Net.
func newNet(t testing.TB, layer stacks.Layer, d *stackstest.Data, opt stackstest.Options) *stackstest.Net {
	t.Helper()
	n, err := stackstest.NewNet(layer, d, opt)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// runNet runs n once (with the gradients, if Grad was called).
func runNet(t testing.TB, n *stackstest.Net) {
	t.Helper()
	if err := n.Run(); err != nil {
		t.Fatal(err)
	}
}

// gradNet adds the gradient nodes to n, runs it once and returns the
// readings and the gradients, parameters then inputs.
func gradNet(t testing.TB, n *stackstest.Net) (readings, grads [][]float64) {
	t.Helper()
	if err := n.Grad(); err != nil {
		t.Fatal(err)
	}
	runNet(t, n)
	n.Close()
	ps, xs := n.Gradients()
	return n.Readings(), append(ps, xs...)
}

func input(g *G.ExprGraph, name string, v *tensor.Dense) *G.Node {
	return G.NewMatrix(g, tensor.Float64, G.WithShape(v.Shape()...), G.WithName(name), G.WithValue(v))
}

func dense(rng *rand.Rand, scale float64, shape ...int) *tensor.Dense {
	d := tensor.New(tensor.WithShape(shape...), tensor.Of(tensor.Float64))
	for i := range d.Float64s() {
		d.Float64s()[i] = scale * rng.NormFloat64()
	}
	return d
}

// near checks that got and want agree to tol in every element.
func near(t *testing.T, what string, got, want []float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values %v, want %d %v", what, len(got), got, len(want), want)
	}
	for i := range got {
		if !(math.Abs(got[i]-want[i]) <= tol) {
			t.Errorf("%s: got %v, want %v", what, got, want)
			return
		}
	}
}

// nearAll is near for each step of a sequence.
func nearAll(t *testing.T, what string, got, want [][]float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d steps, want %d", what, len(got), len(want))
	}
	for k := range got {
		near(t, fmt.Sprintf("%s %d", what, k+1), got[k], want[k], tol)
	}
}

// logSoftmaxRows normalizes the log-weights of a batch over each (q, x)
// row of 2|Q||Γ|+|Q| actions, written out here rather than taken from
// the kernel.
func logSoftmaxRows(lw []float64, cfg stacks.NSConfig) {
	w := 2*cfg.States*cfg.Symbols + cfg.States
	for o := 0; o < len(lw); o += w {
		row := lw[o : o+w]
		mx := math.Inf(-1)
		for _, v := range row {
			mx = math.Max(mx, v)
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
}

// affine returns h W_aᵀ + b_a for h (batch, hidden), W_a (out, hidden).
func affine(h, w, b []float64, batch int) []float64 {
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

// nsLogWeights computes the action log-weights of one step from h and the
// stack's parameters: W_a h + b_a, normalized over each (q, x) row for NS
// and NS+S.
func nsLogWeights(s *stacks.NS, h []float64, batch int) []float64 {
	ps := s.Params()
	lw := affine(h, ps[0].Data(), ps[1].Data(), batch)
	if s.Config().Normalized {
		logSoftmaxRows(lw, s.Config())
	}
	return lw
}

// distributions checks that every reading is finite, non-negative and
// sums to 1 per batch element.
func distributions(t *testing.T, rs [][]float64, size int) {
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

// bench runs forward and backward of 60 steps, batch 10, hidden 20 of a
// stack fed with fixed hidden states.
func bench(b *testing.B, layer stacks.Layer) {
	const batch, hidden, steps = 10, 20, 60
	rng := rand.New(rand.NewPCG(5, 5))
	layer.Init(param.Scheme{}, rng)
	n := newNet(b, layer, stackstest.NewData(rng, batch, hidden, layer.ReadingSize(), steps), stackstest.Options{Steps: steps})
	if err := n.Grad(); err != nil {
		b.Fatal(err)
	}
	defer n.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := n.Run(); err != nil {
			b.Fatal(err)
		}
	}
}
