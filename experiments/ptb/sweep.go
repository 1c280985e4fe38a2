package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/data/ptb"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/internal/readlimit"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

func init() {
	prog.Register("sweep", "the paper's random search: runs per model with drawn learning rates and clipping thresholds", runSweep)
	prog.Register("select", "best run per model of a sweep by validation perplexity, with its test perplexity", runSelect)
}

// modelSpec is one model of the paper's PTB table.
type modelSpec struct {
	Name  string
	Flags []string
}

// paperModels are the models of the paper's PTB table, in its order.
func paperModels() []modelSpec {
	specs := []modelSpec{
		{"lstm-256", []string{"--model", "lstm", "--hidden", "256"}},
		{"lstm-258", []string{"--model", "lstm", "--hidden", "258"}},
		{"lstm-267", []string{"--model", "lstm", "--hidden", "267"}},
		{"jm-hidden-247", []string{"--model", "jm", "--hidden", "247", "--push-hidden-state", "--depth-limit", "10"}},
		{"jm-learned-22", []string{"--model", "jm", "--hidden", "256", "--stack-embedding", "22", "--depth-limit", "10"}},
	}
	var qg [][2]int
	for _, g := range []int{2, 3, 4, 5, 6, 7, 11} {
		qg = append(qg, [2]int{1, g})
	}
	for _, g := range []int{2, 3, 4, 5} {
		qg = append(qg, [2]int{2, g})
	}
	for _, g := range []int{2, 3, 4} {
		qg = append(qg, [2]int{3, g})
	}
	for _, kind := range []string{"ns", "rns"} {
		for _, p := range qg {
			specs = append(specs, modelSpec{fmt.Sprintf("%s-%d-%d", kind, p[0], p[1]),
				[]string{"--model", kind, "--hidden", "256", "--states", strconv.Itoa(p[0]), "--symbols", strconv.Itoa(p[1]), "--window", "35"}})
		}
	}
	return specs
}

// The search ranges for the per-token mean loss that the runs train on.
// The authors' released training script draws the learning rate from
// [1, 100] and the clipping threshold from [0.0112, 1.12] and applies both
// to the gradient of the mean loss over a chunk's B·T tokens (the paper
// states the same as a learning rate of [1, 100]/(B·T) on the summed
// loss). Sweeps made before the learning-rate range was recorded drew from
// [0.03125, 3.125], the paper's figure for another convention (the loss
// summed over time steps and averaged over the batch), read here as the
// mean loss's: their sweep.json has no lr_range and keeps that range.
const (
	lrMin, lrMax             = 1, 100
	legacyLRMin, legacyLRMax = 0.03125, 3.125
	clipMin, clipMax         = 0.0112, 1.12
)

// sweepSettings are saved in sweep.json; a sweep directory is reused only
// with the same.
type sweepSettings struct {
	// Data is the corpus directory (--data), or empty for a corpus of
	// three files (Files: --train, --valid, --test).
	Data  string       `json:"data"`
	Files *corpusFiles `json:"files,omitempty"`
	// VocabSize is the runs' --vocab-size (0: every training type).
	VocabSize int      `json:"vocab_size,omitempty"`
	Models    []string `json:"models"`
	Runs      int      `json:"runs"`
	Seed      uint64   `json:"seed"`
	Epochs    int      `json:"epochs"`
	Batch     int      `json:"batch"`
	BPTT      int      `json:"bptt"`
	Hidden    int      `json:"hidden,omitempty"`
	// Precision is the runs' output precision, "float32", or empty for
	// float64 (sweeps made before the choice existed).
	Precision string `json:"precision,omitempty"`
	// LRRange is the learning rate's range (--lr-range), or zero for the
	// legacy range of sweeps made before it was recorded.
	LRRange [2]float64 `json:"lr_range,omitzero"`
	// Boundary is the runs' --boundary, "next-chunk", or empty for
	// "in-chunk" (sweeps made before the choice existed).
	Boundary string `json:"boundary,omitempty"`
	// Improvement is the runs' --improvement, "perplexity", or empty for
	// "cross-entropy" (sweeps made before the choice existed, whose runs
	// keep it).
	Improvement string `json:"improvement,omitempty"`
}

