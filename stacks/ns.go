package stacks

import (
	"encoding/binary"
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

// Bottom selects how the initial bottom symbol of the nondeterministic
// stack behaves (see the package documentation, "Bottom behaviours").
type Bottom int

const (
	// Original is the behaviour of the ICLR 2022 paper's equations: the
	// initial bottom can never be replaced and no pop may uncover it, so
	// the first step is always a push.
	Original Bottom = iota
	// Fixed is the behaviour of the authors' later release (ICLR 2023):
	// the initial bottom is an ordinary symbol that cannot be popped.
	Fixed
)

// String returns "original" or "fixed".
func (b Bottom) String() string {
	if b == Fixed {
		return "fixed"
	}
	return "original"
}

// Set parses "original" or "fixed" (a command-line flag's value).
func (b *Bottom) Set(s string) error {
	switch s {
	case "original":
		*b = Original
	case "fixed":
		*b = Fixed
	default:
		return fmt.Errorf("%q: want original or fixed", s)
	}
	return nil
}

// Type names the flag's value type, "string".
func (Bottom) Type() string { return "string" }

// NSConfig fixes the shape and variant of a nondeterministic stack.
type NSConfig struct {
	// States and Symbols are |Q| and |Γ|, both at least 1.
	States, Symbols int
	// Normalized selects NS's action weights, a softmax over each (q, x)
	// row (paper eq. 1); otherwise the weights are the exponentiated
	// scores, unnormalized (the "+U" change).
	Normalized bool
	// StateReading makes the reading a distribution over (state, symbol)
	// pairs, of size |Q||Γ| with index r·|Γ|+y (the "+S" change), rather
	// than over symbols.
	StateReading bool
	// Bottom is the bottom-symbol behaviour.
	Bottom Bottom
	// Window is D for the memory-limited stack (paper §5.1); 0 means
	// unlimited.
	Window int
	// Vector, when positive, is m, the size of the vectors that the
	// stack's elements carry beside their symbols: the vector stack of
	// the VRNS-RNN (see VRNS), whose reading is the expected top vector of
	// each (state, symbol), of size |Q||Γ|m. It is a payload of the RNS
	// variant: it needs StateReading and unnormalized weights. 0 means no
	// vectors.
	Vector int
	// BottomVector is the vector of the initial bottom symbol of a stack
	// with vectors; it must be LearnedBottom (the zero value) without.
	BottomVector BottomVector
}

// Variant returns the paper's name of the configuration: "NS", "NS+S",
// "NS+U" or "RNS" (NS+S+U), or "VRNS" with vectors.
func (c NSConfig) Variant() string {
	switch {
	case c.Vector > 0:
		return "VRNS"
	case c.Normalized && !c.StateReading:
		return "NS"
	case c.Normalized:
		return "NS+S"
	case !c.StateReading:
		return "NS+U"
	}
	return "RNS"
}

// kernel is the dynamic program's configuration, whose readings are the
// vectors' where there are vectors.
func (c NSConfig) kernel() nskernel.Config {
	k := nskernel.Config{States: c.States, Symbols: c.Symbols, Fixed: c.Bottom == Fixed, Window: c.Window}
	if c.Vector > 0 {
		k.Vector = c.Vector
	} else {
		k.StateReading = c.StateReading
	}
	return k
}

// Validate reports an impossible configuration.
func (c NSConfig) Validate() error {
	if c.Bottom != Original && c.Bottom != Fixed {
		return fmt.Errorf("stacks: unknown bottom behaviour %d", c.Bottom)
	}
	if c.BottomVector < LearnedBottom || c.BottomVector > OneBottom {
		return fmt.Errorf("stacks: unknown bottom vector %d", c.BottomVector)
	}
	switch {
	case c.Vector < 0:
		return fmt.Errorf("stacks: a negative vector size %d", c.Vector)
	case c.Vector > 0 && (c.Normalized || !c.StateReading):
		return fmt.Errorf("stacks: vectors (Vector %d) are a payload of the RNS variant, not of %s: they need StateReading and unnormalized weights", c.Vector, c.withoutVectors().Variant())
	case c.Vector == 0 && c.BottomVector != LearnedBottom:
		return fmt.Errorf("stacks: a %v bottom vector for a stack without vectors", c.BottomVector)
	}
	if err := c.kernel().Validate(); err != nil {
		if c.Vector > 0 {
			return fmt.Errorf("stacks: VRNS: %w", err)
		}
		return err
	}
	return nil
}

// withoutVectors is c without its vectors.
func (c NSConfig) withoutVectors() NSConfig {
	c.Vector, c.BottomVector = 0, LearnedBottom
	return c
}

// NumActions is the number of action scores per step,
// |Q||Γ|(2|Q||Γ|+|Q|).
func (c NSConfig) NumActions() int { return c.kernel().NumActions() }

// ReadingSize is |Γ|, or |Q||Γ| with StateReading, or |Q||Γ|m with
// vectors.
func (c NSConfig) ReadingSize() int { return c.kernel().ReadingSize() }

// NumParams is the number of scalar parameters of the stack reading
// hidden states of size hidden: (hidden+1)·NumActions for the Actions
// layer and, with vectors, (hidden+1)·m for the vector layer and m for a
// learned bottom vector.
func (c NSConfig) NumParams(hidden int) int {
	n := (hidden + 1) * c.NumActions()
	if c.Vector > 0 {
		n += (hidden + 1) * c.Vector
		if c.BottomVector == LearnedBottom {
			n += c.Vector
		}
	}
	return n
}

// NS is the nondeterministic stack with its Actions layer
// Actions(h) = W_a h + b_a, of shape NumActions × hidden (see the package
// documentation for the action layout): NS, NS+S, NS+U and RNS, and, with
// vectors (NSConfig.Vector), the vector stack VRNS, which adds the vector
// layer σ(W_v h + b_v) and the bottom vector.
type NS struct {
	cfg    NSConfig
	hidden int
	w, b   *param.Param
	// wv and bv are the vector layer's (nil without vectors), w0 the
	// learned bottom vector (nil unless learned).
	wv, bv, w0 *param.Param
	name       string
	// scores marks a stack without an Actions layer, whose steps take
	// the action scores themselves (NewNSScores).
	scores bool
	// pool holds the scratch tapes, one per batch size, over shared
	// sequences (nskernel.Pool). A tape is workspace for the forward and
	// backward pass of one run: everything a run leaves behind (its final
	// state, its action weights) is copied out of it into the instance,
	// so graphs bound to one stack may share it as long as they do not run
	// concurrently (see Replicator).
	pool *nskernel.Pool
	// threads bounds the goroutines of a run (< 1: GOMAXPROCS; see
	// Replicator).
	threads int
	// spare is a recycled state (Recycle) whose memory the next final
	// state of a carrying run is written into; nil for none.
	spare *nsState
}

// Recycle implements Recycler.
func (s *NS) Recycle(st State) {
	if ns, ok := st.(*nsState); ok && ns.k.Config() == s.cfg.kernel() && ns.bottom == s.cfg.BottomVector {
		s.spare = ns
	}
}

// takeSpare returns the recycled state, if any, for a batch of the given
// size, and forgets it.
func (s *NS) takeSpare(batch int) *nsState {
	sp := s.spare
	s.spare = nil
	if sp == nil || sp.Batch() != batch {
		return nil
	}
	return sp
}

// tape returns the scratch tape for the batch size with room for at least
// steps steps, and for a carried state if carried.
func (s *NS) tape(batch, steps int, carried bool) *nskernel.Tape {
	if s.pool == nil {
		s.pool = nskernel.NewPool(s.cfg.kernel())
	}
	t := s.pool.TapeFrom(batch, steps, carried)
	if s.threads > 0 {
		t.SetThreads(s.threads)
	}
	return t
}

// NewNS returns a nondeterministic stack whose actions (and, with
// vectors, pushed vectors) are computed from hidden states of size
// hidden. Its parameters are named name+".W_a" and name+".b_a" (the
// Actions layer, NumActions × hidden) and, with vectors, name+".W_v",
// ".b_v" (the vector layer, m × hidden) and, for a learned bottom vector,
// ".w_0" (size m); Init draws them as its documentation says.
func NewNS(name string, hidden int, cfg NSConfig) (*NS, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if hidden < 1 {
		return nil, fmt.Errorf("stacks: %s needs a hidden size of at least 1, got %d", cfg.Variant(), hidden)
	}
	a, m := cfg.NumActions(), cfg.Vector
	if err := checkParams(name, (float64(a)+float64(m))*float64(hidden+1)+float64(m)); err != nil {
		return nil, err
	}
	s := &NS{
		cfg: cfg, hidden: hidden, name: name,
		w: param.New(name+".W_a", a, hidden),
		b: param.New(name+".b_a", a),
	}
	if m > 0 {
		s.wv, s.bv = param.New(name+".W_v", m, hidden), param.New(name+".b_v", m)
		if cfg.BottomVector == LearnedBottom {
			s.w0 = param.New(name+".w_0", m)
		}
	}
	return s, nil
}

// NewNSScores returns a nondeterministic stack without an Actions layer:
// the node given to each Step of its instances holds the (batch,
// NumActions) action scores themselves, in the layout of the package
// documentation. For the normalized variants (NS, NS+S) the stack takes a
// log-softmax over each (q, x) row of the scores; for the unnormalized
// ones the scores are the log-weights. It has no parameters, and no
// vectors. Use it to put the stack into a graph of your own, where
// something other than an affine layer of a hidden state computes the
// actions.
func NewNSScores(name string, cfg NSConfig) (*NS, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Vector > 0 {
		return nil, fmt.Errorf("stacks: a stack that takes its action scores has no vector layer (Vector %d)", cfg.Vector)
	}
	return &NS{cfg: cfg, hidden: cfg.NumActions(), name: name, scores: true}, nil
}

// Config returns the stack's configuration.
func (s *NS) Config() NSConfig { return s.cfg }

// Hidden is the size of the hidden states the actions are computed from
// (NumActions for a stack made by NewNSScores).
func (s *NS) Hidden() int { return s.hidden }

// ReadingSize implements Layer.
func (s *NS) ReadingSize() int { return s.cfg.ReadingSize() }

// vector reports whether the stack's elements carry vectors.
func (s *NS) vector() bool { return s.cfg.Vector > 0 }

// Params implements Layer: W_a and b_a (none for a stack made by
// NewNSScores), then, with vectors, W_v, b_v and, for a learned bottom
// vector, w_0.
func (s *NS) Params() []*param.Param {
	if s.scores {
		return nil
	}
	ps := []*param.Param{s.w, s.b}
	if s.vector() {
		ps = append(ps, s.wv, s.bv)
	}
	if s.w0 != nil {
		ps = append(ps, s.w0)
	}
	return ps
}

// Init implements Layer: W_a and b_a by the scheme's Recurrent rule, W_v
// and b_v by its Affine rule, and w_0 by the Recurrent rule for biases.
//
// rng is a *rand.Rand of math/rand/v2, e.g. rand.New(rand.NewPCG(seed, 0)).
func (s *NS) Init(sc param.Scheme, rng *rand.Rand) {
	if s.scores {
		return
	}
	r := sc.Recurrent()
	r.InitWeight(s.w, rng)
	r.InitBias(s.b, rng)
	if s.vector() {
		a := sc.Affine()
		a.InitWeight(s.wv, rng)
		a.InitBias(s.bv, rng)
	}
	if s.w0 != nil {
		r.InitBias(s.w0, rng)
	}
}

// Carryable implements Layer: only the memory-limited stack can carry its
// state.
func (s *NS) Carryable() error {
	if s.cfg.Window == 0 {
		return fmt.Errorf("stacks: the unlimited %s stack keeps every column of its dynamic program; only the memory-limited stack (a window D ≥ 1) can carry its state: %w", s.cfg.Variant(), ErrNoCarry)
	}
	return nil
}

// Replica implements Replicator: a NS sharing the parameters of s, with
// its own scratch tapes.
func (s *NS) Replica(threads int) Layer {
	c := *s
	c.pool = nil
	c.threads = threads
	c.spare = nil
	return &c
}

var graphIDs atomic.Uint64

// MaxTapeBytes is the most memory the dynamic program of one bound NS or
// VRNS stack, or the tape of one bound JM stack, may take; Bind and
// NewRunner refuse larger batches, lengths (and JM depth limits) with an
// error rather than exhausting the machine's memory. Their CheckSize
// (Sizer) says beforehand whether a run's tape fits.
const MaxTapeBytes = 8 << 30

// windowAdvice ends the message of a tape over MaxTapeBytes: the window
// to use, or to narrow.
func windowAdvice(window int) string {
	if window > 0 {
		return "narrow the window"
	}
	return "use a window"
}

// CheckSize implements Sizer.
func (s *NS) CheckSize(batch, steps int, carry bool) error {
	c := s.cfg
	if batch < 1 || steps < 0 {
		return fmt.Errorf("stacks: %s size check with batch %d, steps %d", c.Variant(), batch, steps)
	}
	if b := nskernel.TapeBytesFrom(c.kernel(), batch, max(steps, 1), carry); b > MaxTapeBytes {
		vectors, sizes := "", "the states or symbols"
		if s.vector() {
			vectors, sizes = fmt.Sprintf(", vectors of %d", c.Vector), "the states, symbols or vector size"
		}
		return fmt.Errorf("stacks: the %s stack's dynamic program for batch %d over %d steps (|Q| = %d, |Γ| = %d%s, window %d) would take %.3g GiB, more than the limit of %d GiB: reduce the batch, the length, %s, or %s",
			c.Variant(), batch, steps, c.States, c.Symbols, vectors, c.Window, b/(1<<30), MaxTapeBytes>>30, sizes, windowAdvice(c.Window))
	}
	return nil
}

// Bind implements Layer. Each Step adds one node, which takes r_{t−1} as
// an input that only orders the backward passes and the binding's anchor;
// the parameters' gradients are added into the binding. For a learned
// bottom vector, Initial is a node too, whose backward pass adds the
// gradient of w_0 through r_0.
func (s *NS) Bind(pb *param.Binding, batch, steps int, carry bool) (Instance, error) {
	if batch < 1 || steps < 0 {
		return nil, fmt.Errorf("stacks: %s bind with batch %d, steps %d", s.cfg.Variant(), batch, steps)
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
	id := graphIDs.Add(1)
	rs, a, m := s.ReadingSize(), s.cfg.NumActions(), s.cfg.Vector
	in := &nsInstance{
		s: s, pb: pb, batch: batch, id: id, steps: max(steps, 1), carry: carry,
		logits:      make([][]float64, steps+1),
		logw:        make([][]float64, steps+1),
		gLogw:       make([]float64, batch*a),
		gLogits:     make([]float64, batch*a),
		zeroReading: make([]float64, batch*rs),
	}
	if s.vector() {
		in.vecs = make([][]float64, steps+1)
		in.gVec, in.gBottom, in.bottom = make([]float64, batch*m), make([]float64, m), make([]float64, m)
	}
	for _, p := range s.Params() {
		in.params = append(in.params, pb.Node(p))
	}
	if !s.scores {
		in.anchor = pb.Anchor()
	}
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
func (s *NS) UnmarshalState(data []byte) (State, error) {
	if err := s.Carryable(); err != nil {
		return nil, err
	}
	what := "NS"
	if s.vector() {
		what = "VRNS"
		if len(data) < len(vrnsStateMagic)+16 || string(data[:len(vrnsStateMagic)]) != vrnsStateMagic {
			return nil, fmt.Errorf("%w: not a VRNS state", errCarried)
		}
		data = data[len(vrnsStateMagic):]
		if bv := BottomVector(binary.LittleEndian.Uint64(data)); bv != s.cfg.BottomVector {
			return nil, fmt.Errorf("stacks: VRNS state of another configuration (a %v bottom vector, not %+v)", bv, s.cfg)
		}
		data = data[8:]
	}
	r, k, err := decodeCarried(data, s.cfg.kernel(), s.ReadingSize(), what)
	if err != nil {
		return nil, err
	}
	return &nsState{k: k, reading: r, bottom: s.cfg.BottomVector}, nil
}

// nsState is the carried state of a memory-limited nondeterministic
// stack: the kernel's columns (with their vectors) and the last reading,
// r_0 of the next run.
type nsState struct {
	k       *nskernel.State
	reading []float64
	// bottom is a vector stack's bottom vector, which its encoding names.
	bottom BottomVector
}

// Batch implements State.
func (s *nsState) Batch() int { return s.k.Batch() }

// MarshalBinary implements State: exact. A vector stack's encoding starts
// with a header of its own (see carried.go).
func (s *nsState) MarshalBinary() ([]byte, error) {
	var header []byte
	if s.k.Config().Vector > 0 {
		header = binary.LittleEndian.AppendUint64(append(header, vrnsStateMagic...), uint64(s.bottom))
	}
	return appendCarried(header, s.reading, s.k)
}

// nsInstance is a nondeterministic stack bound to one graph.
type nsInstance struct {
	s     *NS
	pb    *param.Binding
	batch int
	id    uint64
	steps int
	carry bool
	// t is the stack's scratch tape for the batch size (NS.tape), taken
	// at step 1; its memory is the stack's pool's.
	t *nskernel.Tape
	// params are the nodes of s.Params(), in order; anchor the binding's
	// (nil for a stack that takes its scores).
	params        []*G.Node
	anchor        *G.Node
	r0            *G.Node
	prev          *G.Node // the latest reading node, r_{t−1} of the next step
	start, latest *nsState
	// logits[t] and logw[t] keep the affine scores and log-weights of
	// step t between the forward and backward passes, vecs[t] its pushed
	// vectors; bottom is v_0 of the latest run.
	logits, logw, vecs [][]float64
	bottom             []float64
	// fromStart: the latest run began from the initial stack, so that
	// v_0 is in its dynamic program and its r_0.
	fromStart bool
	// ran is the number of steps the latest run made.
	ran int
	// gLogw, gLogits, gVec and gBottom are scratch space for the backward
	// pass; zeroReading is the zero gradient of a reading the loss does
	// not use.
	gLogw, gLogits, gVec, gBottom, zeroReading []float64
	// nextBack is the step whose backward pass the tape expects next.
	nextBack int
	// added is the last step added to the graph: with carry, its forward
	// pass records the final state.
	added int
}

// tape returns the stack's scratch tape for the instance's batch size,
// which its run took at step 1 (NS.tape) and works on until its backward
// pass ends. The instance keeps none: a graph kept in a model's cache
// holds no tape memory.
func (inst *nsInstance) tape() *nskernel.Tape { return inst.t }

// setInitialReading sets the value of the node r_0, so that it can be
// read before the graph runs: the carried reading, or the initial
// stack's (all on state 0 and symbol 0, or v_0 there). For a learned
// bottom vector r_0 is the node of vrnsInitial, which recomputes it from
// w_0 when the graph runs; its value here is σ(w_0) of the current
// parameters, bound as a new tensor (the machine may own the previous
// one).
func (in *nsInstance) setInitialReading() error {
	s, rs := in.s, in.s.ReadingSize()
	var d *tensor.Dense
	if s.w0 != nil {
		d = tensor.New(tensor.WithShape(in.batch, rs), tensor.Of(tensor.Float64))
	} else {
		d = in.r0.Value().(*tensor.Dense)
	}
	r := d.Float64s()
	switch {
	case in.start != nil:
		copy(r, in.start.reading)
	case s.vector():
		v0 := make([]float64, s.cfg.Vector)
		var w0 []float64
		if s.w0 != nil {
			w0 = s.w0.Data()
		}
		s.bottomVector(v0, w0)
		for b := 0; b < in.batch; b++ {
			s.cfg.kernel().InitialVectorReading(r[b*rs:(b+1)*rs], v0)
		}
	default:
		for b := 0; b < in.batch; b++ {
			s.cfg.kernel().InitialReading(r[b*rs : (b+1)*rs])
		}
	}
	if s.w0 != nil {
		return G.UnsafeLet(in.r0, d)
	}
	return nil
}

// Initial implements Instance.
func (in *nsInstance) Initial() *G.Node { return in.r0 }

// SetState implements Instance.
func (in *nsInstance) SetState(st State) error {
	if !in.carry {
		return errNotCarrying
	}
	if st == nil {
		in.start = nil
		return in.setInitialReading()
	}
	v := in.s.cfg.Variant()
	ns, ok := st.(*nsState)
	if !ok {
		return fmt.Errorf("stacks: state of type %T given to a %s stack", st, v)
	}
	if ns.k.Config() != in.s.cfg.kernel() || ns.bottom != in.s.cfg.BottomVector || ns.Batch() != in.batch {
		return fmt.Errorf("stacks: %s state for %+v (bottom vector %v) batch %d given to a stack of %+v batch %d", v, ns.k.Config(), ns.bottom, ns.Batch(), in.s.cfg, in.batch)
	}
	in.start = ns
	return in.setInitialReading()
}

// State implements Instance.
func (in *nsInstance) State() (State, error) {
	if !in.carry {
		return nil, errNotCarrying
	}
	if in.latest == nil {
		return nil, errNoRun
	}
	return in.latest, nil
}

// Step implements Instance.
func (in *nsInstance) Step(t int, h *G.Node) (*G.Node, error) {
	if t < 1 || t >= len(in.logits) {
		return nil, fmt.Errorf("stacks: %s step %d outside 1..%d", in.s.cfg.Variant(), t, len(in.logits)-1)
	}
	a := in.s.cfg.NumActions()
	in.logits[t] = make([]float64, in.batch*a)
	if in.s.cfg.Normalized {
		in.logw[t] = make([]float64, in.batch*a)
	} else {
		in.logw[t] = in.logits[t]
	}
	if in.s.vector() {
		in.vecs[t] = make([]float64, in.batch*in.s.cfg.Vector)
	}
	args := append(append([]*G.Node{h}, in.params...), in.prev)
	if in.anchor != nil {
		args = append(args, in.anchor)
	}
	r, err := fused.Apply(&nsStep{in: in, t: t}, args...)
	if err != nil {
		return nil, err
	}
	in.prev, in.added = r, max(in.added, t)
	return r, nil
}

// nsStep is the fused kernel of one stack update: r_t from h_t through
// the Actions layer, the optional normalization, the vector layer (with
// vectors) and the dynamic program's column t. Its inputs are h_t, the
// parameters (not differentiated by gorgonia: the backward pass adds
// their gradients into the binding), r_{t−1} (which only orders the
// steps' backward passes, which the tape's adjoints need, even in a graph
// where r_{t−1} does not feed h_t; its gradient is zero) and the
// binding's anchor, which makes gorgonia run the backward pass. A stack
// that takes its scores has inputs h_t (the scores) and r_{t−1} only.
type nsStep struct {
	in *nsInstance
	t  int
}

func (k *nsStep) Name() string { return fmt.Sprintf("%s_step%d", k.in.s.cfg.Variant(), k.t) }

func (k *nsStep) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "ns:%d:%d:%d:%+v", k.in.id, k.t, k.in.s.hidden, k.in.s.cfg)
}

// Differentiable implements fused.Constant: h, r_{t−1} and the anchor.
func (k *nsStep) Differentiable(i int) bool { return i == 0 || i > len(k.in.params) }

func (k *nsStep) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	s, B := k.in.s, k.in.batch
	what := "h"
	if s.scores {
		what = "the action scores"
	}
	want := []tensor.Shape{{B, s.hidden}}
	for _, p := range s.Params() {
		want = append(want, p.Value.Shape())
	}
	want = append(want, tensor.Shape{B, s.ReadingSize()})
	if k.in.anchor != nil {
		want = append(want, tensor.Shape{})
	}
	if len(in) != len(want) {
		return nil, fmt.Errorf("got %d inputs, want %d", len(in), len(want))
	}
	for i := range want {
		if !in[i].Eq(want[i]) {
			if i == 0 {
				return nil, fmt.Errorf("want %s of shape %v, got %v", what, want[0], in[0])
			}
			return nil, fmt.Errorf("input %d has shape %v, want %v", i, in[i], want[i])
		}
	}
	return tensor.Shape{B, s.ReadingSize()}, nil
}

