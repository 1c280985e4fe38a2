package stacks

import (
	"fmt"
	"hash"
	"math/rand/v2"
	"sync/atomic"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/fused"
	"github.com/nsrnn/nsrnn/internal/linalg"
	"github.com/nsrnn/nsrnn/param"
	"github.com/nsrnn/nsrnn/stacks/internal/baseline"
)

// baselineIDs numbers the instances of the baseline stacks (Gref, JM), so
// that their step kernels never hash alike.
var baselineIDs atomic.Uint64

// Gref is the stratification stack of Grefenstette et al. (2015) as the
// paper's appendix A defines it, with its Actions layer: from the
// controller's hidden state h_t,
//
//	u_t = σ(W_u h_t + b_u)      pop strength
//	d_t = σ(W_d h_t + b_d)      push strength
//	v_t = tanh(W_v h_t + b_v)   pushed vector, of size m
//
// the strengths s_t and the reading r_t follow the appendix's equations
// (the reading sums over all elements, including the one pushed at step t;
// the empty stack reads zeros, so r_0 = 0). At the kinks of max and min the
// gradient follows a fixed convention: max(0, x) passes it only when
// x > 0, and min(s, b) in the reading passes it to the strength s when
// s ≤ b.
type Gref struct {
	hidden, m              int
	wu, bu, wd, bd, wv, bv *param.Param
	// tapes holds one tape per batch size, shared by the graphs bound to
	// the stack (which therefore must not run concurrently; see Replicator).
	tapes map[int]*baseline.Gref
}

// NewGref returns a stratification stack with pushed vectors of size m,
// whose actions are computed from hidden states of size hidden. Its
// parameters are named name+".W_u", ".b_u", ".W_d", ".b_d", ".W_v" and
// ".b_v"; there are (hidden+1)·(m+2) of them.
func NewGref(name string, hidden, m int) (*Gref, error) {
	if hidden < 1 || m < 1 {
		return nil, fmt.Errorf("stacks: Gref needs hidden and stack vector sizes of at least 1, got %d and %d", hidden, m)
	}
	if err := checkParams(name, (float64(m)+2)*(float64(hidden)+1)); err != nil {
		return nil, err
	}
	return &Gref{
		hidden: hidden, m: m,
		wu: param.New(name+".W_u", 1, hidden), bu: param.New(name+".b_u", 1),
		wd: param.New(name+".W_d", 1, hidden), bd: param.New(name+".b_d", 1),
		wv: param.New(name+".W_v", m, hidden), bv: param.New(name+".b_v", m),
	}, nil
}

// Hidden is the size of the hidden states the actions are computed from.
func (s *Gref) Hidden() int { return s.hidden }

// ReadingSize implements Layer: the stack vector size m.
func (s *Gref) ReadingSize() int { return s.m }

// Params implements Layer: W_u, b_u, W_d, b_d, W_v, b_v.
func (s *Gref) Params() []*param.Param {
	return []*param.Param{s.wu, s.bu, s.wd, s.bd, s.wv, s.bv}
}

// Init implements Layer, drawing the parameters by the scheme's Affine
// rule in the order of Params.
//
// rng is a *rand.Rand of math/rand/v2, e.g. rand.New(rand.NewPCG(seed, 0)).
func (s *Gref) Init(sc param.Scheme, rng *rand.Rand) { initAffine(s.Params(), sc.Affine(), rng) }

// initAffine draws alternating weights and biases by r.
func initAffine(ps []*param.Param, r param.Rule, rng *rand.Rand) {
	for i, p := range ps {
		if i%2 == 0 {
			r.InitWeight(p, rng)
		} else {
			r.InitBias(p, rng)
		}
	}
}

// Carryable implements Layer: the stratification stack's state grows by
// one element with every step, so it is not carried.
func (s *Gref) Carryable() error {
	return fmt.Errorf("stacks: the stratification (gref) stack's state grows by one vector with every step, so it is not carried from one run to the next: %w", ErrNoCarry)
}

