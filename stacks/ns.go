package stacks

import (
	"fmt"
	"hash"
	"math"
	"math/rand/v2"
	"sync/atomic"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/internal/fused"
	"github.com/nsrnn/nsrnn/internal/linalg"
	"github.com/nsrnn/nsrnn/internal/param"
	"github.com/nsrnn/nsrnn/stacks/internal/nskernel"
)

// Bottom selects how the initial bottom symbol of the nondeterministic
// stack behaves (DESIGN §3.1).
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
}

// Variant returns the paper's name of the configuration: "NS", "NS+S",
// "NS+U" or "RNS" (NS+S+U).
func (c NSConfig) Variant() string {
	switch {
	case c.Normalized && !c.StateReading:
		return "NS"
	case c.Normalized:
		return "NS+S"
	case !c.StateReading:
		return "NS+U"
	}
	return "RNS"
}

func (c NSConfig) kernel() nskernel.Config {
	return nskernel.Config{States: c.States, Symbols: c.Symbols, Fixed: c.Bottom == Fixed, StateReading: c.StateReading, Window: c.Window}
}

// Validate reports an impossible configuration.
func (c NSConfig) Validate() error {
	if c.Bottom != Original && c.Bottom != Fixed {
		return fmt.Errorf("stacks: unknown bottom behaviour %d", c.Bottom)
	}
	return c.kernel().Validate()
}

// NumActions is the number of action scores per step,
// |Q||Γ|(2|Q||Γ|+|Q|).
func (c NSConfig) NumActions() int { return c.kernel().NumActions() }

// ReadingSize is |Γ|, or |Q||Γ| with StateReading.
func (c NSConfig) ReadingSize() int { return c.kernel().ReadingSize() }

// NS is the nondeterministic stack with its Actions layer
// Actions(h) = W_a h + b_a, of shape NumActions × hidden (DESIGN §3.2).
type NS struct {
	cfg    NSConfig
	hidden int
	// Scheme initializes W_a and b_a; the CFL experiments use uniform
	// ±0.1, the PTB experiments ±0.05.
	Scheme param.Scheme
	w, b   *param.Param
	name   string
	// scores marks a stack without an Actions layer, whose steps take
	// the action scores themselves (NewNSScores).
	scores bool
	// tapes holds one tape per batch size, shared by every graph bound
	// to this stack (graphs of one model never run concurrently).
	tapes map[int]*nskernel.Tape
}

// tape returns the shared tape for the batch size with room for at least
// steps steps.
func (s *NS) tape(batch, steps int) *nskernel.Tape {
	if s.tapes == nil {
		s.tapes = map[int]*nskernel.Tape{}
	}
	t := s.tapes[batch]
	if t == nil || t.MaxSteps() < steps {
		t = nskernel.NewTape(s.cfg.kernel(), batch, steps)
		s.tapes[batch] = t
	}
	return t
}

// NewNS returns a nondeterministic stack whose actions are computed from
// hidden states of size hidden. Its parameters are named name+".W_a" and
// name+".b_a" and initialized uniformly in ±0.1 by Init unless Scheme is
// changed.
func NewNS(name string, hidden int, cfg NSConfig) (*NS, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if hidden < 1 {
		return nil, fmt.Errorf("stacks: NS needs a hidden size of at least 1, got %d", hidden)
	}
	a := cfg.NumActions()
	return &NS{
		cfg: cfg, hidden: hidden, Scheme: param.Scheme{Uniform: 0.1}, name: name,
		w: param.New(name+".W_a", a, hidden),
		b: param.New(name+".b_a", a),
	}, nil
}

// NewNSScores returns a nondeterministic stack without an Actions layer:
// the node given to each Step of its instances holds the (batch,
// NumActions) action scores themselves, in the layout of DESIGN §3.2. For
// the normalized variants (NS, NS+S) the stack takes a log-softmax over
// each (q, x) row of the scores; for the unnormalized ones the scores are
// the log-weights. It has no parameters. Use it to put the stack into a
// graph of your own, where something other than an affine layer of a
// hidden state computes the actions.
func NewNSScores(name string, cfg NSConfig) (*NS, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &NS{cfg: cfg, hidden: cfg.NumActions(), name: name, scores: true}, nil
}

