package nskernel

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
)

func randLD(rng *rand.Rand, c Config, batch, n int, scale float64) [][]float64 {
	out := make([][]float64, n)
	for t := range out {
		out[t] = make([]float64, batch*c.NumActions())
		for i := range out[t] {
			out[t][i] = scale * (2*rng.Float64() - 1)
		}
	}
	return out
}

func seqLD(ld [][]float64, c Config, i int) [][]float64 {
	na := c.NumActions()
	out := make([][]float64, len(ld))
	for t := range ld {
		out[t] = ld[t][i*na : (i+1)*na]
	}
	return out
}

func relClose(a, b, tol float64) bool {
	return math.Abs(a-b) <= tol*math.Max(1e-300, math.Max(math.Abs(a), math.Abs(b))) || a == b
}

func checkReadings(t *testing.T, name string, c Config, got []float64, wantLogAlpha []float64, tol float64) {
	t.Helper()
	want := readingFromLogAlpha(c, wantLogAlpha)
	for j := range want {
		if !relClose(got[j], want[j], tol) && math.Abs(got[j]-want[j]) > 1e-300 {
			t.Fatalf("%s: reading[%d] = %.17g, want %.17g", name, j, got[j], want[j])
		}
	}
}

func allConfigs(window int) []Config {
	var cs []Config
	for _, q := range []int{1, 2, 3} {
		for _, g := range []int{1, 2, 3} {
			for _, f := range []bool{false, true} {
				for _, sr := range []bool{false, true} {
					cs = append(cs, Config{States: q, Symbols: g, Fixed: f, StateReading: sr, Window: window})
				}
			}
		}
	}
	return cs
}

// TestOracle checks the dynamic program against the brute-force enumeration
// of PDA runs, unlimited.
func TestOracle(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range allConfigs(0) {
		n := 6
		if c.States*c.Symbols >= 6 {
			n = 5
		}
		const B = 2
		ld := randLD(rng, c, B, n, 2)
		tp := NewTape(c, B, n)
		rd := tp.Run(ld)
		for i := 0; i < B; i++ {
			bf := bruteForce(c, seqLD(ld, c, i), 0)
			nv := naiveDP(c, seqLD(ld, c, i))
			for s := 0; s < n; s++ {
				name := fmt.Sprintf("%+v seq %d step %d", c, i, s+1)
				checkReadings(t, name+" (tape vs brute force)", c, rd[s][i*c.ReadingSize():(i+1)*c.ReadingSize()], bf[s], 1e-10)
				checkReadings(t, name+" (naive vs brute force)", c, readingFromLogAlpha(c, nv[s]), bf[s], 1e-10)
			}
		}
	}
}

// TestOracleLimited checks the memory-limited variant against the brute
// force restricted to runs whose γ items all span at most D steps, and
// against the naive implementation of the limited equations.
func TestOracleLimited(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, D := range []int{1, 2, 3, 4} {
		for _, c := range allConfigs(D) {
			if c.States*c.Symbols > 6 {
				continue
			}
			n := 6
			if c.States*c.Symbols >= 6 {
				n = 5
			}
			const B = 2
			ld := randLD(rng, c, B, n, 2)
			tp := NewTape(c, B, n)
			rd := tp.Run(ld)
			for i := 0; i < B; i++ {
				bf := bruteForce(c, seqLD(ld, c, i), D)
				nv := naiveDP(c, seqLD(ld, c, i))
				for s := 0; s < n; s++ {
					name := fmt.Sprintf("%+v seq %d step %d", c, i, s+1)
					checkReadings(t, name+" (tape vs brute force)", c, rd[s][i*c.ReadingSize():(i+1)*c.ReadingSize()], bf[s], 1e-10)
					checkReadings(t, name+" (naive vs brute force)", c, readingFromLogAlpha(c, nv[s]), bf[s], 1e-10)
				}
			}
		}
	}
}