func (k *nsStep) Forward(out []float64, in [][]float64) {
	inst, s := k.in, k.in.s
	cfg := s.cfg
	B, H, a := inst.batch, s.hidden, cfg.NumActions()
	if k.t == 1 {
		var start *nskernel.State
		if inst.start != nil {
			start = inst.start.k
		}
		inst.t = s.tape(B, inst.steps, start != nil)
		var err error
		if s.vector() {
			if start == nil {
				var w0 []float64
				if s.w0 != nil {
					w0 = in[5]
				}
				s.bottomVector(inst.bottom, w0)
			}
			inst.fromStart = start == nil
			err = inst.tape().BeginVector(start, inst.bottom)
		} else {
			err = inst.tape().Begin(start)
		}
		if err != nil {
			panic(err) // SetState checked the state's configuration and batch
		}
	}
	if s.scores {
		copy(inst.logits[k.t], in[0])
	} else {
		linalg.Affine(inst.logits[k.t], in[0], in[1], in[2], B, H, a)
	}
	if cfg.Normalized {
		nskernel.LogSoftmaxRows(inst.logw[k.t], inst.logits[k.t], cfg.kernel(), B)
	}
	if s.vector() {
		v := inst.vecs[k.t]
		linalg.Affine(v, in[0], in[3], in[4], B, H, cfg.Vector)
		for i, x := range v {
			v[i] = sigmoid(x)
		}
		inst.tape().StepVector(inst.logw[k.t], v, out)
	} else {
		inst.tape().Step(inst.logw[k.t], out)
	}
	inst.ran, inst.nextBack = k.t, k.t
	if inst.carry && k.t == inst.added {
		// The final state goes into the memory of a recycled one when
		// there is one, as a new value otherwise.
		st := s.takeSpare(B)
		if st == nil {
			st = &nsState{}
		}
		st.k = inst.tape().StateInto(st.k)
		st.reading = append(st.reading[:0], out...)
		st.bottom = cfg.BottomVector
		inst.latest = st
	}
}

