package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/experiment"
	"github.com/nsrnn/nsrnn/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
)

func init() {
	prog.Register("sweep", "run (or write a Slurm script for) the paper's grid of training runs", runSweep)
}

// Files of a sweep directory.
const (
	sweepManifestFile = "sweep.json"
	sweepLogSuffix    = ".log" // a run's output goes to <run dir>.log, next to it
)

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
	// Args are the arguments of the train command, without "train" and
	// without --resume, which is added when Dir holds an interrupted run.
	Args []string `json:"args"`
}

// sweepGrid is the definition of a sweep.
type sweepGrid struct {
	Tasks           []string
	Models          []string
	LRs             []float64
	StackEmbeddings []int
	Restarts        int
	// Grammar is the definition of the tasks, passed to every run with
	// --grammar unless it is the default, paper.
	Grammar data.Grammar
	// Extra are train flags passed to every run (--epochs and the like).
	Extra []string
	Out   string
}

// sweepManifest is sweep.json.
type sweepManifest struct {
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
// restarts, × stack vector sizes for gref and jm. Restart k (1-based) uses
// seed k, so that the restarts of a setting differ in their data, initial
// parameters and shuffling, while different settings share data.
func (g sweepGrid) enumerate() []sweepRun {
	var runs []sweepRun
	var grammar data.Grammar
	if g.Grammar.String() != string(data.GrammarPaper) {
		grammar = g.Grammar
	}
	for _, task := range g.Tasks {
		for _, kind := range g.Models {
			embs := []int{0}
			if kind == nsrnn.Gref || kind == nsrnn.JM {
				embs = g.StackEmbeddings
			}
			var q, gamma int
			if nsrnn.IsNondeterministic(kind) {
				q, gamma = stackDefaults(task)
			}
			for _, e := range embs {
				for _, lr := range g.LRs {
					for k := 1; k <= g.Restarts; k++ {
						dir := filepath.Join(g.Out, task, modelDirName(kind, e), "lr"+formatLR(lr), fmt.Sprintf("seed%d", k))
						args := []string{"--task", task, "--model", kind, "--lr", formatLR(lr), "--seed", strconv.Itoa(k)}
						if grammar != "" {
							args = append(args, "--grammar", string(grammar))
						}
						if e > 0 {
							args = append(args, "--stack-embedding", strconv.Itoa(e))
						}
						if q > 0 {
							args = append(args, "--states", strconv.Itoa(q), "--symbols", strconv.Itoa(gamma))
						}
						args = append(args, g.Extra...)
						args = append(args, "--out", dir, "--quiet")
						runs = append(runs, sweepRun{
							Task: task, Grammar: grammar, Model: kind, StackEmbedding: e, States: q, Symbols: gamma,
							LR: lr, Restart: k, Seed: uint64(k), Dir: dir, Args: args,
						})
					}
				}
			}
		}
	}
	return runs
}

// Run states found on disk.
const (
	runNew      = "new"
	runResume   = "resume"
	runFinished = "finished"
)

// runState tells whether a run's directory is absent (new), holds an
// interrupted run (resume), or a finished one with summary.json.
func runState(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, experiment.SummaryFile)); err == nil {
		return runFinished, nil
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return runNew, nil
	case err != nil:
		return "", err
	case len(entries) == 0:
		return runNew, nil
	}
	return runResume, nil
}

// trainArgs are the full train arguments of a run in the given state.
func (r sweepRun) trainArgs(state string) []string {
	args := append([]string{"train"}, r.Args...)
	if state == runResume {
		args = append(args, "--resume")
	}
	return args
}

// runFunc executes one train command (args start with "train"), sending
// its output to logPath. The sweep runs each as a subprocess; tests
// replace it.
type runFunc func(args []string, logPath string, threads int) error

// subprocessRunner runs the train command as a subprocess of this same
// binary, so that a crash or kill of one run does not affect the others.
func subprocessRunner(exe string) runFunc {
	return func(args []string, logPath string, threads int) error {
		if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
			return err
		}
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintf(f, "# %s %s\n", time.Now().Format(time.RFC3339), shellJoin(append([]string{exe}, args...)))
		cmd := exec.Command(exe, args...)
		cmd.Stdout, cmd.Stderr = f, f
		cmd.Env = os.Environ()
		if os.Getenv("GOMAXPROCS") == "" && threads > 0 {
			cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(threads))
		}
		return cmd.Run()
	}
}

func runSweep(args []string, stdout, stderr io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	return sweepCommand(args, stdout, stderr, subprocessRunner(exe))
}

