package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

// tinyTrainArgs are the flags of a small, fast training run into out.
func tinyTrainArgs(out string, extra ...string) []string {
	args := []string{"train", "--task", "marked-reversal", "--model", "rns", "--hidden", "8",
		"--lr", "0.01", "--train-size", "40", "--valid-size", "20", "--batch-size", "5",
		"--lengths", "5:9", "--epochs", "3", "--seed", "4", "--quiet", "--out", out}
	return append(args, extra...)
}

// dirContents maps each file under dir to its content.
func dirContents(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return out
}

func TestTrainCommandFlagErrors(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	base := func(drop string, extra ...string) []string {
		full := tinyTrainArgs(out, extra...)
		var args []string
		for i := 0; i < len(full); i++ {
			if full[i] == drop {
				i++ // skip its value
				continue
			}
			args = append(args, full[i])
		}
		return args
	}
	for _, test := range []struct {
		name string
		args []string
		want string
	}{
		{"missing --lr", base("--lr"), "--lr is required"},
		{"zero --lr", base("", "--lr", "0"), "--lr"},
		{"negative --lr", base("", "--lr", "-0.1"), "--lr"},
		{"missing --out", base("--out"), "--out is required"},
		{"missing --task", base("--task"), "--task is required, or --grammar-file, or --train and --valid"},
		{"--resume without --out", append(base("--out"), "--resume"), "--resume needs --out"},
		{"unknown --task", base("", "--task", "palindromes"), "--task"},
		{"missing --model", base("--model"), "--model is required"},
		{"unknown --model", base("", "--model", "gru"), `--model "gru"`},
		{"bad --lengths", base("", "--lengths", "40-80"), "--lengths"},
		{"reversed --lengths", base("", "--lengths", "9:5"), "--lengths"},
		{"--states on lstm", base("", "--model", "lstm", "--states", "2"), "--states"},
		{"--window on lstm", base("", "--model", "lstm", "--window", "3"), "--window"},
		{"--bottom", base("", "--bottom", "sideways"), "--bottom"},
		{"--epochs", base("", "--epochs", "0"), "--epochs"},
		{"--train-size", base("", "--train-size", "0"), "--train-size"},
		{"--valid-size", base("", "--valid-size", "-3"), "--valid-size"},
		{"--batch-size", base("", "--batch-size", "0"), "--batch-size"},
		{"huge --train-size", base("", "--train-size", "100000000000"), "--train-size 100000000000"},
		{"huge --valid-size", base("", "--valid-size", "100000000000"), "--valid-size 100000000000"},
		{"huge sizes together", base("", "--train-size", "4000000", "--valid-size", "4000000", "--lengths", "40:80"), "--train-size 4000000 and --valid-size 4000000"},
		{"--patience", base("", "--patience", "0"), "--patience"},
		{"--decay", base("", "--decay", "1.5"), "--decay"},
		{"NaN --decay", base("", "--decay", "NaN"), "--decay"},
		{"NaN --lr", base("", "--lr", "NaN"), "--lr"},
		{"infinite --lr", base("", "--lr", "+Inf"), "--lr"},
		{"zero --clip", base("", "--clip", "0"), "--clip"},
		{"negative --clip", base("", "--clip", "-5"), "--clip"},
		{"zero --workers", base("", "--workers", "0"), "--workers"},
		{"NaN --clip", base("", "--clip", "NaN"), "--clip"},
		{"infinite --clip", base("", "--clip", "Inf"), "--clip"},
		{"unknown flag", base("", "--learning-rate", "0.1"), "--learning-rate"},
		{"bad number", base("", "--epochs", "many"), "--epochs"},
		{"extra argument", base("", "extra"), "unexpected arguments"},
	} {
		t.Run(test.name, func(t *testing.T) {
			status, stdout, stderr := run(test.args...)
			if status == 0 {
				t.Fatalf("status 0; stderr:\n%s", stderr)
			}
			if !strings.Contains(stderr, test.want) {
				t.Errorf("stderr does not contain %q:\n%s", test.want, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout %q, want nothing", stdout)
			}
			if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("--out was created (%v)", err)
			}
		})
	}
}

