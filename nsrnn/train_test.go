package nsrnn

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/nsrnn/nsrnn/data"
)

// tinyTask returns a tiny marked-reversal training and validation set
// (lengths 5–9, batches of 5) and the validation set's lower bound.
func tinyTask(t *testing.T, trainStrings, validStrings int) (train, valid []Batch, lb float64, in, out int) {
	t.Helper()
	task, err := data.NewTask(data.MarkedReversal)
	if err != nil {
		t.Fatal(err)
	}
	g := task.Grammar()
	rng := rand.New(rand.NewPCG(3, 1))
	tr, err := data.SampleBatches(g, trainStrings, 5, 5, 9, rng)
	if err != nil {
		t.Fatal(err)
	}
	va, err := data.SampleBatches(g, validStrings, 5, 5, 9, rng)
	if err != nil {
		t.Fatal(err)
	}
	bound, err := data.ComputeLowerBound(g, data.Flatten(va), 5, 9)
	if err != nil {
		t.Fatal(err)
	}
	train = append(train, tr...)
	valid = append(valid, va...)
	return train, valid, bound.Entropy, len(task.Terminals()), len(task.Vocabulary())
}

// tinyConfig is a small model of each kind for the tiny task.
func tinyConfig(kind string, in, out int) Config {
	cfg := Config{Kind: kind, InputVocab: in, OutputVocab: out, Hidden: 8}
	switch {
	case IsNondeterministic(kind):
		cfg.States, cfg.Symbols = 2, 3
	case kind == Gref || kind == JM:
		cfg.StackEmbedding = 4
	}
	if kind == VRNS {
		cfg.StackEmbedding = 2
	}
	// A kind's required options of its own (Hyperparameter.Option).
	if k, err := LookupKind(kind); err == nil {
		for _, h := range k.Hyperparameters {
			if name, ok := optionOf(h.Field); ok && h.Required {
				cfg.Options = cfg.Options.With(name, 2)
			}
		}
	}
	return cfg
}

