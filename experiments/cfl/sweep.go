package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/internal/readlimit"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

func init() {
	prog.Register("sweep", "run (or write a Slurm script for) the paper's grid of training runs", runSweep)
}

// sweepManifestFile is the file of a sweep directory that records its
// grid and lists its runs; each run's output goes to <run dir>.log, next
// to it.
const sweepManifestFile = "sweep.json"

// sweepRun is one training run of a sweep: a point of the grid and the
// arguments of its train command.
type sweepRun struct {
	Task           string  `json:"task"`
	Model          string  `json:"model"`
	StackEmbedding int     `json:"stack_embedding,omitempty"`
	States         int     `json:"states,omitempty"`
	Symbols        int     `json:"symbols,omitempty"`
	LR             float64 `json:"lr"`
	Restart        int     `json:"restart"`
	Seed           uint64  `json:"seed"`
	Dir            string  `json:"dir"`
	// Grammar is the task definition, when it is not the default, paper.
	Grammar data.Grammar `json:"grammar,omitempty"`
	// TaskParams are the task's parameters not at their defaults.
	TaskParams data.Params `json:"task_params,omitempty"`
	// Args are the arguments of the train command, without "train" and
	// without --resume, which is added when Dir holds an interrupted run.
	Args []string `json:"args"`
}

// sweepGrid is the definition of a sweep, recorded in sweep.json: a
// sweep directory is reused only with the same.
type sweepGrid struct {
	Tasks  []string `json:"tasks"`
	Models []string `json:"models"`
	// Grammar is the definition of the tasks, passed to every run with
	// --grammar unless it is the default, paper.
	Grammar data.Grammar `json:"grammar"`
	// TaskParams are task parameters (--symbol-types, --bracket-types)
	// given to the runs of the tasks that take them; none is left out of
	// sweep.json, as in the files written before tasks had parameters.
	TaskParams      data.Params `json:"task_params,omitempty"`
	LRs             []float64   `json:"lrs"`
	StackEmbeddings []int       `json:"stack_embeddings"`
	Restarts        int         `json:"restarts"`
	// FirstSeed is the seed of each setting's first restart when it is
	// not 1 (--first-seed): further restarts of a sweep, in a directory of
	// their own, without training its seeds again. 0 means 1, as in the
	// files written before it could be set.
	FirstSeed int `json:"first_seed,omitempty"`
	// Source is the data of a sweep on the user's data (a grammar file, or
	// text files) in place of tasks of the table; nil for tasks. Tasks
	// then holds its one task name, the file's base name.
	Source *sweepSource `json:"source,omitempty"`
	// States and Symbols are |Q| and |Γ| of the kinds that have them when
	// set (--states, --symbols); zero gives each task's (the paper's), 2
	// and 3 for the user's data.
	States  int `json:"states,omitempty"`
	Symbols int `json:"symbols,omitempty"`
	// Bottom is the bottom-symbol behaviour given to the kinds that have
	// one (--bottom), when set; empty leaves train's default, original.
	Bottom string `json:"bottom,omitempty"`
	// PushHiddenState makes the kinds that can push the hidden state do so
	// (--push-hidden-state): they then have no stack vector size of their
	// own, and their directory is <kind>-hidden.
	PushHiddenState bool `json:"push_hidden_state,omitempty"`
	// Extra are train flags passed to every run (--epochs and the like).
	Extra []string `json:"train_flags"`
	Out   string   `json:"-"`
}

// sweepSource is the user's data of a sweep, the train flags of the same
// names: a grammar file, or training, validation and test strings.
type sweepSource struct {
	GrammarFile string `json:"grammar_file,omitempty"`
	// GrammarSHA256 is the grammar file's SHA-256 digest (lowercase
	// hexadecimal) when the sweep was made, so that a sweep is not
	// continued on a changed file; empty in the files written before it
	// was recorded, which are continued without the check.
	GrammarSHA256 string `json:"grammar_sha256,omitempty"`
	Train         string `json:"train,omitempty"`
	Valid         string `json:"valid,omitempty"`
	Test          string `json:"test,omitempty"`
}

