package main

import (
	"path/filepath"
	"testing"

	"github.com/nsrnn/nsrnn/data/ptb"
	"github.com/nsrnn/nsrnn/data/syntaxgym"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

// BenchmarkSGSuites scores the 33 shared SyntaxGym suites with an
// (untrained) 256-unit RNS-RNN, |Q| = 3, |Γ| = 4, D = 35, on the Penn
// Treebank vocabulary: seconds per full scoring (one op).
func BenchmarkSGSuites(b *testing.B) {
	const shared = "../../../shared/data"
	suites, err := syntaxgym.ReadSuiteDir(filepath.Join(shared, "syntaxgym"))
	if err != nil {
		b.Skipf("shared suites not available: %v", err)
	}
	v, _, err := ptb.ReadTrain(filepath.Join(shared, "ptb", ptb.TrainFile), nil)
	if err != nil {
		b.Skipf("shared corpus not available: %v", err)
	}
	dir := b.TempDir()
	cfg := nsrnn.Config{Kind: nsrnn.RNS, InputVocab: v.Size(), OutputVocab: v.Size(), Embedding: 256, Hidden: 256,
		States: 3, Symbols: 4, Window: 35, InitRange: 0.05}
	m, err := nsrnn.New(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	if err := m.Save(filepath.Join(dir, protocol.ModelFile)); err != nil {
		b.Fatal(err)
	}
	if err := v.Save(filepath.Join(dir, VocabFile)); err != nil {
		b.Fatal(err)
	}
	if err := protocol.WriteJSON(filepath.Join(dir, protocol.RunFile), settings{Model: cfg, Batch: 32, BPTT: 35}); err != nil {
		b.Fatal(err)
	}
	src, err := modelSource(dir, nsrnn.CPU, false, 32, false, newUnknownWords(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		sum, err := scoreSuites(suites, nil, src, syntaxgym.PairLevel)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(sum.SGScore, "sg-score")
	}
}
