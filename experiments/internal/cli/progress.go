package cli

import (
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"github.com/nsrnn/nsrnn/nsrnn"
)

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Progress returns a training recorder that writes to w:
//
//   - when a run resumes, the epoch it continues from;
//   - after every epoch, one line (EpochLine): the epoch, the training
//     loss and validation cross-entropy in nats per symbol, the
//     difference from the lower bound, the learning rate, the elapsed
//     time, and "best so far" when the epoch is the best yet;
//   - with bar (on a terminal), also a progress bar over the current
//     epoch's batches, whose time estimate is the epoch's: the number of
//     epochs is not known in advance (early stopping), so nothing
//     estimates the whole run. The bar is cleared before each epoch's
//     line, so that the lines stay.
//
// The lines are written whether or not w is a terminal, so that a log
// file (Slurm, nohup, 2>file) gets one line per epoch.
func Progress(w io.Writer, label string, bar bool) nsrnn.Recorder {
	var pb *progressbar.ProgressBar
	return nsrnn.RecorderFunc(func(e nsrnn.Event) error {
		switch e.Kind {
		case nsrnn.Started:
			if e.Resumed {
				fmt.Fprintln(w, ResumeLine(label, e))
			}
		case nsrnn.StepDone:
			if !bar {
				return nil
			}
			if pb == nil {
				pb = progressbar.NewOptions(e.Steps,
					progressbar.OptionSetWriter(w),
					progressbar.OptionShowCount(),
					progressbar.OptionSetPredictTime(true),
					progressbar.OptionShowIts(),
					progressbar.OptionSetItsString("batch"),
					progressbar.OptionThrottle(200*time.Millisecond),
					progressbar.OptionClearOnFinish())
				_ = pb.Set(e.Step - 1)
			}
			pb.Describe(fmt.Sprintf("%s epoch %d, loss %.3f nats/symbol, this epoch:", label, e.Epoch, e.Loss))
			_ = pb.Add(1)
		case nsrnn.EpochDone:
			if pb != nil {
				_ = pb.Clear()
				pb = nil
			}
			fmt.Fprintln(w, EpochLine(label, e.MaxEpochs, *e.Record))
		}
		return nil
	})
}

// ResumeLine is the line Progress writes when a run resumes (e is the
// Started event): "<label>: resuming at epoch N …".
func ResumeLine(label string, e nsrnn.Event) string {
	s := fmt.Sprintf("%s: resuming at epoch %d of at most %d", label, e.Epoch, e.MaxEpochs)
	if e.Step > 0 {
		s += fmt.Sprintf(", batch %d of %d", e.Step+1, e.Steps)
	}
	return s + fmt.Sprintf(" (%s done, from the checkpoint)", Count(e.Epoch-1, "epoch"))
}

// EpochLine is the line Progress writes after an epoch, e.g.
//
//	rns epoch 3 of at most 200: cross-entropy in nats per symbol: train 0.5123, validation 0.4567, +0.0731 from the lower bound; lr 0.005; 3m28s elapsed; best so far
//
// or, for a run without a lower bound (nsrnn.EpochRecord.NoLowerBound),
// "validation 0.4567, perplexity 1.579 (no lower bound)". The training loss is the epoch's mean over its batches, with the
// parameters changing along; the validation cross-entropy is measured
// after the epoch.
func EpochLine(label string, maxEpochs int, r nsrnn.EpochRecord) string {
	mark := ""
	if r.Improved {
		mark = "; best so far"
	}
	elapsed := time.Duration(r.ElapsedSeconds * float64(time.Second)).Round(time.Second)
	sign := ""
	if !(r.ValidDifference < 0) {
		sign = "+"
	}
	bound := sign + Nats(r.ValidDifference) + " from the lower bound"
	if r.NoLowerBound {
		bound = fmt.Sprintf("perplexity %.4g (no lower bound)", math.Exp(r.ValidCrossEntropy))
	}
	return fmt.Sprintf("%s epoch %d of at most %d: cross-entropy in nats per symbol: train %s, validation %s, %s; lr %.4g; %s elapsed%s",
		label, r.Epoch, maxEpochs, Nats(r.TrainLoss), Nats(r.ValidCrossEntropy), bound, r.LearningRate, elapsed, mark)
}

// Nats formats a cross-entropy: four decimals, or four significant
// digits with an exponent for a diverged run's (1e300 would print as 301
// digits).
func Nats(x float64) string {
	if math.Abs(x) >= 1e5 {
		return fmt.Sprintf("%.4g", x)
	}
	return fmt.Sprintf("%.4f", x)
}
