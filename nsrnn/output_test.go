package nsrnn

import (
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"weak"
)

// TestOutputFloat32AgreesWithFloat64: with Precision Float32 the
// loss, the gradients of every parameter and the log-probabilities of
// sentence and stream runs agree with the float64 ones to the accuracy of
// float32 arithmetic (sums of a few dozen float32 products: 1e-5
// relative), targets without a position (NoTarget) included; and the
// float32 path did run.
func TestOutputFloat32AgreesWithFloat64(t *testing.T) {
	for name, cfg := range map[string]Config{
		"lstm": {Kind: LSTM, InputVocab: 40, OutputVocab: 41, Embedding: 8, Hidden: 24, InitRange: 0.3},
		"rns":  {Kind: RNS, InputVocab: 7, OutputVocab: 8, Hidden: 10, States: 2, Symbols: 2, Window: 4, InitRange: 0.5},
	} {
		t.Run(name, func(t *testing.T) {
			m, err := New(cfg, 5)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			in, tgt := randomStream(rng, 3, 9, cfg.InputVocab)
			for b := range tgt {
				for i := range tgt[b] {
					tgt[b][i] = rng.IntN(cfg.OutputVocab)
				}
			}
			tgt[1][4] = NoTarget
			type result struct {
				loss, sentLoss float64
				grads          [][]float64
				lp             [][][]float64
			}
			run := func(p Precision) result {
				m.Precision = p
				s, err := m.NewStream(3)
				if err != nil {
					t.Fatal(err)
				}
				var r result
				var g [][]float64
				if r.loss, g, err = s.Gradient(in, tgt); err != nil {
					t.Fatal(err)
				}
				for _, gi := range g {
					r.grads = append(r.grads, append([]float64(nil), gi...))
				}
				if got := m.graphs[m.order[len(m.order)-1]].out.f32; got != (p == Float32) {
					t.Fatalf("precision %v: the float32 path ran: %v", p, got)
				}
				s.Reset()
				if r.lp, err = s.LogProbs(in); err != nil {
					t.Fatal(err)
				}
				if r.sentLoss, err = m.Loss(in); err != nil {
					t.Fatal(err)
				}
				return r
			}
			want, got := run(Float64), run(Float32)
			m.Precision = Float64
			const tol = 1e-5
			rel := func(a, b float64) float64 { return math.Abs(a-b) / math.Max(1, math.Abs(b)) }
			if e := rel(got.loss, want.loss); !(e < tol) || got.loss == want.loss {
				t.Errorf("stream loss: float32 %.10g, float64 %.10g", got.loss, want.loss)
			}
			if e := rel(got.sentLoss, want.sentLoss); !(e < tol) {
				t.Errorf("sentence loss: float32 %.10g, float64 %.10g", got.sentLoss, want.sentLoss)
			}
			for pi, p := range m.Params() {
				diff, norm := 0.0, 0.0
				for j, w := range want.grads[pi] {
					diff += (got.grads[pi][j] - w) * (got.grads[pi][j] - w)
					norm += w * w
				}
				if !(math.Sqrt(diff) <= tol*math.Max(math.Sqrt(norm), 1e-3)) {
					t.Errorf("gradient of %s: float32 differs by %.3g, norm %.3g", p.Name, math.Sqrt(diff), math.Sqrt(norm))
				}
			}
			for b := range want.lp {
				for i := range want.lp[b] {
					for v, w := range want.lp[b][i] {
						if e := math.Abs(got.lp[b][i][v] - w); !(e < 1e-5*math.Max(1, math.Abs(w))) {
							t.Fatalf("log-probability [%d][%d][%d]: float32 %.8g, float64 %.8g", b, i, v, got.lp[b][i][v], w)
						}
					}
				}
			}
		})
	}
}

