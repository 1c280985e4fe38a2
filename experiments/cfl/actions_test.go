package main

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/protocol"
)

func TestActionsRecordsEveryEpoch(t *testing.T) {
	out := t.TempDir()
	var stderr bytes.Buffer
	args := []string{"--out", out, "--epochs", "2", "--train-size", "4", "--valid-size", "2", "--batch-size", "2",
		"--lengths", "5:9", "--length", "9", "--hidden", "4"}
	if err := runActions(args, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	for _, m := range []string{"ns+s", "rns"} {
		recs, err := readActions(filepath.Join(out, m, actionsFile))
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) != 2 {
			t.Fatalf("%s: %d records, want 2 (one per epoch)", m, len(recs))
		}
		for i, r := range recs {
			if r.Epoch != i+1 || len(strings.Fields(r.String)) != 9 || !strings.Contains(r.String, "#") {
				t.Errorf("%s: record %d: epoch %d string %q", m, i, r.Epoch, r.String)
			}
			if len(r.Weights) != 8 {
				t.Errorf("%s: %d positions, want 8", m, len(r.Weights))
			}
			for tt, w := range r.Weights {
				if s := w[0] + w[1] + w[2]; math.Abs(s-1) > 1e-6 {
					t.Errorf("%s epoch %d t=%d: weights %v sum to %g", m, r.Epoch, tt+1, w, s)
				}
			}
		}
	}
	if err := runActions([]string{"--out", out, "--models", "lstm"}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--models") {
		t.Errorf("error %v, want one naming --models", err)
	}
}

// TestActionsResume checks that actions checkpoints like train: an --out
// made with other flags is refused, with the differences; an interrupted
// run resumes with --resume and records exactly what an uninterrupted run
// records.
func TestActionsResume(t *testing.T) {
	dir := t.TempDir()
	args := func(out string, extra ...string) []string {
		return append([]string{"--out", out, "--models", "rns", "--epochs", "4", "--train-size", "200", "--valid-size", "4",
			"--batch-size", "2", "--lengths", "9:15", "--length", "9", "--hidden", "4", "--quiet"}, extra...)
	}
	whole := filepath.Join(dir, "whole")
	if err := runActions(args(whole), &bytes.Buffer{}, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	want, err := readActions(filepath.Join(whole, "rns", actionsFile))
	if err != nil || len(want) != 4 {
		t.Fatalf("%d records (%v), want 4", len(want), err)
	}

	// Not without --resume, nor with other flags.
	if err := runActions(args(whole), &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--resume") {
		t.Errorf("again without --resume: %v", err)
	}
	err = runActions(args(whole, "--lr", "0.01", "--resume"), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "run.lr: 0.005 → 0.01") {
		t.Errorf("other --lr: %v", err)
	}
	err = runActions(args(whole, "--string-seed", "4", "--resume"), &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "string_seed") {
		t.Errorf("other --string-seed: %v", err)
	}
	if got, _ := readActions(filepath.Join(whole, "rns", actionsFile)); !reflect.DeepEqual(got, want) {
		t.Error("a refused run changed actions.jsonl")
	}

	// Interrupt a run once its first epoch is checkpointed.
	out := filepath.Join(dir, "out")
	sigs := make(chan chan<- os.Signal, 1)
	defer func(f func(chan<- os.Signal)) { notifySignals = f }(notifySignals)
	notifySignals = func(ch chan<- os.Signal) { sigs <- ch }
	go func() {
		ch := <-sigs
		for {
			if _, err := os.Stat(filepath.Join(out, "rns", protocol.CheckpointFile)); err == nil {
				ch <- os.Interrupt
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	var stderr bytes.Buffer
	err = runActions(args(out), &bytes.Buffer{}, &stderr)
	if err == nil {
		t.Skip("the run finished before the interrupt reached it")
	}
	if ee, ok := errors.AsType[*cli.ExitError](err); !ok || ee.Code != 130 || !strings.Contains(err.Error(), "interrupted; resume with: ") ||
		!strings.Contains(err.Error(), " actions --out "+out) || !strings.HasSuffix(err.Error(), " --resume") {
		t.Fatalf("interrupted: %v", err)
	}
	got, _ := readActions(filepath.Join(out, "rns", actionsFile))
	if len(got) == 0 || len(got) >= 4 || !reflect.DeepEqual(got, want[:len(got)]) {
		t.Fatalf("interrupted after %d records: %v", len(got), got)
	}
	notifySignals = func(chan<- os.Signal) {}
	stderr.Reset()
	if err := runActions(args(out, "--resume"), &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("--resume: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stderr.String(), "resuming at epoch ") {
		t.Errorf("the resumed run does not say where it resumes:\n%s", stderr.String())
	}
	got, _ = readActions(filepath.Join(out, "rns", actionsFile))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("resumed records differ from an uninterrupted run's:\n%v\n%v", got, want)
	}

	// Interrupted before its first batch, a run stops within epoch 1 with a
	// checkpoint of the batches done; resumed with checkpoints every batch
	// (--checkpoint-every 1ns), it records what the uninterrupted run did.
	within := filepath.Join(dir, "within")
	notifySignals = func(ch chan<- os.Signal) { ch <- os.Interrupt } // buffered
	stderr.Reset()
	err = runActions(args(within), &bytes.Buffer{}, &stderr)
	notifySignals = func(chan<- os.Signal) {}
	if ee, ok := errors.AsType[*cli.ExitError](err); !ok || ee.Code != 130 ||
		!regexp.MustCompile(`epoch 1 up to batch \d+ of 100 checkpointed in `).MatchString(err.Error()) {
		t.Fatalf("interrupted within epoch 1: %v", err)
	}
	if got, err := readActions(filepath.Join(within, "rns", actionsFile)); len(got) != 0 || err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("interrupted within epoch 1: records %v (%v), want none", got, err)
	}
	stderr.Reset()
	if err := runActions(args(within, "--checkpoint-every", "1ns", "--resume"), &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("--resume within epoch 1: %v\n%s", err, stderr.String())
	}
	if !regexp.MustCompile(`resuming at epoch 1 of at most 4, batch \d+ of 100`).MatchString(stderr.String()) {
		t.Errorf("the resumed run does not say where in epoch 1 it resumes:\n%s", stderr.String())
	}
	got, _ = readActions(filepath.Join(within, "rns", actionsFile))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("records resumed within an epoch differ from an uninterrupted run's:\n%v\n%v", got, want)
	}
}

// TestActionsBadCheckpointEvery: a negative --checkpoint-every is refused,
// naming the flag, before anything is written.
func TestActionsBadCheckpointEvery(t *testing.T) {
	out := filepath.Join(t.TempDir(), "out")
	err := runActions([]string{"--out", out, "--checkpoint-every", "-1s"}, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--checkpoint-every -1s") {
		t.Errorf("error %v, want one naming --checkpoint-every", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("the output directory was created")
	}
}
