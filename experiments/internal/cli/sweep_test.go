package cli

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nsrnn/nsrnn/protocol"
)

// sweepRuns are n runs under dir, each "train --out <dir>/run<i>".
func sweepRuns(dir string, n int) []SweepRun {
	runs := make([]SweepRun, n)
	for i := range runs {
		d := filepath.Join(dir, fmt.Sprintf("run%d", i))
		runs[i] = SweepRun{Dir: d, Args: []string{"train", "--out", d, "--note", "it's"}, Resume: "--resume"}
	}
	return runs
}

func TestRunSweep(t *testing.T) {
	dir := t.TempDir()
	runs := sweepRuns(dir, 5)
	// run0 is finished, run1 interrupted, run2 an empty directory.
	for i := range 3 {
		if err := os.MkdirAll(runs[i].Dir, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(runs[0].Dir, protocol.SummaryFile), []byte("{}"), 0o666)
	os.WriteFile(filepath.Join(runs[1].Dir, protocol.RunFile), []byte("{}"), 0o666)
	var mu sync.Mutex
	got := map[string][]string{}
	run := func(args []string, logPath string, threads int, _ <-chan os.Signal) error {
		mu.Lock()
		defer mu.Unlock()
		got[logPath] = args
		if threads < 1 {
			t.Errorf("%d threads", threads)
		}
		if strings.HasSuffix(logPath, "run4.log") {
			return fmt.Errorf("boom")
		}
		return nil
	}
	var total, finished, resumed int
	var results []SweepResult
	failed, err := RunSweep(runs, 2, 0, run, nil, SweepHooks{Started: func(a, b, c int) { total, finished, resumed = a, b, c }, Done: func(r SweepResult) { results = append(results, r) }})
	if err != nil {
		t.Fatal(err)
	}
	if total != 5 || finished != 1 || resumed != 1 || failed != 1 || len(results) != 4 || len(got) != 4 {
		t.Fatalf("total %d finished %d resumed %d failed %d, %d results, %d runs", total, finished, resumed, failed, len(results), len(got))
	}
	for i, r := range runs[1:] {
		args := got[r.LogFile()]
		if want := (i == 0); slices.Contains(args, "--resume") != want {
			t.Errorf("%s: args %v; --resume wanted: %v", r.Dir, args, want)
		}
	}
	for _, r := range results {
		if r.Total != 4 || r.Done < 1 || r.Done > 4 || (r.Err != nil) != strings.HasSuffix(r.Run.Dir, "run4") {
			t.Errorf("result %+v", r)
		}
	}
}

// TestRunSweepResumesFirst checks that interrupted runs are executed
// before the runs not started, each group in the order of runs.
func TestRunSweepResumesFirst(t *testing.T) {
	dir := t.TempDir()
	runs := sweepRuns(dir, 5)
	for _, i := range []int{1, 3} { // interrupted
		if err := os.MkdirAll(runs[i].Dir, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(runs[i].Dir, protocol.RunFile), []byte("{}"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	var order []string
	run := func(args []string, logPath string, threads int, _ <-chan os.Signal) error {
		order = append(order, filepath.Base(logPath))
		return nil
	}
	if _, err := RunSweep(runs, 1, 0, run, nil, SweepHooks{}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"run1.log", "run3.log", "run0.log", "run2.log", "run4.log"}; !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
}

// TestRunSweepWaitsForHeldRun: a run whose directory another process
// holds (a run of a sweep killed before, finishing its batch with a
// checkpoint) is started once that process lets it go, as the run it has
// left then (here: resumed, since the holder wrote run.json before it
// ended), and the Waiting hook says so first.
func TestRunSweepWaitsForHeldRun(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no directory locks on Windows")
	}
	runs := sweepRuns(t.TempDir(), 1)
	lock, err := protocol.LockDir(runs[0].Dir)
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(300 * time.Millisecond)
		os.WriteFile(filepath.Join(runs[0].Dir, protocol.RunFile), []byte("{}"), 0o666)
		lock.Release()
	}()
	var waited string
	var args []string
	run := func(a []string, _ string, _ int, _ <-chan os.Signal) error {
		if holder, held := protocol.LockHolder(runs[0].Dir); held {
			t.Errorf("the run started while %s held its directory", holder)
		}
		args = a
		return nil
	}
	if _, err := RunSweep(runs, 1, 0, run, nil, SweepHooks{Waiting: func(r SweepRun, holder string) { waited = holder }}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(waited, fmt.Sprintf("process %d:", os.Getpid())) {
		t.Errorf("Waiting was told the holder %q", waited)
	}
	if !slices.Contains(args, "--resume") {
		t.Errorf("the run left with its run.json was started as %v, want it resumed", args)
	}
}

// TestSubprocess runs a shell command as the program: its output goes to
// the log after a header line, with GOMAXPROCS set.
func TestSubprocess(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	t.Setenv("GOMAXPROCS", "")
	os.Unsetenv("GOMAXPROCS")
	log := filepath.Join(t.TempDir(), "a", "run.log")
	if err := Subprocess(sh)([]string{"-c", "echo threads=$GOMAXPROCS"}, log, 3, nil); err != nil {
		t.Fatal(err)
	}
	if err := Subprocess(sh)([]string{"-c", "exit 3"}, log, 3, nil); err == nil || !strings.Contains(err.Error(), log) {
		t.Errorf("failing run: error %v, want one naming the log", err)
	}
	b, _ := os.ReadFile(log)
	if !strings.Contains(string(b), "threads=3\n") || strings.Count(string(b), "# ") != 2 {
		t.Errorf("log:\n%s", b)
	}
	// On Linux, the subprocess leads a process group of its own (field 5
	// of /proc/PID/stat), out of the terminal's.
	if _, err := os.Stat("/proc/self/stat"); err == nil {
		grp := filepath.Join(t.TempDir(), "grp.log")
		if err := Subprocess(sh)([]string{"-c", `echo "pid=$$ pgrp=$(cut -d' ' -f5 /proc/$$/stat)"`}, grp, 1, nil); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(grp)
		m := regexp.MustCompile(`pid=(\d+) pgrp=(\d+)`).FindStringSubmatch(string(b))
		if m == nil || m[1] != m[2] {
			t.Errorf("subprocess not the leader of its own process group:\n%s", b)
		}
	}
}

func TestSlurmFlagsCheck(t *testing.T) {
	for _, f := range []SlurmFlags{{Time: "90", Mem: "4G", CPUs: 1}, {Time: "2-00:00:00", Mem: "512M", CPUs: 2}, {Time: "12:00:00", Mem: "4096", CPUs: 1}} {
		if err := f.Check(); err != nil {
			t.Errorf("%+v: %v", f, err)
		}
	}
	for flag, f := range map[string]SlurmFlags{
		"--time": {Time: "two days", Mem: "4G", CPUs: 1}, "--mem": {Time: "1:00:00", Mem: "4 GB", CPUs: 1},
		"--cpus-per-task": {Time: "1:00:00", Mem: "4G", CPUs: 0},
		"--sbatch":        {Script: "s.sh", Time: "1:00:00", Mem: "4G", CPUs: 1, Sbatch: []string{"--partition=cpu\necho INJECTED"}},
		"--binary":        {Script: "s.sh", Time: "1:00:00", Mem: "4G", CPUs: 1, Binary: "bin/cfl\rx"},
		"--slurm":         {Time: "1:00:00", Mem: "4G", CPUs: 1, Sbatch: []string{"--partition=cpu"}},
	} {
		if err := f.Check(); err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("%+v: error %v, want one naming %s", f, err, flag)
		}
	}
}

// fakeTools puts fake go and sbatch commands first on PATH, which log
// their arguments to dir/<name>.calls; the fake go build writes a binary
// that prints its arguments.
func fakeTools(t *testing.T, dir string) {
	t.Helper()
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"+body), 0o777); err != nil {
			t.Fatal(err)
		}
	}
	write("sbatch", `echo "$*" >>"`+dir+`/sbatch.calls"`+"\n")
	write("go", `echo "$*" >>"`+dir+`/go.calls"
[ "$1" = build ] && [ "$2" = -o ] && printf '#!/bin/sh\necho "args: $*"\n' >"$3" && chmod +x "$3"
`)
	t.Setenv("PATH", dir+string(os.PathListSeparator)+os.Getenv("PATH"))
}

