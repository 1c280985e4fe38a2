package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

func TestQuickstartTiny(t *testing.T) {
	out := filepath.Join(t.TempDir(), "qs")
	args := []string{"--epochs", "2", "--train-size", "10", "--valid-size", "10", "--out", out, "--seed", "3"}
	var stdout, stderr bytes.Buffer
	if err := run(args, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	for _, kind := range []string{nsrnn.RNS, nsrnn.LSTM} {
		dir := filepath.Join(out, kind)
		for _, f := range []string{"log.jsonl", "checkpoint", "model", "run.json", "summary.json"} {
			if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
				t.Errorf("%s: %v", kind, err)
			}
		}
		// Every file is created with mode 0666 less the umask.
		for _, f := range []string{"log.jsonl", "checkpoint", "model", "run.json"} {
			if umask, ok := currentUmask(); !ok {
				break
			} else if fi, err := os.Stat(filepath.Join(dir, f)); err == nil && fi.Mode().Perm() != 0o666&^umask {
				t.Errorf("%s: mode %03o with umask %03o", f, fi.Mode().Perm(), umask)
			}
		}
		// run.json holds the run's settings, as train writes them.
		s, err := protocol.ReadSettings(dir)
		if err != nil || s.Task != "marked-reversal" || s.Grammar != "paper" || s.Seed != 3 || s.Epochs != 2 || s.Model.Kind != kind {
			t.Errorf("run.json: %+v, %v", s, err)
		}
		// summary.json holds the finished run's results, as train writes
		// them, and agrees with what the quickstart printed.
		sum, err := protocol.ReadSummary(dir)
		if err != nil {
			t.Fatalf("summary.json: %v", err)
		}
		if sum.Task != "marked-reversal" || sum.Model.Kind != kind || sum.Epochs != 2 || sum.BestEpoch < 1 || sum.BestEpoch > 2 || sum.NoLowerBound {
			t.Errorf("summary.json: %+v", sum)
		}
		want := fmt.Sprintf("%s %d %d of 2 %.4f %.4f %.4f", kind, sum.Parameters, sum.BestEpoch, sum.BestValidCrossEntropy, sum.ValidLowerBound, sum.BestValidCrossEntropyDiff)
		found := false
		for line := range strings.Lines(stdout.String()) {
			found = found || strings.Join(strings.Fields(line), " ") == want
		}
		if !found {
			t.Errorf("stdout has no row %q, the summary's:\n%s", want, stdout.String())
		}
		m, err := nsrnn.Load(filepath.Join(dir, "model"))
		if err != nil {
			t.Fatal(err)
		}
		if c := m.Config(); c.Kind != kind || c.Hidden != 20 || (kind == nsrnn.RNS && (c.States != 2 || c.Symbols != 3)) {
			t.Errorf("saved model %+v", c)
		}
		if !strings.Contains(stdout.String(), dir) {
			t.Errorf("stdout does not name %s:\n%s", dir, stdout.String())
		}
		if n := strings.Count(stderr.String(), "  "+kind+" epoch "); n != 2 {
			t.Errorf("%d progress lines for %s, want 2:\n%s", n, kind, stderr.String())
		}
	}
	for _, w := range []string{"cross-entropy", "lower bound", "difference", "rns", "lstm", "lower bound is the\ndata's true entropy"} {
		if !strings.Contains(stdout.String(), w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout.String())
		}
	}
	if !strings.Contains(stderr.String(), "(the validation data's true entropy: ") {
		t.Errorf("stderr does not say that the lower bound is the data's true entropy:\n%s", stderr.String())
	}
	t.Logf("stdout:\n%s", stdout.String())

	// "cfl plot" takes the runs for finished ones: no curve is in progress.
	panels, skipped, err := protocol.RunsData([]string{out}, false)
	if err != nil || len(skipped) != 0 || len(panels) != 1 || len(panels[0].Curves) != 2 {
		t.Fatalf("RunsData(%s): panels %+v, skipped %v, %v", out, panels, skipped, err)
	}
	for _, c := range panels[0].Curves {
		if c.InProgress {
			t.Errorf("run %s plots as in progress", c.Dir)
		}
	}

	// Run again: the finished runs are resumed, with the same results.
	var stdout2, stderr2 bytes.Buffer
	if err := run(args, &stdout2, &stderr2); err != nil {
		t.Fatal(err)
	}
	if strings.Count(stderr2.String(), "already trained") != 2 {
		t.Errorf("second run's stderr:\n%s", stderr2.String())
	}
	first, _, _ := strings.Cut(stdout.String(), "files in")
	second, _, _ := strings.Cut(stdout2.String(), "files in")
	if first != second {
		t.Errorf("second run reports\n%s\nfirst\n%s", second, first)
	}

	// Other settings in the same directory: an error, nothing changed.
	before, _ := os.ReadFile(filepath.Join(out, nsrnn.RNS, "checkpoint"))
	err = run([]string{"--epochs", "3", "--train-size", "10", "--valid-size", "10", "--out", out, "--seed", "3"}, &stdout2, &stderr2)
	if err == nil || !strings.Contains(err.Error(), "other settings") {
		t.Errorf("other settings: error %v", err)
	}
	if after, _ := os.ReadFile(filepath.Join(out, nsrnn.RNS, "checkpoint")); !bytes.Equal(before, after) {
		t.Error("the checkpoint changed")
	}
}

