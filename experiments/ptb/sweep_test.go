package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsrnn/nsrnn/data/ptb"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

// TestSweepAndSelect runs a small sweep in process and selects its best
// runs: hyperparameters drawn in the paper's ranges, deterministic, every
// run finished, the selection the best validation perplexity of each
// model with a test perplexity.
func TestSweepAndSelect(t *testing.T) {
	data := tinyCorpus(t)
	out := filepath.Join(t.TempDir(), "sweep")
	s := sweepSettings{Data: data, Models: []string{"lstm-256", "rns-1-2"}, Runs: 2, Seed: 3, Epochs: 1, Batch: 3, BPTT: 5, Hidden: 4, LRRange: [2]float64{lrMin, lrMax}}
	runs, err := plan(s, out)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := plan(s, out)
	for i, r := range runs {
		if r.LR < lrMin || r.LR > lrMax || r.Clip < clipMin || r.Clip > clipMax {
			t.Errorf("run %d: lr %v clip %v outside the paper's ranges", i, r.LR, r.Clip)
		}
		if r.LR != again[i].LR || r.Clip != again[i].Clip {
			t.Errorf("run %d: the plan is not deterministic", i)
		}
	}
	if lock, err := prepareSweep(out, s); err != nil {
		t.Fatal(err)
	} else {
		defer lock.Release()
	}
	if err := execute(sweepJobs(runs), 2, 1, inProcess, io.Discard); err != nil {
		t.Fatal(err)
	}
	o, e, code := runCmd("select", "--sweep", out, "--json")
	if code != 0 {
		t.Fatal(e)
	}
	var rows []selected
	if err := json.Unmarshal([]byte(o), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("%d models selected, want 2", len(rows))
	}
	for _, r := range rows {
		var best float64 = math.Inf(1)
		for _, run := range runs {
			if run.Model != r.Model {
				continue
			}
			var sum summary
			b, _ := os.ReadFile(filepath.Join(run.Dir, "summary.json"))
			if err := json.Unmarshal(b, &sum); err != nil {
				t.Fatal(err)
			}
			best = math.Min(best, sum.BestValidPerplexity)
		}
		if r.ValidPerplexity != best || !(r.TestPerplexity > 1) || r.Finished != 2 || r.Hidden != 4 {
			t.Errorf("%s: selected valid %v (best %v), test %v, %d runs, hidden %d (want 4, the sweep's)", r.Model, r.ValidPerplexity, best, r.TestPerplexity, r.Finished, r.Hidden)
		}
	}
	// The table says the size that --hidden gave the paper's models.
	if o, e, code := runCmd("select", "--sweep", out); code != 0 || !strings.Contains(o, "lstm-256 with hidden 4") || !strings.Contains(o, "rns-1-2 with hidden 4") {
		t.Errorf("select's table: code %d, %s%s", code, o, e)
	}
	// A test file that cannot be read, or stray arguments, leave the
	// selection as it was.
	before := readFile(t, filepath.Join(out, "selected.json"))
	garbage := filepath.Join(t.TempDir(), "garbage.bin")
	if err := os.WriteFile(garbage, []byte{0xff, 0xfe, 0, 1}, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--test", garbage}, "testing "},
		{[]string{"extra", "args"}, "unexpected arguments"},
		// A test file that is not there is the flag's fault, said
		// before any run is tested.
		{[]string{"--data", t.TempDir()}, "select: --data: stat "},
		{[]string{"--test", filepath.Join(t.TempDir(), "none.txt")}, "select: --test: stat "},
		{[]string{"--test", t.TempDir()}, "is a directory, not a test split file"},
	} {
		_, e, code := runCmd(append([]string{"select", "--sweep", out}, c.args...)...)
		if code == 0 || !strings.Contains(e, c.want) {
			t.Errorf("select %v: code %d, stderr %q, want an error with %q", c.args, code, e, c.want)
		}
		if after := readFile(t, filepath.Join(out, "selected.json")); after != before {
			t.Errorf("select %v changed selected.json:\n%s", c.args, after)
		}
	}
	// A test file of another corpus: its words outside the runs'
	// vocabulary are read as <unk> and reported once (not once per
	// model), without the --strict that select does not have.
	other := filepath.Join(t.TempDir(), "other.txt")
	if err := os.WriteFile(other, []byte("zyzzyva quux\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := runCmd("select", "--sweep", out, "--test", other); code != 0 ||
		!strings.Contains(e, "select: 2 words not in the runs' vocabulary were read as <unk>:\n") || strings.Count(e, other) != 1 {
		t.Errorf("select --test %s: code %d, stderr %q", other, code, e)
	}
	// The same sweep directory with other settings is refused.
	_, e, code = runCmd("sweep", "--data", data, "--out", out, "--models", "lstm-256", "--runs", "2", "--seed", "3", "--epochs", "1", "--batch", "3", "--bptt", "5", "--hidden", "4")
	if code == 0 || !strings.Contains(e, "models: [") {
		t.Errorf("re-running with other models: code %d, %q", code, e)
	}
	// A Slurm script has one task per run, runs the built program, and
	// asks for the resources given.
	script := filepath.Join(t.TempDir(), "job.sh")
	if _, e, code := runCmd("sweep", "--data", data, "--out", filepath.Join(t.TempDir(), "s2"), "--runs", "3", "--slurm", script,
		"--time", "12:00:00", "--mem", "16G", "--cpus-per-task", "4"); code != 0 {
		t.Fatal(e)
	}
	b, _ := os.ReadFile(script)
	sc := string(b)
	// The script builds the program with this one's build tags (the
	// OpenBLAS build's products are the fast ones).
	build := "go build -o "
	if nsrnn.BLAS == "openblas" {
		build = "go build -tags openblas -o "
	}
	for _, want := range []string{"sbatch --array=0-5 ", "#SBATCH --time=12:00:00\n", "#SBATCH --mem=16G\n", "#SBATCH --cpus-per-task=4\n",
		build, "github.com/nsrnn/nsrnn/experiments/ptb"} {
		if !strings.Contains(sc, want) {
			t.Errorf("Slurm script lacks %q:\n%s", want, sc)
		}
	}
	if strings.Count(sc, "set -- train ") != 6 || strings.Contains(sc, "go run") {
		t.Errorf("Slurm script:\n%s", sc)
	}
	if _, e, code := runCmd("sweep", "--data", data, "--out", filepath.Join(t.TempDir(), "s3"), "--slurm", script, "--time", "soon"); code == 0 || !strings.Contains(e, "--time") {
		t.Errorf("bad --time: status %d, %q", code, e)
	}
}

// TestSweepBadInput: settings that every run would fail on, and a sweep
// too large to list, are refused before anything is written.
func TestSweepBadInput(t *testing.T) {
	data := tinyCorpus(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--batch", "0"}, "--batch"},
		{[]string{"--bptt", "-1"}, "--bptt"},
		{[]string{"--epochs", "0"}, "--epochs"},
		{[]string{"--hidden", "-5"}, "--hidden"},
		{[]string{"--hidden", "100000"}, "--hidden 100000"},
		{[]string{"--runs", "1099511627776", "--dry-run"}, "--runs"},
		{[]string{"--models", "all", "--runs", "20000"}, "--runs"},
		{[]string{"--models", "lstm-256,lstm-256", "--dry-run"}, "--models: lstm-256 is given more than once"},
		{[]string{"--models", "rns-1-2,lstm-256,rns-1-2", "--dry-run"}, "--models: rns-1-2 is given more than once"},
		{[]string{"--models", "lstm", "--dry-run"}, `--models: unknown model "lstm": want models of the paper's table (lstm-256, lstm-258`},
		{[]string{"--models", "lstm-256,", "--dry-run"}, `--models "lstm-256,": an empty name`},
		{[]string{"--models", "", "--dry-run"}, `--models "": an empty name`},
	} {
		out := filepath.Join(t.TempDir(), "sweep")
		_, e, code := runCmd(append([]string{"sweep", "--data", data, "--models", "lstm-256", "--out", out}, c.args...)...)
		if code == 0 || !strings.Contains(e, c.want) {
			t.Errorf("%v: code %d, stderr %q, want an error with %q", c.args, code, e, c.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%v: %s was created", c.args, out)
		}
	}
}

// TestHelp checks that help and --help exit 0 with the flags' help, on
// stdout, for the commands of this file and the others; that every
// command's help starts with its description; and that train's help lists
// only the kinds that can stream, marks what NS kinds require and shows
// the true defaults of the memory limits.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help", "sweep"}, {"sweep", "--help"}, {"help", "train"}, {"train", "-h"}, {"help"}} {
		o, e, code := runCmd(args...)
		if code != 0 || strings.Contains(o, "help requested") || e != "" || o == "" {
			t.Errorf("%v: status %d, stdout %q, stderr %q", args, code, o, e)
		}
	}
	for _, cmd := range prog.Commands() {
		o, _, _ := runCmd("help", cmd)
		if !strings.HasPrefix(o, "usage: ptb "+cmd+" [flags]\n\n"+prog.Summary(cmd)+"\n") || strings.Contains(o, "default false") {
			t.Errorf("help %s:\n%s", cmd, o)
		}
	}
	o, _, _ := runCmd("help", "sweep")
	for _, want := range []string{"--cpus-per-task int", "(default 2)", "--mem string", `(default "8G")`, "--time string"} {
		if !strings.Contains(o, want) {
			t.Errorf("help sweep lacks %q:\n%s", want, o)
		}
	}
	o, _, _ = runCmd("help", "train")
	for _, want := range []string{"model: lstm, jm, ns, ns+s, ns+u, rns, vrns (required", "PDA states of ns, ns+s, ns+u, rns, vrns (required for them)",
		"stack symbol types of ns, ns+s, ns+u, rns, vrns (required for them)", "(default 35", "of jm (default 10"} {
		if !strings.Contains(o, want) {
			t.Errorf("help train lacks %q:\n%s", want, o)
		}
	}
	for _, bad := range []string{"gref"} {
		if strings.Contains(o, bad) {
			t.Errorf("help train mentions %s, which cannot stream:\n%s", bad, o)
		}
	}
}

// TestSweepFiles: a sweep over a corpus of three files of any names with
// --vocab-size gives its runs those flags, and select evaluates the best
// on the sweep's test file.
func TestSweepFiles(t *testing.T) {
	data := tinyCorpus(t)
	dir := t.TempDir()
	names := map[string]string{ptb.TrainFile: "wiki.train.tokens", ptb.ValidFile: "wiki.valid.tokens", ptb.TestFile: "wiki.test.tokens"}
	for from, to := range names {
		b, err := os.ReadFile(filepath.Join(data, from))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, to), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := sweepSettings{Files: &corpusFiles{Train: filepath.Join(dir, "wiki.train.tokens"), Valid: filepath.Join(dir, "wiki.valid.tokens"), Test: filepath.Join(dir, "wiki.test.tokens")},
		VocabSize: 8, Models: []string{"lstm-256"}, Runs: 1, Seed: 3, Epochs: 1, Batch: 3, BPTT: 5, Hidden: 4}
	out := filepath.Join(t.TempDir(), "sweep")
	runs, err := plan(s, out)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"train", "--train", s.Files.Train, "--valid", s.Files.Valid, "--test", s.Files.Test, "--vocab-size", "8", "--model", "lstm"}
	if !slices.Equal(runs[0].Args[:len(want)], want) {
		t.Fatalf("run args %q, want them to start %q", runs[0].Args, want)
	}
	if lock, err := prepareSweep(out, s); err != nil {
		t.Fatal(err)
	} else {
		defer lock.Release()
	}
	if err := execute(sweepJobs(runs), 1, 1, inProcess, io.Discard); err != nil {
		t.Fatal(err)
	}
	var rs settings
	b, _ := os.ReadFile(filepath.Join(runs[0].Dir, "run.json"))
	// The 8 most frequent types, <eos>, and <unk> unless it is among
	// the 8.
	if err := json.Unmarshal(b, &rs); err != nil || rs.VocabSize != 8 || rs.Files == nil || rs.Files.Test != s.Files.Test || rs.Model.InputVocab < 9 || rs.Model.InputVocab > 10 {
		t.Errorf("run.json %s: want the three files, --vocab-size 8 and a vocabulary of 9 or 10 (%v)", b, err)
	}
	o, e, code := runCmd("select", "--sweep", out, "--json")
	if code != 0 {
		t.Fatal(e)
	}
	var rows []selected
	if err := json.Unmarshal([]byte(o), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("select: %s (%v)", o, err)
	}
	res, err := evaluateRun(runs[0].Dir, s.Files.Test, 0, 0, "", nsrnn.CPU, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].TestPerplexity != res.Perplexity {
		t.Errorf("select's test perplexity %v, the run's on %s %v", rows[0].TestPerplexity, s.Files.Test, res.Perplexity)
	}
	for _, args := range [][]string{
		{"sweep", "--data", data, "--train", s.Files.Train, "--out", out},
		{"sweep", "--train", s.Files.Train, "--out", out},
		{"sweep", "--train", s.Files.Train, "--valid", s.Files.Valid, "--test", filepath.Join(dir, "missing"), "--out", out},
	} {
		if _, e, code := runCmd(args...); code == 0 || !strings.Contains(e, "--") {
			t.Errorf("%v: status %d, %q; want a refusal naming the flags", args, code, e)
		}
	}
}

