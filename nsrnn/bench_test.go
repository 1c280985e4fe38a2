package nsrnn_test

import (
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"testing"

	"github.com/nsrnn/nsrnn/nsrnn"
)

// BenchmarkTrainStep times one training step, forward and backward through
// Model.Gradient, of each model kind at the size of the paper's CFL
// experiments: batch 10, length 60, 20 hidden units, |Q| = 2, |Γ| = 3,
// stack vectors of size 20 for Gref and JM; and the RNS-RNN with a window
// D = 35. The graph is built and run once before timing.
func BenchmarkTrainStep(b *testing.B) {
	const batch, length = 10, 60
	base := nsrnn.Config{InputVocab: 3, OutputVocab: 4, Hidden: 20}
	type bench struct {
		name string
		cfg  nsrnn.Config
	}
	var benches []bench
	for _, kind := range nsrnn.Kinds {
		c := base
		c.Kind = kind
		switch {
		case nsrnn.IsNondeterministic(kind):
			c.States, c.Symbols = 2, 3
		case kind == nsrnn.Gref || kind == nsrnn.JM:
			c.StackEmbedding = 20
		}
		benches = append(benches, bench{kind, c})
	}
	limited := benches[len(benches)-1].cfg
	limited.Window = 35
	benches = append(benches, bench{"rns-D35", limited})

	rng := rand.New(rand.NewPCG(1, 2))
	data := make([][]int, batch)
	for i := range data {
		data[i] = make([]int, length)
		for j := range data[i] {
			data[i][j] = rng.IntN(3)
		}
	}
	for _, bc := range benches {
		b.Run(bc.name, func(b *testing.B) {
			m, err := nsrnn.New(bc.cfg, 1)
			if err != nil {
				b.Fatal(err)
			}
			if _, _, err := m.Gradient(data); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := m.Gradient(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkStreamStepPTB times one truncated-BPTT training step at the
// Penn Treebank size (vocabulary 10,000 in and out, embedding = hidden =
// 256, batch 32, 35 steps) and reports the peak heap of the step as
// peak-MiB: the heap in use after the step with the garbage collector off
// during it, which bounds the peak from above (the model, its compiled
// graph and every allocation of the step).
func BenchmarkStreamStepPTB(b *testing.B) {
	const batch, steps, vocab, hidden = 32, 35, 10000, 256
	for _, c := range []struct {
		name string
		cfg  nsrnn.Config
	}{
		{"lstm-256", nsrnn.Config{Kind: nsrnn.LSTM, InputVocab: vocab, OutputVocab: vocab, Embedding: hidden, Hidden: hidden, InitRange: 0.05}},
		{"rns-1-2", nsrnn.Config{Kind: nsrnn.RNS, InputVocab: vocab, OutputVocab: vocab, Embedding: hidden, Hidden: hidden, States: 1, Symbols: 2, Window: 35, InitRange: 0.05}},
	} {
		b.Run(c.name, func(b *testing.B) {
			m, err := nsrnn.New(c.cfg, 1)
			if err != nil {
				b.Fatal(err)
			}
			s, err := m.NewStream(batch)
			if err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(1, 2))
			in, tgt := make([][]int, batch), make([][]int, batch)
			for i := range in {
				in[i], tgt[i] = make([]int, steps), make([]int, steps)
				for j := range in[i] {
					in[i][j], tgt[i][j] = rng.IntN(vocab), rng.IntN(vocab)
				}
			}
			peak := 0.0
			step := func() {
				runtime.GC()
				old := debug.SetGCPercent(-1)
				if _, _, err := s.Gradient(in, tgt); err != nil {
					b.Fatal(err)
				}
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				debug.SetGCPercent(old)
				peak = max(peak, float64(ms.HeapInuse)/(1<<20))
			}
			step() // builds the graph
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				step()
			}
			b.ReportMetric(peak, "peak-MiB")
			b.ReportMetric(float64(batch*steps)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
		})
	}
}