// An interrupted quickstart stops with a checkpoint and says how to go
// on; run again, it says that it resumes and ends where an uninterrupted
// run ends.
func TestQuickstartInterrupt(t *testing.T) {
	root := t.TempDir()
	args := func(out string) []string {
		return []string{"--epochs", "2", "--train-size", "20", "--valid-size", "10", "--out", filepath.Join(root, out), "--seed", "5"}
	}
	var whole, wholeErr bytes.Buffer
	if err := run(args("whole"), &whole, &wholeErr); err != nil {
		t.Fatalf("%v\n%s", err, wholeErr.String())
	}
	interrupted.Store(true)
	var stdout, stderr bytes.Buffer
	err := run(args("part"), &stdout, &stderr)
	interrupted.Store(false)
	if !errors.Is(err, errInterrupted) || !strings.Contains(err.Error(), "run the same command again") {
		t.Fatalf("interrupted run: error %v", err)
	}
	dir := filepath.Join(root, "part", nsrnn.RNS)
	if _, err := os.Stat(filepath.Join(dir, protocol.CheckpointFile)); err != nil {
		t.Errorf("no checkpoint after the interrupt: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, protocol.SummaryFile)); err == nil {
		t.Error("the interrupted run has a summary")
	}
	stdout.Reset()
	stderr.Reset()
	if err := run(args("part"), &stdout, &stderr); err != nil {
		t.Fatalf("resumed: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "resuming from the checkpoint: rns") {
		t.Errorf("the resumed run does not say so:\n%s", stderr.String())
	}
	want, _, _ := strings.Cut(whole.String(), "files in")
	got, _, _ := strings.Cut(stdout.String(), "files in")
	if got != want {
		t.Errorf("resumed run reports\n%s\nuninterrupted\n%s", got, want)
	}
}

func TestQuickstartFlagErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--epochs", "0"}, {"--train-size", "0"}, {"--valid-size", "-1"}, {"--out", ""}, {"--bogus"}, {"extra"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(args, &stdout, &stderr)
		if err == nil {
			t.Errorf("%v: no error", args)
			continue
		}
		if name := strings.TrimPrefix(args[0], "--"); name != "extra" && !strings.Contains(err.Error(), name) {
			t.Errorf("%v: error %q does not name the flag", args, err)
		}
	}
}

// --help prints the usage and is no error.
func TestHelp(t *testing.T) {
	var out, errb strings.Builder
	if err := run([]string{"--help"}, &out, &errb); err != nil {
		t.Fatalf("--help: %v", err)
	}
	if !strings.Contains(errb.String(), "--train-size") {
		t.Errorf("--help printed %q", errb.String())
	}
}