// lossAndGrad runs the tape on logDeltas (or on LogSoftmaxRows of them when
// norm), returns the loss Σ_t coef[t]·r_t and, when grad, the gradient with
// respect to the input.
func lossAndGrad(tp *Tape, norm bool, in, coef [][]float64, grad bool) (float64, [][]float64) {
	c := tp.Config()
	B := tp.Batch()
	n := len(in)
	ld := in
	if norm {
		ld = make([][]float64, n)
		for s := range in {
			ld[s] = make([]float64, len(in[s]))
			LogSoftmaxRows(ld[s], in[s], c, B)
		}
	}
	rd := tp.Run(ld)
	var loss float64
	for s := range rd {
		for j, v := range rd[s] {
			loss += coef[s][j] * v
		}
	}
	if !grad {
		return loss, nil
	}
	g := make([][]float64, n)
	for s := n; s >= 1; s-- {
		g[s-1] = make([]float64, len(in[s-1]))
		tp.Backward(s, coef[s-1], g[s-1])
		if norm {
			LogSoftmaxRowsBackward(g[s-1], g[s-1], ld[s-1], c, B)
		}
	}
	return loss, g
}

func gradCheck(t *testing.T, c Config, norm bool, B, n int, scale float64, seed uint64, tol float64) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 99))
	in := randLD(rng, c, B, n, scale)
	coef := make([][]float64, n)
	for s := range coef {
		coef[s] = make([]float64, B*c.ReadingSize())
		for j := range coef[s] {
			coef[s][j] = 2*rng.Float64() - 1
		}
	}
	tp := NewTape(c, B, n)
	_, g := lossAndGrad(tp, norm, in, coef, true)
	const h = 1e-5
	for s := range in {
		for j := range in[s] {
			old := in[s][j]
			in[s][j] = old + h
			lp, _ := lossAndGrad(tp, norm, in, coef, false)
			in[s][j] = old - h
			lm, _ := lossAndGrad(tp, norm, in, coef, false)
			in[s][j] = old
			fd := (lp - lm) / (2 * h)
			if d := math.Abs(fd - g[s][j]); d > tol*(1e-2+math.Abs(fd)) {
				t.Fatalf("%+v norm=%v: grad step %d entry %d = %.12g, finite difference %.12g", c, norm, s+1, j, g[s][j], fd)
			}
		}
	}
}

// TestGradients compares Backward with central finite differences for every
// variant.
func TestGradients(t *testing.T) {
	seed := uint64(10)
	for _, D := range []int{0, 2, 3} {
		for _, f := range []bool{false, true} {
			for _, sr := range []bool{false, true} {
				for _, norm := range []bool{false, true} {
					for _, qg := range [][2]int{{2, 2}, {1, 3}, {3, 1}, {2, 3}} {
						c := Config{States: qg[0], Symbols: qg[1], Fixed: f, StateReading: sr, Window: D}
						n := 6
						if qg == [2]int{2, 3} {
							n = 4
						}
						seed++
						gradCheck(t, c, norm, 2, n, 2, seed, 1e-6)
					}
				}
			}
		}
	}
}

// TestGradientsExtreme checks gradients where block shifts disagree by
// hundreds of nats, so that the exact fallbacks of both passes are used.
func TestGradientsExtreme(t *testing.T) {
	for i, c := range []Config{
		{States: 2, Symbols: 2},
		{States: 2, Symbols: 2, Fixed: true, StateReading: true},
		{States: 2, Symbols: 2, Fixed: true, Window: 3},
	} {
		gradCheck(t, c, false, 2, 6, 400, uint64(100+i), 1e-6)
	}
}

// TestExtremeShifts compares readings with the naive log-space reference
// when weights span ±600, so that the fast path underflows.
func TestExtremeShifts(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, scale := range []float64{300, 600} {
		for _, c := range []Config{
			{States: 2, Symbols: 2},
			{States: 2, Symbols: 3, Fixed: true, StateReading: true},
			{States: 3, Symbols: 2, StateReading: true, Window: 4},
		} {
			const B, n = 2, 14
			ld := randLD(rng, c, B, n, 1)
			// Rows of very different magnitudes: row-wise offsets.
			W := c.rowLen()
			for s := range ld {
				for o := 0; o < len(ld[s]); o += W {
					off := scale * (2*rng.Float64() - 1)
					for j := 0; j < W; j++ {
						ld[s][o+j] += off + scale*0.3*(2*rng.Float64()-1)
					}
				}
			}
			tp := NewTape(c, B, n)
			rd := tp.Run(ld)
			for i := 0; i < B; i++ {
				nv := naiveDP(c, seqLD(ld, c, i))
				for s := 0; s < n; s++ {
					checkReadings(t, fmt.Sprintf("%+v scale %v seq %d step %d", c, scale, i, s+1), c,
						rd[s][i*c.ReadingSize():(i+1)*c.ReadingSize()], nv[s], 1e-10)
				}
			}
		}
	}
}

