package cli

import (
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unicode"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/internal/atomicfile"
	"github.com/nsrnn/nsrnn/protocol"
)

// SweepRun is one training run of a sweep, as the programs' sweep commands
// execute it, locally (RunSweep) or on Slurm (SlurmScript).
type SweepRun struct {
	// Dir is the run's directory: the run is finished when it holds
	// protocol.SummaryFile.
	Dir string
	// Args are the program's arguments that train the run, the command
	// name first.
	Args []string
	// Resume, when set, is appended to Args when Dir holds files (an
	// interrupted run), e.g. "--resume".
	Resume string
}

// LogFile is the file a run's output is appended to: <Dir>.log, next to
// the run's directory.
func (r SweepRun) LogFile() string { return filepath.Clean(r.Dir) + ".log" }

// Run states found on disk (RunState).
const (
	RunNew      = "new"
	RunResume   = "resume"
	RunFinished = "finished"
)

// RunState tells whether a run's directory is absent or empty (RunNew),
// holds an interrupted run (RunResume), or a finished one with
// protocol.SummaryFile (RunFinished).
func RunState(dir string) (string, error) {
	if _, err := os.Stat(filepath.Join(dir, protocol.SummaryFile)); err == nil {
		return RunFinished, nil
	}
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return RunNew, nil
	case err != nil:
		return "", err
	case len(entries) == 0:
		return RunNew, nil
	}
	return RunResume, nil
}

// RunProgress describes how far the run in dir has come, from its training
// log (protocol.LogFile): the epochs done, the best validation score
// with its epoch, and the seconds of the last epoch, e.g. "124 epochs,
// best validation difference 0.0594 at epoch 120, last epoch 98 s". The
// score is the difference from the lower bound, or the perplexity (the
// exponential of the cross-entropy) for a run marked without one
// (nsrnn.EpochRecord.NoLowerBound) or when perplexity is set: a program
// whose runs have no lower bound although their logs do not mark it (ptb,
// whose records hold the cross-entropy as their difference from a bound
// of 0) sets it. It is "" for a run without a log or with an empty one; a
// log that cannot be read is an error naming the file and line.
func RunProgress(dir string, perplexity bool) (string, error) {
	recs, err := protocol.ReadLog(filepath.Join(dir, protocol.LogFile))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", nil
	case err != nil:
		return "", err
	case len(recs) == 0:
		return "", nil
	}
	best := recs[0]
	for _, r := range recs[1:] {
		if r.ValidCrossEntropy < best.ValidCrossEntropy {
			best = r
		}
	}
	last := recs[len(recs)-1]
	score := fmt.Sprintf("best validation difference %.4f", best.ValidDifference)
	if perplexity || best.NoLowerBound {
		score = fmt.Sprintf("best validation perplexity %.4g", math.Exp(best.ValidCrossEntropy))
	}
	epochs := "epochs"
	if last.Epoch == 1 {
		epochs = "epoch"
	}
	return fmt.Sprintf("%d %s, %s at epoch %d, last epoch %.0f s", last.Epoch, epochs, score, best.Epoch, last.EpochSeconds), nil
}

// RunStatus is a run's state (RunState) and how far it has come
// (RunProgress, with perplexity), for the programs' dry runs: a log that
// cannot be read is described by its error in place of the progress, so
// that one damaged run does not hide the others.
func RunStatus(dir string, perplexity bool) (state, progress string, err error) {
	if state, err = RunState(dir); err != nil {
		return "", "", err
	}
	progress, err = RunProgress(dir, perplexity)
	if err != nil {
		progress = err.Error()
	}
	return state, progress, nil
}

// CommandArgs are the arguments that execute the run in the given state:
// Args, with Resume for an interrupted run.
func (r SweepRun) CommandArgs(state string) []string {
	args := append([]string(nil), r.Args...)
	if state == RunResume && r.Resume != "" {
		args = append(args, r.Resume)
	}
	return args
}

// Runner executes one run with the given arguments, its output appended to
// logPath, with at most threads OS threads running Go code. Each signal
// received on signals is to be passed on to the run (the programs' train
// commands stop after their current batch with a checkpoint at the first,
// and die at the second); signals is closed when RunSweep no longer needs
// the run. RunSweep executes each run with one; tests replace the
// subprocess.
type Runner func(args []string, logPath string, threads int, signals <-chan os.Signal) error

