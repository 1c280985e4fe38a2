package cli

import (
	"fmt"
	"io"
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

// Progress returns a training recorder that writes to w one line per epoch
// (epoch, training loss and validation cross-entropy in nats per symbol,
// the difference from the lower bound, learning rate, elapsed time, and a
// * when the epoch is the best so far), a line when a run resumes, and on
// a terminal (bar) also a progress bar over the epoch's steps.
func Progress(w io.Writer, label string, bar bool) nsrnn.Recorder {
	var pb *progressbar.ProgressBar
	return nsrnn.RecorderFunc(func(e nsrnn.Event) error {
		switch e.Kind {
		case nsrnn.Started:
			if e.Resumed {
				fmt.Fprintf(w, "%s: resuming at epoch %d (step %d of %d)\n", label, e.Epoch, e.Step, e.Steps)
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
			pb.Describe(fmt.Sprintf("%s epoch %d/%d loss %.3f", label, e.Epoch, e.MaxEpochs, e.Loss))
			_ = pb.Add(1)
		case nsrnn.EpochDone:
			if pb != nil {
				_ = pb.Clear()
				pb = nil
			}
			r := e.Record
			mark := ""
			if r.Improved {
				mark = " *"
			}
			fmt.Fprintf(w, "%s epoch %3d/%d: train %.4f, valid %.4f nats/symbol (%+.4f from the bound), lr %.4g, %s%s\n",
				label, r.Epoch, e.MaxEpochs, r.TrainLoss, r.ValidCrossEntropy, r.ValidDifference, r.LearningRate,
				(time.Duration(r.ElapsedSeconds * float64(time.Second))).Round(time.Second), mark)
		}
		return nil
	})
}
