package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// screenBuffer is what a terminal shows, written by the training and by
// the goroutine that catches the interrupt while the test reads it.
type screenBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *screenBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *screenBuffer) WriteString(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf.WriteString(s)
}

func (b *screenBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// interruptedTraining feeds a progress recorder with its bar on, as on a
// terminal, and the interrupts' recorder, the events of an epoch of 4
// batches, with an interrupt after batch signalAt: it returns what the
// terminal shows, with the final message that the program prints after
// training stopped, and the events that stopped training.
func interruptedTraining(t *testing.T, signalAt int) (shown []string, stoppedAt string) {
	t.Helper()
	sigs := make(chan chan<- os.Signal, 1)
	defer func(f func(chan<- os.Signal)) { notifySignals = f }(notifySignals)
	notifySignals = func(ch chan<- os.Signal) { sigs <- ch }
	var out screenBuffer
	in := catchInterrupts(&out, true)
	defer in.Stop()
	ch := <-sigs
	rec := nsrnn.Recorders{cli.Progress(in.Console(), "rns", true), in.CheckpointRecorder()}
	step := func(k nsrnn.EventKind, s int) error {
		e := nsrnn.Event{Kind: k, Epoch: 2, Step: s, Steps: 4, MaxEpochs: 6, Loss: 0.5}
		if k == nsrnn.EpochDone {
			e.Record = &nsrnn.EpochRecord{Epoch: 2, TrainLoss: 0.5, ValidCrossEntropy: 0.4}
		}
		return rec.Record(e)
	}
	for s := 1; s <= 4; s++ {
		// The bar is redrawn at most every 200 ms.
		time.Sleep(210 * time.Millisecond)
		if err := step(nsrnn.StepDone, s); err != nil {
			if !errors.Is(err, nsrnn.ErrStop) {
				t.Fatal(err)
			}
			stoppedAt = "batch"
			break
		}
		if s == signalAt {
			if !strings.Contains(out.String(), "|") {
				t.Fatalf("no progress bar on screen before the interrupt: %q", out.String())
			}
			ch <- os.Interrupt
			for in.Signal() == nil || !strings.Contains(out.String(), "stopping") {
				time.Sleep(time.Millisecond)
			}
		}
	}
	if stoppedAt == "" {
		if err := step(nsrnn.EpochDone, 4); errors.Is(err, nsrnn.ErrStop) {
			stoppedAt = "epoch"
		} else {
			t.Fatalf("the epoch's end after an interrupt: %v, want ErrStop", err)
		}
	}
	// What main prints after Train returns: the error of resumeError.
	out.WriteString("cfl: epochs 1–2 finished and checkpointed in runs/x\ninterrupted; resume with: cfl train --resume\n")
	return cli.Screen(out.String()), stoppedAt
}

// TestInterruptClearsBar interrupts training in the middle of an epoch:
// the progress bar is cleared and the interrupt's message written on a
// line of its own, the bar is not drawn again, and the final message does
// not follow a stale bar.
func TestInterruptClearsBar(t *testing.T) {
	shown, stopped := interruptedTraining(t, 2)
	want := []string{
		"interrupt: stopping after the current batch",
		"cfl: epochs 1–2 finished and checkpointed in runs/x",
		"interrupted; resume with: cfl train --resume",
	}
	if stopped != "batch" || len(shown) != len(want) {
		t.Fatalf("stopped at the %s; screen:\n%s", stopped, strings.Join(shown, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(shown[i], w) {
			t.Errorf("screen line %d = %q, want %q…", i+1, shown[i], w)
		}
	}
}

// TestInterruptOnLastBatch interrupts training during the last batch of an
// epoch: the epoch is validated and checkpointed (its EpochDone event
// reaches the recorders) and its line printed, after the message.
func TestInterruptOnLastBatch(t *testing.T) {
	shown, stopped := interruptedTraining(t, 4)
	if stopped != "epoch" {
		t.Fatalf("stopped at the %s, want the end of the epoch; screen:\n%s", stopped, strings.Join(shown, "\n"))
	}
	if len(shown) != 4 || !strings.HasPrefix(shown[0], "interrupt: stopping") ||
		!strings.HasPrefix(shown[1], "rns epoch 2 of at most 6: ") || !strings.HasPrefix(shown[2], "cfl: epochs 1–2") {
		t.Errorf("screen:\n%s", strings.Join(shown, "\n"))
	}
}

// TestResumeErrorSaysWhatWasKept: the message of an interrupted run names
// the finished epochs and the batches of the epoch under way that its
// checkpoint holds, and the command that resumes it (the same one with
// --resume, given once).
func TestResumeErrorSaysWhatWasKept(t *testing.T) {
	defer func(f func(chan<- os.Signal)) { notifySignals = f }(notifySignals)
	notifySignals = func(chan<- os.Signal) {}
	in := catchInterrupts(io.Discard, false)
	defer in.Stop()
	args := []string{"--task", "dyck", "--out", "runs/x", "--resume"}
	for _, c := range []struct {
		epochs int
		at     stopPoint
		want   string
	}{
		{0, stopPoint{1, 3, 10}, "epoch 1 up to batch 3 of 10 checkpointed in runs/x"},
		{1, stopPoint{2, 9, 10}, "epoch 1 finished, and epoch 2 up to batch 9 of 10, checkpointed in runs/x"},
		{4, stopPoint{5, 1, 10}, "epochs 1–4 finished, and epoch 5 up to batch 1 of 10, checkpointed in runs/x"},
		{4, stopPoint{}, "epochs 1–4 finished and checkpointed in runs/x"},
		{2, stopPoint{3, 10, 10}, "epochs 1–2 finished and checkpointed in runs/x"}, // an epoch's last batch: not within it
		{1, stopPoint{}, "epoch 1 finished and checkpointed in runs/x"},
		{0, stopPoint{}, "no epoch finished yet"},
	} {
		err := resumeError(in, "train", args, c.epochs, c.at, "runs/x")
		var ee *cli.ExitError
		if !errors.As(err, &ee) || ee.Code != 130 {
			t.Fatalf("%+v: %v, want an exit error with status 130", c, err)
		}
		msg := err.Error()
		if want := c.want + "\ninterrupted; resume with: "; !strings.HasPrefix(msg, want) {
			t.Errorf("%d epochs, %+v: %q, want it to begin %q", c.epochs, c.at, msg, want)
		}
		if !strings.HasSuffix(msg, " train --task dyck --out runs/x --resume") || strings.Count(msg, "--resume") != 1 {
			t.Errorf("%d epochs, %+v: resume command in %q", c.epochs, c.at, msg)
		}
	}
}