// lrRange returns the range the sweep draws learning rates from.
func (s sweepSettings) lrRange() (lo, hi float64) {
	if s.LRRange == [2]float64{} {
		return legacyLRMin, legacyLRMax
	}
	return s.LRRange[0], s.LRRange[1]
}

// sweepRun is one training run of a sweep.
type sweepRun struct {
	Model string  `json:"model"`
	Index int     `json:"index"`
	LR    float64 `json:"lr"`
	Clip  float64 `json:"clip"`
	Dir   string  `json:"dir"`
	Args  []string
}

// parseLRRange reads --lr-range MIN:MAX, 0 < MIN ≤ MAX, both finite.
func parseLRRange(v string) (lo, hi float64, err error) {
	a, b, ok := strings.Cut(v, ":")
	if ok {
		lo, err = strconv.ParseFloat(a, 64)
		if err == nil {
			hi, err = strconv.ParseFloat(b, 64)
		}
	}
	if !ok || err != nil || !(lo > 0) || !(hi >= lo) || math.IsInf(hi, 1) {
		return 0, 0, fmt.Errorf("--lr-range %q: want MIN:MAX with 0 < MIN ≤ MAX, for example 1:100", v)
	}
	return lo, hi, nil
}

// logUniform draws from [lo, hi] log-uniformly.
func logUniform(rng *rand.Rand, lo, hi float64) float64 {
	return math.Exp(math.Log(lo) + rng.Float64()*(math.Log(hi)-math.Log(lo)))
}

