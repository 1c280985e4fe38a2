package stacks

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
	"github.com/nsrnn/nsrnn/internal/linalg"
	"github.com/nsrnn/nsrnn/param"
	"github.com/nsrnn/nsrnn/stacks/internal/baseline"
)

// JM is the superposition stack of Joulin & Mikolov (2015) as the paper's
// appendix A defines it, with its Actions layer: from the controller's
// hidden state h_t,
//
//	a_t = softmax(W_a h_t + b_a)   over (push, no-op, pop)
//	v_t = σ(W_v h_t + b_v)         pushed vector of size m, or v_t = h_t
//	                               with PushHidden (then m = hidden)
//
// and with cell 1 the top of the stack (the appendix's s_t[1]),
//
//	s_t[1] = push·v_t + no-op·s_{t−1}[1] + pop·s_{t−1}[2]
//	s_t[i] = push·s_{t−1}[i−1] + no-op·s_{t−1}[i] + pop·s_{t−1}[i+1]
//	r_t = s_t[1]
//
// Cells below the stack's height are zero (the bottom reads 0), so r_0 = 0.
// With a depth limit K, cells below K are discarded (s_t[i] = 0 for i > K,
// the pushed-off bottom is lost). Without one, the stack is kept only as
// deep as its cells can still reach the top within the graph's steps.
type JM struct {
	hidden, m  int
	pushHidden bool
	depth      int
	wa, ba     *param.Param
	wv, bv     *param.Param // nil with PushHidden
	tapes      map[int]*baseline.JM
}

// NewJM returns a superposition stack of vectors of size m whose actions
// are computed from hidden states of size hidden. With pushHidden the
// pushed vector is h_t itself and m must equal hidden. depthLimit is the
// depth limit K, 0 for none. Its parameters are named name+".W_a", ".b_a"
// and, unless pushHidden, ".W_v", ".b_v"; there are (hidden+1)·3 plus
// (hidden+1)·m for the learned vector.
func NewJM(name string, hidden, m int, pushHidden bool, depthLimit int) (*JM, error) {
	switch {
	case hidden < 1 || m < 1:
		return nil, fmt.Errorf("stacks: JM needs hidden and stack vector sizes of at least 1, got %d and %d", hidden, m)
	case pushHidden && m != hidden:
		return nil, fmt.Errorf("stacks: JM pushing the hidden state needs stack vector size %d = hidden size, got %d", hidden, m)
	case depthLimit < 0:
		return nil, fmt.Errorf("stacks: JM depth limit %d is negative", depthLimit)
	}
	if err := checkParams(name, (float64(m)+3)*(float64(hidden)+1)); err != nil {
		return nil, err
	}
	s := &JM{hidden: hidden, m: m, pushHidden: pushHidden, depth: depthLimit,
		wa: param.New(name+".W_a", 3, hidden), ba: param.New(name+".b_a", 3)}
	if !pushHidden {
		s.wv, s.bv = param.New(name+".W_v", m, hidden), param.New(name+".b_v", m)
	}
	return s, nil
}

// Hidden is the size of the hidden states the actions are computed from.
func (s *JM) Hidden() int { return s.hidden }

// PushHidden reports whether the pushed vector is the hidden state.
func (s *JM) PushHidden() bool { return s.pushHidden }

// DepthLimit is the depth limit K, 0 for none.
func (s *JM) DepthLimit() int { return s.depth }

// ReadingSize implements Layer: the stack vector size m.
func (s *JM) ReadingSize() int { return s.m }

// Params implements Layer: W_a, b_a and, for a learned pushed vector, W_v,
// b_v.
func (s *JM) Params() []*param.Param {
	if s.pushHidden {
		return []*param.Param{s.wa, s.ba}
	}
	return []*param.Param{s.wa, s.ba, s.wv, s.bv}
}