func newTiny(t *testing.T, cfg Config, seed uint64) *Model {
	t.Helper()
	m, err := New(cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// withoutTiming returns the history with the wall-clock fields zeroed.
func withoutTiming(h []EpochRecord) []EpochRecord {
	out := append([]EpochRecord(nil), h...)
	for i := range out {
		out[i].ElapsedSeconds, out[i].EpochSeconds = 0, 0
	}
	return out
}

func paramData(m *Model) [][]float64 {
	out := make([][]float64, len(m.params))
	for i, p := range m.params {
		out[i] = append([]float64(nil), p.Data()...)
	}
	return out
}

// sameBits reports whether two parameter sets are bit-for-bit equal.
func sameBits(a, b [][]float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
		for j := range a[i] {
			if math.Float64bits(a[i][j]) != math.Float64bits(b[i][j]) {
				return false
			}
		}
	}
	return true
}

// TestTrainSmokeEveryKind trains every model kind for a few epochs on a tiny
// marked-reversal set and checks that the training loss and the validation
// cross-entropy go down, and that the result is consistent.
func TestTrainSmokeEveryKind(t *testing.T) {
	train, valid, lb, in, out := tinyTask(t, 40, 20)
	for _, kind := range KindNames() {
		t.Run(kind, func(t *testing.T) {
			m := newTiny(t, tinyConfig(kind, in, out), 1)
			before, err := m.CrossEntropy(valid)
			if err != nil {
				t.Fatal(err)
			}
			res, err := Train(m, train, valid, TrainConfig{LR: 0.02, MaxEpochs: 4, Seed: 5, LowerBound: lb})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Finished || res.Epochs != 4 || len(res.History) != 4 {
				t.Fatalf("finished %v after %d epochs with %d records, want 4 finished epochs", res.Finished, res.Epochs, len(res.History))
			}
			first, last := res.History[0], res.History[len(res.History)-1]
			if !(last.TrainLoss < first.TrainLoss) {
				t.Errorf("training loss went from %.4f (epoch 1) to %.4f (epoch %d), want a decrease", first.TrainLoss, last.TrainLoss, last.Epoch)
			}
			after, err := m.CrossEntropy(valid)
			if err != nil {
				t.Fatal(err)
			}
			if !(after < before) {
				t.Errorf("validation cross-entropy %.4f after training, %.4f before: want a decrease", after, before)
			}
			if after != res.BestValidCrossEntropy {
				t.Errorf("model's validation cross-entropy %v, result's best %v", after, res.BestValidCrossEntropy)
			}
			if math.Abs(res.BestValidDifference-(res.BestValidCrossEntropy-lb)) > 1e-12 || res.LowerBound != lb {
				t.Errorf("difference %v with lower bound %v, want %v − %v", res.BestValidDifference, res.LowerBound, res.BestValidCrossEntropy, lb)
			}
			if !(res.BestValidDifference > 0) {
				t.Errorf("cross-entropy difference %v is not above the lower bound", res.BestValidDifference)
			}
			t.Logf("%s: train loss %.3f → %.3f, valid CE %.4f → %.4f (lower bound %.4f)", kind, first.TrainLoss, last.TrainLoss, before, after, lb)
		})
	}
}

// TestTrainResumeEqualsUninterrupted interrupts a run after 2 epochs with
// StopAfter, resumes it from its checkpoint into a model with different
// initial parameters, and checks that it ends bit-for-bit where an
// uninterrupted run ends.
func TestTrainResumeEqualsUninterrupted(t *testing.T) {
	train, valid, lb, in, out := tinyTask(t, 40, 20)
	for _, kind := range []string{LSTM, RNS} {
		t.Run(kind, func(t *testing.T) {
			cfg := tinyConfig(kind, in, out)
			dir := t.TempDir()
			tc := func(name string) TrainConfig {
				// Patience 1 and a large learning rate make the decay
				// and the best-epoch bookkeeping part of the state.
				return TrainConfig{
					LR: 0.5, Schedule: &Plateau{Factor: 0.5, Patience: 0}, EarlyStop: 4, MaxEpochs: 6, Seed: 9, LowerBound: lb,
					Checkpoint: filepath.Join(dir, name+".ckpt"), Recorder: JSONLog(filepath.Join(dir, name+".jsonl")),
				}
			}

			full := newTiny(t, cfg, 1)
			want, err := Train(full, train, valid, tc("full"))
			if err != nil {
				t.Fatal(err)
			}
			var lrs []float64
			for _, r := range want.History {
				lrs = append(lrs, r.LearningRate)
			}
			t.Logf("uninterrupted: %d epochs, best %d, learning rates %v", want.Epochs, want.BestEpoch, lrs)

			part := newTiny(t, cfg, 1)
			c := tc("part")
			c.Recorder = Recorders{c.Recorder, stopAfter(2)}
			stopped, err := Train(part, train, valid, c)
			if err != nil {
				t.Fatal(err)
			}
			if stopped.Finished || stopped.Epochs != 2 || len(stopped.History) != 2 {
				t.Fatalf("StopAfter 2: finished %v after %d epochs, want unfinished after 2", stopped.Finished, stopped.Epochs)
			}
			// A new process: a model with other initial parameters, which
			// the checkpoint must overwrite.
			resumed := newTiny(t, cfg, 77)
			got, err := Train(resumed, train, valid, tc("part"))
			if err != nil {
				t.Fatal(err)
			}
			if !got.Finished || got.Epochs != want.Epochs || got.BestEpoch != want.BestEpoch {
				t.Errorf("resumed: finished %v, %d epochs, best %d; uninterrupted: %d epochs, best %d",
					got.Finished, got.Epochs, got.BestEpoch, want.Epochs, want.BestEpoch)
			}
			if math.Float64bits(got.BestValidCrossEntropy) != math.Float64bits(want.BestValidCrossEntropy) {
				t.Errorf("best validation cross-entropy %v resumed, %v uninterrupted", got.BestValidCrossEntropy, want.BestValidCrossEntropy)
			}
			if !reflect.DeepEqual(withoutTiming(got.History), withoutTiming(want.History)) {
				t.Errorf("histories differ:\nresumed       %+v\nuninterrupted %+v", withoutTiming(got.History), withoutTiming(want.History))
			}
			if !sameBits(paramData(resumed), paramData(full)) {
				t.Error("final parameters of the resumed run differ from the uninterrupted run's")
			}
			// The logs agree too, apart from the timing fields.
			if a, b := readLog(t, filepath.Join(dir, "part.jsonl")), readLog(t, filepath.Join(dir, "full.jsonl")); !reflect.DeepEqual(withoutTiming(a), withoutTiming(b)) {
				t.Errorf("logs differ:\nresumed       %+v\nuninterrupted %+v", a, b)
			}
			// Training a finished run again changes nothing.
			again := newTiny(t, cfg, 78)
			res, err := Train(again, train, valid, tc("part"))
			if err != nil {
				t.Fatal(err)
			}
			if res.Epochs != want.Epochs || !sameBits(paramData(again), paramData(full)) {
				t.Errorf("re-running a finished run: %d epochs, parameters equal %v", res.Epochs, sameBits(paramData(again), paramData(full)))
			}
		})
	}
}

// stopAfter is a Recorder that stops training after n epochs, as if the
// process had been killed right after the checkpoint.
func stopAfter(n int) Recorder {
	return RecorderFunc(func(e Event) error {
		if e.Kind == EpochDone && e.Epoch >= n && e.Epoch < e.MaxEpochs {
			return ErrStop
		}
		return nil
	})
}

// TestTrainRestoresBest checks that the model ends with the parameters of
// its best validation epoch, not its last.
func TestTrainRestoresBest(t *testing.T) {
	train, valid, lb, in, out := tinyTask(t, 40, 20)
	m := newTiny(t, tinyConfig(LSTM, in, out), 1)
	// A learning rate this large makes the validation cross-entropy
	// oscillate, so the last epoch is not the best one.
	var lastParams [][]float64
	res, err := Train(m, train, valid, TrainConfig{
		LR: 1, MaxEpochs: 10, EarlyStop: 10, Seed: 2, LowerBound: lb,
		Recorder: RecorderFunc(func(e Event) error {
			if e.Kind == EpochDone {
				lastParams = paramData(m)
			}
			return nil
		}),
	})
	if err != nil {
		t.Fatal(err)
	}
	best := math.Inf(1)
	bestEpoch := 0
	for _, r := range res.History {
		if r.ValidCrossEntropy < best {
			best, bestEpoch = r.ValidCrossEntropy, r.Epoch
		}
	}
	if res.BestEpoch != bestEpoch || res.BestValidCrossEntropy != best {
		t.Errorf("result says best epoch %d (%v), history says %d (%v)", res.BestEpoch, res.BestValidCrossEntropy, bestEpoch, best)
	}
	ce, err := m.CrossEntropy(valid)
	if err != nil {
		t.Fatal(err)
	}
	if ce != best {
		t.Errorf("final model's validation cross-entropy %v, best in the history %v (epoch %d)", ce, best, bestEpoch)
	}
	t.Logf("best epoch %d of %d", bestEpoch, res.Epochs)
	if bestEpoch == res.Epochs {
		t.Logf("the best epoch is the last (%d); the restoration is checked only weakly", bestEpoch)
	} else if sameBits(paramData(m), lastParams) {
		t.Errorf("best epoch %d of %d, but the model holds the last epoch's parameters", bestEpoch, res.Epochs)
	}
}

// replayProtocol recomputes, from the validation cross-entropies of a
// history, the improvement flags, learning rates and stopping epoch that
// the formal-language protocol prescribes, and compares them with the history.
func replayProtocol(t *testing.T, h []EpochRecord, cfg TrainConfig) {
	t.Helper()
	best, bad, lr := math.Inf(1), 0, cfg.LR
	sched := CFLPlateau
	switch p := cfg.Schedule.(type) {
	case Plateau:
		sched = p
	case *Plateau:
		sched = *p
	case nil:
	default:
		t.Fatalf("replayProtocol knows the Plateau schedule only, not %T", p)
	}
	for i, r := range h {
		if r.Epoch != i+1 {
			t.Fatalf("record %d is of epoch %d", i, r.Epoch)
		}
		if r.LearningRate != lr {
			t.Errorf("epoch %d ran with learning rate %v, want %v", r.Epoch, r.LearningRate, lr)
		}
		improved := r.ValidCrossEntropy < best
		if r.Improved != improved {
			t.Errorf("epoch %d: improved %v, want %v", r.Epoch, r.Improved, improved)
		}
		if improved {
			best, bad = r.ValidCrossEntropy, 0
		} else {
			bad++
			if bad%(sched.Patience+1) == 0 {
				lr *= sched.Factor
			}
			if bad >= cfg.EarlyStop {
				if i != len(h)-1 {
					t.Errorf("training went on after epoch %d, the %d-th without improvement", r.Epoch, bad)
				}
				return
			}
		}
	}
	if len(h) != cfg.MaxEpochs {
		t.Errorf("training stopped after %d epochs with no reason (max %d)", len(h), cfg.MaxEpochs)
	}
}

// TestTrainDecayAndEarlyStop forces a plateau (a learning rate so small
// that the parameters cannot move, so the validation cross-entropy never
// improves after the first epoch) and checks the learning-rate decay and
// the early stop against the protocol.
func TestTrainDecayAndEarlyStop(t *testing.T) {
	train, valid, lb, in, out := tinyTask(t, 20, 10)
	m := newTiny(t, tinyConfig(LSTM, in, out), 1)
	cfg := TrainConfig{LR: 1e-300, Schedule: &Plateau{Factor: 0.5, Patience: 1}, EarlyStop: 5, MaxEpochs: 30, Seed: 1, LowerBound: lb}
	res, err := Train(m, train, valid, cfg)
	if err != nil {
		t.Fatal(err)
	}
	replayProtocol(t, res.History, cfg)
	// With no improvement after epoch 1, the run stops at epoch 1+5, and
	// the learning rate halves after the 2nd and 4th bad epochs.
	if res.Epochs != 6 || !res.Finished || res.BestEpoch != 1 {
		t.Fatalf("stopped after %d epochs (finished %v), best epoch %d; want 6 and 1", res.Epochs, res.Finished, res.BestEpoch)
	}
	wantLR := []float64{1e-300, 1e-300, 1e-300, 0.5e-300, 0.5e-300, 0.25e-300}
	for i, r := range res.History {
		if r.LearningRate != wantLR[i] {
			t.Errorf("epoch %d: learning rate %v, want %v", r.Epoch, r.LearningRate, wantLR[i])
		}
		if r.Improved != (i == 0) {
			t.Errorf("epoch %d: improved %v", r.Epoch, r.Improved)
		}
	}

	// A normal run obeys the same protocol, whatever its history.
	m = newTiny(t, tinyConfig(LSTM, in, out), 2)
	cfg = TrainConfig{LR: 0.5, Schedule: &Plateau{Factor: 0.7}, EarlyStop: 3, MaxEpochs: 12, Seed: 1, LowerBound: lb}
	res, err = Train(m, train, valid, cfg)
	if err != nil {
		t.Fatal(err)
	}
	replayProtocol(t, res.History, cfg)
}

func TestTrainBadConfig(t *testing.T) {
	train, valid, _, in, out := tinyTask(t, 10, 5)
	m := newTiny(t, tinyConfig(LSTM, in, out), 1)
	for _, lr := range []float64{0, -1, math.NaN()} {
		if _, err := Train(m, train, valid, TrainConfig{LR: lr}); err == nil || !strings.Contains(err.Error(), "learning rate") {
			t.Errorf("LR %v: error %v, want one about the learning rate", lr, err)
		}
	}
	for _, lb := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := Train(m, train, valid, TrainConfig{LR: 0.1, LowerBound: lb, MaxEpochs: 1}); err == nil || !strings.Contains(err.Error(), "lower bound") {
			t.Errorf("LowerBound %v: error %v, want one about the lower bound", lb, err)
		}
		obj, err := SentenceObjective(m, train, valid, 1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := Fit(m, obj, TrainConfig{LR: 0.1, LowerBound: lb, MaxEpochs: 1}); err == nil || !strings.Contains(err.Error(), "lower bound") {
			t.Errorf("Fit: LowerBound %v: error %v, want one about the lower bound", lb, err)
		}
	}
	if _, err := Train(m, nil, valid, TrainConfig{LR: 0.1}); err == nil {
		t.Error("no training batches: no error")
	}
	if _, err := Train(m, train, nil, TrainConfig{LR: 0.1}); err == nil {
		t.Error("no validation batches: no error")
	}
}

// TestTrainBadCheckpoint checks that a corrupted, truncated or mismatched
// checkpoint is an error that names the file, and is left as it was.
func TestTrainBadCheckpoint(t *testing.T) {
	train, valid, _, in, out := tinyTask(t, 10, 5)
	dir := t.TempDir()
	good := filepath.Join(dir, "good")
	if _, err := Train(newTiny(t, tinyConfig(LSTM, in, out), 1), train, valid,
		TrainConfig{LR: 0.01, MaxEpochs: 1, Checkpoint: good}); err != nil {
		t.Fatal(err)
	}
	goodBytes, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bigger := tinyConfig(LSTM, in, out)
	bigger.Hidden = 9
	cases := []struct {
		name string
		path string
		cfg  Config
		want string
	}{
		{"garbage", write("garbage", []byte("this is not a checkpoint\n")), tinyConfig(LSTM, in, out), "not a valid nsrnn checkpoint"},
		{"empty", write("empty", nil), tinyConfig(LSTM, in, out), "not a valid nsrnn checkpoint"},
		{"truncated", write("truncated", goodBytes[:len(goodBytes)/2]), tinyConfig(LSTM, in, out), "checkpoint"},
		{"other hidden size", good, bigger, "different model: hidden: 8 in the checkpoint, now 9"},
		{"other kind", good, tinyConfig(RNS, in, out), "different model"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before, _ := os.ReadFile(c.path)
			_, err := Train(newTiny(t, c.cfg, 1), train, valid, TrainConfig{LR: 0.01, MaxEpochs: 2, Checkpoint: c.path})
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.path) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want one naming %s and saying %q", err, c.path, c.want)
			}
			if after, _ := os.ReadFile(c.path); !bytes.Equal(before, after) {
				t.Error("the checkpoint was changed")
			}
		})
	}
}

