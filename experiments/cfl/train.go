package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/internal/atomicfile"
	"github.com/nsrnn/nsrnn/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
)

func init() {
	prog.Register("train", "train a model on a task (the paper's protocol by default)", runTrain)
}

// Files in a training run's directory.
const (
	runFile        = "run.json"
	logFile        = "log.jsonl"
	checkpointFile = "checkpoint"
	modelFile      = "model"
	summaryFile    = "summary.json"
)

// runSettings is everything that determines a training run; it is saved in
// run.json and must match when a run is resumed.
type runSettings struct {
	Task      string       `json:"task"`
	Model     nsrnn.Config `json:"model"`
	LR        float64      `json:"lr"`
	Seed      uint64       `json:"seed"`
	Epochs    int          `json:"epochs"`
	TrainSize int          `json:"train_size"`
	ValidSize int          `json:"valid_size"`
	BatchSize int          `json:"batch_size"`
	MinLength int          `json:"min_length"`
	MaxLength int          `json:"max_length"`
	Clip      float64      `json:"clip"`
	Patience  int          `json:"patience"`
	EarlyStop int          `json:"early_stop"`
	Decay     float64      `json:"decay"`
}

// protocolFlags registers the flags of the training protocol on fs, with
// the given defaults for the learning rate (0: required), the number of
// epochs and early stopping, and returns the --lengths flag for
// checkProtocol.
func protocolFlags(fs *pflag.FlagSet, s *runSettings, lr float64, epochs, earlyStop int) *string {
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
func (s *runSettings) checkProtocol(lengths string) error {
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

// summary is summary.json.
type summary struct {
	Task                      string       `json:"task"`
	Model                     nsrnn.Config `json:"model"`
	Parameters                int          `json:"parameters"`
	Epochs                    int          `json:"epochs"`
	BestEpoch                 int          `json:"best_epoch"`
	BestValidCrossEntropy     float64      `json:"best_valid_cross_entropy"`
	ValidLowerBound           float64      `json:"valid_lower_bound"`
	BestValidCrossEntropyDiff float64      `json:"best_valid_cross_entropy_diff"`
	ElapsedSeconds            float64      `json:"elapsed_seconds"`
	SecondsPerEpoch           float64      `json:"seconds_per_epoch"`
}

// Seeds derived from --seed, one per source of randomness.
func dataSeed(s uint64) uint64    { return s }
func initSeed(s uint64) uint64    { return s ^ 0x5eed0001 }
func shuffleSeed(s uint64) uint64 { return s ^ 0x5eed0002 }

func runTrain(args []string, stdout, stderr io.Writer) error {
	fs := pflag.NewFlagSet("train", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	task, mf := taskModelFlags(fs)
	var s runSettings
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
	t, cfg, err := taskModel(*task, mf)
	if err != nil {
		return err
	}
	s.Task, s.Model = t.Name(), cfg
	if err := s.checkProtocol(*lengths); err != nil {
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

	trainSet, validSet, lb, err := sampleRun(t, s.Seed, s.TrainSize, s.ValidSize, s.BatchSize, s.MinLength, s.MaxLength)
	if err != nil {
		return err
	}
	m, err := nsrnn.New(cfg, initSeed(s.Seed))
	if err != nil {
		return err
	}
	tc := nsrnn.TrainConfig{
		LR: s.LR, Clip: s.Clip, Schedule: &nsrnn.Plateau{Factor: s.Decay, Patience: s.Patience - 1}, EarlyStop: s.EarlyStop,
		MaxEpochs: s.Epochs, Seed: shuffleSeed(s.Seed), LowerBound: lb.Entropy,
		Checkpoint: filepath.Join(*out, checkpointFile),
		Recorder:   nsrnn.Recorders{nsrnn.JSONLog(filepath.Join(*out, logFile))},
	}
	if !*quiet {
		tc.Recorder = append(tc.Recorder.(nsrnn.Recorders), cli.Progress(stderr, cfg.Kind, cli.IsTerminal(stderr)))
	}
	fmt.Fprintf(stderr, "training %s on %s: %d parameters, %d training and %d validation strings, lower bound %.4f nats\n",
		cfg.Kind, t.Name(), m.NumParams(), s.TrainSize, s.ValidSize, lb.Entropy)
	res, err := nsrnn.Train(m, trainSet, validSet, tc)
	if err != nil {
		return err
	}
	if err := m.Save(filepath.Join(*out, modelFile)); err != nil {
		return err
	}
	sum := summary{
		Task: t.Name(), Model: cfg, Parameters: m.NumParams(), Epochs: res.Epochs, BestEpoch: res.BestEpoch,
		BestValidCrossEntropy: res.BestValidCrossEntropy, ValidLowerBound: lb.Entropy,
		BestValidCrossEntropyDiff: res.BestValidDifference, ElapsedSeconds: res.ElapsedSeconds,
		SecondsPerEpoch: res.ElapsedSeconds / float64(max(res.Epochs, 1)),
	}
	if err := writeJSON(filepath.Join(*out, summaryFile), sum); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "best epoch %d of %d: validation cross-entropy %.4f, %.4f nats above the lower bound; files in %s\n",
		res.BestEpoch, res.Epochs, res.BestValidCrossEntropy, res.BestValidDifference, *out)
	return nil
}

// prepareRunDir creates the run directory, or checks that a resumed run's
// settings match the saved ones. An existing non-empty directory is never
// overwritten without --resume.
func prepareRunDir(dir string, s runSettings, resume bool) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	case err != nil:
		return fmt.Errorf("--out: %w", err)
	case len(entries) > 0 && !resume:
		return fmt.Errorf("--out %s exists and is not empty; use --resume to continue its run, or choose another directory", dir)
	}
	path := filepath.Join(dir, runFile)
	if resume {
		b, err := os.ReadFile(path)
		if err == nil {
			var saved runSettings
			if err := json.Unmarshal(b, &saved); err != nil {
				return fmt.Errorf("%s: %w", path, err)
			}
			if !reflect.DeepEqual(saved, s) {
				return fmt.Errorf("--resume: the flags differ from those of the run in %s (%s): %s", dir, path, settingsDiff(saved, s))
			}
			return nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return err
		} else if len(entries) > 0 {
			return fmt.Errorf("--resume: %s holds no training run (no %s); choose another --out", dir, runFile)
		}
	}
	return writeJSON(path, s)
}

// settingsDiff names the settings that differ between a saved run and the
// flags given, as "name: saved → given" with the names of run.json.
func settingsDiff(saved, given runSettings) string {
	flat := func(s runSettings) map[string]string {
		b, _ := json.Marshal(s)
		var m map[string]json.RawMessage
		json.Unmarshal(b, &m)
		out := map[string]string{}
		for k, v := range m {
			out[k] = string(v)
		}
		return out
	}
	a, b := flat(saved), flat(given)
	var diffs []string
	for k, v := range a {
		if b[k] != v {
			diffs = append(diffs, fmt.Sprintf("%s: %s → %s", k, v, b[k]))
		}
	}
	slices.Sort(diffs)
	return strings.Join(diffs, "; ")
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteBytes(path, append(b, '\n'))
}

// sampleRun draws a run's training and validation batches (one length per
// batch) from the task, deterministically from seed, and computes the
// validation set's lower bound. train, actions and cost all use it, so that
// the same seed gives them the same data.
func sampleRun(t *data.Task, seed uint64, trainSize, validSize, batchSize, minLen, maxLen int) (train, valid []nsrnn.Batch, lb data.LowerBound, err error) {
	g := t.Grammar()
	rng := rand.New(rand.NewPCG(dataSeed(seed), 1))
	tr, err := data.SampleBatches(g, trainSize, batchSize, minLen, maxLen, rng)
	if err != nil {
		return nil, nil, lb, err
	}
	va, err := data.SampleBatches(g, validSize, batchSize, minLen, maxLen, rng)
	if err != nil {
		return nil, nil, lb, err
	}
	if lb, err = data.ComputeLowerBound(g, data.Flatten(va), minLen, maxLen); err != nil {
		return nil, nil, lb, err
	}
	return batches(tr), batches(va), lb, nil
}

func batches(bs [][][]int) []nsrnn.Batch {
	out := make([]nsrnn.Batch, len(bs))
	for i, b := range bs {
		out[i] = b
	}
	return out
}
