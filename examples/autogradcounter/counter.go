// Package autogradcounter defines a model kind whose stack is written in
// gorgonia's operations alone: no fused kernel and no backward pass of its
// own, gorgonia's symbolic differentiation supplies every gradient. It is
// the way to try a new stack before making it fast: the same counter stack
// as package counterstack (whose step is a fused kernel with a
// hand-written backward pass), in a dozen lines of graph operations,
// registered as the kind "counter-autograd" when the package is imported.
//
// At step t the controller's hidden state h_t moves each of k counters by
// an amount in (−1, 1), and the reading is each counter squashed to
// (0, 1):
//
//	u_t = u_{t−1} + tanh(h_t Wᵀ + b),   r_t = σ(u_t),   u_0 = 0.
//
// The layer reads its parameters W and b through param.Binding.Diff, which
// tells the model to ask gorgonia for their gradients (Binding.Differentiate)
// and to add them into the parameters' accumulators after each run
// (Binding.CollectDiff), where the fused kernels of the other layers add
// theirs. Its tests check its gradients by finite differences (the stack
// conformance suite) and against counterstack's, which computes the same
// function with a hand-written backward pass.
//
// # Speed
//
// Every step adds six nodes to the graph (a product, a broadcast
// addition, tanh, an addition, σ, and a read of the counters for the
// carried state) where counterstack adds two, and gorgonia allocates their
// values and gradients. BenchmarkTrainStep compares the two on the
// paper's CFL sizes (a training step of batch 10, length 60, 20 hidden
// units, 20 counters): on two cores of an AMD EPYC machine, both busy
// with other work, 7.1–8.1 ms a step against the fused kernel's 4.9–6.9
// ms (three rounds): the LSTM and the output layer, fused in both, take
// most of a step, and the stack written in graph operations costs about
// a third more.
package autogradcounter

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/examples/counterstack"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/param"
	"github.com/nsrnn/nsrnn/stacks"
)

// Kind is the stack's name: Config.Kind = "counter-autograd".
const Kind = "counter-autograd"

func init() {
	// The same declaration as counterstack's (option --counters, sizes),
	// with this package's layer.
	nsrnn.RegisterKind(counterstack.Declare(Kind, func(name string, hidden, k int) stacks.Layer { return New(name, hidden, k) }))
}

// Layer is a counter stack of k counters driven by a hidden state of size
// hidden. It implements stacks.Layer.
type Layer struct {
	hidden, k int
	w, b      *param.Param // (k, hidden) and (k)
}

// New returns a counter stack with zero parameters named after name (the
// same names, shapes and initialization as counterstack.New's).
func New(name string, hidden, k int) *Layer {
	return &Layer{hidden: hidden, k: k, w: param.New(name+".W", k, hidden), b: param.New(name+".b", k)}
}

// ReadingSize is k.
func (l *Layer) ReadingSize() int { return l.k }

// Params returns W and b.
func (l *Layer) Params() []*param.Param { return []*param.Param{l.w, l.b} }

// Init draws W by the scheme's affine rule, and b.
func (l *Layer) Init(s param.Scheme, rng *rand.Rand) {
	s.Affine().InitWeight(l.w, rng)
	s.Affine().InitBias(l.b, rng)
}

// Carryable is nil: the counters are the whole state.
func (l *Layer) Carryable() error { return nil }

// UnmarshalState decodes a state of State.MarshalBinary; the state is
// counterstack's.
func (l *Layer) UnmarshalState(data []byte) (stacks.State, error) {
	return counterstack.New("", l.hidden, l.k).UnmarshalState(data)
}

