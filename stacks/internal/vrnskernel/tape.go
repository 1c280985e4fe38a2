package vrnskernel

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
)

// Tape holds the dynamic program of a batch of sequences of up to a fixed
// number of steps: γ, γ′ and α with their adjoints, and the pushed
// vectors. All of its memory is allocated by NewTape.
//
// Usage: Begin, then Step for t = 1, 2, …, T (T ≤ MaxSteps), then
// optionally Backward for t = T, T−1, …, 1, each exactly once, then Begin
// again. A Tape is not safe for concurrent use; Step and Backward
// themselves run the batch elements in parallel.
type Tape struct {
	cfg      Config
	batch    int
	maxSteps int
	seqs     []seq
	steps    int  // forward steps since Begin
	back     int  // next step Backward expects (0 if none yet, −1 when done)
	initial  bool // the run began from the initial stack
	workers  int
}

// State is the carried state of a memory-limited stack after a step: the
// last D positions of α, the γ blocks among them and the vectors of their
// stack elements, enough to continue the computation exactly. It is
// detached: no gradient flows into it.
type State struct {
	cfg   Config
	batch int
	np    int // positions carried, ≤ D
	elems []seqState
}

type seqState struct {
	aE, abar []float64 // α mantissas and shifts per position
	psi      []float64 // potential per position
	E, beta  []float64 // γ blocks (a,b), 0 ≤ a < b < np, ordered by a then b
	V        []float64 // vectors of positions 1 … np−1
}

// Batch returns the number of sequences the state carries.
func (s *State) Batch() int { return s.batch }

// Config returns the configuration the state was made with.
func (s *State) Config() Config { return s.cfg }

// NewTape returns a tape for batch sequences of up to maxSteps steps each
// (per Begin). It panics if c is invalid or batch or maxSteps is not
// positive.
func NewTape(c Config, batch, maxSteps int) *Tape {
	if err := c.Validate(); err != nil {
		panic(err)
	}
	if batch < 1 || maxSteps < 1 {
		panic("vrnskernel: batch and maxSteps must be positive")
	}
	t := &Tape{cfg: c, batch: batch, maxSteps: maxSteps}
	capPos := maxSteps + 2
	if c.Window > 0 {
		capPos = maxSteps + max(2, c.Window)
	}
	t.seqs = make([]seq, batch)
	for i := range t.seqs {
		t.seqs[i].init(c, capPos)
	}
	t.workers = min(runtime.GOMAXPROCS(0), batch)
	if err := t.Begin(nil, make([]float64, c.Vector)); err != nil {
		panic(err)
	}
	return t
}

// SetThreads bounds the goroutines a step of the tape uses, itself
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

// Begin starts a new batch of sequences, discarding all earlier steps and
// adjoints: from the initial stack when carried is nil, whose bottom symbol
// carries the vector bottom (of size m, shared by the batch; it matters
// only for the fixed behaviour, under which the bottom can return to the
// top, and may be nil otherwise), or, for the memory-limited variant only,
// from a state returned by State (bottom is then ignored).
func (t *Tape) Begin(carried *State, bottom []float64) error {
	if carried != nil {
		if t.cfg.Window == 0 {
			return errors.New("vrnskernel: a carried state needs the memory-limited variant")
		}
		if carried.cfg != t.cfg || carried.batch != t.batch {
			return fmt.Errorf("vrnskernel: carried state for %+v batch %d, tape is %+v batch %d", carried.cfg, carried.batch, t.cfg, t.batch)
		}
	} else if t.cfg.Fixed && len(bottom) < t.cfg.Vector {
		return fmt.Errorf("vrnskernel: bottom vector of size %d, want %d", len(bottom), t.cfg.Vector)
	}
	for i := range t.seqs {
		if carried == nil {
			t.seqs[i].begin(bottom)
		} else {
			t.seqs[i].beginState(carried.np, &carried.elems[i])
		}
	}
	t.steps, t.back, t.initial = 0, 0, carried == nil
	return nil
}