// TestModelsAreCollected: a model that has run (stream and sentence mode,
// with and without gradients, in either precision) is garbage once
// dropped. (Its graphs hold gorgonia machines with finalizers, so any
// reference from a kernel back to the model would make a cycle the
// collector never frees.)
func TestModelsAreCollected(t *testing.T) {
	var ptrs []weak.Pointer[Model]
	for _, cfg := range []Config{
		{Kind: LSTM, InputVocab: 30, OutputVocab: 30, Embedding: 8, Hidden: 8},
		{Kind: RNS, InputVocab: 5, OutputVocab: 5, Hidden: 6, States: 2, Symbols: 2, Window: 3},
	} {
		for _, p := range []Precision{Float64, Float32} {
			m, err := New(cfg, 1)
			if err != nil {
				t.Fatal(err)
			}
			m.Precision = p
			rng := rand.New(rand.NewPCG(1, 2))
			in, tgt := randomStream(rng, 2, 6, cfg.InputVocab)
			s, err := m.NewStream(2)
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Gradient(in, tgt); err != nil {
				t.Fatal(err)
			}
			sent := randomBatch(rng, 2, 6, cfg.OutputVocab-1) // no EOS in sentence mode
			if _, err := m.Loss(sent); err != nil {
				t.Fatal(err)
			}
			if _, _, err := m.Gradient(sent); err != nil {
				t.Fatal(err)
			}
			ptrs = append(ptrs, weak.Make(m))
		}
	}
	for range 3 {
		runtime.GC()
	}
	for i, p := range ptrs {
		if p.Value() != nil {
			t.Errorf("model %d is still alive after it was dropped", i)
		}
	}
}

// The float32 output layer of a pass that needs its loss alone, which
// makes the scores a block of the vocabulary at a time, gives the loss
// and the normalizers of the pass that keeps them all, to a few float64
// roundings: vocabularies of less than a block, of whole blocks and of a
// part-filled last one, targets in every block and none, and a largest
// score in a late block (the running sums rescaled).
func TestOutputLossOnlyBlocks(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for _, v := range []int{5, lossBlock, 3*lossBlock + 44} {
		const steps, batch, hidden = 4, 3, 6
		rows := steps * batch
		hs := make([][]float64, steps)
		for i := range hs {
			hs[i] = make([]float64, batch*hidden)
			for j := range hs[i] {
				hs[i][j] = rng.NormFloat64()
			}
		}
		w, bias := make([]float64, v*hidden), make([]float64, v)
		for i := range w {
			w[i] = rng.NormFloat64()
		}
		for i := range bias {
			bias[i] = rng.NormFloat64()
		}
		bias[v-1] = 40 // the largest scores in the last block
		targets := make([]float64, batch*steps)
		for i := range targets {
			targets[i] = float64(rng.IntN(v))
		}
		targets[1] = NoTarget
		in := append(append([][]float64{}, hs...), w, bias, targets, nil)
		run := func(lossOnly bool) (float64, []float64) {
			k := &outputLoss{steps: steps, batch: batch, hidden: hidden, vocab: v, perToken: true, prec: Float32, lossOnly: lossOnly}
			out := []float64{0}
			k.Forward(out, in)
			if k.kept == lossOnly {
				t.Fatalf("v=%d lossOnly %v: kept %v", v, lossOnly, k.kept)
			}
			return out[0], append([]float64(nil), k.logz[:rows]...)
		}
		l1, z1 := run(false)
		l2, z2 := run(true)
		if math.Abs(l2-l1) > 1e-13*math.Abs(l1) {
			t.Errorf("v=%d: loss %v by blocks, %v whole", v, l2, l1)
		}
		for r := range z1 {
			if math.Abs(z2[r]-z1[r]) > 1e-13*math.Abs(z1[r]) {
				t.Errorf("v=%d row %d: normalizer %v by blocks, %v whole", v, r, z2[r], z1[r])
			}
		}
	}
}

// A float32 stream's graph that ran a loss alone then gives the
// log-probabilities of a model that never did: the scores of the next
// pass are kept whole again.
func TestOutputLossOnlyThenLogProbs(t *testing.T) {
	cfg := Config{Kind: LSTM, InputVocab: 600, OutputVocab: 600, Embedding: 8, Hidden: 12, InitRange: 0.3}
	rng := rand.New(rand.NewPCG(9, 10))
	in, tgt := randomStream(rng, 3, 5, cfg.InputVocab)
	logProbs := func(lossFirst bool) [][][]float64 {
		m, err := New(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		m.Precision = Float32
		s, err := m.NewStream(3)
		if err != nil {
			t.Fatal(err)
		}
		if lossFirst {
			if _, err := s.Loss(in, tgt); err != nil {
				t.Fatal(err)
			}
			s.Reset()
		}
		lp, err := s.LogProbs(in)
		if err != nil {
			t.Fatal(err)
		}
		return lp
	}
	a, b := logProbs(false), logProbs(true)
	if d := maxAbsDiff3(a, b); d != 0 {
		t.Errorf("log-probabilities after a loss-only pass differ by %g", d)
	}
}
