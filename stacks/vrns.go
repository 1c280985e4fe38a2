package stacks

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"math"
	"math/rand/v2"
	"sync/atomic"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/fused"
	"github.com/nsrnn/nsrnn/internal/linalg"
	"github.com/nsrnn/nsrnn/param"
	"github.com/nsrnn/nsrnn/stacks/internal/nskernel"
)

// BottomVector selects the vector that the initial bottom symbol of a VRNS
// stack carries.
type BottomVector int

const (
	// LearnedBottom is σ(w_0) for a parameter w_0 of size m.
	LearnedBottom BottomVector = iota
	// ZeroBottom is the vector of zeros.
	ZeroBottom
	// OneBottom is the vector of ones.
	OneBottom
)

// String returns "learned", "zero" or "one".
func (b BottomVector) String() string {
	switch b {
	case LearnedBottom:
		return "learned"
	case ZeroBottom:
		return "zero"
	case OneBottom:
		return "one"
	}
	return fmt.Sprintf("BottomVector(%d)", int(b))
}

// Set parses "learned", "zero" or "one" (a command-line flag's value).
func (b *BottomVector) Set(s string) error {
	for _, v := range []BottomVector{LearnedBottom, ZeroBottom, OneBottom} {
		if v.String() == s {
			*b = v
			return nil
		}
	}
	return fmt.Errorf("%q: want learned, zero or one", s)
}

// Type names the flag's value type, "string".
func (BottomVector) Type() string { return "string" }

// VRNSConfig fixes the shape and variant of a vector nondeterministic
// stack.
type VRNSConfig struct {
	// States and Symbols are |Q| and |Γ|, both at least 1.
	States, Symbols int
	// Vector is m, the size of the stack's vectors, at least 1.
	Vector int
	// Bottom is the bottom-symbol behaviour.
	Bottom Bottom
	// Window is D for the memory-limited stack; 0 means unlimited.
	Window int
	// BottomVector is the vector of the initial bottom symbol.
	BottomVector BottomVector
}

func (c VRNSConfig) kernel() nskernel.Config {
	return nskernel.Config{States: c.States, Symbols: c.Symbols, Vector: c.Vector, Fixed: c.Bottom == Fixed, Window: c.Window}
}

// Validate reports an impossible configuration.
func (c VRNSConfig) Validate() error {
	if c.Bottom != Original && c.Bottom != Fixed {
		return fmt.Errorf("stacks: unknown bottom behaviour %d", c.Bottom)
	}
	if c.BottomVector < LearnedBottom || c.BottomVector > OneBottom {
		return fmt.Errorf("stacks: unknown bottom vector %d", c.BottomVector)
	}
	if c.States < 1 || c.Symbols < 1 || c.Vector < 1 {
		return fmt.Errorf("stacks: VRNS: need States, Symbols and Vector of at least 1, have %d, %d and %d", c.States, c.Symbols, c.Vector)
	}
	if err := c.kernel().Validate(); err != nil {
		return fmt.Errorf("stacks: VRNS: %w", err)
	}
	return nil
}

// NumActions is the number of action scores per step,
// |Q||Γ|(2|Q||Γ|+|Q|), in the layout of the NS stack.
func (c VRNSConfig) NumActions() int { return c.kernel().NumActions() }

// ReadingSize is |Q||Γ|m.
func (c VRNSConfig) ReadingSize() int { return c.kernel().ReadingSize() }

// NumParams is the number of scalar parameters of a VRNS stack reading
// hidden states of size hidden: (hidden+1)·NumActions for the Actions
// layer, (hidden+1)·m for the vector layer, and m for a learned bottom
// vector.
func (c VRNSConfig) NumParams(hidden int) int {
	n := (hidden+1)*c.NumActions() + (hidden+1)*c.Vector
	if c.BottomVector == LearnedBottom {
		n += c.Vector
	}
	return n
}