// Init implements Layer, drawing the parameters by the scheme's Affine
// rule in the order of Params.
//
// rng is a *rand.Rand of math/rand/v2, e.g. rand.New(rand.NewPCG(seed, 0)).
func (s *JM) Init(sc param.Scheme, rng *rand.Rand) { initAffine(s.Params(), sc.Affine(), rng) }

// Carryable implements Layer: a JM stack with a depth limit K carries its K
// cells; without one, its depth grows with every step.
func (s *JM) Carryable() error {
	if s.depth == 0 {
		return fmt.Errorf("stacks: a superposition (jm) stack without a depth limit grows by one cell with every step; set a depth limit to carry its state: %w", ErrNoCarry)
	}
	return nil
}

// Replica implements Replicator: a JM sharing the parameters of s, with
// its own scratch tapes.
func (s *JM) Replica(threads int) Layer {
	c := *s
	c.tapes = nil
	return &c
}

// UnmarshalState implements Layer.
func (s *JM) UnmarshalState(data []byte) (State, error) {
	if err := s.Carryable(); err != nil {
		return nil, err
	}
	if len(data) < 8 || (len(data)-8)%8 != 0 {
		return nil, errors.New("stacks: malformed JM state")
	}
	n := binary.LittleEndian.Uint64(data)
	vals := (len(data) - 8) / 8
	// The values must be batch·depth·m, a product that would overflow
	// for a crafted batch or depth limit: compare by division instead.
	if n < 1 || s.m > vals || s.depth > vals/s.m || vals%(s.depth*s.m) != 0 || n != uint64(vals/(s.depth*s.m)) {
		return nil, fmt.Errorf("stacks: JM state of %d values does not fit batch %d, depth %d, vectors of %d", vals, n, s.depth, s.m)
	}
	batch := int(n)
	st := &jmState{batch: batch, cells: make([]float64, vals)}
	for i := range st.cells {
		st.cells[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8+8*i:]))
	}
	return st, nil
}

// jmState is the carried state of a depth-limited JM stack: its
// (batch, K, m) cells, the top first.
type jmState struct {
	batch int
	cells []float64
}

func (s *jmState) Batch() int { return s.batch }

