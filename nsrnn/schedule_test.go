package nsrnn

import (
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"
)

// scriptedObjective has zero gradients and returns scripted validation
// scores, so that a test decides which epochs improve.
type scriptedObjective struct {
	m      *Model
	scores []float64
	epoch  int
}

func (o *scriptedObjective) Steps() int { return 2 }

func (o *scriptedObjective) Gradient(e, i int) (float64, float64, [][]float64, error) {
	sizes := o.m.paramSizes()
	grads := make([][]float64, len(sizes))
	for j, n := range sizes {
		grads[j] = make([]float64, n)
	}
	return 1, 1, grads, nil
}

func (o *scriptedObjective) Validate() (float64, error) {
	o.epoch++
	return o.scores[o.epoch-1], nil
}

// tinyLSTM returns a model whose parameters the scripted objectives do not
// move: an LSTM of two units.
func tinyLSTM(t *testing.T) *Model {
	t.Helper()
	m, err := New(Config{Kind: LSTM, InputVocab: 2, OutputVocab: 3, Hidden: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// stopAfterEpochs is a Recorder that stops training (ErrStop) after n
// epochs; n = 0 never stops it.
func stopAfterEpochs(n int) Recorder {
	epochs := 0
	return RecorderFunc(func(e Event) error {
		if e.Kind == EpochDone {
			if epochs++; epochs == n {
				return ErrStop
			}
		}
		return nil
	})
}

// stepSchedule quarters the rate at the first epoch without improvement
// of each run of them and counts only decreases by more than 0.5 as
// improvements: a schedule that is not a Plateau.
type stepSchedule struct{}

func (stepSchedule) Improves(score, best float64) bool { return score < best-0.5 }
func (stepSchedule) Next(lr float64, epoch, bad int) float64 {
	if bad == 1 {
		return lr / 4
	}
	return lr
}
func (stepSchedule) Check() error { return nil }

// TestFitCustomSchedule: Fit follows a Schedule of the caller's, in its
// improvement flags, learning rates and early stop, and resumes a run
// made with it.
func TestFitCustomSchedule(t *testing.T) {
	m, err := New(Config{Kind: LSTM, InputVocab: 2, OutputVocab: 3, Hidden: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	scores := []float64{5, 4.8, 4, 3.9, 3.8, 3.7, 1}
	cfg := func(ckpt string, stopAfter int) TrainConfig {
		return TrainConfig{Optimizer: NewSGD(1), Schedule: stepSchedule{}, EarlyStop: 3, MaxEpochs: 10, Checkpoint: ckpt,
			Recorder: stopAfterEpochs(stopAfter)}
	}
	res, err := Fit(m, &scriptedObjective{m: m, scores: scores}, cfg("", 0))
	if err != nil {
		t.Fatal(err)
	}
	// Epoch 1 improves on +Inf; 2 does not (4.8 > 5 − 0.5): rate ÷ 4;
	// 3 improves (4 < 4.5); 4, 5, 6 do not (÷ 4 at the first only) and
	// the third stops the run before epoch 7.
	want := []struct {
		improved bool
		lr       float64
	}{{true, 1}, {false, 1}, {true, 0.25}, {false, 0.25}, {false, 1.0 / 16}, {false, 1.0 / 16}}
	if len(res.History) != len(want) || !res.Finished || res.BestEpoch != 3 {
		t.Fatalf("%d epochs (finished %v, best %d), want 6 finished with best epoch 3", len(res.History), res.Finished, res.BestEpoch)
	}
	for i, w := range want {
		if r := res.History[i]; r.Improved != w.improved || r.LearningRate != w.lr {
			t.Errorf("epoch %d: improved %v at lr %g, want %v at %g", i+1, r.Improved, r.LearningRate, w.improved, w.lr)
		}
	}

	// The same run interrupted after epoch 4 and resumed from its
	// checkpoint (the schedule replayed over the saved history).
	ckpt := filepath.Join(t.TempDir(), "checkpoint")
	m2, _ := New(Config{Kind: LSTM, InputVocab: 2, OutputVocab: 3, Hidden: 2}, 1)
	obj := &scriptedObjective{m: m2, scores: scores}
	if r, err := Fit(m2, obj, cfg(ckpt, 4)); err != nil || r.Finished {
		t.Fatalf("interrupted run: %v, finished %v", err, r != nil && r.Finished)
	}
	r2, err := Fit(m2, obj, cfg(ckpt, 0))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(len(r2.History), r2.BestEpoch) != fmt.Sprint(len(res.History), res.BestEpoch) {
		t.Errorf("resumed run: %d epochs, best %d; want %d, %d", len(r2.History), r2.BestEpoch, len(res.History), res.BestEpoch)
	}
	for i := range r2.History {
		if r2.History[i].LearningRate != res.History[i].LearningRate || r2.History[i].Improved != res.History[i].Improved {
			t.Errorf("resumed epoch %d differs: %+v, want %+v", i+1, r2.History[i], res.History[i])
		}
	}
}

// TestPlateauSchedule checks Plateau's methods against their definition.
func TestPlateauSchedule(t *testing.T) {
	p := Plateau{Factor: 0.5, Patience: 2, Threshold: 0.1}
	for _, tc := range []struct {
		score, best float64
		want        bool
	}{{1, math.Inf(1), true}, {math.NaN(), math.Inf(1), false}, {8.9, 10, true}, {9.1, 10, false}, {-1.2, -1, true}, {-1.05, -1, false}} {
		if got := p.Improves(tc.score, tc.best); got != tc.want {
			t.Errorf("Improves(%g, %g) = %v, want %v", tc.score, tc.best, got, tc.want)
		}
	}
	for bad, want := range []float64{0: 1, 1: 1, 2: 1, 3: 0.5, 4: 1, 5: 1, 6: 0.5} {
		if got := p.Next(1, 7, bad); got != want {
			t.Errorf("Next(1, 7, %d) = %g, want %g", bad, got, want)
		}
	}
	for _, bad := range []Plateau{{Factor: 0}, {Factor: 1.5}, {Factor: 0.5, Patience: -1}, {Factor: 0.5, Threshold: 1}, {Factor: math.NaN()}} {
		if bad.Check() == nil {
			t.Errorf("Check(%+v) accepted", bad)
		}
	}
	if scheduleSetting(&p) != scheduleSetting(p) || scheduleSetting(p) != "{Factor:0.5 Patience:2 Threshold:0.1}" {
		t.Errorf("scheduleSetting(%+v) = %q: the checkpoints' format changed", p, scheduleSetting(p))
	}
}

// warmup raises the rate linearly over its first epochs, to base at epoch
// warm + 1, then halves it at every epoch without improvement: a schedule
// that moves the rate after improving epochs too, in one type.
type warmup struct {
	base float64
	warm int
}

func (warmup) Improves(score, best float64) bool { return score < best }
func (w warmup) Next(lr float64, epoch, bad int) float64 {
	if epoch < w.warm {
		return w.base * float64(epoch+1) / float64(w.warm+1)
	}
	if epoch == w.warm {
		return w.base
	}
	if bad > 0 {
		return lr / 2
	}
	return lr
}
func (warmup) Check() error { return nil }

// TestFitWarmupSchedule: Fit calls Next after every epoch, improving or
// not, so a warmup is a schedule of its own; a run stopped after epoch 3
// resumes with the rates replayed from its history.
func TestFitWarmupSchedule(t *testing.T) {
	scores := []float64{5, 4, 3, 3.5, 2, 2.5, 2.6}
	sched := warmup{base: 1, warm: 3}
	cfg := func(ckpt string, stopAfter int) TrainConfig {
		return TrainConfig{Optimizer: NewSGD(0.25), Schedule: sched, EarlyStop: 2, MaxEpochs: 10, Checkpoint: ckpt,
			Recorder: stopAfterEpochs(stopAfter)}
	}
	newModel := func() *Model { return tinyLSTM(t) }
	m := newModel()
	res, err := Fit(m, &scriptedObjective{m: m, scores: scores}, cfg("", 0))
	if err != nil {
		t.Fatal(err)
	}
	// Rates: 0.25, 0.5, 0.75 (warmup), 1 (base), 0.5 after epoch 4 (no
	// improvement), 0.5 after epoch 5 (improved), then epochs 6 and 7
	// without improvement stop the run (early stop 2).
	want := []float64{0.25, 0.5, 0.75, 1, 0.5, 0.5, 0.25}
	if len(res.History) != len(want) {
		t.Fatalf("%d epochs, want %d", len(res.History), len(want))
	}
	for i, r := range res.History {
		if r.LearningRate != want[i] {
			t.Errorf("epoch %d at rate %g, want %g", i+1, r.LearningRate, want[i])
		}
	}
	ckpt := filepath.Join(t.TempDir(), "checkpoint")
	m2 := newModel()
	obj := &scriptedObjective{m: m2, scores: scores}
	if r, err := Fit(m2, obj, cfg(ckpt, 3)); err != nil || r.Finished {
		t.Fatalf("interrupted run: %v", err)
	}
	r2, err := Fit(m2, obj, cfg(ckpt, 0))
	if err != nil {
		t.Fatal(err)
	}
	for i := range r2.History {
		if r2.History[i].LearningRate != want[i] {
			t.Errorf("resumed run: epoch %d at rate %g, want %g", i+1, r2.History[i].LearningRate, want[i])
		}
	}
}

// TestPerplexityPlateau checks PerplexityPlateau's methods against their
// definition (PyTorch's ReduceLROnPlateau on the perplexity for the rate;
// any decrease for the best parameters).
func TestPerplexityPlateau(t *testing.T) {
	p := PerplexityPlateau{Factor: 0.5, Patience: 0, Threshold: 1e-4}
	inf := math.Inf(1)
	for _, tc := range []struct {
		score, best     float64
		improves, rates bool
	}{
		{4.8, inf, true, true}, {math.NaN(), inf, false, false},
		{4.8586, 4.8590, true, true},       // a fall of 4·10⁻⁴ nats: ppl × 0.9996
		{4.85895, 4.8590, true, false},     // 5·10⁻⁵ nats: ppl × 0.99995, above 1 − 10⁻⁴
		{4.8590, 4.8590, false, false},     // no change
		{4.8600, 4.8590, false, false},     // worse
		{4.85803, 4.85849, true, true},     // jm-hidden-247-lr16's epoch 8 (Plateau on the cross-entropy: false)
		{math.NaN(), 4.8590, false, false}, // NaN never improves
		{-1e-3, 0, true, true},             // perplexity below 1 (a score below 0)
	} {
		if got := p.Improves(tc.score, tc.best); got != tc.improves {
			t.Errorf("Improves(%g, %g) = %v, want %v", tc.score, tc.best, got, tc.improves)
		}
		if got := p.RateImproves(tc.score, tc.best); got != tc.rates {
			t.Errorf("RateImproves(%g, %g) = %v, want %v", tc.score, tc.best, got, tc.rates)
		}
	}
	if (Plateau{Factor: 0.5, Threshold: 1e-4}).Improves(4.85803, 4.85849) {
		t.Errorf("Plateau on the cross-entropy counts a fall of 4.6e-4 nats from 4.858 as an improvement; the test's premise is wrong")
	}
	for _, bad := range []PerplexityPlateau{{Factor: 0}, {Factor: 0.5, Patience: -1}, {Factor: 0.5, Threshold: 1}} {
		if bad.Check() == nil {
			t.Errorf("Check(%+v) accepted", bad)
		}
	}
	if scheduleSetting(&p) != scheduleSetting(p) || scheduleSetting(p) != "PerplexityPlateau{Factor:0.5 Patience:0 Threshold:0.0001}" {
		t.Errorf("scheduleSetting(%+v) = %q", p, scheduleSetting(p))
	}
}

// TestFitPerplexityPlateau: Fit keeps two judgements with a RateSchedule.
// An epoch whose score falls by less than the rate's threshold is an
// improvement (best parameters, early stopping) but decays the rate, and
// the rate's best moves only with the epochs that it accepts; a run
// interrupted and resumed replays the same.
func TestFitPerplexityPlateau(t *testing.T) {
	// Rate rule: relative threshold 0.1 on exp(score), i.e. a fall of
	// more than −ln 0.9 ≈ 0.1054 nats.
	sched := PerplexityPlateau{Factor: 0.5, Patience: 0, Threshold: 0.1}
	scores := []float64{
		5,    // 1: improves (both)
		4.95, // 2: improves; rate: 0.05 < 0.1054, decay → 0.5 after it
		4.9,  // 3: improves; rate best still 5: fall 0.1 < 0.1054, decay → 0.25
		4.85, // 4: improves; rate: fall 0.15 from 5, accepted (rate best 4.85)
		4.86, // 5: no improvement (bad 1); rate decays → 0.125
		4.84, // 6: improves; rate: fall 0.01 from 4.85, decay → 0.0625
		4.9,  // 7: bad 1 → decay → 0.03125
		4.9,  // 8: bad 2: early stop
	}
	want := []struct {
		improved bool
		lr       float64
	}{{true, 1}, {true, 1}, {true, 0.5}, {true, 0.25}, {false, 0.25}, {true, 0.125}, {false, 0.0625}, {false, 0.03125}}
	cfg := func(ckpt string, stopAfter int) TrainConfig {
		return TrainConfig{Optimizer: NewSGD(1), Schedule: &sched, EarlyStop: 2, MaxEpochs: 20, Checkpoint: ckpt,
			Recorder: stopAfterEpochs(stopAfter)}
	}
	newModel := func() *Model { return tinyLSTM(t) }
	m := newModel()
	res, err := Fit(m, &scriptedObjective{m: m, scores: scores}, cfg("", 0))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.History) != len(want) || !res.Finished || res.BestEpoch != 6 {
		t.Fatalf("%d epochs (finished %v, best %d), want %d finished with best epoch 6", len(res.History), res.Finished, res.BestEpoch, len(want))
	}
	for i, w := range want {
		if r := res.History[i]; r.Improved != w.improved || r.LearningRate != w.lr {
			t.Errorf("epoch %d: improved %v at lr %g, want %v at %g", i+1, r.Improved, r.LearningRate, w.improved, w.lr)
		}
	}
	for _, stop := range []int{3, 5} {
		ckpt := filepath.Join(t.TempDir(), "checkpoint")
		m2 := newModel()
		obj := &scriptedObjective{m: m2, scores: scores}
		if r, err := Fit(m2, obj, cfg(ckpt, stop)); err != nil || r.Finished {
			t.Fatalf("run interrupted after epoch %d: %v", stop, err)
		}
		r2, err := Fit(m2, obj, cfg(ckpt, 0))
		if err != nil {
			t.Fatalf("resumed after epoch %d: %v", stop, err)
		}
		if len(r2.History) != len(want) || r2.BestEpoch != 6 {
			t.Fatalf("resumed after epoch %d: %d epochs, best %d", stop, len(r2.History), r2.BestEpoch)
		}
		for i, w := range want {
			if r := r2.History[i]; r.Improved != w.improved || r.LearningRate != w.lr {
				t.Errorf("resumed after epoch %d: epoch %d improved %v at lr %g, want %v at %g", stop, i+1, r.Improved, r.LearningRate, w.improved, w.lr)
			}
		}
	}
}

// weightedObjective is a scriptedObjective whose steps have the given
// weight.
type weightedObjective struct {
	scriptedObjective
	weight float64
}

func (o *weightedObjective) Gradient(e, i int) (float64, float64, [][]float64, error) {
	loss, _, grads, err := o.scriptedObjective.Gradient(e, i)
	return loss, o.weight, grads, err
}

// TestFitRefusesUnusableScores: a step's weight that is negative or not
// finite, an epoch of total weight 0 (whose mean loss is 0/0) and a
// validation score of ±Inf are errors that name them, not a NaN in the
// log and a checkpoint that no resume reads.
func TestFitRefusesUnusableScores(t *testing.T) {
	for _, tc := range []struct {
		weight, score float64
		want          string
	}{
		{-1, 1, "weight -1"},
		{math.NaN(), 1, "weight NaN"},
		{math.Inf(1), 1, "weight +Inf"},
		{0, 1, "total weight of 0"},
		{1, math.Inf(1), "validation score is +Inf"},
		{1, math.Inf(-1), "validation score is -Inf"},
	} {
		m := tinyLSTM(t)
		o := &weightedObjective{scriptedObjective{m: m, scores: []float64{tc.score}}, tc.weight}
		path := filepath.Join(t.TempDir(), "ck")
		_, err := Fit(m, o, TrainConfig{LR: 0.1, MaxEpochs: 1, Checkpoint: path, Recorder: JSONLog(filepath.Join(t.TempDir(), "log.jsonl"))})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("weight %g, score %g: %v; want an error saying %q", tc.weight, tc.score, err, tc.want)
		}
	}
	// A finite positive weight trains.
	m := tinyLSTM(t)
	if _, err := Fit(m, &weightedObjective{scriptedObjective{m: m, scores: []float64{1}}, 1}, TrainConfig{LR: 0.1, MaxEpochs: 1}); err != nil {
		t.Error(err)
	}
}
