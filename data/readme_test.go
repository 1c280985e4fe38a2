package data

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
)

// TestReadmeLibraryCalls runs the data calls of the README's "Using the
// library" example for every task of the table, and checks that the
// README still makes those calls. For a task without a grammar (the 2023
// release's), the calls of the package-level functions with its nil
// Grammar are errors, not panics.
func TestReadmeLibraryCalls(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, call := range []string{
		"task, err := data.NewTask(data.MarkedReversal)",
		"train, err := task.SampleBatches(1000, 10, 40, 80, rng)",
		"valid, err := task.SampleBatches(100, 10, 40, 80, rng)",
		"bound, err := task.TrueEntropy(valid, 40, 80)",
	} {
		if !bytes.Contains(readme, []byte(call)) {
			t.Errorf("the README no longer has %q: update this test with it", call)
		}
	}
	for _, name := range AllTaskNames() {
		t.Run(name, func(t *testing.T) {
			task, err := NewTask(name)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 0))
			train, err := task.SampleBatches(1000, 10, 40, 80, rng)
			if err != nil {
				t.Fatalf("train: %v", err)
			}
			valid, err := task.SampleBatches(100, 10, 40, 80, rng)
			if err != nil {
				t.Fatalf("valid: %v", err)
			}
			if len(train) != 100 || len(valid) != 10 {
				t.Errorf("%d training and %d validation batches, want 100 and 10", len(train), len(valid))
			}
			bound, err := task.TrueEntropy(valid, 40, 80)
			if err != nil || !(bound > 0) || math.IsInf(bound, 0) {
				t.Errorf("TrueEntropy: %v, %v; want a positive finite bound", bound, err)
			}

			g := task.Grammar()
			if g != nil {
				return
			}
			for call, f := range map[string]func() error{
				"SampleBatches": func() error { _, err := SampleBatches(g, 10, 10, 40, 80, rng); return err },
				"SampleStrings": func() error { _, err := SampleStrings(g, 10, 40, 80, rng); return err },
				"SampleTestSet": func() error { _, err := SampleTestSet(g, 1, 40, 80, rng); return err },
				"SourceLogProb": func() error { _, err := SourceLogProb(g, valid[0][0], 40, 80); return err },
				"ComputeLowerBound": func() error {
					_, err := ComputeLowerBound(g, Flatten(valid), 40, 80)
					return err
				},
				"WritePCFG": func() error { return WritePCFG(&bytes.Buffer{}, g, "") },
			} {
				if err := noPanic(f); err == nil || !strings.Contains(err.Error(), "nil grammar") {
					t.Errorf("%s(task.Grammar()) of a task without a grammar: %v, want an error about the nil grammar", call, err)
				}
			}
		})
	}
}

// noPanic calls f, returning its error, or one for its panic.
func noPanic(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = errors.New("panic")
		}
	}()
	return f()
}
