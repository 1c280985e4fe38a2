package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/nsrnn/nsrnn/nsrnn"
)

// Interrupts catches SIGINT and SIGTERM during training: the first one
// asks training to stop (see CheckpointRecorder); a second one kills the
// program. Its message goes through Console, which the training's progress
// is to be written to as well: the progress bar is cleared first and never
// drawn again, so that the message is not glued to a stale bar.
//
// A batch that does not end within StopGrace of the first signal (the
// graph of a very long string being built, or a batch that runs for
// minutes) is not waited for: the program exits, after the clean-up that
// OnForcedExit registered, and --resume continues from the last
// checkpoint, which a checkpoint's atomic write keeps whole.
type Interrupts struct {
	ch   chan os.Signal
	done chan struct{}
	// exited is closed when the goroutine that waits for the signal has
	// returned: Stop waits for it, so that nothing it writes comes after.
	exited  chan struct{}
	got     atomic.Value // os.Signal
	console *console
	// moved is set by the first training event after the signal: the
	// batch ended and the stop with its checkpoint is under way.
	moved atomic.Bool
	// forced is the clean-up before a forced exit (OnForcedExit).
	mu     sync.Mutex
	forced func() string
	stop   sync.Once
	// grace and exit are StopGrace and exit when it was made.
	grace time.Duration
	exit  func(int)
}

// StopGrace is how long after the first signal the current batch may run
// before the program exits without it.
var StopGrace = 10 * time.Second

// exit ends the program; tests replace it.
var exit = os.Exit

// OnForcedExit registers f to run before the program exits without
// waiting for its batch (StopGrace); f cleans up (e.g. removes a new run
// that has no checkpoint yet) and returns what the user can do next, for
// the message.
func (in *Interrupts) OnForcedExit(f func() string) {
	in.mu.Lock()
	in.forced = f
	in.mu.Unlock()
}

// NotifySignals registers ch for SIGINT and SIGTERM: the notify function
// of CatchInterrupts outside tests, which replace it to send signals of
// their own.
func NotifySignals(ch chan<- os.Signal) { signal.Notify(ch, os.Interrupt, syscall.SIGTERM) }

// NotifySweepSignals registers ch for the signals a sweep passes on to its
// runs (RunSweep): SIGINT, SIGTERM and, unless the program ignores it (as
// under nohup), SIGHUP, so that a hangup of the terminal still ends the
// runs, which have process groups of their own.
func NotifySweepSignals(ch chan<- os.Signal) {
	NotifySignals(ch)
	if !signal.Ignored(syscall.SIGHUP) {
		signal.Notify(ch, syscall.SIGHUP)
	}
}

// CatchInterrupts starts catching the signals that notify registers
// (NotifySignals); at the first, it writes the signal and stopping (what
// happens now, e.g. "stopping after the current batch") to stderr through
// the console; terminal says whether stderr is a terminal. The caller
// must call Stop.
//
// From then on, until the program ends, a write to a pipe whose reader is
// gone fails (EPIPE) instead of killing the program with SIGPIPE: the
// reader of `train … | tee log` dies with the same Ctrl-C, and the
// program must still stop after its batch with a checkpoint.
func CatchInterrupts(stderr io.Writer, terminal bool, notify func(chan<- os.Signal), stopping string) *Interrupts {
	in := &Interrupts{ch: make(chan os.Signal, 1), done: make(chan struct{}), exited: make(chan struct{}),
		console: &console{w: stderr, terminal: terminal}, grace: StopGrace, exit: exit}
	ignoreBrokenPipes()
	notify(in.ch)
	go func() {
		defer close(in.exited)
		select {
		case sig := <-in.ch:
			in.got.Store(sig)
			// Back to the default: a second signal kills.
			signal.Stop(in.ch)
			in.console.interrupted(fmt.Sprintf("%v: %s; interrupt again to kill", sig, stopping))
			select {
			case <-time.After(in.grace):
				if in.moved.Load() {
					return
				}
				in.mu.Lock()
				f := in.forced
				in.mu.Unlock()
				next := "--resume continues from the last checkpoint"
				if f != nil {
					next = f()
				}
				in.console.interrupted(fmt.Sprintf("%v: the current batch has not ended %v after the signal: exiting without it; %s", sig, in.grace, next))
				in.exit(in.ExitCode())
			case <-in.done:
			}
		case <-in.done:
		}
	}()
	return in
}