// args returns the train flags that name the source.
func (s *sweepSource) args() []string {
	if s.GrammarFile != "" {
		return []string{"--grammar-file", s.GrammarFile}
	}
	args := []string{"--train", s.Train, "--valid", s.Valid}
	if s.Test != "" {
		args = append(args, "--test", s.Test)
	}
	return args
}

// sweepManifest is sweep.json: the grid, and the runs it makes.
type sweepManifest struct {
	sweepGrid
	Created string     `json:"created"`
	Runs    []sweepRun `json:"runs"`
}

// modelDirName is the directory of a model's runs within a task:
// the model kind, with -e<E> for the stack vector size of gref and jm.
func modelDirName(kind string, stackEmbedding int) string {
	if stackEmbedding > 0 {
		return fmt.Sprintf("%s-e%d", kind, stackEmbedding)
	}
	return kind
}

func formatLR(lr float64) string { return strconv.FormatFloat(lr, 'g', -1, 64) }

// enumerate lists the grid's runs: tasks × models × learning rates ×
// restarts, × stack vector sizes for the kinds that have them
// (--stack-embedding among their nsrnn.Kind.Flags()), with the paper's |Q|
// and |Γ| of each task for the kinds that have those, and each task with
// those of the grid's task parameters that it takes (its directory named
// by them, as marked-reversal-symbol-types40). Restart k (1-based) uses
// seed k (k + FirstSeed − 1 with a FirstSeed), so that the restarts of a
// setting differ in their data, initial parameters and shuffling, while
// different settings share data.
func (g sweepGrid) enumerate() []sweepRun {
	var runs []sweepRun
	var grammar data.Grammar
	if g.Grammar.String() != string(data.GrammarPaper) {
		grammar = g.Grammar
	}
	for _, task := range g.Tasks {
		params, taskDir, paramArgs := g.taskParams(task)
		taskArgs := []string{"--task", task}
		if g.Source != nil {
			taskArgs = g.Source.args()
		}
		for _, kind := range g.Models {
			embs := []int{0}
			hidden := g.PushHiddenState && cli.KindUses(kind, "push-hidden-state")
			if cli.KindUses(kind, "stack-embedding") && !hidden {
				embs = g.StackEmbeddings
			}
			var q, gamma int
			if cli.KindUses(kind, "states") {
				q, gamma = stackDefaults(task)
				if g.States > 0 {
					q = g.States
				}
				if g.Symbols > 0 {
					gamma = g.Symbols
				}
			}
			for _, e := range embs {
				modelDir := modelDirName(kind, e)
				if hidden {
					modelDir = kind + "-hidden"
				}
				for _, lr := range g.LRs {
					for k := 1; k <= g.Restarts; k++ {
						seed := k + max(g.FirstSeed, 1) - 1
						dir := filepath.Join(g.Out, taskDir, modelDir, "lr"+formatLR(lr), fmt.Sprintf("seed%d", seed))
						args := append(slices.Clone(taskArgs), paramArgs...)
						args = append(args, "--model", kind, "--lr", formatLR(lr), "--seed", strconv.Itoa(seed))
						if grammar != "" {
							args = append(args, "--grammar", string(grammar))
						}
						if e > 0 {
							args = append(args, "--stack-embedding", strconv.Itoa(e))
						}
						if q > 0 {
							args = append(args, "--states", strconv.Itoa(q), "--symbols", strconv.Itoa(gamma))
						}
						if g.Bottom != "" && cli.KindUses(kind, "bottom") {
							args = append(args, "--bottom", g.Bottom)
						}
						if hidden {
							args = append(args, "--push-hidden-state")
						}
						args = append(args, g.Extra...)
						args = append(args, "--out", dir, "--quiet")
						runs = append(runs, sweepRun{
							Task: task, Grammar: grammar, TaskParams: params, Model: kind, StackEmbedding: e, States: q, Symbols: gamma,
							LR: lr, Restart: k, Seed: uint64(seed), Dir: dir, Args: args,
						})
					}
				}
			}
		}
	}
	return runs
}

