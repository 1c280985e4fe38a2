package stacks

import (
	"fmt"
	"math"

	"github.com/nsrnn/nsrnn/internal/linalg"
	"github.com/nsrnn/nsrnn/stacks/internal/baseline"
	"github.com/nsrnn/nsrnn/stacks/internal/nskernel"
)

// Runner runs a stack forward, step by step, on plain slices and without
// a graph: for generation and decoding, where each step's input depends on
// the previous step's output and no gradient is needed. A Runner reads
// its layer's parameters at every step, and is not safe for concurrent
// use.
type Runner interface {
	// Step performs the next stack update from the hidden states h, (batch,
	// hidden) row-major, and writes the reading into r, (batch,
	// ReadingSize). It fails after the number of steps the runner was made
	// for.
	Step(h, r []float64) error
	// Initial writes the reading of the initial stack, r_0, into r.
	Initial(r []float64)
	// Steps is the number of steps taken.
	Steps() int
}

// Runners is implemented by the stack layers that can run without a graph.
type Runners interface {
	// NewRunner returns a runner from the initial stack for batch
	// sequences of at most maxSteps updates. A runner whose tape would
	// exceed MaxTapeBytes is refused with the error of the stack's
	// CheckSize.
	NewRunner(batch, maxSteps int) (Runner, error)
}

func checkRunner(batch, maxSteps int) error {
	if batch < 1 || maxSteps < 1 {
		return fmt.Errorf("stacks: runner for batch %d and %d steps: both must be at least 1", batch, maxSteps)
	}
	if batch*maxSteps > 1<<26 {
		return fmt.Errorf("stacks: runner for batch %d and %d steps is too large", batch, maxSteps)
	}
	return nil
}

// nsRunner runs a nondeterministic stack forward on its own tape.
type nsRunner struct {
	s            *NS
	batch, max   int
	tape         *nskernel.Tape
	logits, logw []float64
	// v is the step's pushed vectors and bottom v_0, for a stack with
	// vectors.
	v, bottom []float64
	steps     int
}

// NewRunner implements Runners. The runner's tape keeps every column, as
// a graph's does, so that the readings equal those of a graph of the same
// steps; a tape over MaxTapeBytes is refused, as by Bind.
func (s *NS) NewRunner(batch, maxSteps int) (Runner, error) {
	if err := checkRunner(batch, maxSteps); err != nil {
		return nil, err
	}
	if err := s.CheckSize(batch, maxSteps, false); err != nil {
		return nil, err
	}
	r := &nsRunner{s: s, batch: batch, max: maxSteps, tape: nskernel.NewTape(s.cfg.kernel(), batch, maxSteps),
		logits: make([]float64, batch*s.cfg.NumActions())}
	r.logw = r.logits
	if s.cfg.Normalized {
		r.logw = make([]float64, len(r.logits))
	}
	if !s.vector() {
		return r, r.tape.Begin(nil)
	}
	r.v, r.bottom = make([]float64, batch*s.cfg.Vector), make([]float64, s.cfg.Vector)
	var w0 []float64
	if s.w0 != nil {
		w0 = s.w0.Data()
	}
	s.bottomVector(r.bottom, w0)
	return r, r.tape.BeginVector(nil, r.bottom)
}

func (r *nsRunner) Initial(out []float64) {
	n, k := r.s.ReadingSize(), r.s.cfg.kernel()
	for b := 0; b < r.batch; b++ {
		if r.s.vector() {
			k.InitialVectorReading(out[b*n:(b+1)*n], r.bottom)
		} else {
			k.InitialReading(out[b*n : (b+1)*n])
		}
	}
}

func (r *nsRunner) Steps() int { return r.steps }

func (r *nsRunner) Step(h, out []float64) error {
	if r.steps >= r.max {
		return fmt.Errorf("stacks: runner made for %d steps", r.max)
	}
	s, cfg := r.s, r.s.cfg
	if s.scores {
		copy(r.logits, h)
	} else {
		linalg.Affine(r.logits, h, s.w.Data(), s.b.Data(), r.batch, s.hidden, cfg.NumActions())
	}
	if cfg.Normalized {
		nskernel.LogSoftmaxRows(r.logw, r.logits, cfg.kernel(), r.batch)
	}
	if s.vector() {
		linalg.Affine(r.v, h, s.wv.Data(), s.bv.Data(), r.batch, s.hidden, cfg.Vector)
		for i, x := range r.v {
			r.v[i] = sigmoid(x)
		}
		r.tape.StepVector(r.logw, r.v, out)
	} else {
		r.tape.Step(r.logw, out)
	}
	r.steps++
	return nil
}