// TestSlurmScript writes the script of 2,345 runs, submits it with fake
// go and sbatch commands, and runs array tasks: the program is built once,
// the runs go into arrays of at most 1,000 tasks, with the resources
// asked for, and a task runs its run with the built binary, skipping a
// finished run and resuming an interrupted one.
func TestSlurmScript(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep")
	runs := sweepRuns(out, 2345)
	script := filepath.Join(dir, "job.sh")
	flags := SlurmFlags{Script: script, Time: "3-00:00:00", Mem: "6G", CPUs: 2, Sbatch: []string{"--partition=cpu"}}
	arrays, err := SlurmScript(SlurmJob{Name: "x-sweep", Package: "example.com/x", Program: "x", Out: out, Manifest: filepath.Join(out, "sweep.json"), Runs: runs, Flags: flags})
	if err != nil {
		t.Fatal(err)
	}
	if arrays != 3 {
		t.Errorf("%d arrays, want 3", arrays)
	}
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	for _, want := range []string{"#SBATCH --time=3-00:00:00\n", "#SBATCH --mem=6G\n", "#SBATCH --cpus-per-task=2\n", "#SBATCH --partition=cpu\n", "#SBATCH --job-name=x-sweep\n"} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q", want)
		}
	}
	if strings.Contains(s, "go run") {
		t.Error("the script uses go run")
	}
	if fi, _ := os.Stat(script); fi.Mode().Perm() != 0o666&^umask(t) {
		t.Errorf("script mode %v", fi.Mode())
	}

	tools := t.TempDir()
	fakeTools(t, tools)
	if o, err := exec.Command("bash", script).CombinedOutput(); err != nil {
		t.Fatalf("submitting: %v\n%s", err, o)
	}
	goCalls, _ := os.ReadFile(filepath.Join(tools, "go.calls"))
	bin := filepath.Join(out, "bin", "x")
	if string(goCalls) != "build -o "+bin+" example.com/x\n" {
		t.Errorf("go was called with:\n%s", goCalls)
	}
	sb, _ := os.ReadFile(filepath.Join(tools, "sbatch.calls"))
	want := fmt.Sprintf("--array=0-999 %[1]s 0\n--array=0-999 %[1]s 1000\n--array=0-344 %[1]s 2000\n", script)
	if string(sb) != want {
		t.Errorf("sbatch was called with:\n%s\nwant:\n%s", sb, want)
	}
	if n := len(regexp.MustCompile(`(?m)^\d+\) `).FindAllString(s, -1)); n != len(runs) {
		t.Errorf("%d cases for %d runs", n, len(runs))
	}

	task := func(offset, id int) string {
		t.Helper()
		cmd := exec.Command("bash", script, fmt.Sprint(offset))
		cmd.Env = append(os.Environ(), fmt.Sprintf("SLURM_ARRAY_TASK_ID=%d", id), "SLURM_CPUS_PER_TASK=2")
		o, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("task %d+%d: %v\n%s", offset, id, err, o)
		}
		return string(o)
	}
	r := runs[1005]
	task(1000, 5)
	logb, _ := os.ReadFile(r.LogFile())
	if !strings.Contains(string(logb), "args: train --out "+r.Dir+" --note it's\n") {
		t.Errorf("run 1005's log:\n%s", logb)
	}
	// Interrupted: resumed.
	os.MkdirAll(r.Dir, 0o777)
	os.WriteFile(filepath.Join(r.Dir, protocol.RunFile), []byte("{}"), 0o666)
	task(1000, 5)
	logb, _ = os.ReadFile(r.LogFile())
	if !strings.Contains(string(logb), "--note it's --resume\n") {
		t.Errorf("interrupted run 1005's log:\n%s", logb)
	}
	// Finished: skipped.
	os.WriteFile(filepath.Join(r.Dir, protocol.SummaryFile), []byte("{}"), 0o666)
	if o := task(1000, 5); !strings.Contains(o, "finished already") {
		t.Errorf("finished run: %s", o)
	}
}