// VRNS is the vector nondeterministic stack of DuSell & Chiang's ICLR 2023
// release (the stack of the VRNS-RNN) with its Actions layer.
//
// It is the RNS stack (unnormalized action weights, the same action
// layout and weights Δ[t], both bottom behaviours, unlimited and
// memory-limited) whose stack elements are (symbol, vector) pairs. From
// the controller's hidden state h_t,
//
//	log Δ[t] = W_a h_t + b_a          NumActions scores, as for RNS
//	v_t      = σ(W_v h_t + b_v)       the vector pushed at step t, size m
//
// and every push of step t pushes v_t with its symbol. A replace changes
// the symbol of the top element and keeps its vector: the vector belongs
// to the stack element, not to the symbol. A pop uncovers the element
// below with the vector it was pushed with. The initial bottom carries the
// bottom vector v_0 (BottomVector: σ(w_0) of a learned w_0, zeros or
// ones).
//
// The reading is the expected top vector per (state, top symbol):
//
//	r_t[(r·|Γ|+y)·m+j] = Σ_runs weight · [state r, top symbol y] · (top vector)_j / Σ_runs weight
//
// of size |Q||Γ|m; it reads all zeros when every run has weight zero. The
// authors compute it with a vector ζ[i→t][q,x→r,y] beside each γ entry,
//
//	ζ[t−1→t][q,x→r,y] = Δ[t][q,x→r,•y] · v_t
//	ζ[i→t][q,x→r,y]   = Σ_{s,z} ζ[i→t−1][q,x→s,z] Δ[t][s,z→r,y]
//	                  + Σ_{k=i+1}^{t−2} Σ_u ζ[i→k][q,x→u,y] γ′[k→t][u,y→r]
//	η[t][r,y] = Σ_i Σ_{q,x} α[i][q,x] ζ[i→t][q,x→r,y],   r_t = η[t] / Σ α[t]
//
// (in the pop term the vector comes from ζ[i→k], whose top y is the
// element that the pop uncovers). Since every run counted by γ[i→t] has
// on top the element pushed at step i+1, ζ[i→t] = v_{i+1} γ[i→t], and the
// stack computes η[t][r,y] = Σ_i v_{i+1} (α[i] γ[i→t])[r,y] from the terms
// of α[t]: the time and memory of the RNS stack, plus O(nm|Q||Γ|) per
// step.
//
// The bottom vector. With the Original behaviour the initial bottom is
// never on top after step 1, so v_0 appears only in r_0 = v_0 at (state
// 0, symbol 0). With Fixed, the initial bottom is the element of the row
// i = −1 (ζ[−1→0] = v_0 at (0,0)→(0,0)): replaced it keeps v_0, and
// uncovered by pops v_0 is on top again. In the memory-limited stack that
// row counts as an ordinary row, kept while t+1 ≤ D. A learned w_0 gets
// its gradient through r_0 (Initial is then a node whose backward pass adds
// it into the binding) and, with Fixed, through the dynamic program.
//
// Numbers. The dynamic program stores each block of γ as a scalar log
// shift and mantissas, so that unnormalized weights beyond the
// floating-point range stay finite; it is exact up to rounding while the
// entries of a block stay within about 700 nats of its largest one
// (entries further below are flushed to zero). With action log-weights of
// ±50 over 60 steps it reads what the RNS stack reads (m = 1, vectors of
// ones) to 1e-11.
//
// The memory-limited stack carries the last D−1 columns of γ, the last D
// entries of α, the vectors of their elements and the last reading (see
// the package documentation, "Carrying state"); the unlimited one cannot
// carry its state.
type VRNS struct {
	cfg    VRNSConfig
	hidden int
	name   string
	wa, ba *param.Param
	wv, bv *param.Param
	w0     *param.Param // nil unless the bottom vector is learned
	// tapes holds one scratch tape per batch size, shared by the graphs
	// bound to the stack (which therefore must not run concurrently; see
	// Replicator).
	tapes map[int]*nskernel.Tape
	// threads bounds the goroutines of a run (< 1: GOMAXPROCS; see
	// Replicator).
	threads int
}

// NewVRNS returns a vector nondeterministic stack whose actions and
// pushed vectors are computed from hidden states of size hidden. Its
// parameters are named name+".W_a", ".b_a" (the Actions layer,
// NumActions × hidden), ".W_v", ".b_v" (the vector layer, m × hidden)
// and, for a learned bottom vector, ".w_0" (size m).
func NewVRNS(name string, hidden int, cfg VRNSConfig) (*VRNS, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if hidden < 1 {
		return nil, fmt.Errorf("stacks: VRNS needs a hidden size of at least 1, got %d", hidden)
	}
	a, m := cfg.NumActions(), cfg.Vector
	if err := checkParams(name, (float64(a)+float64(m))*float64(hidden+1)+float64(m)); err != nil {
		return nil, err
	}
	s := &VRNS{
		cfg: cfg, hidden: hidden, name: name,
		wa: param.New(name+".W_a", a, hidden), ba: param.New(name+".b_a", a),
		wv: param.New(name+".W_v", m, hidden), bv: param.New(name+".b_v", m),
	}
	if cfg.BottomVector == LearnedBottom {
		s.w0 = param.New(name+".w_0", m)
	}
	return s, nil
}