func (k *nsStep) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {
	inst, s := k.in, k.in.s
	cfg := s.cfg
	B, H, a := inst.batch, s.hidden, cfg.NumActions()
	gLogw := inst.gLogw
	back := func(t int, gr []float64) { inst.tape().Backward(t, gr, gLogw) }
	if s.vector() {
		clear(inst.gBottom)
		back = func(t int, gr []float64) { inst.tape().BackwardVector(t, gr, gLogw, inst.gVec, inst.gBottom) }
	}
	// Steps after k.t whose readings the loss does not use get no backward
	// node from gorgonia; the tape still needs them, with zero gradient
	// (their parameters' gradients are zero).
	for t := inst.nextBack; t > k.t; t-- {
		back(t, inst.zeroReading)
	}
	inst.nextBack = k.t - 1
	back(k.t, gradOut)
	gLogits := gLogw
	if cfg.Normalized {
		gLogits = inst.gLogits
		clear(gLogits)
		nskernel.LogSoftmaxRowsBackward(gLogits, gLogw, inst.logw[k.t], cfg.kernel(), B)
	}
	if s.scores {
		for i, g := range gLogits {
			gradIn[0][i] += g
		}
		return
	}
	pb := inst.pb
	linalg.AffineBackward(gradIn[0], pb.Grad(s.w), pb.Grad(s.b), gLogits, in[0], in[1], B, H, a)
	if !s.vector() {
		return
	}
	gVec, v := inst.gVec, inst.vecs[k.t]
	for i, x := range v {
		gVec[i] *= x * (1 - x)
	}
	linalg.AffineBackward(gradIn[0], pb.Grad(s.wv), pb.Grad(s.bv), gVec, in[0], in[3], B, H, cfg.Vector)
	if k.t == 1 && s.w0 != nil && inst.fromStart {
		addSigmoidGrad(pb.Grad(s.w0), inst.gBottom, inst.bottom)
	}
}