// inProcess runs a sweep's run in this process (the sweep executor's
// Launcher).
func inProcess(args []string, logPath string, threads int, _ <-chan os.Signal) error {
	if code := prog.Main(args, io.Discard, io.Discard); code != 0 {
		return fmt.Errorf("exit %d", code)
	}
	return nil
}

// TestSweepLRRange: a new sweep draws its learning rates from the authors'
// released range (or --lr-range) and records it in sweep.json; a sweep.json
// made before the range was recorded resumes with its old draws (the
// legacy range) unless --lr-range is given; a bad range is refused, naming
// the flag.
func TestSweepLRRange(t *testing.T) {
	data := tinyCorpus(t)
	dir := t.TempDir()
	draws := func(args ...string) []float64 {
		t.Helper()
		o, e, code := runCmd(append([]string{"sweep", "--data", data, "--models", "lstm-256", "--runs", "5", "--dry-run"}, args...)...)
		if code != 0 {
			t.Fatalf("sweep %q: %s", args, e)
		}
		var lrs []float64
		for _, line := range strings.Split(strings.TrimSpace(o), "\n") {
			var lr float64
			if _, err := fmt.Sscanf(line[strings.Index(line, "lr "):], "lr %g", &lr); err != nil {
				t.Fatalf("line %q: %v", line, err)
			}
			lrs = append(lrs, lr)
		}
		return lrs
	}
	within := func(name string, lrs []float64, lo, hi float64) {
		t.Helper()
		if len(lrs) != 5 {
			t.Fatalf("%s: %d runs, want 5", name, len(lrs))
		}
		for _, lr := range lrs {
			// The dry run prints four significant digits.
			if lr < lo*(1-1e-3) || lr > hi*(1+1e-3) {
				t.Errorf("%s: lr %v outside [%v, %v]", name, lr, lo, hi)
			}
		}
	}
	within("new sweep", draws("--out", filepath.Join(dir, "new")), lrMin, lrMax)
	within("--lr-range", draws("--out", filepath.Join(dir, "new"), "--lr-range", "0.5:0.6"), 0.5, 0.6)

	legacy := filepath.Join(dir, "legacy")
	if err := os.MkdirAll(legacy, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(legacy, "sweep.json"), []byte(`{"data":"x","models":["lstm-256"],"runs":5,"seed":1,"epochs":100,"batch":32,"bptt":35}`), 0o666); err != nil {
		t.Fatal(err)
	}
	within("legacy sweep", draws("--out", legacy), legacyLRMin, legacyLRMax)
	within("legacy sweep with --lr-range", draws("--out", legacy, "--lr-range", "1:100"), lrMin, lrMax)

	s := sweepSettings{Data: data, Models: []string{"lstm-256"}, Runs: 1, Seed: 1, Epochs: 1, Batch: 3, BPTT: 5, LRRange: [2]float64{lrMin, lrMax}}
	recorded := filepath.Join(dir, "recorded")
	if lock, err := prepareSweep(recorded, s); err != nil {
		t.Fatal(err)
	} else {
		defer lock.Release()
	}
	raw, err := os.ReadFile(filepath.Join(recorded, "sweep.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"lr_range": [`) && !strings.Contains(string(raw), `"lr_range":[`) {
		t.Errorf("sweep.json does not record the range: %s", raw)
	}
	if legacySweep(recorded) {
		t.Error("a sweep with lr_range reads as legacy")
	}

	for _, bad := range []string{"1", "0:5", "5:1", "a:b", "1:inf", "-1:2"} {
		_, e, code := runCmd("sweep", "--data", data, "--out", filepath.Join(dir, "bad"), "--lr-range", bad, "--dry-run")
		if code == 0 || !strings.Contains(e, "--lr-range") {
			t.Errorf("--lr-range %s: exit %d, stderr %q", bad, code, e)
		}
	}
}

// TestSweepInterrupt checks the executor's handling of a signal: it
// reaches the run under way, no other run starts, the run is reported
// stopped (not failed), and the sweep exits with 128 + the signal.
func TestSweepInterrupt(t *testing.T) {
	var sweepSigs chan<- os.Signal
	defer func(f func(chan<- os.Signal)) { notifySweepSignals = f }(notifySweepSignals)
	notifySweepSignals = func(ch chan<- os.Signal) { sweepSigs = ch }
	dir := t.TempDir()
	runs := []cli.SweepRun{{Dir: filepath.Join(dir, "a")}, {Dir: filepath.Join(dir, "b")}}
	var executed int
	var got os.Signal
	run := func(args []string, logPath string, threads int, sigs <-chan os.Signal) error {
		executed++
		sweepSigs <- syscall.SIGTERM
		select {
		case got = <-sigs:
		case <-time.After(10 * time.Second):
		}
		return errors.New("exit status 143")
	}
	var stderr bytes.Buffer
	err := execute(runs, 1, 1, run, &stderr)
	var ee *cli.ExitError
	if !errors.As(err, &ee) || ee.Code != 143 || !strings.Contains(err.Error(), "1 run stopped, 1 not started") {
		t.Fatalf("error %v, want exit status 143 with 1 run stopped and 1 not started\n%s", err, stderr.String())
	}
	if got != syscall.SIGTERM || executed != 1 || !strings.Contains(stderr.String(), "[1/2] stopped ") || strings.Contains(stderr.String(), "FAILED") {
		t.Errorf("the run got %v; %d runs executed; stderr:\n%s", got, executed, stderr.String())
	}
}

// TestSweepResumedTime: a resumed run's progress line gives its training
// time over every part, from its summary; a new run's gives its own.
func TestSweepResumedTime(t *testing.T) {
	dir := t.TempDir()
	runs := []cli.SweepRun{{Dir: filepath.Join(dir, "new")}, {Dir: filepath.Join(dir, "resumed")}}
	if err := os.MkdirAll(runs[1].Dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runs[1].Dir, protocol.RunFile), []byte("{}"), 0o666); err != nil {
		t.Fatal(err)
	}
	run := func(args []string, logPath string, threads int, sigs <-chan os.Signal) error {
		d := strings.TrimSuffix(logPath, ".log")
		if err := os.MkdirAll(d, 0o777); err != nil {
			return err
		}
		return protocol.WriteJSON(filepath.Join(d, protocol.SummaryFile), summary{ElapsedSeconds: 4321})
	}
	var stderr bytes.Buffer
	if err := execute(runs, 1, 0, run, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var lines int
	for _, line := range strings.Split(stderr.String(), "\n") {
		if !strings.Contains(line, "] finished ") {
			continue
		}
		lines++
		got := strings.Contains(line, "(resumed; 4321s of training in all)")
		if want := strings.Contains(line, runs[1].Dir); got != want {
			t.Errorf("progress line %q: total training time given %v, want %v", line, got, want)
		}
	}
	if lines != 2 {
		t.Errorf("%d progress lines, want 2:\n%s", lines, stderr.String())
	}
}

// TestSweepDryRunProgress: the dry run tells each run's state, and how far
// a run that has trained has come.
func TestSweepDryRunProgress(t *testing.T) {
	data := tinyCorpus(t)
	out := filepath.Join(t.TempDir(), "sweep")
	dry := func() []string {
		t.Helper()
		o, e, code := runCmd("sweep", "--data", data, "--models", "lstm-256", "--runs", "2", "--out", out, "--dry-run")
		if code != 0 {
			t.Fatalf("sweep: %s", e)
		}
		return strings.Split(strings.TrimSpace(o), "\n")
	}
	lines := dry()
	if len(lines) != 2 || !strings.HasSuffix(lines[0], " (new)") || !strings.HasSuffix(lines[1], " (new)") {
		t.Fatalf("dry run of a new sweep:\n%s", strings.Join(lines, "\n"))
	}
	dir := lines[0][strings.Index(lines[0], "→ ")+len("→ ") : strings.LastIndex(lines[0], " (")]
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	// The log as ptb's train writes it: the records do not mark the
	// missing lower bound, and hold the cross-entropy as their
	// difference from a bound of 0.
	log := `{"epoch":1,"valid_cross_entropy":5,"lower_bound":0,"valid_cross_entropy_diff":5,"epoch_seconds":1800}
{"epoch":2,"valid_cross_entropy":4.8283137373023015,"lower_bound":0,"valid_cross_entropy_diff":4.8283137373023015,"epoch_seconds":1795.2}
`
	if err := os.WriteFile(filepath.Join(dir, protocol.LogFile), []byte(log), 0o666); err != nil {
		t.Fatal(err)
	}
	lines = dry()
	if want := " (resume: 2 epochs, best validation perplexity 125 at epoch 2, last epoch 1795 s)"; !strings.HasSuffix(lines[0], want) {
		t.Errorf("dry run of a run under way: %q, want the suffix %q", lines[0], want)
	}
	if !strings.HasSuffix(lines[1], " (new)") {
		t.Errorf("dry run of a new run: %q", lines[1])
	}
}

// TestSweepSlurmHint checks that the command printed to submit the Slurm
// script quotes its path for the shell.
func TestSweepSlurmHint(t *testing.T) {
	data := tinyCorpus(t)
	for _, name := range []string{"job.sh", "my job.sh", "$HOME.sh", "it's.sh"} {
		dir := t.TempDir()
		script := filepath.Join(dir, name)
		_, e, code := runCmd("sweep", "--data", data, "--out", filepath.Join(dir, "out"), "--runs", "1", "--slurm", script)
		if code != 0 {
			t.Fatalf("%s: %s", name, e)
		}
		if want := "submit from a login node with: bash " + cli.ShellQuote(script) + "\n"; !strings.Contains(e, want) {
			t.Errorf("%s: stderr lacks %q:\n%s", name, want, e)
		}
	}
}

// TestHelpDecayDefault checks that help train shows --decay's default as
// 2/3, not as 0.6666666666666666.
func TestHelpDecayDefault(t *testing.T) {
	o, _, _ := runCmd("help", "train")
	if !strings.Contains(o, "(default 2/3 ≈ 0.667)") || strings.Contains(o, "0.6666") {
		t.Errorf("help train does not show --decay's default as 2/3 ≈ 0.667:\n%s", o)
	}
}

// --boundary next-chunk reaches every run of a sweep and its sweep.json;
// the default leaves both as they were before the choice existed.
func TestSweepBoundary(t *testing.T) {
	base := sweepSettings{Data: "d", Models: []string{"jm-hidden-247"}, Runs: 2, Seed: 1, Epochs: 2, Batch: 32, BPTT: 35}
	for _, b := range []string{"", "next-chunk"} {
		s := base
		s.Boundary = b
		runs, err := plan(s, "out")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			joined := strings.Join(r.Args, " ")
			if got := strings.Contains(joined, "--boundary next-chunk"); got != (b != "") {
				t.Errorf("boundary %q: run args %s", b, joined)
			}
		}
		js, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(js), `"boundary"`); got != (b != "") {
			t.Errorf("boundary %q: sweep.json %s", b, js)
		}
	}
}