// Config returns the stack's configuration.
func (s *VRNS) Config() VRNSConfig { return s.cfg }

// Hidden is the size of the hidden states the actions are computed from.
func (s *VRNS) Hidden() int { return s.hidden }

// ReadingSize implements Layer: |Q||Γ|m.
func (s *VRNS) ReadingSize() int { return s.cfg.ReadingSize() }

// Params implements Layer: W_a, b_a, W_v, b_v and, for a learned bottom
// vector, w_0.
func (s *VRNS) Params() []*param.Param {
	ps := []*param.Param{s.wa, s.ba, s.wv, s.bv}
	if s.w0 != nil {
		ps = append(ps, s.w0)
	}
	return ps
}

// Init implements Layer: W_a and b_a by the scheme's Recurrent rule (as
// the NS stack's Actions layer), W_v and b_v by its Affine rule, and w_0
// by the Recurrent rule for biases.
//
// rng is a *rand.Rand of math/rand/v2, e.g. rand.New(rand.NewPCG(seed, 0)).
func (s *VRNS) Init(sc param.Scheme, rng *rand.Rand) {
	r, a := sc.Recurrent(), sc.Affine()
	r.InitWeight(s.wa, rng)
	r.InitBias(s.ba, rng)
	a.InitWeight(s.wv, rng)
	a.InitBias(s.bv, rng)
	if s.w0 != nil {
		r.InitBias(s.w0, rng)
	}
}

// Carryable implements Layer: only the memory-limited stack can carry its
// state.
func (s *VRNS) Carryable() error {
	if s.cfg.Window == 0 {
		return fmt.Errorf("stacks: the unlimited VRNS stack keeps every column of its dynamic program; only the memory-limited stack (a window D ≥ 1) can carry its state: %w", ErrNoCarry)
	}
	return nil
}

// Replica implements Replicator: a VRNS sharing the parameters of s, with
// its own scratch tapes.
func (s *VRNS) Replica(threads int) Layer {
	c := *s
	c.tapes = nil
	c.threads = threads
	return &c
}

// tape returns the scratch tape for the batch size with room for at least
// steps steps.
func (s *VRNS) tape(batch, steps int) *nskernel.Tape {
	if s.tapes == nil {
		s.tapes = map[int]*nskernel.Tape{}
	}
	t := s.tapes[batch]
	if t == nil || t.MaxSteps() < steps {
		t = nskernel.NewTape(s.cfg.kernel(), batch, steps)
		if s.threads > 0 {
			t.SetThreads(s.threads)
		}
		s.tapes[batch] = t
	}
	return t
}

