package stackstest

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/param"
	"github.com/nsrnn/nsrnn/stacks"
)

// Factory returns a new layer whose Actions layer reads hidden states of
// size hidden. Its parameters need not be initialized: the checks call
// Layer.Init.
type Factory func(hidden int) (stacks.Layer, error)

// The shape of the suite's graphs.
const (
	batch  = 3
	hidden = 3
)

// Test runs every check of the suite on the layers of newLayer, as
// subtests of a subtest of t named name: Init, Gradients, TrailingSteps,
// Carry or NoCarry (as the layer's Carryable says), Errors and, for a
// layer that implements stacks.Runners, Runner.
func Test(t *testing.T, name string, newLayer Factory) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		layer := newInit(t, newLayer, param.Scheme{Uniform: 1}, 1)
		t.Run("Init", func(t *testing.T) { Init(t, newLayer) })
		t.Run("Gradients", func(t *testing.T) { Gradients(t, newLayer) })
		t.Run("TrailingSteps", func(t *testing.T) { TrailingSteps(t, newLayer) })
		if layer.Carryable() == nil {
			t.Run("Carry", func(t *testing.T) { Carry(t, newLayer) })
		} else {
			t.Run("NoCarry", func(t *testing.T) { NoCarry(t, newLayer) })
		}
		t.Run("Errors", func(t *testing.T) { Errors(t, newLayer) })
		if _, ok := layer.(stacks.Runners); ok {
			t.Run("Runner", func(t *testing.T) { Runner(t, newLayer) })
		}
	})
}

// newInit makes a layer for the suite's hidden size and initializes it by
// s from a source seeded with seed.
func newInit(t *testing.T, newLayer Factory, s param.Scheme, seed uint64) stacks.Layer {
	t.Helper()
	layer, err := newLayer(hidden)
	if err != nil {
		t.Fatal(err)
	}
	layer.Init(s, rand.New(rand.NewPCG(seed, 0x57ac)))
	return layer
}

func newNet(t *testing.T, layer stacks.Layer, d *Data, opt Options) *Net {
	t.Helper()
	n, err := NewNet(layer, d, opt)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func run(t *testing.T, n *Net) {
	t.Helper()
	if err := n.Run(); err != nil {
		t.Fatal(err)
	}
}

// noPanic calls f, turning a panic into an error of t.
func noPanic(t *testing.T, what string, f func()) {
	t.Helper()
	defer func() {
		if r := recover(); r != nil {
			t.Errorf("%s panicked: %v", what, r)
		}
	}()
	f()
}

// Init checks that Init with a positive Scheme.Uniform u draws every
// parameter in ±u (and not all of a parameter zero), from the random
// source it is given (the same seed gives the same values, another seed
// other values), and that the parameters have distinct names.
func Init(t *testing.T, newLayer Factory) {
	const u = 0.05
	a := newInit(t, newLayer, param.Scheme{Uniform: u}, 1)
	b := newInit(t, newLayer, param.Scheme{Uniform: u}, 1)
	c := newInit(t, newLayer, param.Scheme{Uniform: u}, 2)
	names := map[string]bool{}
	differ := len(a.Params()) == 0
	for i, p := range a.Params() {
		if p.Name == "" || names[p.Name] {
			t.Errorf("parameter %d has the empty or repeated name %q", i, p.Name)
		}
		names[p.Name] = true
		nonzero := false
		for j, v := range p.Data() {
			if !(math.Abs(v) <= u) {
				t.Errorf("%s[%d] = %v outside ±%v", p.Name, j, v, u)
			}
			nonzero = nonzero || v != 0
			if v != b.Params()[i].Data()[j] {
				t.Errorf("%s[%d] is %v and %v from the same seed", p.Name, j, v, b.Params()[i].Data()[j])
			}
			differ = differ || v != c.Params()[i].Data()[j]
		}
		if !nonzero {
			t.Errorf("%s is all zero after Init with Uniform %v", p.Name, u)
		}
	}
	if !differ {
		t.Error("Init from two seeds gave the same parameters")
	}
}

// Gradients checks the gradients of a graph (batch 3, hidden 3) with
// respect to every parameter and every x_t against finite differences:
// five steps without and with feedback of the readings into the hidden
// states, and a single step.
func Gradients(t *testing.T, newLayer Factory) {
	for i, c := range []struct {
		name     string
		steps    int
		feedback bool
	}{
		{"no feedback", 5, false},
		{"feedback", 5, true},
		{"one step", 1, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			seed := uint64(10 + i)
			layer := newInit(t, newLayer, param.Scheme{Uniform: 1}, seed)
			d := NewData(rand.New(rand.NewPCG(seed, 1)), batch, hidden, layer.ReadingSize(), c.steps)
			newNet(t, layer, d, Options{Steps: c.steps, Feedback: c.feedback}).CheckGradients(t, seed)
		})
	}
}

