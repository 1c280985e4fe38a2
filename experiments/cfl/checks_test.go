package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

// interruptAtCheckpoint runs the cfl program with args in this process and
// interrupts it, as SIGINT does, once the checkpoint in out exists. It
// reports whether the interrupt stopped the run (false when the run
// finished first), failing unless the run stopped with status 130.
func interruptAtCheckpoint(t *testing.T, out string, args ...string) bool {
	t.Helper()
	defer func(f func(chan<- os.Signal)) { notifySignals = f }(notifySignals)
	got := make(chan chan<- os.Signal, 1)
	notifySignals = func(ch chan<- os.Signal) { got <- ch }
	done := make(chan struct{})
	defer close(done)
	go func() {
		var ch chan<- os.Signal
		select {
		case ch = <-got:
		case <-done:
			return
		}
		for {
			select {
			case <-done:
				return
			case <-time.After(2 * time.Millisecond):
				if _, err := os.Stat(filepath.Join(out, protocol.CheckpointFile)); err == nil {
					ch <- os.Interrupt
					return
				}
			}
		}
	}()
	status, _, stderr := run(args...)
	if _, err := os.Stat(filepath.Join(out, protocol.SummaryFile)); err == nil {
		return false
	}
	if status != 130 {
		t.Fatalf("interrupted run: status %d: %s", status, stderr)
	}
	return true
}

// TestTrainWorkersRecorded checks that cfl train records --workers in
// run.json, that --resume keeps the recorded count (a run interrupted with
// one count and resumed without the flag ends bit for bit where an
// uninterrupted run ends), that another count given explicitly is refused
// naming both, and that a run.json from before the count was recorded
// resumes with any count.
func TestTrainWorkersRecorded(t *testing.T) {
	if testing.Short() {
		t.Skip("three training runs")
	}
	dir := t.TempDir()
	args := func(out string, extra ...string) []string {
		a := []string{"train", "--task", "marked-reversal", "--model", "rns", "--hidden", "8",
			"--lr", "0.01", "--train-size", "60", "--valid-size", "20", "--batch-size", "5",
			"--lengths", "9:15", "--epochs", "4", "--seed", "2", "--quiet", "--out", out}
		return append(a, extra...)
	}
	whole, part := filepath.Join(dir, "whole"), filepath.Join(dir, "part")
	if status, _, stderr := run(args(whole, "--workers", "3")...); status != 0 {
		t.Fatalf("uninterrupted run: status %d: %s", status, stderr)
	}
	s, err := protocol.ReadSettings(whole)
	if err != nil {
		t.Fatal(err)
	}
	if s.Workers != 3 {
		t.Errorf("run.json records workers %d, want 3", s.Workers)
	}
	if !interruptAtCheckpoint(t, part, args(part, "--workers", "3")...) {
		t.Skip("the run finished before the interrupt reached it")
	}
	before := dirContents(t, part)
	status, _, stderr := run(args(part, "--workers", "1", "--resume")...)
	if status == 0 || !strings.Contains(stderr, "--workers 1") || !strings.Contains(stderr, "--workers 3") || !strings.Contains(stderr, part) {
		t.Errorf("resuming with another --workers: status %d, stderr %q; want a refusal naming both counts and the run", status, stderr)
	}
	if after := dirContents(t, part); len(after) != len(before) || after[filepath.Join(part, protocol.CheckpointFile)] != before[filepath.Join(part, protocol.CheckpointFile)] {
		t.Error("the refused resume changed the run")
	}
	if status, _, stderr := run(args(part, "--resume")...); status != 0 {
		t.Fatalf("resuming without --workers: status %d: %s", status, stderr)
	}
	a, _ := os.ReadFile(filepath.Join(whole, protocol.ModelFile))
	b, _ := os.ReadFile(filepath.Join(part, protocol.ModelFile))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("the run resumed without --workers differs from the uninterrupted run")
	}

	// A run.json written before the count was recorded: any count. (Its
	// checkpoint, written then, has no workers setting either; the
	// nsrnn tests resume such checkpoints. Here a finished run without
	// its checkpoint trains again; an unfinished one without it could not
	// be resumed.)
	old := filepath.Join(dir, "old")
	if status, _, stderr := run(args(old, "--workers", "1")...); status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	if err := os.Remove(filepath.Join(old, protocol.CheckpointFile)); err != nil {
		t.Fatal(err)
	}
	var raw map[string]any
	runFile := filepath.Join(old, protocol.RunFile)
	b, err = os.ReadFile(runFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	delete(raw, "workers")
	b, _ = json.MarshalIndent(raw, "", "  ")
	if err := os.WriteFile(runFile, b, 0o644); err != nil {
		t.Fatal(err)
	}
	status, _, stderr = run(args(old, "--workers", "2", "--resume")...)
	if status != 0 || !strings.Contains(stderr, "predates the recording of --workers") {
		t.Errorf("resuming a run.json without workers: status %d: %s", status, stderr)
	}
	// A damaged count is refused, naming the file.
	for _, n := range []any{-1, 1 << 40} {
		raw["workers"] = n
		b, _ = json.MarshalIndent(raw, "", "  ")
		if err := os.WriteFile(runFile, b, 0o644); err != nil {
			t.Fatal(err)
		}
		status, _, stderr = run(args(old, "--resume")...)
		if status == 0 || !strings.Contains(stderr, runFile) || !strings.Contains(stderr, "damaged") {
			t.Errorf("resuming a run.json with workers %v: status %d: %s", n, status, stderr)
		}
	}
}

