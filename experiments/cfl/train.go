package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/internal/readlimit"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

// dataSource holds the flags of train that name data other than a task
// of the table: --grammar-file, and the user's strings in --train,
// --valid and --test.
type dataSource struct {
	grammarFile, train, valid, test *string
}

// dataSourceFlags registers the flags of dataSource.
func dataSourceFlags(fs *pflag.FlagSet) *dataSource {
	return &dataSource{
		grammarFile: grammarFileFlag(fs),
		train: fs.String("train", "", "file of your own training strings in place of --task (default: none, strings sampled from the task), one per line, symbols separated by spaces (with --valid); "+
			"the vocabulary is the training file's, the strings are batched by length (--batch-size of one length each, shuffled every epoch), and there is no lower bound: cross-entropy and perplexity are reported"),
		valid: fs.String("valid", "", "file of your own validation strings (with --train; default: none); a symbol not in the training file is an error"),
		test:  fs.String("test", "", "file of your own test strings (with --train; default: none), for cfl eval and cfl select"),
	}
}

// hasStrings reports whether any of the flags of the user's strings (--train,
// --valid, --test) is given.
func (d *dataSource) hasStrings() bool { return *d.train != "" || *d.valid != "" || *d.test != "" }

// resolve returns the task of the run: the user's strings (with td, read
// from the files), a grammar file (with its digest gf), or the task of
// --task. The flags of the protocol that the user's strings make
// meaningless (--lengths, --train-size, --valid-size) and those of a task
// are refused with them.
func (d *dataSource) resolve(fs *pflag.FlagSet, task string, p data.Params, g data.Grammar) (t *data.Task, td *protocol.TextData, gf *protocol.FileDigest, err error) {
	if !d.hasStrings() {
		if task == "" && *d.grammarFile == "" {
			return nil, nil, nil, fmt.Errorf("--task is required, or --grammar-file, or --train and --valid (tasks: %s)", taskNames())
		}
		t, gf, err = taskOrGrammarFile(task, *d.grammarFile, p, g)
		return t, nil, gf, err
	}
	if td, err = d.readStrings(fs, "train-size", "valid-size"); err != nil {
		return nil, nil, nil, err
	}
	return td.Task, td, nil, nil
}

// readStrings reads the user's strings (--train, --valid and, if given,
// --test), refusing the flags that do not apply to them: those of a task
// (--task, --grammar-file, --grammar, the task parameters), --lengths, and
// the further flags named.
func (d *dataSource) readStrings(fs *pflag.FlagSet, alsoRefused ...string) (*protocol.TextData, error) {
	refused := append(append([]string{"task", "grammar-file", "grammar", "lengths"}, alsoRefused...), data.TaskParamNames()...)
	for _, name := range refused {
		if fs.Changed(name) {
			return nil, fmt.Errorf("--%s does not apply to your own strings (--train, --valid, --test): they are the data", name)
		}
	}
	if err := requireFlags(fs, "train", "valid"); err != nil {
		return nil, fmt.Errorf("%w with your own strings", err)
	}
	td, err := protocol.ReadTextFiles(*d.train, *d.valid, *d.test)
	if err != nil {
		return nil, fmt.Errorf("--train, --valid, --test: %w", err)
	}
	return td, nil
}

func init() {
	prog.Register("train", "train a model on a task (the paper's protocol by default)", runTrain)
}

// protocolFlags registers the flags of the training protocol on fs, with
// the given defaults for the learning rate (0: required), the number of
// epochs and early stopping, and returns the --lengths flag for
// checkProtocol.
func protocolFlags(fs *pflag.FlagSet, s *protocol.Settings, lr float64, epochs, earlyStop int) *string {
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
	fs.IntVar(&s.Patience, "patience", 5, "epochs without improvement before the learning rate decays: it decays at the end of the patience-th such epoch, and again every patience such epochs (the authors' released code, PyTorch's ReduceLROnPlateau with patience 5, decays at the sixth: --patience 6)")
	fs.Float64Var(&s.Decay, "decay", 0.9, "learning-rate decay factor")
	esHelp := "epochs without improvement before training stops"
	if earlyStop == 0 {
		esHelp += " (default 0: never, all --epochs are run)"
	}
	fs.IntVar(&s.EarlyStop, "early-stop", earlyStop, esHelp)
	return lengths
}

