package protocol

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/nsrnn/nsrnn/data"
)

func TestSampleRun(t *testing.T) {
	task, err := data.NewTask(data.MarkedReversal)
	if err != nil {
		t.Fatal(err)
	}
	s := tinySettings()
	d, err := SampleRun(task, s)
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Train) != 4 || len(d.Valid) != 2 {
		t.Fatalf("%d training and %d validation batches, want 4 and 2", len(d.Train), len(d.Valid))
	}
	for _, b := range append(append(d.Train[:0:0], d.Train...), d.Valid...) {
		for _, w := range b {
			if len(w) != len(b[0]) || len(w) < s.MinLength || len(w) > s.MaxLength {
				t.Errorf("batch of lengths %d and %d, range [%d, %d]", len(b[0]), len(w), s.MinLength, s.MaxLength)
			}
		}
	}
	if d.LowerBound.Strings != 10 || !(d.LowerBound.Entropy > 0) {
		t.Errorf("lower bound %+v", d.LowerBound)
	}

	// The protocol: training then validation batches from one generator
	// seeded with DataSeed; the model does not matter.
	rng := rand.New(rand.NewPCG(DataSeed(s.Seed), 1))
	tr, _ := data.SampleBatches(task.Grammar(), s.TrainSize, s.BatchSize, s.MinLength, s.MaxLength, rng)
	va, _ := data.SampleBatches(task.Grammar(), s.ValidSize, s.BatchSize, s.MinLength, s.MaxLength, rng)
	other := s
	other.Model.Kind, other.Model.States, other.Model.Symbols = "lstm", 0, 0
	d2, err := SampleRun(task, other)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(d.Train, Batches(tr)) || !reflect.DeepEqual(d.Valid, Batches(va)) || !reflect.DeepEqual(d2, d) {
		t.Error("SampleRun's data is not the protocol's")
	}

	// Settings of another task or definition, and bad sizes, are errors.
	for _, bad := range []func(*Settings){
		func(s *Settings) { s.Task = data.Dyck },
		func(s *Settings) { s.Grammar = data.GrammarReleased },
		func(s *Settings) { s.BatchSize = 0 },
		func(s *Settings) { s.TrainSize = 0 },
		func(s *Settings) { s.MinLength = 10 },
	} {
		b := s
		bad(&b)
		if _, err := SampleRun(task, b); err == nil {
			t.Errorf("settings %+v: no error", b)
		}
	}
}

func TestSampleTestSet(t *testing.T) {
	task, _ := data.NewTask(data.MarkedReversal)
	spec := TestSpec{MinLength: 5, MaxLength: 9, PerLength: 2, Seed: 7}
	strs, err := SampleTestSet(task, spec)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := data.SampleTestSet(task.Grammar(), 2, 5, 9, rand.New(rand.NewPCG(7, 2)))
	if len(strs) != 6 || !reflect.DeepEqual(strs, want) {
		t.Errorf("test set %v, want %v", strs, want)
	}
	if _, err := SampleTestSet(task, TestSpec{MinLength: 5, MaxLength: 9}); err == nil {
		t.Error("no error for 0 strings per length")
	}
}
