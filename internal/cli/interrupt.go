package cli

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"

	"github.com/nsrnn/nsrnn/nsrnn"
)

// Interrupts catches SIGINT and SIGTERM during training: the first one
// asks training to stop (see Recorder and CheckpointRecorder); a second
// one kills the program.
type Interrupts struct {
	ch   chan os.Signal
	done chan struct{}
	got  atomic.Value // os.Signal
}

// NotifySignals registers ch for SIGINT and SIGTERM: the notify function
// of CatchInterrupts outside tests, which replace it to send signals of
// their own.
func NotifySignals(ch chan<- os.Signal) { signal.Notify(ch, os.Interrupt, syscall.SIGTERM) }

// CatchInterrupts starts catching the signals that notify registers
// (NotifySignals); at the first, it writes the signal and stopping (what
// happens now, e.g. "stopping after the current batch") to stderr. The
// caller must call Stop.
func CatchInterrupts(stderr io.Writer, notify func(chan<- os.Signal), stopping string) *Interrupts {
	in := &Interrupts{ch: make(chan os.Signal, 1), done: make(chan struct{})}
	notify(in.ch)
	go func() {
		select {
		case sig := <-in.ch:
			in.got.Store(sig)
			// Back to the default: a second signal kills.
			signal.Stop(in.ch)
			fmt.Fprintf(stderr, "\n%v: %s; interrupt again to kill\n", sig, stopping)
		case <-in.done:
		}
	}()
	return in
}

// Stop stops catching signals.
func (in *Interrupts) Stop() {
	signal.Stop(in.ch)
	close(in.done)
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

// Recorder stops training (nsrnn.ErrStop) at the first event after a
// signal: what the current epoch did since its last checkpoint is lost.
func (in *Interrupts) Recorder() nsrnn.Recorder {
	return nsrnn.RecorderFunc(func(nsrnn.Event) error {
		if in.Signal() != nil {
			return nsrnn.ErrStop
		}
		return nil
	})
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