// TestTrainInterruptWithinEpoch interrupts a run before its first batch:
// it stops after that batch (or the few the signal takes to arrive) with a
// checkpoint of it, says so, and exits with status 130; resumed with
// checkpoints every batch (--checkpoint-every 1ns) and no other flag (the
// settings from its run.json), it continues at the next batch and ends bit for bit where an uninterrupted run that
// checkpoints only after every epoch ends.
func TestTrainInterruptWithinEpoch(t *testing.T) {
	if testing.Short() {
		t.Skip("two training runs")
	}
	dir := t.TempDir()
	args := func(out string, extra ...string) []string {
		a := []string{"train", "--task", "marked-reversal", "--model", "rns", "--hidden", "8",
			"--lr", "0.01", "--train-size", "120", "--valid-size", "20", "--batch-size", "2",
			"--lengths", "9:15", "--epochs", "2", "--seed", "2", "--workers", "1", "--quiet", "--out", out}
		return append(a, extra...)
	}
	whole, part := filepath.Join(dir, "whole"), filepath.Join(dir, "part")
	if status, _, stderr := run(args(whole, "--checkpoint-every", "0")...); status != 0 {
		t.Fatalf("uninterrupted run: status %d: %s", status, stderr)
	}

	defer func(f func(chan<- os.Signal)) { notifySignals = f }(notifySignals)
	notifySignals = func(ch chan<- os.Signal) { ch <- os.Interrupt } // buffered
	status, _, stderr := run(args(part)...)
	notifySignals = func(chan<- os.Signal) {}
	m := regexp.MustCompile(`epoch 1 up to batch (\d+) of (\d+) checkpointed in (\S+)\ninterrupted; resume with: `).FindStringSubmatch(stderr)
	if status != 130 || m == nil || m[3] != part {
		t.Fatalf("status %d, stderr %q; want 130 and \"epoch 1 up to batch S of T checkpointed in %s\"", status, stderr, part)
	}
	step, _ := strconv.Atoi(m[1])
	steps, _ := strconv.Atoi(m[2])
	if step < 1 || step >= steps || steps != 60 {
		t.Fatalf("stopped after batch %d of %d, want one within the 60 of epoch 1", step, steps)
	}
	if _, err := os.Stat(filepath.Join(part, protocol.CheckpointFile)); err != nil {
		t.Fatalf("no checkpoint: %v", err)
	}

	// --resume takes the run's settings from its run.json.
	status, _, stderr = run("train", "--out", part, "--checkpoint-every", "1ns", "--quiet", "--resume")
	if status != 0 {
		t.Fatalf("resuming: status %d: %s", status, stderr)
	}
	if want := fmt.Sprintf("rns: resuming at epoch 1 of at most 2, batch %d of 60", step+1); !strings.Contains(stderr, want) {
		t.Errorf("the resumed run does not say %q:\n%s", want, stderr)
	}
	a, _ := os.ReadFile(filepath.Join(whole, protocol.ModelFile))
	b, _ := os.ReadFile(filepath.Join(part, protocol.ModelFile))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("the resumed run's model differs from the uninterrupted run's")
	}
	untimed := func(path string) []nsrnn.EpochRecord {
		recs := readLogFile(t, path)
		for i := range recs {
			recs[i].ElapsedSeconds, recs[i].EpochSeconds = 0, 0
		}
		return recs
	}
	if a, b := untimed(filepath.Join(whole, protocol.LogFile)), untimed(filepath.Join(part, protocol.LogFile)); len(a) != 2 || !reflect.DeepEqual(a, b) {
		t.Errorf("logs without their times: resumed %+v, uninterrupted %+v", b, a)
	}
}