// taskParams returns the grid's task parameters that task takes and are
// not at their defaults, the task's directory (its name, then each such
// parameter and its value, as marked-reversal-symbol-types40) and the
// train flags that give them.
func (g sweepGrid) taskParams(task string) (p data.Params, dir string, args []string) {
	dir = task
	info, err := data.LookupTask(task)
	if err != nil {
		return nil, dir, nil
	}
	for _, k := range slices.Sorted(maps.Keys(g.TaskParams)) {
		if q, ok := info.Param(k); ok && g.TaskParams[k] != q.Default {
			if p == nil {
				p = data.Params{}
			}
			p[k] = g.TaskParams[k]
			dir += fmt.Sprintf("-%s%d", k, p[k])
			args = append(args, "--"+k, strconv.Itoa(p[k]))
		}
	}
	return p, dir, args
}

// job is the run as the shared sweep executor runs it: the train
// command, on the device dev (--device, unless the CPU: not part of the
// run's arguments in sweep.json, so that a sweep may go on on another
// device), resumed with --resume when its directory holds files.
func (r sweepRun) job(dev nsrnn.Device) cli.SweepRun {
	args := append([]string{"train"}, r.Args...)
	if !dev.IsCPU() {
		args = append(args, "--device", dev.String())
	}
	return cli.SweepRun{Dir: r.Dir, Args: args, Resume: "--resume"}
}

func runSweep(args []string, stdout, stderr io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return sweepCommand(args, stdout, stderr, cli.Subprocess(exe))
}