// Run runs the stack directly on given action log-weights, without a graph:
// logWeights[t-1] holds step t's (batch, NumActions) log-weights, row-major
// (already normalized for NS: Run does not normalize). It returns the
// readings r_1 … r_n, each (batch, ReadingSize). It is meant for analysis
// and tests.
func Run(cfg NSConfig, batch int, logWeights [][]float64) ([][]float64, error) {
	if err := checkLogWeights(cfg, batch, logWeights); err != nil {
		return nil, err
	}
	tape := nskernel.NewTape(cfg.kernel(), batch, max(len(logWeights), 1))
	if err := tape.Begin(nil); err != nil {
		return nil, err
	}
	out := make([][]float64, len(logWeights))
	for t, lw := range logWeights {
		out[t] = make([]float64, batch*cfg.ReadingSize())
		tape.Step(lw, out[t])
	}
	return out, nil
}

// checkLogWeights validates the inputs of Run and ActionTypeWeights.
func checkLogWeights(cfg NSConfig, batch int, logWeights [][]float64) error {
	if err := cfg.Validate(); err != nil {
		return err
	}
	if batch < 1 {
		return fmt.Errorf("stacks: batch size %d < 1", batch)
	}
	a := cfg.NumActions()
	for t, lw := range logWeights {
		if len(lw) != batch*a {
			return fmt.Errorf("stacks: step %d has %d log-weights, want %d", t+1, len(lw), batch*a)
		}
		for i, v := range lw {
			if math.IsNaN(v) || math.IsInf(v, 1) {
				return fmt.Errorf("stacks: step %d log-weight %d is %g", t+1, i, v)
			}
		}
	}
	return nil
}

