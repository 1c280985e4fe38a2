package nsrnn

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestMemoryRuleBoundsCounts checks that counts whose memory would exceed
// the memory rule (MaxGraphBytes) are refused with an error wrapping
// ErrTooLarge, before anything is allocated, and that ordinary counts are
// not.
func TestMemoryRuleBoundsCounts(t *testing.T) {
	tiny := newTiny(t, streamConfigs()["lstm"], 1)
	// The Penn Treebank sizes: 10,000 words, 256 units.
	ptbSize := newTiny(t, Config{Kind: LSTM, InputVocab: 10000, OutputVocab: 10000, Embedding: 256, Hidden: 256, InitRange: 0.05}, 1)
	unlimited := newTiny(t, Config{Kind: RNS, InputVocab: 3, OutputVocab: 4, Hidden: 4, States: 2, Symbols: 3}, 1)
	for _, c := range []struct {
		name string
		run  func() error
		want string // "" for no error
	}{
		{"2^20 streams at the PTB sizes", func() error { _, err := ptbSize.NewStream(1 << 20); return err }, "streams"},
		{"32 streams at the PTB sizes", func() error { _, err := ptbSize.NewStream(32); return err }, ""},
		{"2^20 streams of a tiny model", func() error { _, err := tiny.NewStream(1 << 20); return err }, ""},
		{"a stream of 2^40 streams", func() error { _, err := tiny.NewStream(1 << 40); return err }, "streams"},
		{"Sample(2^40)", func() error { _, err := tiny.Sample(1<<40, SampleOptions{MaxLength: 10}); return err }, "strings"},
		{"Sample(2^24) of length 2^20", func() error { _, err := tiny.Sample(1<<24, SampleOptions{MaxLength: 1 << 20}); return err }, "strings"},
		{"Sample with a batch of 2^24", func() error {
			_, err := ptbSize.Sample(1<<24, SampleOptions{MaxLength: 1, Batch: 1 << 24})
			return err
		}, "batch"},
		{"Sample(3)", func() error { _, err := tiny.Sample(3, SampleOptions{MaxLength: 5}); return err }, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.run()
			switch {
			case c.want == "" && err != nil:
				t.Errorf("error %v", err)
			case c.want != "" && (!errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "GiB")):
				t.Errorf("error %v, want one wrapping ErrTooLarge that says %q and GiB", err, c.want)
			}
		})
	}
	// The unlimited stack's runner has the stacks' own bound.
	if _, err := unlimited.Sample(1, SampleOptions{MaxLength: 1 << 20}); err == nil || !strings.Contains(err.Error(), "GiB") {
		t.Errorf("sampling 2^20 steps of an unlimited stack: %v", err)
	}
	// A graph is bounded by the fuller estimate: 2^20 tiny streams hold a
	// token, not a chunk of 8.
	s, err := tiny.NewStream(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	in := make([][]int, 1<<20)
	row := make([]int, 8)
	for i := range in {
		in[i] = row
	}
	if _, err := s.Loss(in, in); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a chunk of 8 tokens in 2^20 streams: %v", err)
	}
}