// TestStability: log-weights up to ±500 and 200 steps give finite readings
// summing to 1 and finite gradients.
func TestStability(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 80
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, c := range []Config{
		{States: 2, Symbols: 2, StateReading: true},
		{States: 2, Symbols: 2, Fixed: true},
		{States: 2, Symbols: 3, Fixed: true, StateReading: true, Window: 10},
	} {
		const B = 2
		for _, scale := range []float64{500, 5} {
			ld := randLD(rng, c, B, n, scale)
			tp := NewTape(c, B, n)
			rd := tp.Run(ld)
			for s := range rd {
				for i := 0; i < B; i++ {
					var sum float64
					for _, v := range rd[s][i*c.ReadingSize() : (i+1)*c.ReadingSize()] {
						if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
							t.Fatalf("%+v: bad reading %v at step %d", c, v, s+1)
						}
						sum += v
					}
					if math.Abs(sum-1) > 1e-12 {
						t.Fatalf("%+v: readings sum to %v at step %d", c, sum, s+1)
					}
				}
			}
			g := make([]float64, B*c.NumActions())
			gr := make([]float64, B*c.ReadingSize())
			for s := n; s >= 1; s-- {
				for j := range gr {
					gr[j] = rng.NormFloat64()
				}
				tp.Backward(s, gr, g)
				for _, v := range g {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("%+v scale %v: bad gradient %v at step %d", c, scale, v, s)
					}
				}
			}
		}
	}
}

// TestNegInf: −∞ log-weights give exactly zero gradient, never NaN, and the
// readings match the references.
func TestNegInf(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, c := range []Config{
		{States: 2, Symbols: 2},
		{States: 2, Symbols: 2, Fixed: true, StateReading: true},
		{States: 2, Symbols: 3, Window: 3},
	} {
		for _, norm := range []bool{false, true} {
			const B, n = 2, 7
			in := randLD(rng, c, B, n, 2)
			for s := range in {
				for j := range in[s] {
					if rng.Float64() < 0.35 {
						in[s][j] = math.Inf(-1)
					}
				}
			}
			coef := make([][]float64, n)
			for s := range coef {
				coef[s] = make([]float64, B*c.ReadingSize())
				for j := range coef[s] {
					coef[s][j] = rng.NormFloat64()
				}
			}
			tp := NewTape(c, B, n)
			_, g := lossAndGrad(tp, norm, in, coef, true)
			for s := range g {
				for j, v := range g[s] {
					if math.IsNaN(v) || math.IsInf(v, 0) {
						t.Fatalf("%+v: gradient %v", c, v)
					}
					if math.IsInf(in[s][j], -1) && v != 0 {
						t.Fatalf("%+v norm=%v: gradient %v at a −∞ entry", c, norm, v)
					}
				}
			}
			if !norm {
				rd := tp.Run(in)
				for i := 0; i < B; i++ {
					nv := naiveDP(c, seqLD(in, c, i))
					for s := 0; s < n; s++ {
						checkReadings(t, fmt.Sprintf("%+v seq %d step %d", c, i, s+1), c, rd[s][i*c.ReadingSize():(i+1)*c.ReadingSize()], nv[s], 1e-10)
					}
				}
			}
		}
	}
	// All-(−∞) weights: readings are zero, gradients zero.
	c := Config{States: 2, Symbols: 2}
	tp := NewTape(c, 1, 3)
	ld := make([]float64, c.NumActions())
	for i := range ld {
		ld[i] = math.Inf(-1)
	}
	r := make([]float64, c.ReadingSize())
	for s := 0; s < 3; s++ {
		tp.Step(ld, r)
	}
	g := make([]float64, c.NumActions())
	for s := 3; s >= 1; s-- {
		tp.Backward(s, []float64{1, -1}, g)
		for _, v := range g {
			if v != 0 {
				t.Fatal("nonzero gradient with all weights −∞")
			}
		}
	}
}

