package nsrnn

import (
	"errors"
	"math"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// misuseModel is a small RNS model and batches for the tests of misuse.
func misuseModel(t *testing.T, seed uint64) (*Model, []Batch) {
	t.Helper()
	m := newTiny(t, Config{Kind: RNS, InputVocab: 3, OutputVocab: 4, Hidden: 4, States: 2, Symbols: 2}, seed)
	return m, []Batch{{{0, 1}, {1, 0}}, {{0, 2, 0}}}
}

// Batches too large for the memory rules are refused by SentenceObjective
// (and so by Train) before a step changes the model, naming the set and
// the batch, as other bad batches are.
func TestSentenceObjectiveChecksSizes(t *testing.T) {
	m, tr := misuseModel(t, 1)
	before := paramData(m)
	long := Batch{make([]int, 5000)}
	for _, c := range []struct {
		name         string
		train, valid []Batch
		want         string
	}{
		{"validation", tr, []Batch{tr[0], long}, "validation batch 1 (of 2)"},
		{"training", append(append([]Batch(nil), tr...), long), tr, "training batch 2 (of 3)"},
	} {
		if _, err := SentenceObjective(m, c.train, c.valid, 1); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: SentenceObjective: %v, want ErrTooLarge naming %s", c.name, err, c.want)
		}
		if _, err := Train(m, c.train, c.valid, TrainConfig{LR: 0.01, MaxEpochs: 1, NoLowerBound: true}); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: Train: %v, want ErrTooLarge", c.name, err)
		}
	}
	if !sameBits(before, paramData(m)) {
		t.Error("a refused Train changed the model")
	}
}

// Fit refuses an objective made for another model, whose gradients it
// would apply to m; StreamObjective refuses a nil stream.
func TestFitRefusesAnotherModel(t *testing.T) {
	a, tr := misuseModel(t, 1)
	b, _ := misuseModel(t, 2)
	obj, err := SentenceObjective(a, tr, tr, 1)
	if err != nil {
		t.Fatal(err)
	}
	before := paramData(b)
	if _, err := Fit(b, WithoutLowerBound(obj), TrainConfig{LR: 0.1, MaxEpochs: 1}); err == nil || !strings.Contains(err.Error(), "another model") {
		t.Errorf("Fit of b with a's objective: %v", err)
	}
	if !sameBits(before, paramData(b)) {
		t.Error("the refused Fit changed the model")
	}
	c := newTiny(t, Config{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 4}, 1)
	s, err := c.NewStream(2)
	if err != nil {
		t.Fatal(err)
	}
	chunk := func(int) ([][]int, [][]int, error) { return [][]int{{0}, {1}}, [][]int{{1}, {0}}, nil }
	valid := func() (float64, error) { return 1, nil }
	sobj, err := StreamObjective(s, 1, chunk, valid)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Fit(b, WithoutLowerBound(sobj), TrainConfig{LR: 0.1, MaxEpochs: 1}); err == nil || !strings.Contains(err.Error(), "another model") {
		t.Errorf("Fit of b with a stream of another model: %v", err)
	}
	if _, err := StreamObjective(nil, 1, chunk, valid); err == nil || !strings.Contains(err.Error(), "needs a stream") {
		t.Errorf("StreamObjective of a nil stream: %v", err)
	}
}

// A checkpoint that cannot be written is refused before the first step,
// saying it is the checkpoint.
func TestCheckpointUnwritable(t *testing.T) {
	m, tr := misuseModel(t, 1)
	before := paramData(m)
	dir := t.TempDir()
	for _, path := range []string{filepath.Join(dir, "absent", "x.ckpt"), dir} {
		_, err := Train(m, tr, tr, TrainConfig{LR: 0.01, MaxEpochs: 1, NoLowerBound: true, Checkpoint: path})
		if err == nil || !strings.HasPrefix(err.Error(), "nsrnn: checkpoint: ") {
			t.Errorf("checkpoint %s: %v", path, err)
		}
	}
	if !sameBits(before, paramData(m)) {
		t.Error("a refused Train changed the model")
	}
}

// A model with a parameter that is not finite is not saved (Load would
// refuse the file), and Fit says so before its first step.
func TestSaveRefusesNonFinite(t *testing.T) {
	m, tr := misuseModel(t, 1)
	m.params[0].Data()[0] = math.NaN()
	path := filepath.Join(t.TempDir(), "model")
	if err := m.Save(path); err == nil || !strings.Contains(err.Error(), "cannot save: parameter "+m.params[0].Name+" holds NaN") {
		t.Errorf("Save: %v", err)
	}
	if _, err := m.MarshalBinary(); err == nil {
		t.Error("MarshalBinary of a model holding NaN succeeded")
	}
	if _, err := Train(m, tr, tr, TrainConfig{LR: 0.01, MaxEpochs: 1, NoLowerBound: true}); err == nil || !strings.Contains(err.Error(), "holds NaN") {
		t.Errorf("Train: %v", err)
	}
}

