package nskernel

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync/atomic"
)

// Tape holds γ and α (log weights, stored as shifted mantissas) and their
// adjoints for a batch of sequences of up to a fixed number of steps. All
// memory is allocated by NewTape; Begin, Step and Backward do not allocate.
//
// Usage: Begin, then Step for t = 1, 2, …, T (T ≤ maxSteps), then optionally
// Backward for t = T, T−1, …, 1, each exactly once, then Begin again. A Tape
// is not safe for concurrent use; Step and Backward themselves run the batch
// elements in parallel.
type Tape struct {
	cfg      Config
	batch    int
	maxSteps int
	seqs     []*seq // its Pool's sequences 0 … batch−1
	owner    *Pool
	steps    int  // forward steps since Begin
	back     int  // next step Backward expects (0 if none yet)
	initial  bool // the run began from the initial stack

	// parallel dispatch (see dispatch)
	workers int
	job     atomic.Uint64 // generation<<32 | next batch element to take
	done    atomic.Int64  // elements finished in the current generation
	helpers atomic.Int32  // live helper goroutines
	started int           // helper goroutines ever started (by dispatches)
	flip    bool          // serial dispatches alternate their order
	parked  atomic.Int32  // helpers blocked on wake
	wake    chan struct{}
	rate    [2][2]float64 // per mode: serial, parallel time per unit of work (0: not yet measured)
	probe   int           // dispatches eligible for parallel
	mode    int
	argA    []float64
	argB    []float64
	argC    []float64 // pushed vectors (Step) or their gradients (Backward) of a vector stack
	argStep int
}

// State is the carried state of a memory-limited stack: the last D−1
// columns of γ and the last D entries of α (and, for a vector stack, the
// vectors of their stack elements), enough to continue the computation
// exactly. It is detached: no gradient flows into it.
type State struct {
	cfg   Config
	batch int
	np    int // positions carried, ≤ D
	elems []seqState
}

type seqState struct {
	la, aE, abar []float64 // α (log), α mantissa, α shift per position
	psi          []float64 // potential per position
	E, Lx, beta  []float64 // γ blocks (a,b), 0 ≤ a < b < np, ordered by a then b
	V            []float64 // vector stack: the vectors of positions 1 … np−1
	hb           []float64 // vector stack: the blocks' factors hb (nil: recomputed from beta and psi)
}

// Positions returns the number of positions (columns of α) the state carries.
func (s *State) Positions() int { return s.np }

// LogAlpha writes log α of batch element n at carried position p (0 is the
// oldest) into dst, in the internal order (index y*|Q|+r for state r and
// symbol y).
func (s *State) LogAlpha(n, p int, dst []float64) {
	m := s.cfg.States * s.cfg.Symbols
	copy(dst[:m], s.elems[n].la[p*m:(p+1)*m])
}

// NewTape returns a tape for batch sequences of up to maxSteps steps each
// (per Begin), with memory of its own (a Pool's first tape). It panics if c
// is invalid or batch or maxSteps is not positive.
func NewTape(c Config, batch, maxSteps int) *Tape {
	return NewPool(c).Tape(batch, maxSteps)
}

// Pool holds the memory of the sequences of tapes that never run at once,
// one per batch size: sequence i of each of its tapes is the pool's
// sequence i, which keeps the memory of the longest run that used it. A
// layer whose runs come in several batch sizes (the batches of a corpus
// grouped by length, whose longest strings come in its smallest batches)
// so holds, per sequence, the memory of its longest run, where a tape per
// batch size would hold that of each batch size's longest run: up to
// (B+1)/2 times as much for batch sizes 1 … B. The pool and its tapes are
// not safe for concurrent use: one of its tapes runs at a time.
type Pool struct {
	cfg   Config
	seqs  []*seq
	tapes map[int]*Tape
}

// NewPool returns an empty pool for configuration c. It panics if c is
// invalid.
func NewPool(c Config) *Pool {
	if err := c.Validate(); err != nil {
		panic(err)
	}
	return &Pool{cfg: c, tapes: map[int]*Tape{}}
}

// Tape returns the pool's tape for batch sequences of up to maxSteps steps
// each (per Begin; the same tape for the same batch size, with room for at
// least as many steps as before), giving the pool's sequences 0 … batch−1
// the memory such a run needs where they have less. The memory a sequence
// had is released (not kept by the tapes), and what another tape of the
// pool left in it is lost: Begin starts every run anew. It panics if batch
// or maxSteps is not positive.
func (p *Pool) Tape(batch, maxSteps int) *Tape { return p.TapeFrom(batch, maxSteps, true) }

