package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
	"github.com/nsrnn/nsrnn/stacks"
	"github.com/spf13/pflag"
)

func init() {
	prog.Register("cost", "estimate seconds per epoch and peak memory of every model on a task (marked reversal by default, as appendix C), a grammar file or your own strings", runCost)
}

// The paper's protocol, to which cost scales its measurements.
const (
	paperTrainSize = 10000
	paperValidSize = 1000
)

// costSettings are the measurement's settings, shared by every model.
type costSettings struct {
	// TrainSize and ValidSize are the strings of the measured subset, and
	// EpochTrainSize and EpochValidSize those of the epoch it is scaled
	// to: the paper's protocol for a task or a grammar file, the files'
	// strings for the user's strings.
	TrainSize      int `json:"train_size"`
	ValidSize      int `json:"valid_size"`
	EpochTrainSize int `json:"epoch_train_size"`
	EpochValidSize int `json:"epoch_valid_size"`
	MinLength      int `json:"min_length"`
	MaxLength      int `json:"max_length"`
	BatchSize      int `json:"batch_size"`
	Hidden         int `json:"hidden"`
	States         int `json:"states"`
	Symbols        int `json:"symbols"`
	StackEmbedding int `json:"stack_embedding"`
	// Bottom and PushHiddenState are the 2023 release's variants of the
	// models that have them (--bottom fixed, --push-hidden-state).
	Bottom          stacks.Bottom `json:"bottom,omitempty"`
	PushHiddenState bool          `json:"push_hidden_state,omitempty"`
	Epochs          int           `json:"epochs"`
	Seed            uint64        `json:"seed"`
	// Workers is --workers, the parts of every model's batches; 0 when
	// the flag was not given, each model's then being train's default.
	Workers int `json:"workers"`
	// Device is the device the models computed on (--device: "cuda:N"),
	// empty for the CPU.
	Device string `json:"device,omitempty"`
}

// costMeasure is one model's measurement.
type costMeasure struct {
	Model      string `json:"model"`
	Parameters int    `json:"parameters"`
	// TrainSeconds and ValidSeconds are the subset's training pass and
	// validation pass of the last epoch.
	TrainSeconds float64 `json:"train_seconds"`
	ValidSeconds float64 `json:"valid_seconds"`
	// EpochSeconds is the scaled estimate for the epoch:
	// TrainSeconds·epoch_train_size/train_size +
	// ValidSeconds·epoch_valid_size/valid_size (10,000 and 1,000 strings
	// of the paper's protocol for a task).
	EpochSeconds float64 `json:"epoch_seconds"`
	// PeakBytes is the peak resident set size of the model's subprocess
	// (getrusage maxrss; 0 on a system without it, such as Windows), or,
	// with --in-process, the Go runtime's Sys.
	PeakBytes  uint64  `json:"peak_bytes"`
	TimeRatio  float64 `json:"time_ratio_to_lstm,omitempty"`
	MemRatio   float64 `json:"memory_ratio_to_lstm,omitempty"`
	InProcess  bool    `json:"in_process,omitempty"`
	WallSecond float64 `json:"wall_seconds"`
}

// costReport is the output of cost --json.
type costReport struct {
	Task     string        `json:"task"`
	Settings costSettings  `json:"settings"`
	Note     string        `json:"note"`
	Models   []costMeasure `json:"models"`
}