// TestTrainCommandRefusesNonEmptyOut checks that an existing non-empty
// output directory is an error without --resume, and is left untouched.
func TestTrainCommandRefusesNonEmptyOut(t *testing.T) {
	out := t.TempDir()
	keep := filepath.Join(out, "notes.txt")
	if err := os.WriteFile(keep, []byte("precious\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := dirContents(t, out)
	status, _, stderr := run(tinyTrainArgs(out)...)
	if status == 0 || !strings.Contains(stderr, "--out") || !strings.Contains(stderr, "--resume") || !strings.Contains(stderr, out) {
		t.Errorf("status %d, stderr %q; want an error naming --out, the directory and --resume", status, stderr)
	}
	if after := dirContents(t, out); !reflect.DeepEqual(before, after) {
		t.Errorf("directory changed: %v → %v", before, after)
	}

	// --resume does not adopt a directory that holds no run.
	status, _, stderr = run(tinyTrainArgs(out, "--resume")...)
	if status == 0 || !strings.Contains(stderr, "--resume") || !strings.Contains(stderr, protocol.RunFile) {
		t.Errorf("--resume of a directory without a run: status %d, stderr %q", status, stderr)
	}
	if after := dirContents(t, out); !reflect.DeepEqual(before, after) {
		t.Errorf("directory changed: %v → %v", before, after)
	}

	// An existing empty directory is fine.
	empty := t.TempDir()
	if status, _, stderr := run(tinyTrainArgs(empty, "--epochs", "1")...); status != 0 {
		t.Fatalf("empty --out: status %d: %s", status, stderr)
	}
}

// readJSONKeys decodes a JSON object file and returns it.
func readJSONObject(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return m
}

// readLogFile reads a training log, one strict JSON record per line.
func readLogFile(t *testing.T, path string) []nsrnn.EpochRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []nsrnn.EpochRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var r nsrnn.EpochRecord
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("%s:%d: %v", path, len(recs)+1, err)
		}
		recs = append(recs, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return recs
}

func noTiming(h []nsrnn.EpochRecord) []nsrnn.EpochRecord {
	out := append([]nsrnn.EpochRecord(nil), h...)
	for i := range out {
		out[i].ElapsedSeconds, out[i].EpochSeconds = 0, 0
	}
	return out
}

// TestTrainCommandFiles runs a full tiny training and checks the files of
// the run directory.
func TestTrainCommandFiles(t *testing.T) {
	out := filepath.Join(t.TempDir(), "runs", "rns")
	status, stdout, stderr := run(tinyTrainArgs(out)...)
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	if stdout != "" {
		t.Errorf("stdout %q, want nothing", stdout)
	}
	if !strings.Contains(stderr, out) {
		t.Errorf("stderr does not say where the files are:\n%s", stderr)
	}
	var names []string
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if want := []string{protocol.CheckpointFile, protocol.LogFile, protocol.ModelFile, protocol.RunFile, protocol.SummaryFile}; !reflect.DeepEqual(names, want) {
		t.Errorf("run directory holds %v, want %v", names, want)
	}

	sum := readJSONObject(t, filepath.Join(out, protocol.SummaryFile))
	for _, k := range []string{"task", "model", "parameters", "epochs", "best_epoch", "best_valid_cross_entropy",
		"valid_lower_bound", "best_valid_cross_entropy_diff", "elapsed_seconds", "seconds_per_epoch"} {
		if _, ok := sum[k]; !ok {
			t.Errorf("summary.json lacks %q: %v", k, sum)
		}
	}
	recs := readLogFile(t, filepath.Join(out, protocol.LogFile))
	if len(recs) != 3 || sum["epochs"] != 3.0 {
		t.Fatalf("%d log records, %v epochs in the summary; want 3", len(recs), sum["epochs"])
	}
	best := recs[0]
	for i, r := range recs {
		if r.Epoch != i+1 {
			t.Errorf("log record %d is of epoch %d", i+1, r.Epoch)
		}
		if r.ValidCrossEntropy < best.ValidCrossEntropy {
			best = r
		}
	}
	ce, lb := sum["best_valid_cross_entropy"].(float64), sum["valid_lower_bound"].(float64)
	if ce != best.ValidCrossEntropy || sum["best_epoch"] != float64(best.Epoch) {
		t.Errorf("summary: best epoch %v, %v; log: epoch %d, %v", sum["best_epoch"], ce, best.Epoch, best.ValidCrossEntropy)
	}
	if lb != best.LowerBound || !(lb > 0) || math.Abs(sum["best_valid_cross_entropy_diff"].(float64)-(ce-lb)) > 1e-12 {
		t.Errorf("summary: lower bound %v, difference %v, cross-entropy %v", lb, sum["best_valid_cross_entropy_diff"], ce)
	}

	m, err := nsrnn.Load(filepath.Join(out, protocol.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	cfg := m.Config()
	if cfg.Kind != nsrnn.RNS || cfg.Hidden != 8 || cfg.States != 2 || cfg.Symbols != 3 || cfg.InputVocab != 3 || cfg.OutputVocab != 4 {
		t.Errorf("saved model's configuration %+v", cfg)
	}
	if n, _ := nsrnn.CountParams(cfg); sum["parameters"] != float64(n) || n != m.NumParams() {
		t.Errorf("summary says %v parameters, the model has %d", sum["parameters"], n)
	}
	// Every file is created with mode 0666 less the umask.
	for _, n := range names {
		fi, err := os.Stat(filepath.Join(out, n))
		if err != nil {
			t.Fatal(err)
		}
		if want := 0o666 &^ testUmask(t); fi.Mode().Perm() != want {
			t.Errorf("%s has mode %v, want %v", n, fi.Mode().Perm(), want)
		}
	}
	// One line per epoch, with units, although stderr is no terminal and
	// --quiet is given.
	lines := regexp.MustCompile(`(?m)^rns epoch \d+ of at most 3: cross-entropy in nats per symbol: train [0-9.]+, validation [0-9.]+, [-+][0-9.]+ from the lower bound; lr [0-9.e-]+; \d+s elapsed(; best so far)?$`).FindAllString(stderr, -1)
	if len(lines) != 3 {
		t.Errorf("%d epoch lines, want 3:\n%s", len(lines), stderr)
	}

	rs := readJSONObject(t, filepath.Join(out, protocol.RunFile))
	for k, want := range map[string]any{"task": "marked-reversal", "lr": 0.01, "seed": 4.0, "epochs": 3.0,
		"train_size": 40.0, "valid_size": 20.0, "batch_size": 5.0, "min_length": 5.0, "max_length": 9.0,
		"clip": 5.0, "patience": 5.0, "early_stop": 10.0, "decay": 0.9} {
		if rs[k] != want {
			t.Errorf("run.json %s = %v, want %v", k, rs[k], want)
		}
	}

	// Resuming a finished run changes neither the model nor the results.
	model, _ := os.ReadFile(filepath.Join(out, protocol.ModelFile))
	if status, _, stderr := run(tinyTrainArgs(out, "--resume")...); status != 0 {
		t.Fatalf("--resume of a finished run: status %d: %s", status, stderr)
	}
	model2, _ := os.ReadFile(filepath.Join(out, protocol.ModelFile))
	sum2 := readJSONObject(t, filepath.Join(out, protocol.SummaryFile))
	if !bytes.Equal(model, model2) || sum2["best_valid_cross_entropy"] != ce || len(readLogFile(t, filepath.Join(out, protocol.LogFile))) != 3 {
		t.Error("resuming a finished run changed its results")
	}
}

// TestTrainCommandResumeDifferentFlags checks that --resume with flags other
// than the run's is an error naming what differs, and changes nothing.
func TestTrainCommandResumeDifferentFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	if status, _, stderr := run(tinyTrainArgs(out, "--epochs", "1")...); status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	before := dirContents(t, out)
	for _, test := range []struct {
		args []string
		want string
	}{
		{[]string{"--lr", "0.02"}, "lr"},
		{[]string{"--seed", "5"}, "seed"},
		{[]string{"--model", "ns"}, "model"},
		{[]string{"--hidden", "9"}, "model"},
		{[]string{"--train-size", "41"}, "train_size"},
	} {
		args := append(tinyTrainArgs(out, "--epochs", "1", "--resume"), test.args...)
		status, _, stderr := run(args...)
		if status == 0 {
			t.Errorf("%v: status 0", test.args)
			continue
		}
		if !strings.Contains(stderr, "--resume") || !strings.Contains(stderr, test.want) || !strings.Contains(stderr, out) {
			t.Errorf("%v: stderr %q; want an error naming --resume, %s and the directory", test.args, stderr, test.want)
		}
	}
	if after := dirContents(t, out); !reflect.DeepEqual(before, after) {
		t.Error("the run directory changed")
	}
}

// cflChildEnv marks a re-executed test binary that runs the cfl program.
const cflChildEnv = "NSRNN_CFL_TEST_CHILD"

// TestCFLChild is not a test: re-executed with cflChildEnv set, the test
// binary runs the cfl program with the arguments after "--".
func TestCFLChild(t *testing.T) {
	if os.Getenv(cflChildEnv) != "1" {
		t.Skip("helper process for TestTrainCommandResumeAfterKill")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	if g := os.Getenv("NSRNN_TEST_STOP_GRACE"); g != "" {
		d, err := time.ParseDuration(g)
		if err != nil {
			t.Fatal(err)
		}
		cli.StopGrace = d
	}
	os.Exit(prog.Main(args, os.Stdout, os.Stderr))
}

// TestTrainCommandResumeAfterKill starts a training run in a child process,
// kills it with SIGKILL once the first checkpoint is written, resumes it
// with --resume, and checks that it ends exactly where an uninterrupted run
// with the same flags ends: the same best validation cross-entropy, the
// same log (apart from timing) and byte-identical model files.
func TestTrainCommandResumeAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	killed, whole := filepath.Join(dir, "killed"), filepath.Join(dir, "whole")
	// About 0.1–0.3 s per epoch on 2 cores: time to kill it mid-run.
	args := func(out string) []string {
		return []string{"train", "--task", "marked-reversal", "--model", "rns", "--hidden", "8",
			"--lr", "0.01", "--train-size", "60", "--valid-size", "20", "--batch-size", "5",
			"--lengths", "9:15", "--epochs", "6", "--seed", "2", "--quiet", "--out", out}
	}

	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestCFLChild$", "--"}, args(killed)...)...)
	cmd.Env = append(os.Environ(), cflChildEnv+"=1")
	var childErr bytes.Buffer
	cmd.Stderr = &childErr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	ckpt := filepath.Join(killed, protocol.CheckpointFile)
	deadline := time.After(60 * time.Second)
wait:
	for {
		select {
		case err := <-exited:
			t.Fatalf("the child exited (%v) before it could be killed:\n%s", err, childErr.String())
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("no checkpoint after 60 s:\n%s", childErr.String())
		case <-time.After(5 * time.Millisecond):
			if _, err := os.Stat(ckpt); err == nil {
				break wait
			}
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("the child was not killed: %v\n%s", err, childErr.String())
	}
	if _, err := os.Stat(filepath.Join(killed, protocol.SummaryFile)); err == nil {
		t.Fatal("the child had finished before it was killed; the test needs longer epochs")
	}
	// The kill may fall between the checkpoint and the log written after
	// it; the resumed run rewrites the log from the checkpoint.
	done := 0
	if _, err := os.Stat(filepath.Join(killed, protocol.LogFile)); err == nil {
		done = len(readLogFile(t, filepath.Join(killed, protocol.LogFile)))
	}
	t.Logf("killed with %d of 6 epochs in the log", done)

	if status, _, stderr := run(append(args(killed), "--resume")...); status != 0 {
		t.Fatalf("--resume: status %d: %s", status, stderr)
	}
	if status, _, stderr := run(args(whole)...); status != 0 {
		t.Fatalf("uninterrupted run: status %d: %s", status, stderr)
	}

	sk := readJSONObject(t, filepath.Join(killed, protocol.SummaryFile))
	sw := readJSONObject(t, filepath.Join(whole, protocol.SummaryFile))
	for _, k := range []string{"best_valid_cross_entropy", "best_epoch", "epochs", "valid_lower_bound", "best_valid_cross_entropy_diff", "parameters"} {
		if sk[k] != sw[k] {
			t.Errorf("summary %s: %v resumed, %v uninterrupted", k, sk[k], sw[k])
		}
	}
	mk, err := os.ReadFile(filepath.Join(killed, protocol.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	mw, err := os.ReadFile(filepath.Join(whole, protocol.ModelFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(mk, mw) {
		t.Error("the resumed run's model file differs from the uninterrupted run's")
	}
	lk, lw := readLogFile(t, filepath.Join(killed, protocol.LogFile)), readLogFile(t, filepath.Join(whole, protocol.LogFile))
	if !reflect.DeepEqual(noTiming(lk), noTiming(lw)) {
		t.Errorf("logs differ:\nresumed       %+v\nuninterrupted %+v", lk, lw)
	}
	// No temporary files of the atomic writes are left behind... except
	// possibly one the kill interrupted, which must not be a run file.
	entries, _ := os.ReadDir(killed)
	for _, e := range entries {
		switch e.Name() {
		case protocol.CheckpointFile, protocol.LogFile, protocol.ModelFile, protocol.RunFile, protocol.SummaryFile:
		default:
			if !strings.HasPrefix(e.Name(), ".") {
				t.Errorf("unexpected file %s in the run directory", e.Name())
			}
		}
	}
}

// testUmask is the process's umask, found by creating a file.
func testUmask(t *testing.T) os.FileMode {
	t.Helper()
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, nil, 0o777); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return 0o777 &^ fi.Mode().Perm()
}

// TestTrainCommandDiverges checks that a run whose loss diverges stops
// with an error naming the epoch and the batch (step), and that a new run
// that fails before its first epoch leaves nothing behind: the same --out
// works with fixed flags.
func TestTrainCommandDiverges(t *testing.T) {
	parent := t.TempDir()
	out := filepath.Join(parent, "run")
	status, _, stderr := run(tinyTrainArgs(out, "--lr", "1e308")...)
	if status == 0 {
		t.Fatalf("status 0 with --lr 1e308:\n%s", stderr)
	}
	if !regexp.MustCompile(`epoch 1 step \d+ of 8: the loss is (NaN|[-+]Inf)`).MatchString(stderr) || !strings.Contains(stderr, "in 8 steps (one batch each) per epoch") {
		t.Errorf("stderr does not name the epoch and batch of the divergence:\n%s", stderr)
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the failed run left %s behind (%v): %v", out, err, dirContents(t, out))
	}
	// An existing empty directory is left empty.
	if err := os.Mkdir(out, 0o777); err != nil {
		t.Fatal(err)
	}
	if status, _, _ := run(tinyTrainArgs(out, "--lr", "1e308")...); status == 0 {
		t.Fatal("status 0")
	}
	if entries, err := os.ReadDir(out); err != nil || len(entries) != 0 {
		t.Errorf("the failed run left %v in the existing directory (%v)", entries, err)
	}
	if status, _, stderr := run(tinyTrainArgs(out, "--epochs", "1")...); status != 0 {
		t.Errorf("the same --out with a sound --lr: status %d: %s", status, stderr)
	}
}

// TestTrainCommandReadOnlyOut checks that an --out that cannot be written
// is refused before training, naming the flag.
func TestTrainCommandReadOnlyOut(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	if status, _, stderr := run(tinyTrainArgs(out, "--epochs", "1")...); status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	os.Remove(filepath.Join(out, protocol.SummaryFile))
	if err := os.Chmod(out, 0o555); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(out, 0o755)
	if protocol.CheckWritable(out) == nil {
		t.Skip("a read-only directory is writable all the same (running as root?)")
	}
	start := time.Now()
	status, _, stderr := run(tinyTrainArgs(out, "--epochs", "1", "--resume")...)
	if status == 0 || !strings.Contains(stderr, "--out") || !strings.Contains(stderr, "not writable") || strings.Contains(stderr, "epoch 2") {
		t.Errorf("read-only --out: status %d after %v, stderr %q", status, time.Since(start), stderr)
	}
}

// TestTrainCommandInterrupt interrupts a training run in a child process
// with SIGINT once its first checkpoint is written: it stops, exits with
// status 130 and says how to resume; the command it prints resumes the
// run, which says from which epoch it continues and ends where an
// uninterrupted run ends.
func TestTrainCommandInterrupt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := t.TempDir()
	out, whole := filepath.Join(dir, "run"), filepath.Join(dir, "whole")
	args := func(out string) []string {
		return []string{"train", "--task", "marked-reversal", "--model", "rns", "--hidden", "8",
			"--lr", "0.01", "--train-size", "60", "--valid-size", "20", "--batch-size", "5",
			"--lengths", "9:15", "--epochs", "6", "--seed", "2", "--quiet", "--out", out}
	}
	cmd := exec.Command(os.Args[0], append([]string{"-test.run=^TestCFLChild$", "--"}, args(out)...)...)
	cmd.Env = append(os.Environ(), cflChildEnv+"=1")
	var childErr bytes.Buffer
	cmd.Stderr = &childErr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(60 * time.Second)
wait:
	for {
		select {
		case err := <-exited:
			t.Fatalf("the child exited (%v) before it could be interrupted:\n%s", err, childErr.String())
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("no checkpoint after 60 s:\n%s", childErr.String())
		case <-time.After(5 * time.Millisecond):
			if _, err := os.Stat(filepath.Join(out, protocol.CheckpointFile)); err == nil {
				break wait
			}
		}
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := <-exited
	stderr := childErr.String()
	if _, statErr := os.Stat(filepath.Join(out, protocol.SummaryFile)); statErr == nil {
		t.Skipf("the child finished before the interrupt reached it:\n%s", stderr)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("the child ended with %v, want exit status 130:\n%s", err, stderr)
	}
	_, resume, ok := strings.Cut(stderr, "interrupted; resume with: ")
	if !ok {
		t.Fatalf("stderr does not say how to resume:\n%s", stderr)
	}
	resume, _, _ = strings.Cut(resume, "\n")
	words := strings.Fields(resume)
	i := slices.Index(words, "train")
	if i < 0 || !slices.Equal(words[i:], append(args(out), "--resume")) {
		t.Fatalf("resume command %q, want … %s --resume", resume, strings.Join(args(out), " "))
	}
	done := len(readLogFile(t, filepath.Join(out, protocol.LogFile)))
	status, _, stderr := run(words[i:]...)
	if status != 0 {
		t.Fatalf("resuming: status %d: %s", status, stderr)
	}
	if want := "rns: resuming at epoch " + strconv.Itoa(done+1) + " of at most 6"; !strings.Contains(stderr, want) {
		t.Errorf("the resumed run does not say %q:\n%s", want, stderr)
	}
	if status, _, stderr := run(args(whole)...); status != 0 {
		t.Fatalf("uninterrupted run: status %d: %s", status, stderr)
	}
	a, _ := os.ReadFile(filepath.Join(out, protocol.ModelFile))
	b, _ := os.ReadFile(filepath.Join(whole, protocol.ModelFile))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("the resumed run's model differs from the uninterrupted run's")
	}
}

// TestTrainCommandLockAndTemps: a run directory held by another process
// (here another lock on it) is refused naming the directory and the
// holder, and changes nothing; resuming removes the temporary files that a
// kill −9 during a checkpoint or model write leaves.
func TestTrainCommandLockAndTemps(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	if status, _, stderr := run(tinyTrainArgs(out, "--epochs", "1")...); status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	lock, err := protocol.LockDir(out)
	if err != nil {
		t.Fatal(err)
	}
	before := dirContents(t, out)
	status, _, stderr := run(tinyTrainArgs(out, "--epochs", "1", "--resume")...)
	if status == 0 || !strings.Contains(stderr, out) || !strings.Contains(stderr, fmt.Sprintf("process %d", os.Getpid())) || !strings.Contains(stderr, "--out") {
		t.Errorf("resuming a locked run: status %d, stderr %q; want an error naming --out, %s and the process holding it", status, stderr, out)
	}
	if after := dirContents(t, out); !reflect.DeepEqual(before, after) {
		t.Error("the refused run changed the directory")
	}
	lock.Release()
	stale := []string{".checkpoint.tmp0123456789abcdef", ".model.tmpfedcba9876543210"}
	for _, n := range stale {
		if err := os.WriteFile(filepath.Join(out, n), []byte("partial"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if status, _, stderr := run(tinyTrainArgs(out, "--epochs", "1", "--resume")...); status != 0 || !strings.Contains(stderr, "temporary files") {
		t.Fatalf("resume: status %d: %s", status, stderr)
	}
	for _, n := range stale {
		if _, err := os.Stat(filepath.Join(out, n)); err == nil {
			t.Errorf("%s left after a resume", n)
		}
	}
}

// TestTrainCommandResumeWithoutCheckpoint: --resume of a run that has its
// run.json and log but neither a checkpoint nor a summary (a process
// killed before its first checkpoint) is refused with an error naming the
// directory and the missing checkpoint, and nothing in the directory is
// written; an absent --out with --resume starts a new run.
func TestTrainCommandResumeWithoutCheckpoint(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	if status, _, stderr := run(tinyTrainArgs(out, "--epochs", "1")...); status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	for _, f := range []string{protocol.CheckpointFile, protocol.SummaryFile, protocol.ModelFile} {
		if err := os.Remove(filepath.Join(out, f)); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
	}
	before := dirContents(t, out)
	if len(before) != 2 {
		t.Fatalf("files %v, want run.json and log.jsonl", before)
	}
	status, _, stderr := run(tinyTrainArgs(out, "--epochs", "1", "--resume")...)
	if status == 0 {
		t.Fatal("--resume of a run without its checkpoint: no error")
	}
	for _, want := range []string{"--resume", out, protocol.CheckpointFile, "remove " + out, "drop --resume"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q does not say %q", stderr, want)
		}
	}
	if after := dirContents(t, out); !maps.Equal(before, after) {
		t.Errorf("the refused resume changed the directory: %v, was %v", after, before)
	}

	// An absent --out with --resume starts the run.
	fresh := filepath.Join(dir, "fresh")
	if status, _, stderr := run(tinyTrainArgs(fresh, "--epochs", "1", "--resume")...); status != 0 {
		t.Fatalf("--resume with an absent --out: status %d: %s", status, stderr)
	}
	if _, err := os.Stat(filepath.Join(fresh, protocol.SummaryFile)); err != nil {
		t.Errorf("--resume with an absent --out: %v", err)
	}
}

// --resume with no flag but --out takes every setting from the run's
// run.json, for every kind of data (a task of the table, with its
// parameters and definition; a grammar file; the user's strings) and of
// model (stack flags of every type): the settings agree, so the finished
// run is found as it is; a flag given against the run's is still refused,
// and a data flag keeps the run's data from being taken.
func TestTrainResumeFromRunJSON(t *testing.T) {
	dir := t.TempDir()
	grammar := writeText(t, dir, "g.pcfg", "S -> a S b [0.4]\nS -> [0.6]\n")
	train := writeText(t, dir, "train.txt", "a b b a\nb a a b\na a\nb b\n")
	valid := writeText(t, dir, "valid.txt", "a b\nb a a b\n")
	tiny := []string{"--hidden", "4", "--lr", "0.01", "--epochs", "1", "--seed", "3", "--batch-size", "5", "--quiet"}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"task", []string{"--task", "marked-reversal", "--model", "rns", "--train-size", "20", "--valid-size", "10", "--lengths", "5:9"}},
		{"task parameters", []string{"--task", "dyck", "--bracket-types", "3", "--grammar", "released", "--model", "vrns", "--stack-embedding", "3", "--bottom", "fixed", "--train-size", "20", "--valid-size", "10", "--lengths", "4:8"}},
		{"jm", []string{"--task", "count-3", "--model", "jm", "--push-hidden-state", "--depth-limit", "4", "--train-size", "20", "--valid-size", "10", "--lengths", "3:9", "--clip", "2", "--patience", "3", "--decay", "0.5", "--early-stop", "4"}},
		{"grammar file", []string{"--grammar-file", grammar, "--model", "ns+s", "--states", "1", "--symbols", "2", "--train-size", "20", "--valid-size", "10", "--lengths", "2:8"}},
		{"own strings", []string{"--train", train, "--valid", valid, "--model", "lstm", "--layers", "2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			if status, _, stderr := run(append(append([]string{"train", "--out", out}, tiny...), c.args...)...); status != 0 {
				t.Fatalf("train: status %d: %s", status, stderr)
			}
			before := dirContents(t, out)
			if status, _, stderr := run("train", "--out", out, "--resume", "--quiet"); status != 0 {
				t.Fatalf("resume with --out alone: status %d: %s", status, stderr)
			}
			if status, _, stderr := run("train", "--out", out, "--resume", "--seed", "9"); status == 0 || !strings.Contains(stderr, "seed") {
				t.Errorf("resume with another --seed: status %d: %s", status, stderr)
			}
			if after := dirContents(t, out); !reflect.DeepEqual(after, before) {
				t.Error("the resumes changed the finished run")
			}
		})
	}
	// A data flag given: the run's data is not taken, so the task's
	// defaults stand against the run's settings, which are refused.
	out := filepath.Join(dir, "task")
	if status, _, stderr := run("train", "--out", out, "--resume", "--task", "dyck"); status == 0 || !strings.Contains(stderr, "differ") {
		t.Errorf("resume with another --task: status %d: %s", status, stderr)
	}
}

// A run.json edited by hand or damaged so that a field cfl train always
// writes positive holds 0 or less, or its model is invalid, is refused on
// --resume as a damaged file naming the field, not as flags that differ
// (takeRunSettings reads a zero as a field an older run.json lacks), and
// the run is left as it was.
func TestTrainResumeDamagedRunJSON(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "run")
	if status, _, stderr := run(tinyTrainArgs(src, "--epochs", "1")...); status != 0 {
		t.Fatalf("train: status %d: %s", status, stderr)
	}
	saved, err := os.ReadFile(filepath.Join(src, protocol.RunFile))
	if err != nil {
		t.Fatal(err)
	}
	type edit struct{ field, to string }
	var edits []edit
	for _, k := range recordedPositive {
		edits = append(edits, edit{k, "0"}, edit{k, "-1"})
	}
	edits = append(edits, edit{"states", "0"}, edit{"hidden", "-3"})
	for _, e := range edits {
		name := e.field + "=" + e.to
		t.Run(name, func(t *testing.T) {
			re := regexp.MustCompile(`("` + e.field + `": )[^,\n]+`)
			if !re.Match(saved) {
				t.Fatalf("run.json has no %q", e.field)
			}
			out := filepath.Join(dir, name)
			if err := os.CopyFS(out, os.DirFS(src)); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(out, protocol.RunFile), re.ReplaceAll(saved, []byte("${1}"+e.to)), 0o644); err != nil {
				t.Fatal(err)
			}
			before := dirContents(t, out)
			status, _, stderr := run("train", "--out", out, "--resume", "--epochs", "2", "--quiet")
			if status == 0 || !strings.Contains(stderr, "is damaged") || !strings.Contains(stderr, e.field) && !strings.Contains(stderr, "model is invalid") || strings.Contains(stderr, "differ") {
				t.Errorf("resume: status %d, want a damaged run.json naming %s: %s", status, e.field, stderr)
			}
			if after := dirContents(t, out); !reflect.DeepEqual(after, before) {
				t.Error("the refused resume changed the run")
			}
		})
	}
}

// TestResumeMoreEpochs: a finished run resumed with a larger --epochs
// goes on, says so, records the new maximum in run.json, and ends on the
// model of a run given that many epochs from the start (as
// nsrnn.TrainConfig.MaxEpochs promises, and as ptb train does); a bare
// resume of the finished run changes nothing.
func TestResumeMoreEpochs(t *testing.T) {
	root := t.TempDir()
	whole, part := filepath.Join(root, "whole"), filepath.Join(root, "part")
	if status, _, stderr := run(tinyTrainArgs(whole, "--epochs", "2")...); status != 0 {
		t.Fatal(stderr)
	}
	if status, _, stderr := run(tinyTrainArgs(part, "--epochs", "1")...); status != 0 {
		t.Fatal(stderr)
	}
	status, _, stderr := run(tinyTrainArgs(part, "--epochs", "2", "--resume")...)
	if status != 0 || !strings.Contains(stderr, "--epochs 2: the run's maximum was 1") {
		t.Fatalf("resume with --epochs 2: status %d: %s", status, stderr)
	}
	s, err := protocol.ReadSettings(part)
	if err != nil || s.Epochs != 2 {
		t.Errorf("run.json after the extension: epochs %d (%v), want 2", s.Epochs, err)
	}
	a, _ := os.ReadFile(filepath.Join(whole, protocol.ModelFile))
	b, _ := os.ReadFile(filepath.Join(part, protocol.ModelFile))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("the extended run ended on another model than a run of two epochs from the start")
	}
	// A bare resume of the finished run changes nothing.
	before := dirContents(t, part)
	if status, _, stderr := run("train", "--out", part, "--resume", "--quiet"); status != 0 || !strings.Contains(stderr, "has finished: nothing to train") {
		t.Fatalf("bare resume of a finished run: status %d: %s", status, stderr)
	}
	if after := dirContents(t, part); !reflect.DeepEqual(before, after) {
		t.Error("a bare resume of a finished run changed it")
	}
}

// A run.json that names no task or an invalid model is refused by the
// commands that read a run (eval, viterbi, generate) as a damaged file
// naming it, not as an unknown task "" or a model that is not the run's.
func TestReadDamagedRunJSON(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "run")
	if status, _, stderr := run(tinyTrainArgs(out, "--epochs", "1")...); status != 0 {
		t.Fatalf("train: status %d: %s", status, stderr)
	}
	in := filepath.Join(dir, "strings.txt")
	if err := os.WriteFile(in, []byte("0 # 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runFile := filepath.Join(out, protocol.RunFile)
	for _, c := range []struct{ name, content, want string }{
		{"empty object", "{}", "names no task"},
		{"no model", `{"task": "marked-reversal"}`, "model is invalid"},
	} {
		if err := os.WriteFile(runFile, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{
			{"eval", "--model", out, "--lengths", "5:5", "--per-length", "1"},
			{"viterbi", "--model", out, "--in", in},
			{"generate", "--model", out, "--count", "1"},
		} {
			status, _, stderr := run(args...)
			if status == 0 || !strings.Contains(stderr, runFile+" is damaged") || !strings.Contains(stderr, c.want) {
				t.Errorf("%s: %s: status %d, want %s is damaged: %s: %s", c.name, args[0], status, runFile, c.want, stderr)
			}
		}
	}
}

// TestTrainCatchesSignalsFirst: cfl train takes over SIGINT and SIGTERM
// before it makes the run's files, so that a signal that comes while they
// are being written stops the run after a batch, with a checkpoint,
// rather than killing the program between a new run's lock and its
// run.json (which left a directory that --resume could not read).
func TestTrainCatchesSignalsFirst(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	var made []string
	defer func(f func(chan<- os.Signal)) { notifySignals = f }(notifySignals)
	notifySignals = func(ch chan<- os.Signal) {
		if entries, err := os.ReadDir(out); err == nil {
			for _, e := range entries {
				made = append(made, e.Name())
			}
		}
		ch <- os.Interrupt // buffered: as if it came at once
	}
	status, _, stderr := run(tinyTrainArgs(out)...)
	if len(made) > 0 {
		t.Errorf("the signals were taken over after the run's files were made: %v", made)
	}
	if status != 130 {
		t.Fatalf("interrupted at once: status %d, want 130: %s", status, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, protocol.CheckpointFile)); err != nil {
		t.Errorf("interrupted at once: no checkpoint: %v", err)
	}
	notifySignals = func(chan<- os.Signal) {}
	if status, _, stderr := run("train", "--out", out, "--resume", "--quiet"); status != 0 {
		t.Errorf("--resume after an interrupt at once: status %d: %s", status, stderr)
	}
}