// Subprocess is the Runner that executes the program exe (this same
// program: os.Executable) as a subprocess, so that the crash or kill of
// one run does not affect the others. Its output is appended to the log
// after a line with the time and the command; GOMAXPROCS is set to
// threads unless it is set already. On Unix the subprocess has a process
// group of its own, so that a Ctrl-C typed at the terminal reaches the
// sweep alone, which passes it on once (a signal that reached both would
// be the subprocess's second, which kills it).
func Subprocess(exe string) Runner {
	return func(args []string, logPath string, threads int, signals <-chan os.Signal) error {
		if err := os.MkdirAll(filepath.Dir(logPath), 0o777); err != nil {
			return err
		}
		f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o666)
		if err != nil {
			return err
		}
		defer f.Close()
		fmt.Fprintf(f, "# %s %s\n", time.Now().Format(time.RFC3339), ShellJoin(append([]string{exe}, args...)))
		cmd := exec.Command(exe, args...)
		cmd.Stdout, cmd.Stderr = f, f
		cmd.Env = os.Environ()
		if os.Getenv("GOMAXPROCS") == "" && threads > 0 {
			cmd.Env = append(cmd.Env, "GOMAXPROCS="+strconv.Itoa(threads))
		}
		ownProcessGroup(cmd)
		if err := cmd.Start(); err != nil {
			return fmt.Errorf("%w (output in %s)", err, logPath)
		}
		exited := make(chan struct{})
		go func() {
			for {
				select {
				case sig, ok := <-signals:
					if !ok {
						return
					}
					cmd.Process.Signal(sig) // an error: it has exited
				case <-exited:
					return
				}
			}
		}()
		err = cmd.Wait()
		close(exited)
		if err != nil {
			return fmt.Errorf("%w (output in %s)", err, logPath)
		}
		return nil
	}
}

// Resumed reports whether the run was trained in more than one part: it
// was interrupted before this sweep (State RunResume) or resumed after a
// failure. Its Elapsed is then the time of its last part only.
func (r SweepResult) Resumed() bool { return r.State == RunResume || r.Retries > 0 }

// RetryNote is what a report line says of the retries a run took: empty
// for none.
func (r SweepResult) RetryNote() string {
	switch r.Retries {
	case 0:
		return ""
	case 1:
		return " (resumed once after a failure)"
	}
	return fmt.Sprintf(" (resumed %d times after failures)", r.Retries)
}

// Retryable reports whether a run's failure may be retried by resuming
// it: the program exited on its own with a status of 1 to 125 (an error),
// not after a signal (status 128 + n, as the programs exit when a signal
// stops them, or killed by one) and not because it could not be started.
func Retryable(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	c := ee.ExitCode() // −1 when a signal killed it
	return c >= 1 && c <= 125
}

// SweepResult is what RunSweep reports about each run it executed.
type SweepResult struct {
	Run SweepRun
	// State is the run's state before it was executed (RunNew or
	// RunResume).
	State string
	// Err is the run's error, nil when it finished.
	Err error
	// Retries is the number of times the run was resumed after a failure
	// (RunSweep's retries).
	Retries int
	// Stopped says that the sweep was interrupted while the run was under
	// way: the signal was passed on to it, and Err is the run's exit (a
	// train command's, after its checkpoint, or a second signal's kill).
	// Running the sweep again resumes it.
	Stopped bool
	Elapsed time.Duration
	// Done and Total count the runs executed so far (this one included)
	// and to execute.
	Done, Total int
}

// SweepHooks are RunSweep's reports; each may be nil.
type SweepHooks struct {
	// Started is called once, with the counts of runs, of finished runs
	// and of runs to resume.
	Started func(total, finished, resumed int)
	// Done is called after each run executed, one call at a time.
	Done func(SweepResult)
	// Stopping is called at the first signal of RunSweep's interrupt
	// channel, with the signal, the number of runs under way (to which it
	// is passed on) and of runs that will not be started.
	Stopping func(sig os.Signal, running, notStarted int)
}

// SweepStopping is the SweepHooks.Stopping of the programs' sweep
// commands: it says on stderr what happens now.
func SweepStopping(stderr io.Writer) func(os.Signal, int, int) {
	return func(sig os.Signal, running, notStarted int) {
		fmt.Fprintf(stderr, "sweep: %v: passed on to the %d runs under way, which stop after their current batch with a checkpoint; "+
			"%d runs will not start; a second signal kills the runs\n", sig, running, notStarted)
	}
}