// checkpointEveryFlag registers --checkpoint-every, how often a training
// run checkpoints within an epoch (nsrnn.TrainConfig.CheckpointEvery);
// checkCheckpointEvery refuses a negative value.
func checkpointEveryFlag(fs *pflag.FlagSet) *time.Duration {
	return fs.Duration("checkpoint-every", 5*time.Minute, "checkpoint within an epoch this often (0: only after every epoch); an interrupt writes a checkpoint of the batch it stops after all the same")
}

// checkCheckpointEvery refuses a negative --checkpoint-every.
func checkCheckpointEvery(every time.Duration) error {
	if every < 0 {
		return fmt.Errorf("--checkpoint-every %v must not be negative (0: only after every epoch)", every)
	}
	return nil
}

// maxWorkers is the most parts a batch may be split into (--workers):
// far more than any batch of the protocol has sequences.
const maxWorkers = 1024

// workersFlag registers --workers, the number of parts of each batch run
// in parallel (nsrnn.Model.Workers).
func workersFlag(fs *pflag.FlagSet) *int {
	return fs.Int("workers", min(runtime.GOMAXPROCS(0), maxWorkers), "parts of each batch run in parallel, one goroutine each (default GOMAXPROCS, every core, or a multiple of it where the stack's dynamic programs of a part per core would outgrow the caches: nsrnn.Config.PartsFor; a sweep's runs get CPUs/jobs); results differ between part counts only by rounding")
}

// defaultWorkers is the part count of --workers when the flag is not
// given: nsrnn.Config.PartsFor for the model on batches of batchSize
// strings of up to maxLength symbols on GOMAXPROCS cores, at most
// maxWorkers; GOMAXPROCS where the lengths are not known (maxLength 0).
func defaultWorkers(cfg nsrnn.Config, batchSize, maxLength int) int {
	cores := runtime.GOMAXPROCS(0)
	if maxLength < 1 {
		return min(cores, maxWorkers)
	}
	return min(cfg.PartsFor(batchSize, maxLength, cores), maxWorkers)
}

// trainWorkersFlag registers the --workers of train: workersFlag, whose
// count is recorded in run.json and kept by --resume.
func trainWorkersFlag(fs *pflag.FlagSet) *int {
	w := workersFlag(fs)
	fs.Lookup("workers").Usage += "; the count is recorded in run.json, and --resume keeps it"
	return w
}

// resumeWorkers settles the part count of a run in dir: a new run records
// the given count; a resumed one keeps its recorded count, and refuses
// another one given explicitly (changed), since parts of another count
// round differently and the run would not end where it would have. A
// run.json written before the count was recorded (no "workers") resumes
// with the count given, unrecorded, as it did then; a note says so. It
// returns the count to run and the count to record in the settings.
func resumeWorkers(dir string, resume bool, workers int, changed bool, stderr io.Writer) (run, record int, err error) {
	if !resume {
		return workers, workers, nil
	}
	saved, err := protocol.ReadSettings(dir)
	switch {
	case err != nil:
		// No run to resume (a new one) or an unreadable run.json, which
		// protocol.OpenRunDir reports.
		return workers, workers, nil
	case saved.Workers == 0:
		fmt.Fprintf(stderr, "note: %s predates the recording of --workers; resuming with --workers %d (a count other than the original one changes the results by rounding)\n",
			filepath.Join(dir, protocol.RunFile), workers)
		return workers, 0, nil
	case saved.Workers < 0 || saved.Workers > maxWorkers:
		return 0, 0, fmt.Errorf("--resume: %s records %d workers, outside [1, %d]: the file is damaged",
			filepath.Join(dir, protocol.RunFile), saved.Workers, maxWorkers)
	case changed && workers != saved.Workers:
		return 0, 0, fmt.Errorf("--workers %d: the run in %s was trained with --workers %d, and parts of another count round differently, so the resumed run would not end where it would have; resume with --workers %d, or without the flag",
			workers, dir, saved.Workers, saved.Workers)
	}
	return saved.Workers, saved.Workers, nil
}

