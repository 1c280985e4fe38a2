// Package counterstack defines a model kind outside package nsrnn, as any
// program or library can: a toy "counter stack" whose memory is k running
// sums. It is one file: the stack (a stacks.Layer and its Instance, whose
// step is a fused kernel with a hand-written backward pass), and its
// declaration, registered with nsrnn.RegisterKind when the package is
// imported. The package's example trains it with nsrnn.Train and runs it as
// a stream.
//
// At step t the controller's hidden state h_t moves each counter by an
// amount in (−1, 1), and the reading is each counter squashed to (0, 1):
//
//	u_t = u_{t−1} + tanh(W h_t + b),   r_t = σ(u_t),   u_0 = 0.
//
// The counters are the whole state, so the stack carries it from one
// chunk of a stream to the next.
package counterstack

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/fused"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/param"
	"github.com/nsrnn/nsrnn/stacks"
)

// Kind is the counter stack's name: Config.Kind = "counter", and --model
// counter on the command lines of programs that import the package.
const Kind = "counter"

func init() {
	nsrnn.RegisterKind(Declare(Kind, func(name string, hidden, k int) stacks.Layer { return New(name, hidden, k) }))
}

// Declare returns the declaration of a counter-stack kind named name
// whose layers newLayer makes (hidden units, k counters): its option
// "counters" (Config.Options, flag --counters), required and at least 1,
// and its sizes. Package autogradcounter declares its kind with it too.
func Declare(name string, newLayer func(name string, hidden, k int) stacks.Layer) nsrnn.Kind {
	return nsrnn.Kind{
		Name: name, Streams: true,
		Hyperparameters: []nsrnn.Hyperparameter{{
			Option: "counters", Name: "a number of counters", Doc: "number of counters of %s", Required: true, Size: true,
			Check: func(c nsrnn.Config) error {
				if k := c.Options.Get("counters"); k < 1 {
					return nsrnn.Refuse(nsrnn.ErrRequired, "model %s needs a number of counters (--counters) ≥ 1, got %d", c.Kind, k)
				}
				return nil
			},
		}},
		Stack: func(n string, c nsrnn.Config) (stacks.Layer, error) {
			return newLayer(n, c.Hidden, c.Options.Get("counters")), nil
		},
		StackParams: func(c nsrnn.Config) float64 { return float64(c.Options.Get("counters")) * (float64(c.Hidden) + 1) },
		ReadingSize: func(c nsrnn.Config) float64 { return float64(c.Options.Get("counters")) },
	}
}

// Layer is a counter stack of k counters driven by a hidden state of size
// hidden. It implements stacks.Layer.
type Layer struct {
	hidden, k int
	w, b      *param.Param // (k, hidden) and (k)
}

// New returns a counter stack with zero parameters named after name.
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

// Bind makes an instance in the graph of b for batch sequences of at most
// steps updates.
func (l *Layer) Bind(b *param.Binding, batch, steps int, carry bool) (stacks.Instance, error) {
	if batch < 1 || steps < 0 {
		return nil, fmt.Errorf("counterstack: bind for batch %d and %d steps", batch, steps)
	}
	in := &instance{l: l, pb: b, batch: batch, steps: steps, carry: carry, w: b.Node(l.w), b: b.Node(l.b)}
	in.u0 = tensor.New(tensor.WithShape(batch, l.k), tensor.Of(tensor.Float64))
	in.r0 = tensor.New(tensor.WithShape(batch, l.k), tensor.Of(tensor.Float64))
	in.prev = G.NewMatrix(b.Graph(), tensor.Float64, G.WithShape(batch, l.k), G.WithName(fmt.Sprintf("counter.u0#%p", in)), G.WithValue(in.u0))
	in.initial = G.NewMatrix(b.Graph(), tensor.Float64, G.WithShape(batch, l.k), G.WithName(fmt.Sprintf("counter.r0#%p", in)), G.WithValue(in.r0))
	in.setCounters(nil)
	return in, nil
}

// UnmarshalState decodes a state of MarshalBinary.
func (l *Layer) UnmarshalState(data []byte) (stacks.State, error) {
	if len(data) < 8 || (len(data)-8)%8 != 0 {
		return nil, errors.New("counterstack: bad state")
	}
	batch := int(binary.LittleEndian.Uint64(data))
	u := make([]float64, (len(data)-8)/8)
	if batch < 1 || len(u) != batch*l.k {
		return nil, errors.New("counterstack: state of another shape")
	}
	for i := range u {
		u[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8+8*i:]))
	}
	return &State{batch: batch, u: u}, nil
}

// State is the counters of a batch between two runs.
type State struct {
	batch int
	u     []float64
}

// NewState returns the state of batch stacks whose counters are u (batch
// rows of k), copied.
func NewState(batch int, u []float64) *State {
	return &State{batch: batch, u: append([]float64(nil), u...)}
}

// Batch is the number of stacks.
func (s *State) Batch() int { return s.batch }

// Counters returns the counters, batch rows of k (not a copy).
func (s *State) Counters() []float64 { return s.u }

