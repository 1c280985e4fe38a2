package cli

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nsrnn/nsrnn/nsrnn"
)

func TestScreenLines(t *testing.T) {
	got := Screen("a\n\rbar 50%\r       \rmsg\nline\n")
	want := []string{"a", "msg", "line"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("screen = %q, want %q", got, want)
	}
}

// TestConsoleMutesBar checks the console alone: a bar is cleared by the
// message, later redraws are dropped and lines pass.
func TestConsoleMutesBar(t *testing.T) {
	var out bytes.Buffer
	c := &console{w: &out}
	c.Write([]byte("first line\n"))
	c.Write([]byte("\rbar 10% |#     |"))
	c.Write([]byte("\rbar 50% |###   |"))
	c.interrupted("stopping")
	c.Write([]byte("\rbar 60% |####  |"))
	c.Write([]byte("epoch line\n"))
	got := strings.Join(Screen(out.String()), "|")
	if want := "first line|stopping|epoch line"; got != want {
		t.Errorf("screen %q, want %q (output %q)", got, want, out.String())
	}
	// On a terminal without a bar, the message ends the line of the
	// echoed ^C.
	out.Reset()
	c = &console{w: &out, terminal: true}
	c.Write([]byte("line\n"))
	out.WriteString("^C")
	c.interrupted("stopping")
	if got := strings.Join(Screen(out.String()), "|"); got != "line|^C|stopping" {
		t.Errorf("screen %q after ^C", got)
	}
}

// forcedExit catches interrupts with a short StopGrace and exit recorded,
// sends one, then runs during (the training's part); it returns the exit
// code (−1: none), whether the clean-up ran, and what the console shows.
func forcedExit(t *testing.T, during func(in *Interrupts)) (code int, cleaned bool, shown string) {
	t.Helper()
	code = -1
	exited := make(chan int, 1)
	defer func(g time.Duration, e func(int)) { StopGrace, exit = g, e }(StopGrace, exit)
	StopGrace = 50 * time.Millisecond
	exit = func(c int) { exited <- c }
	sigs := make(chan chan<- os.Signal, 1)
	var out syncBuffer
	in := CatchInterrupts(&out, false, func(ch chan<- os.Signal) { sigs <- ch }, "stopping after the current batch")
	in.OnForcedExit(func() string { cleaned = true; return "resume with: x --resume" })
	(<-sigs) <- syscall.SIGTERM
	for in.Signal() == nil {
		time.Sleep(time.Millisecond)
	}
	during(in)
	select {
	case code = <-exited:
	case <-time.After(20 * StopGrace):
	}
	in.Stop()
	return code, cleaned, out.String()
}

// A batch that has not ended StopGrace after the signal is not waited
// for: the clean-up runs and the program exits with the signal's status,
// saying why and what to do next. A batch that ends in time (a training
// event after the signal), or a training that returns (Stop), is waited
// for as before.
func TestInterruptForcedExit(t *testing.T) {
	code, cleaned, shown := forcedExit(t, func(*Interrupts) {})
	if code != 128+int(syscall.SIGTERM) || !cleaned {
		t.Errorf("no event after the signal: exit code %d, clean-up %v; want %d and true", code, cleaned, 128+int(syscall.SIGTERM))
	}
	for _, w := range []string{"terminated: stopping after the current batch", "has not ended 50ms after the signal: exiting without it; resume with: x --resume"} {
		if !strings.Contains(shown, w) {
			t.Errorf("the console shows %q, want %q", shown, w)
		}
	}
	code, cleaned, _ = forcedExit(t, func(in *Interrupts) {
		if err := in.CheckpointRecorder().Record(nsrnn.Event{Kind: nsrnn.StepDone, Epoch: 1, Step: 1, Steps: 3}); !errors.Is(err, nsrnn.ErrStopAfterCheckpoint) {
			t.Errorf("the step after the signal: %v, want ErrStopAfterCheckpoint", err)
		}
	})
	if code != -1 || cleaned {
		t.Errorf("a batch ended after the signal: exit code %d, clean-up %v; want no forced exit", code, cleaned)
	}
	code, cleaned, _ = forcedExit(t, func(in *Interrupts) { in.Stop() })
	if code != -1 || cleaned {
		t.Errorf("training returned after the signal: exit code %d, clean-up %v; want no forced exit", code, cleaned)
	}
}

// syncBuffer is a buffer written by the interrupt's goroutine and read by
// the test.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// blockingWriter holds every write until release is closed, after saying
// on entered that one began.
type blockingWriter struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (w *blockingWriter) Write(p []byte) (int, error) {
	w.once.Do(func() { close(w.entered) })
	<-w.release
	return len(p), nil
}

// Stop returns only once the signal's message is written, so that the
// program's own writes after it (its last lines, or a test reading what
// was written) never race with the message.
func TestInterruptStopWaitsForTheMessage(t *testing.T) {
	w := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
	sigs := make(chan chan<- os.Signal, 1)
	in := CatchInterrupts(w, false, func(ch chan<- os.Signal) { sigs <- ch }, "stopping")
	(<-sigs) <- syscall.SIGTERM
	<-w.entered // the message is being written
	stopped := make(chan struct{})
	go func() { in.Stop(); close(stopped) }()
	select {
	case <-stopped:
		t.Error("Stop returned while the signal's message was still being written")
	case <-time.After(50 * time.Millisecond):
	}
	close(w.release)
	<-stopped
}
