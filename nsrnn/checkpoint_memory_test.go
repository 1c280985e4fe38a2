package nsrnn

import (
	"bytes"
	"encoding/gob"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// A checkpoint is written in pieces: besides the model, the best model
// and the optimizer's moments that training holds anyway, writing one
// allocates a small, fixed amount, however large the model (a model of
// millions of parameters once died of memory in the encoder, leaving no
// checkpoint). Saving a model file likewise.
func TestCheckpointBoundedMemory(t *testing.T) {
	m := newTiny(t, Config{Kind: LSTM, InputVocab: 2000, OutputVocab: 2000, Embedding: 200, Hidden: 100}, 1)
	opt := NewAdam(0.01, m.paramSizes())
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range opt.M {
		for j := range opt.M[i] {
			opt.M[i][j], opt.V[i][j] = rng.NormFloat64(), rng.ExpFloat64()
		}
	}
	opt.Step = 17
	best, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	modelBytes := len(best)
	st := &trainState{Settings: map[string]string{"a": "b"}, Best: best, Epoch: 1, BestEpoch: 1, BestValid: 2,
		History: []EpochRecord{{Epoch: 1, ValidCrossEntropy: 2}}}
	path := filepath.Join(t.TempDir(), "ckpt")
	obj := &constObjective{}
	const bound = 1 << 20
	measure := func(name string, f func() error) {
		t.Helper()
		if err := f(); err != nil { // a first run sizes what is reused
			t.Fatal(err)
		}
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := f(); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > bound {
			t.Errorf("%s of a model of %d bytes (Adam's moments twice that) allocated %d bytes, want at most %d", name, modelBytes, got, bound)
		}
	}
	measure("saveCheckpoint", func() error { return saveCheckpoint(path, m, opt, obj, st) })
	measure("Save", func() error { return m.Save(filepath.Join(filepath.Dir(path), "model")) })

	// What was written reads back: the model, the best model and the
	// moments, exactly.
	got := readState(t, path)
	back, err := UnmarshalModel(got.Model)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range m.params {
		if !slices.Equal(back.params[i].Data(), p.Data()) {
			t.Fatalf("parameter %s differs after the round trip", p.Name)
		}
	}
	if !bytes.Equal(got.Best, best) {
		t.Error("the best model differs after the round trip")
	}
	opt2 := NewAdam(0.01, m.paramSizes())
	if err := opt2.UnmarshalBinary(got.Optimizer); err != nil {
		t.Fatal(err)
	}
	if opt2.Step != 17 || !slices.EqualFunc(opt2.M, opt.M, slices.Equal) || !slices.EqualFunc(opt2.V, opt.V, slices.Equal) {
		t.Error("Adam's state differs after the round trip")
	}
	saved, err := Load(filepath.Join(filepath.Dir(path), "model"))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range m.params {
		if !slices.Equal(saved.params[i].Data(), p.Data()) {
			t.Fatalf("parameter %s differs in the saved file", p.Name)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(filepath.Dir(path), "model")); !bytes.Equal(b, best) {
		t.Error("Save and MarshalBinary encode the model differently")
	}
}

// constObjective is an objective without state, for checkpoint tests.
type constObjective struct{}

func (*constObjective) Steps() int { return 1 }

func (*constObjective) Gradient(e, i int) (float64, float64, [][]float64, error) {
	return 0, 1, nil, nil
}

func (*constObjective) Validate() (float64, error) { return 0, nil }

// Adam's state reads back from its encoding and from the gob encoding of
// the checkpoints written before it; a damaged encoding is an error, never
// a panic.
func TestAdamStateEncodings(t *testing.T) {
	sizes := []int{3, 0, 5}
	a := NewAdam(0.1, sizes)
	rng := rand.New(rand.NewPCG(2, 2))
	for i := range a.M {
		for j := range a.M[i] {
			a.M[i][j], a.V[i][j] = rng.NormFloat64(), rng.ExpFloat64()
		}
	}
	a.Step, a.LR = 9, 0.05
	enc, err := a.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	var old bytes.Buffer
	if err := gob.NewEncoder(&old).Encode(adamState{a.LR, a.Beta1, a.Beta2, a.Eps, a.Step, a.M, a.V}); err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"current": enc, "gob": old.Bytes()} {
		b := NewAdam(0.1, sizes)
		if err := b.UnmarshalBinary(data); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if b.Step != 9 || b.LR != 0.05 || !slices.EqualFunc(b.M, a.M, slices.Equal) || !slices.EqualFunc(b.V, a.V, slices.Equal) {
			t.Errorf("%s: the state differs after the round trip", name)
		}
	}
	for n := range len(enc) {
		if err := NewAdam(0.1, sizes).UnmarshalBinary(enc[:n]); err == nil {
			t.Fatalf("the encoding cut to %d of %d bytes was accepted", n, len(enc))
		}
	}
	bad := bytes.Clone(enc)
	copy(bad[len(adamMagic)+40:], []byte{0xff, 0xff, 0xff, 0xff})
	if err := NewAdam(0.1, sizes).UnmarshalBinary(bad); err == nil {
		t.Error("an encoding claiming 2³²−1 parameters was accepted")
	}
	nan := bytes.Clone(enc)
	copy(nan[len(nan)-8:], []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f})
	if err := NewAdam(0.1, sizes).UnmarshalBinary(nan); err == nil {
		t.Error("a NaN moment was accepted")
	}
}