// MarshalBinary encodes the batch size and the counters exactly.
func (s *State) MarshalBinary() ([]byte, error) {
	out := binary.LittleEndian.AppendUint64(nil, uint64(s.batch))
	for _, v := range s.u {
		out = binary.LittleEndian.AppendUint64(out, math.Float64bits(v))
	}
	return out, nil
}

// instance is a counter stack bound to one graph.
type instance struct {
	l     *Layer
	pb    *param.Binding
	batch int
	steps int // the most steps
	carry bool
	w, b  *G.Node // the parameters' nodes
	// u0 and r0 are the counters the runs start from and their reading,
	// the values of the input nodes u_0 and r_0 (initial).
	u0, r0  *tensor.Dense
	initial *G.Node
	prev    *G.Node   // u_{t−1} of the next step
	last    int       // the last step added
	final   []float64 // u after the last step of the latest run
}

// Initial is r_0, an input node whose value is σ of the counters the runs
// start from.
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

func (in *instance) Step(t int, h *G.Node) (*G.Node, error) {
	if t != in.last+1 || t > in.steps {
		return nil, fmt.Errorf("counterstack: step %d after step %d of at most %d", t, in.last, in.steps)
	}
	k := &step{in: in, t: t}
	u, err := fused.Apply(k, in.prev, h, in.w, in.b, in.pb.Anchor())
	if err != nil {
		return nil, err
	}
	in.prev, in.last = u, t
	return G.Sigmoid(u)
}

func (in *instance) SetState(s stacks.State) error {
	if !in.carry {
		return errors.New("counterstack: instance bound without carry")
	}
	if s == nil {
		in.setCounters(nil)
		return nil
	}
	cs, ok := s.(*State)
	if !ok || cs.batch != in.batch || len(cs.u) != in.batch*in.l.k {
		return errors.New("counterstack: state of another stack or batch size")
	}
	in.setCounters(cs.u)
	return nil
}

func (in *instance) State() (stacks.State, error) {
	if !in.carry {
		return nil, errors.New("counterstack: instance bound without carry")
	}
	if in.final == nil {
		return nil, errors.New("counterstack: no state yet: the graph has not run")
	}
	return &State{batch: in.batch, u: append([]float64(nil), in.final...)}, nil
}

// step is the fused kernel of u_t = u_{t−1} + tanh(W h_t + b): inputs
// u_{t−1} (batch, k), h_t (batch, hidden), W, b and the binding's anchor.
// W and b are read through their nodes but not differentiated by gorgonia:
// Backward adds their gradients into the binding's accumulators.
type step struct {
	in *instance
	t  int
	d  []float64 // tanh(W h_t + b) of the latest forward pass
}

func (s *step) Name() string { return fmt.Sprintf("counter[%d]", s.t) }

func (s *step) WriteHash(h hash.Hash) { fmt.Fprintf(h, "%p:%d", s.in, s.t) }

// OutputShape checks the inputs' shapes: u_{t−1} (batch, k), h_t (batch,
// hidden), W (k, hidden), b (k) and the anchor, a scalar.
func (s *step) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	B, H, k := s.in.batch, s.in.l.hidden, s.in.l.k
	want := []tensor.Shape{{B, k}, {B, H}, {k, H}, {k}, {}}
	if len(in) != len(want) {
		return nil, fmt.Errorf("%d inputs, want %d", len(in), len(want))
	}
	for i, w := range want {
		if !in[i].Eq(w) && !(w.IsScalar() && in[i].IsScalar()) {
			return nil, fmt.Errorf("input %d has shape %v, want %v", i, in[i], w)
		}
	}
	return tensor.Shape{B, k}, nil
}

// Differentiable: u_{t−1}, h_t and the anchor; not W and b.
func (s *step) Differentiable(i int) bool { return i == 0 || i == 1 || i == 4 }

func (s *step) Forward(out []float64, in [][]float64) {
	prev, h, w, b := in[0], in[1], in[2], in[3]
	H, k := s.in.l.hidden, s.in.l.k
	s.d = make([]float64, len(out))
	for n := range s.in.batch {
		for j := range k {
			z := b[j]
			for i := range H {
				z += w[j*H+i] * h[n*H+i]
			}
			s.d[n*k+j] = math.Tanh(z)
			out[n*k+j] = prev[n*k+j] + s.d[n*k+j]
		}
	}
	if s.t == s.in.last {
		s.in.final = append(s.in.final[:0], out...)
	}
}

func (s *step) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {
	h, w := in[1], in[2]
	H, k := s.in.l.hidden, s.in.l.k
	gw, gb := s.in.pb.Grad(s.in.l.w), s.in.pb.Grad(s.in.l.b)
	for n := range s.in.batch {
		for j := range k {
			g := gradOut[n*k+j]
			if gradIn[0] != nil {
				gradIn[0][n*k+j] += g
			}
			gz := g * (1 - s.d[n*k+j]*s.d[n*k+j])
			gb[j] += gz
			for i := range H {
				gw[j*H+i] += gz * h[n*H+i]
				if gradIn[1] != nil {
					gradIn[1][n*H+i] += gz * w[j*H+i]
				}
			}
		}
	}
}