// Action types of the nondeterministic stack, indexing the weights that
// ActionTypeWeights returns.
const (
	Push = iota
	Replace
	Pop
)

// ActionRecorder is implemented by stack instances that record the action
// log-weights of their latest run (the NS stacks).
type ActionRecorder interface {
	// ActionLogWeights returns the action log-weights of the latest run's
	// steps in the layout of Run's input: out[t−1] holds step t's (batch,
	// NumActions) log-weights (after normalization for NS). The slices
	// are copies.
	ActionLogWeights() ([][]float64, error)
}

// ActionLogWeights implements ActionRecorder.
func (in *nsInstance) ActionLogWeights() ([][]float64, error) {
	if in.ran == 0 {
		return nil, errNoRun
	}
	out := make([][]float64, in.ran)
	for t := range out {
		out[t] = append([]float64(nil), in.logw[t+1]...)
	}
	return out, nil
}

// ActionTypeWeights returns, for each sequence b of a batch run from the
// initial stack on the given action log-weights (the input of Run), and
// each stack update t = 1 … T, the weight of each action type (Push,
// Replace, Pop) normalized by the weight of all actions at step t:
//
//	out[b][t−1][k] = Σ_{q,x} α̂[t−1][q,x] Σ_{δ of type k} Δ[t][q,x→δ]
//	                 / Σ_{q,x} α̂[t−1][q,x] Σ_δ Δ[t][q,x→δ]
//
// where α̂ is the normalized forward weight of each (state, top symbol)
// configuration. This is the quantity of the paper's Figure 3. It works for
// every variant: α̂ is computed by the dynamic program whatever the
// stack's own reading. A step at which no run of the stack has a positive
// weight (every log-weight −Inf, say) has the weights 0, 0, 0.
func ActionTypeWeights(cfg NSConfig, batch int, logWeights [][]float64) ([][][3]float64, error) {
	if err := checkLogWeights(cfg, batch, logWeights); err != nil {
		return nil, err
	}
	full := cfg
	full.StateReading = true
	alphas, err := Run(full, batch, logWeights)
	if err != nil {
		return nil, err
	}
	qg := cfg.States * cfg.Symbols
	row := 2*qg + cfg.States
	a := cfg.NumActions()
	r0 := make([]float64, qg)
	full.kernel().InitialReading(r0)
	out := make([][][3]float64, batch)
	for b := range out {
		prev := r0
		for t := 1; t <= len(logWeights); t++ {
			var w [3]float64
			logw := logWeights[t-1][b*a : (b+1)*a]
			mx := math.Inf(-1)
			for _, v := range logw {
				mx = max(mx, v)
			}
			for c := 0; c < qg && mx > math.Inf(-1); c++ {
				if prev[c] == 0 {
					continue
				}
				// Shift by the maximum: unnormalized weights may be large.
				for j := 0; j < row; j++ {
					k := Push
					if j >= 2*qg {
						k = Pop
					} else if j >= qg {
						k = Replace
					}
					w[k] += prev[c] * math.Exp(logw[c*row+j]-mx)
				}
			}
			total := w[0] + w[1] + w[2]
			if total > 0 {
				for k := range w {
					w[k] /= total
				}
			}
			out[b] = append(out[b], w)
			prev = alphas[t-1][b*qg : (b+1)*qg]
		}
	}
	return out, nil
}