// bottomVector writes v_0 into dst, from w_0 (the value of its node) for
// a learned bottom vector.
func (s *VRNS) bottomVector(dst, w0 []float64) {
	switch s.cfg.BottomVector {
	case LearnedBottom:
		for j, x := range w0[:len(dst)] {
			dst[j] = sigmoid(x)
		}
	case ZeroBottom:
		clear(dst)
	case OneBottom:
		for j := range dst {
			dst[j] = 1
		}
	}
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

var vrnsIDs atomic.Uint64

// CheckSize implements Sizer.
func (s *VRNS) CheckSize(batch, steps int, carry bool) error {
	if batch < 1 || steps < 0 {
		return fmt.Errorf("stacks: VRNS size check with batch %d, steps %d", batch, steps)
	}
	if b := nskernel.TapeBytes(s.cfg.kernel(), batch, max(steps, 1)); b > MaxTapeBytes {
		return fmt.Errorf("stacks: the VRNS stack's dynamic program for batch %d over %d steps (|Q| = %d, |Γ| = %d, vectors of %d, window %d) would take %.3g GiB, more than the limit of %d GiB: reduce the batch, the length, the states, symbols or vector size, or %s",
			batch, steps, s.cfg.States, s.cfg.Symbols, s.cfg.Vector, s.cfg.Window, b/(1<<30), MaxTapeBytes>>30, windowAdvice(s.cfg.Window))
	}
	return nil
}

// Bind implements Layer. Each Step adds one node, which takes r_{t−1} as
// an input that only orders the backward passes and the binding's anchor;
// the parameters' gradients are added into the binding. For a learned
// bottom vector, Initial is a node too, whose backward pass adds the
// gradient of w_0 through r_0.
func (s *VRNS) Bind(pb *param.Binding, batch, steps int, carry bool) (Instance, error) {
	if batch < 1 || steps < 0 {
		return nil, fmt.Errorf("stacks: VRNS bind with batch %d, steps %d", batch, steps)
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
	id := vrnsIDs.Add(1)
	rs, m := s.ReadingSize(), s.cfg.Vector
	in := &vrnsInstance{
		s: s, pb: pb, batch: batch, id: id, steps: steps, carry: carry,
		logw:        make([][]float64, steps+1),
		vecs:        make([][]float64, steps+1),
		gLogw:       make([]float64, batch*s.cfg.NumActions()),
		gVec:        make([]float64, batch*m),
		gBottom:     make([]float64, m),
		bottom:      make([]float64, m),
		zeroReading: make([]float64, batch*rs),
	}
	for _, p := range s.Params() {
		in.params = append(in.params, pb.Node(p))
	}
	in.anchor = pb.Anchor()
	if s.w0 != nil {
		r0, err := fused.Apply(&vrnsInitial{in: in}, pb.Node(s.w0), in.anchor)
		if err != nil {
			return nil, err
		}
		in.r0 = r0
	} else {
		in.r0 = G.NewMatrix(g, tensor.Float64, G.WithShape(batch, rs),
			G.WithName(fmt.Sprintf("%s.r0#%d", s.name, id)), G.WithValue(tensor.New(tensor.WithShape(batch, rs), tensor.Of(tensor.Float64))))
	}
	if err := in.setInitialReading(); err != nil {
		return nil, err
	}
	in.prev = in.r0
	return in, nil
}

// UnmarshalState implements Layer.
func (s *VRNS) UnmarshalState(data []byte) (State, error) {
	if err := s.Carryable(); err != nil {
		return nil, err
	}
	bad := errors.New("stacks: malformed VRNS state")
	if len(data) < len(vrnsStateMagic)+16 || string(data[:len(vrnsStateMagic)]) != vrnsStateMagic {
		return nil, bad
	}
	data = data[len(vrnsStateMagic):]
	if bv := BottomVector(binary.LittleEndian.Uint64(data)); bv != s.cfg.BottomVector {
		return nil, fmt.Errorf("stacks: VRNS state of another configuration (a %v bottom vector, not %+v)", bv, s.cfg)
	}
	r, k, err := decodeCarried(data[8:], s.cfg.kernel(), s.ReadingSize(), "VRNS")
	if err != nil {
		return nil, err
	}
	return &vrnsState{cfg: s.cfg, k: k, reading: r}, nil
}

const vrnsStateMagic = "stacks-vrns-state\x00"

// vrnsState is the carried state of a memory-limited VRNS stack: the
// kernel's columns and the last reading, r_0 of the next run.
type vrnsState struct {
	cfg     VRNSConfig
	k       *nskernel.State
	reading []float64
}

// Batch implements State.
func (s *vrnsState) Batch() int { return s.k.Batch() }

// MarshalBinary implements State: exact.
func (s *vrnsState) MarshalBinary() ([]byte, error) {
	header := append([]byte(nil), vrnsStateMagic...)
	return appendCarried(binary.LittleEndian.AppendUint64(header, uint64(s.cfg.BottomVector)), s.reading, s.k)
}

// vrnsInstance is a VRNS stack bound to one graph.
type vrnsInstance struct {
	s     *VRNS
	pb    *param.Binding
	batch int
	id    uint64
	steps int
	carry bool
	// tape is the stack's scratch tape, taken when step 1 runs.
	tape *nskernel.Tape
	// params are the nodes of s.Params(), in order; anchor the binding's.
	params        []*G.Node
	anchor        *G.Node
	r0, prev      *G.Node
	start, latest *vrnsState
	// logw[t] and vecs[t] keep the action log-weights and the pushed
	// vector of step t between the forward and backward passes; bottom is
	// v_0 of the latest run.
	logw, vecs [][]float64
	bottom     []float64
	// fromStart: the latest run began from the initial stack, so that
	// v_0 is in its dynamic program and its r_0.
	fromStart bool
	ran       int
	// gLogw, gVec and gBottom are scratch for the backward pass;
	// zeroReading is the zero gradient of a reading the loss ignores.
	gLogw, gVec, gBottom, zeroReading []float64
	// nextBack is the step whose backward pass the tape expects next.
	nextBack int
	// added is the last step added to the graph: with carry, its forward
	// pass records the final state.
	added int
}

// setInitialReading sets the value of the node r_0, so that it can be
// read before the graph runs: the carried reading, or v_0 at (state 0,
// symbol 0). For a learned bottom vector r_0 is the node of vrnsInitial,
// which recomputes it from w_0 when the graph runs; its value here is
// σ(w_0) of the current parameters, bound as a new tensor (the machine
// may own the previous one).
func (in *vrnsInstance) setInitialReading() error {
	rs := in.s.ReadingSize()
	d := tensor.New(tensor.WithShape(in.batch, rs), tensor.Of(tensor.Float64))
	if in.s.w0 == nil {
		d = in.r0.Value().(*tensor.Dense)
	}
	r := d.Float64s()
	if in.start != nil {
		copy(r, in.start.reading)
	} else {
		v0 := make([]float64, in.s.cfg.Vector)
		var w0 []float64
		if in.s.w0 != nil {
			w0 = in.s.w0.Data()
		}
		in.s.bottomVector(v0, w0)
		for b := 0; b < in.batch; b++ {
			in.s.cfg.kernel().InitialVectorReading(r[b*rs:(b+1)*rs], v0)
		}
	}
	if in.s.w0 != nil {
		return G.UnsafeLet(in.r0, d)
	}
	return nil
}

// Initial implements Instance.
func (in *vrnsInstance) Initial() *G.Node { return in.r0 }

// SetState implements Instance.
func (in *vrnsInstance) SetState(st State) error {
	if !in.carry {
		return errNotCarrying
	}
	if st == nil {
		in.start = nil
	} else {
		vs, ok := st.(*vrnsState)
		if !ok {
			return fmt.Errorf("stacks: state of type %T given to a VRNS stack", st)
		}
		if vs.cfg != in.s.cfg || vs.Batch() != in.batch {
			return fmt.Errorf("stacks: VRNS state for %+v batch %d given to a stack of %+v batch %d", vs.cfg, vs.Batch(), in.s.cfg, in.batch)
		}
		in.start = vs
	}
	return in.setInitialReading()
}

// State implements Instance.
func (in *vrnsInstance) State() (State, error) {
	if !in.carry {
		return nil, errNotCarrying
	}
	if in.latest == nil {
		return nil, errNoRun
	}
	return in.latest, nil
}

// Step implements Instance; steps must be added in order 1, 2, ….
func (in *vrnsInstance) Step(t int, h *G.Node) (*G.Node, error) {
	if t != in.added+1 || t > in.steps {
		return nil, fmt.Errorf("stacks: VRNS step %d after step %d (at most %d steps)", t, in.added, in.steps)
	}
	in.logw[t] = make([]float64, in.batch*in.s.cfg.NumActions())
	in.vecs[t] = make([]float64, in.batch*in.s.cfg.Vector)
	args := append(append([]*G.Node{h}, in.params...), in.prev, in.anchor)
	r, err := fused.Apply(&vrnsStep{in: in, t: t}, args...)
	if err != nil {
		return nil, err
	}
	in.prev, in.added = r, t
	return r, nil
}

// ActionLogWeights implements ActionRecorder: the action log-weights of
// the latest run, in the layout of Run's input.
func (in *vrnsInstance) ActionLogWeights() ([][]float64, error) {
	if in.ran == 0 {
		return nil, errNoRun
	}
	out := make([][]float64, in.ran)
	for t := range out {
		out[t] = append([]float64(nil), in.logw[t+1]...)
	}
	return out, nil
}

// vrnsStep is the fused kernel of one stack update: r_t from h_t through
// the Actions layer, the vector layer and the dynamic program's column t.
// Its inputs are h_t, the parameters (not differentiated by gorgonia: the
// backward pass adds their gradients into the binding), r_{t−1} (which
// only orders the steps' backward passes; its gradient is zero) and the
// binding's anchor.
type vrnsStep struct {
	in *vrnsInstance
	t  int
}

func (k *vrnsStep) Name() string { return fmt.Sprintf("VRNS_step%d", k.t) }

func (k *vrnsStep) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "vrns:%d:%d:%d:%+v", k.in.id, k.t, k.in.s.hidden, k.in.s.cfg)
}