// TestLimitedEqualsUnlimited: a window covering the whole sequence gives the
// unlimited result.
func TestLimitedEqualsUnlimited(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for _, f := range []bool{false, true} {
		c := Config{States: 2, Symbols: 3, Fixed: f, StateReading: true}
		const B, n = 3, 20
		ld := randLD(rng, c, B, n, 3)
		coef := make([][]float64, n)
		for s := range coef {
			coef[s] = make([]float64, B*c.ReadingSize())
			for j := range coef[s] {
				coef[s][j] = rng.NormFloat64()
			}
		}
		_, gu := lossAndGrad(NewTape(c, B, n), false, ld, coef, true)
		ru := NewTape(c, B, n).Run(ld)
		D := n
		if f {
			D = n + 1 // the bottom row i = −1 counts in the band
		}
		for _, d := range []int{D, D + 5} {
			cl := c
			cl.Window = d
			rl := NewTape(cl, B, n).Run(ld)
			_, gl := lossAndGrad(NewTape(cl, B, n), false, ld, coef, true)
			for s := range ru {
				for j := range ru[s] {
					if math.Abs(ru[s][j]-rl[s][j]) > 1e-12 {
						t.Fatalf("fixed=%v D=%d: reading %v vs unlimited %v", f, d, rl[s][j], ru[s][j])
					}
				}
				for j := range gu[s] {
					if math.Abs(gu[s][j]-gl[s][j]) > 1e-12 {
						t.Fatalf("fixed=%v D=%d: gradient %v vs unlimited %v", f, d, gl[s][j], gu[s][j])
					}
				}
			}
		}
		// One step less of window differs (for a generic input).
		cl := c
		cl.Window = D - 1
		rl := NewTape(cl, B, n).Run(ld)
		if math.Abs(rl[n-1][0]-ru[n-1][0]) < 1e-15 {
			t.Errorf("fixed=%v: window D-1 unexpectedly equals unlimited", f)
		}
	}
}

// TestChunking: running a sequence in chunks (Begin(State) between them)
// gives the same readings as running it whole.
func TestChunking(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for _, c := range []Config{
		{States: 2, Symbols: 3, StateReading: true, Window: 5},
		{States: 2, Symbols: 2, Fixed: true, Window: 3},
		{States: 3, Symbols: 2, Fixed: true, StateReading: true, Window: 1},
		{States: 1, Symbols: 2, Window: 7},
	} {
		const B, n = 2, 40
		ld := randLD(rng, c, B, n, 3)
		whole := NewTape(c, B, n).Run(ld)
		for _, chunks := range [][]int{{1}, {2}, {3, 1, 4}, {35}, {7, 13}} {
			tp := NewTape(c, B, 35)
			r := make([]float64, B*c.ReadingSize())
			s, ci := 0, 0
			var st *State
			for s < n {
				if err := tp.Begin(st); err != nil {
					t.Fatal(err)
				}
				size := chunks[ci%len(chunks)]
				ci++
				for k := 0; k < size && s < n; k++ {
					tp.Step(ld[s], r)
					for j := range r {
						if math.Abs(r[j]-whole[s][j]) > 1e-12 {
							t.Fatalf("%+v chunks %v: step %d reading %v, whole %v", c, chunks, s+1, r[j], whole[s][j])
						}
					}
					s++
				}
				st = tp.State()
			}
		}
	}
}

// runChunk runs one chunk of a stream on tp from the carried state st
// (nil: the initial stack): Begin, a Step for each element of ld and
// Backward for them in reverse, the readings in r (and their gradients
// taken from r) and the action gradients in g.
func runChunk(tp *Tape, st *State, ld [][]float64, r, g []float64) error {
	if err := tp.Begin(st); err != nil {
		return err
	}
	for _, l := range ld {
		tp.Step(l, r)
	}
	for j := len(ld); j >= 1; j-- {
		tp.Backward(j, r, g)
	}
	return nil
}

// TestLongStream: a 100,000-step stream with D = 5 in chunks of 35 runs in
// memory that does not grow.
func TestLongStream(t *testing.T) {
	n := 100000
	if testing.Short() {
		n = 20000
	}
	c := Config{States: 2, Symbols: 3, StateReading: true, Window: 5}
	const B, chunk = 1, 35
	rng := rand.New(rand.NewPCG(15, 16))
	tp := NewTape(c, B, chunk)
	ld := randLD(rng, c, B, chunk, 3)
	r := make([]float64, B*c.ReadingSize())
	g := make([]float64, B*c.NumActions())
	var st *State
	var ms runtime.MemStats
	var heap0 uint64
	for s, ci := 0, 0; s < n; ci++ {
		if ci == 10 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			heap0 = ms.HeapAlloc
		}
		k := min(chunk, n-s)
		if err := runChunk(tp, st, ld[:k], r, g); err != nil {
			t.Fatal(err)
		}
		s += k
		for _, v := range r {
			if math.IsNaN(v) {
				t.Fatal("NaN reading")
			}
		}
		st = tp.State()
	}
	runtime.GC()
	runtime.ReadMemStats(&ms)
	if ms.HeapAlloc > heap0+1<<20 {
		t.Errorf("heap grew from %d to %d bytes", heap0, ms.HeapAlloc)
	}
}

