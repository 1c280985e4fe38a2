package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

func TestSweepGridPaper(t *testing.T) {
	g := sweepGrid{
		Tasks: data.TaskNames(), Models: protocol.PaperModels, LRs: []float64{0.01, 0.005, 0.001, 0.0005},
		StackEmbeddings: []int{2, 20, 40}, Restarts: 5, Out: "S",
	}
	runs := g.enumerate()
	// 5 tasks × (5 models + 2 models × 3 sizes) × 4 rates × 5 restarts.
	if want := 5 * (5 + 2*3) * 4 * 5; len(runs) != want {
		t.Fatalf("%d runs, want %d", len(runs), want)
	}
	dirs := map[string]bool{}
	seeds := map[string]map[uint64]bool{} // setting → seeds
	for _, r := range runs {
		if dirs[r.Dir] {
			t.Fatalf("duplicate directory %s", r.Dir)
		}
		dirs[r.Dir] = true
		setting := filepath.Dir(r.Dir)
		if seeds[setting] == nil {
			seeds[setting] = map[uint64]bool{}
		}
		if seeds[setting][r.Seed] {
			t.Fatalf("%s: seed %d used twice", setting, r.Seed)
		}
		seeds[setting][r.Seed] = true
		if !slices.Contains(r.Args, "--out") || r.Args[slices.Index(r.Args, "--out")+1] != r.Dir {
			t.Errorf("%s: args %v lack --out %s", r.Dir, r.Args, r.Dir)
		}
		if nsrnn.IsNondeterministic(r.Model) {
			q, gm := stackDefaults(r.Task)
			if r.States != q || r.Symbols != gm {
				t.Errorf("%s: |Q|=%d |Γ|=%d, want %d %d", r.Dir, r.States, r.Symbols, q, gm)
			}
		}
	}
	for s, ss := range seeds {
		if len(ss) != 5 {
			t.Errorf("%s: %d seeds, want 5", s, len(ss))
		}
	}
	// The command's defaults make the same grid.
	var stdout bytes.Buffer
	out := filepath.Join(t.TempDir(), "sweep")
	if err := sweepCommand([]string{"--task", "all", "--out", out, "--dry-run"}, &stdout, &bytes.Buffer{}, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(stdout.String(), "\n1100 runs: 0 finished, 0 to resume, 1100 new\n") {
		t.Errorf("the default sweep: %s", stdout.String()[max(0, stdout.Len()-200):])
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("--dry-run created %s", out)
	}
	for _, d := range []string{
		"S/marked-reversal/lstm/lr0.01/seed1",
		"S/dyck/jm-e40/lr0.0005/seed5",
		"S/hardest-cfl/gref-e2/lr0.005/seed3",
		"S/padded-reversal/ns+s/lr0.001/seed2",
	} {
		if !dirs[filepath.FromSlash(d)] {
			t.Errorf("no run in %s", d)
		}
	}
}

// fakeRunner records the commands and writes summary.json as a finished
// train run would.
type fakeRunner struct {
	mu   sync.Mutex
	args [][]string
}

func (f *fakeRunner) run(args []string, logPath string, threads int, _ <-chan os.Signal) error {
	f.mu.Lock()
	f.args = append(f.args, args)
	f.mu.Unlock()
	dir := args[slices.Index(args, "--out")+1]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return protocol.WriteJSON(filepath.Join(dir, protocol.SummaryFile), protocol.Summary{BestValidCrossEntropyDiff: 0.5, BestEpoch: 1, Epochs: 1, ElapsedSeconds: 1234})
}

func TestSweepSkipAndResume(t *testing.T) {
	out := t.TempDir()
	base := []string{"--task", "marked-reversal", "--models", "lstm,rns", "--lrs", "0.01", "--restarts", "2", "--out", out, "--epochs", "3", "--jobs", "2"}
	finished := filepath.Join(out, "marked-reversal", "lstm", "lr0.01", "seed1")
	interrupted := filepath.Join(out, "marked-reversal", "rns", "lr0.01", "seed2")
	for _, d := range []string{finished, interrupted} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, protocol.RunFile), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := protocol.WriteJSON(filepath.Join(finished, protocol.SummaryFile), protocol.Summary{}); err != nil {
		t.Fatal(err)
	}
	log := `{"epoch":1,"valid_cross_entropy":0.9,"lower_bound":0.5,"valid_cross_entropy_diff":0.4,"epoch_seconds":61}` + "\n"
	if err := os.WriteFile(filepath.Join(interrupted, protocol.LogFile), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	// The dry run tells each run's state, and how far the interrupted
	// one has come.
	var dry bytes.Buffer
	if err := sweepCommand(append(base, "--dry-run"), &dry, &bytes.Buffer{}, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"finished train --task marked-reversal --model lstm --lr 0.01 --seed 1 ",
		"resume   train --task marked-reversal --model rns --lr 0.01 --seed 2 ",
		" --resume\n         1 epoch, best validation difference 0.4000 at epoch 1, last epoch 61 s\n",
		"\n4 runs: 1 finished, 1 to resume, 2 new\n",
	} {
		if !strings.Contains(dry.String(), want) {
			t.Errorf("dry run lacks %q:\n%s", want, dry.String())
		}
	}
	var f fakeRunner
	var stderr bytes.Buffer
	if err := sweepCommand(base, &bytes.Buffer{}, &stderr, f.run); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if len(f.args) != 3 {
		t.Fatalf("%d runs executed, want 3 (one finished):\n%v", len(f.args), f.args)
	}
	for _, a := range f.args {
		dir := a[slices.Index(a, "--out")+1]
		if dir == finished {
			t.Errorf("finished run %s executed again", dir)
		}
		if a[0] != "train" || !slices.Contains(a, "--epochs") {
			t.Errorf("args %v: want train … --epochs 3", a)
		}
		if got, want := slices.Contains(a, "--resume"), dir == interrupted; got != want {
			t.Errorf("%s: --resume %v, want %v", dir, got, want)
		}
	}
	if n := strings.Count(stderr.String(), "] done "); n != 3 {
		t.Errorf("%d progress lines, want 3:\n%s", n, stderr.String())
	}
	// The resumed run's line gives its training time over both parts,
	// from its summary; the new runs' lines do not.
	for _, line := range strings.Split(strings.TrimSpace(stderr.String()), "\n") {
		if !strings.Contains(line, "] done ") {
			continue
		}
		got := strings.Contains(line, "(resumed; 1234s of training in all)")
		if want := strings.Contains(line, "rns/lr0.01/seed2"); got != want {
			t.Errorf("progress line %q: total training time given %v, want %v", line, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(out, sweepManifestFile)); err != nil {
		t.Error(err)
	}
	// A second sweep has nothing left to do.
	f.args = nil
	if err := sweepCommand(base, &bytes.Buffer{}, &bytes.Buffer{}, f.run); err != nil {
		t.Fatal(err)
	}
	if len(f.args) != 0 {
		t.Errorf("rerun executed %d runs, want 0", len(f.args))
	}
}

// TestSweepSlurm writes the Slurm script of a small grid and runs one of
// its array tasks with a fake built binary: it runs the same train command
// as a local sweep would, resumed when interrupted, skipped when finished.
// (internal/cli tests the submission: the build and the arrays.)
func TestSweepSlurm(t *testing.T) {
	out := t.TempDir()
	script := filepath.Join(out, "sweep.sh")
	bin := filepath.Join(t.TempDir(), "fakecfl")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\necho \"BIN $*\"\n"), 0o777); err != nil {
		t.Fatal(err)
	}
	args := []string{"--task", "dyck", "--models", "lstm,jm,ns", "--lrs", "0.01,0.001", "--stack-embeddings", "2,20",
		"--restarts", "3", "--out", out, "--slurm", script, "--binary", bin, "--time", "1:00:00", "--mem", "3G", "--cpus-per-task", "2"}
	var f fakeRunner
	var stderr bytes.Buffer
	if err := sweepCommand(args, &bytes.Buffer{}, &stderr, f.run); err != nil {
		t.Fatal(err)
	}
	if len(f.args) > 0 {
		t.Fatal("--slurm ran the runs")
	}
	if !strings.Contains(stderr.String(), "bash "+script) {
		t.Errorf("stderr does not say how to submit:\n%s", stderr.String())
	}
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	n := (1 + 2 + 1) * 2 * 3 // lstm, jm × 2 sizes, ns; 2 rates; 3 restarts
	for _, want := range []string{"sbatch --array=0-23 ", "#SBATCH --time=1:00:00\n", "#SBATCH --mem=3G\n", "#SBATCH --cpus-per-task=2\n", "SLURM_ARRAY_TASK_ID"} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
	if c := len(regexp.MustCompile(`(?m)^\d+\) DIR=.*; set -- train --task dyck `).FindAllString(s, -1)); c != n {
		t.Errorf("%d command lines, want %d:\n%s", c, n, s)
	}
	if strings.Contains(s, "go build") || strings.Contains(s, "go run") {
		t.Error("with --binary, the script builds or runs go")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		return
	}
	// Run index 5 with the fake binary: it prints its command line into
	// the run's log; then mark that run interrupted and check --resume
	// is added.
	runs := sweepGrid{Tasks: []string{"dyck"}, Models: []string{"lstm", "jm", "ns"}, LRs: []float64{0.01, 0.001},
		StackEmbeddings: []int{2, 20}, Restarts: 3, Out: out}.enumerate()
	log := runs[5].job(nsrnn.CPU).LogFile()
	exec5 := func() string {
		cmd := exec.Command("bash", script, "0")
		cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=5")
		o, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, o)
		}
		b, _ := os.ReadFile(log)
		return string(o) + string(b)
	}
	want := "BIN " + strings.Join(runs[5].job(nsrnn.CPU).Args, " ")
	if o := exec5(); !strings.Contains(o, want+"\n") {
		t.Errorf("index 5 printed %q, want %q", o, want)
	}
	if err := os.MkdirAll(runs[5].Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(runs[5].Dir, protocol.RunFile), []byte("{}"), 0o644)
	if o := exec5(); !strings.Contains(o, want+" --resume\n") {
		t.Errorf("interrupted index 5 printed %q, want %q --resume", o, want)
	}
	os.WriteFile(filepath.Join(runs[5].Dir, protocol.SummaryFile), []byte("{}"), 0o644)
	if o := exec5(); !strings.Contains(o, "finished already") {
		t.Errorf("finished index 5 ran again: %q", o)
	}
}

