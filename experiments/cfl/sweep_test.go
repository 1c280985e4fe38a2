package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/experiment"
	"github.com/nsrnn/nsrnn/nsrnn"
)

func TestSweepGridPaper(t *testing.T) {
	g := sweepGrid{
		Tasks: data.TaskNames(), Models: nsrnn.Kinds, LRs: []float64{0.01, 0.005, 0.001, 0.0005},
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

func (f *fakeRunner) run(args []string, logPath string, threads int) error {
	f.mu.Lock()
	f.args = append(f.args, args)
	f.mu.Unlock()
	dir := args[slices.Index(args, "--out")+1]
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return experiment.WriteJSON(filepath.Join(dir, experiment.SummaryFile), experiment.Summary{BestValidCrossEntropyDiff: 0.5, BestEpoch: 1, Epochs: 1})
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
		if err := os.WriteFile(filepath.Join(d, experiment.RunFile), []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := experiment.WriteJSON(filepath.Join(finished, experiment.SummaryFile), experiment.Summary{}); err != nil {
		t.Fatal(err)
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

func TestSweepSlurm(t *testing.T) {
	out := t.TempDir()
	script := filepath.Join(out, "sweep.sh")
	args := []string{"--task", "dyck", "--models", "lstm,jm,ns", "--lrs", "0.01,0.001", "--stack-embeddings", "2,20",
		"--restarts", "3", "--out", out, "--slurm", script, "--binary", "echo BIN", "--sbatch", "--time=1:00:00"}
	var f fakeRunner
	if err := sweepCommand(args, &bytes.Buffer{}, &bytes.Buffer{}, f.run); err != nil {
		t.Fatal(err)
	}
	if len(f.args) > 0 {
		t.Fatal("--slurm ran the runs")
	}
	b, err := os.ReadFile(script)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	n := (1 + 2 + 1) * 2 * 3 // lstm, jm × 2 sizes, ns; 2 rates; 3 restarts
	for _, want := range []string{"#SBATCH --array=0-23\n", "#SBATCH --time=1:00:00\n", "SLURM_ARRAY_TASK_ID"} {
		if !strings.Contains(s, want) {
			t.Errorf("script lacks %q:\n%s", want, s)
		}
	}
	if c := len(regexp.MustCompile(`(?m)^  'echo BIN train --task dyck `).FindAllString(s, -1)); c != n {
		t.Errorf("%d command lines, want %d:\n%s", c, n, s)
	}
	if _, err := exec.LookPath("bash"); err != nil {
		return
	}
	// Run index 5 with the echo binary: it prints its command line;
	// then mark that run interrupted and check --resume is added.
	runs := sweepGrid{Tasks: []string{"dyck"}, Models: []string{"lstm", "jm", "ns"}, LRs: []float64{0.01, 0.001},
		StackEmbeddings: []int{2, 20}, Restarts: 3, Out: out}.enumerate()
	exec5 := func() string {
		cmd := exec.Command("bash", script)
		cmd.Env = append(os.Environ(), "SLURM_ARRAY_TASK_ID=5")
		o, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %s", err, o)
		}
		return string(o)
	}
	want := "BIN " + shellJoin(runs[5].trainArgs(runNew))
	if o := exec5(); !strings.Contains(o, want+"\n") {
		t.Errorf("index 5 printed %q, want %q", o, want)
	}
	if err := os.MkdirAll(runs[5].Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(runs[5].Dir, experiment.RunFile), []byte("{}"), 0o644)
	if o := exec5(); !strings.Contains(o, want+" --resume\n") {
		t.Errorf("interrupted index 5 printed %q, want %q --resume", o, want)
	}
	os.WriteFile(filepath.Join(runs[5].Dir, experiment.SummaryFile), []byte("{}"), 0o644)
	if o := exec5(); strings.Contains(o, "BIN") {
		t.Errorf("finished index 5 ran again: %q", o)
	}
}

func TestSweepFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--out", "x"},
		{"--task", "marked-reversal"},
		{"--task", "nope", "--out", "x"},
		{"--task", "dyck", "--models", "lstm,bogus", "--out", "x"},
		{"--task", "dyck", "--lrs", "-1", "--out", "x"},
	} {
		if err := sweepCommand(args, &bytes.Buffer{}, &bytes.Buffer{}, nil); err == nil || !strings.Contains(err.Error(), "--") {
			t.Errorf("%v: error %v, want one naming a flag", args, err)
		}
	}
}