// readLog reads a JSON-lines training log strictly.
func readLog(t *testing.T, path string) []EpochRecord {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []EpochRecord
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		dec := json.NewDecoder(bytes.NewReader(sc.Bytes()))
		dec.DisallowUnknownFields()
		var r EpochRecord
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("%s:%d: %v", path, len(out)+1, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestTrainLog checks the JSON-lines log: one record per epoch, each line
// one JSON object with exactly the documented keys, agreeing with the
// result's history.
func TestTrainLog(t *testing.T) {
	train, valid, lb, in, out := tinyTask(t, 20, 10)
	dir := t.TempDir()
	logPath := filepath.Join(dir, "log.jsonl")
	res, err := Train(newTiny(t, tinyConfig(NS, in, out), 1), train, valid,
		TrainConfig{LR: 0.01, MaxEpochs: 3, LowerBound: lb, Recorder: JSONLog(logPath)})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) != 3 || !strings.HasSuffix(string(raw), "\n") {
		t.Fatalf("log has %d lines, want 3 newline-terminated:\n%s", len(lines), raw)
	}
	wantKeys := []string{"elapsed_seconds", "epoch", "epoch_seconds", "improved", "learning_rate",
		"lower_bound", "train_loss", "valid_cross_entropy", "valid_cross_entropy_diff"}
	for i, line := range lines {
		var obj map[string]any
		if err := json.Unmarshal([]byte(line), &obj); err != nil {
			t.Fatalf("line %d: %v: %s", i+1, err, line)
		}
		var keys []string
		for k := range obj {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if !reflect.DeepEqual(keys, wantKeys) {
			t.Errorf("line %d has keys %v, want %v", i+1, keys, wantKeys)
		}
		if obj["epoch"] != float64(i+1) {
			t.Errorf("line %d is of epoch %v", i+1, obj["epoch"])
		}
	}
	recs := readLog(t, logPath)
	if !reflect.DeepEqual(recs, res.History) {
		t.Errorf("log %+v, history %+v", recs, res.History)
	}
	for _, r := range recs {
		if r.LowerBound != lb || math.Abs(r.ValidDifference-(r.ValidCrossEntropy-lb)) > 1e-12 {
			t.Errorf("epoch %d: lower bound %v, difference %v, cross-entropy %v", r.Epoch, r.LowerBound, r.ValidDifference, r.ValidCrossEntropy)
		}
		if !(r.EpochSeconds > 0) || r.ElapsedSeconds < r.EpochSeconds || r.LearningRate != 0.01 {
			t.Errorf("epoch %d: %+v", r.Epoch, r)
		}
	}
	// No temporary files are left next to the log.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v, want only the log", names)
	}
}

// tinyStream returns a stream objective over a random token stream cut
// into 6 chunks of 2 rows of 5 tokens, validated on another stream.
func tinyStream(t *testing.T, m *Model, seed uint64) StatefulObjective {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	tr, trT := randomStream(rng, 2, 30, m.cfg.InputVocab)
	va, vaT := randomStream(rng, 2, 10, m.cfg.InputVocab)
	s, err := m.NewStream(2)
	if err != nil {
		t.Fatal(err)
	}
	vs, _ := m.NewStream(2)
	obj, err := StreamObjective(s, 6,
		func(i int) ([][]int, [][]int, error) { return cols(tr, 5*i, 5*i+5), cols(trT, 5*i, 5*i+5), nil },
		func() (float64, error) {
			ce, _, err := vs.CrossEntropy(2, func(i int) ([][]int, [][]int, error) {
				return cols(va, 5*i, 5*i+5), cols(vaT, 5*i, 5*i+5), nil
			})
			return ce, err
		})
	if err != nil {
		t.Fatal(err)
	}
	return obj
}

// TestFitStreamResumeMidEpoch stops a stream training run in the middle of
// an epoch, right after a mid-epoch checkpoint, and resumes it in a fresh
// model: it ends bit for bit where an uninterrupted run ends. It also
// checks SGD with the plateau schedule at patience 0.
func TestFitStreamResumeMidEpoch(t *testing.T) {
	cfg := streamConfigs()["rns-D3"]
	dir := t.TempDir()
	tc := func(name string) TrainConfig {
		return TrainConfig{
			Optimizer: NewSGD(0.5), Clip: 1, Schedule: &Plateau{Factor: 1 / 1.5, Patience: 0, Threshold: 1e-4},
			EarlyStop: 2, MaxEpochs: 4, Seed: 3, Checkpoint: filepath.Join(dir, name), CheckpointEvery: time.Nanosecond,
		}
	}
	full := newTiny(t, cfg, 1)
	want, err := Fit(full, tinyStream(t, full, 4), tc("full"))
	if err != nil {
		t.Fatal(err)
	}
	part := newTiny(t, cfg, 1)
	c := tc("part")
	c.Recorder = RecorderFunc(func(e Event) error {
		if e.Kind == Checkpointed && e.Epoch == 2 && e.Step == 3 {
			return ErrStop
		}
		return nil
	})
	stopped, err := Fit(part, tinyStream(t, part, 4), c)
	if err != nil {
		t.Fatal(err)
	}
	if stopped.Finished || stopped.Epochs != 1 {
		t.Fatalf("stopped run: finished %v after %d epochs", stopped.Finished, stopped.Epochs)
	}
	resumeAndCompare(t, cfg, c, 2, 3, want, full)
	replayProtocol(t, want.History, TrainConfig{LR: 0.5, Schedule: tc("").Schedule, EarlyStop: 2, MaxEpochs: 4})
}

// TestFitRefusesOtherSettings: resuming a checkpoint with another seed,
// optimizer or data size is an error listing the differences.
func TestFitRefusesOtherSettings(t *testing.T) {
	train, valid, lb, in, out := tinyTask(t, 20, 10)
	path := filepath.Join(t.TempDir(), "ckpt")
	cfg := tinyConfig(LSTM, in, out)
	base := TrainConfig{LR: 0.01, MaxEpochs: 1, Seed: 1, LowerBound: lb, Checkpoint: path, Settings: map[string]string{"task": "marked-reversal"}}
	if _, err := Train(newTiny(t, cfg, 1), train, valid, base); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		edit  func(*TrainConfig)
		train []Batch
		want  string
	}{
		{"seed", func(c *TrainConfig) { c.Seed = 2 }, train, "seed: 1 in the checkpoint, now 2"},
		{"lr", func(c *TrainConfig) { c.LR = 0.02 }, train, "optimizer"},
		{"data", func(c *TrainConfig) {}, train[:2], "steps"},
		{"settings", func(c *TrainConfig) { c.Settings = map[string]string{"task": "dyck"} }, train, "settings.task"},
	} {
		tc := base
		tc.MaxEpochs = 2
		c.edit(&tc)
		_, err := Train(newTiny(t, cfg, 1), c.train, valid, tc)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: error %v, want one naming %s and %q", c.name, err, path, c.want)
		}
	}
	// A larger MaxEpochs continues the run.
	tc := base
	tc.MaxEpochs = 2
	res, err := Train(newTiny(t, cfg, 1), train, valid, tc)
	if err != nil || res.Epochs != 2 {
		t.Errorf("extending MaxEpochs: %v, %+v", err, res)
	}
}