// resumedSettings returns, for a resumed run (resume) in dir that has a
// run.json, its settings, and whether there are some: a resume may give
// another --device and another --epochs, so the settings of the run are
// compared with the run's own device and maximum.
func resumedSettings(dir string, resume bool) (protocol.Settings, bool) {
	if !resume {
		return protocol.Settings{}, false
	}
	saved, err := protocol.ReadSettings(dir)
	if err != nil {
		// No run to resume (a new one) or an unreadable run.json, which
		// protocol.OpenRunDir reports.
		return protocol.Settings{}, false
	}
	return saved, true
}

// checkProtocol parses the lengths into s and checks the protocol flags
// that protocolFlags registered, naming the flag at fault.
func checkProtocol(s *protocol.Settings, lengths string) error {
	var err error
	if s.MinLength, s.MaxLength, err = parseLengths(lengths); err != nil {
		return fmt.Errorf("--lengths: %w", err)
	}
	switch {
	case s.LR == 0:
		return fmt.Errorf("--lr is required and must be positive (the paper searches 0.01, 0.005, 0.001, 0.0005)")
	case !(s.LR > 0) || math.IsInf(s.LR, 0):
		return fmt.Errorf("--lr %g: the learning rate must be positive and finite", s.LR)
	case !(s.Clip > 0) || math.IsInf(s.Clip, 0):
		return fmt.Errorf("--clip %g: the clipping threshold must be positive and finite", s.Clip)
	case s.Epochs < 1:
		return fmt.Errorf("--epochs %d must be at least 1", s.Epochs)
	case s.TrainSize < 1:
		return fmt.Errorf("--train-size %d must be at least 1", s.TrainSize)
	case s.ValidSize < 1:
		return fmt.Errorf("--valid-size %d must be at least 1", s.ValidSize)
	case s.BatchSize < 1:
		return fmt.Errorf("--batch-size %d must be at least 1", s.BatchSize)
	case s.Patience < 1:
		return fmt.Errorf("--patience %d must be at least 1", s.Patience)
	case s.EarlyStop < 0:
		return fmt.Errorf("--early-stop %d must not be negative", s.EarlyStop)
	case !(s.Decay > 0 && s.Decay <= 1):
		return fmt.Errorf("--decay %g must be in (0, 1]", s.Decay)
	}
	return checkSetSizes(s.TrainSize, s.ValidSize, s.MaxLength, lengths)
}

// checkSetSizes refuses --train-size and --valid-size (positive) that,
// with the longest of --lengths, would need more memory than sampled sets
// may take (data.CheckSampleSize), naming the flags.
func checkSetSizes(trainSize, validSize, maxLen int, lengths string) error {
	if err := data.CheckSampleSize(trainSize, maxLen); err != nil {
		return fmt.Errorf("--train-size %d with --lengths %s: %w", trainSize, lengths, err)
	}
	if err := data.CheckSampleSize(validSize, maxLen); err != nil {
		return fmt.Errorf("--valid-size %d with --lengths %s: %w", validSize, lengths, err)
	}
	if err := data.CheckSampleSize(trainSize+validSize, maxLen); err != nil {
		return fmt.Errorf("--train-size %d and --valid-size %d with --lengths %s: %w", trainSize, validSize, lengths, err)
	}
	return nil
}

// trainPlan is a parsed and checked train command: everything that
// can be refused is refused by prepareTrain, before anything is written.
type trainPlan struct {
	fs            *pflag.FlagSet
	t             *data.Task
	td            *protocol.TextData
	cfg           nsrnn.Config
	s             protocol.Settings
	out           string
	resume, quiet bool
	workers       int
	every         time.Duration // --checkpoint-every
	device        nsrnn.Device  // --device
}