// Programmer errors panic with a message saying what is wrong, and a nil
// schedule pointer is an error.
func TestMisusePanics(t *testing.T) {
	m, tr := misuseModel(t, 1)
	var nilModel *Model
	var nilStream *Stream
	for _, c := range []struct {
		name string
		f    func()
		want string
	}{
		{"KeepGraphs(0)", func() { m.KeepGraphs(0) }, "at least 1"},
		{"nil Model NumParams", func() { nilModel.NumParams() }, "not made by New"},
		{"nil Model Config", func() { nilModel.Config() }, "not made by New"},
		{"nil Stream Batch", func() { nilStream.Batch() }, "nil Stream"},
	} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(r.(string), c.want) {
					t.Errorf("%s: panic %v, want one saying %q", c.name, r, c.want)
				}
			}()
			c.f()
		}()
	}
	if _, err := Train(m, tr, tr, TrainConfig{LR: 0.01, MaxEpochs: 1, NoLowerBound: true, Schedule: (*Plateau)(nil)}); err == nil || !strings.Contains(err.Error(), "nil *nsrnn.Plateau") {
		t.Errorf("a nil *Plateau schedule: %v", err)
	}
}

// MarshalBinary and Save from another goroutine while Fit trains wait for
// the update under way, and Fit's steps go on beside them: every snapshot
// is the parameters of one step (run with -race to see the updates and
// the encodings ordered).
func TestSnapshotsWhileTraining(t *testing.T) {
	m, tr := misuseModel(t, 1)
	path := filepath.Join(t.TempDir(), "model")
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			b, err := m.MarshalBinary()
			if err != nil {
				t.Error(err)
				return
			}
			if _, err := UnmarshalModel(b); err != nil {
				t.Error(err)
				return
			}
			if err := m.Save(path); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	_, err := Train(m, tr, tr, TrainConfig{LR: 0.01, MaxEpochs: 5, NoLowerBound: true})
	close(done)
	wg.Wait()
	if err != nil {
		t.Fatal(err) // a snapshot does not hold the model: no step is refused
	}
}

// Messages: a step's error names the step once ("nsrnn:" once), a
// diverging run's losses print in a few digits, and a chunk function's
// error is named by its chunk.
func TestMisuseMessages(t *testing.T) {
	cause := errors.New("nsrnn: over the limit")
	err := error(&prefixedError{"nsrnn: epoch 1 step 3: ", cause})
	if err.Error() != "nsrnn: epoch 1 step 3: over the limit" || !errors.Is(err, cause) {
		t.Errorf("step error %q", err)
	}
	for v, want := range map[float64]string{0.123456: "0.1235", 1e300: "1e+300", -2.5e7: "-2.5e+07", math.Inf(1): "+Inf"} {
		if got := score4(v); got != want {
			t.Errorf("score4(%g) = %q, want %q", v, got, want)
		}
	}
	m := newTiny(t, Config{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 4}, 1)
	s, err := m.NewStream(1)
	if err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if _, _, err := s.CrossEntropy(2, func(i int) ([][]int, [][]int, error) {
		if i == 1 {
			return nil, nil, boom
		}
		return [][]int{{0}}, [][]int{{1}}, nil
	}); !errors.Is(err, boom) || err.Error() != "nsrnn: chunk 1: boom" {
		t.Errorf("CrossEntropy with a failing chunk: %v", err)
	}
}

// nanGradient is an objective whose loss is finite and whose gradient
// holds a NaN.
type nanGradient struct{ m *Model }

func (o nanGradient) Steps() int { return 2 }
func (o nanGradient) Gradient(e, i int) (float64, float64, [][]float64, error) {
	g := make([][]float64, len(o.m.params))
	for j, p := range o.m.params {
		g[j] = make([]float64, len(p.Data()))
	}
	g[0][0] = math.NaN()
	return 1, 1, g, nil
}
func (o nanGradient) Validate() (float64, error) { return 1, nil }

// A gradient that is not finite is refused at its step, before the
// update would make the parameters NaN, even where the loss is finite.
func TestFitRefusesNonFiniteGradient(t *testing.T) {
	m, _ := misuseModel(t, 1)
	before := paramData(m)
	_, err := Fit(m, WithoutLowerBound(nanGradient{m}), TrainConfig{LR: 0.1, MaxEpochs: 1})
	if err == nil || !strings.Contains(err.Error(), "epoch 1 step 1 of 2: the gradient's norm is NaN") {
		t.Errorf("Fit with a NaN gradient: %v", err)
	}
	if !sameBits(before, paramData(m)) {
		t.Error("the NaN gradient was applied")
	}
}