// --improvement reaches every run of a sweep (cross-entropy named
// explicitly, so that a sweep made before the choice keeps it in its new
// runs) and sweep.json; a sweep.json without it keeps cross-entropy
// unless the flag is given.
func TestSweepImprovement(t *testing.T) {
	base := sweepSettings{Data: "d", Models: []string{"rns-1-2"}, Runs: 2, Seed: 1, Epochs: 2, Batch: 32, BPTT: 35}
	for _, tc := range []struct{ setting, arg string }{{"", "--improvement cross-entropy"}, {"perplexity", "--improvement perplexity"}} {
		s := base
		s.Improvement = tc.setting
		runs, err := plan(s, "out")
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range runs {
			if joined := strings.Join(r.Args, " "); !strings.Contains(joined, tc.arg) {
				t.Errorf("improvement %q: run args %s lack %s", tc.setting, joined, tc.arg)
			}
		}
		js, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(js), `"improvement"`); got != (tc.setting != "") {
			t.Errorf("improvement %q: sweep.json %s", tc.setting, js)
		}
	}
	data := tinyCorpus(t)
	dir := t.TempDir()
	legacy := filepath.Join(dir, "legacy")
	if err := os.MkdirAll(legacy, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(legacy, "sweep.json"), []byte(`{"data":"x","models":["lstm-256"],"runs":5,"seed":1,"epochs":100,"batch":32,"bptt":35}`), 0o666); err != nil {
		t.Fatal(err)
	}
	if !sweepLacks(legacy, "improvement") || sweepLacks(filepath.Join(dir, "none"), "improvement") {
		t.Error("sweepLacks: wrong for a sweep.json without the key or for no sweep.json")
	}
	if _, e, code := runCmd("sweep", "--data", data, "--models", "lstm-256", "--runs", "5", "--out", filepath.Join(dir, "new"), "--improvement", "loss", "--dry-run"); code == 0 || !strings.Contains(e, "--improvement") {
		t.Errorf("--improvement loss: code %d, %s", code, e)
	}
}

