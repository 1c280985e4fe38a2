// Command quickstart trains two models on the marked reversal task of
// DuSell & Chiang (ICLR 2022), strings w#wᴿ over {0, 1}, and reports how
// close each gets to the task's true entropy:
//
//   - an RNS-RNN, an LSTM controller with 20 hidden units joined to a
//     renormalizing nondeterministic stack with |Q| = 2 states and |Γ| = 3
//     stack symbols;
//   - an LSTM with 20 hidden units and no stack.
//
// Both are trained with the paper's protocol (Adam with learning rate 0.005,
// gradients clipped to norm 5, batches of 10 strings of one length, the
// learning rate decayed on a validation plateau, early stopping, the best
// parameters kept), but on short strings (lengths 9–21, against 40–80 in the
// paper) and a smaller training set (2,000 strings, against 10,000) for at
// most 40 epochs, so that both train in about 20 seconds on a CPU core.
// The validation set is 200 strings of lengths 9–21. Within this budget
// both models get close to the bound, the RNS-RNN closer: with the
// default seed the RNS-RNN ends about 0.007 nats per symbol above the
// lower bound and the LSTM about 0.015 (the last digits move with the
// machine's rounding, which the stack kernels' summation order changes).
// The paper's protocol is "go run ./experiments/cfl train" (see the
// README).
//
// For each model it prints the best validation cross-entropy (nats per
// symbol, EOS included), the lower bound (the data's true entropy: the
// cross-entropy of the true distribution on the same strings, which no
// model can beat) and their difference, the paper's measure: 0 is
// perfect. Progress lines go to stderr, one per epoch.
//
// Each model's files go to a directory under --out (default
// runs/quickstart): log.jsonl (one JSON record per epoch), checkpoint
// (written after every epoch), model (the best parameters, for
// "go run ./experiments/cfl eval --model DIR --task marked-reversal"),
// run.json (the settings) and summary.json (the finished run's results,
// as "cfl train" writes them, so that "cfl plot" and "cfl select" take
// the run for a finished one). An interrupted quickstart run again with the same
// flags continues from its checkpoints; with other flags it refuses to touch
// the existing directory. Ctrl-C stops after the current batch with a
// checkpoint of it and says so; run the same command again to continue
// (a second Ctrl-C stops at once, losing at most the batches since the
// last checkpoint).
//
// Usage:
//
//	go run ./examples/quickstart [--epochs 40] [--train-size 2000] [--out runs/quickstart] [--seed 1]
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

const (
	learningRate = 0.005
	batchSize    = 10
	minLength    = 9
	maxLength    = 21
	hidden       = 20
)

func main() {
	// The first Ctrl-C (or SIGTERM) asks the training to stop after the
	// current batch, with a checkpoint; the next one ends the process.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		<-sig
		signal.Reset(os.Interrupt, syscall.SIGTERM)
		fmt.Fprintln(os.Stderr, "quickstart: interrupted: stopping after the current batch with a checkpoint (press Ctrl-C again to stop at once)")
		interrupted.Store(true)
	}()
	if err := run(os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

// interrupted is set when the process is asked to stop; the training
// then stops after its current batch (errInterrupted).
var interrupted atomic.Bool

// errInterrupted is the error of a run stopped by interrupted.
var errInterrupted = errors.New("interrupted")

// result is what the quickstart reports for one model.
type result struct {
	kind       string
	params     int
	epochs     int
	bestEpoch  int
	best       float64
	lowerBound float64
	diff       float64
	dir        string
	seconds    float64
}

func run(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("quickstart", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	epochs := fs.Int("epochs", 40, "training epochs")
	trainSize := fs.Int("train-size", 2000, "training strings (lengths 9–21)")
	validSize := fs.Int("valid-size", 200, "validation strings (lengths 9–21)")
	out := fs.String("out", filepath.Join("runs", "quickstart"), "directory for the runs' files, one subdirectory per model")
	seed := fs.Uint64("seed", 1, "seed of the data, the initial parameters and the shuffling")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: go run ./examples/quickstart [flags]\n\ntrains an RNS-RNN and an LSTM on marked reversal and reports how close each gets to the task's true entropy\n\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return nil // the usage is printed; asking for it is no error
		}
		return err
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	case *epochs < 1:
		return fmt.Errorf("--epochs %d must be at least 1", *epochs)
	case *trainSize < 1:
		return fmt.Errorf("--train-size %d must be at least 1", *trainSize)
	case *validSize < 1:
		return fmt.Errorf("--valid-size %d must be at least 1", *validSize)
	case *out == "":
		return errors.New("--out must not be empty")
	}

	task, err := data.NewTask(data.MarkedReversal)
	if err != nil {
		return err
	}
	// The paper's protocol (learning rate, clipping, schedule, early
	// stopping) on shorter strings; the models differ only in Model, so
	// they share the data.
	base := protocol.Settings{
		Task: task.Name(), Grammar: task.Definition(), LR: learningRate, Seed: *seed, Epochs: *epochs,
		TrainSize: *trainSize, ValidSize: *validSize, BatchSize: batchSize, MinLength: minLength, MaxLength: maxLength,
		Clip: 5, Patience: 5, EarlyStop: 10, Decay: 0.9,
	}
	d, err := protocol.SampleRun(task, base)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "marked reversal: %d training and %d validation strings of lengths %d–%d; lower bound %.4f nats per symbol (the validation data's true entropy: no model's cross-entropy can be lower)\n",
		*trainSize, *validSize, minLength, maxLength, d.LowerBound.Entropy)

	model := nsrnn.Config{InputVocab: len(task.Terminals()), OutputVocab: len(task.Vocabulary()), Hidden: hidden}
	lstm, rns := model, model
	lstm.Kind = nsrnn.LSTM
	rns.Kind, rns.States, rns.Symbols = nsrnn.RNS, 2, 3

	var results []result
	for _, cfg := range []nsrnn.Config{rns, lstm} {
		s := base
		s.Model = cfg
		r, err := trainModel(s, filepath.Join(*out, cfg.Kind), d, stderr)
		if errors.Is(err, errInterrupted) {
			return fmt.Errorf("%w: %s stopped with a checkpoint in %s; run the same command again to continue where it stopped", err, cfg.Kind, filepath.Join(*out, cfg.Kind))
		}
		if err != nil {
			return fmt.Errorf("%s: %w", cfg.Kind, err)
		}
		results = append(results, r)
	}

	fmt.Fprintln(stdout, "Marked reversal, best validation cross-entropy in nats per symbol (lower is better). The lower bound is the")
	fmt.Fprintln(stdout, "data's true entropy, the cross-entropy of the distribution that generated it: a difference of 0 is perfect.")
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\tparameters\tbest epoch\tcross-entropy\tlower bound\tdifference\t")
	for _, r := range results {
		fmt.Fprintf(tw, "%s\t%d\t%d of %d\t%.4f\t%.4f\t%.4f\t\n", r.kind, r.params, r.bestEpoch, r.epochs, r.best, r.lowerBound, r.diff)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, r := range results {
		fmt.Fprintf(stdout, "%s: files in %s (%.0f s of training)\n", r.kind, r.dir, r.seconds)
	}
	return nil
}