// NSLogState is the carried state of a memory-limited nondeterministic
// stack in log space: the form in which another implementation of its
// dynamic program (nsrnn's GPU engine) takes it and hands it back.
type NSLogState struct {
	// Positions is the number of carried positions, at most the window.
	Positions int
	// LogAlpha[b] holds log α of sequence b's carried positions, oldest
	// first (Positions·|Q||Γ| values, index r·|Γ|+y for state r and top
	// symbol y); LogGamma[b] log γ of its blocks (a, c) between carried
	// positions a < c, ordered by a then c (|Q||Γ|·|Q||Γ| values each, row
	// q·|Γ|+x, column r·|Γ|+y). With the fixed bottom the positions are
	// those of the package documentation's extra row.
	LogAlpha, LogGamma [][]float64
	// Reading is the last reading, batch rows of ReadingSize: r_0 of the
	// next run.
	Reading []float64
	// Vectors, for a VRNS stack, holds per sequence the vectors of the
	// elements pushed by the steps that made carried positions 1 …
	// Positions−1, (Positions−1)·m values (with the fixed bottom, that of
	// position 1 is the bottom vector); nil for the NS stacks.
	Vectors [][]float64
}

// LogState returns a carried state of s (from a stream's run) in log
// space, with its vectors where it has them.
func (s *NS) LogState(st State) (*NSLogState, error) {
	v := s.cfg.Variant()
	ns, ok := st.(*nsState)
	if !ok {
		return nil, fmt.Errorf("stacks: state of type %T given to a %s stack", st, v)
	}
	if ns.k.Config() != s.cfg.kernel() || ns.bottom != s.cfg.BottomVector {
		return nil, fmt.Errorf("stacks: %s state of another configuration (%+v, bottom vector %v, not %+v)", v, ns.k.Config(), ns.bottom, s.cfg)
	}
	la, lg := ns.k.LogValues()
	return &NSLogState{Positions: ns.k.Positions(), LogAlpha: la, LogGamma: lg, Vectors: ns.k.Vectors(), Reading: append([]float64(nil), ns.reading...)}, nil
}

// StateFromLog returns the carried state of s with the given log weights
// (and vectors), which a run of s continues as it would the state they
// were read from. It is an error for an unlimited stack, or for weights,
// vectors or a reading of the wrong sizes.
func (s *NS) StateFromLog(ls *NSLogState) (State, error) {
	if err := s.Carryable(); err != nil {
		return nil, err
	}
	batch := len(ls.LogAlpha)
	if batch < 1 || len(ls.Reading) != batch*s.ReadingSize() {
		return nil, fmt.Errorf("stacks: a %s state of %d sequences with a reading of %d values (want %d)", s.cfg.Variant(), batch, len(ls.Reading), batch*s.ReadingSize())
	}
	var vectors [][]float64
	if s.vector() {
		vectors = ls.Vectors
	}
	k, err := nskernel.StateFromLog(s.cfg.kernel(), batch, ls.Positions, ls.LogAlpha, ls.LogGamma, vectors)
	if err != nil {
		return nil, fmt.Errorf("stacks: %w", err)
	}
	return &nsState{k: k, reading: append([]float64(nil), ls.Reading...), bottom: s.cfg.BottomVector}, nil
}