func (s *jmState) MarshalBinary() ([]byte, error) {
	b := binary.LittleEndian.AppendUint64(nil, uint64(s.batch))
	for _, v := range s.cells {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	return b, nil
}

func (s *JM) tape(batch int) *baseline.JM {
	if s.tapes == nil {
		s.tapes = map[int]*baseline.JM{}
	}
	t := s.tapes[batch]
	if t == nil {
		t = baseline.NewJM(batch, s.m, s.depth)
		s.tapes[batch] = t
	}
	return t
}

// CheckSize implements Sizer.
func (s *JM) CheckSize(batch, steps int, carry bool) error {
	if batch < 1 || steps < 0 {
		return fmt.Errorf("stacks: JM size check with batch %d, steps %d", batch, steps)
	}
	if b := jmTapeBytes(batch, s.m, s.depth, steps, carry); b > MaxTapeBytes {
		return fmt.Errorf("stacks: the JM stack's tape for batch %d over %d steps (vectors of %d, depth limit %d) would take %.3g GiB, more than the limit of %d GiB: reduce the batch, the length, the vector size or the depth limit",
			batch, steps, s.m, s.depth, b/(1<<30), MaxTapeBytes>>30)
	}
	return nil
}

// Bind implements Layer. Each Step adds one node. The instance works on a
// scratch tape shared with the other graphs bound to s for the same batch
// size, so those graphs must not run concurrently. With a depth limit the
// stack can be carried from one run to the next (carry).
func (s *JM) Bind(pb *param.Binding, batch, steps int, carry bool) (Instance, error) {
	if batch < 1 || steps < 0 {
		return nil, fmt.Errorf("stacks: JM bind with batch %d, steps %d", batch, steps)
	}
	if carry {
		if err := s.Carryable(); err != nil {
			return nil, err
		}
	}
	if err := s.CheckSize(batch, steps, carry); err != nil {
		return nil, err
	}
	g := pb.Graph()
	id := baselineIDs.Add(1)
	in := &jmInstance{s: s, pb: pb, batch: batch, steps: steps, id: id, carry: carry,
		initial: tensor.New(tensor.WithShape(batch, s.m), tensor.Of(tensor.Float64))}
	for _, p := range s.Params() {
		in.params = append(in.params, pb.Node(p))
	}
	in.params = append(in.params, pb.Anchor())
	in.r0 = G.NewMatrix(g, tensor.Float64, G.WithShape(batch, s.m),
		G.WithName(fmt.Sprintf("%s.r0#%d", s.wa.Name, id)), G.WithValue(in.initial))
	in.prev = in.r0
	in.act = make([]float64, batch*(3+s.m))
	in.grad = make([]float64, batch*(3+s.m))
	return in, nil
}

// jmTapeBytes is the most memory a JM stack of vectors of size m with the
// given depth limit (0: none) takes for a pass of steps steps over batch
// stacks: its tape holds s_0 … s_steps, of heights L_t at most L_0 + t
// (L_0 up to the depth limit when the stack is carried, 0 otherwise), at
// most the depth limit, and without one at most steps − t + 1 (trimmed);
// a carried stack also keeps its state and two gradients of the largest
// height.
func jmTapeBytes(batch, m, depth, steps int, carry bool) float64 {
	S, K := float64(steps), float64(depth)
	var cells, largest float64
	switch {
	case depth == 0: // L_t = min(t, steps − t + 1)
		cells, largest = math.Floor((S+1)*(S+1)/4), math.Floor((S+1)/2)
	case carry: // L_t = K
		cells, largest = (S+1)*K+K, K
	default: // L_t = min(t, K)
		c := min(S, K)
		cells, largest = c*(c+1)/2+(S-c)*K, c
	}
	return 8 * float64(batch) * float64(m) * (cells + 2*largest)
}

// jmInstance is a JM stack bound to one graph.
type jmInstance struct {
	s            *JM
	pb           *param.Binding
	batch, steps int
	id           uint64
	carry        bool
	params       []*G.Node
	initial      *tensor.Dense
	r0, prev     *G.Node
	last         int // steps added to the graph
	ran          int // latest step run forward
	tape         *baseline.JM
	// start is the state runs start from (nil: empty); latest the final
	// state of the latest run.
	start, latest *jmState
	// act holds a (batch, 3) and v (batch, m), grad their gradients;
	// both are scratch.
	act, grad []float64
}

// Initial implements Instance: r_0, zeros (or, for a carried JM stack,
// the carried top).
func (in *jmInstance) Initial() *G.Node { return in.r0 }

// Step implements Instance; steps must be added in order 1, 2, ….
func (in *jmInstance) Step(t int, h *G.Node) (*G.Node, error) {
	if t != in.last+1 || t > in.steps {
		return nil, fmt.Errorf("stacks: JM step %d after step %d (at most %d steps)", t, in.last, in.steps)
	}
	args := append([]*G.Node{h}, in.params...)
	r, err := fused.Apply(&jmStep{in: in, t: t}, append(args, in.prev)...)
	if err != nil {
		return nil, err
	}
	in.last, in.prev = t, r
	return r, nil
}

// SetState implements Instance.
func (in *jmInstance) SetState(st State) error {
	if !in.carry {
		return errNotCarrying
	}
	if st == nil {
		in.start = nil
		clear(in.initial.Float64s())
		return nil
	}
	js, ok := st.(*jmState)
	if !ok {
		return fmt.Errorf("stacks: state of type %T given to a JM stack", st)
	}
	if js.batch != in.batch || len(js.cells) != in.batch*in.s.depth*in.s.m {
		return fmt.Errorf("stacks: JM state for batch %d given to a stack of batch %d", js.batch, in.batch)
	}
	in.start = js
	K, m := in.s.depth, in.s.m
	for b := 0; b < in.batch; b++ {
		copy(in.initial.Float64s()[b*m:(b+1)*m], js.cells[b*K*m:b*K*m+m])
	}
	return nil
}

// State implements Instance.
func (in *jmInstance) State() (State, error) {
	if !in.carry {
		return nil, errNotCarrying
	}
	if in.latest == nil {
		return nil, errNoRun
	}
	return in.latest, nil
}

// capture records the stack after the latest run's last step.
func (in *jmInstance) capture() {
	K, m := in.s.depth, in.s.m
	st := &jmState{batch: in.batch, cells: make([]float64, in.batch*K*m)}
	L := in.tape.Height(in.ran)
	for b := 0; b < in.batch; b++ {
		copy(st.cells[b*K*m:], in.tape.Stack(in.ran, b)[:L*m])
	}
	in.latest = st
}

// jmStep is the fused kernel of one JM update: r_t from h_t, the
// parameters and r_{t−1}. The stack itself lives on the instance's tape;
// r_{t−1} is an input only to order the steps (its gradient is zero), so
// that the backward pass of step t runs after that of step t+1.
type jmStep struct {
	in *jmInstance
	t  int
}

func (k *jmStep) Name() string { return fmt.Sprintf("jm_step%d", k.t) }

func (k *jmStep) WriteHash(h hash.Hash) {
	s := k.in.s
	fmt.Fprintf(h, "jm:%d:%d:%d:%d:%v:%d", k.in.id, k.t, s.hidden, s.m, s.pushHidden, s.depth)
}

// Differentiable implements fused.Constant: h, the anchor and r_{t−1}; the
// parameters' gradients go into the binding.
func (k *jmStep) Differentiable(i int) bool { return i == 0 || i > len(k.in.s.Params()) }

func (k *jmStep) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	B, H, m := k.in.batch, k.in.s.hidden, k.in.s.m
	want := []tensor.Shape{{B, H}, {3, H}, {3}}
	if !k.in.s.pushHidden {
		want = append(want, tensor.Shape{m, H}, tensor.Shape{m})
	}
	want = append(want, tensor.Shape{}, tensor.Shape{B, m})
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

func (k *jmStep) Forward(out []float64, in [][]float64) {
	inst, s := k.in, k.in.s
	B := inst.batch
	if k.t == 1 {
		inst.tape = s.tape(B)
		var init []float64
		if inst.start != nil {
			init = inst.start.cells
		}
		inst.tape.Begin(inst.steps, init, s.depth == 0)
	}
	a := inst.act[:3*B]
	var wv, bv []float64
	if !s.pushHidden {
		wv, bv = in[3], in[4]
	}
	v := jmActions(s, a, inst.act[3*B:], in[0], in[1], in[2], wv, bv, B)
	inst.tape.Forward(k.t, a, v, out)
	inst.ran = k.t
	if inst.carry && k.t == inst.last {
		inst.capture()
	}
}

func (k *jmStep) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {
	inst, s := k.in, k.in.s
	B, H, m := inst.batch, s.hidden, s.m
	da, dv := inst.grad[:3*B], inst.grad[3*B:]
	clear(inst.grad)
	inst.tape.Backward(k.t, gradOut, da, dv)
	a := inst.tape.Actions(k.t)
	for b := 0; b < B; b++ {
		p, d := a[3*b:3*b+3], da[3*b:3*b+3]
		dot := p[0]*d[0] + p[1]*d[1] + p[2]*d[2]
		for i := range d {
			d[i] = p[i] * (d[i] - dot)
		}
	}
	pb := inst.pb
	linalg.AffineBackward(gradIn[0], pb.Grad(s.wa), pb.Grad(s.ba), da, in[0], in[1], B, H, 3)
	if s.pushHidden {
		for i, x := range dv {
			gradIn[0][i] += x
		}
		return
	}
	v := inst.tape.V(k.t)
	for i := range dv {
		dv[i] *= v[i] * (1 - v[i])
	}
	linalg.AffineBackward(gradIn[0], pb.Grad(s.wv), pb.Grad(s.bv), dv, in[0], in[3], B, H, m)
}
