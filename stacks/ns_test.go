package stacks_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/param"
	"github.com/nsrnn/nsrnn/stacks"
	"github.com/nsrnn/nsrnn/stacks/stackstest"
)

// Tests of the NS stack as a gorgonia layer, beyond the conformance suite
// (conformance_test.go). The dynamic program itself is tested against a
// brute-force oracle in nskernel; these tests check the actions layer,
// the normalization, the readings against Run, the memory-limited stack
// against the unlimited one, and the numeric range.

// TestNSRunMatchesGraph checks that Run on the log-weights computed from
// the graph's own hidden states gives the graph's readings, that the
// readings are distributions, and that r_0 is one-hot at (state 0,
// symbol 0).
func TestNSRunMatchesGraph(t *testing.T) {
	const batch, hidden, steps = 3, 4, 7
	for i, cfg := range nsAllConfigs(0, 3) {
		t.Run(nsName(cfg), func(t *testing.T) {
			s := nsNew(t, hidden, cfg, 2, uint64(i))
			n := newNet(t, s, stackstest.NewData(rand.New(rand.NewPCG(uint64(i), 5)), batch, hidden, s.ReadingSize(), steps), stackstest.Options{Steps: steps, Feedback: true})
			defer n.Close()
			runNet(t, n)
			var lw [][]float64
			for _, h := range n.Hidden() {
				lw = append(lw, nsLogWeights(s, h, batch))
			}
			want, err := stacks.Run(cfg, batch, lw)
			if err != nil {
				t.Fatal(err)
			}
			got := n.Readings()
			nearAll(t, "graph vs Run", got, want, 1e-12)
			distributions(t, got, cfg.ReadingSize())
			r0 := n.Instance.Initial().Value().Data().([]float64)
			for b := 0; b < batch; b++ {
				for j, v := range r0[b*cfg.ReadingSize() : (b+1)*cfg.ReadingSize()] {
					if (j == 0 && v != 1) || (j > 0 && v != 0) {
						t.Errorf("r_0 = %v, want one-hot at 0", r0)
					}
				}
			}
		})
	}
}

// TestNSRunErrors checks the validation of the inputs of Run and
// ActionTypeWeights.
func TestNSRunErrors(t *testing.T) {
	cfg := nsConfig(2, 2, true, false, stacks.Original, 0)
	a := cfg.NumActions()
	ok := [][]float64{make([]float64, 2*a)}
	ok[0][3] = math.Inf(-1) // an impossible action is fine
	if _, err := stacks.Run(cfg, 2, ok); err != nil {
		t.Errorf("Run: %v", err)
	}
	if _, err := stacks.ActionTypeWeights(cfg, 2, ok); err != nil {
		t.Errorf("ActionTypeWeights: %v", err)
	}
	with := func(i int, v float64) [][]float64 {
		lw := [][]float64{make([]float64, 2*a), make([]float64, 2*a)}
		lw[1][i] = v
		return lw
	}
	for _, tc := range []struct {
		what  string
		cfg   stacks.NSConfig
		batch int
		lw    [][]float64
	}{
		{"too few log-weights", cfg, 2, [][]float64{make([]float64, 5)}},
		{"too many log-weights", cfg, 1, [][]float64{make([]float64, 2*a)}},
		{"an invalid configuration", nsConfig(0, 2, true, false, stacks.Original, 0), 1, nil},
		{"batch 0", cfg, 0, nil},
		{"batch −1", cfg, -1, nil},
		{"NaN", cfg, 2, with(7, math.NaN())},
		{"+Inf", cfg, 2, with(2*a-1, math.Inf(1))},
	} {
		if _, err := stacks.Run(tc.cfg, tc.batch, tc.lw); err == nil {
			t.Errorf("Run with %s gave no error", tc.what)
		}
		if _, err := stacks.ActionTypeWeights(tc.cfg, tc.batch, tc.lw); err == nil {
			t.Errorf("ActionTypeWeights with %s gave no error", tc.what)
		}
	}
}