// prepareTrain parses and checks the arguments of a train command (the
// task, its data files, the model, the protocol), naming the flag at
// fault. A sweep calls it for each of its runs before it writes anything.
func prepareTrain(args []string, stdout io.Writer) (*trainPlan, error) {
	fs := prog.FlagSet("train", stdout)
	task, params, grammar, mf := taskModelFlags(fs)
	var s protocol.Settings
	lengths := protocolFlags(fs, &s, 0, 200, 10)
	out := fs.String("out", "", "output directory (required): run.json, log.jsonl, checkpoint, then model and summary.json")
	resume := fs.Bool("resume", false, "continue the interrupted run in --out from its checkpoint, with the settings of its run.json (flags given must agree with them, except --device and a larger --epochs, which trains a finished run further); in an absent or empty --out, start it (and say so)")
	every := checkpointEveryFlag(fs)
	quiet := fs.Bool("quiet", false, "no progress bar (the line of each epoch is printed all the same)")
	workers := trainWorkersFlag(fs)
	src := dataSourceFlags(fs)
	devFlag := cli.DeviceFlag(fs, "cfl", "recorded in run.json; --resume may give another, and without --device goes on on the CPU (the default), saying so")
	fs.Lookup("task").Usage = "task (required, or --grammar-file, or --train and --valid): " + taskNames()
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	dev, err := cli.ParseDeviceFlag(*devFlag)
	if err != nil {
		return nil, err
	}
	// A resumed run takes every setting not given from its run.json;
	// those given must agree with it (OpenRunDir compares them).
	if *resume && *out == "" {
		return nil, errors.New("--resume needs --out, the directory of the run to continue")
	}
	if *resume {
		saved, err := protocol.ReadSettings(*out)
		switch {
		case err == nil:
			if err := checkRecorded(*out, saved); err != nil {
				return nil, fmt.Errorf("--resume: %w", err)
			}
			if err := takeRunSettings(fs, saved); err != nil {
				return nil, fmt.Errorf("--resume: %s: %w", filepath.Join(*out, protocol.RunFile), err)
			}
		case !errors.Is(err, os.ErrNotExist):
			return nil, fmt.Errorf("--resume: %w", err)
		}
	}
	t, td, gf, err := src.resolve(fs, *task, params(), *grammar)
	if err != nil {
		return nil, err
	}
	cfg, err := taskConfig(t, mf)
	if err != nil {
		return nil, err
	}
	if err := cfg.CheckTraining(); err != nil {
		return nil, err
	}
	s.Task, s.Grammar, s.TaskParams, s.Model, s.GrammarFile = t.Name(), t.Definition(), t.Params(), cfg, gf
	if err := checkProtocol(&s, *lengths); err != nil {
		return nil, err
	}
	if td != nil {
		td.Settings(&s)
	} else if ns, err := t.ValidLengths(s.MinLength, s.MaxLength); err != nil {
		return nil, fmt.Errorf("--lengths %s: %w", *lengths, err)
	} else if len(ns) == 0 {
		return nil, fmt.Errorf("--lengths %s: %s has no strings of these lengths", *lengths, t.Name())
	}
	if !fs.Changed("workers") {
		*workers = defaultWorkers(cfg, s.BatchSize, s.MaxLength)
	}
	switch {
	case *workers < 1 || *workers > maxWorkers:
		return nil, fmt.Errorf("--workers %d must be in [1, %d]", *workers, maxWorkers)
	case s.EarlyStop < 1:
		return nil, fmt.Errorf("--early-stop %d must be at least 1", s.EarlyStop)
	case *out == "":
		return nil, fmt.Errorf("--out is required")
	}
	if err := checkCheckpointEvery(*every); err != nil {
		return nil, err
	}
	s.Device = cli.DeviceSetting(dev)
	return &trainPlan{fs: fs, t: t, td: td, cfg: cfg, s: s, out: *out, resume: *resume, quiet: *quiet, workers: *workers, every: *every, device: dev}, nil
}