// umask is the process's umask, found by creating a file.
func umask(t *testing.T) os.FileMode {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, nil, 0o777); err != nil {
		t.Fatal(err)
	}
	fi, _ := os.Stat(p)
	return 0o777 &^ fi.Mode().Perm()
}

// TestRunSweepRetries runs shell scripts as the program: a run that fails
// once with an error is resumed (with its Resume flag) and finishes, one
// that always fails is tried 1 + retries times, and one stopped by a
// signal (status 130, or killed) is not retried.
func TestRunSweepRetries(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	// Each script counts its attempts in D/tries (which makes D an
	// interrupted run's directory) and sees the Resume flag as $0.
	count := `mkdir -p "$D" && echo "$0" >> "$D/tries"; `
	scripts := map[string]string{
		"once":   count + `[ "$(wc -l < "$D/tries")" -ge 2 ] && [ "$0" = --resume ] && touch "$D/summary.json" && exit 0; exit 1`,
		"always": count + `exit 2`,
		"sigint": count + `exit 130`,
		"killed": count + `kill -9 $$`,
	}
	var runs []SweepRun
	for name, script := range scripts {
		d := filepath.Join(dir, name)
		runs = append(runs, SweepRun{Dir: d, Args: []string{"-c", "D=" + d + "; " + script}, Resume: "--resume"})
	}
	results := map[string]SweepResult{}
	failed, err := RunSweep(runs, 1, 2, Subprocess(sh), nil, SweepHooks{Done: func(r SweepResult) { results[filepath.Base(r.Run.Dir)] = r }})
	if err != nil {
		t.Fatal(err)
	}
	if failed != 3 {
		t.Errorf("%d failed, want 3", failed)
	}
	for name, want := range map[string]struct {
		tries   int
		retries int
		ok      bool
	}{"once": {2, 1, true}, "always": {3, 2, false}, "sigint": {1, 0, false}, "killed": {1, 0, false}} {
		b, _ := os.ReadFile(filepath.Join(dir, name, "tries"))
		lines := strings.Fields(string(b))
		r := results[name]
		if len(lines) != want.tries || r.Retries != want.retries || (r.Err == nil) != want.ok {
			t.Errorf("%s: tries %q, result retries %d, error %v; want %d tries, %d retries, success %v", name, lines, r.Retries, r.Err, want.tries, want.retries, want.ok)
		}
		for i, l := range lines[1:] {
			if l != "--resume" {
				t.Errorf("%s: try %d had $0 %q, want --resume", name, i+2, l)
			}
		}
	}
	if n := results["once"].RetryNote(); n != " (resumed once after a failure)" {
		t.Errorf("RetryNote %q", n)
	}
}