// TestSweepRefusesOtherSettings checks that a sweep directory is reused
// only with the settings it was made with: other ones are refused with
// the differences listed, and sweep.json is left as it was.
func TestSweepRefusesOtherSettings(t *testing.T) {
	out := t.TempDir()
	base := []string{"--task", "marked-reversal", "--models", "lstm", "--restarts", "1", "--out", out, "--epochs", "3"}
	var f fakeRunner
	if err := sweepCommand(base, &bytes.Buffer{}, &bytes.Buffer{}, f.run); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(out, sweepManifestFile)
	before, _ := os.ReadFile(manifest)
	for _, test := range []struct {
		args []string
		want []string
	}{
		{[]string{"--lrs", "0.01"}, []string{"lrs: [0.01,0.005,0.001,0.0005] → [0.01]"}},
		{[]string{"--restarts", "2", "--models", "lstm,rns"}, []string{"restarts: 1 → 2", "models:"}},
		{[]string{"--epochs", "4"}, []string{"train_flags"}},
		{[]string{"--grammar", "released"}, []string{"grammar"}},
		{[]string{"--dry-run", "--task", "dyck"}, []string{"tasks"}},
	} {
		f.args = nil
		err := sweepCommand(append(slices.Clone(base), test.args...), &bytes.Buffer{}, &bytes.Buffer{}, f.run)
		if err == nil {
			t.Errorf("%v: no error", test.args)
			continue
		}
		for _, w := range append(test.want, "--out", out) {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v: error %q lacks %q", test.args, err, w)
			}
		}
		if len(f.args) > 0 {
			t.Errorf("%v: ran %d runs", test.args, len(f.args))
		}
	}
	if after, _ := os.ReadFile(manifest); !bytes.Equal(before, after) {
		t.Error("sweep.json changed")
	}
	// The same settings (and other execution flags) continue it.
	if err := sweepCommand(append(slices.Clone(base), "--jobs", "1"), &bytes.Buffer{}, &bytes.Buffer{}, f.run); err != nil {
		t.Error(err)
	}
	// Not while another sweep runs in --out (it holds the directory's
	// lock), with the same settings or others; a dry run may look.
	lock, err := protocol.LockDir(out)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Release()
	for _, extra := range [][]string{nil, {"--epochs", "4"}} {
		f.args = nil
		err := sweepCommand(append(slices.Clone(base), extra...), &bytes.Buffer{}, &bytes.Buffer{}, f.run)
		if extra == nil && (err == nil || !strings.Contains(err.Error(), "another sweep runs in it") || len(f.args) > 0) {
			t.Errorf("beside another sweep: %v, %d runs", err, len(f.args))
		}
		if extra != nil && err == nil {
			t.Errorf("other settings beside another sweep: no error")
		}
	}
	if err := sweepCommand(append(slices.Clone(base), "--dry-run"), &bytes.Buffer{}, &bytes.Buffer{}, f.run); err != nil {
		t.Errorf("a dry run beside another sweep: %v", err)
	}
}

func TestSweepFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--out", "x"},
		{"--task", "marked-reversal"},
		{"--task", "nope", "--out", "x"},
		{"--task", "dyck", "--models", "lstm,bogus", "--out", "x"},
		{"--task", "dyck", "--lrs", "-1", "--out", "x"},
		{"--task", "dyck", "--models", "lstm", "--restarts", "1099511627776", "--dry-run", "--out", "x"},
	} {
		if err := sweepCommand(args, &bytes.Buffer{}, &bytes.Buffer{}, nil); err == nil || !strings.Contains(err.Error(), "--") {
			t.Errorf("%v: error %v, want one naming a flag", args, err)
		}
	}
}

// TestSweepRefusesDuplicates: a value repeated in a grid flag is refused
// up front, naming the flag and the value, and nothing is written.
func TestSweepRefusesDuplicates(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--lrs", "0.01,0.01"}, "--lrs: 0.01 is given more than once"},
		{[]string{"--lrs", "0.005,0.01,0.010"}, "--lrs: 0.01 is given more than once"},
		{[]string{"--lrs", "0.01,0.001,0.01"}, "--lrs: 0.01 is given more than once"},
		{[]string{"--models", "jm", "--stack-embeddings", "2,20,2"}, "--stack-embeddings: 2 is given more than once"},
	} {
		out := filepath.Join(t.TempDir(), "sweep")
		// --dry-run: were the value not refused, nothing would train.
		args := append([]string{"--task", "dyck", "--models", "lstm", "--restarts", "1", "--dry-run", "--out", out}, tc.args...)
		err := sweepCommand(args, &bytes.Buffer{}, &bytes.Buffer{}, nil)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one saying %q", tc.args, err, tc.want)
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: %s was created", tc.args, out)
		}
	}
}

