package nsrnn_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/nsrnn/nsrnn/nsrnn"
)

func BenchmarkPartsTmp(b *testing.B) {
	for _, q := range []int{2, 3} {
		for _, n := range []int{60, 80} {
			rng := rand.New(rand.NewPCG(1, 2))
			data := make([][]int, 10)
			for i := range data {
				data[i] = make([]int, n)
				for j := range data[i] {
					data[i][j] = rng.IntN(3)
				}
			}
			for _, w := range []int{1, 2, 5, 10} {
				b.Run(fmt.Sprintf("Q%d/n%d/w%d", q, n, w), func(b *testing.B) {
					m, err := nsrnn.New(nsrnn.Config{Kind: nsrnn.RNS, InputVocab: 3, OutputVocab: 4, Hidden: 20, States: q, Symbols: 3}, 1)
					if err != nil {
						b.Fatal(err)
					}
					m.Workers = w
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
	}
}
