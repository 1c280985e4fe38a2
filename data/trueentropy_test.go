package data

import (
	"math/rand/v2"
	"testing"
)

// TestTaskTrueEntropy checks the lower bound of a set of batches against
// ComputeLowerBound on their strings, and that it is what
// TrainConfig.LowerBound wants: a positive number of nats per symbol.
func TestTaskTrueEntropy(t *testing.T) {
	task, err := NewTask(MarkedReversal)
	if err != nil {
		t.Fatal(err)
	}
	batches, err := SampleBatches(task.Grammar(), 30, 7, 5, 11, rand.New(rand.NewPCG(3, 0)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := task.TrueEntropy(batches, 5, 11)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := ComputeLowerBound(task.Grammar(), Flatten(batches), 5, 11)
	if err != nil {
		t.Fatal(err)
	}
	if got != lb.Entropy || got <= 0 {
		t.Errorf("TrueEntropy = %v, ComputeLowerBound's Entropy %v", got, lb.Entropy)
	}
	if _, err := task.TrueEntropy(batches, 5, 7); err == nil {
		t.Error("no error for strings longer than maxLen")
	}
	if _, err := task.TrueEntropy(nil, 5, 11); err == nil {
		t.Error("no error for no strings")
	}
}