// Any bytes given as a checkpoint decode to a state or an error, never a
// panic; so do its model and Adam sections.
func FuzzDecodeCheckpoint(f *testing.F) {
	for _, name := range []string{"checkpoint-v2-stream", "checkpoint-v3-sentences", "checkpoint-v3-stream"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	path := filepath.Join(f.TempDir(), "ckpt")
	m, err := New(Config{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 2}, 1)
	if err != nil {
		f.Fatal(err)
	}
	opt := NewAdam(0.1, m.paramSizes())
	if err := saveCheckpoint(path, m, opt, &constObjective{}, &trainState{Settings: map[string]string{}}); err != nil {
		f.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, data []byte) {
		st, err := decodeCheckpoint(data)
		if err != nil {
			return
		}
		if _, err := UnmarshalModel(st.Model); err != nil {
			return
		}
		NewAdam(0.1, m.paramSizes()).UnmarshalBinary(st.Optimizer)
	})
}

// An optimizer state whose learning rate is not positive and finite (a
// damaged or crafted checkpoint) is refused by UnmarshalBinary, as Fit
// and CheckLearningRate refuse such a rate.
func TestOptimizerStateLearningRate(t *testing.T) {
	// A state that is not sixteen hexadecimal digits is refused, however
	// its first ones read.
	for _, b := range []string{"3fb\x01\x00\x00\x00y9999999a", "3fb999999999999a ", "+fb999999999999a", "3fb999999999999", "3fb999999999999ag"} {
		s := NewSGD(0.5)
		if err := s.UnmarshalBinary([]byte(b)); err == nil || s.LR != 0.5 {
			t.Errorf("SGD state %q: %v, rate %v", b, err, s.LR)
		}
	}
	for _, lr := range []float64{math.NaN(), math.Inf(-1), math.Inf(1), -0.5, 0} {
		b, err := NewSGD(lr).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if err := NewSGD(1).UnmarshalBinary(b); err == nil {
			t.Errorf("SGD state with rate %v accepted", lr)
		}
		a := NewAdam(lr, []int{2})
		b, err = a.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		if err := NewAdam(0.1, []int{2}).UnmarshalBinary(b); err == nil {
			t.Errorf("Adam state with rate %v accepted", lr)
		}
	}
	b, _ := NewSGD(0.25).MarshalBinary()
	s := NewSGD(1)
	if err := s.UnmarshalBinary(b); err != nil || s.LR != 0.25 {
		t.Errorf("SGD state with rate 0.25: %v, rate %v", err, s.LR)
	}
}