// TestLibraryChecks checks the library's refusals of impossible values:
// initialization ranges, another kind's stream state, learning rates,
// precisions and checkpoint intervals.
func TestLibraryChecks(t *testing.T) {
	t.Run("InitRange", func(t *testing.T) {
		for _, r := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 1e308, 101, -0.1} {
			cfg := streamConfigs()["lstm"]
			cfg.InitRange = r
			if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "initialization range") {
				t.Errorf("InitRange %g: error %v", r, err)
			}
			if _, err := New(cfg, 1); err == nil {
				t.Errorf("New with InitRange %g: no error", r)
			}
		}
		for _, r := range []float64{0, 0.05, 1, MaxInitRange} {
			cfg := streamConfigs()["lstm"]
			cfg.InitRange = r
			if err := cfg.Validate(); err != nil {
				t.Errorf("InitRange %g: %v", r, err)
			}
		}
	})
	t.Run("SetState", func(t *testing.T) {
		stateOf := func(name string) *State {
			m := newTiny(t, streamConfigs()[name], 1)
			s, err := m.NewStream(2)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.Next([]int{1, 2}); err != nil {
				t.Fatal(err)
			}
			return s.State()
		}
		rns, err := newTiny(t, streamConfigs()["rns-D3"], 1).NewStream(2)
		if err != nil {
			t.Fatal(err)
		}
		for _, other := range []string{"lstm", "jm-depth3", "rns-D35", "ns-D3", "vrns-D3"} {
			if err := rns.SetState(stateOf(other)); err == nil || !strings.Contains(err.Error(), "model") {
				t.Errorf("a %s state given to an rns-D3 stream: %v", other, err)
			}
		}
		// The same configuration, another model (and initialization): fine.
		cfg := streamConfigs()["rns-D3"]
		cfg.InitRange = 0.1
		m := newTiny(t, cfg, 2)
		same, _ := m.NewStream(2)
		if err := same.SetState(stateOf("rns-D3")); err != nil {
			t.Error(err)
		}
		if _, err := same.Next([]int{0, 1}); err != nil {
			t.Error(err)
		}
	})
	t.Run("learning rate", func(t *testing.T) {
		train, valid, _, in, out := tinyTask(t, 10, 5)
		for _, lr := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, -0.5} {
			if err := CheckLearningRate(lr); err == nil {
				t.Errorf("CheckLearningRate(%g): no error", lr)
			}
			if _, err := NewSGDChecked(lr); err == nil {
				t.Errorf("NewSGDChecked(%g): no error", lr)
			}
			for name, opt := range map[string]Optimizer{"sgd": NewSGD(lr), "adam": NewAdam(lr, nil)} {
				m := newTiny(t, tinyConfig(LSTM, in, out), 1)
				before := paramData(m)
				if _, err := Train(m, train, valid, TrainConfig{Optimizer: opt, MaxEpochs: 1}); err == nil || !strings.Contains(err.Error(), "learning rate") {
					t.Errorf("Train with %s(%g): %v", name, lr, err)
				}
				if !sameBits(before, paramData(m)) {
					t.Errorf("Train with %s(%g) changed the model", name, lr)
				}
			}
		}
		if o, err := NewSGDChecked(0.5); err != nil || o.LearningRate() != 0.5 {
			t.Errorf("NewSGDChecked(0.5): %v, %v", o, err)
		}
	})
	t.Run("Precision", func(t *testing.T) {
		m := newTiny(t, streamConfigs()["lstm"], 1)
		m.Precision = Precision(7)
		if _, err := m.Loss([][]int{{1, 2}}); err == nil || !strings.Contains(err.Error(), "Precision(7)") {
			t.Errorf("Loss with Precision(7): %v", err)
		}
		s, _ := m.NewStream(1)
		if _, err := s.Next([]int{1}); err == nil || !strings.Contains(err.Error(), "Precision(7)") {
			t.Errorf("a stream with Precision(7): %v", err)
		}
		m.Precision = Float32
		if _, err := m.Loss([][]int{{1, 2}}); err != nil {
			t.Error(err)
		}
	})
	t.Run("negative fields", func(t *testing.T) {
		for _, c := range []struct {
			set  func(*Model)
			want string
		}{
			{func(m *Model) { m.Workers = -3 }, "Model.Workers -3"},
			{func(m *Model) { m.MaxGraphs = -1 }, "Model.MaxGraphs -1"},
			{func(m *Model) { m.GraphCacheBytes = -1 }, "Model.GraphCacheBytes -1"},
		} {
			m := newTiny(t, streamConfigs()["rns-D3"], 1)
			c.set(m)
			if _, err := m.Loss([][]int{{1, 2}}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("Loss: %v, want an error naming %s", err, c.want)
			}
			s, _ := m.NewStream(1)
			if _, err := s.Next([]int{1}); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("a stream: %v, want an error naming %s", err, c.want)
			}
		}
	})
	t.Run("zero Model", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "model")
		for name, call := range map[string]func(*Model){
			"LogProb":  func(m *Model) { m.LogProb([]int{0}) },
			"Loss":     func(m *Model) { m.Loss([][]int{{0}}) },
			"Save":     func(m *Model) { m.Save(path) },
			"Gradient": func(m *Model) { m.Gradient([][]int{{0}}) },
		} {
			for _, m := range []*Model{nil, {}} {
				func() {
					defer func() {
						if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "not made by New") {
							t.Errorf("%s on %v: recovered %v, want the panic of a Model not made by New", name, m, r)
						}
					}()
					call(m)
				}()
			}
		}
		if entries, _ := os.ReadDir(filepath.Dir(path)); len(entries) != 0 {
			t.Errorf("Save of the zero Model left %v", entries)
		}
	})
	t.Run("CheckpointEvery", func(t *testing.T) {
		train, valid, _, in, out := tinyTask(t, 10, 5)
		path := filepath.Join(t.TempDir(), "ckpt")
		_, err := Train(newTiny(t, tinyConfig(LSTM, in, out), 1), train, valid,
			TrainConfig{LR: 0.01, MaxEpochs: 1, Checkpoint: path, CheckpointEvery: -1})
		if err == nil || !strings.Contains(err.Error(), "checkpoint interval") {
			t.Errorf("CheckpointEvery −1ns: %v", err)
		}
	})
}