// Replica implements Replicator: a Gref sharing the parameters of s, with
// its own scratch tapes.
func (s *Gref) Replica(threads int) Layer {
	c := *s
	c.tapes = nil
	return &c
}

// UnmarshalState implements Layer; it always fails (see Carryable).
func (s *Gref) UnmarshalState([]byte) (State, error) { return nil, s.Carryable() }

func (s *Gref) tape(batch, steps int) *baseline.Gref {
	if s.tapes == nil {
		s.tapes = map[int]*baseline.Gref{}
	}
	t := s.tapes[batch]
	if t == nil {
		t = baseline.NewGref(batch, s.m, steps)
		s.tapes[batch] = t
	}
	t.Resize(batch, s.m, steps)
	return t
}

// grefTapeBytes is the memory of a Gref tape for batch stacks of vectors
// of size m over steps steps (baseline.Gref): the pushed vectors and their
// adjoints, the strengths of every element at every step (a triangle),
// and per-step scalars.
func grefTapeBytes(batch, m, steps int) float64 {
	B, S := float64(batch), float64(steps)
	return 8 * B * (2*S*float64(m) + S*(S+1)/2 + 4*S)
}

// CheckSize implements Sizer. The stratification stack keeps every
// element's strength at every step, so its memory grows with the square
// of the length.
func (s *Gref) CheckSize(batch, steps int, carry bool) error {
	if batch < 1 || steps < 0 {
		return fmt.Errorf("stacks: Gref size check with batch %d, steps %d", batch, steps)
	}
	if b := grefTapeBytes(batch, s.m, steps); b > MaxTapeBytes {
		return fmt.Errorf("stacks: the Gref stack's tape for batch %d over %d steps (vectors of %d) would take %.3g GiB, more than the limit of %d GiB: reduce the batch or the length",
			batch, steps, s.m, b/(1<<30), MaxTapeBytes>>30)
	}
	return nil
}

// Bind implements Layer. Each Step adds one node. The instance works on a
// tape shared with the other graphs bound to s for the same batch size,
// so those graphs must not run concurrently.
func (s *Gref) Bind(pb *param.Binding, batch, steps int, carry bool) (Instance, error) {
	if batch < 1 || steps < 0 {
		return nil, fmt.Errorf("stacks: Gref bind with batch %d, steps %d", batch, steps)
	}
	if carry {
		return nil, s.Carryable()
	}
	if err := s.CheckSize(batch, steps, carry); err != nil {
		return nil, err
	}
	g := pb.Graph()
	id := baselineIDs.Add(1)
	in := &grefInstance{s: s, pb: pb, batch: batch, steps: steps, id: id}
	for i, p := range s.Params() {
		in.params[i] = pb.Node(p)
	}
	in.params[6] = pb.Anchor()
	in.r0 = G.NewMatrix(g, tensor.Float64, G.WithShape(batch, s.m),
		G.WithName(fmt.Sprintf("%s.r0#%d", s.wu.Name, id)),
		G.WithValue(tensor.New(tensor.WithShape(batch, s.m), tensor.Of(tensor.Float64))))
	in.prev = in.r0
	n := batch * (2 + s.m)
	in.act = make([]float64, n)
	in.grad = make([]float64, n)
	return in, nil
}

// grefInstance is a Gref stack bound to one graph.
type grefInstance struct {
	s            *Gref
	pb           *param.Binding
	batch, steps int
	id           uint64
	params       [7]*G.Node // W_u, b_u, W_d, b_d, W_v, b_v, the anchor
	r0, prev     *G.Node
	last         int
	tape         *baseline.Gref
	// act holds u (batch), d (batch) and v (batch, m); grad their
	// gradients; both are scratch.
	act, grad []float64
}

// Initial implements Instance: r_0 = 0, the reading of the empty stack.
func (in *grefInstance) Initial() *G.Node { return in.r0 }