// TrailingSteps checks graphs of five steps whose loss uses the readings
// of the first three only, so that gorgonia makes no backward node for
// the last two steps: their readings and gradients equal those of the
// graph of the first three steps (to 1e-12), and their derivatives along
// random directions match finite differences.
func TrailingSteps(t *testing.T, newLayer Factory) {
	const steps, used = 5, 3
	for i, feedback := range []bool{false, true} {
		t.Run(map[bool]string{false: "no feedback", true: "feedback"}[feedback], func(t *testing.T) {
			seed := uint64(20 + i)
			layer := newInit(t, newLayer, param.Scheme{Uniform: 1}, seed)
			d := NewData(rand.New(rand.NewPCG(seed, 1)), batch, hidden, layer.ReadingSize(), steps)
			long := newNet(t, layer, d, Options{Steps: steps, Used: used, Feedback: feedback})
			short := newNet(t, layer, d, Options{Steps: used, Feedback: feedback})
			var rs [2][][]float64
			var ps, xs [2][][]float64
			for k, n := range []*Net{long, short} {
				if err := n.Grad(); err != nil {
					t.Fatal(err)
				}
				run(t, n)
				n.Close()
				rs[k] = n.Readings()
				ps[k], xs[k] = n.Gradients()
			}
			near(t, "readings", rs[0], rs[1], 1e-12)
			near(t, "parameter gradients", ps[0], ps[1], 1e-12)
			near(t, "input gradients", xs[0], xs[1], 1e-12)
			long.CheckDirections(t, seed)
		})
	}
}

// near reports the first difference of got from want larger than tol·(1 +
// |want|) in each of got's slices.
func near(t *testing.T, what string, got, want [][]float64, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d slices, want %d", what, len(got), len(want))
		return
	}
	for k := range got {
		if len(got[k]) != len(want[k]) {
			t.Errorf("%s %d: %d values, want %d", what, k+1, len(got[k]), len(want[k]))
			continue
		}
		for i := range got[k] {
			if !(math.Abs(got[k][i]-want[k][i]) <= tol*(1+math.Abs(want[k][i]))) {
				t.Errorf("%s %d: got %v, want %v", what, k+1, got[k], want[k])
				break
			}
		}
	}
}

// same reports any difference of got from want, bit for bit.
func same(t *testing.T, what string, got, want [][]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d slices, want %d", what, len(got), len(want))
		return
	}
	for k := range got {
		for i := range got[k] {
			if i >= len(want[k]) || math.Float64bits(got[k][i]) != math.Float64bits(want[k][i]) {
				t.Errorf("%s %d: got %v, want exactly %v", what, k+1, got[k], want[k])
				break
			}
		}
	}
}

// values returns a copy of the value of an input node.
func values(n *G.Node) []float64 { return append([]float64(nil), n.Value().Data().([]float64)...) }