// TestStreamCheckChunk checks that CheckChunk refuses exactly the chunks
// whose run the memory rules refuse, with the same error, for the graph's
// rule (a long chunk at the Penn Treebank sizes) and for the stacks' rule
// (a window or depth limit far beyond memory), and accepts the others.
func TestStreamCheckChunk(t *testing.T) {
	ptbSize := newTiny(t, Config{Kind: LSTM, InputVocab: 10000, OutputVocab: 10000, Embedding: 256, Hidden: 256, InitRange: 0.05}, 1)
	wide := streamConfigs()["rns-D3"]
	wide.Window = 1 << 26
	deep := streamConfigs()["jm-depth3"]
	deep.DepthLimit = 1 << 28
	vwide := streamConfigs()["vrns-D3"]
	vwide.Window = 1 << 26
	for _, c := range []struct {
		name  string
		m     *Model
		batch int
		n     int
		want  string // "" for no error
	}{
		{"PTB sizes, 35 tokens", ptbSize, 32, 35, ""},
		{"PTB sizes, 2000 tokens", ptbSize, 32, 2000, "positions"},
		{"window 2^26", newTiny(t, wide, 1), 2, 4, "window 67108864"},
		{"window 3", newTiny(t, streamConfigs()["rns-D3"], 1), 2, 4, ""},
		{"vector stack, window 2^26", newTiny(t, vwide, 1), 2, 4, "window 67108864"},
		{"depth limit 2^28", newTiny(t, deep, 1), 2, 4, "depth limit 268435456"},
		{"depth limit 3", newTiny(t, streamConfigs()["jm-depth3"], 1), 2, 4, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := c.m.NewStream(c.batch)
			if err != nil {
				t.Fatal(err)
			}
			check := s.CheckChunk(c.n)
			in := make([][]int, c.batch)
			for i := range in {
				in[i] = make([]int, c.n)
			}
			_, run := s.Loss(in, in)
			switch {
			case c.want == "" && (check != nil || run != nil):
				t.Errorf("CheckChunk: %v; Loss: %v; want both to succeed", check, run)
			case c.want != "" && (check == nil || !strings.Contains(check.Error(), c.want) || !strings.Contains(check.Error(), "GiB")):
				t.Errorf("CheckChunk: %v, want an error that says %q and GiB", check, c.want)
			case c.want != "" && (run == nil || !strings.Contains(run.Error(), check.Error())):
				t.Errorf("Loss: %v, want the error of CheckChunk, %v", run, check)
			}
		})
	}
	s, _ := ptbSize.NewStream(1)
	if err := s.CheckChunk(0); err == nil {
		t.Error("CheckChunk(0): no error")
	}
}