// SetState implements Instance; Gref instances never carry.
func (in *grefInstance) SetState(State) error { return errNotCarrying }

// State implements Instance; Gref instances never carry.
func (in *grefInstance) State() (State, error) { return nil, errNotCarrying }

// Step implements Instance; steps must be added in order 1, 2, ….
func (in *grefInstance) Step(t int, h *G.Node) (*G.Node, error) {
	if t != in.last+1 || t > in.steps {
		return nil, fmt.Errorf("stacks: Gref step %d after step %d (at most %d steps)", t, in.last, in.steps)
	}
	args := append([]*G.Node{h}, in.params[:]...)
	r, err := fused.Apply(&grefStep{in: in, t: t}, append(args, in.prev)...)
	if err != nil {
		return nil, err
	}
	in.last, in.prev = t, r
	return r, nil
}

// grefStep is the fused kernel of one Gref update: r_t from h_t, the
// parameters and r_{t−1}. The stack itself lives on the instance's tape;
// r_{t−1} is an input only to order the steps (its gradient is zero), so
// that the backward pass of step t runs after that of step t+1.
type grefStep struct {
	in *grefInstance
	t  int
}

func (k *grefStep) Name() string { return fmt.Sprintf("gref_step%d", k.t) }

func (k *grefStep) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "gref:%d:%d:%d:%d", k.in.id, k.t, k.in.s.hidden, k.in.s.m)
}

// Differentiable implements fused.Constant: h, the anchor and r_{t−1}; the
// parameters' gradients go into the binding.
func (k *grefStep) Differentiable(i int) bool { return i == 0 || i >= 7 }

func (k *grefStep) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	B, H, m := k.in.batch, k.in.s.hidden, k.in.s.m
	want := []tensor.Shape{{B, H}, {1, H}, {1}, {1, H}, {1}, {m, H}, {m}, {}, {B, m}}
	if len(in) != len(want) {
		return nil, fmt.Errorf("got %d inputs, want %d", len(in), len(want))
	}
	for i := range want {
		if !in[i].Eq(want[i]) {
			return nil, fmt.Errorf("input %d has shape %v, want %v", i, in[i], want[i])
		}
	}
	return tensor.Shape{B, m}, nil
}

func (k *grefStep) Forward(out []float64, in [][]float64) {
	inst := k.in
	B := inst.batch
	if k.t == 1 {
		inst.tape = inst.s.tape(B, inst.steps)
	}
	u, d, v := inst.act[:B], inst.act[B:2*B], inst.act[2*B:]
	grefActions(inst.s, u, d, v, in[0], [6][]float64{in[1], in[2], in[3], in[4], in[5], in[6]}, B)
	inst.tape.Forward(k.t, u, d, v, out)
}

func (k *grefStep) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {
	inst := k.in
	B, H, m := inst.batch, inst.s.hidden, inst.s.m
	du, dd, dv := inst.grad[:B], inst.grad[B:2*B], inst.grad[2*B:]
	clear(inst.grad)
	inst.tape.Backward(k.t, gradOut, du, dd, dv)
	u, d, v := inst.tape.U(k.t), inst.tape.D(k.t), inst.tape.V(k.t)
	for i := range du {
		du[i] *= u[i] * (1 - u[i])
		dd[i] *= d[i] * (1 - d[i])
	}
	for i := range dv {
		dv[i] *= 1 - v[i]*v[i]
	}
	s, pb := inst.s, inst.pb
	linalg.AffineBackward(gradIn[0], pb.Grad(s.wu), pb.Grad(s.bu), du, in[0], in[1], B, H, 1)
	linalg.AffineBackward(gradIn[0], pb.Grad(s.wd), pb.Grad(s.bd), dd, in[0], in[3], B, H, 1)
	linalg.AffineBackward(gradIn[0], pb.Grad(s.wv), pb.Grad(s.bv), dv, in[0], in[5], B, H, m)
}