func sweepCommand(args []string, stdout, stderr io.Writer, run runFunc) error {
	fs := pflag.NewFlagSet("sweep", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	taskList := fs.String("task", "", "task, or all (required)")
	grammar := cli.AddGrammarFlag(fs)
	modelList := fs.String("models", "all", "comma-separated models, or all ("+strings.Join(nsrnn.Kinds, ",")+")")
	out := fs.String("out", "", "sweep directory (required)")
	jobs := fs.Int("jobs", runtime.NumCPU(), "runs executed in parallel (each run gets GOMAXPROCS = CPUs/jobs unless GOMAXPROCS is set)")
	restarts := fs.Int("restarts", 5, "random restarts per setting (seeds 1 … N)")
	lrs := fs.Float64Slice("lrs", []float64{0.01, 0.005, 0.001, 0.0005}, "learning rates")
	embs := fs.IntSlice("stack-embeddings", []int{2, 20, 40}, "stack vector sizes of gref and jm")
	epochs := fs.Int("epochs", 0, "train --epochs (default: train's, 200)")
	trainSize := fs.Int("train-size", 0, "train --train-size (default: train's, 10000)")
	validSize := fs.Int("valid-size", 0, "train --valid-size (default: train's, 1000)")
	slurm := fs.String("slurm", "", "write a Slurm job-array script to this file instead of running")
	binary := fs.String("binary", "go run ./experiments/cfl", "command that runs this program in the Slurm script (shell words)")
	sbatch := fs.StringArray("sbatch", nil, "extra #SBATCH option for the Slurm script, e.g. --sbatch=--time=48:00:00 (repeatable)")
	dryRun := fs.Bool("dry-run", false, "print the runs and their state without running or writing anything")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	g := sweepGrid{Grammar: *grammar, LRs: *lrs, StackEmbeddings: *embs, Restarts: *restarts, Out: *out}
	var err error
	switch {
	case *taskList == "":
		return fmt.Errorf("--task is required (one of %v, or all)", data.TaskNames())
	case *out == "":
		return fmt.Errorf("--out is required")
	case *restarts < 1:
		return fmt.Errorf("--restarts %d must be at least 1", *restarts)
	case *jobs < 1:
		return fmt.Errorf("--jobs %d must be at least 1", *jobs)
	case len(*lrs) == 0:
		return fmt.Errorf("--lrs is empty")
	}
	for _, lr := range *lrs {
		if lr <= 0 {
			return fmt.Errorf("--lrs: learning rate %g must be positive", lr)
		}
	}
	for _, e := range *embs {
		if e < 1 {
			return fmt.Errorf("--stack-embeddings: size %d must be at least 1", e)
		}
	}
	if g.Tasks, err = parseList(*taskList, data.TaskNames(), "--task"); err != nil {
		return err
	}
	if g.Models, err = parseList(*modelList, nsrnn.Kinds, "--models"); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		v    int
	}{{"epochs", *epochs}, {"train-size", *trainSize}, {"valid-size", *validSize}} {
		if fs.Changed(f.name) {
			if f.v < 1 {
				return fmt.Errorf("--%s %d must be at least 1", f.name, f.v)
			}
			g.Extra = append(g.Extra, "--"+f.name, strconv.Itoa(f.v))
		}
	}
	if slices.Contains(g.Models, nsrnn.Gref) || slices.Contains(g.Models, nsrnn.JM) {
		if len(*embs) == 0 {
			return fmt.Errorf("--stack-embeddings is empty but gref or jm is among --models")
		}
	}
	runs := g.enumerate()

	if *dryRun {
		for _, r := range runs {
			st, err := runState(r.Dir)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%-8s %s\n", st, shellJoin(r.trainArgs(st)))
		}
		fmt.Fprintf(stdout, "%d runs\n", len(runs))
		return nil
	}

	if err := os.MkdirAll(*out, 0o755); err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	if err := experiment.WriteJSON(filepath.Join(*out, sweepManifestFile), sweepManifest{Created: time.Now().Format(time.RFC3339), Runs: runs}); err != nil {
		return err
	}
	if *slurm != "" {
		script := slurmScript(runs, *binary, *out, *sbatch)
		if err := os.WriteFile(*slurm, []byte(script), 0o755); err != nil {
			return fmt.Errorf("--slurm: %w", err)
		}
		fmt.Fprintf(stderr, "wrote %s: a job array of %d runs (submit with: sbatch %s); manifest %s\n",
			*slurm, len(runs), *slurm, filepath.Join(*out, sweepManifestFile))
		return nil
	}
	return executeSweep(runs, *jobs, run, stderr)
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

// executeSweep runs the unfinished runs, jobs at a time, skipping finished
// ones and resuming interrupted ones, and prints a line per finished run.
func executeSweep(runs []sweepRun, jobs int, run runFunc, stderr io.Writer) error {
	type job struct {
		r     sweepRun
		state string
	}
	var todo []job
	skipped := 0
	for _, r := range runs {
		st, err := runState(r.Dir)
		if err != nil {
			return err
		}
		if st == runFinished {
			skipped++
			continue
		}
		todo = append(todo, job{r, st})
	}
	fmt.Fprintf(stderr, "sweep: %d runs, %d already finished, %d to run (%d resumed), %d at a time\n",
		len(runs), skipped, len(todo), countIf(todo, func(j job) bool { return j.state == runResume }), jobs)
	threads := max(1, runtime.NumCPU()/jobs)
	var (
		mu     sync.Mutex
		done   int
		failed int
		wg     sync.WaitGroup
	)
	ch := make(chan job)
	for range min(jobs, max(len(todo), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				start := time.Now()
				logPath := j.r.Dir + sweepLogSuffix
				err := run(j.r.trainArgs(j.state), logPath, threads)
				secs := time.Since(start).Seconds()
				mu.Lock()
				done++
				name := strings.TrimPrefix(j.r.Dir, "./")
				if err != nil {
					failed++
					fmt.Fprintf(stderr, "[%d/%d] FAILED %s after %.0fs: %v (output in %s)\n", done, len(todo), name, secs, err, logPath)
				} else if s, err := experiment.ReadSummary(j.r.Dir); err != nil {
					failed++
					fmt.Fprintf(stderr, "[%d/%d] FAILED %s after %.0fs: %v (output in %s)\n", done, len(todo), name, secs, err, logPath)
				} else {
					fmt.Fprintf(stderr, "[%d/%d] done %s in %.0fs: best validation difference %.4f nats at epoch %d of %d\n",
						done, len(todo), name, secs, s.BestValidCrossEntropyDiff, s.BestEpoch, s.Epochs)
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range todo {
		ch <- j
	}
	close(ch)
	wg.Wait()
	if failed > 0 {
		return fmt.Errorf("%d of %d runs failed; run the sweep again to resume them", failed, len(todo))
	}
	return nil
}

func countIf[T any](xs []T, f func(T) bool) int {
	n := 0
	for _, x := range xs {
		if f(x) {
			n++
		}
	}
	return n
}

// slurmScript is a Slurm job-array script with one run per array index.
// Each index runs the same command line a local sweep would, skipping a
// finished run and resuming an interrupted one.
func slurmScript(runs []sweepRun, binary, out string, sbatch []string) string {
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	b.WriteString("# Generated by: cfl sweep. One training run per array index; see " + filepath.Join(out, sweepManifestFile) + ".\n")
	b.WriteString("#SBATCH --job-name=cfl-sweep\n")
	fmt.Fprintf(&b, "#SBATCH --array=0-%d\n", len(runs)-1)
	b.WriteString("#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=1\n")
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", filepath.Join(out, "slurm", "%A_%a.out"))
	for _, o := range sbatch {
		fmt.Fprintf(&b, "#SBATCH %s\n", o)
	}
	b.WriteString("set -euo pipefail\n")
	if wd, err := os.Getwd(); err == nil {
		fmt.Fprintf(&b, "cd %s\n", shellQuote(wd))
	}
	fmt.Fprintf(&b, "mkdir -p %s\n", shellQuote(filepath.Join(out, "slurm")))
	b.WriteString("DIRS=(\n")
	for _, r := range runs {
		fmt.Fprintf(&b, "  %s\n", shellQuote(r.Dir))
	}
	b.WriteString(")\nCMDS=(\n")
	for _, r := range runs {
		fmt.Fprintf(&b, "  %s\n", shellQuote(binary+" "+shellJoin(r.trainArgs(runNew))))
	}
	b.WriteString(")\n")
	b.WriteString(`i=${SLURM_ARRAY_TASK_ID:?not running as a Slurm array task}
dir=${DIRS[$i]}
cmd=${CMDS[$i]}
if [ -f "$dir/summary.json" ]; then
  echo "run $i finished already: $dir"
  exit 0
fi
if [ -d "$dir" ] && [ -n "$(ls -A "$dir")" ]; then
  cmd="$cmd --resume"
fi
echo "run $i: $cmd"
eval "$cmd"
`)
	return b.String()
}

// shellQuote quotes s for a POSIX shell where needed.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=+,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// shellJoin quotes and joins words into a shell command line.
func shellJoin(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = shellQuote(w)
	}
	return strings.Join(q, " ")
}