// TestCheckTraining: a model within MaxParams but whose training would
// keep more than MaxTrainingBytes for its parameters is refused by
// CheckTraining and by Fit, before the optimizer allocates its state; a
// model within both trains.
func TestCheckTraining(t *testing.T) {
	huge := Config{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 7000} // 196 million parameters
	if err := huge.Validate(); err != nil {
		t.Fatalf("a model of %v is within MaxParams: %v", huge, err)
	}
	if err := huge.CheckTraining(); !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "hidden") {
		t.Errorf("CheckTraining(hidden 7000): %v, want ErrTooLarge naming hidden", err)
	}
	// Fit's refusal, on a model small enough to build here, under a
	// limit lowered to below its training's needs.
	defer func(l float64) { trainingLimit = l }(trainingLimit)
	big := Config{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 50}
	trainingLimit = 1 << 20 // 4·50·53 + … ≈ 11,000 parameters: 0.6 MB of copies; 1 MiB is enough
	if err := big.CheckTraining(); err != nil {
		t.Fatalf("hidden 50 under 1 MiB: %v", err)
	}
	trainingLimit = 1 << 19
	small := Config{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 5}
	if err := small.CheckTraining(); err != nil {
		t.Errorf("CheckTraining(hidden 5): %v", err)
	}
	if err := (Config{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: -1}).CheckTraining(); err == nil {
		t.Error("CheckTraining of an invalid configuration: no error")
	}
	m, err := New(big, 1)
	if err != nil {
		t.Fatal(err)
	}
	train := []Batch{{{0, 1}}}
	if _, err := Train(m, train, train, TrainConfig{LR: 0.01, MaxEpochs: 1}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("Train(hidden 50) under 512 KiB: %v, want ErrTooLarge", err)
	}
}

// TestCheckBatch: CheckBatch allows what a run allows and refuses, with
// ErrTooLarge, what a run would refuse for its memory.
func TestCheckBatch(t *testing.T) {
	m, err := New(Config{Kind: RNS, InputVocab: 3, OutputVocab: 4, Hidden: 5, States: 2, Symbols: 3}, 1)
	if err != nil {
		t.Fatal(err)
	}
	batch := [][]int{{0, 1, 2, 1}, {1, 1, 0, 2}}
	if err := m.CheckBatch(len(batch), len(batch[0])); err != nil {
		t.Errorf("CheckBatch(2, 4): %v", err)
	}
	if _, err := m.Loss(batch); err != nil {
		t.Errorf("Loss of the same batch: %v", err)
	}
	if err := m.CheckBatch(1000, 4000); !errors.Is(err, ErrTooLarge) {
		t.Errorf("CheckBatch(1000, 4000): %v, want ErrTooLarge", err)
	}
	// The stack's bound alone (a graph of this size is within
	// MaxGraphBytes): refused as a run would be.
	long := make([][]int, 2)
	for i := range long {
		long[i] = make([]int, 4000)
	}
	want := m.CheckBatch(2, 4000)
	if _, err := m.Loss(long); !errors.Is(want, ErrTooLarge) || err == nil || err.Error() != want.Error() {
		t.Errorf("CheckBatch(2, 4000): %v; Loss: %v; want the same ErrTooLarge", want, err)
	}
	if err := m.CheckBatch(0, 3); err == nil {
		t.Error("CheckBatch(0, 3): no error")
	}
	if err := m.CheckBatch(math.MaxInt, math.MaxInt); !errors.Is(err, ErrTooLarge) {
		t.Errorf("CheckBatch(MaxInt, MaxInt): %v, want ErrTooLarge", err)
	}
}