// Differentiable implements fused.Constant: h, r_{t−1} and the anchor.
func (k *vrnsStep) Differentiable(i int) bool { return i == 0 || i > len(k.in.params) }

func (k *vrnsStep) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	s, B := k.in.s, k.in.batch
	want := []tensor.Shape{{B, s.hidden}}
	for _, p := range s.Params() {
		want = append(want, p.Value.Shape())
	}
	want = append(want, tensor.Shape{B, s.ReadingSize()}, tensor.Shape{})
	if len(in) != len(want) {
		return nil, fmt.Errorf("got %d inputs, want %d", len(in), len(want))
	}
	for i := range want {
		if !in[i].Eq(want[i]) {
			what := "input"
			if i == 0 {
				what = "h"
			}
			return nil, fmt.Errorf("%s %d has shape %v, want %v", what, i, in[i], want[i])
		}
	}
	return tensor.Shape{B, s.ReadingSize()}, nil
}

func (k *vrnsStep) Forward(out []float64, in [][]float64) {
	inst, s := k.in, k.in.s
	B, H, a, m := inst.batch, s.hidden, s.cfg.NumActions(), s.cfg.Vector
	if k.t == 1 {
		inst.tape = s.tape(B, max(inst.steps, 1))
		var start *nskernel.State
		if inst.start != nil {
			start = inst.start.k
		} else {
			var w0 []float64
			if s.w0 != nil {
				w0 = in[5]
			}
			s.bottomVector(inst.bottom, w0)
		}
		inst.fromStart = inst.start == nil
		if err := inst.tape.BeginVector(start, inst.bottom); err != nil {
			panic(err) // SetState checked the state's configuration and batch
		}
	}
	linalg.Affine(inst.logw[k.t], in[0], in[1], in[2], B, H, a)
	v := inst.vecs[k.t]
	linalg.Affine(v, in[0], in[3], in[4], B, H, m)
	for i, x := range v {
		v[i] = sigmoid(x)
	}
	inst.tape.StepVector(inst.logw[k.t], v, out)
	inst.ran, inst.nextBack = k.t, k.t
	if inst.carry && k.t == inst.added {
		inst.latest = &vrnsState{cfg: s.cfg, k: inst.tape.State(), reading: append([]float64(nil), out...)}
	}
}