// Config returns the stack's configuration.
func (s *NS) Config() NSConfig { return s.cfg }

// ReadingSize implements Layer.
func (s *NS) ReadingSize() int { return s.cfg.ReadingSize() }

// Params implements Layer: W_a and b_a (none for a stack made by
// NewNSScores).
func (s *NS) Params() []*param.Param {
	if s.scores {
		return nil
	}
	return []*param.Param{s.w, s.b}
}

// Init implements Layer.
func (s *NS) Init(rng *rand.Rand) {
	if s.scores {
		return
	}
	s.Scheme.InitWeight(s.w, rng)
	s.Scheme.InitBias(s.b, rng)
}

var graphIDs atomic.Uint64

// Bind implements Layer. The instance uses a tape for γ, α and their
// adjoints sized for batch sequences of steps stack updates; the tape is
// shared with the other graphs bound to s for the same batch size, so the
// graphs of one stack must not run concurrently.
func (s *NS) Bind(g *G.ExprGraph, batch, steps int) (Instance, error) {
	if batch < 1 || steps < 0 {
		return nil, fmt.Errorf("stacks: NS bind with batch %d, steps %d", batch, steps)
	}
	id := graphIDs.Add(1)
	in := &nsInstance{
		s: s, batch: batch, id: id, steps: max(steps, 1),
		initial:     tensor.New(tensor.WithShape(batch, s.ReadingSize()), tensor.Of(tensor.Float64)),
		logits:      make([][]float64, steps+1),
		logw:        make([][]float64, steps+1),
		readings:    make([][]float64, steps+1),
		lastReading: make([]float64, batch*s.ReadingSize()),
		gLogw:       make([]float64, batch*s.cfg.NumActions()),
		gLogits:     make([]float64, batch*s.cfg.NumActions()),
		zeroReading: make([]float64, batch*s.ReadingSize()),
	}
	r0 := make([]float64, s.ReadingSize())
	s.cfg.kernel().InitialReading(r0)
	for i := 0; i < batch; i++ {
		copy(in.initial.Float64s()[i*len(r0):], r0)
	}
	if !s.scores {
		in.w, in.b = s.w.Node(g), s.b.Node(g)
	}
	in.r0 = G.NewMatrix(g, tensor.Float64, G.WithShape(batch, s.ReadingSize()),
		G.WithName(fmt.Sprintf("%s.r0#%d", s.name, id)), G.WithValue(in.initial))
	in.prev = in.r0
	return in, nil
}

// nsInstance is an NS stack bound to one graph.
type nsInstance struct {
	s     *NS
	batch int
	id    uint64
	steps int
	// tape is taken from the stack's shared tapes when step 1 runs.
	tape    *nskernel.Tape
	w, b    *G.Node
	r0      *G.Node
	prev    *G.Node // the latest reading node, r_{t−1} of the next step
	initial *tensor.Dense
	// carried is the state the next run starts from (memory-limited
	// stacks only); nil means the initial configuration.
	carried *nskernel.State
	// logits[t] and logw[t] keep the affine scores and log-weights of
	// step t between the forward and backward passes.
	logits, logw [][]float64
	// lastReading is the reading of the latest step run; readings[t] is
	// r_t of the latest run and ran the number of steps it made.
	lastReading []float64
	readings    [][]float64
	ran         int
	// gLogw and gLogits are scratch space for the backward pass;
	// zeroReading is the zero gradient of a reading the loss does not use.
	gLogw, gLogits, zeroReading []float64
	// nextBack is the step whose backward pass the tape expects next.
	nextBack int
}

func (in *nsInstance) Initial() *G.Node { return in.r0 }