// TestRunSweepInterruptFake checks with a runner of its own that a signal
// is passed on to the run under way, that no run starts after it, and
// that RunSweep returns an ExitError with 128 + the signal's number.
func TestRunSweepInterruptFake(t *testing.T) {
	runs := sweepRuns(t.TempDir(), 4)
	interrupt := make(chan os.Signal, 1)
	var started []string
	var got os.Signal
	run := func(args []string, logPath string, threads int, sigs <-chan os.Signal) error {
		started = append(started, filepath.Base(logPath))
		interrupt <- syscall.SIGTERM
		select {
		case got = <-sigs:
		case <-time.After(10 * time.Second):
		}
		return errors.New("exit status 143")
	}
	var results []SweepResult
	var stopping []int
	failed, err := RunSweep(runs, 1, 3, run, interrupt, SweepHooks{
		Done:     func(r SweepResult) { results = append(results, r) },
		Stopping: func(sig os.Signal, running, notStarted int) { stopping = append(stopping, running, notStarted) },
	})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 128+int(syscall.SIGTERM) || !strings.Contains(err.Error(), "1 run stopped, 3 not started") {
		t.Fatalf("error %v, want an ExitError with status %d that counts 1 run stopped and 3 not started", err, 128+int(syscall.SIGTERM))
	}
	if got != syscall.SIGTERM {
		t.Errorf("the run under way got %v, want SIGTERM", got)
	}
	if !slices.Equal(started, []string{"run0.log"}) {
		t.Errorf("runs started: %v, want run0 alone (and not retried)", started)
	}
	if failed != 0 || len(results) != 1 || !results[0].Stopped || results[0].Retries != 0 {
		t.Errorf("failed %d, results %+v; want one stopped run, none failed", failed, results)
	}
	if !slices.Equal(stopping, []int{1, 3}) {
		t.Errorf("Stopping called with (running, not started) %v, want [1 3]", stopping)
	}
}

