package nsrnn_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/stacks"
)

// BenchmarkTrainStep times one training step, forward and backward through
// Model.Gradient, of each model kind at the size of the paper's CFL
// experiments: batch 10, length 60, 20 hidden units, |Q| = 2, |Γ| = 3,
// stack vectors of size 20 for Gref and JM; and the RNS-RNN with a window
// D = 35 and with |Q| = 3 (padded reversal and the hardest CFL; also with
// the fixed bottom, the 2023 release's model), each also with the batch
// split in two parts run concurrently (Workers = 2).
// The graph is built and run once before timing.
func BenchmarkTrainStep(b *testing.B) {
	const batch, length = 10, 60
	base := nsrnn.Config{InputVocab: 3, OutputVocab: 4, Hidden: 20}
	type bench struct {
		name    string
		cfg     nsrnn.Config
		workers int
	}
	var benches []bench
	for _, kind := range nsrnn.KindNames() {
		c := base
		c.Kind = kind
		switch {
		case nsrnn.IsNondeterministic(kind):
			c.States, c.Symbols = 2, 3
		case kind == nsrnn.Gref || kind == nsrnn.JM:
			c.StackEmbedding = 20
		}
		if kind == nsrnn.VRNS {
			c.StackEmbedding = 5
		}
		benches = append(benches, bench{kind, c, 0})
	}
	limited := benches[slices.IndexFunc(benches, func(b bench) bool { return b.name == nsrnn.RNS })].cfg
	limited.Window = 35
	q3 := benches[slices.IndexFunc(benches, func(b bench) bool { return b.name == nsrnn.RNS })].cfg
	q3.States = 3
	rns := benches[slices.IndexFunc(benches, func(b bench) bool { return b.name == nsrnn.RNS })].cfg
	q3fixed := q3
	q3fixed.Bottom = stacks.Fixed
	benches = append(benches, bench{"rns-D35", limited, 0}, bench{"rns-Q3", q3, 0}, bench{"rns-Q3-fixed", q3fixed, 0},
		bench{"rns-workers2", rns, 2}, bench{"rns-Q3-workers2", q3, 2})

	data := cflBatch(batch, length)
	for _, bc := range benches {
		b.Run(bc.name, func(b *testing.B) { benchGradient(b, bc.cfg, bc.workers, data) })
	}
}

// BenchmarkTrainStepParts times the training step of RNS on a batch of
// ten strings of 60 and 80 symbols in 1, 2, 5 and 10 parts (Workers),
// for |Q| = 2 and 3: more parts than cores pay where the dynamic programs
// of a part per core outgrow the cache (Config.PartsFor).
func BenchmarkTrainStepParts(b *testing.B) {
	for _, q := range []int{2, 3} {
		for _, n := range []int{60, 80} {
			data := cflBatch(10, n)
			cfg := nsrnn.Config{Kind: nsrnn.RNS, InputVocab: 3, OutputVocab: 4, Hidden: 20, States: q, Symbols: 3}
			for _, w := range []int{1, 2, 5, 10} {
				b.Run(fmt.Sprintf("Q%d/n%d/parts%d", q, n, w), func(b *testing.B) { benchGradient(b, cfg, w, data) })
			}
		}
	}
}

// cflBatch is a batch of random strings over three symbols.
func cflBatch(batch, length int) [][]int {
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([][]int, batch)
	for i := range data {
		data[i] = make([]int, length)
		for j := range data[i] {
			data[i][j] = rng.IntN(3)
		}
	}
	return data
}

// benchGradient times Gradient of a model of cfg in workers parts on data.
func benchGradient(b *testing.B, cfg nsrnn.Config, workers int, data [][]int) {
	m, err := nsrnn.New(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	m.Workers = workers
	if _, _, err := m.Gradient(data); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := m.Gradient(data); err != nil {
			b.Fatal(err)
		}
	}
}

// ptbBenchModels are the models of the Penn Treebank benchmarks: the
// paper's table at B = 32, T = 35, vocabulary 10,000.
func ptbBenchModels() []struct {
	name string
	cfg  nsrnn.Config
} {
	const vocab, hidden = 10000, 256
	base := nsrnn.Config{InputVocab: vocab, OutputVocab: vocab, Embedding: hidden, Hidden: hidden, InitRange: 0.05}
	with := func(f func(*nsrnn.Config)) nsrnn.Config { c := base; f(&c); return c }
	return []struct {
		name string
		cfg  nsrnn.Config
	}{
		{"lstm-256", with(func(c *nsrnn.Config) { c.Kind = nsrnn.LSTM })},
		{"jm-247", with(func(c *nsrnn.Config) {
			c.Kind, c.Hidden, c.Embedding, c.PushHiddenState, c.DepthLimit = nsrnn.JM, 247, 247, true, 10
		})},
		{"ns-3-4", with(func(c *nsrnn.Config) { c.Kind, c.States, c.Symbols, c.Window = nsrnn.NS, 3, 4, 35 })},
		{"rns-1-2", with(func(c *nsrnn.Config) { c.Kind, c.States, c.Symbols, c.Window = nsrnn.RNS, 1, 2, 35 })},
		{"rns-3-4", with(func(c *nsrnn.Config) { c.Kind, c.States, c.Symbols, c.Window = nsrnn.RNS, 3, 4, 35 })},
	}
}