// trainModel trains one model on d in dir, resuming from its checkpoint when
// the directory holds a run with the same settings.
func trainModel(s protocol.Settings, dir string, d *protocol.RunData, stderr io.Writer) (result, error) {
	if err := prepareDir(dir, s); err != nil {
		return result{}, err
	}
	m, err := nsrnn.New(s.Model, protocol.InitSeed(s.Seed))
	if err != nil {
		return result{}, err
	}
	name := s.Model.Kind
	tc := s.TrainConfig(d.LowerBound.Entropy)
	tc.Checkpoint = filepath.Join(dir, protocol.CheckpointFile)
	verb := "training"
	if _, err := os.Stat(tc.Checkpoint); err == nil {
		verb = "resuming from the checkpoint:"
	}
	fmt.Fprintf(stderr, "%s %s (%d parameters) for %d epochs, files in %s\n", verb, name, m.NumParams(), s.Epochs, dir)
	ran := 0
	tc.Recorder = nsrnn.Recorders{nsrnn.JSONLog(filepath.Join(dir, protocol.LogFile)), nsrnn.RecorderFunc(func(e nsrnn.Event) error {
		// A step's or an epoch's end is checkpointed before training
		// stops (an epoch's checkpoint precedes this event).
		stop := interrupted.Load() && (e.Kind == nsrnn.StepDone || e.Kind == nsrnn.EpochDone)
		switch {
		case e.Kind != nsrnn.EpochDone && stop:
			return nsrnn.ErrStopAfterCheckpoint
		case e.Kind != nsrnn.EpochDone:
			return nil
		}
		r := e.Record
		ran++
		mark := ""
		if r.Improved {
			mark = " *"
		}
		fmt.Fprintf(stderr, "  %s epoch %2d/%d: train %.4f, valid %.4f nats/symbol, %.4f above the bound, lr %.4g (%.1f s)%s\n",
			name, r.Epoch, s.Epochs, r.TrainLoss, r.ValidCrossEntropy, r.ValidDifference, r.LearningRate, r.EpochSeconds, mark)
		if stop {
			return nsrnn.ErrStop
		}
		return nil
	})}
	res, err := nsrnn.Train(m, d.Train, d.Valid, tc)
	if err != nil {
		return result{}, err
	}
	if ran == 0 {
		// Nothing was left to train: say so, so that an instant result is
		// not a surprise.
		fmt.Fprintf(stderr, "  %s: already trained in %s; delete it to train again\n", name, dir)
	}
	if !res.Finished && interrupted.Load() {
		return result{}, errInterrupted
	}
	if !res.Finished {
		return result{}, fmt.Errorf("training in %s stopped after epoch %d of %d without finishing", dir, res.Epochs, s.Epochs)
	}
	if err := m.Save(filepath.Join(dir, protocol.ModelFile)); err != nil {
		return result{}, err
	}
	// The summary of a finished run, as "cfl train" writes it, so that
	// "cfl plot" and "cfl select" see the run as finished.
	sum := protocol.NewSummary(s.Task, m, res, d.LowerBound.Entropy)
	if err := protocol.WriteJSON(filepath.Join(dir, protocol.SummaryFile), sum); err != nil {
		return result{}, err
	}
	return result{
		kind: name, params: m.NumParams(), epochs: res.Epochs, bestEpoch: res.BestEpoch,
		best: res.BestValidCrossEntropy, lowerBound: res.LowerBound, diff: res.BestValidDifference,
		dir: dir, seconds: res.ElapsedSeconds,
	}, nil
}

// prepareDir creates dir and writes run.json, or checks that the run in an
// existing dir has the same settings, so that its checkpoint is resumed.
func prepareDir(dir string, s protocol.Settings) error {
	err := protocol.PrepareRun(dir, s, true)
	var se *protocol.SettingsError
	switch {
	case errors.As(err, &se):
		return fmt.Errorf("%s holds a run with other settings (%s); delete it or choose another --out", dir, se.Path)
	case errors.Is(err, protocol.ErrNoRun):
		return fmt.Errorf("%s exists and is not a quickstart run; delete it or choose another --out", dir)
	}
	return err
}