func sweepCommand(args []string, stdout, stderr io.Writer, run cli.Launcher) error {
	fs := prog.FlagSet("sweep", stdout)
	taskList := fs.String("task", "", "comma-separated tasks, or all (the paper's five), or "+data.Group2023+" (the seven of the authors' 2023 release) (required, or --grammar-file, or --train and --valid): "+taskNames())
	params := taskParamFlags(fs)
	src := dataSourceFlags(fs)
	states := fs.Int("states", 0, "|Q| of the models that have it (default 0: each task's, as in the paper; 2 for your own data)")
	symbols := fs.Int("symbols", 0, "|Γ| of the models that have it (default 0: each task's, as in the paper; 3 for your own data)")
	bottom := fs.String("bottom", "", "bottom-symbol behaviour of "+joinNames(cli.KindsUsing("bottom"))+": original (ICLR 2022) or fixed (ICLR 2023, the 2023 release's protocol) (default: train's, original)")
	pushHidden := fs.Bool("push-hidden-state", false, joinNames(cli.KindsUsing("push-hidden-state"))+" push the hidden state instead of a learned vector (the 2023 release's \"JM pushing the hidden state\"): no --stack-embeddings for them, and their runs go to <kind>-hidden")
	grammar := cli.AddGrammarFlag(fs)
	modelList := fs.String("models", "paper", "comma-separated models, or paper (the paper's: "+strings.Join(protocol.PaperModels, ",")+"), or all: "+joinNames(nsrnn.KindNames()))
	out := fs.String("out", "", "sweep directory (required): "+sweepManifestFile+", and <task>/<model>/lr<LR>/seed<K> for each run with its output in <that>.log")
	jobs := fs.Int("jobs", runtime.NumCPU(), "runs executed in parallel here (each run gets GOMAXPROCS = CPUs/jobs unless GOMAXPROCS is set)")
	retries := fs.Int("retries", 1, "times a run that fails with an error (not a signal) is resumed from its last checkpoint before it counts as failed; its results are those it would have had without the failure")
	restarts := fs.Int("restarts", 5, "random restarts per setting (seeds 1 … N, or from --first-seed)")
	firstSeed := fs.Int("first-seed", 1, "seed of each setting's first restart: --first-seed K --restarts N runs seeds K … K+N−1, further restarts of an earlier sweep in a directory of their own (select them together with cfl select --also)")
	lrs := fs.Float64Slice("lrs", []float64{0.01, 0.005, 0.001, 0.0005}, "learning rates")
	embs := fs.IntSlice("stack-embeddings", []int{2, 20, 40}, "stack vector sizes of "+joinNames(cli.KindsUsing("stack-embedding")))
	epochs := fs.Int("epochs", 0, "train --epochs (default 0: train's, 200)")
	trainSize := fs.Int("train-size", 0, "train --train-size (default 0: train's, 10000)")
	validSize := fs.Int("valid-size", 0, "train --valid-size (default 0: train's, 1000)")
	workers := fs.Int("workers", 0, "train --workers: parts of each batch, recorded in each run.json (default 0: train's default for the run's GOMAXPROCS, which already splits a batch further where its dynamic programs would outgrow the caches)")
	slurm := cli.AddSlurmFlags(fs, "cfl", "2-00:00:00", "4G", 1)
	dryRun := fs.Bool("dry-run", false, "print the runs, their state and how far each has come (epochs, best validation score) without running or writing anything")
	devFlag := cli.DeviceFlag(fs, "cfl", "given to every run, and not one of the settings of "+sweepManifestFile+": a sweep may go on on another device; with --slurm, ask for a GPU with --sbatch=--gres=gpu:1")
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
	g := sweepGrid{Grammar: *grammar, LRs: *lrs, StackEmbeddings: *embs, Restarts: *restarts, Out: *out, States: *states, Symbols: *symbols,
		Bottom: *bottom, PushHiddenState: *pushHidden}
	if *firstSeed > 1 {
		g.FirstSeed = *firstSeed
	}
	userData := *src.grammarFile != "" || src.hasStrings()
	switch {
	case *taskList == "" && !userData:
		return fmt.Errorf("--task is required (some of %s, or all, or %s), or --grammar-file, or --train and --valid", taskNames(), data.Group2023)
	case *states < 0 || *symbols < 0:
		return fmt.Errorf("--states %d and --symbols %d must be positive (or 0 for the task's)", *states, *symbols)
	case *bottom != "" && *bottom != "original" && *bottom != "fixed":
		return fmt.Errorf("--bottom %q: want original or fixed", *bottom)
	case *out == "":
		return fmt.Errorf("--out is required")
	case *restarts < 1:
		return fmt.Errorf("--restarts %d must be at least 1", *restarts)
	case *firstSeed < 1 || *firstSeed > math.MaxInt-*restarts:
		return fmt.Errorf("--first-seed %d must be at least 1 (and the last seed, with --restarts %d, an int)", *firstSeed, *restarts)
	case *jobs < 1:
		return fmt.Errorf("--jobs %d must be at least 1", *jobs)
	case *retries < 0:
		return fmt.Errorf("--retries %d must be at least 0", *retries)
	case len(*lrs) == 0:
		return fmt.Errorf("--lrs is empty")
	}
	for _, lr := range *lrs {
		if !(lr > 0) || math.IsInf(lr, 0) {
			return fmt.Errorf("--lrs: learning rate %g must be positive and finite", lr)
		}
	}
	for _, e := range *embs {
		if e < 1 {
			return fmt.Errorf("--stack-embeddings: size %d must be at least 1", e)
		}
	}
	if err := cli.CheckDistinct("--lrs", *lrs); err != nil {
		return err
	}
	if err := cli.CheckDistinct("--stack-embeddings", *embs); err != nil {
		return err
	}
	if err := slurm.Check(); err != nil {
		return err
	}
	switch {
	case userData:
		// The files are read and checked now, before anything is
		// written; each run reads them again and records their digests.
		t, _, gf, err := src.resolve(fs, *taskList, params(), *grammar)
		if err != nil {
			return err
		}
		g.Tasks = []string{t.Name()}
		g.Source = &sweepSource{GrammarFile: *src.grammarFile, Train: *src.train, Valid: *src.valid, Test: *src.test}
		if gf != nil {
			g.Source.GrammarSHA256 = gf.SHA256
		}
	case *taskList == data.Group2023:
		g.Tasks = data.TaskGroupNames(data.Group2023)
	default:
		if g.Tasks, err = parseTaskList(*taskList); err != nil {
			return err
		}
	}
	if !userData {
		if err := g.checkTasks(params()); err != nil {
			return err
		}
	}
	if *modelList == "paper" {
		g.Models = slices.Clone(protocol.PaperModels)
	} else if g.Models, err = parseList(*modelList, nsrnn.KindNames(), "--models"); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"epochs", *epochs}, {"train-size", *trainSize}, {"valid-size", *validSize}, {"workers", *workers}} {
		if fs.Changed(f.name) {
			if f.v < 1 {
				return fmt.Errorf("--%s %d must be at least 1", f.name, f.v)
			}
			g.Extra = append(g.Extra, "--"+f.name, strconv.Itoa(f.v))
		}
	}
	for _, m := range g.Models {
		hidden := g.PushHiddenState && cli.KindUses(m, "push-hidden-state")
		if cli.KindUses(m, "stack-embedding") && !hidden && len(*embs) == 0 {
			return fmt.Errorf("--stack-embeddings is empty but %s is among --models", m)
		}
	}
	for _, f := range []struct {
		flag string
		set  bool
	}{{"bottom", g.Bottom != ""}, {"push-hidden-state", g.PushHiddenState}} {
		if f.set && !slices.ContainsFunc(g.Models, func(m string) bool { return cli.KindUses(m, f.flag) }) {
			return fmt.Errorf("--%s: none of --models (%s) takes it; it applies to %s", f.flag, strings.Join(g.Models, ","), joinNames(cli.KindsUsing(f.flag)))
		}
	}
	if err := cli.CheckSweepSize("--task, --models, --lrs, --stack-embeddings and --restarts", len(g.Tasks), len(g.Models), len(g.LRs), max(len(g.StackEmbeddings), 1), g.Restarts); err != nil {
		return err
	}
	runs := g.enumerate()
	manifest := filepath.Join(*out, sweepManifestFile)
	// The manifest is checked before the runs' settings (and again under
	// the directory's lock below, where it is written).
	if _, err := checkSweep(manifest, g, runs); err != nil {
		return err
	}
	// Every run's settings are checked as its train command will check
	// them, so that a sweep whose runs would all fail is refused before
	// sweep.json holds it.
	// Runs that differ only in their seed, learning rate and directory
	// are checked once (the learning rates were checked above): a task is
	// built, and a user's files read, once per setting.
	// With a device other than the CPU, each model kind is checked once
	// with a throwaway model: it must have an implementation there (said
	// first), and, for runs that compute here (not those of a Slurm
	// script, nor a dry run), the device must be usable.
	checked, kinds := map[string]bool{}, map[string]bool{}
	var unusable error // the device's, said once every kind is checked
	for _, r := range runs {
		key := settingKey(r.Args)
		if checked[key] {
			continue
		}
		p, err := prepareTrain(r.Args, io.Discard)
		if err != nil {
			return fmt.Errorf("run %s: %w", r.Dir, err)
		}
		checked[key] = true
		if !dev.IsCPU() && !kinds[p.cfg.Kind] {
			kinds[p.cfg.Kind] = true
			if err := cli.CheckDevice(dev, p.cfg, slurm.Script != "" || *dryRun); errors.Is(err, nsrnn.ErrNoDeviceKernel) {
				return fmt.Errorf("--models %s: %w", p.cfg.Kind, err)
			} else if err != nil && unusable == nil {
				unusable = err
			}
		}
	}
	if unusable != nil {
		return unusable
	}

	if *dryRun {
		return printDryRun(stdout, runs, dev)
	}

	// One sweep at a time in --out, from here to its end: two sweeps
	// side by side would train the same runs, or, with other settings,
	// mix their runs under one sweep.json. The manifest is checked again
	// under the lock, in case another sweep wrote it since.
	lock, err := protocol.LockDir(*out)
	if errors.Is(err, protocol.ErrLocked) {
		return fmt.Errorf("--out: another sweep runs in it: %w", err)
	} else if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	defer lock.Release()
	exists, err := checkSweep(manifest, g, runs)
	if err != nil {
		return err
	}
	if err := protocol.CheckWritable(*out); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if !exists {
		m := sweepManifest{sweepGrid: g, Created: time.Now().Format(time.RFC3339), Runs: runs}
		if err := protocol.WriteJSON(manifest, m); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	jobsList := make([]cli.SweepRun, len(runs))
	for i, r := range runs {
		jobsList[i] = r.job(dev)
	}
	if slurm.Script != "" {
		arrays, err := cli.SlurmScript(cli.SlurmJob{
			Name: "cfl-sweep", Package: "github.com/nsrnn/nsrnn/experiments/cfl", Program: "cfl",
			Out: *out, Manifest: manifest, Runs: jobsList, Flags: *slurm,
		})
		if err != nil {
			return err
		}
		fmt.Fprintf(stderr, "wrote %s: %d runs in %d job array(s) of at most %d, each run with --time %s --mem %s --cpus-per-task %d; submit from a login node with: bash %s\n",
			slurm.Script, len(runs), arrays, cli.MaxArrayTasks, slurm.Time, slurm.Mem, slurm.CPUs, cli.ShellQuote(slurm.Script))
		if w := slurm.GPUWarning(dev); w != "" {
			fmt.Fprintln(stderr, w)
		}
		return nil
	}
	interrupt := make(chan os.Signal, 2)
	notifySweepSignals(interrupt)
	defer signal.Stop(interrupt)
	failed, err := cli.RunSweep(jobsList, *jobs, *retries, run, interrupt, cli.SweepHooks{
		Started: func(total, finished, resumed int) {
			fmt.Fprintf(stderr, "sweep: %d runs, %d already finished, %d to run (%d resumed), %d at a time\n",
				total, finished, total-finished, resumed, *jobs)
		},
		Stopping: cli.SweepStopping(stderr),
		Waiting:  cli.SweepWaiting(stderr),
		Done: func(res cli.SweepResult) {
			name := strings.TrimPrefix(res.Run.Dir, "./")
			secs := res.Elapsed.Seconds()
			err := res.Err
			if res.Stopped {
				fmt.Fprintf(stderr, "[%d/%d] stopped %s after %.0fs: %v\n", res.Done, res.Total, name, secs, err)
				return
			}
			var s *protocol.Summary
			if err == nil {
				s, err = protocol.ReadSummary(res.Run.Dir)
			}
			if err != nil {
				fmt.Fprintf(stderr, "[%d/%d] FAILED %s after %.0fs%s: %v\n", res.Done, res.Total, name, secs, res.RetryNote(), err)
				return
			}
			// A resumed run's own time is that of its last part; the
			// summary has the training time over every part.
			took := fmt.Sprintf("in %.0fs", secs)
			if res.Resumed() {
				took = fmt.Sprintf("in %.0fs (resumed; %.0fs of training in all)", secs, s.ElapsedSeconds)
			}
			score := fmt.Sprintf("best validation difference %.4f nats per symbol", s.BestValidCrossEntropyDiff)
			if s.NoLowerBound {
				score = fmt.Sprintf("best validation cross-entropy %.4f nats per symbol (no lower bound)", s.BestValidCrossEntropy)
			}
			fmt.Fprintf(stderr, "[%d/%d] done %s %s%s: %s at epoch %d of %d\n",
				res.Done, res.Total, name, took, res.RetryNote(), score, s.BestEpoch, s.Epochs)
		},
	})
	if err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%s failed; run the sweep again to resume (see each run's error above: one that will fail again needs fixing first)", cli.Count(failed, "run"))
	}
	return nil
}