// TestRunSweepInterrupt runs shell scripts as the program, two at a time:
// a SIGTERM sent to the sweep reaches both runs under way, through the
// subprocesses' own process groups; the run that exits with a retryable
// status is not retried, and the runs not started are left alone.
func TestRunSweepInterrupt(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	var runs []SweepRun
	for i, exit := range []int{143, 1, 0, 0} {
		d := filepath.Join(dir, fmt.Sprintf("run%d", i))
		script := fmt.Sprintf(`D=%s; mkdir -p "$D"; echo "$0" >> "$D/tries"; trap 'echo TERM >> "$D/got"; exit %d' TERM; touch "$D/started"; i=0; while [ $i -lt 300 ]; do sleep 0.02; i=$((i+1)); done`, d, exit)
		runs = append(runs, SweepRun{Dir: d, Args: []string{"-c", script}, Resume: "--resume"})
	}
	interrupt := make(chan os.Signal, 1)
	go func() {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			_, e0 := os.Stat(filepath.Join(runs[0].Dir, "started"))
			_, e1 := os.Stat(filepath.Join(runs[1].Dir, "started"))
			if e0 == nil && e1 == nil {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		interrupt <- syscall.SIGTERM
	}()
	results := map[string]SweepResult{}
	failed, err := RunSweep(runs, 2, 2, Subprocess(sh), interrupt, SweepHooks{Done: func(r SweepResult) { results[filepath.Base(r.Run.Dir)] = r }})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.Code != 143 || !strings.Contains(err.Error(), "2 runs stopped, 2 not started") {
		t.Fatalf("error %v, want status 143, 2 runs stopped and 2 not started", err)
	}
	if failed != 0 {
		t.Errorf("%d failed, want 0", failed)
	}
	for _, name := range []string{"run0", "run1"} {
		r := results[name]
		got, _ := os.ReadFile(filepath.Join(dir, name, "got"))
		tries, _ := os.ReadFile(filepath.Join(dir, name, "tries"))
		if !r.Stopped || r.Err == nil || string(got) != "TERM\n" || strings.Count(string(tries), "\n") != 1 {
			t.Errorf("%s: result %+v, signals received %q, tries %q; want stopped by one TERM, tried once", name, r, got, tries)
		}
	}
	for _, name := range []string{"run2", "run3"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s was started after the signal", name)
		}
	}
}