// plan lists the runs of a sweep; each run's hyperparameters depend only on
// the seed, the model and the run's index.
func plan(s sweepSettings, out string) ([]sweepRun, error) {
	specs := paperModelsByName()
	var runs []sweepRun
	for _, name := range s.Models {
		spec, ok := specs[name]
		if !ok {
			return nil, fmt.Errorf("--models: unknown model %q", name)
		}
		h := fnv.New64a()
		h.Write([]byte(name))
		for i := 0; i < s.Runs; i++ {
			rng := rand.New(rand.NewPCG(s.Seed, h.Sum64()^uint64(i)))
			lo, hi := s.lrRange()
			r := sweepRun{Model: name, Index: i + 1, LR: logUniform(rng, lo, hi), Clip: logUniform(rng, clipMin, clipMax),
				Dir: filepath.Join(out, name, fmt.Sprintf("run-%02d", i+1))}
			r.Args = append(s.corpusArgs(), spec.Flags...)
			if s.Hidden > 0 {
				r.Args = append(r.Args, "--hidden", strconv.Itoa(s.Hidden))
			}
			r.Args = append(r.Args, "--lr", strconv.FormatFloat(r.LR, 'g', -1, 64), "--clip", strconv.FormatFloat(r.Clip, 'g', -1, 64),
				"--epochs", strconv.Itoa(s.Epochs), "--batch", strconv.Itoa(s.Batch), "--bptt", strconv.Itoa(s.BPTT),
				"--seed", strconv.Itoa(i+1), "--precision", cmp.Or(s.Precision, "float64"), "--out", r.Dir, "--resume")
			if s.Boundary != "" {
				r.Args = append(r.Args, "--boundary", s.Boundary)
			}
			r.Args = append(r.Args, "--improvement", cmp.Or(s.Improvement, improveCrossEntropy))
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// corpusArgs starts the train command of a run of the sweep: the corpus
// flags.
func (s sweepSettings) corpusArgs() []string {
	args := []string{"train"}
	if s.Files != nil {
		args = append(args, "--train", s.Files.Train, "--valid", s.Files.Valid, "--test", s.Files.Test)
	} else {
		args = append(args, "--data", s.Data)
	}
	if s.VocabSize > 0 {
		args = append(args, "--vocab-size", strconv.Itoa(s.VocabSize))
	}
	return args
}

// testFile is the test split of the sweep's corpus.
func (s sweepSettings) testFile() string {
	if s.Files != nil {
		return s.Files.Test
	}
	return filepath.Join(s.Data, ptb.TestFile)
}

func runSweep(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("sweep", stdout)
	var s sweepSettings
	dataDir := fs.String("data", "", "directory of the corpus: ptb.train.txt, ptb.valid.txt and ptb.test.txt (required, or --train, --valid and --test)")
	trainFile := fs.String("train", "", "training split of a corpus of three files (with --valid and --test, instead of --data)")
	validFile := fs.String("valid", "", "validation split of a corpus of three files")
	testFile := fs.String("test", "", "test split of a corpus of three files")
	fs.IntVar(&s.VocabSize, "vocab-size", 0, "the runs' --vocab-size: the N most frequent training types, the others read as <unk> (default 0: every type)")
	models := fs.String("models", "lstm-256,rns-1-2", "comma-separated models of the paper's table, or all")
	fs.IntVar(&s.Runs, "runs", 10, "runs per model")
	fs.Uint64Var(&s.Seed, "seed", 1, "seed of the drawn hyperparameters")
	fs.IntVar(&s.Epochs, "epochs", 100, "maximum epochs per run")
	fs.IntVar(&s.Batch, "batch", 32, "parallel streams B")
	fs.IntVar(&s.BPTT, "bptt", 35, "chunk length T")
	fs.IntVar(&s.Hidden, "hidden", 0, "override every model's hidden size (for quick trials; default 0: the paper's): the runs keep the paper models' names (lstm-256/run-01), and select's table says the size")
	lrFlag := fs.String("lr-range", fmt.Sprintf("%g:%g", float64(lrMin), float64(lrMax)), "MIN:MAX of the log-uniform learning rates, for the per-token mean loss (the authors' released range; a sweep keeps the range it was made with)")
	out := fs.String("out", "", "sweep directory (required): sweep.json, and <model>/run-NN for each run with its output in <that>.log")
	precFlag := precisionFlag(fs, "float32", "of every run")
	boundaryFlag := fs.String("boundary", nsrnn.BoundaryInChunk.String(), "every run's --boundary: where the stack update after a chunk's last token is computed, in-chunk or next-chunk (as the authors' code for JM; theirs for RNS is in-chunk); recorded in sweep.json")
	improveFlag := fs.String("improvement", improvePerplexity, "every run's --improvement: how an epoch's validation score is judged, perplexity (the authors' rule) or cross-entropy; recorded in sweep.json (a sweep made before the choice keeps cross-entropy)")
	jobs := fs.Int("jobs", 1, "runs trained at once on this machine (each run gets GOMAXPROCS = CPUs/jobs unless GOMAXPROCS is set)")
	retries := fs.Int("retries", 1, "times a run that fails with an error (not a signal) is resumed from its last checkpoint before it counts as failed; its results are those it would have had without the failure")
	slurm := cli.AddSlurmFlags(fs, "ptb", "2-00:00:00", "8G", 2)
	dry := fs.Bool("dry-run", false, "print the runs, their state and how far each has come (epochs, best validation perplexity) without training")
	devFlag := cli.DeviceFlag(fs, "ptb", "given to every run, and not one of the settings of sweep.json: a sweep may go on on another device; with --slurm, ask for a GPU with --sbatch=--gres=gpu:1")
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
	files := *trainFile != "" || *validFile != "" || *testFile != ""
	switch {
	case files && *dataDir != "":
		return errors.New("give --data or --train, --valid and --test, not both")
	case files && (*trainFile == "" || *validFile == "" || *testFile == ""):
		return errors.New("--train, --valid and --test go together")
	case !files && *dataDir == "":
		return errors.New("--data is required (or --train, --valid and --test)")
	case *out == "":
		return errors.New("--out is required")
	case s.Runs < 1:
		return fmt.Errorf("--runs %d must be at least 1", s.Runs)
	case *jobs < 1:
		return fmt.Errorf("--jobs %d must be at least 1", *jobs)
	case *retries < 0:
		return fmt.Errorf("--retries %d must be at least 0", *retries)
	case s.VocabSize < 0:
		return fmt.Errorf("--vocab-size %d must not be negative", s.VocabSize)
	case s.Epochs < 1:
		return fmt.Errorf("--epochs %d must be at least 1", s.Epochs)
	case s.Batch < 1:
		return fmt.Errorf("--batch %d must be at least 1", s.Batch)
	case s.BPTT < 1:
		return fmt.Errorf("--bptt %d must be at least 1", s.BPTT)
	case s.Hidden < 0:
		return fmt.Errorf("--hidden %d must not be negative (0: the paper's sizes)", s.Hidden)
	}
	if b, err := nsrnn.ParseBoundary(*boundaryFlag); err != nil {
		return fmt.Errorf("--boundary: %w", err)
	} else if b != nsrnn.BoundaryInChunk {
		s.Boundary = b.String()
	}
	if s.Improvement, err = improvementSetting(*improveFlag); err != nil {
		return err
	}
	if !fs.Changed("improvement") && sweepLacks(*out, "improvement") {
		s.Improvement = "" // an older sweep's runs keep their rule
	}
	if err := slurm.Check(); err != nil {
		return err
	}
	lo, hi, err := parseLRRange(*lrFlag)
	if err != nil {
		return err
	}
	s.LRRange = [2]float64{lo, hi}
	if !fs.Changed("lr-range") && legacySweep(*out) {
		s.LRRange = [2]float64{} // an older sweep resumes with its draws
	}
	_, precSetting, err := parsePrecision(*precFlag)
	if err != nil {
		return err
	}
	s.Precision = precSetting
	if files {
		s.Files = &corpusFiles{}
		for _, f := range []struct {
			flag       string
			path, into *string
		}{{"train", trainFile, &s.Files.Train}, {"valid", validFile, &s.Files.Valid}, {"test", testFile, &s.Files.Test}} {
			abs, err := filepath.Abs(*f.path)
			if err != nil {
				return fmt.Errorf("--%s: %w", f.flag, err)
			}
			if _, err := os.Stat(abs); err != nil {
				return fmt.Errorf("--%s: %w", f.flag, err)
			}
			*f.into = abs
		}
	} else {
		abs, err := filepath.Abs(*dataDir)
		if err != nil {
			return fmt.Errorf("--data: %w", err)
		}
		if _, err := os.Stat(filepath.Join(abs, ptb.TrainFile)); err != nil {
			return fmt.Errorf("--data: %w", err)
		}
		s.Data = abs
	}
	if *models == "all" {
		for _, m := range paperModels() {
			s.Models = append(s.Models, m.Name)
		}
	} else {
		s.Models = strings.Split(*models, ",")
		for i, m := range s.Models {
			if s.Models[i] = strings.TrimSpace(m); s.Models[i] == "" { // "lstm-256, rns-1-2"
				return fmt.Errorf("--models %q: an empty name (a stray comma?)", *models)
			}
		}
		if err := cli.CheckDistinct("--models", s.Models); err != nil {
			return err
		}
	}
	if err := cli.CheckSweepSize("--models and --runs", len(s.Models), s.Runs); err != nil {
		return err
	}
	if err := checkSweepModels(s); err != nil {
		return err
	}
	// Runs that compute here must be able to use the device; those of a
	// Slurm script compute elsewhere, and a dry run computes nothing.
	if err := checkSweepDevice(s, dev, slurm.Script != "" || *dry); err != nil {
		return err
	}
	runs, err := plan(s, *out)
	if err != nil {
		return err
	}
	if !dev.IsCPU() {
		for i := range runs {
			runs[i].Args = append(runs[i].Args, "--device", dev.String())
		}
	}
	if *dry {
		// Each run with its state and, once it has trained, how far it
		// has come.
		for _, r := range runs {
			st, progress, err := protocol.RunStatus(r.Dir, true)
			if err != nil {
				return err
			}
			if progress != "" {
				st += ": " + progress
			}
			fmt.Fprintf(stdout, "%s run %d: lr %.4g clip %.4g → %s (%s)\n", r.Model, r.Index, r.LR, r.Clip, r.Dir, st)
		}
		return nil
	}
	noteBLAS(stderr, dev)
	lock, err := prepareSweep(*out, s)
	if err != nil {
		return err
	}
	defer lock.Release()
	jobList := sweepJobs(runs)
	if slurm.Script != "" {
		arrays, err := cli.SlurmScript(cli.SlurmJob{
			Name: "ptb-sweep", Package: "github.com/nsrnn/nsrnn/experiments/ptb", Program: "ptb",
			Out: *out, Manifest: filepath.Join(*out, "sweep.json"), Runs: jobList, Flags: *slurm,
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s: %d runs in %d job array(s), each run with --time %s --mem %s --cpus-per-task %d; submit from a login node with: bash %s\n",
			slurm.Script, len(runs), arrays, slurm.Time, slurm.Mem, slurm.CPUs, cli.ShellQuote(slurm.Script))
		if w := slurm.GPUWarning(dev); w != "" {
			fmt.Fprintln(stderr, w)
		}
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return execute(jobList, *jobs, *retries, cli.Subprocess(exe), stderr)
}

// sweepJobs are the runs as the shared sweep executor runs them: their
// train commands end with --resume, which starts a run afresh in an
// absent or empty directory.
func sweepJobs(runs []sweepRun) []cli.SweepRun {
	jobs := make([]cli.SweepRun, len(runs))
	for i, r := range runs {
		jobs[i] = cli.SweepRun{Dir: r.Dir, Args: r.Args}
	}
	return jobs
}

// legacySweep reports whether dir holds a sweep.json made before the
// learning rate's range was recorded (one without lr_range).
func legacySweep(dir string) bool { return sweepLacks(dir, "lr_range") }

// sweepLacks reports whether dir holds a readable sweep.json without the
// setting key: a sweep made before the setting was recorded, or (for an
// omitempty one) with its empty value.
func sweepLacks(dir, key string) bool {
	raw, err := readlimit.File(filepath.Join(dir, "sweep.json"), readlimit.JSON, true)
	if err != nil {
		return false
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(raw, &fields) != nil {
		return false
	}
	_, ok := fields[key]
	return !ok
}

// prepareSweep creates the sweep directory with its sweep.json, or checks
// that an existing one was made with the same settings, listing those that
// differ, and returns the directory's lock, which the sweep holds to its
// end: two sweeps side by side would train the same runs, or, with other
// settings, mix their runs under one sweep.json.
func prepareSweep(dir string, s sweepSettings) (*protocol.DirLock, error) {
	path := filepath.Join(dir, "sweep.json")
	check := func() (bool, error) {
		exists, err := protocol.CheckSettingsFile(path, s)
		if se, ok := errors.AsType[*protocol.SettingsError](err); ok {
			return false, fmt.Errorf("--out: %s holds a sweep with other settings (%s); use another directory", dir, strings.Join(se.Diffs, "; "))
		} else if err != nil {
			return false, fmt.Errorf("--out: %w", err)
		}
		return exists, nil
	}
	if _, err := check(); err != nil { // before the directory is made
		return nil, err
	}
	lock, err := protocol.LockDir(dir)
	if errors.Is(err, protocol.ErrLocked) {
		return nil, fmt.Errorf("--out: another sweep runs in it: %w", err)
	} else if err != nil {
		return nil, fmt.Errorf("--out: %w", err)
	}
	// Again under the lock: another sweep may have written it since.
	exists, err := check()
	if err == nil {
		err = protocol.CheckWritable(dir)
		if err != nil {
			err = fmt.Errorf("--out: %w", err)
		}
	}
	if err == nil && !exists {
		err = protocol.WriteJSON(path, s)
	}
	if err != nil {
		lock.Release()
		return nil, err
	}
	return lock, nil
}

// tookLine is the time of a finished run for its progress line: a resumed
// run's own time is that of its last part, so the training time over
// every part, from its summary, is given beside it.
func tookLine(r cli.SweepResult) string {
	took := fmt.Sprintf("%.0fs", r.Elapsed.Seconds())
	if !r.Resumed() {
		return took
	}
	var sum summary
	if ok, err := readOptionalJSON(filepath.Join(r.Run.Dir, protocol.SummaryFile), &sum); err != nil || !ok {
		return took + " (resumed)"
	}
	return fmt.Sprintf("%s (resumed; %.0fs of training in all)", took, sum.ElapsedSeconds)
}

// execute trains the unfinished runs, jobs at a time, with run (each in a
// subprocess of this program).
func execute(runs []cli.SweepRun, jobs, retries int, run cli.Launcher, stderr io.Writer) error {
	var failed []string
	interrupt := make(chan os.Signal, 2)
	notifySweepSignals(interrupt)
	defer signal.Stop(interrupt)
	_, err := cli.RunSweep(runs, jobs, retries, run, interrupt, cli.SweepHooks{
		Started: func(total, finished, resumed int) {
			fmt.Fprintf(stderr, "sweep: %d runs, %d finished, %d to train (%d resumed), %d at a time\n", total, finished, total-finished, resumed, jobs)
		},
		Stopping: cli.SweepStopping(stderr),
		Waiting:  cli.SweepWaiting(stderr),
		Done: func(r cli.SweepResult) {
			switch {
			case r.Stopped:
				fmt.Fprintf(stderr, "[%d/%d] stopped %s after %.0fs: %v\n", r.Done, r.Total, r.Run.Dir, r.Elapsed.Seconds(), r.Err)
			case r.Err != nil:
				failed = append(failed, fmt.Sprintf("%s: %v", r.Run.Dir, r.Err))
				fmt.Fprintf(stderr, "[%d/%d] FAILED %s after %.0fs%s: %v\n", r.Done, r.Total, r.Run.Dir, r.Elapsed.Seconds(), r.RetryNote(), r.Err)
			default:
				fmt.Fprintf(stderr, "[%d/%d] finished %s in %s%s\n", r.Done, r.Total, r.Run.Dir, tookLine(r), r.RetryNote())
			}
		},
	})
	if err != nil {
		return err
	}
	if len(failed) > 0 {
		return fmt.Errorf("%s failed:\n  %s", cli.Count(len(failed), "run"), strings.Join(failed, "\n  "))
	}
	return nil
}

// selected is the best run of one model.
type selected struct {
	// Model is the paper model's name, the sweep's directory of its
	// runs; Hidden is their hidden size where the sweep's --hidden
	// overrode the paper's.
	Model           string  `json:"model"`
	Hidden          int     `json:"hidden,omitempty"`
	Run             string  `json:"run"`
	Parameters      int     `json:"parameters"`
	LR              float64 `json:"lr"`
	Clip            float64 `json:"clip"`
	Epochs          int     `json:"epochs"`
	ValidPerplexity float64 `json:"valid_perplexity"`
	TestPerplexity  float64 `json:"test_perplexity"`
	Finished        int     `json:"finished_runs"`
}

func runSelect(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("select", stdout)
	sweep := fs.String("sweep", "", "sweep directory (required)")
	dataDir := fs.String("data", "", "directory of the corpus (default: the sweep's)")
	testPath := fs.String("test", "", "test split (default: the sweep's)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *sweep == "" {
		return errors.New("--sweep is required")
	}
	raw, err := readlimit.File(filepath.Join(*sweep, "sweep.json"), readlimit.JSON, true)
	if err != nil {
		return fmt.Errorf("--sweep: %w", err)
	}
	var s sweepSettings
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("--sweep: %w", err)
	}
	if *dataDir != "" && *testPath != "" {
		return errors.New("give --data or --test, not both")
	}
	test, testFlag := s.testFile(), "the sweep's test split"
	switch {
	case *testPath != "":
		test, testFlag = *testPath, "--test"
	case *dataDir != "":
		test, testFlag = filepath.Join(*dataDir, ptb.TestFile), "--data"
	}
	// Every model is tested on the file: one that is missing (or a
	// directory) is the flag's fault, not a run's, and is found out
	// before any run is tested.
	if fi, err := os.Stat(test); err != nil {
		return fmt.Errorf("%s: %w", testFlag, err)
	} else if fi.IsDir() {
		return fmt.Errorf("%s: %s is a directory, not a test split file", testFlag, test)
	}
	// The selection is written into the sweep directory: find out now
	// rather than after testing every model.
	if err := protocol.CheckWritable(*sweep); err != nil {
		return fmt.Errorf("--sweep: %w", err)
	}
	var rows []selected
	// The words of the test file not in the runs' vocabulary (that of
	// the sweep's training split, the same for every run) are read as
	// <unk>: counted while the first model is tested, and reported.
	var unknown *unknownWords
	for _, name := range s.Models {
		dirs, _ := filepath.Glob(filepath.Join(*sweep, name, "run-*"))
		sort.Strings(dirs)
		var best *selected
		n := 0
		for _, d := range dirs {
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
				continue
			}
			var sum summary
			path := filepath.Join(d, protocol.SummaryFile)
			b, err := readlimit.File(path, readlimit.JSON, true)
			if errors.Is(err, os.ErrNotExist) {
				continue // unfinished
			}
			if err == nil {
				if err = json.Unmarshal(b, &sum); err != nil {
					err = fmt.Errorf("%s: %w", path, err)
				}
			}
			if err != nil {
				fmt.Fprintf(stderr, "select: skipping %s: %v\n", d, err)
				continue
			}
			var rs settings
			b, _ = readlimit.File(filepath.Join(d, protocol.RunFile), readlimit.JSON, true)
			_ = json.Unmarshal(b, &rs)
			n++
			if best == nil || sum.BestValidPerplexity < best.ValidPerplexity {
				best = &selected{Model: name, Run: d, Parameters: sum.Parameters, LR: rs.LR, Clip: rs.Clip, Epochs: sum.Epochs, ValidPerplexity: sum.BestValidPerplexity}
			}
		}
		if best == nil {
			fmt.Fprintf(stderr, "select: %s has no finished run\n", name)
			continue
		}
		best.Finished, best.Hidden = n, s.Hidden
		// A run that cannot be tested (most often a test file that cannot
		// be read) stops the selection: selected.json is written only
		// whole.
		var opt *ptb.Options
		if unknown == nil {
			unknown = newUnknownWords()
			unknown.noStrict = true
			opt = &ptb.Options{Unknown: unknown.add}
		}
		res, err := evaluateRun(best.Run, test, 0, 0, "", nsrnn.CPU, opt)
		if err != nil {
			return fmt.Errorf("testing %s: %w (nothing written: repair or remove that run and select again)", best.Run, err)
		}
		best.TestPerplexity = res.Perplexity
		rows = append(rows, *best)
	}
	if len(rows) == 0 {
		return fmt.Errorf("--sweep %s: no model has a finished run: nothing to select", *sweep)
	}
	unknown.report(stderr, "select", "the runs' vocabulary")
	if err := protocol.WriteJSON(filepath.Join(*sweep, "selected.json"), rows); err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rows)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "model\tparameters\tvalid ppl\ttest ppl\tlr\tclip\tepochs\truns\t")
	for _, r := range rows {
		label := r.Model
		if r.Hidden > 0 {
			label = fmt.Sprintf("%s with hidden %d", r.Model, r.Hidden)
		}
		fmt.Fprintf(tw, "%s\t%d\t%.2f\t%.2f\t%.4g\t%.4g\t%d\t%d\t\n", label, r.Parameters, r.ValidPerplexity, r.TestPerplexity, r.LR, r.Clip, r.Epochs, r.Finished)
	}
	return tw.Flush()
}

// notifySweepSignals registers the channel of the signals that a sweep
// passes on to its runs; tests replace it.
var notifySweepSignals = cli.NotifySweepSignals

// paperModelsByName indexes paperModels by name.
func paperModelsByName() map[string]modelSpec {
	specs := map[string]modelSpec{}
	for _, m := range paperModels() {
		specs[m.Name] = m
	}
	return specs
}

// checkSweepModels refuses, before anything is written, a sweep whose
// models (with its --hidden) no run could train, whatever the corpus: each
// model is checked with the smallest vocabulary, <eos> and <unk>, so that
// what it refuses every run would refuse too.
func checkSweepModels(s sweepSettings) error {
	for _, name := range s.Models {
		if _, err := sweepModelConfig(s, name); err != nil {
			return err
		}
	}
	return nil
}

// sweepModelConfig is the configuration of the sweep's model name (with
// its --hidden) with the smallest vocabulary, <eos> and <unk>, checked for
// training; the errors name the flags.
func sweepModelConfig(s sweepSettings, name string) (nsrnn.Config, error) {
	spec, ok := paperModelsByName()[name]
	if !ok {
		var names []string
		for _, m := range paperModels() {
			names = append(names, m.Name)
		}
		return nsrnn.Config{}, fmt.Errorf("--models: unknown model %q: want models of the paper's table (%s), or all", name, strings.Join(names, ", "))
	}
	fs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	mf := addModelFlags(fs)
	args := slices.Clone(spec.Flags)
	if s.Hidden > 0 {
		args = append(args, "--hidden", strconv.Itoa(s.Hidden))
	}
	if err := fs.Parse(args); err != nil {
		return nsrnn.Config{}, fmt.Errorf("--models %s: %w", name, err)
	}
	cfg, err := ptbConfig(mf, 2)
	if err == nil {
		err = cfg.CheckTraining()
	}
	if err != nil && s.Hidden > 0 {
		return nsrnn.Config{}, fmt.Errorf("--models %s, --hidden %d: %w", name, s.Hidden, err)
	} else if err != nil {
		return nsrnn.Config{}, fmt.Errorf("--models %s: %w", name, err)
	}
	return cfg, nil
}

// checkSweepDevice refuses, before anything is written, a device dev
// (not the CPU) that the sweep's runs could not compute on: a model kind
// without an implementation there (said first, naming the model), or,
// unless kindOnly (runs that are to compute on another machine), a device
// this machine cannot use. Each kind is checked once, with a throwaway
// model (cli.CheckDevice).
func checkSweepDevice(s sweepSettings, dev nsrnn.Device, kindOnly bool) error {
	if dev.IsCPU() {
		return nil
	}
	checked := map[string]bool{}
	var unusable error
	for _, name := range s.Models {
		cfg, err := sweepModelConfig(s, name)
		if err != nil {
			return err
		}
		if checked[cfg.Kind] {
			continue
		}
		checked[cfg.Kind] = true
		if err := cli.CheckDevice(dev, cfg, kindOnly); errors.Is(err, nsrnn.ErrNoDeviceKernel) {
			return fmt.Errorf("--models %s: %w", name, err)
		} else if err != nil && unusable == nil {
			unusable = err
		}
	}
	return unusable
}