func (in *nsInstance) Step(t int, h *G.Node) (*G.Node, error) {
	if t < 1 || t >= len(in.logits) {
		return nil, fmt.Errorf("stacks: NS step %d outside 1..%d", t, len(in.logits)-1)
	}
	a := in.s.cfg.NumActions()
	in.logits[t] = make([]float64, in.batch*a)
	in.readings[t] = make([]float64, in.batch*in.s.ReadingSize())
	if in.s.cfg.Normalized {
		in.logw[t] = make([]float64, in.batch*a)
	} else {
		in.logw[t] = in.logits[t]
	}
	args := []*G.Node{h, in.w, in.b, in.prev}
	if in.s.scores {
		args = []*G.Node{h, in.prev}
	}
	r, err := fused.Apply(&nsStep{in: in, t: t}, args...)
	if err != nil {
		return nil, err
	}
	in.prev = r
	return r, nil
}

// nsStep is the fused kernel of one stack update: r_t from h_t, W_a and
// b_a through the actions layer, the optional normalization and the
// dynamic program's column t. Its last input, r_{t−1}, only orders the
// steps (its gradient is zero): the backward pass of step t must run after
// that of step t+1, which the tape's adjoints need, even in a graph where
// r_{t−1} does not feed h_t.
type nsStep struct {
	in *nsInstance
	t  int
}

func (k *nsStep) Name() string { return fmt.Sprintf("%s_step%d", k.in.s.cfg.Variant(), k.t) }

func (k *nsStep) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "ns:%d:%d:%+v", k.in.id, k.t, k.in.s.cfg)
}

func (k *nsStep) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	s := k.in.s
	what, n := "h", 4
	if s.scores {
		what, n = "action scores", 2
	}
	if len(in) != n || len(in[0]) != 2 || in[0][0] != k.in.batch || in[0][1] != s.hidden {
		return nil, fmt.Errorf("want %s of shape (%d, %d), got %v", what, k.in.batch, s.hidden, in)
	}
	return tensor.Shape{k.in.batch, s.ReadingSize()}, nil
}

func (k *nsStep) Forward(out []float64, in [][]float64) {
	inst, cfg := k.in, k.in.s.cfg
	a := cfg.NumActions()
	if k.t == 1 {
		inst.tape = inst.s.tape(inst.batch, inst.steps)
		if err := inst.tape.Begin(inst.carried); err != nil {
			panic(err) // the carried state was made by this tape's configuration
		}
	}
	if inst.s.scores {
		copy(inst.logits[k.t], in[0])
	} else {
		linalg.Affine(inst.logits[k.t], in[0], in[1], in[2], inst.batch, inst.s.hidden, a)
	}
	if cfg.Normalized {
		nskernel.LogSoftmaxRows(inst.logw[k.t], inst.logits[k.t], cfg.kernel(), inst.batch)
	}
	inst.tape.Step(inst.logw[k.t], out)
	copy(inst.lastReading, out)
	copy(inst.readings[k.t], out)
	inst.ran, inst.nextBack = k.t, k.t
}

func (k *nsStep) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {
	inst, cfg := k.in, k.in.s.cfg
	a := cfg.NumActions()
	gLogw := inst.gLogw
	// Steps after k.t whose readings the loss does not use get no backward
	// node from gorgonia; the tape still needs them, with zero gradient.
	for s := inst.nextBack; s > k.t; s-- {
		inst.tape.Backward(s, inst.zeroReading, gLogw)
	}
	inst.nextBack = k.t - 1
	inst.tape.Backward(k.t, gradOut, gLogw)
	gLogits := gLogw
	if cfg.Normalized {
		gLogits = inst.gLogits
		clear(gLogits)
		nskernel.LogSoftmaxRowsBackward(gLogits, gLogw, inst.logw[k.t], cfg.kernel(), inst.batch)
	}
	if inst.s.scores {
		for i, g := range gLogits {
			gradIn[0][i] += g
		}
		return
	}
	linalg.AffineBackward(gradIn[0], gradIn[1], gradIn[2], gLogits, in[0], in[1], inst.batch, inst.s.hidden, a)
}