// Step performs step t = Steps()+1: logDelta holds batch×NumActions action
// log-weights (batch-major, external layout; −∞ is an impossible action),
// vec the batch×m pushed vectors v_t, and reading (batch×ReadingSize)
// receives r_t. A sequence whose every run has zero weight reads all
// zeros.
func (t *Tape) Step(logDelta, vec, reading []float64) {
	if t.steps >= t.maxSteps {
		panic("vrnskernel: more steps than maxSteps")
	}
	if t.back != 0 {
		panic("vrnskernel: Step after Backward; call Begin first")
	}
	na, nr, m := t.cfg.NumActions(), t.cfg.ReadingSize(), t.cfg.Vector
	logDelta, vec, reading = logDelta[:t.batch*na], vec[:t.batch*m], reading[:t.batch*nr]
	t.parallel(func(i int) {
		t.seqs[i].step(logDelta[i*na:(i+1)*na], vec[i*m:(i+1)*m], reading[i*nr:(i+1)*nr])
	})
	t.steps++
}

// Backward back-propagates through step `step`. It must be called for
// step = Steps(), Steps()−1, …, 1 in that order, after the forward steps.
// gradReading is ∂L/∂r_step (batch×ReadingSize); the adjoints of earlier
// steps are accumulated internally. ∂L/∂logΔ_step is written into
// gradLogDelta (batch×NumActions) and ∂L/∂v_step into gradVec (batch×m),
// both overwritten. Entries of logΔ equal to −∞ get gradient exactly 0.
// Backward(1) of a run begun from the initial stack adds ∂L/∂bottom,
// summed over the batch, into gradBottom (size m) when it is not nil: the
// gradient through the readings r_1 … r_T (r_0 is not the tape's); it is
// zero for the original behaviour.
func (t *Tape) Backward(step int, gradReading, gradLogDelta, gradVec, gradBottom []float64) {
	want := t.back
	if want == 0 {
		want = t.steps
	}
	if step != want || step < 1 {
		panic(fmt.Sprintf("vrnskernel: Backward(%d) out of order; want step %d", step, want))
	}
	na, nr, m := t.cfg.NumActions(), t.cfg.ReadingSize(), t.cfg.Vector
	gradReading, gradLogDelta, gradVec = gradReading[:t.batch*nr], gradLogDelta[:t.batch*na], gradVec[:t.batch*m]
	t.parallel(func(i int) {
		s := &t.seqs[i]
		s.backward(s.base+step, gradReading[i*nr:(i+1)*nr], gradLogDelta[i*na:(i+1)*na], gradVec[i*m:(i+1)*m])
	})
	t.back = step - 1
	if t.back == 0 {
		t.back = -1
		if t.initial && t.cfg.Fixed && gradBottom != nil {
			for i := range t.seqs {
				for j, v := range t.seqs[i].Vbar[m : 2*m] {
					gradBottom[j] += v
				}
			}
		}
	}
}

// State returns a deep copy of the carried state after the last step, for
// the memory-limited variant (Window > 0): the last D positions of α, the
// γ blocks among them and their vectors. Begin(state, nil) followed by
// further steps gives exactly what running the whole sequence would. It
// panics for the unlimited variant.
func (t *Tape) State() *State {
	if t.cfg.Window == 0 {
		panic("vrnskernel: State needs the memory-limited variant")
	}
	st := &State{cfg: t.cfg, batch: t.batch}
	st.np = min(t.seqs[0].np, t.cfg.Window)
	st.elems = make([]seqState, t.batch)
	for i := range t.seqs {
		t.seqs[i].saveState(st.np, &st.elems[i])
	}
	return st
}

// parallel calls f for every batch element, on up to t.workers goroutines.
func (t *Tape) parallel(f func(i int)) {
	if t.workers <= 1 {
		for i := 0; i < t.batch; i++ {
			f(i)
		}
		return
	}
	var next atomic.Int64
	work := func() {
		for {
			i := int(next.Add(1)) - 1
			if i >= t.batch {
				return
			}
			f(i)
		}
	}
	var wg sync.WaitGroup
	wg.Add(t.workers - 1)
	for w := 1; w < t.workers; w++ {
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
}
