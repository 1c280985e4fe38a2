package nskernel

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// macs counts the multiply-adds of the fast path of a forward and a
// backward pass over one sequence of n steps (exact fallbacks excluded):
//
//	forward, per column b:  G'      Σ_k m²|Q|
//	                        pop     Σ_{a,k} (m²|Q| + m|Q|)
//	                        replace Σ_a m³
//	                        α       Σ_a m²
//	backward: twice each of these.
func macs(c Config, n int) (fwd, bwd float64) {
	var s seq
	capPos := n + 2
	if c.Window > 0 {
		capPos = n + max(2, c.Window)
	}
	s.D = c.Window
	if s.D == 0 {
		s.D = capPos
	}
	m, Q := float64(c.States*c.Symbols), float64(c.States)
	base := 1
	if c.Fixed {
		base = 2
	}
	for b := base; b < base+n; b++ {
		lo := s.lo(b)
		for k := lo + 1; k <= b-2; k++ {
			fwd += m * m * Q
		}
		for a := lo; a < b; a++ {
			fwd += m * m
			if a <= b-2 {
				fwd += m * m * m
			}
			for k := a + 1; k <= b-2; k++ {
				fwd += m*m*Q + m*Q
			}
		}
	}
	return fwd, 2 * fwd
}

func benchFB(b *testing.B, c Config, B, n int) { benchFBScale(b, c, B, n, 1) }

// benchFBScale is benchFB with action log-weights drawn at the given
// scale (randLD).
func benchFBScale(b *testing.B, c Config, B, n int, scale float64) {
	rng := rand.New(rand.NewPCG(1, 1))
	ld := randLD(rng, c, B, n, scale)
	tp := NewTape(c, B, n)
	r := make([]float64, B*c.ReadingSize())
	g := make([]float64, B*c.NumActions())
	gr := make([]float64, B*c.ReadingSize())
	for i := range gr {
		gr[i] = rng.NormFloat64()
	}
	f, bw := macs(c, n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tp.Begin(nil)
		for s := 0; s < n; s++ {
			tp.Step(ld[s], r)
		}
		for s := n; s >= 1; s-- {
			tp.Backward(s, gr, g)
		}
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	tot := float64(B) * (f + bw)
	b.ReportMetric(tot/1e6, "MFMA/op")
	b.ReportMetric(tot/sec/1e9, "GFMA/s")
}

// BenchmarkForwardBackward: batch 10, RNS (unnormalized, state reading),
// unlimited.
func BenchmarkForwardBackward(b *testing.B) {
	for _, qn := range [][2]int{{2, 60}, {2, 80}, {3, 80}} {
		c := Config{States: qn[0], Symbols: 3, StateReading: true}
		b.Run(fmt.Sprintf("Q%dG3n%dB10", qn[0], qn[1]), func(b *testing.B) { benchFB(b, c, 10, qn[1]) })
	}
}

// BenchmarkForwardBackwardFixed is BenchmarkForwardBackward at the shape
// of the RNS-RNN of the 2023 tasks: |Q| = 3, |Γ| = 3, n = 60 and the fixed
// bottom, with which entries of γ are 0 whatever the weights, so that the
// fast path leaves them to the exact recomputation at every column; with
// action log-weights drawn at scale 1 (an untrained model's) and 10
// (peaked, as a trained model's are).
func BenchmarkForwardBackwardFixed(b *testing.B) {
	c := Config{States: 3, Symbols: 3, Fixed: true, StateReading: true}
	for _, scale := range []float64{1, 10} {
		b.Run(fmt.Sprintf("scale%g", scale), func(b *testing.B) { benchFBScale(b, c, 10, 60, scale) })
	}
}

// BenchmarkForwardBackwardBatch compares batches of 1, 2, 5 (a part of
// the paper's batch of 10 split in two) and 10 at the same shapes;
// ns/string is the time per sequence. A column of the dynamic program
// reads every block of its triangle (and the backward pass also rewrites
// their adjoints), so a step of a batch streams B triangles: once they no
// longer fit in cache, the throughput per string falls to the memory
// bandwidth.
func BenchmarkForwardBackwardBatch(b *testing.B) {
	for _, qn := range [][2]int{{2, 60}, {3, 80}} {
		c := Config{States: qn[0], Symbols: 3, StateReading: true}
		for _, B := range []int{1, 2, 5, 10} {
			b.Run(fmt.Sprintf("Q%dG3n%dB%d", qn[0], qn[1], B), func(b *testing.B) {
				benchFB(b, c, B, qn[1])
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*B), "ns/string")
			})
		}
	}
}