func ptbChunk(batch, steps, vocab int) (in, tgt [][]int) {
	rng := rand.New(rand.NewPCG(1, 2))
	in, tgt = make([][]int, batch), make([][]int, batch)
	for i := range in {
		in[i], tgt[i] = make([]int, steps), make([]int, steps)
		for j := range in[i] {
			in[i][j], tgt[i][j] = rng.IntN(vocab), rng.IntN(vocab)
		}
	}
	return in, tgt
}

// BenchmarkStreamStepPTB times one truncated-BPTT training step (forward
// and backward of a chunk) at the Penn Treebank sizes, B = 32, T = 35,
// with the output layer in float64 and (suffix -f32) in float32, and
// reports tokens per second and the peak heap of a step as peak-MiB: the
// heap in use after an untimed step run with the garbage collector off,
// less the heap in use before the model was made, which bounds the peak
// from above (the model, its compiled graph and every allocation of the
// step). Build with -tags openblas (and Debian's libopenblas-dev) for
// the OpenBLAS products.
func BenchmarkStreamStepPTB(b *testing.B) {
	const batch, steps = 32, 35
	for _, c := range ptbBenchModels() {
		for _, prec := range []nsrnn.Precision{nsrnn.Float64, nsrnn.Float32} {
			b.Run(c.name+precSuffix(prec), func(b *testing.B) {
				runtime.GC()
				runtime.GC()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				base := ms.HeapInuse // what earlier benchmarks left behind
				s := benchStream(b, c.cfg, prec, batch)
				in, tgt := ptbChunk(batch, steps, c.cfg.InputVocab)
				// Untimed: the first step builds the graph; the peak is
				// the largest over three steps.
				peak := 0.0
				for range 3 {
					runtime.GC()
					old := debug.SetGCPercent(-1)
					if _, _, err := s.Gradient(in, tgt); err != nil {
						b.Fatal(err)
					}
					runtime.ReadMemStats(&ms)
					debug.SetGCPercent(old)
					peak = max(peak, float64(ms.HeapInuse-base)/(1<<20))
				}
				runtime.GC()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, _, err := s.Gradient(in, tgt); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(peak, "peak-MiB")
				b.ReportMetric(float64(batch*steps)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

// BenchmarkStreamStepPTBBatch is BenchmarkStreamStepPTB (float32) for
// RNS 1-2 and RNS 3-4 at B = 4, 8, 16 and 32 streams: how the rate per
// token moves with the batch, whose streams' triangles of the dynamic
// program, about 1.4 MB each for RNS 3-4, stop fitting the caches as the
// batch grows while the LSTM's products get more rows.
func BenchmarkStreamStepPTBBatch(b *testing.B) {
	const steps = 35
	for _, c := range ptbBenchModels() {
		if c.name != "rns-1-2" && c.name != "rns-3-4" {
			continue
		}
		for _, batch := range []int{4, 8, 16, 32} {
			b.Run(fmt.Sprintf("%s/B%d", c.name, batch), func(b *testing.B) {
				s := benchStream(b, c.cfg, nsrnn.Float32, batch)
				in, tgt := ptbChunk(batch, steps, c.cfg.InputVocab)
				for range 2 { // untimed: the graph, the tapes, the caches
					if _, _, err := s.Gradient(in, tgt); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, _, err := s.Gradient(in, tgt); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(batch*steps)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}

// benchStream makes a model of cfg in precision prec and a stream of
// batch rows on it.
func benchStream(b *testing.B, cfg nsrnn.Config, prec nsrnn.Precision, batch int) *nsrnn.Stream {
	m, err := nsrnn.New(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	m.Precision = prec
	s, err := m.NewStream(batch)
	if err != nil {
		b.Fatal(err)
	}
	return s
}

// precSuffix names the precision in benchmark names.
func precSuffix(p nsrnn.Precision) string {
	if p == nsrnn.Float32 {
		return "-f32"
	}
	return ""
}

// BenchmarkStreamEvalPTB times evaluation (the loss of a chunk, forward
// only) at the Penn Treebank sizes, in tokens per second.
func BenchmarkStreamEvalPTB(b *testing.B) {
	const batch, steps = 32, 35
	for _, c := range ptbBenchModels() {
		for _, prec := range []nsrnn.Precision{nsrnn.Float64, nsrnn.Float32} {
			b.Run(c.name+precSuffix(prec), func(b *testing.B) {
				s := benchStream(b, c.cfg, prec, batch)
				in, tgt := ptbChunk(batch, steps, c.cfg.InputVocab)
				if _, err := s.Loss(in, tgt); err != nil {
					b.Fatal(err)
				}
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					if _, err := s.Loss(in, tgt); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(batch*steps)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
			})
		}
	}
}