func TestRunProgress(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		d := filepath.Join(dir, name)
		if err := os.MkdirAll(d, 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, protocol.LogFile), []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
		return d
	}
	// The best epoch is the first of the lowest cross-entropy (epoch 2,
	// not the equal epoch 4), as training marks it.
	bounded := write("bounded", `{"epoch":1,"valid_cross_entropy":0.9,"lower_bound":0.5,"valid_cross_entropy_diff":0.4,"epoch_seconds":12.2}
{"epoch":2,"valid_cross_entropy":0.6,"lower_bound":0.5,"valid_cross_entropy_diff":0.1,"epoch_seconds":11}

{"epoch":3,"valid_cross_entropy":0.7,"lower_bound":0.5,"valid_cross_entropy_diff":0.2,"epoch_seconds":10.6}
{"epoch":4,"valid_cross_entropy":0.6,"lower_bound":0.5,"valid_cross_entropy_diff":0.1,"epoch_seconds":98.4}
`)
	perplexity := write("perplexity", `{"epoch":1,"valid_cross_entropy":4.7,"no_lower_bound":true,"epoch_seconds":3600}
{"epoch":2,"valid_cross_entropy":4.6051701859880914,"no_lower_bound":true,"epoch_seconds":3500}
`)
	empty := write("empty", "\n")
	damaged := write("damaged", "{\"epoch\":1}\n{\"epoch\":\n")
	// A ptb run's log: no lower bound, unmarked, with the cross-entropy
	// as its difference from a bound of 0.
	unmarked := write("unmarked", `{"epoch":1,"valid_cross_entropy":4.7,"lower_bound":0,"valid_cross_entropy_diff":4.7,"epoch_seconds":3600}
{"epoch":2,"valid_cross_entropy":4.6051701859880914,"lower_bound":0,"valid_cross_entropy_diff":4.6051701859880914,"epoch_seconds":3500}
`)
	for _, c := range []struct {
		dir        string
		perplexity bool
		want, err  string
	}{
		{bounded, false, "4 epochs, best validation difference 0.1000 at epoch 2, last epoch 98 s", ""},
		{bounded, true, "4 epochs, best validation perplexity 1.822 at epoch 2, last epoch 98 s", ""},
		{unmarked, true, "2 epochs, best validation perplexity 100 at epoch 2, last epoch 3500 s", ""},
		{unmarked, false, "2 epochs, best validation difference 4.6052 at epoch 2, last epoch 3500 s", ""},
		{perplexity, true, "2 epochs, best validation perplexity 100 at epoch 2, last epoch 3500 s", ""},
		{perplexity, false, "2 epochs, best validation perplexity 100 at epoch 2, last epoch 3500 s", ""},
		{write("one", `{"epoch":1,"valid_cross_entropy":0.9,"valid_cross_entropy_diff":0.4,"epoch_seconds":5}`), false, "1 epoch, best validation difference 0.4000 at epoch 1, last epoch 5 s", ""},
		{write("third", `{"epoch":1,"valid_cross_entropy":1.1,"valid_cross_entropy_diff":0.6,"epoch_seconds":7}
{"epoch":2,"valid_cross_entropy":1.0,"valid_cross_entropy_diff":0.5,"epoch_seconds":6}
{"epoch":3,"valid_cross_entropy":0.9,"valid_cross_entropy_diff":0.4,"epoch_seconds":5}`), false, "3 epochs, best validation difference 0.4000 at epoch 3, last epoch 5 s", ""},
		{write("gap", `{"epoch":3,"valid_cross_entropy":0.9,"valid_cross_entropy_diff":0.4,"epoch_seconds":5}`), false, "", protocol.LogFile + ":1: a record of epoch 3 where epoch 1"},
		{empty, false, "", ""},
		{filepath.Join(dir, "absent"), false, "", ""},
		{damaged, false, "", protocol.LogFile + ":2"},
	} {
		got, err := protocol.RunProgress(c.dir, c.perplexity)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("protocol.RunProgress(%s, %t): error %v, want one naming %q", c.dir, c.perplexity, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("protocol.RunProgress(%s, %t) = %q, %v; want %q", c.dir, c.perplexity, got, err, c.want)
		}
	}
	// protocol.RunStatus gives the state, and a damaged log's error as its
	// progress.
	if st, progress, err := protocol.RunStatus(damaged, false); err != nil || st != protocol.RunResume || !strings.Contains(progress, protocol.LogFile+":2") {
		t.Errorf("protocol.RunStatus(damaged, false) = %q, %q, %v; want resume and the log's error", st, progress, err)
	}
	if st, progress, err := protocol.RunStatus(filepath.Join(dir, "absent"), false); err != nil || st != protocol.RunNew || progress != "" {
		t.Errorf("protocol.RunStatus(absent) = %q, %q, %v; want new and no progress", st, progress, err)
	}
}

// sbatchArgs splits the options of an #SBATCH line as sbatch does
// (_get_argument in Slurm's src/sbatch/opt.c): at spaces, quotes
// grouping, a backslash escaping the next character, an unquoted #
// starting a comment.
func sbatchArgs(line string) []string {
	var (
		args    []string
		cur     strings.Builder
		in      bool // within an argument
		quote   rune
		escaped bool
	)
	for _, r := range line {
		switch {
		case escaped:
			escaped = false
		case r == '\\':
			escaped, in = true, true
			continue
		case quote != 0:
			if r == quote {
				quote = 0
				continue
			}
		case r == '"' || r == '\'':
			quote, in = r, true
			continue
		case r == '#':
			if in {
				args = append(args, cur.String())
			}
			return args
		case r == ' ' || r == '\t':
			if in {
				args = append(args, cur.String())
				cur.Reset()
				in = false
			}
			continue
		}
		cur.WriteRune(r)
		in = true
	}
	if in {
		args = append(args, cur.String())
	}
	return args
}