// TestSweepChecksRuns: a sweep whose runs the train command would refuse
// (here, a training set beyond memory, or lengths with no strings), or
// whose Slurm script would be a directory, is refused before anything is
// written, naming the flag.
func TestSweepChecksRuns(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--train-size", "1099511627776"}, "--train-size"},
		{[]string{"--models", "rns", "--symbols", "1099511627776"}, "symbols"},
		{[]string{"--slurm", dir}, "--slurm"},
	} {
		out := filepath.Join(dir, "sweep")
		args := append([]string{"--task", "dyck", "--models", "lstm", "--restarts", "1", "--lrs", "0.01", "--out", out}, c.args...)
		err := sweepCommand(args, &bytes.Buffer{}, &bytes.Buffer{}, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %s", c.args, err, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: %s was created", c.args, out)
		}
	}
	// The train command refuses lengths with no strings before making its
	// run directory (marked reversal has only odd lengths).
	out := filepath.Join(dir, "run")
	status, _, stderr := run(tinyTrainArgs(out, "--lengths", "4:4")...)
	if status == 0 || !strings.Contains(stderr, "--lengths 4:4") {
		t.Errorf("train --lengths 4:4: status %d, %q", status, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("train --lengths 4:4 made its run directory")
	}
}

// TestSweep2023Protocol checks the flags of the 2023 release's protocol:
// --bottom goes to the kinds with a bottom symbol, --push-hidden-state to
// those that can push it (in <kind>-hidden, without stack vector sizes),
// sweep.json records both, and a rerun without them is refused.
func TestSweep2023Protocol(t *testing.T) {
	out := t.TempDir()
	base := []string{"--task", "count-3,marked-copy", "--models", "lstm,jm,rns", "--lrs", "0.005", "--restarts", "1", "--out", out, "--jobs", "1"}
	var f fakeRunner
	if err := sweepCommand(append(slices.Clone(base), "--bottom", "fixed", "--push-hidden-state"), &bytes.Buffer{}, &bytes.Buffer{}, f.run); err != nil {
		t.Fatal(err)
	}
	if len(f.args) != 6 {
		t.Fatalf("%d runs, want 6: %v", len(f.args), f.args)
	}
	for _, a := range f.args {
		args := strings.Join(a, " ")
		switch {
		case strings.Contains(args, "--model lstm"):
			if strings.Contains(args, "--bottom") || strings.Contains(args, "--push-hidden-state") {
				t.Errorf("lstm run %s", args)
			}
		case strings.Contains(args, "--model jm"):
			if !strings.Contains(args, "--push-hidden-state") || strings.Contains(args, "--stack-embedding") || !strings.Contains(args, "/jm-hidden/") {
				t.Errorf("jm run %s", args)
			}
		case strings.Contains(args, "--model rns"):
			if !strings.Contains(args, "--states 3 --symbols 3 --bottom fixed") || strings.Contains(args, "--push-hidden-state") {
				t.Errorf("rns run %s", args)
			}
		}
	}
	man := readJSONObject(t, filepath.Join(out, sweepManifestFile))
	if man["bottom"] != "fixed" || man["push_hidden_state"] != true {
		t.Errorf("sweep.json: bottom %v, push_hidden_state %v", man["bottom"], man["push_hidden_state"])
	}
	if err := sweepCommand(base, &bytes.Buffer{}, &bytes.Buffer{}, f.run); err == nil || !strings.Contains(err.Error(), "other settings") {
		t.Errorf("rerun without the flags: %v", err)
	}
	for _, test := range []struct {
		args []string
		want string
	}{
		{[]string{"--task", "count-3", "--models", "rns", "--bottom", "upside"}, `--bottom "upside"`},
		{[]string{"--task", "count-3", "--models", "lstm,rns", "--push-hidden-state"}, "--push-hidden-state: none of --models"},
		{[]string{"--task", "count-3", "--models", "lstm,jm", "--bottom", "fixed"}, "--bottom: none of --models"},
	} {
		o := filepath.Join(t.TempDir(), "o")
		err := sweepCommand(append(test.args, "--out", o), &bytes.Buffer{}, &bytes.Buffer{}, f.run)
		if err == nil || !strings.Contains(err.Error(), test.want) {
			t.Errorf("%v: error %v, want %q", test.args, err, test.want)
		}
		if _, err := os.Stat(o); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%v: %s written", test.args, o)
		}
	}
}