// Carrier is implemented by stack instances whose state can be carried
// from one run of a graph to the next (truncated backpropagation through
// time with the memory-limited NS stack). The carried state is detached:
// no gradient flows into it.
type Carrier interface {
	// Carry takes the state after the last step of the latest run, so
	// that the next run continues from it.
	Carry()
	// ResetCarry makes the next run start from the initial stack.
	ResetCarry()
}

// Carry implements Carrier for memory-limited stacks. The next run's
// initial reading is the latest run's last reading. The tape is shared by
// the graphs bound to the stack for one batch size, so Carry must be called
// right after the run, before another such graph runs.
func (in *nsInstance) Carry() {
	if in.s.cfg.Window == 0 {
		panic("stacks: Carry on an unlimited NS stack")
	}
	in.carried = in.tape.State()
	// The last reading becomes r_0 of the next run.
	copy(in.initial.Float64s(), in.lastReading)
}

// ResetCarry implements Carrier.
func (in *nsInstance) ResetCarry() {
	in.carried = nil
	r0 := make([]float64, in.s.ReadingSize())
	in.s.cfg.kernel().InitialReading(r0)
	for i := 0; i < in.batch; i++ {
		copy(in.initial.Float64s()[i*len(r0):], r0)
	}
}

// Run runs the stack directly on given action log-weights, without a graph:
// logWeights[t-1] holds step t's (batch, NumActions) log-weights, row-major
// (already normalized for NS: Run does not normalize). It returns the
// readings r_1 … r_n, each (batch, ReadingSize). It is meant for analysis
// and tests.
func Run(cfg NSConfig, batch int, logWeights [][]float64) ([][]float64, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	a := cfg.NumActions()
	for t, lw := range logWeights {
		if len(lw) != batch*a {
			return nil, fmt.Errorf("stacks: step %d has %d log-weights, want %d", t+1, len(lw), batch*a)
		}
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

// Action types of the nondeterministic stack, indexing the weights that
// ActionTypeWeights returns.
const (
	Push = iota
	Replace
	Pop
)

// ActionRecorder is implemented by stack instances that can report the
// stack actions of the latest forward run.
type ActionRecorder interface {
	// ActionTypeWeights returns, for each sequence b of the batch and each
	// stack update t = 1 … T of the latest run, the weight of each action
	// type (Push, Replace, Pop) normalized by the weight of all actions at
	// step t: out[b][t−1][k] = Σ_{q,x} α̂[t−1][q,x] Σ_{δ of type k} Δ[t][q,x→δ]
	// / Σ_{q,x} α̂[t−1][q,x] Σ_δ Δ[t][q,x→δ], where α̂ is the normalized
	// forward weight of each (state, top symbol) configuration (the
	// reading of a stack with the state reading). This is the quantity of
	// the paper's Figure 3.
	ActionTypeWeights() ([][][3]float64, error)
}

// ActionTypeWeights implements ActionRecorder for NS stacks with the state
// reading (NS+S and RNS), whose readings are α̂ exactly.
func (in *nsInstance) ActionTypeWeights() ([][][3]float64, error) {
	cfg := in.s.cfg
	if !cfg.StateReading {
		return nil, fmt.Errorf("stacks: action-type weights need the state reading (NS+S or RNS), not %s", cfg.Variant())
	}
	qg := cfg.States * cfg.Symbols
	row := 2*qg + cfg.States
	a := cfg.NumActions()
	out := make([][][3]float64, in.batch)
	for b := range out {
		prev := in.initial.Float64s()[b*qg : (b+1)*qg]
		for t := 1; t <= in.ran; t++ {
			var w [3]float64
			logw := in.logw[t][b*a : (b+1)*a]
			mx := math.Inf(-1)
			for _, v := range logw {
				mx = max(mx, v)
			}
			for c := 0; c < qg; c++ {
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
			prev = in.readings[t][b*qg : (b+1)*qg]
		}
	}
	return out, nil
}