// BenchmarkForward: forward only, batch 10, |Q|=2, |Γ|=3, n=60.
func BenchmarkForward(b *testing.B) {
	c := Config{States: 2, Symbols: 3, StateReading: true}
	const B, n = 10, 60
	rng := rand.New(rand.NewPCG(1, 1))
	ld := randLD(rng, c, B, n, 1)
	tp := NewTape(c, B, n)
	r := make([]float64, B*c.ReadingSize())
	for i := 0; i < b.N; i++ {
		tp.Begin(nil)
		for s := 0; s < n; s++ {
			tp.Step(ld[s], r)
		}
	}
}

// BenchmarkLimitedStream: memory-limited, D = 35, |Q|=2, |Γ|=3, batch 1,
// forward+backward over a stream processed in chunks of 35 (truncated BPTT).
func BenchmarkLimitedStream(b *testing.B) {
	for _, n := range []int{1000, 100000} {
		b.Run(fmt.Sprintf("tokens%d", n), func(b *testing.B) {
			benchLimited(b, Config{States: 2, Symbols: 3, StateReading: true, Window: 35}, n)
		})
	}
}

// BenchmarkLimitedStreamPTB is BenchmarkLimitedStream at the shapes of the
// PTB models RNS 1-2 (|Q| = 1, |Γ| = 2, m = 2) and RNS 3-4 (|Q| = 3,
// |Γ| = 4, m = 12), 1000 tokens.
func BenchmarkLimitedStreamPTB(b *testing.B) {
	for _, qg := range [][2]int{{1, 2}, {3, 4}} {
		b.Run(fmt.Sprintf("RNS%d-%d", qg[0], qg[1]), func(b *testing.B) {
			benchLimited(b, Config{States: qg[0], Symbols: qg[1], StateReading: true, Window: 35}, 1000)
		})
	}
}

// BenchmarkLimitedStreamBatch is BenchmarkLimitedStreamPTB's RNS 3-4 (m =
// 12, window 35) for batches of 1, 4 and 16 streams on one thread, 350
// tokens each: the rate per token as the streams' triangles (about 1.4 MB
// each with their adjoints) outgrow the caches.
func BenchmarkLimitedStreamBatch(b *testing.B) {
	c := Config{States: 3, Symbols: 4, StateReading: true, Window: 35}
	for _, batch := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("RNS3-4/B%d", batch), func(b *testing.B) {
			benchLimitedBatch(b, c, batch, 350)
		})
	}
}

func benchLimited(b *testing.B, c Config, n int) { benchLimitedBatch(b, c, 1, n) }

// benchLimitedBatch times batch streams of n tokens each on one thread,
// forward and backward in chunks of 35 carried through the state, and
// reports the time and multiply-adds per token.
func benchLimitedBatch(b *testing.B, c Config, batch, n int) {
	const chunk = 35
	rng := rand.New(rand.NewPCG(2, 2))
	ld := randLD(rng, c, batch, chunk, 1)
	tp := NewTape(c, batch, chunk)
	tp.SetThreads(1)
	r := make([]float64, batch*c.ReadingSize())
	g := make([]float64, batch*c.NumActions())
	// multiply-adds per token in the steady state: a column with a full window.
	f1, _ := macs(c, 200)
	f0, _ := macs(c, 199)
	perTok := 3 * (f1 - f0)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var st *State
		for s := 0; s < n; {
			k := min(chunk, n-s)
			if err := runChunk(tp, st, ld[:k], r, g); err != nil {
				b.Fatal(err)
			}
			s += k
			st = tp.StateInto(st)
		}
	}
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / float64(n*batch)
	b.ReportMetric(ns, "ns/token")
	b.ReportMetric(perTok, "FMA/token")
	b.ReportMetric(perTok/ns, "GFMA/s")
}