// TestNSActionLogWeights checks that ActionLogWeights of an instance
// returns the log-weights of its latest run, computed here from the
// recorded h_t, W_a and b_a (with the log-softmax of each (q, x) row for
// the normalized variants), for every variant, and that it is an error
// before the first run.
func TestNSActionLogWeights(t *testing.T) {
	const batch, hidden, steps = 2, 3, 4
	for i, cfg := range nsAllConfigs(0, 2) {
		t.Run(nsName(cfg), func(t *testing.T) {
			s := nsNew(t, hidden, cfg, 1.5, uint64(i))
			n := newNet(t, s, stackstest.NewData(rand.New(rand.NewPCG(uint64(i), 6)), batch, hidden, s.ReadingSize(), steps), stackstest.Options{Steps: steps, Feedback: true})
			defer n.Close()
			rec, ok := n.Instance.(stacks.ActionRecorder)
			if !ok {
				t.Fatal("an NS instance is not an ActionRecorder")
			}
			if _, err := rec.ActionLogWeights(); err == nil {
				t.Error("ActionLogWeights before a run gave no error")
			}
			runNet(t, n)
			got, err := rec.ActionLogWeights()
			if err != nil {
				t.Fatal(err)
			}
			var want [][]float64
			for _, h := range n.Hidden() {
				want = append(want, nsLogWeights(s, h, batch))
			}
			nearAll(t, "log-weights", got, want, 1e-12)
			// They are copies.
			got[0][0] = math.NaN()
			again, _ := rec.ActionLogWeights()
			near(t, "log-weights after changing a copy", again[0], want[0], 1e-12)
		})
	}
}

// TestNSLimitedWideWindowEqualsUnlimited: with D ≥ n (D ≥ n+1 for the fixed
// bottom, whose extra bottom row counts as a position) the memory-limited
// stack gives the unlimited one's readings and gradients through a graph.
func TestNSLimitedWideWindowEqualsUnlimited(t *testing.T) {
	const batch, hidden, steps = 2, 3, 6
	copyParams := func(dst, src *stacks.NS) {
		for i, p := range src.Params() {
			copy(dst.Params()[i].Data(), p.Data())
		}
	}
	for i, cfg := range nsAllConfigs(0) {
		for _, extra := range []int{0, 2} {
			lim := cfg
			lim.Window = steps + extra
			if cfg.Bottom == stacks.Fixed {
				lim.Window++
			}
			t.Run(nsName(lim), func(t *testing.T) {
				su := nsNew(t, hidden, cfg, 1.5, uint64(i))
				sl := nsNew(t, hidden, lim, 0, 0)
				copyParams(sl, su)
				d := stackstest.NewData(rand.New(rand.NewPCG(uint64(i), 7)), batch, hidden, cfg.ReadingSize(), steps)
				ru, gu := gradNet(t, newNet(t, su, d, stackstest.Options{Steps: steps, Feedback: true}))
				rl, gl := gradNet(t, newNet(t, sl, d, stackstest.Options{Steps: steps, Feedback: true}))
				nearAll(t, "reading", rl, ru, 1e-12)
				nearAll(t, "gradient", gl, gu, 1e-10)
			})
		}
	}
	// A window one short of the fixed bottom's requirement differs: the
	// test above is not vacuous.
	cfg := nsConfig(2, 2, false, true, stacks.Fixed, 0)
	lim := cfg
	lim.Window = steps
	su := nsNew(t, hidden, cfg, 1.5, 1)
	sl := nsNew(t, hidden, lim, 0, 0)
	for i, p := range su.Params() {
		copy(sl.Params()[i].Data(), p.Data())
	}
	d := stackstest.NewData(rand.New(rand.NewPCG(1, 7)), batch, hidden, cfg.ReadingSize(), steps)
	nu := newNet(t, su, d, stackstest.Options{Steps: steps, Feedback: true})
	nl := newNet(t, sl, d, stackstest.Options{Steps: steps, Feedback: true})
	runNet(t, nu)
	runNet(t, nl)
	nu.Close()
	nl.Close()
	ru, rl := nu.Readings()[steps-1], nl.Readings()[steps-1]
	differ := false
	for i := range ru {
		differ = differ || math.Abs(ru[i]-rl[i]) > 1e-9
	}
	if !differ {
		t.Errorf("fixed bottom with D = n reads %v, the same as unlimited", rl)
	}
}