// TestSweepFirstSeed checks --first-seed: the restarts run seeds K … K+N−1
// in directories named by their seeds, sweep.json records K (and leaves it
// out at its default, as the files written before it), another K is
// refused for the same directory, and a K below 1 is refused.
func TestSweepFirstSeed(t *testing.T) {
	out := t.TempDir()
	base := []string{"--task", "marked-reversal", "--models", "lstm", "--lrs", "0.01", "--restarts", "2", "--out", out, "--jobs", "1"}
	var f fakeRunner
	if err := sweepCommand(append(slices.Clone(base), "--first-seed", "4"), &bytes.Buffer{}, &bytes.Buffer{}, f.run); err != nil {
		t.Fatal(err)
	}
	var seeds []string
	for _, a := range f.args {
		seed := a[slices.Index(a, "--seed")+1]
		seeds = append(seeds, seed)
		if dir := a[slices.Index(a, "--out")+1]; filepath.Base(dir) != "seed"+seed {
			t.Errorf("run of seed %s in %s", seed, dir)
		}
	}
	if strings.Join(seeds, " ") != "4 5" {
		t.Errorf("seeds %v, want 4 5", seeds)
	}
	if man := readJSONObject(t, filepath.Join(out, sweepManifestFile)); man["first_seed"] != 4.0 {
		t.Errorf("sweep.json: first_seed %v, want 4", man["first_seed"])
	}
	for _, args := range [][]string{base, append(slices.Clone(base), "--first-seed", "5")} {
		if err := sweepCommand(args, &bytes.Buffer{}, &bytes.Buffer{}, f.run); err == nil || !strings.Contains(err.Error(), "first_seed") {
			t.Errorf("%v: error %v, want one naming first_seed", args, err)
		}
	}
	other := t.TempDir()
	if err := sweepCommand([]string{"--task", "dyck", "--models", "lstm", "--restarts", "1", "--out", other, "--first-seed", "1"}, &bytes.Buffer{}, &bytes.Buffer{}, f.run); err != nil {
		t.Fatal(err)
	}
	if _, ok := readJSONObject(t, filepath.Join(other, sweepManifestFile))["first_seed"]; ok {
		t.Error("sweep.json records the default first seed")
	}
	if err := sweepCommand([]string{"--task", "dyck", "--out", t.TempDir(), "--first-seed", "0"}, &bytes.Buffer{}, &bytes.Buffer{}, f.run); err == nil || !strings.Contains(err.Error(), "--first-seed") {
		t.Errorf("--first-seed 0: %v", err)
	}
}

