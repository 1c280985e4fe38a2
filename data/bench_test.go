package data

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkSample measures sampling 10,000 strings with lengths 40–80 per
// task, as for a training set.
func BenchmarkSample(b *testing.B) {
	for _, name := range TaskNames() {
		b.Run(name, func(b *testing.B) {
			g := mustTask(b, name).Grammar()
			rng := rand.New(rand.NewPCG(1, 1))
			for b.Loop() {
				if _, err := SampleStrings(g, 10000, 40, 80, rng); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLowerBound measures the lower bound of 1,000 strings with lengths
// 40–80 per task, as for a validation set.
func BenchmarkLowerBound(b *testing.B) {
	for _, name := range TaskNames() {
		b.Run(name, func(b *testing.B) {
			g := mustTask(b, name).Grammar()
			ws, err := SampleStrings(g, 1000, 40, 80, rand.New(rand.NewPCG(1, 1)))
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := ComputeLowerBound(g, ws, 40, 80); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTables measures computing inside weights by length up to 200
// from scratch.
func BenchmarkTables(b *testing.B) {
	for _, name := range TaskNames() {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				g := mustTask(b, name).Grammar()
				g.table(200)
			}
		})
	}
}