// jmActions computes a JM step's action probabilities a (batch, 3) and its
// pushed vectors, into v (batch, m) or, pushing the hidden state, h itself.
func jmActions(s *JM, a, v, h, wa, ba, wv, bv []float64, B int) []float64 {
	H, m := s.hidden, s.m
	linalg.Affine(a, h, wa, ba, B, H, 3)
	for b := 0; b < B; b++ {
		row := a[3*b : 3*b+3]
		mx := max(row[0], row[1], row[2])
		sum := 0.0
		for i, x := range row {
			row[i] = math.Exp(x - mx)
			sum += row[i]
		}
		for i := range row {
			row[i] /= sum
		}
	}
	if s.pushHidden {
		return h
	}
	linalg.Affine(v, h, wv, bv, B, H, m)
	for i, x := range v {
		v[i] = 1 / (1 + math.Exp(-x))
	}
	return v
}

type jmRunner struct {
	s          *JM
	batch, max int
	tape       *baseline.JM
	a, v       []float64
	steps      int
}

// NewRunner implements Runners.
func (s *JM) NewRunner(batch, maxSteps int) (Runner, error) {
	if err := checkRunner(batch, maxSteps); err != nil {
		return nil, err
	}
	if err := s.CheckSize(batch, maxSteps, false); err != nil {
		return nil, err
	}
	r := &jmRunner{s: s, batch: batch, max: maxSteps, tape: baseline.NewJM(batch, s.m, s.depth),
		a: make([]float64, batch*3), v: make([]float64, batch*s.m)}
	r.tape.Begin(maxSteps, nil, false)
	return r, nil
}

func (r *jmRunner) Initial(out []float64) { clear(out[:r.batch*r.s.m]) }

func (r *jmRunner) Steps() int { return r.steps }

func (r *jmRunner) Step(h, out []float64) error {
	if r.steps >= r.max {
		return fmt.Errorf("stacks: runner made for %d steps", r.max)
	}
	s := r.s
	var wv, bv []float64
	if !s.pushHidden {
		wv, bv = s.wv.Data(), s.bv.Data()
	}
	v := jmActions(s, r.a, r.v, h, s.wa.Data(), s.ba.Data(), wv, bv, r.batch)
	r.steps++
	r.tape.Forward(r.steps, r.a, v, out)
	return nil
}

// grefActions computes a Gref step's pop and push strengths u, d (batch)
// and pushed vectors v (batch, m).
func grefActions(s *Gref, u, d, v, h []float64, p [6][]float64, B int) {
	H, m := s.hidden, s.m
	linalg.Affine(u, h, p[0], p[1], B, H, 1)
	linalg.Affine(d, h, p[2], p[3], B, H, 1)
	linalg.Affine(v, h, p[4], p[5], B, H, m)
	for i := range u {
		u[i] = 1 / (1 + math.Exp(-u[i]))
		d[i] = 1 / (1 + math.Exp(-d[i]))
	}
	for i := range v {
		v[i] = math.Tanh(v[i])
	}
}

type grefRunner struct {
	s          *Gref
	batch, max int
	tape       *baseline.Gref
	u, d, v    []float64
	steps      int
}

// NewRunner implements Runners.
func (s *Gref) NewRunner(batch, maxSteps int) (Runner, error) {
	if err := checkRunner(batch, maxSteps); err != nil {
		return nil, err
	}
	if err := s.CheckSize(batch, maxSteps, false); err != nil {
		return nil, err
	}
	return &grefRunner{s: s, batch: batch, max: maxSteps, tape: baseline.NewGref(batch, s.m, maxSteps),
		u: make([]float64, batch), d: make([]float64, batch), v: make([]float64, batch*s.m)}, nil
}

func (r *grefRunner) Initial(out []float64) { clear(out[:r.batch*r.s.m]) }

func (r *grefRunner) Steps() int { return r.steps }

func (r *grefRunner) Step(h, out []float64) error {
	if r.steps >= r.max {
		return fmt.Errorf("stacks: runner made for %d steps", r.max)
	}
	s := r.s
	grefActions(s, r.u, r.d, r.v, h, [6][]float64{s.wu.Data(), s.bu.Data(), s.wd.Data(), s.bd.Data(), s.wv.Data(), s.bv.Data()}, r.batch)
	r.steps++
	r.tape.Forward(r.steps, r.u, r.d, r.v, out)
	return nil
}