// TestSweepInterrupt checks the command's handling of a signal: the
// signal caught by the sweep reaches the run under way, no other run
// starts, the run is reported stopped, and the command exits with 130.
func TestSweepInterrupt(t *testing.T) {
	var sweepSigs chan<- os.Signal
	defer func(f func(chan<- os.Signal)) { notifySweepSignals = f }(notifySweepSignals)
	notifySweepSignals = func(ch chan<- os.Signal) { sweepSigs = ch }
	out := t.TempDir()
	var executed []string
	var got os.Signal
	run := func(args []string, logPath string, threads int, sigs <-chan os.Signal) error {
		executed = append(executed, args[slices.Index(args, "--out")+1])
		sweepSigs <- os.Interrupt
		select {
		case got = <-sigs:
		case <-time.After(10 * time.Second):
		}
		return errors.New("exit status 130")
	}
	var stderr bytes.Buffer
	err := sweepCommand([]string{"--task", "marked-reversal", "--models", "lstm", "--lrs", "0.01", "--restarts", "3", "--out", out, "--jobs", "1"}, &bytes.Buffer{}, &stderr, run)
	var ee *cli.ExitError
	if !errors.As(err, &ee) || ee.Code != 130 || !strings.Contains(err.Error(), "1 run stopped, 2 not started") {
		t.Fatalf("error %v, want exit status 130 with 1 run stopped and 2 not started\n%s", err, stderr.String())
	}
	if got != os.Interrupt || len(executed) != 1 {
		t.Errorf("the run got %v; runs executed %v; want one run, interrupted", got, executed)
	}
	for _, want := range []string{"sweep: interrupt: passed on to the 1 runs under way", "[1/3] stopped "} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr.String())
		}
	}
}

// TestSweepSlurmHint checks that the command printed to submit the Slurm
// script quotes its path for the shell.
func TestSweepSlurmHint(t *testing.T) {
	for _, name := range []string{"sweep.sh", "my sweep.sh", "$HOME.sh", "it's.sh"} {
		dir := t.TempDir()
		script := filepath.Join(dir, name)
		bin := filepath.Join(dir, "fakecfl")
		if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o777); err != nil {
			t.Fatal(err)
		}
		args := []string{"--task", "dyck", "--models", "lstm", "--out", filepath.Join(dir, "out"), "--slurm", script, "--binary", bin}
		var stderr bytes.Buffer
		if err := sweepCommand(args, &bytes.Buffer{}, &stderr, (&fakeRunner{}).run); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if want := "submit from a login node with: bash " + cli.ShellQuote(script) + "\n"; !strings.Contains(stderr.String(), want) {
			t.Errorf("%s: stderr lacks %q:\n%s", name, want, stderr.String())
		}
	}
}