// RunSweep executes the unfinished runs (RunState), jobs at a time, each
// with run and GOMAXPROCS = CPUs/jobs (at least 1), resuming interrupted
// ones (with r.Resume) and skipping finished ones. Interrupted runs go
// first, in the order of runs, then the runs not started: a sweep run
// again finishes what it had under way before it starts anything new. It
// reports through hooks, and returns the number of runs that failed.
//
// A run that fails with an error of its own (Retryable) is resumed from
// its last checkpoint, up to retries times, before it counts as failed; a
// resumed run continues exactly where the checkpoint left it, so a run
// that succeeds on a retry has the results it would have had without the
// failure. A run stopped by a signal is not retried.
//
// # Interrupts
//
// A signal received on interrupt (nil: none) stops the sweep: it is passed
// on to every run under way, no run is started or retried after it, and
// RunSweep returns, once the runs under way have exited, an *ExitError
// with status 128 + the signal's number (130 for SIGINT) that says how
// many runs were stopped and not started. Runs stopped so are reported
// with Stopped set and do not count as failed. Further signals are passed
// on too (the programs' train commands die at their second).
func RunSweep(runs []SweepRun, jobs, retries int, run Runner, interrupt <-chan os.Signal, hooks SweepHooks) (failed int, err error) {
	type job struct {
		r     SweepRun
		state string
	}
	var todo, fresh []job
	for _, r := range runs {
		st, err := RunState(r.Dir)
		if err != nil {
			return 0, err
		}
		switch st {
		case RunFinished:
		case RunResume:
			todo = append(todo, job{r, st})
		default:
			fresh = append(fresh, job{r, st})
		}
	}
	resumed := len(todo)
	todo = append(todo, fresh...)
	if hooks.Started != nil {
		hooks.Started(len(runs), len(runs)-len(todo), resumed)
	}
	jobs = max(jobs, 1)
	threads := max(1, runtime.NumCPU()/jobs)
	var (
		mu         sync.Mutex // guards the fields below and the calls of hooks
		n          int
		started    int
		stopSig    os.Signal                       // the first signal; nil until then
		stoppedRun int                             // runs stopped by it
		running    = map[chan os.Signal]struct{}{} // the signal channels of the runs under way
		wg         sync.WaitGroup
	)
	stop := make(chan struct{}) // closed at the first signal
	stopping := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	finished := make(chan struct{})
	defer close(finished)
	if interrupt != nil {
		go func() {
			for {
				select {
				case sig := <-interrupt:
					mu.Lock()
					if stopSig == nil {
						stopSig = sig
						close(stop)
						if hooks.Stopping != nil {
							hooks.Stopping(sig, len(running), len(todo)-started)
						}
					}
					for ch := range running {
						select {
						case ch <- sig:
						default: // it has a signal not yet passed on
						}
					}
					mu.Unlock()
				case <-finished:
					return
				}
			}
		}()
	}
	// begin registers a run about to start, unless the sweep is stopping.
	begin := func() (chan os.Signal, bool) {
		mu.Lock()
		defer mu.Unlock()
		if stopSig != nil {
			return nil, false
		}
		ch := make(chan os.Signal, 2)
		running[ch] = struct{}{}
		started++
		return ch, true
	}
	end := func(ch chan os.Signal) {
		mu.Lock()
		delete(running, ch)
		mu.Unlock()
		close(ch)
	}
	ch := make(chan job)
	for range min(jobs, max(len(todo), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				sigs, ok := begin()
				if !ok {
					continue
				}
				start := time.Now()
				err := os.MkdirAll(filepath.Dir(filepath.Clean(j.r.Dir)), 0o777)
				tries := 0
				if err == nil {
					err = run(j.r.CommandArgs(j.state), j.r.LogFile(), threads, sigs)
					for err != nil && tries < retries && Retryable(err) && !stopping() {
						st, serr := RunState(j.r.Dir)
						if serr != nil {
							err = errors.Join(err, serr)
							break
						}
						tries++
						err = run(j.r.CommandArgs(st), j.r.LogFile(), threads, sigs)
					}
				}
				end(sigs)
				mu.Lock()
				n++
				res := SweepResult{Run: j.r, State: j.state, Err: err, Retries: tries, Elapsed: time.Since(start), Done: n, Total: len(todo)}
				switch {
				case err == nil:
				case stopping():
					res.Stopped = true
					stoppedRun++
				default:
					failed++
				}
				if hooks.Done != nil {
					hooks.Done(res)
				}
				mu.Unlock()
			}
		}()
	}