// Bind makes an instance in the graph of b for batch sequences of at most
// steps updates.
func (l *Layer) Bind(b *param.Binding, batch, steps int, carry bool) (stacks.Instance, error) {
	if batch < 1 || steps < 0 {
		return nil, fmt.Errorf("autogradcounter: bind for batch %d and %d steps", batch, steps)
	}
	g := b.Graph()
	in := &instance{l: l, batch: batch, steps: steps, carry: carry, counters: make([]G.Value, steps)}
	in.u0 = tensor.New(tensor.WithShape(batch, l.k), tensor.Of(tensor.Float64))
	in.r0 = tensor.New(tensor.WithShape(batch, l.k), tensor.Of(tensor.Float64))
	in.prev = G.NewMatrix(g, tensor.Float64, G.WithShape(batch, l.k), G.WithName(fmt.Sprintf("counter.u0#%p", in)), G.WithValue(in.u0))
	in.initial = G.NewMatrix(g, tensor.Float64, G.WithShape(batch, l.k), G.WithName(fmt.Sprintf("counter.r0#%p", in)), G.WithValue(in.r0))
	in.setCounters(nil)
	var err error
	// The parameters, differentiated by gorgonia: Wᵀ once for all steps.
	if in.wT, err = G.Transpose(b.Diff(l.w)); err != nil {
		return nil, err
	}
	in.b = b.Diff(l.b)
	return in, nil
}

// instance is a counter stack bound to one graph.
type instance struct {
	l     *Layer
	batch int
	steps int
	carry bool
	// u0 and r0 are the counters the runs start from and their reading
	// σ(u_0), the values of the input nodes prev (before the first step)
	// and initial: constants of the graph, set between runs.
	u0, r0  *tensor.Dense
	initial *G.Node
	wT, b   *G.Node
	prev    *G.Node // u_{t−1} of the next step
	last    int     // the last step added
	// counters[t−1] receives u_t at each run.
	counters []G.Value
}

// Initial is r_0 = σ(u_0), an input node.
func (in *instance) Initial() *G.Node { return in.initial }

// setCounters sets the counters the runs start from (nil: zeros) and
// their reading.
func (in *instance) setCounters(u []float64) {
	u0, r0 := in.u0.Float64s(), in.r0.Float64s()
	clear(u0)
	copy(u0, u)
	for i, v := range u0 {
		r0[i] = 1 / (1 + math.Exp(-v))
	}
}

// Step adds step t: u_t = u_{t−1} + tanh(h_t Wᵀ + b), r_t = σ(u_t).
func (in *instance) Step(t int, h *G.Node) (*G.Node, error) {
	if t != in.last+1 || t > in.steps {
		return nil, fmt.Errorf("autogradcounter: step %d after step %d of at most %d", t, in.last, in.steps)
	}
	z, err := G.Mul(h, in.wT)
	if err != nil {
		return nil, err
	}
	if z, err = G.BroadcastAdd(z, in.b, nil, []byte{0}); err != nil {
		return nil, err
	}
	d, err := G.Tanh(z)
	if err != nil {
		return nil, err
	}
	u, err := G.Add(in.prev, d)
	if err != nil {
		return nil, err
	}
	G.Read(u, &in.counters[t-1])
	in.prev, in.last = u, t
	return G.Sigmoid(u)
}

// SetState sets the counters the next runs start from (nil: zeros).
func (in *instance) SetState(s stacks.State) error {
	if !in.carry {
		return errors.New("autogradcounter: instance bound without carry")
	}
	if s == nil {
		in.setCounters(nil)
		return nil
	}
	cs, ok := s.(*counterstack.State)
	if !ok || cs.Batch() != in.batch || len(cs.Counters()) != in.batch*in.l.k {
		return errors.New("autogradcounter: state of another stack or batch size")
	}
	in.setCounters(cs.Counters())
	return nil
}

// State returns the counters after the last step of the latest run.
func (in *instance) State() (stacks.State, error) {
	if !in.carry {
		return nil, errors.New("autogradcounter: instance bound without carry")
	}
	var u []float64
	if in.last == 0 {
		u = in.u0.Float64s()
	} else if v := in.counters[in.last-1]; v != nil {
		u = v.Data().([]float64)
	} else {
		return nil, errors.New("autogradcounter: no state yet: the graph has not run")
	}
	return counterstack.NewState(in.batch, u), nil
}