// brokenPipes receives the SIGPIPE signals that ignoreBrokenPipes
// catches; nothing reads it (a full channel drops them).
var brokenPipes = make(chan os.Signal, 1)

// ignoreBrokenPipes catches SIGPIPE for the rest of the program: Go then
// lets a write to a broken pipe on standard output or error fail with
// EPIPE instead of killing the program (see os/signal, "SIGPIPE").
func ignoreBrokenPipes() { signal.Notify(brokenPipes, syscall.SIGPIPE) }

// Console is the writer of the training's progress (its epoch lines and,
// on a terminal, its progress bar), shared with the interrupt's message.
func (in *Interrupts) Console() io.Writer { return in.console }

// Stop stops catching signals, and returns once the message of a signal
// caught is written (so that the caller's later writes come after it); a
// second Stop does nothing.
func (in *Interrupts) Stop() {
	in.stop.Do(func() {
		signal.Stop(in.ch)
		close(in.done)
		<-in.exited
	})
}

// Signal returns the signal caught, or nil.
func (in *Interrupts) Signal() os.Signal {
	sig, _ := in.got.Load().(os.Signal)
	return sig
}

// ExitCode is the exit status of a program that a caught signal stopped:
// 128 + the signal's number, as a shell reports a process killed by it
// (130 for SIGINT).
func (in *Interrupts) ExitCode() int {
	if sig, ok := in.Signal().(syscall.Signal); ok {
		return 128 + int(sig)
	}
	return 130
}

// CheckpointRecorder stops training after a signal with nothing lost:
// after the current step with a checkpoint of it
// (nsrnn.ErrStopAfterCheckpoint), or after the epoch's checkpoint when
// the step was the epoch's last. A signal before the first step stops
// after it, so that there is a checkpoint to resume from.
func (in *Interrupts) CheckpointRecorder() nsrnn.Recorder {
	return nsrnn.RecorderFunc(func(e nsrnn.Event) error {
		if in.Signal() == nil {
			return nil
		}
		in.moved.Store(true)
		switch e.Kind {
		case nsrnn.StepDone:
			if e.Step < e.Steps {
				return nsrnn.ErrStopAfterCheckpoint
			}
		case nsrnn.EpochDone, nsrnn.Checkpointed:
			return nsrnn.ErrStop
		}
		return nil
	})
}

// console is the writer of a training's progress that an interrupt's
// message shares: writes are serialized, and the message clears the bar
// first and mutes it, so that the message is not glued to a stale bar nor
// overwritten by the next one, and every line after it (the epoch's, the
// final message) starts on a line of its own.
type console struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool // w is a terminal: the typed ^C is echoed on its line
	partial  int  // the width of the unfinished line on screen (a bar), 0 after a newline
	muted    bool // after an interrupt: writes without a newline (bars) are dropped
}

// Write writes p, unless the console is muted and p does not end a line
// (a progress bar's redraw or clearing).
func (c *console) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(p) == 0 {
		return 0, nil
	}
	if c.muted && p[len(p)-1] != '\n' {
		return len(p), nil
	}
	n, err := c.w.Write(p)
	if i := bytes.LastIndexByte(p, '\n'); i >= 0 {
		c.partial = 0
		p = p[i+1:]
	}
	if i := bytes.LastIndexByte(p, '\r'); i >= 0 {
		p = p[i+1:]
	}
	c.partial = max(c.partial, utf8.RuneCount(p))
	return n, err
}

// interrupted clears the bar on screen (the line it is on, with the ^C the
// terminal echoed), or ends the line of that ^C, mutes the bar, and
// writes msg on a line of its own.
func (c *console) interrupted(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.muted = true
	switch {
	case c.partial > 0:
		fmt.Fprint(c.w, "\r"+strings.Repeat(" ", c.partial+2)+"\r")
	case c.terminal:
		fmt.Fprintln(c.w)
	}
	c.partial = 0
	fmt.Fprintln(c.w, msg)
}