// takeRunSettings gives the flags of train that the command line did not
// set the values of a run's saved settings s: its data (the task with its
// definition and parameters, the grammar file, or the files of its own
// strings, as one group: none of it where any of --task, --grammar-file,
// --train, --valid and --test is given), its model and its protocol.
// --workers, --device and the flags of the program's own conduct
// (--checkpoint-every, --quiet) keep theirs, and so does a flag whose
// field the run.json lacks (zero: written before the field existed).
func takeRunSettings(fs *pflag.FlagSet, s protocol.Settings) error {
	vals := map[string]string{}
	dataGiven := false
	for _, f := range []string{"task", "grammar-file", "train", "valid", "test"} {
		dataGiven = dataGiven || fs.Changed(f)
	}
	if !dataGiven {
		switch {
		case s.Files != nil:
			vals["train"], vals["valid"] = s.Files.Train.Path, s.Files.Valid.Path
			if s.Files.Test != nil {
				vals["test"] = s.Files.Test.Path
			}
		default:
			if s.GrammarFile != nil {
				vals["grammar-file"] = s.GrammarFile.Path
			} else {
				vals["task"] = s.Task
				for name, v := range s.TaskParams {
					vals[name] = strconv.Itoa(v)
				}
			}
			if s.Grammar != "" {
				vals["grammar"] = s.Grammar.String()
			}
			if s.MaxLength > 0 {
				vals["lengths"] = fmt.Sprintf("%d:%d", s.MinLength, s.MaxLength)
			}
			setInt(vals, "train-size", s.TrainSize)
			setInt(vals, "valid-size", s.ValidSize)
		}
	}
	if _, err := nsrnn.LookupKind(s.Model.Kind); err != nil {
		return fmt.Errorf("model %q: %w", s.Model.Kind, err)
	}
	maps.Copy(vals, cli.ModelFlagValues(s.Model))
	vals["seed"] = strconv.FormatUint(s.Seed, 10)
	setFloat(vals, "lr", s.LR)
	setInt(vals, "epochs", s.Epochs)
	setInt(vals, "batch-size", s.BatchSize)
	setFloat(vals, "clip", s.Clip)
	setInt(vals, "patience", s.Patience)
	setFloat(vals, "decay", s.Decay)
	setInt(vals, "early-stop", s.EarlyStop)
	for _, name := range slices.Sorted(maps.Keys(vals)) {
		if fs.Changed(name) || fs.Lookup(name) == nil {
			continue
		}
		if err := fs.Set(name, vals[name]); err != nil {
			return fmt.Errorf("--%s %s: %w", name, vals[name], err)
		}
	}
	return nil
}

// recordedPositive names the fields of a run.json that cfl train always
// writes, each positive (checkProtocol refuses anything else).
var recordedPositive = []string{"lr", "epochs", "train_size", "valid_size", "batch_size", "clip", "patience", "early_stop", "decay"}