// TestNSStability drives the stack with action scores reaching ±500 for 60
// steps: readings stay finite distributions and gradients finite.
func TestNSStability(t *testing.T) {
	const batch, hidden, steps = 2, 3, 60
	for i, cfg := range nsAllConfigs(0, 5) {
		t.Run(nsName(cfg), func(t *testing.T) {
			s := nsNew(t, hidden, cfg, 250, uint64(i))
			d := stackstest.NewData(rand.New(rand.NewPCG(uint64(i), 21)), batch, hidden, cfg.ReadingSize(), steps)
			// Entries ±1 so that the scores reach the weights' scale.
			top := 0.0
			for _, x := range d.X {
				for j, v := range x {
					x[j] = math.Copysign(1, v)
				}
				for _, v := range affine(x, s.Params()[0].Data(), s.Params()[1].Data(), batch) {
					top = math.Max(top, math.Abs(v))
				}
			}
			if top < 500 {
				t.Fatalf("scores reach only ±%.0f", top)
			}
			readings, grads := gradNet(t, newNet(t, s, d, stackstest.Options{Steps: steps}))
			distributions(t, readings, cfg.ReadingSize())
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
	for _, v := range nsVariants {
		c := nsConfig(2, 3, v.normalized, v.stateReading, stacks.Original, 0)
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
		// The default scheme is the Recurrent rule, ±0.1, biases included.
		s.Init(param.Scheme{}, rand.New(rand.NewPCG(1, 1)))
		for _, p := range ps {
			big := 0.0
			for _, x := range p.Data() {
				big = math.Max(big, math.Abs(x))
			}
			if big > 0.1 || big < 0.05 {
				t.Errorf("%s: %s reaches ±%v under the default scheme, want up to ±0.1", v.name, p.Name, big)
			}
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
		{"negative vector", stacks.NSConfig{States: 1, Symbols: 1, StateReading: true, Vector: -1}, 3, "vector size"},
		{"vectors normalized", stacks.NSConfig{States: 1, Symbols: 1, Normalized: true, StateReading: true, Vector: 2}, 3, "NS+S"},
		{"vectors by symbol", stacks.NSConfig{States: 1, Symbols: 1, Vector: 2}, 3, "StateReading"},
		{"bottom vector without vectors", stacks.NSConfig{States: 1, Symbols: 1, BottomVector: stacks.ZeroBottom}, 3, "without vectors"},
		{"bad bottom vector", stacks.NSConfig{States: 1, Symbols: 1, StateReading: true, Vector: 1, BottomVector: 3}, 3, "bottom vector"},
	} {
		if tc.hidden > 0 {
			if err := tc.cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: Validate gave %v, want an error mentioning %q", tc.name, err, tc.want)
			}
			if _, err := stacks.NewNSScores("ns", tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: NewNSScores gave %v, want an error mentioning %q", tc.name, err, tc.want)
			}
		}
		if _, err := stacks.NewNS("ns", tc.hidden, tc.cfg); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: NewNS gave %v, want an error mentioning %q", tc.name, err, tc.want)
		}
	}
	if err := nsConfig(1, 1, false, false, stacks.Fixed, 1).Validate(); err != nil {
		t.Errorf("valid configuration: %v", err)
	}
	if _, err := stacks.NewNSScores("ns", stacks.NSConfig{States: 1, Symbols: 1, StateReading: true, Vector: 2}); err == nil || !strings.Contains(err.Error(), "no vector layer") {
		t.Errorf("NewNSScores with vectors gave %v, want an error about the vector layer", err)
	}
}

// TestNSWithVectorsIsVRNS checks that the vector stack is the
// nondeterministic stack with a vector payload: NewNS with the NSConfig
// of a VRNSConfig makes the layer NewVRNS makes (its variant, sizes and
// parameters), and both read alike in a graph.
func TestNSWithVectorsIsVRNS(t *testing.T) {
	vc := stacks.VRNSConfig{States: 2, Symbols: 2, Vector: 3, Bottom: stacks.Fixed, Window: 3}
	c := vc.NS()
	if c.Variant() != "VRNS" || c.ReadingSize() != vc.ReadingSize() || c.NumParams(5) != vc.NumParams(5) || c.ReadingSize() != 12 {
		t.Errorf("%+v: variant %q, reading size %d, %d parameters", c, c.Variant(), c.ReadingSize(), c.NumParams(5))
	}
	var layers [2]stacks.Layer
	var readings [2][][]float64
	for i := range layers {
		var err error
		if i == 0 {
			layers[i], err = stacks.NewNS("s", 4, c)
		} else {
			layers[i], err = stacks.NewVRNS("s", 4, vc)
		}
		if err != nil {
			t.Fatal(err)
		}
		layers[i].Init(param.Scheme{Uniform: 1}, rand.New(rand.NewPCG(3, 3)))
		n := 0
		for _, p := range layers[i].Params() {
			n += p.Size()
		}
		if n != c.NumParams(4) {
			t.Errorf("layer %d has %d parameters, NumParams says %d", i, n, c.NumParams(4))
		}
		d := stackstest.NewData(rand.New(rand.NewPCG(4, 4)), 2, 4, c.ReadingSize(), 6)
		net, err := stackstest.NewNet(layers[i], d, stackstest.Options{Steps: 6, Feedback: true})
		if err != nil {
			t.Fatal(err)
		}
		defer net.Close()
		if err := net.Run(); err != nil {
			t.Fatal(err)
		}
		readings[i] = net.Readings()
	}
	for s := range readings[0] {
		for j, v := range readings[0][s] {
			if math.Float64bits(v) != math.Float64bits(readings[1][s][j]) {
				t.Fatalf("step %d reading[%d]: NewNS %v, NewVRNS %v", s+1, j, v, readings[1][s][j])
			}
		}
	}
}