// TapeFrom is Tape for runs that begin from a carried state (carried) or
// only from the initial stack, which need no room for a carried window:
// a memory-limited stack's tape is then no larger than the unlimited
// one's, however large the window. A tape so made must not Begin from a
// carried state until the pool gives it out again with carried set.
func (p *Pool) TapeFrom(batch, maxSteps int, carried bool) *Tape {
	if batch < 1 || maxSteps < 1 {
		panic("stacks: batch and maxSteps must be positive")
	}
	capPos := capPositionsFrom(p.cfg.Window, maxSteps, carried)
	for len(p.seqs) < batch {
		p.seqs = append(p.seqs, new(seq))
	}
	for _, s := range p.seqs[:batch] {
		if s.capPos < capPos {
			s.init(p.cfg, capPos)
		}
	}
	t := p.tapes[batch]
	if t == nil {
		t = &Tape{cfg: p.cfg, batch: batch, seqs: p.seqs[:batch:batch], owner: p}
		t.workers = min(runtime.GOMAXPROCS(0), batch)
		t.wake = make(chan struct{}, t.workers)
		p.tapes[batch] = t
		// A new tape starts as one begun from the initial stack; a run
		// on a tape begins with Begin, whatever another tape of the pool
		// left in its sequences.
		if err := t.begin(nil, make([]float64, p.cfg.Vector)); err != nil {
			panic(err)
		}
	}
	t.maxSteps = max(t.maxSteps, maxSteps)
	return t
}

// pool returns the pool whose sequences the tape runs on.
func (t *Tape) pool() *Pool { return t.owner }

// Bytes returns the memory of the pool's sequences, in bytes.
func (p *Pool) Bytes() float64 {
	n := 0.0
	for _, s := range p.seqs {
		n += s.bytes()
	}
	return n
}

// SetThreads bounds the goroutines a dispatch of the tape uses, itself
// included, to n (at least 1); by default it is GOMAXPROCS.
func (t *Tape) SetThreads(n int) { t.workers = max(1, min(n, t.batch)) }

// Config returns the tape's configuration.
func (t *Tape) Config() Config { return t.cfg }

// Batch returns the batch size.
func (t *Tape) Batch() int { return t.batch }

// MaxSteps returns the largest number of steps per Begin.
func (t *Tape) MaxSteps() int { return t.maxSteps }

// Steps returns the number of steps taken since the last Begin.
func (t *Tape) Steps() int { return t.steps }

// Begin starts a new batch of sequences from the initial configuration
// (carried == nil) or, for the memory-limited variant only, from a carried
// state returned by State. It discards all earlier steps and adjoints. A
// vector stack begins with BeginVector.
func (t *Tape) Begin(carried *State) error {
	if t.cfg.Vector > 0 {
		return errors.New("stacks: a vector stack begins with BeginVector")
	}
	return t.begin(carried, nil)
}

// BeginVector is Begin for a vector stack (Config.Vector > 0): from the
// initial stack when carried is nil, whose bottom symbol carries the vector
// bottom (of size m, shared by the batch; it matters only for the fixed
// behaviour, under which the bottom can return to the top, and may be nil
// otherwise), or, for the memory-limited variant only, from a state
// returned by State (bottom is then ignored).
func (t *Tape) BeginVector(carried *State, bottom []float64) error {
	if t.cfg.Vector == 0 {
		return errors.New("stacks: BeginVector needs a vector stack")
	}
	if carried == nil && t.cfg.Fixed && len(bottom) < t.cfg.Vector {
		return fmt.Errorf("stacks: bottom vector of size %d, want %d", len(bottom), t.cfg.Vector)
	}
	return t.begin(carried, bottom)
}

func (t *Tape) begin(carried *State, bottom []float64) error {
	if carried != nil {
		if t.cfg.Window == 0 {
			return errors.New("stacks: carried state needs the memory-limited variant")
		}
		if carried.cfg != t.cfg || carried.batch != t.batch {
			return fmt.Errorf("stacks: carried state for %+v batch %d, tape is %+v batch %d", carried.cfg, carried.batch, t.cfg, t.batch)
		}
	}
	for i, q := range t.seqs {
		if carried == nil {
			q.begin(bottom)
		} else {
			q.beginState(carried.np, &carried.elems[i])
		}
	}
	t.steps = 0
	t.back = 0
	t.initial = carried == nil
	return nil
}

const (
	modeStep = iota
	modeBack
)

// Step performs step t = t.Steps()+1: logDelta holds batch×NumActions
// log-weights (batch-major; for NS already normalized by the caller, see
// LogSoftmaxRows), and reading (batch×ReadingSize) receives r_t.
// A sequence whose every run has zero weight reads all zeros.
func (t *Tape) Step(logDelta []float64, reading []float64) {
	if t.cfg.Vector > 0 {
		panic("stacks: a vector stack steps with StepVector")
	}
	t.step(logDelta, nil, reading)
}

// StepVector is Step for a vector stack: vec holds the batch×m vectors
// v_t pushed by this step, and reading (batch×ReadingSize) receives r_t,
// the expected vector on top per (state, top symbol).
func (t *Tape) StepVector(logDelta, vec, reading []float64) {
	if t.cfg.Vector == 0 {
		panic("stacks: StepVector needs a vector stack")
	}
	t.step(logDelta, vec[:t.batch*t.cfg.Vector], reading)
}

