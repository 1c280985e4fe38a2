package nsrnn

import (
	"math/rand/v2"
	"testing"

	"github.com/nsrnn/nsrnn/stacks"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// passes runs, on a model of cfg from seed 3, what a model computes with
// its graphs, and returns every number of it in one slice: the loss and
// gradients of sentence batches of three lengths, twice each (whole and,
// Workers 2, in parts), the
// log-probabilities of two batches, and, for a kind with streams, the losses
// and gradients of three chunks of a stream carried from chunk to chunk,
// in both precisions.
func passes(t *testing.T, cfg Config) []float64 {
	t.Helper()
	var out []float64
	for _, prec := range []Precision{Float64, Float32} {
		m, err := New(cfg, 3)
		if err != nil {
			t.Fatal(err)
		}
		m.Precision = prec
		rng := rand.New(rand.NewPCG(5, 6))
		vocab := min(cfg.InputVocab, cfg.OutputVocab-1)
		for _, workers := range []int{1, 2} {
			m.Workers = workers
			// Each length twice: the second run of a graph reuses the
			// values of the first.
			for _, n := range []int{0, 1, 9, 0, 1, 9} {
				loss, grads, err := m.Gradient(randomBatch(rng, 4, n, vocab))
				if err != nil {
					t.Fatal(err)
				}
				out = append(out, loss)
				for _, g := range grads {
					out = append(out, g...)
				}
			}
		}
		for range 2 {
			lp, err := m.LogProbs(randomBatch(rng, 3, 6, vocab))
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range lp {
				for _, row := range b {
					out = append(out, row...)
				}
			}
		}
		if m.stack != nil && m.stack.Carryable() != nil {
			continue // no streams (an unlimited stack)
		}
		s, err := m.NewStream(3)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{5, 5, 2} {
			in, tgt := randomStream(rng, 3, n, min(cfg.InputVocab, cfg.OutputVocab))
			loss, grads, err := s.Gradient(in, tgt)
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, loss)
			for _, g := range grads {
				out = append(out, g...)
			}
		}
	}
	return out
}

// TestExecutorMatchesTapeMachine: the executor computes what gorgonia's
// tape machine computes, bit for bit, for every kind, in sentence mode
// (gradients, in parts, log-probabilities) and stream mode (carried
// chunks), in both precisions.
func TestExecutorMatchesTapeMachine(t *testing.T) {
	cfgs := tinyConfigs()
	for name, c := range streamConfigs() {
		cfgs["stream "+name] = c
	}
	cfgs["vrns fixed"] = Config{Kind: VRNS, InputVocab: 3, OutputVocab: 4, Hidden: 4, States: 2, Symbols: 2, StackEmbedding: 2, Bottom: stacks.Fixed}
	defer func(v bool) { useTapeMachine = v }(useTapeMachine)
	for name, cfg := range cfgs {
		useTapeMachine = false
		got := passes(t, cfg)
		m, _ := New(cfg, 3)
		gr, err := m.loadPart(randomBatch(rand.New(rand.NewPCG(1, 1)), 2, 3, min(cfg.InputVocab, cfg.OutputVocab-1)), true, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		if gr.ex == nil {
			t.Errorf("%s: the graph runs on the tape machine, not the executor", name)
		}
		useTapeMachine = true
		want := passes(t, cfg)
		if len(got) == 0 || !sameBits([][]float64{got}, [][]float64{want}) {
			t.Errorf("%s: the executor's %d numbers differ from the tape machine's %d", name, len(got), len(want))
		}
	}
}

// TestExecutorFallsBack: a graph of gorgonia's element-wise binary
// operations (the sums of its differentiation, or a product) gets an
// executor, which computes them; one with another operation of
// gorgonia's own (here a sigmoid) or a G.Read gets none, so that it runs
// on gorgonia's tape machine.
func TestExecutorFallsBack(t *testing.T) {
	g := G.NewGraph()
	x := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("x"), G.WithValue(tensor.New(tensor.WithBacking([]float64{1, 2, 3}))))
	y := G.NewVector(g, tensor.Float64, G.WithShape(3), G.WithName("y"), G.WithValue(tensor.New(tensor.WithBacking([]float64{0.5, 0.25, 0.125}))))
	sum := G.Must(G.Add(x, y))
	prod := G.Must(G.HadamardProd(sum, y))
	ex, err := newExecutor(g)
	if err != nil || ex == nil {
		t.Fatalf("a graph of a sum and a product: executor %v, %v; want one", ex, err)
	}
	for range 2 { // the second run writes into the first's values
		if err := ex.run(); err != nil {
			t.Fatal(err)
		}
		if got := ex.value(sum).Data().([]float64); !sameBits([][]float64{got}, [][]float64{{1.5, 2.25, 3.125}}) {
			t.Errorf("x + y = %v", got)
		}
		if got := ex.value(prod).Data().([]float64); !sameBits([][]float64{got}, [][]float64{{0.75, 0.5625, 0.390625}}) {
			t.Errorf("(x + y) ⊙ y = %v", got)
		}
	}
	G.Must(G.Sigmoid(prod))
	if ex, err := newExecutor(g); err != nil || ex != nil {
		t.Errorf("a graph with a sigmoid: executor %v, %v; want none (the tape machine)", ex != nil, err)
	}
	g2 := G.NewGraph()
	z := G.NewScalar(g2, tensor.Float64, G.WithName("z"), G.WithValue(2.0))
	var v G.Value
	G.Read(G.Must(G.Add(z, z)), &v)
	if ex, err := newExecutor(g2); err != nil || ex != nil {
		t.Errorf("a graph with a G.Read: executor %v, %v; want none", ex != nil, err)
	}
}