dispatch:
	for _, j := range todo {
		select {
		case ch <- j:
		case <-stop:
			break dispatch
		}
	}
	close(ch)
	wg.Wait()
	mu.Lock()
	defer mu.Unlock()
	if stopSig != nil {
		code := 130
		if s, ok := stopSig.(syscall.Signal); ok {
			code = 128 + int(s)
		}
		failures := ""
		if failed > 0 {
			failures = fmt.Sprintf(", %d failed", failed)
		}
		return failed, &ExitError{Code: code, Err: fmt.Errorf("sweep interrupted (%v): %d runs stopped, %d not started%s; run the same command again to resume them",
			stopSig, stoppedRun, len(todo)-started, failures)}
	}
	return failed, nil
}

// MaxSweepRuns is the most runs a sweep may list: more is refused before
// the list is built (a mistyped --runs or --restarts would otherwise
// exhaust the memory before anything could be said).
const MaxSweepRuns = 100_000

// CheckDistinct returns an error naming flag and the value for a value
// of a sweep's grid (values, from flag) given more than once: each value
// is run once, in a directory named by it, so a repeated one would run
// twice into one directory.
func CheckDistinct[T comparable](flag string, values []T) error {
	seen := make(map[T]bool, len(values))
	for _, v := range values {
		if seen[v] {
			return fmt.Errorf("%s: %v is given more than once; give each value once", flag, v)
		}
		seen[v] = true
	}
	return nil
}

// CheckSweepSize returns an error naming what if a sweep of the given
// factors (models, settings, restarts, …, each at least 1) would list
// more than MaxSweepRuns runs.
func CheckSweepSize(what string, factors ...int) error {
	total := 1.0
	for _, f := range factors {
		total *= float64(f)
	}
	if total > MaxSweepRuns {
		return fmt.Errorf("%s: the sweep would list %.4g runs, more than the limit of %d", what, total, MaxSweepRuns)
	}
	return nil
}

// MaxArrayTasks is the most tasks SlurmScript puts in one job array:
// Slurm's default MaxArraySize is 1001, which allows indices 0 … 1000.
const MaxArrayTasks = 1000

// SlurmFlags are the flags that write a sweep as Slurm job arrays instead
// of running it.
type SlurmFlags struct {
	// Script is the file to write (--slurm); empty runs the sweep here.
	Script string
	// Time, Mem and CPUs are each array task's --time, --mem and
	// --cpus-per-task.
	Time, Mem string
	CPUs      int
	// Binary is a built program to run instead of building one.
	Binary string
	// Sbatch are further #SBATCH options.
	Sbatch []string
}

// AddSlurmFlags registers --slurm, --time, --mem, --cpus-per-task,
// --binary and --sbatch on fs, with the given defaults for the resources
// of one run, and the program's name (for the built binary's path).
func AddSlurmFlags(fs *pflag.FlagSet, program, time, mem string, cpus int) *SlurmFlags {
	f := &SlurmFlags{}
	fs.StringVar(&f.Script, "slurm", "", "write a Slurm script to this file instead of running the sweep here (default: run here); "+
		"run it with bash on the login node: it builds the program once and submits job arrays of at most 1000 runs")
	fs.StringVar(&f.Time, "time", time, "Slurm --time limit of each run (minutes, HH:MM:SS or D-HH:MM:SS)")
	fs.StringVar(&f.Mem, "mem", mem, "Slurm --mem of each run (e.g. 4G)")
	fs.IntVar(&f.CPUs, "cpus-per-task", cpus, "Slurm --cpus-per-task of each run (its GOMAXPROCS)")
	fs.StringVar(&f.Binary, "binary", "", "with --slurm, a built "+program+" binary for the runs (default: the script builds one into <out>/bin/"+program+" with go build)")
	fs.StringArrayVar(&f.Sbatch, "sbatch", nil, "with --slurm, a further #SBATCH option, e.g. --sbatch=--partition=cpu (repeatable; none by default)")
	return f
}

var (
	slurmTime = regexp.MustCompile(`^(\d+-)?\d+(:\d+){0,2}$`)
	slurmMem  = regexp.MustCompile(`^\d+[KMGT]?$`)
)