// slurmExpand replaces Slurm's filename patterns %%, %A and %a as an
// array task's output is named; a backslash turns all replacements off.
func slurmExpand(p string, job, task int) string {
	if strings.Contains(p, `\`) {
		return strings.ReplaceAll(p, `\`, "")
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		if p[i] != '%' || i+1 == len(p) {
			b.WriteByte(p[i])
			continue
		}
		i++
		switch p[i] {
		case '%':
			b.WriteByte('%')
		case 'A':
			fmt.Fprint(&b, job)
		case 'a':
			fmt.Fprint(&b, task)
		default:
			b.WriteString("<%" + string(p[i]) + ">")
		}
	}
	return b.String()
}

// TestSlurmScriptOutputPath checks that the #SBATCH --output line, read as
// sbatch reads it and expanded as Slurm names an array task's output,
// names <out>/slurm/<job>_<task>.out for an --out with spaces, %, #,
// quotes; and that an --out with a backslash is refused.
func TestSlurmScriptOutputPath(t *testing.T) {
	for _, name := range []string{"sweep", "my sweep", "100%", "a%Ab", "run #2", `say "hi"`, "it's", "tab\tname"} {
		dir := t.TempDir()
		out := filepath.Join(dir, name)
		script := filepath.Join(dir, "job.sh")
		flags := SlurmFlags{Script: script, Time: "1:00:00", Mem: "1G", CPUs: 1}
		if strings.ContainsRune(name, '\t') {
			// A control character is refused (checkScriptText).
			if _, err := SlurmScript(SlurmJob{Name: "x", Package: "example.com/x", Program: "x", Out: out, Manifest: filepath.Join(out, "m.json"), Runs: sweepRuns(out, 1), Flags: flags}); err == nil {
				t.Errorf("--out %q: no error", out)
			}
			continue
		}
		if _, err := SlurmScript(SlurmJob{Name: "x", Package: "example.com/x", Program: "x", Out: out, Manifest: filepath.Join(out, "m.json"), Runs: sweepRuns(out, 1), Flags: flags}); err != nil {
			t.Errorf("--out %q: %v", out, err)
			continue
		}
		b, err := os.ReadFile(script)
		if err != nil {
			t.Fatal(err)
		}
		var line string
		for l := range strings.SplitSeq(string(b), "\n") {
			if strings.HasPrefix(l, "#SBATCH --output") {
				line = l
			}
		}
		args := sbatchArgs(strings.TrimPrefix(line, "#SBATCH"))
		want := filepath.Join(out, "slurm", "123_4.out")
		if len(args) != 1 || !strings.HasPrefix(args[0], "--output=") {
			t.Errorf("--out %q: line %q is read as %q, want one --output=%s", name, line, args, want)
			continue
		}
		if got := slurmExpand(strings.TrimPrefix(args[0], "--output="), 123, 4); got != want {
			t.Errorf("--out %q: line %q names %q, want %q", name, line, got, want)
		}
	}
	dir := t.TempDir()
	out := filepath.Join(dir, `back\slash`)
	_, err := SlurmScript(SlurmJob{Name: "x", Package: "example.com/x", Program: "x", Out: out, Manifest: filepath.Join(out, "m.json"), Runs: sweepRuns(out, 1),
		Flags: SlurmFlags{Script: filepath.Join(dir, "job.sh"), Time: "1:00:00", Mem: "1G", CPUs: 1}})
	if err == nil || !strings.Contains(err.Error(), "backslash") {
		t.Errorf("--out %q: error %v, want one about the backslash", out, err)
	}
}

// TestSlurmScriptOutsideModule: written from a directory in no Go module
// (a built program run elsewhere), the script does not build: the runs
// use a copy of the running program, made when the script is written.
func TestSlurmScriptOutsideModule(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("no bash")
	}
	dir := t.TempDir()
	if inGoModule(dir) {
		t.Skipf("%s is inside a Go module", dir)
	}
	t.Chdir(dir)
	out := filepath.Join(dir, "sweep")
	script := filepath.Join(dir, "job.sh")
	flags := SlurmFlags{Script: script, Time: "60", Mem: "1G", CPUs: 1}
	if _, err := SlurmScript(SlurmJob{Name: "x-sweep", Package: "example.com/x", Program: "x", Out: out, Manifest: filepath.Join(out, "sweep.json"), Runs: sweepRuns(out, 3), Flags: flags}); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(out, "bin", "x")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(exe)
	b, _ := os.ReadFile(bin)
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("%s is not a copy of the running program (%d bytes against %d)", bin, len(b), len(a))
	}
	if fi, err := os.Stat(bin); err != nil || fi.Mode().Perm()&0o100 == 0 {
		t.Errorf("%s is not executable: %v", bin, err)
	}
	tools := t.TempDir()
	fakeTools(t, tools)
	if o, err := exec.Command("bash", script).CombinedOutput(); err != nil {
		t.Fatalf("submitting: %v\n%s", err, o)
	}
	if calls, err := os.ReadFile(filepath.Join(tools, "go.calls")); err == nil {
		t.Errorf("the script called go: %s", calls)
	}
	if sb, _ := os.ReadFile(filepath.Join(tools, "sbatch.calls")); !strings.Contains(string(sb), "--array=0-2 ") {
		t.Errorf("sbatch was called with %q", sb)
	}
}

// TestSlurmScriptRefusesOverwrite: --slurm may replace a script that a
// sweep wrote, but not the sweep's manifest, the runs' program, a file of
// a run, nor any other existing file, which are left as they were.
func TestSlurmScriptRefusesOverwrite(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "sweep")
	runs := sweepRuns(out, 3)
	manifest := filepath.Join(out, "sweep.json")
	other := filepath.Join(dir, "notes.txt")
	for _, p := range []string{manifest, other, filepath.Join(runs[0].Dir, "model")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("precious"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "prog")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o777); err != nil {
		t.Fatal(err)
	}
	job := func(script string) SlurmJob {
		return SlurmJob{Name: "x-sweep", Package: "example.com/x", Program: "x", Out: out, Manifest: manifest, Runs: runs,
			Flags: SlurmFlags{Script: script, Binary: bin, Time: "1:00:00", Mem: "1G", CPUs: 1}}
	}
	for _, script := range []string{manifest, bin, filepath.Join(runs[0].Dir, "model"), filepath.Join(runs[1].Dir, "job.sh"), runs[2].LogFile(), other} {
		if _, err := SlurmScript(job(script)); err == nil || !strings.Contains(err.Error(), "--slurm") {
			t.Errorf("--slurm %s: %v", script, err)
		}
	}
	for _, p := range []string{manifest, other, filepath.Join(runs[0].Dir, "model")} {
		if b, _ := os.ReadFile(p); string(b) != "precious" {
			t.Errorf("%s was overwritten", p)
		}
	}
	// A script of its own, in --out, is written and written again.
	script := filepath.Join(out, "job.sh")
	for range 2 {
		if _, err := SlurmScript(job(script)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestLastLine: a failed run's report quotes the last line of its output
// (its error), but not the header line the sweep wrote before it.
func TestLastLine(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct{ text, want string }{
		{"# 2026-11-28 prog train\ntraining …\ntrain: --resume: run.json: unexpected end of JSON input\n\n", "train: --resume: run.json: unexpected end of JSON input"},
		{"# 2026-11-28 prog train\n", ""},
		{"", ""},
		{strings.Repeat("x", 8000) + "\nlast words", "last words"},
		{strings.Repeat("é", 400), strings.Repeat("é", 150) + "…"},
	} {
		p := filepath.Join(dir, "run.log")
		if err := os.WriteFile(p, []byte(tc.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := lastLine(p); got != tc.want {
			t.Errorf("lastLine of %.40q = %.60q, want %.60q", tc.text, got, tc.want)
		}
	}
	if got := lastLine(filepath.Join(dir, "absent")); got != "" {
		t.Errorf("an absent log: %q", got)
	}
}