// resumeAndCompare resumes the stream run of the checkpoint in c on a new
// model of cfg, and checks that it resumed at the given epoch and step and
// ended as the uninterrupted run did (want, with parameters those of
// full): the same history, bit for bit the same parameters.
func resumeAndCompare(t *testing.T, cfg Config, c TrainConfig, epoch, step int, want *TrainResult, full *Model) {
	t.Helper()
	resumed := newTiny(t, cfg, 99)
	var started Event
	c.Recorder = RecorderFunc(func(e Event) error {
		if e.Kind == Started {
			started = e
		}
		return nil
	})
	got, err := Fit(resumed, tinyStream(t, resumed, 4), c)
	if err != nil {
		t.Fatal(err)
	}
	if !started.Resumed || started.Epoch != epoch || started.Step != step {
		t.Errorf("resumed at epoch %d step %d (resumed %v), want epoch %d step %d", started.Epoch, started.Step, started.Resumed, epoch, step)
	}
	if !reflect.DeepEqual(withoutTiming(got.History), withoutTiming(want.History)) {
		t.Errorf("histories differ:\nresumed       %+v\nuninterrupted %+v", withoutTiming(got.History), withoutTiming(want.History))
	}
	if !sameBits(paramData(resumed), paramData(full)) {
		t.Error("final parameters of the resumed run differ from the uninterrupted run's")
	}
}