// checkRecorded refuses the saved settings s of the run in dir when its
// run.json holds what cfl train never writes: one of recordedPositive
// present but not positive, or a model that nsrnn.Config.Validate
// refuses. takeRunSettings reads a zero as a field that an older run.json
// lacks and leaves the flag's default in its place, so that without this
// check a damaged file would be reported as flags that differ from the
// run's, flags the user did not give.
func checkRecorded(dir string, s protocol.Settings) error {
	path := filepath.Join(dir, protocol.RunFile)
	damaged := func(format string, args ...any) error {
		return fmt.Errorf("%s is damaged: %s (cfl train never writes that); restore the file from a copy, or start the run again in another --out", path, fmt.Sprintf(format, args...))
	}
	raw, err := readlimit.File(path, readlimit.JSON, true)
	if err != nil {
		return err
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(raw, &keys); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	for _, k := range recordedPositive {
		v, ok := keys[k]
		if !ok {
			continue // written before the field existed
		}
		var x float64
		if err := json.Unmarshal(v, &x); err != nil || !(x > 0) {
			return damaged("%q is %s", k, v)
		}
	}
	if err := s.Model.Validate(); err != nil {
		return damaged("its model is invalid: %v", err)
	}
	return nil
}

// setInt and setFloat record the value of a flag from a run.json, unless
// it is zero: a field that a run.json written before the field existed
// lacks, which the flag's default stands for (as it did when that run
// was resumed with its flags given).
func setInt(vals map[string]string, name string, v int) {
	if v != 0 {
		vals[name] = strconv.Itoa(v)
	}
}

func setFloat(vals map[string]string, name string, v float64) {
	if v != 0 {
		vals[name] = strconv.FormatFloat(v, 'g', -1, 64)
	}
}

func runTrain(args []string, stdout, stderr io.Writer) error {
	p, err := prepareTrain(args, stdout)
	if err != nil {
		return err
	}
	fs, t, td, cfg, s := p.fs, p.t, p.td, p.cfg, p.s
	out, resume, quiet, workers := &p.out, &p.resume, &p.quiet, &p.workers
	if s.GrammarFile != nil {
		warnGrammar(stderr, t, s.GrammarFile.Path)
	}
	if td != nil {
		for _, n := range td.EmptyStrings() {
			fmt.Fprintf(stderr, "note: %s\n", n)
		}
	}
	// A run that cannot be resumed (no checkpoint, not finished) is
	// refused before anything is written: resuming it would start again
	// from epoch 1 over its log.
	if *resume {
		if err := protocol.CheckResumable(*out, protocol.RunFile); err != nil {
			return err
		}
	}
	if *workers, s.Workers, err = resumeWorkers(*out, *resume, *workers, fs.Changed("workers"), stderr); err != nil {
		return err
	}
	m, err := nsrnn.New(cfg, protocol.InitSeed(s.Seed))
	if err != nil {
		return err
	}
	m.Workers = *workers
	// On a device that cannot be used, or for a kind without an
	// implementation there, the run stops now, before anything is
	// written.
	if err := cli.UseDevice(m, p.device); err != nil {
		return err
	}
	// The data, and batches too large for memory, are refused before
	// anything is written.
	var d *protocol.RunData
	if td != nil {
		d, err = td.Run(s)
	} else {
		d, err = protocol.SampleRun(t, s)
	}
	if err != nil {
		return err
	}
	if err := d.CheckSizes(m); err != nil {
		return err
	}
	// The directory is locked until the end; a new run that fails before
	// its first checkpoint leaves nothing behind, so that the same --out
	// can be used again. A resumed run may change its device and its
	// maximum number of epochs: they are compared with the run's own, and
	// recorded once the run is open.
	// From here on, a signal stops training after a batch, with a
	// checkpoint, however soon it comes: one that came while the run's
	// files were being made killed the program before, leaving a new
	// run's lock and half its files.
	bar := !*quiet && cli.IsTerminal(stderr)
	intr := catchInterrupts(stderr, cli.IsTerminal(stderr))
	defer intr.Stop()
	stderr = intr.Console() // shared with the message of an interrupt
	open := s
	if saved, ok := resumedSettings(*out, *resume); ok {
		open.Device, open.Epochs = saved.Device, saved.Epochs
	}
	rd, err := protocol.OpenRunDir(*out, protocol.RunFile, open, *resume, stderr)
	if err != nil {
		return err
	}
	ok := false
	// A new run abandoned before its first checkpoint leaves nothing, its
	// grammar's copy included.
	defer func() { rd.Close(ok, protocol.GrammarCopyFile) }()
	if err := s.SaveGrammarCopy(*out); err != nil {
		return fmt.Errorf("--grammar-file: %w", err)
	}
	if !rd.Created && (open.Device != s.Device || open.Epochs != s.Epochs) {
		if err := protocol.UpdateRun(*out, s, s.Device, open.Device, s.Epochs, open.Epochs, stderr); err != nil {
			return err
		}
	}

	tc := d.TrainConfig(s)
	tc.Checkpoint = filepath.Join(*out, protocol.CheckpointFile)
	tc.CheckpointEvery = p.every
	intr.OnForcedExit(func() string {
		if _, err := os.Stat(tc.Checkpoint); err != nil {
			created := rd.Created
			rd.Close(false, protocol.GrammarCopyFile) // a new run without a checkpoint leaves nothing behind
			if created {
				return "no checkpoint was written yet: the new run was removed"
			}
			return "no checkpoint was written yet: nothing to resume"
		}
		return "resume from the last checkpoint with: " + prog.CommandLine(resumeArgs("train", args))
	})
	var at stopPoint
	tc.Recorder = nsrnn.Recorders{
		nsrnn.JSONLog(filepath.Join(*out, protocol.LogFile)),
		cli.Progress(stderr, cfg.Kind, bar),
		at.recorder(),
		intr.CheckpointRecorder(),
	}
	bound := fmt.Sprintf("lower bound %.4f nats per symbol", d.LowerBound.Entropy)
	if d.NoLowerBound {
		bound = "no lower bound (strings of no known distribution: cross-entropy and perplexity are reported)"
	}
	if _, err := os.Stat(filepath.Join(*out, protocol.SummaryFile)); err == nil && !rd.Created {
		// updateRun removed the summary of a run given more epochs.
		fmt.Fprintf(stderr, "the run in %s has finished: nothing to train (a run that reached its maximum, --epochs %d, goes on when resumed with a larger one)\n", *out, s.Epochs)
	} else {
		fmt.Fprintf(stderr, "training %s on %s: %d parameters, %s in %s (one batch each) per epoch, %s, %s, BLAS %s, device %s; files in %s (Ctrl-C stops, --resume continues)\n",
			cfg.Kind, t, m.NumParams(), cli.Count(s.TrainSize, "training string"), cli.Count(len(d.Train), "step"), cli.Count(s.ValidSize, "validation string"),
			bound, nsrnn.BLAS, cli.DeviceLabel(p.device), *out)
	}
	res, err := nsrnn.Train(m, d.Train, d.Valid, tc)
	if err != nil {
		return err
	}
	if !res.Finished {
		return resumeError(intr, "train", args, res.Epochs, at, *out)
	}
	if err := m.Save(filepath.Join(*out, protocol.ModelFile)); err != nil {
		return err
	}
	sum := protocol.NewSummary(t.Name(), m, res, d.LowerBound.Entropy)
	sum.Grammar = t.Definition()
	if err := protocol.WriteJSON(filepath.Join(*out, protocol.SummaryFile), sum); err != nil {
		return err
	}
	ok = true
	above := cli.Nats(res.BestValidDifference) + " above the lower bound"
	if res.NoLowerBound {
		above = "perplexity " + cli.Nats(sum.BestValidPerplexity) + " (no lower bound)"
	}
	fmt.Fprintf(stderr, "best epoch %d of %d: validation cross-entropy %s nats per symbol, %s; files in %s\n",
		res.BestEpoch, res.Epochs, cli.Nats(res.BestValidCrossEntropy), above, *out)
	return nil
}

// notifySignals registers a channel for SIGINT and SIGTERM; tests replace
// it.
var notifySignals = cli.NotifySignals

// catchInterrupts catches SIGINT and SIGTERM during training: with the
// result's CheckpointRecorder among the training's recorders, the first
// one stops training after the current batch with a checkpoint of it, or,
// on an epoch's last batch, once the epoch is validated, checkpointed and
// its line printed, so that nothing is lost; a second one kills the
// program. Training's progress is to be written to the result's Console;
// terminal says whether stderr is a terminal.
func catchInterrupts(stderr io.Writer, terminal bool) *cli.Interrupts {
	return cli.CatchInterrupts(stderr, terminal, notifySignals,
		"stopping after the current batch, with a checkpoint (after the last batch of an epoch, once the epoch is validated and checkpointed)")
}

// resumeArgs returns the arguments of the command cmd that resumes the
// run that args started or resumed.
func resumeArgs(cmd string, args []string) []string {
	var again []string
	for _, a := range args {
		if a == "--resume" || strings.HasPrefix(a, "--resume=") {
			continue
		}
		again = append(again, a)
	}
	return append(append([]string{cmd}, again...), "--resume")
}

// stopPoint is where training stopped: the epoch in progress and the
// batches of it done, when it stopped within an epoch (step < steps).
type stopPoint struct{ epoch, step, steps int }

// recorder keeps the stop point up to date; it returns no error.
func (p *stopPoint) recorder() nsrnn.Recorder {
	return nsrnn.RecorderFunc(func(e nsrnn.Event) error {
		switch e.Kind {
		case nsrnn.StepDone:
			p.epoch, p.step, p.steps = e.Epoch, e.Step, e.Steps
		case nsrnn.EpochDone:
			*p = stopPoint{}
		}
		return nil
	})
}

// resumeError is the error of a command (cmd with args) that a signal
// interrupted after epochs finished epochs and, when at is within an
// epoch, the batches of the next one that at counts (checkpointed with
// them): it says what was kept and how to resume, and exits with 128 +
// the signal's number, as a shell reports a process killed by it.
func resumeError(in *cli.Interrupts, cmd string, args []string, epochs int, at stopPoint, out string) error {
	again := resumeArgs(cmd, args)
	code := in.ExitCode()
	finished := "epoch 1"
	if epochs > 1 {
		finished = fmt.Sprintf("epochs 1–%d", epochs)
	}
	done := "no epoch finished yet"
	switch within := at.step > 0 && at.step < at.steps; {
	case within && epochs > 0:
		done = fmt.Sprintf("%s finished, and epoch %d up to batch %d of %d, checkpointed in %s", finished, at.epoch, at.step, at.steps, out)
	case within:
		done = fmt.Sprintf("epoch %d up to batch %d of %d checkpointed in %s", at.epoch, at.step, at.steps, out)
	case epochs > 0:
		done = fmt.Sprintf("%s finished and checkpointed in %s", finished, out)
	}
	return &cli.ExitError{Code: code, Err: fmt.Errorf("%s\ninterrupted; resume with: %s", done, prog.CommandLine(again))}
}
