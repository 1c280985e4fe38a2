package autogradcounter_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/nsrnn/nsrnn/examples/autogradcounter"
	"github.com/nsrnn/nsrnn/examples/counterstack"
	"github.com/nsrnn/nsrnn/internal/gradcheck"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/stacks"
	"github.com/nsrnn/nsrnn/stacks/stackstest"
)

// TestConformance runs the suite that every stack passes: initialization,
// gradients against finite differences (here gorgonia's symbolic ones),
// trailing steps, carried state and errors.
func TestConformance(t *testing.T) {
	stackstest.Test(t, "counter-autograd", func(hidden int) (stacks.Layer, error) {
		return autogradcounter.New("counter", hidden, 2), nil
	})
}

// twins returns a model of each counter kind with the same parameters.
func twins(t testing.TB, cfg nsrnn.Config) (autograd, fused *nsrnn.Model) {
	t.Helper()
	cfg.Kind = autogradcounter.Kind
	a, err := nsrnn.New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	cfg.Kind = counterstack.Kind
	f, err := nsrnn.New(cfg, 3)
	if err != nil {
		t.Fatal(err)
	}
	pa, pf := a.Params(), f.Params()
	if len(pa) != len(pf) {
		t.Fatalf("%d parameters against %d", len(pa), len(pf))
	}
	for i := range pa {
		copy(pf[i].Data(), pa[i].Data())
	}
	return a, f
}

// The stack differentiated by gorgonia computes the same function as the
// fused kernel with its hand-written backward pass: the same loss and the
// same gradient of every parameter of the whole model, in sentence mode
// (several lengths, two workers) and in stream mode across chunks.
func TestEqualsFusedKernel(t *testing.T) {
	cfg := nsrnn.Config{InputVocab: 3, OutputVocab: 4, Hidden: 6, Embedding: 0, Options: nsrnn.MakeOptions(map[string]int{"counters": 3}), InitRange: 0.5}
	a, f := twins(t, cfg)
	rng := rand.New(rand.NewPCG(1, 2))
	for _, workers := range []int{0, 2} {
		a.Workers, f.Workers = workers, workers
		for _, n := range []int{0, 1, 7, 20} {
			batch := make([][]int, 4)
			for i := range batch {
				batch[i] = make([]int, n)
				for j := range batch[i] {
					batch[i][j] = rng.IntN(3)
				}
			}
			la, ga, err := a.Gradient(batch)
			if err != nil {
				t.Fatal(err)
			}
			ga = clone(ga)
			lf, gf, err := f.Gradient(batch)
			if err != nil {
				t.Fatal(err)
			}
			if d := math.Abs(la - lf); d > 1e-12*math.Abs(lf) {
				t.Errorf("workers %d, n = %d: loss %v (autograd) against %v (fused)", workers, n, la, lf)
			}
			if e := gradcheck.TensorsErr(ga, gf); e > 1e-10 {
				t.Errorf("workers %d, n = %d: gradients differ by %.3g relative", workers, n, e)
			}
		}
	}
	// Streams: three chunks, the counters carried.
	sa, err := a.NewStream(2)
	if err != nil {
		t.Fatal(err)
	}
	sf, err := f.NewStream(2)
	if err != nil {
		t.Fatal(err)
	}
	for c := range 3 {
		in, tgt := make([][]int, 2), make([][]int, 2)
		for i := range in {
			for range 5 {
				in[i] = append(in[i], rng.IntN(3))
				tgt[i] = append(tgt[i], rng.IntN(4))
			}
		}
		la, ga, err := sa.Gradient(in, tgt)
		if err != nil {
			t.Fatal(err)
		}
		ga = clone(ga)
		lf, gf, err := sf.Gradient(in, tgt)
		if err != nil {
			t.Fatal(err)
		}
		if d := math.Abs(la - lf); d > 1e-12*math.Abs(lf) {
			t.Errorf("chunk %d: loss %v (autograd) against %v (fused)", c, la, lf)
		}
		if e := gradcheck.TensorsErr(ga, gf); e > 1e-10 {
			t.Errorf("chunk %d: gradients differ by %.3g relative", c, e)
		}
	}
}

// Trained with nsrnn.Train, the two kinds take the same steps.
func TestTrainsAsFusedKernel(t *testing.T) {
	cfg := nsrnn.Config{InputVocab: 3, OutputVocab: 4, Hidden: 5, Options: nsrnn.MakeOptions(map[string]int{"counters": 2})}
	a, f := twins(t, cfg)
	rng := rand.New(rand.NewPCG(4, 4))
	batches := func(k int) []nsrnn.Batch {
		var bs []nsrnn.Batch
		for range k {
			b := make(nsrnn.Batch, 3)
			for i := range b {
				for range 6 {
					b[i] = append(b[i], rng.IntN(3))
				}
			}
			bs = append(bs, b)
		}
		return bs
	}
	train, valid := batches(4), batches(2)
	tc := nsrnn.TrainConfig{LR: 0.05, MaxEpochs: 3, Seed: 1, NoLowerBound: true}
	ra, err := nsrnn.Train(a, train, valid, tc)
	if err != nil {
		t.Fatal(err)
	}
	rf, err := nsrnn.Train(f, train, valid, tc)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ra.History {
		x, y := ra.History[i].ValidCrossEntropy, rf.History[i].ValidCrossEntropy
		if math.Abs(x-y) > 1e-10*math.Abs(y) {
			t.Errorf("epoch %d: validation %v (autograd) against %v (fused)", i+1, x, y)
		}
	}
}

func clone(g [][]float64) [][]float64 {
	out := make([][]float64, len(g))
	for i := range g {
		out[i] = append([]float64(nil), g[i]...)
	}
	return out
}

// BenchmarkTrainStep times one training step (Model.Gradient, forward and
// backward) of the two counter kinds at the size of the paper's CFL
// experiments: batch 10, length 60, 20 hidden units, 20 counters.
func BenchmarkTrainStep(b *testing.B) {
	cfg := nsrnn.Config{InputVocab: 3, OutputVocab: 4, Hidden: 20, Options: nsrnn.MakeOptions(map[string]int{"counters": 20})}
	a, f := twins(b, cfg)
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([][]int, 10)
	for i := range data {
		data[i] = make([]int, 60)
		for j := range data[i] {
			data[i][j] = rng.IntN(3)
		}
	}
	for _, c := range []struct {
		name string
		m    *nsrnn.Model
	}{{"fused", f}, {"autograd", a}} {
		b.Run(c.name, func(b *testing.B) {
			if _, _, err := c.m.Gradient(data); err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, _, err := c.m.Gradient(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