// TextLog writes a line where training starts, one per epoch with its
// record's numbers, one every `every` steps within an epoch, and one at
// the end naming the best epoch; a resumed run says where it resumes.
func TestTextLog(t *testing.T) {
	train, valid, _, in, out := tinyTask(t, 10, 5)
	var b strings.Builder
	path := filepath.Join(t.TempDir(), "ckpt")
	res, err := Train(newTiny(t, tinyConfig(LSTM, in, out), 1), train, valid,
		TrainConfig{LR: 0.01, MaxEpochs: 3, Seed: 1, Checkpoint: path, Recorder: TextLog(&b, 1)})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	steps := len(train)
	if want := 1 + 3*(steps-1) + 3 + 1; len(lines) != want {
		t.Fatalf("%d lines, want %d (start, %d steps but the last of 3 epochs, 3 epochs, end):\n%s", len(lines), want, steps, b.String())
	}
	if !strings.HasPrefix(lines[0], fmt.Sprintf("training starts: at most 3 epochs of %d steps, learning rate 0.01", steps)) {
		t.Errorf("first line %q", lines[0])
	}
	var epochs []string
	for _, l := range lines {
		if strings.HasPrefix(l, "epoch ") && strings.Contains(l, "of at most") {
			epochs = append(epochs, l)
		}
	}
	if len(epochs) != 3 {
		t.Fatalf("%d epoch lines:\n%s", len(epochs), b.String())
	}
	for i, r := range res.History {
		want := fmt.Sprintf("epoch %d of at most 3: training loss %.4f, validation %.4f (%.4f above the lower bound); lr %g;",
			r.Epoch, r.TrainLoss, r.ValidCrossEntropy, r.ValidDifference, r.LearningRate)
		if !strings.HasPrefix(epochs[i], want) || strings.HasSuffix(epochs[i], "best so far") != r.Improved {
			t.Errorf("epoch line %q, want %q… (improved %v)", epochs[i], want, r.Improved)
		}
	}
	wantEnd := fmt.Sprintf("training finished after 3 epochs: the best validation score %.4f, epoch %d,", res.BestValidCrossEntropy, res.BestEpoch)
	if !strings.HasPrefix(lines[len(lines)-1], wantEnd) {
		t.Errorf("last line %q, want %q…", lines[len(lines)-1], wantEnd)
	}
	if !strings.Contains(lines[1], fmt.Sprintf("epoch 1: step 1 of %d, training loss", steps)) {
		t.Errorf("second line %q, want the first step's", lines[1])
	}

	// Resumed with more epochs.
	b.Reset()
	if _, err := Train(newTiny(t, tinyConfig(LSTM, in, out), 1), train, valid,
		TrainConfig{LR: 0.01, MaxEpochs: 4, Seed: 1, Checkpoint: path, Recorder: TextLog(&b, 0)}); err != nil {
		t.Fatal(err)
	}
	if first := strings.SplitN(b.String(), "\n", 2)[0]; !strings.HasPrefix(first, "training resumes in epoch 4 after step 0 of") {
		t.Errorf("the resumed run's first line %q", first)
	}
}