func (t *Tape) step(logDelta, vec, reading []float64) {
	if t.steps >= t.maxSteps {
		panic("stacks: more steps than maxSteps")
	}
	if t.back != 0 {
		panic("stacks: Step after Backward; call Begin first")
	}
	na, nr := t.cfg.NumActions(), t.cfg.ReadingSize()
	t.mode, t.argA, t.argB, t.argC = modeStep, logDelta[:t.batch*na], reading[:t.batch*nr], vec
	t.dispatch()
	t.steps++
}

// Backward back-propagates through step `step`. It must be called for
// step = Steps(), Steps()−1, …, 1 in that order, after the forward steps.
// gradReading is ∂L/∂r_step (batch×ReadingSize); the adjoints of earlier
// columns are accumulated internally, and ∂L/∂logΔ_step is written into
// gradLogDelta (batch×NumActions, overwritten). Entries of logΔ equal to −∞
// get gradient exactly 0.
func (t *Tape) Backward(step int, gradReading []float64, gradLogDelta []float64) {
	if t.cfg.Vector > 0 {
		panic("stacks: a vector stack back-propagates with BackwardVector")
	}
	t.backward(step, gradReading, gradLogDelta, nil)
}

// BackwardVector is Backward for a vector stack: it also writes ∂L/∂v_step
// into gradVec (batch×m, overwritten), and Backward(1) of a run begun from
// the initial stack adds ∂L/∂bottom, summed over the batch, into
// gradBottom (size m) when it is not nil: the gradient through the
// readings r_1 … r_T (r_0 is not the tape's); it is zero for the original
// behaviour.
func (t *Tape) BackwardVector(step int, gradReading, gradLogDelta, gradVec, gradBottom []float64) {
	if t.cfg.Vector == 0 {
		panic("stacks: BackwardVector needs a vector stack")
	}
	m := t.cfg.Vector
	t.backward(step, gradReading, gradLogDelta, gradVec[:t.batch*m])
	if t.back == -1 && t.initial && t.cfg.Fixed && gradBottom != nil {
		for _, q := range t.seqs {
			for j, v := range q.Vbar[m : 2*m] {
				gradBottom[j] += v
			}
		}
	}
}

func (t *Tape) backward(step int, gradReading, gradLogDelta, gradVec []float64) {
	want := t.back
	if want == 0 {
		want = t.steps
	}
	if step != want || step < 1 {
		panic(fmt.Sprintf("stacks: Backward(%d) out of order; want step %d", step, want))
	}
	na, nr := t.cfg.NumActions(), t.cfg.ReadingSize()
	t.mode, t.argA, t.argB, t.argC, t.argStep = modeBack, gradReading[:t.batch*nr], gradLogDelta[:t.batch*na], gradVec, step
	t.dispatch()
	t.back = step - 1
	if t.back == 0 {
		t.back = -1
	}
}

// State returns a deep copy of the carried state after the last step, for
// the memory-limited variant (Window > 0): the last D−1 columns of γ and the
// last D entries of α. Begin(state) followed by further steps gives exactly
// what running the whole sequence would. It panics for the unlimited variant.
func (t *Tape) State() *State { return t.StateInto(nil) }

// StateInto is State, written into the memory of dst when dst is a state
// of the tape's configuration and batch, which it then returns; otherwise
// (dst nil, or of another configuration or batch) into a new State. It
// spares the allocation of a state the size of the window's blocks,
// megabytes per sequence for the larger stacks: the caller passes a state
// it will not use again, which StateInto overwrites. It panics for the
// unlimited variant.
func (t *Tape) StateInto(dst *State) *State {
	if t.cfg.Window == 0 {
		panic("stacks: State needs the memory-limited variant")
	}
	st := dst
	if st == nil || st.cfg != t.cfg || st.batch != t.batch || len(st.elems) != t.batch {
		st = &State{cfg: t.cfg, batch: t.batch, elems: make([]seqState, t.batch)}
	}
	st.np = min(t.seqs[0].np, t.cfg.Window)
	for i, q := range t.seqs {
		q.saveState(st.np, &st.elems[i])
	}
	return st
}

// Run is a convenience for the NS stack: Begin(nil), then Step for every element of
// logDeltas (logDeltas[t-1] is batch×NumActions for step t); it returns the
// readings r_1 … r_T.
func (t *Tape) Run(logDeltas [][]float64) [][]float64 {
	if err := t.Begin(nil); err != nil {
		panic(err)
	}
	out := make([][]float64, len(logDeltas))
	for i, ld := range logDeltas {
		out[i] = make([]float64, t.batch*t.cfg.ReadingSize())
		t.Step(ld, out[i])
	}
	return out
}

var negInf = math.Inf(-1)
