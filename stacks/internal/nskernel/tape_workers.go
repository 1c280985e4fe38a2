package nskernel

import (
	"runtime"
	"time"
)

// dispatch runs t.mode over the whole batch, either on the calling goroutine
// alone (serial) or shared with helper goroutines (parallel).
//
// A dispatch with little work (see parallelWork) is serial. Otherwise the
// tape chooses by measurement: it keeps, per mode (Step, Backward), a moving
// average of the time per unit of estimated work of serial and of parallel
// dispatches, uses the faster (parallel only if clearly faster), and tries
// the other one every probeEvery dispatches. Parallel dispatch pays on idle
// cores; on a loaded machine a helper whose thread the OS deschedules
// holds up the join, and serial is faster (measured: a CFL training epoch
// on 2 busy cores took 40% longer in parallel).
//
// In a parallel dispatch the calling goroutine works through the batch
// elements itself while up to workers−1 helper goroutines take elements
// concurrently. A helper that finds no work polls for the next dispatch
// for up to helperSpin, so that consecutive steps do not pay the latency of
// waking an idle thread (which on virtual machines can be as long as a
// step); then it blocks on wake, using no CPU, and exits after helperIdle
// without work, so that an idle tape leaves no goroutine behind for long.
func (t *Tape) dispatch() {
	w := t.work()
	if t.workers <= 1 || w < parallelWork {
		t.serial()
		return
	}
	r := &t.rate[t.mode]
	par := r[1] == 0 || r[1] < parallelGain*r[0]
	t.probe++
	if r[0] == 0 || t.probe%probeEvery == 0 {
		par = !par
	}
	start := time.Now()
	i := 0
	if par {
		if t.parallel() {
			return // a helper started: not a fair sample
		}
		i = 1
	} else {
		t.serial()
	}
	d := float64(time.Since(start)) / float64(w)
	if r[i] == 0 {
		r[i] = d
	} else {
		r[i] += (d - r[i]) / 4
	}
}

// serial runs the batch elements in turn, in alternating order: the
// element run last has the most of its blocks still in cache, and it comes
// first in the next dispatch.
func (t *Tape) serial() {
	t.flip = !t.flip
	if t.flip {
		for i := t.batch - 1; i >= 0; i-- {
			t.doOne(i)
		}
		return
	}
	for i := 0; i < t.batch; i++ {
		t.doOne(i)
	}
}

// parallel runs a parallel dispatch; it reports whether it started a helper.
func (t *Tape) parallel() (started bool) {
	gen := t.job.Load()>>32 + 1
	t.done.Store(0)
	t.job.Store(gen << 32) // publishes mode and arguments
	for n := t.parked.Load(); n > 0; n-- {
		select {
		case t.wake <- struct{}{}:
		default:
		}
	}
	if h := t.helpers.Load(); int(h) < t.workers-1 && t.helpers.CompareAndSwap(h, h+1) {
		go t.helper()
		t.started++
		started = true
	}
	for t.take() {
	}
	for spins := 0; t.done.Load() < int64(t.batch); spins++ {
		if spins > 64 {
			runtime.Gosched()
		}
	}
	return started
}

// work estimates the multiply-adds of the current dispatch over the batch.
func (t *Tape) work() int {
	s := t.seqs[0]
	b := s.np // the column Step is about to add
	if t.mode == modeBack {
		b = s.base + t.argStep
	}
	n := b - s.lo(b) // blocks in the column
	w := n*n/2*s.m*s.m*s.nq + n*s.m*s.m*s.m
	if t.mode == modeBack {
		w *= 2
	}
	return w * t.batch
}

// take claims and processes one batch element of the current dispatch; it
// reports false if none was left.
func (t *Tape) take() bool {
	for {
		w := t.job.Load()
		i := int(w & (1<<32 - 1))
		if i >= t.batch {
			return false
		}
		if t.job.CompareAndSwap(w, w+1) {
			// The dispatch cannot return before this element is done, so
			// its arguments stay valid.
			t.doOne(i)
			t.done.Add(1)
			return true
		}
	}
}

func (t *Tape) helper() {
	idle := time.NewTimer(helperIdle)
	for {
		for t.take() {
		}
		// Poll for the next dispatch, then block.
		gen := t.job.Load() >> 32
		start := time.Now()
		for n := 1; t.job.Load()>>32 == gen; n++ {
			if n&255 == 0 && time.Since(start) > helperSpin {
				break
			}
		}
		if t.job.Load()>>32 != gen {
			continue
		}
		t.parked.Add(1)
		if t.job.Load()>>32 != gen { // a dispatch may not have seen parked
			t.parked.Add(-1)
			continue
		}
		idle.Reset(helperIdle)
		select {
		case <-t.wake:
			t.parked.Add(-1)
		case <-idle.C:
			t.parked.Add(-1)
			t.helpers.Add(-1)
			// A dispatch may have started after the timer fired and
			// counted on this helper: help it to the end.
			for t.take() {
			}
			return
		}
	}
}

func (t *Tape) doOne(i int) {
	na, nr := t.cfg.NumActions(), t.cfg.ReadingSize()
	s := t.seqs[i]
	var c []float64
	if m := t.cfg.Vector; m > 0 {
		c = t.argC[i*m : (i+1)*m]
	}
	switch t.mode {
	case modeStep:
		s.step(t.argA[i*na:(i+1)*na], c, t.argB[i*nr:(i+1)*nr])
	case modeBack:
		s.backward(s.base+t.argStep, t.argA[i*nr:(i+1)*nr], t.argB[i*na:(i+1)*na], c)
	}
}

const (
	// parallelGain: parallel dispatch is used while its time per unit of
	// work is below parallelGain times that of serial dispatch.
	parallelGain = 0.85
	probeEvery   = 16
)

// parallelWork is the least estimated number of multiply-adds (over the
// batch) for which a dispatch is shared with helpers: below it the hand-off
// costs about as much as it saves.
const parallelWork = 100_000

const (
	helperSpin = 200 * time.Microsecond
	helperIdle = 100 * time.Millisecond
)