// checkSweep checks that the sweep recorded in the manifest file, if there
// is one, is the grid g (which makes runs): it reports whether the file
// exists, and refuses a sweep directory made with other settings, listing
// the differences. A manifest written before the grid was recorded is
// accepted when it lists the same runs. A sweep on a grammar file whose
// digest differs from the one recorded is refused, naming the file; one
// recorded without a digest (written before it was) is compared without.
func checkSweep(path string, g sweepGrid, runs []sweepRun) (exists bool, err error) {
	b, err := readlimit.File(path, readlimit.JSON, true)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("--out: %w", err)
	}
	var old sweepManifest
	if err := json.Unmarshal(b, &old); err != nil {
		return true, fmt.Errorf("--out: %s is damaged (%w): restore it from a copy, or use another --out", path, err)
	}
	dir := filepath.Dir(path)
	if old.Tasks == nil {
		same := len(old.Runs) == len(runs)
		for i := 0; same && i < len(runs); i++ {
			same = old.Runs[i].Dir == runs[i].Dir && slices.Equal(old.Runs[i].Args, runs[i].Args)
		}
		if !same {
			return true, fmt.Errorf("--out %s holds a sweep of other runs (%d in its %s, %d now); use another --out for these settings",
				dir, len(old.Runs), sweepManifestFile, len(runs))
		}
		return false, nil // rewritten with the grid
	}
	if o, n := old.Source, g.Source; o != nil && n != nil && n.GrammarSHA256 != "" && o.GrammarFile == n.GrammarFile {
		switch o.GrammarSHA256 {
		case n.GrammarSHA256:
		case "":
			// A sweep.json written before the digest was recorded.
			src := *n
			src.GrammarSHA256 = ""
			g.Source = &src
		default:
			return true, fmt.Errorf("--grammar-file %s has changed since the sweep in %s was made: SHA-256 %s, the sweep's (%s) %s; "+
				"restore the file, or use another --out for the new grammar", n.GrammarFile, dir, n.GrammarSHA256, path, o.GrammarSHA256)
		}
	}
	_, err = protocol.CheckSettingsFile(path, g)
	if se, ok := errors.AsType[*protocol.SettingsError](err); ok {
		return true, fmt.Errorf("--out %s holds a sweep made with other settings (%s): %s; use another --out for these settings, or the same flags to continue it",
			dir, path, strings.Join(se.Diffs, "; "))
	}
	return true, err
}