// TestNoAllocs: Step and Backward do not allocate.
func TestNoAllocs(t *testing.T) {
	c := Config{States: 2, Symbols: 3, StateReading: true}
	const B, n = 4, 10
	rng := rand.New(rand.NewPCG(17, 18))
	ld := randLD(rng, c, B, n, 2)
	tp := NewTape(c, B, n)
	r := make([]float64, B*c.ReadingSize())
	g := make([]float64, B*c.NumActions())
	allocs := testing.AllocsPerRun(5, func() {
		tp.Begin(nil)
		for s := 0; s < n; s++ {
			tp.Step(ld[s], r)
		}
		for s := n; s >= 1; s-- {
			tp.Backward(s, r, g)
		}
	})
	if allocs > 0 {
		t.Errorf("%v allocations per forward+backward", allocs)
	}
}

// TestLogSoftmaxRows checks normalization and the backward against finite
// differences.
func TestLogSoftmaxRows(t *testing.T) {
	c := Config{States: 2, Symbols: 2}
	rng := rand.New(rand.NewPCG(19, 20))
	const B = 2
	x := make([]float64, B*c.NumActions())
	for i := range x {
		x[i] = 3 * rng.NormFloat64()
	}
	y := make([]float64, len(x))
	LogSoftmaxRows(y, x, c, B)
	W := c.rowLen()
	for o := 0; o < len(y); o += W {
		var s float64
		for _, v := range y[o : o+W] {
			s += math.Exp(v)
		}
		if math.Abs(s-1) > 1e-12 {
			t.Fatalf("row sums to %v", s)
		}
	}
	w := make([]float64, len(x))
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	gs := make([]float64, len(x))
	LogSoftmaxRowsBackward(gs, w, y, c, B)
	f := func() float64 {
		LogSoftmaxRows(y, x, c, B)
		var s float64
		for i := range y {
			s += w[i] * y[i]
		}
		return s
	}
	for i := range x {
		old := x[i]
		x[i] = old + 1e-6
		p := f()
		x[i] = old - 1e-6
		mn := f()
		x[i] = old
		if fd := (p - mn) / 2e-6; math.Abs(fd-gs[i]) > 1e-7 {
			t.Fatalf("entry %d: %v vs %v", i, gs[i], fd)
		}
	}
}

// TestPow2Scale checks the power-of-two scaling of finalize's fast path
// across the normal doubles, the smallest and largest included.
func TestPow2Scale(t *testing.T) {
	for _, x := range []float64{1, 0.5, 0.75, 3, 1e-250, 1e-300, 2.2250738585072014e-308, 4.4501477170144023e-308, 1e300, 1.7976931348623157e308, 8.98846567431158e307} {
		f, e := pow2Scale(x)
		if v := x * f; !(v >= 0.5 && v < 1) {
			t.Errorf("pow2Scale(%g): x·f = %g, want it in [0.5, 1)", x, v)
		}
		if math.Ldexp(1, -e) != f {
			t.Errorf("pow2Scale(%g): f = %g is not 2^−%d", x, f, e)
		}
	}
}

