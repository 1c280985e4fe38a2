package protocol

import (
	"fmt"
	"math/rand/v2"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// RunData is the data of a training run.
type RunData struct {
	// Train and Valid are the training and validation batches, each of
	// strings of one length.
	Train, Valid []nsrnn.Batch
	// LowerBound is the validation set's true-entropy lower bound.
	LowerBound data.LowerBound
	// NoLowerBound is set for strings of no known distribution (the
	// user's text files, TextData.Run): LowerBound is zero and means
	// nothing.
	NoLowerBound bool
}

// TrainConfig is s.TrainConfig with the run's lower bound, or
// nsrnn.TrainConfig.NoLowerBound for a run without one.
func (d *RunData) TrainConfig(s Settings) nsrnn.TrainConfig {
	if d.NoLowerBound {
		tc := s.TrainConfig(0)
		tc.NoLowerBound = true
		return tc
	}
	return s.TrainConfig(d.LowerBound.Entropy)
}

// CheckSizes returns the error that training m on the run's batches would
// meet, at the first batch too large for the memory rules
// (nsrnn.Model.CheckBatch, for the largest part of a batch as Gradient and
// Loss run it: Model.LargestPart), naming its split, length and
// size; nil if every batch fits. A program calls it before it writes
// anything, rather than fail in the middle of an epoch.
func (d *RunData) CheckSizes(m *nsrnn.Model) error {
	for _, split := range []struct {
		name    string
		batches []nsrnn.Batch
	}{{"training", d.Train}, {"validation", d.Valid}} {
		checked := map[[2]int]bool{}
		for _, b := range split.batches {
			if len(b) == 0 {
				continue
			}
			k := [2]int{m.LargestPart(len(b)), len(b[0])}
			if checked[k] {
				continue
			}
			checked[k] = true
			if err := m.CheckBatch(k[0], k[1]); err != nil {
				return fmt.Errorf("%s strings of length %d (a batch of %d, in parts of at most %d): %w", split.name, k[1], len(b), k[0], err)
			}
		}
	}
	return nil
}

// SampleRun draws the training and validation batches of a run with
// settings s from task t, deterministically from DataSeed(s.Seed): first
// s.TrainSize training strings, then s.ValidSize validation strings, in
// batches of s.BatchSize strings whose length is drawn uniformly from t's
// valid lengths in [s.MinLength, s.MaxLength]; and it computes the
// validation set's lower bound. Runs with the same seed and data settings
// get the same data whatever their model. When s.Task is set, it must be
// t's name, s.Grammar t's definition and s.TaskParams t's parameters.
func SampleRun(t *data.Task, s Settings) (*RunData, error) {
	if s.Task != "" && (s.Task != t.Name() || s.Grammar.String() != t.Definition().String() || s.TaskParams.String() != t.Params().String()) {
		return nil, fmt.Errorf("protocol: settings of task %s (%s; parameters %q) for data of task %s", s.Task, s.Grammar, s.TaskParams, t)
	}
	if err := s.checkData(); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(DataSeed(s.Seed), 1))
	tr, err := t.SampleBatches(s.TrainSize, s.BatchSize, s.MinLength, s.MaxLength, rng)
	if err != nil {
		return nil, err
	}
	va, err := t.SampleBatches(s.ValidSize, s.BatchSize, s.MinLength, s.MaxLength, rng)
	if err != nil {
		return nil, err
	}
	lb, err := data.ComputeLowerBound(t, data.Flatten(va), s.MinLength, s.MaxLength)
	if err != nil {
		return nil, err
	}
	return &RunData{Train: Batches(tr), Valid: Batches(va), LowerBound: lb}, nil
}

// Batches converts batches of strings, as data.SampleBatches and
// data.Task.SampleBatches return them,
// to nsrnn batches.
func Batches(bs [][][]int) []nsrnn.Batch {
	out := make([]nsrnn.Batch, len(bs))
	copy(out, bs)
	return out
}

// TestSpec describes a sampled test set: PerLength strings of every valid
// length in [MinLength, MaxLength], drawn from Seed. The same spec gives
// the same strings for every model of a task.
type TestSpec struct {
	MinLength int    `json:"min_length"`
	MaxLength int    `json:"max_length"`
	PerLength int    `json:"per_length"`
	Seed      uint64 `json:"seed"`
}

// SampleTestSet draws the test set of spec from task t (as data.SampleTestSet
// does, from a generator seeded with spec.Seed).
func SampleTestSet(t *data.Task, spec TestSpec) ([][]int, error) {
	if spec.PerLength < 1 {
		return nil, fmt.Errorf("protocol: %d test strings per length; want at least 1", spec.PerLength)
	}
	rng := rand.New(rand.NewPCG(spec.Seed, 2))
	return data.SampleTestSet(t, spec.PerLength, spec.MinLength, spec.MaxLength, rng)
}