func (k *vrnsStep) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {
	inst, s := k.in, k.in.s
	B, H, a, m := inst.batch, s.hidden, s.cfg.NumActions(), s.cfg.Vector
	gLogw, gVec, gBottom := inst.gLogw, inst.gVec, inst.gBottom
	clear(gBottom)
	// Steps after k.t whose readings the loss does not use get no backward
	// node from gorgonia; the tape still needs them, with zero gradient
	// (their parameter gradients are zero).
	for t := inst.nextBack; t > k.t; t-- {
		inst.tape.BackwardVector(t, inst.zeroReading, gLogw, gVec, gBottom)
	}
	inst.nextBack = k.t - 1
	inst.tape.BackwardVector(k.t, gradOut, gLogw, gVec, gBottom)
	pb := inst.pb
	linalg.AffineBackward(gradIn[0], pb.Grad(s.wa), pb.Grad(s.ba), gLogw, in[0], in[1], B, H, a)
	v := inst.vecs[k.t]
	for i, x := range v {
		gVec[i] *= x * (1 - x)
	}
	linalg.AffineBackward(gradIn[0], pb.Grad(s.wv), pb.Grad(s.bv), gVec, in[0], in[3], B, H, m)
	if k.t == 1 && s.w0 != nil && inst.fromStart {
		addSigmoidGrad(pb.Grad(s.w0), gBottom, inst.bottom)
	}
}

