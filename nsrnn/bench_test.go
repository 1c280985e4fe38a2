package nsrnn_test

import (
	"math/rand/v2"
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