// TestFitRefusesBadInputs: what Fit and Train are given by the caller (an
// empty batch, an optimizer made for other parameters, a gradient of the
// wrong shape, no model or objective) is an error, not a panic.
func TestFitRefusesBadInputs(t *testing.T) {
	m, err := New(Config{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	good := []Batch{{{0, 1}, {1, 2}}}
	if _, err := Train(m, []Batch{{}}, good, TrainConfig{LR: 0.01, MaxEpochs: 1}); err == nil {
		t.Error("an empty training batch: no error")
	}
	if _, err := Train(m, good, good, TrainConfig{Optimizer: NewAdam(0.01, []int{3}), MaxEpochs: 1}); err == nil || !strings.Contains(err.Error(), "Adam") {
		t.Errorf("an Adam optimizer for other parameters: %v", err)
	}
	nan := NewAdam(0.01, m.paramSizes())
	nan.Beta1 = math.NaN()
	if _, err := Train(m, good, good, TrainConfig{Optimizer: nan, MaxEpochs: 1}); err == nil || !strings.Contains(err.Error(), "β1") {
		t.Errorf("an Adam optimizer with β1 NaN: %v", err)
	}
	if _, err := Fit(m, badObjective{}, TrainConfig{LR: 0.01, MaxEpochs: 1}); err == nil || !strings.Contains(err.Error(), "gradient") {
		t.Errorf("an objective with a short gradient: %v", err)
	}
	if _, err := Fit(nil, badObjective{}, TrainConfig{LR: 0.01}); err == nil {
		t.Error("Fit without a model: no error")
	}
	if _, err := Fit(m, nil, TrainConfig{LR: 0.01}); err == nil {
		t.Error("Fit without an objective: no error")
	}
	for _, obj := range []Objective{WithLowerBound(nil, 1), WithoutLowerBound(nil)} {
		if _, err := Fit(m, obj, TrainConfig{LR: 0.01}); err == nil {
			t.Error("Fit with a bound around no objective: no error")
		}
	}
	if _, err := SentenceObjective(nil, good, good, 1); err == nil {
		t.Error("SentenceObjective without a model: no error")
	}
	// A bad batch anywhere in the training or validation data is refused
	// before the first step, naming its set and index, and the model is
	// left as it was.
	train := []Batch{{{0, 1}, {1, 2}}, {{2, 2}}, {{1, 0}}, {{0, 9, 0}}}
	for _, c := range []struct {
		train, valid []Batch
		want         string
	}{
		{train, good, "training batch 3 (of 4): sequence 0 has symbol 9 at position 1"},
		{good, []Batch{{{0, 1}}, {{1}, {1, 2}}}, "validation batch 1 (of 2): batch sequences must have one length"},
		{good, []Batch{{}}, "validation batch 0 (of 1): empty batch"},
	} {
		before := paramData(m)
		_, err := Train(m, c.train, c.valid, TrainConfig{LR: 0.01, MaxEpochs: 1, NoLowerBound: true})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("error %v, want one saying %q", err, c.want)
		}
		if !sameBits(before, paramData(m)) {
			t.Errorf("%q: the refused training changed the model", c.want)
		}
	}
	for _, c := range []struct {
		cfg  TrainConfig
		want string
	}{
		{TrainConfig{LR: 0.01, MaxEpochs: -1}, "TrainConfig.MaxEpochs -1 must not be negative"},
		{TrainConfig{LR: 0.01, EarlyStop: -2}, "TrainConfig.EarlyStop -2 must not be negative"},
	} {
		if _, err := Train(m, good, good, c.cfg); err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "and max epochs") {
			t.Errorf("error %v, want %q", err, c.want)
		}
	}
}

// badObjective returns a gradient with one slice, whatever the model.
type badObjective struct{}