// parseTaskList parses --task: a comma-separated list of the tasks of the
// table, or "all", the paper's five.
func parseTaskList(s string) ([]string, error) {
	if s == "all" {
		return data.TaskNames(), nil
	}
	return parseList(s, data.AllTaskNames(), "--task")
}

// checkTasks sets the grid's task parameters to p, without those at their
// defaults, and checks the tasks with them: each given parameter must be
// taken by one of the tasks, and each task must be valid with the
// parameters it takes and the grid's definition. The errors name the
// flags.
func (g *sweepGrid) checkTasks(p data.Params) error {
	g.TaskParams = nil
	for _, k := range slices.Sorted(maps.Keys(p)) {
		var takers []string
		for _, task := range g.Tasks {
			info, _ := data.LookupTask(task)
			if q, ok := info.Param(k); ok {
				takers = append(takers, task)
				if _, err := info.CheckParams(data.Params{k: p[k]}); err != nil {
					return fmt.Errorf("--%s: %w", k, err)
				}
				if p[k] != q.Default {
					if g.TaskParams == nil {
						g.TaskParams = data.Params{}
					}
					g.TaskParams[k] = p[k]
				}
			}
		}
		if len(takers) == 0 {
			return fmt.Errorf("--%s: none of the tasks of --task takes it", k)
		}
	}
	for _, task := range g.Tasks {
		tp, _, _ := g.taskParams(task)
		if _, err := taskFlag(task, tp, g.Grammar); err != nil {
			return err
		}
	}
	return nil
}