// TestSweepGrammarDigest checks that a sweep on a grammar file records
// the file's SHA-256 in sweep.json, continues on the same file and on a
// sweep.json written before the digest was recorded, and refuses, naming
// the file, to continue on a changed file.
func TestSweepGrammarDigest(t *testing.T) {
	dir := t.TempDir()
	text := "S -> \"0\" S \"0\" [0.4]\nS -> \"1\" S \"1\" [0.4]\nS -> \"#\" [0.2]\n"
	g := writeText(t, dir, "mr.pcfg", text)
	out := filepath.Join(dir, "sweep")
	args := []string{"--grammar-file", g, "--models", "rns", "--lrs", "0.01", "--restarts", "1", "--epochs", "1",
		"--train-size", "6", "--valid-size", "4", "--out", out}
	var f fakeRunner
	if err := sweepCommand(args, &bytes.Buffer{}, &bytes.Buffer{}, f.run); err != nil {
		t.Fatal(err)
	}
	manifest := filepath.Join(out, sweepManifestFile)
	sum := sha256.Sum256([]byte(text))
	digest := hex.EncodeToString(sum[:])
	src, _ := readJSONObject(t, manifest)["source"].(map[string]any)
	if src["grammar_sha256"] != digest {
		t.Errorf("sweep.json source %v: want grammar_sha256 %s", src, digest)
	}
	if err := sweepCommand(append(slices.Clone(args), "--dry-run"), &bytes.Buffer{}, &bytes.Buffer{}, nil); err != nil {
		t.Errorf("same grammar file: %v", err)
	}

	// A sweep.json written before the digest was recorded continues.
	recorded, err := os.ReadFile(manifest)
	if err != nil {
		t.Fatal(err)
	}
	old := readJSONObject(t, manifest)
	delete(old["source"].(map[string]any), "grammar_sha256")
	if err := protocol.WriteJSON(manifest, old); err != nil {
		t.Fatal(err)
	}
	if err := sweepCommand(append(slices.Clone(args), "--dry-run"), &bytes.Buffer{}, &bytes.Buffer{}, nil); err != nil {
		t.Errorf("sweep.json without the digest: %v", err)
	}
	if err := os.WriteFile(manifest, recorded, 0o644); err != nil {
		t.Fatal(err)
	}

	// A changed grammar file is refused, with sweep.json left as it was.
	writeText(t, dir, "mr.pcfg", "S -> \"0\" S \"0\" [0.3]\nS -> \"1\" S \"1\" [0.5]\nS -> \"#\" [0.2]\n")
	for _, extra := range [][]string{nil, {"--dry-run"}} {
		f.args = nil
		err := sweepCommand(append(slices.Clone(args), extra...), &bytes.Buffer{}, &bytes.Buffer{}, f.run)
		for _, w := range []string{"--grammar-file " + g, "changed", digest} {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: changed grammar file: error %v, want one containing %q", extra, err, w)
			}
		}
		if len(f.args) > 0 {
			t.Errorf("%v: changed grammar file: ran %d runs", extra, len(f.args))
		}
	}
	if after, _ := os.ReadFile(manifest); !bytes.Equal(after, recorded) {
		t.Error("sweep.json changed")
	}
}

// TestSweepDoneLineNoBound checks the line of a finished run on the
// user's strings, which have no lower bound: it gives the validation
// cross-entropy, not a difference from a bound.
func TestSweepDoneLineNoBound(t *testing.T) {
	dir := t.TempDir()
	train := writeText(t, dir, "train.txt", "a b b a\nb a a b\na a\n")
	valid := writeText(t, dir, "valid.txt", "a b\nb a a b\n")
	for _, test := range []struct {
		name    string
		summary protocol.Summary
		want    string
	}{
		{"no bound", protocol.Summary{NoLowerBound: true, BestValidCrossEntropy: 0.75, BestValidPerplexity: math.Exp(0.75), BestEpoch: 2, Epochs: 3},
			": best validation cross-entropy 0.7500 nats per symbol (no lower bound) at epoch 2 of 3\n"},
		{"bound", protocol.Summary{BestValidCrossEntropy: 0.75, ValidLowerBound: 0.5, BestValidCrossEntropyDiff: 0.25, BestEpoch: 2, Epochs: 3},
			": best validation difference 0.2500 nats per symbol at epoch 2 of 3\n"},
	} {
		t.Run(test.name, func(t *testing.T) {
			runner := func(args []string, logPath string, threads int, _ <-chan os.Signal) error {
				dir := args[slices.Index(args, "--out")+1]
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return err
				}
				return protocol.WriteJSON(filepath.Join(dir, protocol.SummaryFile), test.summary)
			}
			args := []string{"--train", train, "--valid", valid, "--models", "lstm", "--lrs", "0.01", "--restarts", "1",
				"--epochs", "3", "--out", filepath.Join(t.TempDir(), "sweep")}
			var stderr bytes.Buffer
			if err := sweepCommand(args, &bytes.Buffer{}, &stderr, runner); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stderr.String(), test.want) {
				t.Errorf("stderr lacks %q:\n%s", test.want, stderr.String())
			}
		})
	}
}