func (badObjective) Steps() int { return 1 }
func (badObjective) Gradient(epoch, step int) (float64, float64, [][]float64, error) {
	return 1, 1, [][]float64{{0}}, nil
}
func (badObjective) Validate() (float64, error) { return 1, nil }

// TestNilArguments: the nil initial State reports batch 0, and SampleEach
// and CrossEntropy without their function return errors.
func TestNilArguments(t *testing.T) {
	var st *State
	if st.Batch() != 0 {
		t.Errorf("nil State: batch %d", st.Batch())
	}
	m, err := New(Config{Kind: LSTM, InputVocab: 3, OutputVocab: 3, Hidden: 4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SampleEach(2, SampleOptions{MaxLength: 4}, nil); err == nil {
		t.Error("SampleEach without yield: no error")
	}
	s, err := m.NewStream(1)
	if err != nil {
		t.Fatal(err)
	}
	if s.State().Batch() != 0 {
		t.Error("a fresh stream's state has a batch")
	}
	if _, _, err := s.CrossEntropy(1, nil); err == nil {
		t.Error("CrossEntropy without chunks: no error")
	}
}

// TestClipGradNormOverflow: gradients whose squares overflow float64 but
// whose entries are finite are scaled to the threshold, as smaller ones
// are, not zeroed by a norm of +Inf; an infinite entry still gives +Inf.
func TestClipGradNormOverflow(t *testing.T) {
	g := [][]float64{{3e200, 0}, {-4e200}}
	if norm := ClipGradNorm(g, 1); math.Abs(norm-5e200) > 1e-12*5e200 {
		t.Errorf("norm %g, want 5e200", norm)
	}
	if want := [][]float64{{0.6, 0}, {-0.8}}; math.Abs(g[0][0]-want[0][0]) > 1e-12 || g[0][1] != 0 || math.Abs(g[1][0]-want[1][0]) > 1e-12 {
		t.Errorf("clipped to %v, want %v", g, want)
	}
	small := [][]float64{{3, 0}, {-4}}
	if norm := ClipGradNorm(small, 1); norm != 5 || small[0][0] != 3*(1/(5+1e-6)) {
		t.Errorf("ordinary gradients: norm %v, clipped to %v", norm, small)
	}
	if norm := ClipGradNorm([][]float64{{math.Inf(1), 1}}, 1); !math.IsInf(norm, 1) {
		t.Errorf("an infinite entry: norm %v", norm)
	}
}

// TestWindowLargerThanSentence: in sentence mode a memory-limited stack
// whose window exceeds the strings allocates no more than the unlimited
// stack (it once reserved memory for a carried window it never has) and
// gives its loss bit for bit; as a stream, which carries a window, the
// same window is refused by the memory rule.
func TestWindowLargerThanSentence(t *testing.T) {
	base := Config{Kind: RNS, InputVocab: 3, OutputVocab: 4, Hidden: 4, States: 2, Symbols: 2}
	wide := base
	wide.Window = 100000
	batch := [][]int{{0, 1, 2}, {2, 1, 0}}
	want, err := New(base, 1)
	if err != nil {
		t.Fatal(err)
	}
	wantLoss, err := want.Loss(batch)
	if err != nil {
		t.Fatal(err)
	}
	m, err := New(wide, 1)
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	loss, err := m.Loss(batch)
	runtime.ReadMemStats(&after)
	if err != nil || loss != wantLoss {
		t.Fatalf("window %d: loss %v (%v); the unlimited stack's %v", wide.Window, loss, err, wantLoss)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
		t.Errorf("a loss of two 3-symbol strings allocated %d MiB", grew>>20)
	}
	if _, err := m.NewStream(2); err == nil {
		s, _ := m.NewStream(2)
		if _, err := s.Loss([][]int{{0, 1}, {1, 0}}, [][]int{{1, 2}, {0, 1}}); !errors.Is(err, ErrTooLarge) {
			t.Errorf("a stream with window %d: %v; want ErrTooLarge", wide.Window, err)
		}
	}
}
