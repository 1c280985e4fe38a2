package stacks

import (
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
// Actions(h) = W_a h + b_a, of shape NumActions × hidden (see the package
// documentation for the action layout).
type NS struct {
	cfg    NSConfig
	hidden int
	w, b   *param.Param
	name   string
	// scores marks a stack without an Actions layer, whose steps take
	// the action scores themselves (NewNSScores).
	scores bool
	// tapes holds one scratch tape per batch size. A tape is workspace
	// for the forward and backward pass of one run: everything a run
	// leaves behind (its final state, its action weights) is copied out
	// of it into the instance, so graphs bound to one stack may share it
	// as long as they do not run concurrently (see Replicator).
	tapes map[int]*nskernel.Tape
	// threads bounds the goroutines of a run (< 1: GOMAXPROCS; see
	// Replicator).
	threads int
	// spare is a recycled state (Recycle) whose memory the next final
	// state of a carrying run is written into; nil for none.
	spare *nsState
}

// Recycle implements Recycler.
func (s *NS) Recycle(st State) {
	if ns, ok := st.(*nsState); ok && ns.k.Config() == s.cfg.kernel() {
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
// steps steps.
func (s *NS) tape(batch, steps int) *nskernel.Tape {
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

// NewNS returns a nondeterministic stack whose actions are computed from
// hidden states of size hidden. Its parameters are named name+".W_a" and
// name+".b_a"; Init draws them by the scheme's Recurrent rule.
func NewNS(name string, hidden int, cfg NSConfig) (*NS, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if hidden < 1 {
		return nil, fmt.Errorf("stacks: NS needs a hidden size of at least 1, got %d", hidden)
	}
	a := cfg.NumActions()
	if err := checkParams(name, float64(a)*float64(hidden+1)); err != nil {
		return nil, err
	}
	return &NS{
		cfg: cfg, hidden: hidden, name: name,
		w: param.New(name+".W_a", a, hidden),
		b: param.New(name+".b_a", a),
	}, nil
}

// NewNSScores returns a nondeterministic stack without an Actions layer:
// the node given to each Step of its instances holds the (batch,
// NumActions) action scores themselves, in the layout of the package
// documentation. For the normalized variants (NS, NS+S) the stack takes a
// log-softmax over each (q, x) row of the scores; for the unnormalized
// ones the scores are the log-weights. It has no parameters. Use it to put
// the stack into a graph of your own, where something other than an affine
// layer of a hidden state computes the actions.
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

// Init implements Layer: W_a and b_a by the scheme's Recurrent rule.
//
// rng is a *rand.Rand of math/rand/v2, e.g. rand.New(rand.NewPCG(seed, 0)).
func (s *NS) Init(sc param.Scheme, rng *rand.Rand) {
	if s.scores {
		return
	}
	r := sc.Recurrent()
	r.InitWeight(s.w, rng)
	r.InitBias(s.b, rng)
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
	c.tapes = nil
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
	if batch < 1 || steps < 0 {
		return fmt.Errorf("stacks: NS size check with batch %d, steps %d", batch, steps)
	}
	if b := nskernel.TapeBytes(s.cfg.kernel(), batch, max(steps, 1)); b > MaxTapeBytes {
		return fmt.Errorf("stacks: the %s stack's dynamic program for batch %d over %d steps (|Q| = %d, |Γ| = %d, window %d) would take %.3g GiB, more than the limit of %d GiB: reduce the batch, the length, the states or symbols, or %s",
			s.cfg.Variant(), batch, steps, s.cfg.States, s.cfg.Symbols, s.cfg.Window, b/(1<<30), MaxTapeBytes>>30, windowAdvice(s.cfg.Window))
	}
	return nil
}

// Bind implements Layer.
func (s *NS) Bind(pb *param.Binding, batch, steps int, carry bool) (Instance, error) {
	if batch < 1 || steps < 0 {
		return nil, fmt.Errorf("stacks: NS bind with batch %d, steps %d", batch, steps)
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
	in := &nsInstance{
		s: s, pb: pb, batch: batch, id: id, steps: max(steps, 1), carry: carry,
		initial:     tensor.New(tensor.WithShape(batch, s.ReadingSize()), tensor.Of(tensor.Float64)),
		logits:      make([][]float64, steps+1),
		logw:        make([][]float64, steps+1),
		readings:    make([][]float64, steps+1),
		gLogw:       make([]float64, batch*s.cfg.NumActions()),
		gLogits:     make([]float64, batch*s.cfg.NumActions()),
		zeroReading: make([]float64, batch*s.ReadingSize()),
	}
	in.setInitialReading(nil)
	if !s.scores {
		in.w, in.b = pb.Node(s.w), pb.Node(s.b)
		in.anchor = pb.Anchor()
	}
	in.r0 = G.NewMatrix(g, tensor.Float64, G.WithShape(batch, s.ReadingSize()),
		G.WithName(fmt.Sprintf("%s.r0#%d", s.name, id)), G.WithValue(in.initial))
	in.prev = in.r0
	return in, nil
}

// UnmarshalState implements Layer.
func (s *NS) UnmarshalState(data []byte) (State, error) {
	if err := s.Carryable(); err != nil {
		return nil, err
	}
	r, k, err := decodeCarried(data, s.cfg.kernel(), s.ReadingSize(), "NS")
	if err != nil {
		return nil, err
	}
	return &nsState{k: k, reading: r}, nil
}

// nsState is the carried state of a memory-limited NS stack: the kernel's
// columns and the last reading, r_0 of the next run.
type nsState struct {
	k       *nskernel.State
	reading []float64
}

func (s *nsState) Batch() int { return s.k.Batch() }

func (s *nsState) MarshalBinary() ([]byte, error) { return appendCarried(nil, s.reading, s.k) }

// nsInstance is an NS stack bound to one graph.
type nsInstance struct {
	s     *NS
	pb    *param.Binding
	batch int
	id    uint64
	steps int
	carry bool
	// tape is the stack's scratch tape, taken when step 1 runs.
	tape          *nskernel.Tape
	w, b, anchor  *G.Node
	r0            *G.Node
	prev          *G.Node // the latest reading node, r_{t−1} of the next step
	initial       *tensor.Dense
	start, latest *nsState // the state runs start from, the latest final state
	// logits[t] and logw[t] keep the affine scores and log-weights of
	// step t between the forward and backward passes.
	logits, logw [][]float64
	// readings[t] is r_t of the latest run, ran the number of steps it made.
	readings [][]float64
	ran      int
	// gLogw and gLogits are scratch space for the backward pass;
	// zeroReading is the zero gradient of a reading the loss does not use.
	gLogw, gLogits, zeroReading []float64
	// nextBack is the step whose backward pass the tape expects next.
	nextBack int
	// added is the last step added to the graph: with carry, its forward
	// pass records the final state.
	added int
}

func (in *nsInstance) setInitialReading(st *nsState) {
	if st != nil {
		copy(in.initial.Float64s(), st.reading)
		return
	}
	r0 := make([]float64, in.s.ReadingSize())
	in.s.cfg.kernel().InitialReading(r0)
	for i := 0; i < in.batch; i++ {
		copy(in.initial.Float64s()[i*len(r0):], r0)
	}
}

func (in *nsInstance) Initial() *G.Node { return in.r0 }

func (in *nsInstance) SetState(st State) error {
	if !in.carry {
		return errNotCarrying
	}
	if st == nil {
		in.start = nil
		in.setInitialReading(nil)
		return nil
	}
	ns, ok := st.(*nsState)
	if !ok {
		return fmt.Errorf("stacks: state of type %T given to an NS stack", st)
	}
	if ns.k.Config() != in.s.cfg.kernel() || ns.Batch() != in.batch {
		return fmt.Errorf("stacks: NS state for %+v batch %d given to a stack of %+v batch %d", ns.k.Config(), ns.Batch(), in.s.cfg.kernel(), in.batch)
	}
	in.start = ns
	in.setInitialReading(ns)
	return nil
}

func (in *nsInstance) State() (State, error) {
	if !in.carry {
		return nil, errNotCarrying
	}
	if in.latest == nil {
		return nil, errNoRun
	}
	return in.latest, nil
}

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
	args := []*G.Node{h, in.w, in.b, in.prev, in.anchor}
	if in.s.scores {
		args = []*G.Node{h, in.prev}
	}
	r, err := fused.Apply(&nsStep{in: in, t: t}, args...)
	if err != nil {
		return nil, err
	}
	in.prev, in.added = r, max(in.added, t)
	return r, nil
}

// nsStep is the fused kernel of one stack update: r_t from h_t, W_a and
// b_a through the actions layer, the optional normalization and the
// dynamic program's column t. Its input r_{t−1} only orders the steps (its
// gradient is zero): the backward pass of step t must run after that of
// step t+1, which the tape's adjoints need, even in a graph where r_{t−1}
// does not feed h_t. W_a and b_a are not differentiated by gorgonia: the
// backward pass adds their gradients into the binding; the binding's
// anchor, the last input, makes gorgonia run it.
type nsStep struct {
	in *nsInstance
	t  int
}

func (k *nsStep) Name() string { return fmt.Sprintf("%s_step%d", k.in.s.cfg.Variant(), k.t) }

func (k *nsStep) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "ns:%d:%d:%+v", k.in.id, k.t, k.in.s.cfg)
}

// Differentiable implements fused.Constant: h, r_{t−1} and the anchor.
func (k *nsStep) Differentiable(i int) bool { return k.in.s.scores || i == 0 || i >= 3 }

func (k *nsStep) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	s := k.in.s
	what, n := "h", 5
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
		var start *nskernel.State
		if inst.start != nil {
			start = inst.start.k
		}
		if err := inst.tape.Begin(start); err != nil {
			panic(err) // SetState checked the state's configuration and batch
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
	copy(inst.readings[k.t], out)
	inst.ran, inst.nextBack = k.t, k.t
	if inst.carry && k.t == inst.added {
		// The final state goes into the memory of a recycled one when
		// there is one, as a new value otherwise.
		st := inst.s.takeSpare(inst.batch)
		if st == nil {
			st = &nsState{}
		}
		st.k = inst.tape.StateInto(st.k)
		st.reading = append(st.reading[:0], out...)
		inst.latest = st
	}
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
	linalg.AffineBackward(gradIn[0], inst.pb.Grad(inst.s.w), inst.pb.Grad(inst.s.b), gLogits, in[0], in[1], inst.batch, inst.s.hidden, a)
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
// stack's own reading.
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
			for c := 0; c < qg; c++ {
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
// space.
func (s *NS) LogState(st State) (*NSLogState, error) {
	ns, ok := st.(*nsState)
	if !ok {
		return nil, fmt.Errorf("stacks: state of type %T given to an NS stack", st)
	}
	if ns.k.Config() != s.cfg.kernel() {
		return nil, fmt.Errorf("stacks: NS state of another configuration (%+v, not %+v)", ns.k.Config(), s.cfg.kernel())
	}
	la, lg := ns.k.LogValues()
	return &NSLogState{Positions: ns.k.Positions(), LogAlpha: la, LogGamma: lg, Reading: append([]float64(nil), ns.reading...)}, nil
}

// StateFromLog returns the carried state of s with the given log weights,
// which a run of s continues as it would the state they were read from.
// It is an error for an unlimited stack, or for weights or a reading of
// the wrong sizes.
func (s *NS) StateFromLog(ls *NSLogState) (State, error) {
	if err := s.Carryable(); err != nil {
		return nil, err
	}
	batch := len(ls.LogAlpha)
	if batch < 1 || len(ls.Reading) != batch*s.ReadingSize() {
		return nil, fmt.Errorf("stacks: an NS state of %d sequences with a reading of %d values (want %d)", batch, len(ls.Reading), batch*s.ReadingSize())
	}
	k, err := nskernel.StateFromLog(s.cfg.kernel(), batch, ls.Positions, ls.LogAlpha, ls.LogGamma, nil)
	if err != nil {
		return nil, fmt.Errorf("stacks: %w", err)
	}
	return &nsState{k: k, reading: append([]float64(nil), ls.Reading...)}, nil
}
