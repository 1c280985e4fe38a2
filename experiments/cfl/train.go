package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/experiment"
	"github.com/nsrnn/nsrnn/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
)

func init() {
	prog.Register("train", "train a model on a task (the paper's protocol by default)", runTrain)
}

// protocolFlags registers the flags of the training protocol on fs, with
// the given defaults for the learning rate (0: required), the number of
// epochs and early stopping, and returns the --lengths flag for
// checkProtocol.
func protocolFlags(fs *pflag.FlagSet, s *experiment.Settings, lr float64, epochs, earlyStop int) *string {
	lrHelp := "Adam's initial learning rate"
	if lr == 0 {
		lrHelp += " (required; the paper searches 0.01, 0.005, 0.001, 0.0005)"
	}
	fs.Float64Var(&s.LR, "lr", lr, lrHelp)
	fs.Uint64Var(&s.Seed, "seed", 1, "seed of the data, the initial parameters and the shuffling")
	fs.IntVar(&s.Epochs, "epochs", epochs, "maximum number of epochs")
	fs.IntVar(&s.TrainSize, "train-size", 10000, "training strings")
	fs.IntVar(&s.ValidSize, "valid-size", 1000, "validation strings")
	fs.IntVar(&s.BatchSize, "batch-size", 10, "strings per batch (one length per batch)")
	lengths := fs.String("lengths", "40:80", "MIN:MAX lengths of training and validation strings")
	fs.Float64Var(&s.Clip, "clip", 5, "gradient-norm clipping threshold")
	fs.IntVar(&s.Patience, "patience", 5, "epochs without improvement before the learning rate decays")
	fs.Float64Var(&s.Decay, "decay", 0.9, "learning-rate decay factor")
	fs.IntVar(&s.EarlyStop, "early-stop", earlyStop, "epochs without improvement before training stops")
	return lengths
}

// checkProtocol parses the lengths into s and checks the protocol flags
// that protocolFlags registered, naming the flag at fault.
func checkProtocol(s *experiment.Settings, lengths string) error {
	var err error
	if s.MinLength, s.MaxLength, err = parseLengths(lengths); err != nil {
		return fmt.Errorf("--lengths: %w", err)
	}
	switch {
	case s.LR <= 0:
		return fmt.Errorf("--lr is required and must be positive")
	case s.Epochs < 1:
		return fmt.Errorf("--epochs %d must be at least 1", s.Epochs)
	case s.TrainSize < 1:
		return fmt.Errorf("--train-size %d must be at least 1", s.TrainSize)
	case s.ValidSize < 1:
		return fmt.Errorf("--valid-size %d must be at least 1", s.ValidSize)
	case s.BatchSize < 1:
		return fmt.Errorf("--batch-size %d must be at least 1", s.BatchSize)
	case s.Patience < 1:
		return fmt.Errorf("--patience and --early-stop must be at least 1")
	case s.EarlyStop < 0:
		return fmt.Errorf("--early-stop %d must not be negative", s.EarlyStop)
	case s.Decay <= 0 || s.Decay > 1:
		return fmt.Errorf("--decay %g must be in (0, 1]", s.Decay)
	}
	return nil
}

func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("train", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	task, grammar, mf := taskModelFlags(fs)
	var s experiment.Settings
	lengths := protocolFlags(fs, &s, 0, 200, 10)
	out := fs.String("out", "", "output directory (required)")
	resume := fs.Bool("resume", false, "continue the interrupted run in --out")
	quiet := fs.Bool("quiet", false, "no progress bar")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if mf.Kind != "" && !slices.Contains(nsrnn.Kinds, mf.Kind) {
		return fmt.Errorf("--model %q: unknown model (want one of %s)", mf.Kind, strings.Join(nsrnn.Kinds, ", "))
	}
	t, cfg, err := taskModel(*task, *grammar, mf)
	if err != nil {
		return err
	}
	s.Task, s.Grammar, s.Model = t.Name(), t.Definition(), cfg
	if err := checkProtocol(&s, *lengths); err != nil {
		return err
	}
	switch {
	case s.EarlyStop < 1:
		return fmt.Errorf("--patience and --early-stop must be at least 1")
	case *out == "":
		return fmt.Errorf("--out is required")
	}
	if err := prepareRunDir(*out, s, *resume); err != nil {
		return err
	}

	d, err := experiment.SampleRun(t, s)
	if err != nil {
		return err
	}
	m, err := nsrnn.New(cfg, experiment.InitSeed(s.Seed))
	if err != nil {
		return err
	}
	tc := s.TrainConfig(d.LowerBound.Entropy)
	tc.Checkpoint = filepath.Join(*out, experiment.CheckpointFile)
	tc.Recorder = nsrnn.Recorders{nsrnn.JSONLog(filepath.Join(*out, experiment.LogFile))}
	if !*quiet {
		tc.Recorder = append(tc.Recorder.(nsrnn.Recorders), cli.Progress(stderr, cfg.Kind, cli.IsTerminal(stderr)))
	}
	fmt.Fprintf(stderr, "training %s on %s: %d parameters, %d training and %d validation strings, lower bound %.4f nats\n",
		cfg.Kind, taskLabel(t.Name(), t.Definition()), m.NumParams(), s.TrainSize, s.ValidSize, d.LowerBound.Entropy)
	res, err := nsrnn.Train(m, d.Train, d.Valid, tc)
	if err != nil {
		return err
	}
	if err := m.Save(filepath.Join(*out, experiment.ModelFile)); err != nil {
		return err
	}
	sum := experiment.NewSummary(t.Name(), m, res, d.LowerBound.Entropy)
	if err := experiment.WriteJSON(filepath.Join(*out, experiment.SummaryFile), sum); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "best epoch %d of %d: validation cross-entropy %.4f, %.4f nats above the lower bound; files in %s\n",
		res.BestEpoch, res.Epochs, res.BestValidCrossEntropy, res.BestValidDifference, *out)
	return nil
}

// prepareRunDir creates the run directory, or checks that a resumed run's
// settings match the saved ones, with errors that name the flags. An
// existing non-empty directory is never overwritten without --resume.
func prepareRunDir(dir string, s experiment.Settings, resume bool) error {
	err := experiment.PrepareRun(dir, s, resume)
	var se *experiment.SettingsError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, experiment.ErrNotEmpty):
		return fmt.Errorf("--out %s exists and is not empty; use --resume to continue its run, or choose another directory", dir)
	case errors.Is(err, experiment.ErrNoRun):
		return fmt.Errorf("--resume: %s holds no training run (no %s); choose another --out", dir, experiment.RunFile)
	case errors.As(err, &se):
		return fmt.Errorf("--resume: the flags differ from those of the run in %s (%s): %s", dir, se.Path, strings.Join(se.Diffs, "; "))
	}
	return fmt.Errorf("--out: %w", err)
}