// TestSweepLocked: a sweep is refused, and writes nothing, while another
// one runs in its directory (holds its lock), with the same settings or
// others; once that one ends it goes ahead.
func TestSweepLocked(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep")
	s := sweepSettings{Data: "d", Models: []string{"lstm-256"}, Runs: 1, Seed: 3, Epochs: 1, Batch: 3, BPTT: 5, Hidden: 4, LRRange: [2]float64{lrMin, lrMax}}
	first, err := prepareSweep(out, s)
	if err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(out, "sweep.json"))
	other := s
	other.Epochs = 2
	for _, ss := range []sweepSettings{s, other} {
		if lock, err := prepareSweep(out, ss); err == nil {
			lock.Release()
			t.Errorf("epochs %d: a second sweep beside the first", ss.Epochs)
		} else if ss.Epochs == s.Epochs && !strings.Contains(err.Error(), "another sweep runs in it") {
			t.Errorf("the same settings beside the first: %v", err)
		}
	}
	if after, _ := os.ReadFile(filepath.Join(out, "sweep.json")); !bytes.Equal(before, after) {
		t.Error("a refused sweep changed sweep.json")
	}
	first.Release()
	lock, err := prepareSweep(out, s)
	if err != nil {
		t.Fatalf("after the first ended: %v", err)
	}
	lock.Release()
}