// addSigmoidGrad adds g ⊙ σ′ into dst, for y = σ(x): σ′ = y(1−y).
func addSigmoidGrad(dst, g, y []float64) {
	for j, v := range y {
		dst[j] += g[j] * v * (1 - v)
	}
}

// vrnsInitial is the fused kernel of r_0 for a learned bottom vector: v_0
// = σ(w_0) at (state 0, symbol 0) for each batch element, or the carried
// reading. Its inputs are w_0 (not differentiated by gorgonia: the
// backward pass adds its gradient into the binding) and the binding's
// anchor.
type vrnsInitial struct {
	in *vrnsInstance
	// fromStart: the latest forward pass computed r_0 from w_0.
	fromStart bool
}

func (k *vrnsInitial) Name() string { return "VRNS_r0" }

func (k *vrnsInitial) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "vrns.r0:%d:%+v", k.in.id, k.in.s.cfg)
}

// Differentiable implements fused.Constant: the anchor.
func (k *vrnsInitial) Differentiable(i int) bool { return i == 1 }

func (k *vrnsInitial) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	m := k.in.s.cfg.Vector
	if len(in) != 2 || !in[0].Eq(tensor.Shape{m}) || !in[1].IsScalar() {
		return nil, fmt.Errorf("want w_0 of shape (%d) and the anchor, got %v", m, in)
	}
	return tensor.Shape{k.in.batch, k.in.s.ReadingSize()}, nil
}

func (k *vrnsInitial) Forward(out []float64, in [][]float64) {
	inst := k.in
	k.fromStart = inst.start == nil
	if !k.fromStart {
		copy(out, inst.start.reading)
		return
	}
	rs := inst.s.ReadingSize()
	v0 := make([]float64, inst.s.cfg.Vector)
	inst.s.bottomVector(v0, in[0])
	for b := 0; b < inst.batch; b++ {
		inst.s.cfg.kernel().InitialVectorReading(out[b*rs:(b+1)*rs], v0)
	}
}

func (k *vrnsInitial) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {
	if !k.fromStart {
		return
	}
	inst := k.in
	rs, m := inst.s.ReadingSize(), inst.s.cfg.Vector
	g := make([]float64, m)
	for b := 0; b < inst.batch; b++ {
		for j, v := range gradOut[b*rs : b*rs+m] {
			g[j] += v
		}
	}
	addSigmoidGrad(inst.pb.Grad(inst.s.w0), g, out[:m])
}

// LogState returns a carried state of s (from a stream's run) in log
// space, with its vectors (see NSLogState).
func (s *VRNS) LogState(st State) (*NSLogState, error) {
	vs, ok := st.(*vrnsState)
	if !ok {
		return nil, fmt.Errorf("stacks: state of type %T given to a VRNS stack", st)
	}
	if vs.k.Config() != s.cfg.kernel() || vs.cfg.BottomVector != s.cfg.BottomVector {
		return nil, fmt.Errorf("stacks: VRNS state of another configuration (%+v, not %+v)", vs.cfg, s.cfg)
	}
	la, lg := vs.k.LogValues()
	return &NSLogState{Positions: vs.k.Positions(), LogAlpha: la, LogGamma: lg, Vectors: vs.k.Vectors(), Reading: append([]float64(nil), vs.reading...)}, nil
}

// StateFromLog returns the carried state of s with the given log weights
// and vectors, which a run of s continues as it would the state they were
// read from. It is an error for an unlimited stack, or for weights,
// vectors or a reading of the wrong sizes.
func (s *VRNS) StateFromLog(ls *NSLogState) (State, error) {
	if err := s.Carryable(); err != nil {
		return nil, err
	}
	batch := len(ls.LogAlpha)
	if batch < 1 || len(ls.Reading) != batch*s.ReadingSize() {
		return nil, fmt.Errorf("stacks: a VRNS state of %d sequences with a reading of %d values (want %d)", batch, len(ls.Reading), batch*s.ReadingSize())
	}
	k, err := nskernel.StateFromLog(s.cfg.kernel(), batch, ls.Positions, ls.LogAlpha, ls.LogGamma, ls.Vectors)
	if err != nil {
		return nil, fmt.Errorf("stacks: %w", err)
	}
	return &vrnsState{cfg: s.cfg, k: k, reading: append([]float64(nil), ls.Reading...)}, nil
}