// TestTrainRefusesCheckpointOfOtherRun checks that a checkpoint copied from
// a run with other settings (other lengths, so the same number of batches,
// or another seed) is refused naming the file and the setting, even though
// run.json agrees with the flags.
func TestTrainRefusesCheckpointOfOtherRun(t *testing.T) {
	dir := t.TempDir()
	base := filepath.Join(dir, "base")
	if status, _, stderr := run(tinyTrainArgs(base, "--epochs", "1")...); status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	for _, c := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"lengths", []string{"--lengths", "5:11"}, "settings.max_length: 9 in the checkpoint, now 11"},
		{"seed", []string{"--seed", "5"}, "seed"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := filepath.Join(dir, c.name)
			args := tinyTrainArgs(out, append([]string{"--epochs", "1"}, c.flags...)...)
			if status, _, stderr := run(args...); status != 0 {
				t.Fatalf("status %d: %s", status, stderr)
			}
			ckpt := filepath.Join(out, protocol.CheckpointFile)
			b, err := os.ReadFile(filepath.Join(base, protocol.CheckpointFile))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(ckpt, b, 0o644); err != nil {
				t.Fatal(err)
			}
			status, _, stderr := run(append(args, "--resume")...)
			if status == 0 || !strings.Contains(stderr, ckpt) || !strings.Contains(stderr, c.want) {
				t.Errorf("status %d, stderr %q; want a refusal naming %s and %q", status, stderr, ckpt, c.want)
			}
		})
	}
}

// TestTrainBadCheckpointEvery: a negative --checkpoint-every is refused,
// naming the flag, and nothing is created.
func TestTrainBadCheckpointEvery(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	status, _, stderr := run(tinyTrainArgs(out, "--checkpoint-every", "-1s")...)
	if status == 0 || !strings.Contains(stderr, "checkpoint-every") {
		t.Errorf("status %d, stderr %q", status, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the run directory was created")
	}
}

// TestTrainRefusesHugeModel: a model within MaxParams whose training
// would exceed nsrnn.MaxTrainingBytes is refused before the run
// directory is made.
func TestTrainRefusesHugeModel(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	status, _, stderr := run(tinyTrainArgs(out, "--model", "lstm", "--hidden", "7000")...)
	if status == 0 || !strings.Contains(stderr, "MaxTrainingBytes") {
		t.Errorf("status %d, stderr %q", status, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the run directory was created")
	}
}

// TestGenerateHugeCount: generate writes its strings as it draws them, so
// a --count beyond memory runs until its output fails, and its first
// strings are those of a small --count.
func TestGenerateHugeCount(t *testing.T) {
	status, small, stderr := run("generate", "--model", markedRNS, "--count", "50")
	if status != 0 {
		t.Fatalf("--count 50: %s", stderr)
	}
	w := &recordingWriter{failingWriter: failingWriter{n: len(small)}}
	err := runGenerate([]string{"--model", markedRNS, "--count", "1099511627776"}, w, io.Discard)
	if !errors.Is(err, errWriterFull) {
		t.Fatalf("error %v, want the writer's", err)
	}
	if got := w.kept.String(); got != small {
		t.Errorf("the first strings of --count 2^40 differ from those of --count 50:\n%q\n%q", got, small)
	}
}

// recordingWriter is a failingWriter that keeps what it accepted. (It has
// no WriteString, which io.WriteString would call instead of Write.)
type recordingWriter struct {
	failingWriter
	kept bytes.Buffer
}

func (w *recordingWriter) Write(p []byte) (int, error) {
	n, err := w.failingWriter.Write(p)
	w.kept.Write(p[:n])
	return n, err
}