// The lower bound belongs to the objective: Fit with WithLowerBound gives
// the records and result of Fit with TrainConfig.LowerBound, and
// WithoutLowerBound those of NoLowerBound; a bound given both ways is
// refused; a wrapped stream objective still checkpoints its state within
// an epoch and resumes exactly.
func TestObjectiveLowerBound(t *testing.T) {
	train, valid, lb, in, out := tinyTask(t, 20, 10)
	fit := func(wrap func(Objective) Objective, c TrainConfig) *TrainResult {
		t.Helper()
		m := newTiny(t, tinyConfig(RNS, in, out), 1)
		obj, err := SentenceObjective(m, train, valid, 3)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Fit(m, wrap(obj), c)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	same := func(o Objective) Objective { return o }
	base := TrainConfig{LR: 0.01, MaxEpochs: 2, Seed: 3}
	withCfg := base
	withCfg.LowerBound = lb
	a := fit(same, withCfg)
	b := fit(func(o Objective) Objective { return WithLowerBound(o, lb) }, base)
	if !slices.Equal(withoutTiming(a.History), withoutTiming(b.History)) || a.LowerBound != b.LowerBound || a.BestValidDifference != b.BestValidDifference {
		t.Errorf("WithLowerBound: %+v\nTrainConfig.LowerBound: %+v", b, a)
	}
	if b.History[0].ValidDifference != b.History[0].ValidCrossEntropy-lb {
		t.Errorf("the difference %v is not the score %v less the bound %v", b.History[0].ValidDifference, b.History[0].ValidCrossEntropy, lb)
	}
	noCfg := base
	noCfg.NoLowerBound = true
	c := fit(same, noCfg)
	d := fit(func(o Objective) Objective { return WithoutLowerBound(o) }, base)
	if !slices.Equal(withoutTiming(c.History), withoutTiming(d.History)) || !d.NoLowerBound || !d.History[0].NoLowerBound {
		t.Errorf("WithoutLowerBound: %+v\nNoLowerBound: %+v", d, c)
	}
	m := newTiny(t, tinyConfig(RNS, in, out), 1)
	obj, _ := SentenceObjective(m, train, valid, 3)
	if _, err := Fit(m, WithLowerBound(obj, lb), withCfg); err == nil || !strings.Contains(err.Error(), "both") {
		t.Errorf("a bound given twice: %v", err)
	}

	// A wrapped stream objective: stopped within an epoch and resumed.
	cfg := streamConfigs()["rns-D3"]
	dir := t.TempDir()
	full, want := unboundedStream(t, dir)
	path := filepath.Join(dir, "part")
	stoppedStreamOf(t, path, 2, 3, func(o Objective) Objective { return WithoutLowerBound(o) })
	if st := readState(t, path); st.Objective == nil {
		t.Fatal("the wrapped stream objective's state is not in the checkpoint")
	}
	resumed := newTiny(t, cfg, 99)
	got, err := Fit(resumed, WithoutLowerBound(tinyStream(t, resumed, 4)), streamTC(path))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(withoutTiming(got.History), withoutTiming(want.History)) || !sameBits(paramData(resumed), paramData(full)) {
		t.Errorf("the resumed wrapped run differs:\n%+v\n%+v", got.History, want.History)
	}
}

// Through the bound's wrapper, Fit still finds what the objective can do:
// carry a stream's state (StatefulObjective) and keep its gradient on a
// device (deviceObjective).
func TestBoundedUnwraps(t *testing.T) {
	m := newTiny(t, streamConfigs()["rns-D3"], 1)
	obj := WithLowerBound(WithoutLowerBound(tinyStream(t, m, 4)), 0)
	inner := unwrapObjective(obj)
	if _, ok := inner.(StatefulObjective); !ok {
		t.Error("the wrapped stream objective is not stateful")
	}
	if _, ok := inner.(deviceObjective); !ok {
		t.Error("the wrapped stream objective has no device gradient")
	}
	if b, ok := boundOf(obj); !ok || b != obj {
		t.Error("boundOf does not find the outer bound first")
	}
}

// A run checkpointed with a lower bound of 0, what a program passed for
// data of no known bound before WithoutLowerBound (ptb train did), resumes
// without a bound: the same parameters and validation scores as a run
// without a bound from the start, its records after the resumption marked
// NoLowerBound. A checkpoint of another bound does not resume so.
func TestResumeBoundZeroWithoutBound(t *testing.T) {
	cfg := streamConfigs()["rns-D3"]
	dir := t.TempDir()
	full, want := unboundedStream(t, dir)
	for _, bound := range []float64{0, 0.25} {
		path := filepath.Join(dir, fmt.Sprint("part", bound))
		stoppedStreamOf(t, path, 2, 3, func(o Objective) Objective { return WithLowerBound(o, bound) })
		resumed := newTiny(t, cfg, 99)
		got, err := Fit(resumed, WithoutLowerBound(tinyStream(t, resumed, 4)), streamTC(path))
		if bound != 0 {
			if err == nil || !strings.Contains(err.Error(), "lower_bound: 0.25 in the checkpoint, now none") {
				t.Errorf("a checkpoint of bound %v resumed without one: %v", bound, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if !got.NoLowerBound || !sameBits(paramData(resumed), paramData(full)) || len(got.History) != len(want.History) {
			t.Fatalf("resumed without a bound: %+v\nwant %+v", got, want)
		}
		for i, r := range got.History {
			if r.ValidCrossEntropy != want.History[i].ValidCrossEntropy || r.Improved != want.History[i].Improved {
				t.Errorf("epoch %d: %+v, want %+v", r.Epoch, r, want.History[i])
			}
			if r.Epoch >= 2 && !r.NoLowerBound {
				t.Errorf("epoch %d after the resumption is not marked NoLowerBound: %+v", r.Epoch, r)
			}
		}
	}
}

// unboundedStream trains the rns-D3 stream model of streamTC without a
// lower bound, uninterrupted, checkpointing into dir/full.
func unboundedStream(t *testing.T, dir string) (*Model, *TrainResult) {
	t.Helper()
	m := newTiny(t, streamConfigs()["rns-D3"], 1)
	res, err := Fit(m, WithoutLowerBound(tinyStream(t, m, 4)), streamTC(filepath.Join(dir, "full")))
	if err != nil {
		t.Fatal(err)
	}
	return m, res
}