func marshal(t *testing.T, s stacks.State) []byte {
	t.Helper()
	b, err := s.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func state(t *testing.T, n *Net) stacks.State {
	t.Helper()
	s, err := n.Instance.State()
	if err != nil {
		t.Fatal(err)
	}
	if s == nil {
		t.Fatal("State gave nil after a run")
	}
	return s
}

func setState(t *testing.T, n *Net, s stacks.State) {
	t.Helper()
	if err := n.Instance.SetState(s); err != nil {
		t.Fatal(err)
	}
}

// Carry checks the carrying of a layer's state from one run to the next
// (it skips a layer whose Carryable is not nil). A run of 8 steps with
// feedback, and the same inputs run in chunks of 3+5, 1+1+6 and 4+4 steps,
// each chunk's graph bound with carry and started with SetState from the
// State of the chunk before, read the same (to 1e-12), and their final
// states continue alike. It also checks that State is an error before the
// first run, that a run starts from the initial stack without SetState or
// after SetState(nil), that every run starts from the state given to
// SetState (runs of other graphs between do not matter), that a state
// survives MarshalBinary and UnmarshalState bit for bit and is not changed
// by later runs, that malformed encodings and states of another batch size
// are refused, that a graph that adds fewer steps than it was bound for
// records the state after its last step, and that the gradients of a chunk
// started from a carried state match finite differences.
func Carry(t *testing.T, newLayer Factory) {
	const n = 8
	layer := newInit(t, newLayer, param.Scheme{Uniform: 1}, 30)
	if err := layer.Carryable(); err != nil {
		t.Skipf("the layer does not carry its state: %v", err)
	}
	rng := rand.New(rand.NewPCG(30, 1))
	d := NewData(rng, batch, hidden, layer.ReadingSize(), n+2)

	whole := newNet(t, layer, d, Options{Steps: n, Feedback: true, Carry: true})
	defer whole.Close()
	if _, err := whole.Instance.State(); err == nil {
		t.Error("State before any run gave no error")
	}
	run(t, whole)
	want := whole.Readings()
	setState(t, whole, nil)
	if _, err := whole.Instance.State(); err != nil {
		t.Errorf("State after a run and SetState(nil): %v", err)
	}
	run(t, whole)
	same(t, "reading after SetState(nil)", whole.Readings(), want)
	stWhole := state(t, whole)
	if stWhole.Batch() != batch {
		t.Errorf("state of batch %d, want %d", stWhole.Batch(), batch)
	}
	encWhole := marshal(t, stWhole)
	// r_0 of a run from a state is the latest reading of the run that
	// ended in it; r_0 of the initial stack that of a fresh instance.
	fresh, err := layer.Bind(param.NewBinding(G.NewGraph()), batch, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	setState(t, whole, stWhole)
	same(t, "Initial after SetState", [][]float64{values(whole.Instance.Initial())}, want[n-1:])
	setState(t, whole, nil)
	same(t, "Initial after SetState(nil)", [][]float64{values(whole.Instance.Initial())}, [][]float64{values(fresh.Initial())})

	chunks := map[int]*Net{}
	chunk := func(k int) *Net {
		if chunks[k] == nil {
			chunks[k] = newNet(t, layer, d, Options{Steps: k, Feedback: true, Carry: true})
		}
		return chunks[k]
	}
	defer func() {
		for _, c := range chunks {
			c.Close()
		}
	}()
	// runFrom runs chunk c from step from+1, starting from s.
	runFrom := func(c *Net, from int, s stacks.State) [][]float64 {
		t.Helper()
		c.Load(from)
		setState(t, c, s)
		run(t, c)
		return c.Readings()
	}
	cont := runFrom(chunk(2), n, stWhole)
	for _, split := range [][]int{{3, 5}, {1, 1, 6}, {4, 4}} {
		var s stacks.State
		from := 0
		for _, k := range split {
			c := chunk(k)
			near(t, fmt.Sprintf("split %v, reading", split), runFrom(c, from, s), want[from:from+k], 1e-12)
			s = state(t, c)
			from += k
		}
		near(t, fmt.Sprintf("split %v, continued final state, reading", split), runFrom(chunk(2), n, s), cont, 1e-12)
	}
	if !bytes.Equal(marshal(t, stWhole), encWhole) {
		t.Error("a state changed when other runs followed")
	}

	// The encoding, and the runs from a state.
	c3, c5 := chunk(3), chunk(5)
	runFrom(c3, 0, nil)
	st3 := state(t, c3)
	enc := marshal(t, st3)
	dec, err := layer.UnmarshalState(enc)
	if err != nil {
		t.Fatal(err)
	}
	if dec.Batch() != batch {
		t.Errorf("decoded state of batch %d, want %d", dec.Batch(), batch)
	}
	if !bytes.Equal(marshal(t, dec), enc) {
		t.Error("the decoded state encodes differently")
	}
	r5 := runFrom(c5, 3, st3)
	near(t, "after 3 steps, reading", r5, want[3:], 1e-12)
	same(t, "reading from the decoded state", runFrom(c5, 3, dec), r5)
	runFrom(c3, 2, nil) // another graph on the same layer, over other data: a state that shares its buffers would change
	run(t, c5)
	same(t, "reading of a second run without SetState", c5.Readings(), r5)
	if !bytes.Equal(marshal(t, st3), enc) {
		t.Error("a state changed when other runs followed")
	}
	for _, bad := range [][]byte{nil, enc[:len(enc)-1], enc[:len(enc)/2], append(enc[:len(enc):len(enc)], 0)} {
		noPanic(t, "UnmarshalState of a malformed encoding", func() {
			if _, err := layer.UnmarshalState(bad); err == nil {
				t.Errorf("UnmarshalState of %d bytes (of %d) gave no error", len(bad), len(enc))
			}
		})
	}

	// States of another batch size.
	d3 := NewData(rng, batch+1, hidden, layer.ReadingSize(), 2)
	o := newNet(t, layer, d3, Options{Steps: 2, Feedback: true, Carry: true})
	defer o.Close()
	run(t, o)
	so := state(t, o)
	encO := marshal(t, so)
	decO, err := layer.UnmarshalState(encO)
	if err != nil {
		t.Fatal(err)
	}
	if decO.Batch() != batch+1 {
		t.Errorf("decoded state of batch %d, want %d", decO.Batch(), batch+1)
	}
	for _, s := range []stacks.State{so, decO} {
		noPanic(t, "SetState of another batch size", func() {
			if err := c5.Instance.SetState(s); err == nil {
				t.Errorf("a state of batch %d was accepted by an instance of batch %d", batch+1, batch)
			}
		})
	}
	for _, s := range []stacks.State{st3, dec} {
		noPanic(t, "SetState of another batch size", func() {
			if err := o.Instance.SetState(s); err == nil {
				t.Errorf("a state of batch %d was accepted by an instance of batch %d", batch, batch+1)
			}
		})
	}

	// A graph bound for more steps than it adds.
	fewer := newNet(t, layer, d, Options{Steps: 3, BindSteps: 5, Feedback: true, Carry: true})
	defer fewer.Close()
	if err := fewer.Instance.SetState(nil); err != nil {
		t.Fatal(err)
	}
	if _, err := fewer.Instance.State(); err == nil {
		t.Error("State after SetState but before any run gave no error")
	}
	near(t, "graph bound for 5 steps, adding 3, reading", runFrom(fewer, 0, nil), want[:3], 1e-12)
	if s, err := fewer.Instance.State(); err != nil {
		t.Errorf("State of a graph bound for 5 steps that adds 3: %v", err)
	} else {
		near(t, "continued from a graph bound for 5 steps, adding 3, reading", runFrom(c5, 3, s), want[3:], 1e-12)
	}

	// Gradients from a carried state.
	g := newNet(t, layer, d, Options{From: 3, Steps: 5, Feedback: true, Carry: true})
	setState(t, g, st3)
	g.CheckGradients(t, 30)
	g.Close()
}

// NoCarry checks a layer that cannot carry its state (it skips one that
// can): Carryable, Bind with carry and UnmarshalState fail with errors
// that wrap stacks.ErrNoCarry, without panicking.
func NoCarry(t *testing.T, newLayer Factory) {
	layer := newInit(t, newLayer, param.Scheme{Uniform: 1}, 40)
	err := layer.Carryable()
	if err == nil {
		t.Skip("the layer carries its state")
	}
	if !errors.Is(err, stacks.ErrNoCarry) {
		t.Errorf("Carryable gave %v, which does not wrap ErrNoCarry", err)
	}
	for _, c := range [][2]int{{batch, 4}, {1, 1}, {batch, 0}} {
		noPanic(t, "Bind with carry", func() {
			_, err := layer.Bind(param.NewBinding(G.NewGraph()), c[0], c[1], true)
			if !errors.Is(err, stacks.ErrNoCarry) {
				t.Errorf("Bind(batch %d, steps %d) with carry gave %v, want an error wrapping ErrNoCarry", c[0], c[1], err)
			}
		})
	}
	for _, data := range [][]byte{nil, make([]byte, 8), make([]byte, 64)} {
		noPanic(t, "UnmarshalState", func() {
			if _, err := layer.UnmarshalState(data); !errors.Is(err, stacks.ErrNoCarry) {
				t.Errorf("UnmarshalState of %d bytes gave %v, want an error wrapping ErrNoCarry", len(data), err)
			}
		})
	}
}

func input(g *G.ExprGraph, name string, rows, cols int) *G.Node {
	v := tensor.New(tensor.WithShape(rows, cols), tensor.WithBacking(normal(rand.New(rand.NewPCG(uint64(rows), uint64(cols))), rows*cols)))
	return G.NewMatrix(g, tensor.Float64, G.WithShape(rows, cols), G.WithName(name), G.WithValue(v))
}

// Errors checks that Bind refuses a batch size below 1 and negative
// steps; that Step refuses steps out of 1 … steps and hidden states of
// the wrong shape; that an instance binds every parameter, reads (batch,
// ReadingSize) readings, finite after a run, and Initial; and that
// SetState and State of an instance bound without carry are errors,
// before and after a run.
func Errors(t *testing.T, newLayer Factory) {
	layer := newInit(t, newLayer, param.Scheme{Uniform: 1}, 50)
	carries := []bool{false}
	if layer.Carryable() == nil {
		carries = append(carries, true)
	}
	for _, carry := range carries {
		for _, c := range [][2]int{{0, 3}, {-1, 3}, {batch, -1}, {0, -1}} {
			noPanic(t, "Bind", func() {
				if _, err := layer.Bind(param.NewBinding(G.NewGraph()), c[0], c[1], carry); err == nil {
					t.Errorf("Bind(batch %d, steps %d, carry %v) gave no error", c[0], c[1], carry)
				}
			})
		}
	}
	const steps = 3
	g := G.NewGraph()
	pb := param.NewBinding(g)
	inst, err := layer.Bind(pb, batch, steps, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range layer.Params() {
		if !pb.Bound(p) {
			t.Errorf("parameter %s is not bound", p.Name)
		}
	}
	if s := inst.Initial().Shape(); !s.Eq(tensor.Shape{batch, layer.ReadingSize()}) {
		t.Errorf("Initial has shape %v, want (%d, %d)", s, batch, layer.ReadingSize())
	}
	notCarrying := func(when string) {
		noPanic(t, "SetState and State without carry", func() {
			if err := inst.SetState(nil); err == nil {
				t.Errorf("SetState of an instance bound without carry gave no error %s", when)
			}
			if _, err := inst.State(); err == nil {
				t.Errorf("State of an instance bound without carry gave no error %s", when)
			}
		})
	}
	notCarrying("before a run")
	h := input(g, "h", batch, hidden)
	for _, tc := range []struct {
		what string
		t    int
		h    *G.Node
	}{
		{"step 0", 0, h},
		{"step -1", -1, h},
		{fmt.Sprintf("step %d of %d", steps+1, steps), steps + 1, h},
		{"h of the wrong width", 1, input(g, "wide", batch, hidden+1)},
		{"h of the wrong batch size", 1, input(g, "tall", batch+1, hidden)},
		{"h of one dimension", 1, G.NewVector(g, tensor.Float64, G.WithShape(hidden), G.WithName("vector"), G.WithValue(tensor.New(tensor.WithShape(hidden), tensor.Of(tensor.Float64))))},
	} {
		noPanic(t, "Step with "+tc.what, func() {
			if _, err := inst.Step(tc.t, tc.h); err == nil {
				t.Errorf("Step with %s gave no error", tc.what)
			}
		})
	}
	var rs []*G.Node
	for k := 1; k <= steps; k++ {
		r, err := inst.Step(k, h)
		if err != nil {
			t.Fatalf("step %d after refused steps: %v", k, err)
		}
		if !r.Shape().Eq(tensor.Shape{batch, layer.ReadingSize()}) {
			t.Errorf("reading %d has shape %v, want (%d, %d)", k, r.Shape(), batch, layer.ReadingSize())
		}
		rs = append(rs, r)
	}
	noPanic(t, "Step beyond the bound steps", func() {
		if _, err := inst.Step(steps+1, h); err == nil {
			t.Errorf("step %d of %d gave no error", steps+1, steps)
		}
	})
	m := G.NewTapeMachine(g)
	defer m.Close()
	if err := m.RunAll(); err != nil {
		t.Fatal(err)
	}
	for k, r := range rs {
		if r.Value() == nil {
			t.Errorf("reading %d after refused steps has no value after a run", k+1)
			continue
		}
		v, ok := r.Value().Data().([]float64)
		if !ok || len(v) != batch*layer.ReadingSize() {
			t.Errorf("reading %d after refused steps: value %v, want %d float64s", k+1, r.Value(), batch*layer.ReadingSize())
			continue
		}
		for _, x := range v {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				t.Errorf("reading %d after refused steps is not finite: %v", k+1, v)
				break
			}
		}
	}
	notCarrying("after a run")

	// A graph of no steps.
	noPanic(t, "Bind of 0 steps", func() {
		g := G.NewGraph()
		inst, err := layer.Bind(param.NewBinding(g), batch, 0, false)
		if err != nil {
			t.Errorf("Bind of 0 steps: %v", err)
			return
		}
		if _, err := inst.Step(1, input(g, "h", batch, hidden)); err == nil {
			t.Error("step 1 of 0 gave no error")
		}
	})
}

// Runner checks the runner of a layer that implements stacks.Runners (it
// skips one that does not): fed with the hidden states of a graph's run
// (with feedback), it reads what the graph read (to 1e-12), from the same
// r_0; it refuses a step beyond those it was made for; and NewRunner
// refuses a batch or a number of steps below 1.
func Runner(t *testing.T, newLayer Factory) {
	const steps = 5
	layer := newInit(t, newLayer, param.Scheme{Uniform: 1}, 60)
	rs, ok := layer.(stacks.Runners)
	if !ok {
		t.Skip("the layer has no runner")
	}
	d := NewData(rand.New(rand.NewPCG(60, 1)), batch, hidden, layer.ReadingSize(), steps)
	n := newNet(t, layer, d, Options{Steps: steps, Feedback: true})
	defer n.Close()
	run(t, n)
	r, err := rs.NewRunner(batch, steps)
	if err != nil {
		t.Fatal(err)
	}
	r0 := make([]float64, batch*layer.ReadingSize())
	r.Initial(r0)
	same(t, "runner's r_0", [][]float64{r0}, [][]float64{values(n.Instance.Initial())})
	var got [][]float64
	for k, h := range n.Hidden() {
		out := make([]float64, batch*layer.ReadingSize())
		if err := r.Step(h, out); err != nil {
			t.Fatalf("step %d: %v", k+1, err)
		}
		got = append(got, out)
	}
	near(t, "runner's reading", got, n.Readings(), 1e-12)
	if r.Steps() != steps {
		t.Errorf("runner took %d steps, want %d", r.Steps(), steps)
	}
	noPanic(t, "runner step beyond its steps", func() {
		if err := r.Step(n.Hidden()[0], make([]float64, batch*layer.ReadingSize())); err == nil {
			t.Errorf("step %d of a runner made for %d gave no error", steps+1, steps)
		}
	})
	for _, c := range [][2]int{{0, steps}, {-1, steps}, {batch, 0}} {
		noPanic(t, "NewRunner", func() {
			if _, err := rs.NewRunner(c[0], c[1]); err == nil {
				t.Errorf("NewRunner(batch %d, %d steps) gave no error", c[0], c[1])
			}
		})
	}
}