// TestStateInto: a state written into the memory of a spent state
// (StateInto) is the state State writes, bit for bit, and continuing from
// it gives what continuing from a new one does; the memory is reused, and
// a spent state of another configuration or batch is not.
func TestStateInto(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	for _, c := range []Config{
		{States: 2, Symbols: 3, StateReading: true, Window: 5},
		{States: 3, Symbols: 4, StateReading: true, Window: 6},
		{States: 1, Symbols: 2, Fixed: true, Window: 3},
	} {
		const B, chunk, chunks = 2, 7, 6
		ld := randLD(rng, c, B, chunk*chunks, 3)
		fresh, reuse := NewTape(c, B, chunk), NewTape(c, B, chunk)
		r1, r2 := make([]float64, B*c.ReadingSize()), make([]float64, B*c.ReadingSize())
		var st1, st2, spare *State
		for k := 0; k < chunks; k++ {
			if err := fresh.Begin(st1); err != nil {
				t.Fatal(err)
			}
			if err := reuse.Begin(st2); err != nil {
				t.Fatal(err)
			}
			for s := k * chunk; s < (k+1)*chunk; s++ {
				fresh.Step(ld[s], r1)
				reuse.Step(ld[s], r2)
				if !slices.Equal(r1, r2) {
					t.Fatalf("%+v: step %d: readings %v from a reused state, %v from new ones", c, s+1, r2, r1)
				}
			}
			st1 = fresh.State()
			next := reuse.StateInto(spare)
			if spare != nil && (next != spare || &next.elems[0].E[0] != &spare.elems[0].E[0]) {
				t.Errorf("%+v: chunk %d: the spent state's memory was not reused", c, k)
			}
			spare, st2 = st2, next
			b1, err := st1.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			b2, err := st2.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b1, b2) {
				t.Fatalf("%+v: chunk %d: the state written into a spent one differs", c, k)
			}
		}
		// A spent state of another batch size is left alone.
		other := NewTape(c, B+1, chunk)
		if err := other.Begin(nil); err != nil {
			t.Fatal(err)
		}
		other.Step(randLD(rng, c, B+1, 1, 3)[0], make([]float64, (B+1)*c.ReadingSize()))
		if got := other.StateInto(spare); got == spare || got.Batch() != B+1 {
			t.Errorf("%+v: StateInto wrote a batch of %d into a state of batch %d", c, B+1, spare.Batch())
		}
	}
}

// TestPool runs the tapes of one pool, for several batch sizes, in
// turn over runs of several lengths, each run on sequences that runs of
// the other tapes used and grew in between: every reading and action
// gradient equals bit for bit that of a tape of its own, and the pool
// holds, per sequence, the memory of the longest run that used it (less
// than a tape per batch size would).
func TestPool(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	for _, c := range []Config{
		{States: 2, Symbols: 3, StateReading: true},
		{States: 3, Symbols: 3, Fixed: true},
		{States: 1, Symbols: 2, Window: 4},
		{States: 2, Symbols: 2, Fixed: true, Vector: 3},
	} {
		p := NewPool(c)
		runs := []struct{ batch, n int }{{3, 5}, {1, 12}, {3, 8}, {2, 14}, {3, 4}, {1, 3}, {4, 6}}
		longest := map[int]int{} // per batch size, as a tape each would hold
		for _, r := range runs {
			ld := randLD(rng, c, r.batch, r.n, 3)
			var vec [][]float64
			if c.Vector > 0 {
				vec = make([][]float64, r.n)
				for s := range vec {
					vec[s] = make([]float64, r.batch*c.Vector)
					for i := range vec[s] {
						vec[s][i] = rng.Float64()
					}
				}
			}
			run := func(tp *Tape) (reads, grads [][]float64) {
				bottom := make([]float64, c.Vector)
				var err error
				if c.Vector > 0 {
					err = tp.BeginVector(nil, bottom)
				} else {
					err = tp.Begin(nil)
				}
				if err != nil {
					t.Fatal(err)
				}
				for s := range r.n {
					out := make([]float64, r.batch*c.ReadingSize())
					if c.Vector > 0 {
						tp.StepVector(ld[s], vec[s], out)
					} else {
						tp.Step(ld[s], out)
					}
					reads = append(reads, out)
				}
				for s := r.n; s >= 1; s-- {
					g := make([]float64, r.batch*c.NumActions())
					if c.Vector > 0 {
						tp.BackwardVector(s, reads[s-1], g, make([]float64, r.batch*c.Vector), nil)
					} else {
						tp.Backward(s, reads[s-1], g)
					}
					grads = append(grads, g)
				}
				return reads, grads
			}
			r1, g1 := run(p.Tape(r.batch, r.n))
			r2, g2 := run(NewTape(c, r.batch, r.n))
			for s := range r1 {
				if !slices.Equal(r1[s], r2[s]) || !slices.Equal(g1[s], g2[s]) {
					t.Fatalf("%+v batch %d n %d: step %d differs from a tape of its own", c, r.batch, r.n, s+1)
				}
			}
			longest[r.batch] = max(longest[r.batch], r.n)
		}
		perBatch := 0.0
		for b, n := range longest {
			perBatch += NewTape(c, b, n).pool().Bytes()
		}
		if got := p.Bytes(); got >= perBatch {
			t.Errorf("%+v: the pool holds %.0f bytes, a tape per batch size %.0f", c, got, perBatch)
		}
	}
}
