package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/nsrnn/nsrnn/protocol"
)

// Launcher executes one run with the given arguments, its output appended to
// logPath, with at most threads OS threads running Go code. Each signal
// received on signals is to be passed on to the run (the programs' train
// commands stop after their current batch with a checkpoint at the first,
// and die at the second); signals is closed when RunSweep no longer needs
// the run. RunSweep executes each run with one; tests replace the
// subprocess.
type Launcher func(args []string, logPath string, threads int, signals <-chan os.Signal) error

// Subprocess is the Launcher that executes the program exe (this same
// program: os.Executable) as a subprocess, so that the crash or kill of
// one run does not affect the others. Its output is appended to the log
// after a line with the time and the command; GOMAXPROCS is set to
// threads unless it is set already. On Unix the subprocess has a process
// group of its own, so that a Ctrl-C typed at the terminal reaches the
// sweep alone, which passes it on once (a signal that reached both would
// be the subprocess's second, which kills it); on Linux it is sent
// SIGTERM (a checkpoint, then a stop) if the sweep is killed outright.
func Subprocess(exe string) Launcher {
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
		// The thread that starts the run is kept until it ends: on Linux
		// the run is sent SIGTERM when that thread ends (see
		// ownProcessGroup), which must be when the sweep dies.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
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
			if last := lastLine(logPath); last != "" {
				return fmt.Errorf("%w: %s (output in %s)", err, last, logPath)
			}
			return fmt.Errorf("%w (output in %s)", err, logPath)
		}
		return nil
	}
}

// lastLine returns the last non-empty line of the file at path (of its
// last 4 KiB, shortened to 300 bytes): what a failed run said last, its
// error; "" if there is none.
func lastLine(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	const tail = 4 << 10
	if fi, err := f.Stat(); err == nil && fi.Size() > tail {
		f.Seek(fi.Size()-tail, io.SeekStart)
	}
	b, _ := io.ReadAll(io.LimitReader(f, tail))
	lines := strings.Split(strings.TrimRight(string(b), "\r\n\t "), "\n")
	last := strings.TrimSpace(lines[len(lines)-1])
	if strings.HasPrefix(last, "# ") { // the header line of the run: it said nothing
		return ""
	}
	if len(last) > 300 {
		last = strings.ToValidUTF8(last[:300], "") + "…"
	}
	return last
}

// Resumed reports whether the run was trained in more than one part: it
// was interrupted before this sweep (State protocol.RunResume) or resumed after a
// failure. Its Elapsed is then the time of its last part only.
func (r SweepResult) Resumed() bool { return r.State == protocol.RunResume || r.Retries > 0 }

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
	// State is the run's state before it was executed (protocol.RunNew or
	// protocol.RunResume).
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
	// Waiting is called when a run's directory is held by another
	// process (protocol.LockHolder), with the run and that process, before
	// RunSweep waits for it to end (lockWait at most).
	Waiting func(r SweepRun, holder string)
}

// lockWait is how long RunSweep waits for another process to release a
// run's directory before it starts the run anyway (which then fails,
// naming that process). A sweep killed with its runs under way leaves
// them to stop after their current batch, with a checkpoint (they are
// sent SIGTERM): a sweep started again at once finds their directories
// held for that long, a minute at most for the paper's models.
var lockWait = 3 * time.Minute

// SweepWaiting is the SweepHooks.Waiting of the programs' sweep commands:
// it says on stderr what the sweep waits for.
func SweepWaiting(stderr io.Writer) func(SweepRun, string) {
	return func(r SweepRun, holder string) {
		fmt.Fprintf(stderr, "sweep: %s is in use by %s (a run of a sweep stopped before, finishing its batch?): waiting for it to end, %v at most\n",
			r.Dir, holder, lockWait)
	}
}

// SweepStopping is the SweepHooks.Stopping of the programs' sweep
// commands: it says on stderr what happens now.
func SweepStopping(stderr io.Writer) func(os.Signal, int, int) {
	return func(sig os.Signal, running, notStarted int) {
		fmt.Fprintf(stderr, "sweep: %v: passed on to the %d runs under way, which stop after their current batch with a checkpoint; "+
			"%d runs will not start; a second signal kills the runs\n", sig, running, notStarted)
	}
}

// RunSweep executes the unfinished runs (protocol.RunState), jobs at a time, each
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
func RunSweep(runs []SweepRun, jobs, retries int, run Launcher, interrupt <-chan os.Signal, hooks SweepHooks) (failed int, err error) {
	type job struct {
		r     SweepRun
		state string
	}
	var todo, fresh []job
	for _, r := range runs {
		st, err := protocol.RunState(r.Dir)
		if err != nil {
			return 0, err
		}
		switch st {
		case protocol.RunFinished:
		case protocol.RunResume:
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
	// waitUnlocked waits while another process holds r's directory, for
	// lockWait at most or until the sweep stops, and reports whether it
	// waited.
	waitUnlocked := func(r SweepRun) bool {
		holder, held := protocol.LockHolder(r.Dir)
		if !held {
			return false
		}
		if hooks.Waiting != nil {
			mu.Lock()
			hooks.Waiting(r, holder)
			mu.Unlock()
		}
		for deadline := time.Now().Add(lockWait); time.Now().Before(deadline) && !stopping(); {
			time.Sleep(100 * time.Millisecond)
			if _, held := protocol.LockHolder(r.Dir); !held {
				break
			}
		}
		return true
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
				if err == nil && waitUnlocked(j.r) {
					// What the other process left: a checkpoint, or
					// nothing (a new run stopped before its first).
					j.state, err = protocol.RunState(j.r.Dir)
				}
				tries := 0
				if err == nil {
					err = run(j.r.CommandArgs(j.state), j.r.LogFile(), threads, sigs)
					for err != nil && tries < retries && Retryable(err) && !stopping() {
						st, serr := protocol.RunState(j.r.Dir)
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
		return failed, &ExitError{Code: code, Err: fmt.Errorf("sweep interrupted (%v): %s stopped, %d not started%s; run the same command again to resume them",
			stopSig, Count(stoppedRun, "run"), len(todo)-started, failures)}
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

// Count is n nouns: "1 run", "2 runs" (the plural in s).
func Count(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