func runCost(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("cost", stdout)
	modelList := fs.String("models", "all", "comma-separated models, or all: "+joinNames(nsrnn.KindNames()))
	task := fs.String("task", "", "task of the measurement (default marked-reversal, the paper's appendix C): "+taskNames())
	params := taskParamFlags(fs)
	grammar := cli.AddGrammarFlag(fs)
	src := dataSourceFlags(fs)
	fs.Lookup("train").Usage = "file of your own training strings in place of --task (default: none), one per line, symbols separated by spaces (with --valid): the subset is its first --train-size strings, and the estimate is for an epoch of the whole file"
	fs.Lookup("valid").Usage = "file of your own validation strings (with --train; default: none): the subset is its first --valid-size strings"
	// A test file does not enter the estimate; --test is accepted,
	// unlisted, so that a run's data flags can be given as they are.
	_ = fs.MarkHidden("test")
	var s costSettings
	fs.IntVar(&s.TrainSize, "train-size", 200, "training strings of the measured subset")
	fs.IntVar(&s.ValidSize, "valid-size", 50, "validation strings of the measured subset")
	lengths := fs.String("lengths", "40:80", "MIN:MAX string lengths of a task's or grammar file's subset")
	fs.IntVar(&s.BatchSize, "batch-size", 10, "strings per batch")
	fs.IntVar(&s.Hidden, "hidden", 20, "LSTM hidden units")
	fs.IntVar(&s.States, "states", 0, "|Q| of "+joinNames(cli.KindsUsing("states"))+" (default: the task's, as train gives it: the |Q| column of cfl tasks)")
	fs.IntVar(&s.Symbols, "symbols", 0, "|Γ| of "+joinNames(cli.KindsUsing("symbols"))+" (default: the task's, as train gives it)")
	fs.IntVar(&s.StackEmbedding, "stack-embedding", 20, "stack vector size of "+joinNames(cli.KindsUsing("stack-embedding")))
	fs.Var(&s.Bottom, "bottom", "bottom-symbol behaviour of "+joinNames(cli.KindsUsing("bottom"))+": original (ICLR 2022) or fixed (ICLR 2023, the 2023 release's models)")
	fs.BoolVar(&s.PushHiddenState, "push-hidden-state", false, joinNames(cli.KindsUsing("push-hidden-state"))+" push the hidden state instead of a learned vector (the 2023 release's JM; --stack-embedding then is not theirs)")
	fs.IntVar(&s.Epochs, "epochs", 2, "epochs run per model; the last is timed (the first builds the cached graphs)")
	fs.Uint64Var(&s.Seed, "seed", 1, "seed of the data and the initial parameters")
	workers := workersFlag(fs)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	inProcess := fs.Bool("in-process", false, "measure in this process instead of a subprocess per model (peak memory is then the Go runtime's Sys, cumulative)")
	devFlag := cli.DeviceFlag(fs, "cfl", "peak memory is then that of the CPU's process, not the GPU's")
	worker := fs.String("worker", "", "measure this one model and print its JSON (used by cost itself)")
	_ = fs.MarkHidden("worker")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	dev, err := cli.ParseDeviceFlag(*devFlag)
	if err != nil {
		return err
	}
	s.Device = cli.DeviceSetting(dev)
	if s.MinLength, s.MaxLength, err = parseLengths(*lengths); err != nil {
		return fmt.Errorf("--lengths: %w", err)
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"train-size", s.TrainSize}, {"valid-size", s.ValidSize}, {"batch-size", s.BatchSize}, {"hidden", s.Hidden}, {"epochs", s.Epochs}, {"workers", *workers}} {
		if f.v < 1 {
			return fmt.Errorf("--%s %d must be at least 1", f.name, f.v)
		}
	}
	if *workers > maxWorkers {
		return fmt.Errorf("--workers %d must be at most %d", *workers, maxWorkers)
	}
	if s.States < 0 || s.Symbols < 0 || s.StackEmbedding < 1 {
		return fmt.Errorf("--states %d and --symbols %d must not be negative (0: the task's), --stack-embedding %d at least 1", s.States, s.Symbols, s.StackEmbedding)
	}
	if err := checkSetSizes(s.TrainSize, s.ValidSize, s.MaxLength, *lengths); err != nil {
		return err
	}
	if fs.Changed("workers") {
		s.Workers = *workers // else 0: each model's as train would choose it
	}
	t, td, err := costData(fs, *task, params(), *grammar, src)
	if err != nil {
		return err
	}
	if td == nil {
		// Refused here, naming the flag, rather than by each model's
		// measurement (in a subprocess).
		if ns, err := t.ValidLengths(s.MinLength, s.MaxLength); err != nil {
			return fmt.Errorf("--lengths %s: %w", *lengths, err)
		} else if len(ns) == 0 {
			return fmt.Errorf("--lengths %s: %s has no strings of these lengths", *lengths, t.Name())
		}
	}
	// The stack's sizes that train would give the task (reported in the
	// header and the JSON as the ones measured).
	q, gamma := taskStackDefaults(t)
	if s.States == 0 {
		s.States = q
	}
	if s.Symbols == 0 {
		s.Symbols = gamma
	}
	s.EpochTrainSize, s.EpochValidSize = paperTrainSize, paperValidSize
	if td != nil {
		s.TrainSize, s.ValidSize = min(s.TrainSize, len(td.Train)), min(s.ValidSize, len(td.Valid))
		s.EpochTrainSize, s.EpochValidSize = len(td.Train), len(td.Valid)
		// The lengths are the subset's, whatever --lengths says.
		s.MinLength, s.MaxLength = len(td.Train[0]), len(td.Train[0])
		for _, w := range td.Train[:s.TrainSize] {
			s.MinLength, s.MaxLength = min(s.MinLength, len(w)), max(s.MaxLength, len(w))
		}
	}
	if *worker != "" {
		m, err := measureCost(*worker, s, dev, t, td)
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(m)
	}
	models, err := parseList(*modelList, nsrnn.KindNames(), "--models")
	if err != nil {
		return err
	}
	// Every model must be able to compute on the device, checked before
	// any is measured (nothing for the CPU): a kind without an
	// implementation there is said first.
	if !dev.IsCPU() {
		var unusable error
		for _, kind := range models {
			cfg, err := costConfig(kind, s, t)
			if err != nil {
				return fmt.Errorf("%s: %w", kind, err)
			}
			if err := cli.CheckDevice(dev, cfg, false); errors.Is(err, nsrnn.ErrNoDeviceKernel) {
				return fmt.Errorf("--models %s: %w", kind, err)
			} else if err != nil && unusable == nil {
				unusable = err
			}
		}
		if unusable != nil {
			return unusable
		}
	}
	exe := ""
	if !*inProcess {
		// Each model is measured in a subprocess of this program; a
		// test binary would run its tests there instead, each of which
		// could start more (it once filled the memory).
		if testing.Testing() {
			return errors.New("cost: in a test binary, measure with --in-process (a subprocess would run the tests again)")
		}
		if exe, err = os.Executable(); err != nil {
			return err
		}
	}
	epoch := "the paper's protocol"
	if td != nil {
		epoch = "your files"
	}
	rep := costReport{
		Task: t.Name(), Settings: s,
		Note: fmt.Sprintf("seconds per epoch of %s (%d training + %d validation strings) estimated from one epoch of %d training + %d validation strings, scaling the training pass by %g and the validation pass by %g",
			epoch, s.EpochTrainSize, s.EpochValidSize, s.TrainSize, s.ValidSize,
			float64(s.EpochTrainSize)/float64(s.TrainSize), float64(s.EpochValidSize)/float64(s.ValidSize)),
	}
	for _, kind := range models {
		start := time.Now()
		var m costMeasure
		if *inProcess {
			mm, err := measureCost(kind, s, dev, t, td)
			if err != nil {
				return fmt.Errorf("%s: %w", kind, err)
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			m, m.PeakBytes, m.InProcess = *mm, ms.Sys, true
		} else {
			if m, err = costSubprocess(exe, kind, args); err != nil {
				return fmt.Errorf("%s: %w", kind, err)
			}
		}
		m.WallSecond = time.Since(start).Seconds()
		fmt.Fprintf(stderr, "cost: %s %.2fs train + %.2fs valid on the subset → %.0f s per paper epoch\n", kind, m.TrainSeconds, m.ValidSeconds, m.EpochSeconds)
		rep.Models = append(rep.Models, m)
	}
	for i, m := range rep.Models {
		if m.Model == nsrnn.LSTM {
			for j := range rep.Models {
				rep.Models[j].TimeRatio = rep.Models[j].EpochSeconds / rep.Models[i].EpochSeconds
				if m.PeakBytes > 0 {
					rep.Models[j].MemRatio = float64(rep.Models[j].PeakBytes) / float64(m.PeakBytes)
				}
			}
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return writeCostTable(stdout, rep)
}

// costSubprocess measures one model in a subprocess of this binary (the
// same cost flags plus --worker) and records its peak resident set size.
func costSubprocess(exe, kind string, args []string) (costMeasure, error) {
	var m costMeasure
	var out, errb bytes.Buffer
	cmd := exec.Command(exe, append(append([]string{"cost"}, args...), "--worker", kind)...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return m, fmt.Errorf("%v: %s", err, bytes.TrimSpace(errb.Bytes()))
	}
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		return m, fmt.Errorf("worker output: %w", err)
	}
	m.PeakBytes, _ = peakRSS(cmd.ProcessState) // 0 where the system does not tell
	return m, nil
}

// costData returns the task of the measurement: --task (marked reversal
// when neither it nor --grammar-file is given) or --grammar-file, or, with
// td, the user's strings. The flags that do not apply to the user's strings
// are refused with them.
func costData(fs *pflag.FlagSet, task string, p data.Params, g data.Grammar, src *dataSource) (*data.Task, *protocol.TextData, error) {
	if !src.hasStrings() {
		if task == "" && *src.grammarFile == "" {
			task = data.MarkedReversal
		}
		t, _, err := taskOrGrammarFile(task, *src.grammarFile, p, g)
		return t, nil, err
	}
	td, err := src.readStrings(fs)
	if err != nil {
		return nil, nil, err
	}
	return td.Task, td, nil
}

// costConfig is the model of kind measured on task t: the settings' sizes
// and variants, for the kinds that have them.
func costConfig(kind string, s costSettings, t *data.Task) (nsrnn.Config, error) {
	mf := &cli.ModelFlags{Model: nsrnn.Config{Kind: kind, Hidden: s.Hidden, Layers: 1}}
	if cli.KindUses(kind, "states") {
		mf.Model.States = s.States
	}
	if cli.KindUses(kind, "symbols") {
		mf.Model.Symbols = s.Symbols
	}
	if cli.KindUses(kind, "stack-embedding") {
		mf.Model.StackEmbedding = s.StackEmbedding
	}
	if cli.KindUses(kind, "bottom") {
		mf.Model.Bottom = s.Bottom
	}
	if cli.KindUses(kind, "push-hidden-state") && s.PushHiddenState {
		mf.Model.PushHiddenState, mf.Model.StackEmbedding = true, 0
	}
	return taskConfig(t, mf)
}

// measureCost trains one model for s.Epochs epochs on the device dev on a
// subset of task t's strings (sampled, or the first of the user's strings
// td) and times the last epoch's training and validation passes.
func measureCost(kind string, s costSettings, dev nsrnn.Device, t *data.Task, td *protocol.TextData) (*costMeasure, error) {
	cfg, err := costConfig(kind, s, t)
	if err != nil {
		return nil, err
	}
	var trainSet, validSet []nsrnn.Batch
	if td != nil {
		tr, err := data.BatchByLength(td.Train[:s.TrainSize], s.BatchSize)
		if err != nil {
			return nil, err
		}
		va, err := data.BatchByLength(td.Valid[:s.ValidSize], s.BatchSize)
		if err != nil {
			return nil, err
		}
		trainSet, validSet = protocol.Batches(tr), protocol.Batches(va)
	} else {
		d, err := protocol.SampleRun(t, protocol.Settings{
			Seed: s.Seed, TrainSize: s.TrainSize, ValidSize: s.ValidSize, BatchSize: s.BatchSize, MinLength: s.MinLength, MaxLength: s.MaxLength,
		})
		if err != nil {
			return nil, err
		}
		trainSet, validSet = d.Train, d.Valid
	}
	m, err := nsrnn.New(cfg, protocol.InitSeed(s.Seed))
	if err != nil {
		return nil, err
	}
	m.Workers = s.Workers
	if m.Workers == 0 {
		m.Workers = defaultWorkers(cfg, s.BatchSize, s.MaxLength)
	}
	if err := cli.UseDevice(m, dev); err != nil {
		return nil, err
	}
	var last nsrnn.EpochRecord
	tc := nsrnn.TrainConfig{
		LR: 0.005, MaxEpochs: s.Epochs, EarlyStop: s.Epochs + 1, Schedule: &nsrnn.Plateau{Factor: 0.9, Patience: s.Epochs + 1}, Seed: protocol.ShuffleSeed(s.Seed),
		Recorder: nsrnn.RecorderFunc(func(e nsrnn.Event) error {
			if e.Kind == nsrnn.EpochDone {
				last = *e.Record
			}
			return nil
		}),
	}
	if _, err := nsrnn.Train(m, trainSet, validSet, tc); err != nil {
		return nil, err
	}
	// Time the validation pass alone (its graphs are cached by now).
	start := time.Now()
	for _, b := range validSet {
		if _, err := m.Loss(b); err != nil {
			return nil, err
		}
	}
	valid := time.Since(start).Seconds()
	train := max(last.EpochSeconds-valid, 0)
	return &costMeasure{
		Model: kind, Parameters: m.NumParams(), TrainSeconds: train, ValidSeconds: valid,
		EpochSeconds: train*float64(s.EpochTrainSize)/float64(s.TrainSize) + valid*float64(s.EpochValidSize)/float64(s.ValidSize),
	}, nil
}

// writeCostTable prints the report as a table like the paper's appendix C.
func writeCostTable(w io.Writer, rep costReport) error {
	s := rep.Settings
	device := ""
	if s.Device != "" {
		device = ", on " + s.Device
	}
	parts := fmt.Sprintf("%d parts per batch", s.Workers)
	if s.Workers == 0 {
		parts = "each model's batches in the parts train would choose (--workers)"
	}
	fmt.Fprintf(w, "Wall-clock cost on %s: %d hidden units, batch %d, lengths %d–%d, |Q|=%d, |Γ|=%d, stack vectors %d; GOMAXPROCS %d, %s%s.\n",
		rep.Task, s.Hidden, s.BatchSize, s.MinLength, s.MaxLength, s.States, s.Symbols, s.StackEmbedding, runtime.GOMAXPROCS(0), parts, device)
	fmt.Fprintf(w, "Estimated, not measured: %s.\n\n", rep.Note)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\tparams\tsubset train s\tsubset valid s\ts per epoch (scaled)\t× LSTM\tpeak MiB\t× LSTM\t")
	for _, m := range rep.Models {
		ratio := func(r float64) string {
			if r == 0 {
				return "-"
			}
			return fmt.Sprintf("%.1f", r)
		}
		peak := "-"
		if m.PeakBytes > 0 {
			peak = fmt.Sprintf("%.0f", float64(m.PeakBytes)/(1<<20))
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%.0f\t%s\t%s\t%s\t\n", m.Model, m.Parameters, m.TrainSeconds, m.ValidSeconds,
			m.EpochSeconds, ratio(m.TimeRatio), peak, ratio(m.MemRatio))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(rep.Models) > 0 && rep.Models[0].InProcess {
		fmt.Fprintln(w, "\nPeak memory: the Go runtime's Sys after each model, in one process (cumulative; run without --in-process for a per-model peak).")
	} else {
		fmt.Fprintln(w, "\nPeak memory: maximum resident set size of a separate process per model (getrusage).")
	}
	return nil
}