// --workers reaches every run of a sweep (and its sweep.json, so that a
// sweep goes on with its count), and a count below 1 is refused.
func TestSweepWorkers(t *testing.T) {
	out := t.TempDir()
	args := []string{"--task", "marked-reversal", "--models", "lstm,rns", "--lrs", "0.01", "--restarts", "1", "--out", out, "--workers", "3"}
	var f fakeRunner
	if err := sweepCommand(args, &bytes.Buffer{}, &bytes.Buffer{}, f.run); err != nil {
		t.Fatal(err)
	}
	if len(f.args) != 2 {
		t.Fatalf("%d runs executed, want 2", len(f.args))
	}
	for _, a := range f.args {
		if i := slices.Index(a, "--workers"); i < 0 || a[i+1] != "3" {
			t.Errorf("run args %v lack --workers 3", a)
		}
	}
	raw, err := os.ReadFile(filepath.Join(out, sweepManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"--workers"`) {
		t.Errorf("sweep.json does not record --workers:\n%s", raw)
	}
	err = sweepCommand([]string{"--task", "dyck", "--models", "lstm", "--out", filepath.Join(t.TempDir(), "s"), "--workers", "0"}, &bytes.Buffer{}, &bytes.Buffer{}, nil)
	if err == nil || !strings.Contains(err.Error(), "--workers") {
		t.Errorf("--workers 0: %v, want an error naming --workers", err)
	}
}

// TestUnstarted: select counts the runs that sweep.json lists and that
// have not started (no run.json in their directory, found under the
// sweep directory whatever the working directory of the sweep was).
func TestUnstarted(t *testing.T) {
	out := t.TempDir()
	m := sweepManifest{Runs: []sweepRun{
		{Dir: "elsewhere/s/marked-reversal/lstm/lr0.01/seed1"},
		{Dir: "elsewhere/s/marked-reversal/lstm/lr0.01/seed2"},
		{Dir: "/abs/s/dyck/rns/lr0.005/seed1"},
	}}
	if err := protocol.WriteJSON(filepath.Join(out, sweepManifestFile), m); err != nil {
		t.Fatal(err)
	}
	started := filepath.Join(out, "marked-reversal", "lstm", "lr0.01", "seed1")
	if err := os.MkdirAll(started, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(started, protocol.RunFile), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if n, total := unstarted(out); n != 2 || total != 3 {
		t.Errorf("unstarted = %d of %d, want 2 of 3", n, total)
	}
	if n, total := unstarted(t.TempDir()); n != 0 || total != 0 {
		t.Errorf("no sweep.json: %d of %d", n, total)
	}
}

// TestSweepDamagedManifest: a sweep.json that is not JSON (truncated, say)
// is refused naming the file as damaged, and left as it is.
func TestSweepDamagedManifest(t *testing.T) {
	for _, content := range []string{"", `{"tasks": ["dyck"`, "not json"} {
		out := t.TempDir()
		manifest := filepath.Join(out, sweepManifestFile)
		if err := os.WriteFile(manifest, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		var f fakeRunner
		err := sweepCommand([]string{"--task", "dyck", "--models", "lstm", "--restarts", "1", "--out", out}, &bytes.Buffer{}, &bytes.Buffer{}, f.run)
		if err == nil || !strings.Contains(err.Error(), manifest+" is damaged") {
			t.Errorf("sweep.json %q: error %v, want %s is damaged", content, err, manifest)
		}
		if len(f.args) > 0 {
			t.Errorf("sweep.json %q: ran %d runs", content, len(f.args))
		}
		if b, _ := os.ReadFile(manifest); string(b) != content {
			t.Errorf("sweep.json %q: rewritten as %q", content, b)
		}
	}
}

// TestSweepSlurmMissingBinary: cfl sweep --slurm with a --binary that does
// not exist is refused naming the flag, and writes nothing: no script, no
// sweep.json.
func TestSweepSlurmMissingBinary(t *testing.T) {
	dir := t.TempDir()
	out, script, bin := filepath.Join(dir, "out"), filepath.Join(dir, "sweep.sh"), filepath.Join(dir, "nonexistent")
	args := []string{"--task", "dyck", "--models", "lstm", "--out", out, "--slurm", script, "--binary", bin}
	err := sweepCommand(args, &bytes.Buffer{}, &bytes.Buffer{}, (&fakeRunner{}).run)
	if err == nil || !strings.Contains(err.Error(), "--binary "+bin+" does not exist") {
		t.Errorf("error %v, want --binary %s does not exist", err, bin)
	}
	for _, p := range []string{script, filepath.Join(out, sweepManifestFile)} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}