// Check checks the resource flags, naming the one at fault: their
// formats, --binary and --sbatch given without --slurm, and control
// characters (a line end would start a line of its own in the script) in
// the values that the script holds.
func (f *SlurmFlags) Check() error {
	if f.Script == "" && (f.Binary != "" || len(f.Sbatch) > 0) {
		return errors.New("--binary and --sbatch go with --slurm")
	}
	if fi, err := os.Stat(f.Script); f.Script != "" && err == nil && fi.IsDir() {
		return fmt.Errorf("--slurm %s is a directory: give the script's file name", f.Script)
	}
	values := [][2]string{{"--slurm", f.Script}, {"--binary", f.Binary}}
	for _, o := range f.Sbatch {
		values = append(values, [2]string{"--sbatch", o})
	}
	for _, v := range values {
		if err := checkScriptText(v[0], v[1]); err != nil {
			return err
		}
	}
	switch {
	case !slurmTime.MatchString(f.Time):
		return fmt.Errorf("--time %q: want minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS", f.Time)
	case !slurmMem.MatchString(f.Mem):
		return fmt.Errorf("--mem %q: want a size such as 4096M or 4G", f.Mem)
	case f.CPUs < 1:
		return fmt.Errorf("--cpus-per-task %d must be at least 1", f.CPUs)
	}
	return nil
}

// checkScriptText refuses a value with control characters, which would
// break the line of the Slurm script that holds it.
func checkScriptText(flag, v string) error {
	if i := strings.IndexFunc(v, unicode.IsControl); i >= 0 {
		return fmt.Errorf("%s %q: a control character (%q) cannot go into the Slurm script", flag, v, v[i])
	}
	return nil
}

// SlurmLiteral escapes p for a Slurm filename pattern (sbatch --output
// and --error), in which "%A", "%a", "%j" and the like are replaced: each
// % is doubled, which Slurm writes as one, so that p is taken literally.
// (A backslash, which turns all replacements off, is not escaped.)
func SlurmLiteral(p string) string { return strings.ReplaceAll(p, "%", "%%") }