// parseList parses a comma-separated list of names from known, or "all".
func parseList(s string, known []string, flag string) ([]string, error) {
	if s == "all" {
		return slices.Clone(known), nil
	}
	var out []string
	for _, n := range strings.Split(s, ",") {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if !slices.Contains(known, n) {
			return nil, fmt.Errorf("%s: unknown name %q (want all or some of %s)", flag, n, strings.Join(known, ","))
		}
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s is empty", flag)
	}
	return out, nil
}

// notifySweepSignals registers the channel of the signals that a sweep
// passes on to its runs; tests replace it.
var notifySweepSignals = cli.NotifySweepSignals

// settingKey is a run's train arguments without --seed, --lr and --out:
// what its checks depend on.
func settingKey(args []string) string {
	var kept []string
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "--seed", "--lr", "--out":
			i++
			continue
		}
		kept = append(kept, args[i])
	}
	return strings.Join(kept, "\x00")
}

// printDryRun prints each run's state (new, resume, finished), the command
// that runs it on the device dev and, under it, how far it has come
// (protocol.RunProgress), then the count of runs in each state.
func printDryRun(w io.Writer, runs []sweepRun, dev nsrnn.Device) error {
	count := map[string]int{}
	for _, r := range runs {
		st, progress, err := protocol.RunStatus(r.Dir, false)
		if err != nil {
			return err
		}
		count[st]++
		fmt.Fprintf(w, "%-8s %s\n", st, cli.ShellJoin(r.job(dev).CommandArgs(st)))
		if progress != "" {
			fmt.Fprintf(w, "%-8s %s\n", "", progress)
		}
	}
	fmt.Fprintf(w, "%d runs: %d finished, %d to resume, %d new\n", len(runs), count[protocol.RunFinished], count[protocol.RunResume], count[protocol.RunNew])
	return nil
}