// SbatchQuote quotes s as one argument of an #SBATCH line, which sbatch
// splits at spaces, ends at an unquoted #, and in which quotes group and
// a backslash escapes the next character: s is returned as it is when it
// needs none of this, else in double quotes with its backslashes and
// double quotes escaped.
func SbatchQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(`"'\#`, r) }) {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// SlurmJob is a sweep to run on Slurm.
type SlurmJob struct {
	// Name is the job name, e.g. "cfl-sweep".
	Name string
	// Package is the import path of the program, which the script builds
	// (go build) into Out/bin/<Program> unless Flags.Binary is set.
	Package, Program string
	// Out is the sweep directory; the Slurm output goes to Out/slurm.
	Out string
	// Manifest names the file that lists the runs, for the script's
	// header.
	Manifest string
	Runs     []SweepRun
	Flags    SlurmFlags
}

// SlurmScript writes the Slurm script of job to job.Flags.Script and
// returns the number of job arrays it submits. The script runs in two
// ways:
//
//   - "bash SCRIPT" (on the login node) builds the program once, unless
//     --binary names one, and submits the runs as job arrays of at most
//     MaxArrayTasks tasks each (sbatch --array=0-999 SCRIPT OFFSET);
//   - as an array task, it runs run number OFFSET + SLURM_ARRAY_TASK_ID
//     with the built binary, as a local sweep would: a finished run is
//     skipped, an interrupted one resumed, and its output appended to
//     the run's log (<run dir>.log).
//
// Paths are made absolute, so that the script works from any directory.
// The #SBATCH --output path under job.Out is quoted for sbatch
// (SbatchQuote) with its % doubled (SlurmLiteral), so that an --out with
// spaces, # or % is taken as it is; one with a backslash is refused.
func SlurmScript(job SlurmJob) (arrays int, err error) {
	if len(job.Runs) == 0 {
		return 0, errors.New("no runs")
	}
	f := job.Flags
	if err := f.Check(); err != nil {
		return 0, err
	}
	for _, v := range []struct{ flag, value string }{{"--out", job.Out}, {"--out", job.Manifest}} {
		if err := checkScriptText(v.flag, v.value); err != nil {
			return 0, err
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return 0, err
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(wd, p)
	}
	script := abs(f.Script)
	out := abs(job.Out)
	if strings.Contains(out, `\`) {
		// Slurm takes a backslash in an --output path as "replace no %
		// pattern": the runs' outputs would all go to one file.
		return 0, fmt.Errorf("--out %s: a backslash cannot go into the Slurm script's --output path", out)
	}
	bin := filepath.Join(out, "bin", job.Program)
	if f.Binary != "" {
		bin = abs(f.Binary)
	}
	var b strings.Builder
	arrays = (len(job.Runs) + MaxArrayTasks - 1) / MaxArrayTasks
	fmt.Fprintf(&b, "#!/bin/bash\n")
	fmt.Fprintf(&b, "# Generated by: %s. %d training runs (listed in %s).\n", job.Name, len(job.Runs), abs(job.Manifest))
	fmt.Fprintf(&b, "# Submit from a login node with:  bash %s\n", ShellQuote(script))
	if f.Binary == "" {
		fmt.Fprintf(&b, "# It builds %s once into %s and submits %d job array(s) of at most %d runs.\n", job.Program, bin, arrays, MaxArrayTasks)
	} else {
		fmt.Fprintf(&b, "# It submits %d job array(s) of at most %d runs of %s.\n", arrays, MaxArrayTasks, bin)
	}
	fmt.Fprintf(&b, "# Submitting it again resumes interrupted runs and skips finished ones.\n")
	fmt.Fprintf(&b, "#SBATCH --job-name=%s\n", job.Name)
	fmt.Fprintf(&b, "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=%d\n#SBATCH --mem=%s\n#SBATCH --time=%s\n", f.CPUs, f.Mem, f.Time)
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", SbatchQuote(SlurmLiteral(filepath.Join(out, "slurm"))+string(filepath.Separator)+"%A_%a.out"))
	for _, o := range f.Sbatch {
		fmt.Fprintf(&b, "#SBATCH %s\n", o)
	}
	b.WriteString("set -euo pipefail\n")
	fmt.Fprintf(&b, "cd %s\n", ShellQuote(wd))
	fmt.Fprintf(&b, "BIN=%s\n", ShellQuote(bin))
	b.WriteString("if [ -z \"${SLURM_ARRAY_TASK_ID:-}\" ]; then\n")
	fmt.Fprintf(&b, "  mkdir -p %s\n", ShellQuote(filepath.Join(out, "slurm")))
	if f.Binary == "" {
		b.WriteString("  mkdir -p \"$(dirname \"$BIN\")\"\n")
		fmt.Fprintf(&b, "  echo \"building $BIN\"\n  go build -o \"$BIN\" %s\n", ShellQuote(job.Package))
	}
	for a := range arrays {
		n := min(MaxArrayTasks, len(job.Runs)-a*MaxArrayTasks)
		fmt.Fprintf(&b, "  sbatch --array=0-%d %s %d\n", n-1, ShellQuote(script), a*MaxArrayTasks)
	}
	b.WriteString("  exit 0\nfi\n")
	b.WriteString("export GOMAXPROCS=${GOMAXPROCS:-${SLURM_CPUS_PER_TASK:-1}}\n")
	b.WriteString("i=$(( ${1:?usage: sbatch --array=… SCRIPT OFFSET} + SLURM_ARRAY_TASK_ID ))\n")
	b.WriteString("case $i in\n")
	for i, r := range job.Runs {
		fmt.Fprintf(&b, "%d) DIR=%s; RESUME=%s; set -- %s ;;\n", i, ShellQuote(abs(r.Dir)), ShellQuote(r.Resume), ShellJoin(r.Args))
	}
	b.WriteString("*) echo \"no run $i\" >&2; exit 1 ;;\nesac\n")
	b.WriteString(`if [ -f "$DIR/` + protocol.SummaryFile + `" ]; then
  echo "run $i finished already: $DIR"
  exit 0
fi
if [ -n "$RESUME" ] && [ -d "$DIR" ] && [ -n "$(ls -A "$DIR")" ]; then
  set -- "$@" "$RESUME"
fi
mkdir -p "$(dirname "$DIR")"
LOG="$DIR.log"
echo "run $i: $BIN $* (output in $LOG)"
echo "# $(date -Iseconds) $BIN $* (Slurm job ${SLURM_ARRAY_JOB_ID:-?} task ${SLURM_ARRAY_TASK_ID})" >>"$LOG"
exec "$BIN" "$@" >>"$LOG" 2>&1
`)
	if err := os.MkdirAll(filepath.Dir(script), 0o777); err != nil {
		return 0, fmt.Errorf("--slurm: %w", err)
	}
	if err := atomicfile.WriteBytes(script, []byte(b.String())); err != nil {
		return 0, fmt.Errorf("--slurm: %w", err)
	}
	return arrays, nil
}
