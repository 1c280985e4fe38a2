package softmax

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestExp: Exp agrees with math.Exp to 1e-9 relative on a fine grid of
// [−708, 0] and on random arguments, and gives 0, NaN and 1 at the edges.
func TestExp(t *testing.T) {
	check := func(x float64) {
		got, want := Exp(x), math.Exp(x)
		if e := math.Abs(got-want) / want; !(e <= 1e-9) {
			t.Fatalf("Exp(%v) = %v, math.Exp gives %v (relative error %.3g)", x, got, want, e)
		}
	}
	for x := 0.0; x > -708; x -= 0.0137 {
		check(x)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100000; i++ {
		check(-rng.Float64() * 40)
	}
	for _, x := range []float64{0, math.Copysign(0, -1), -1e-300, -math.Ln2 / 2, -math.Ln2 / 2 * 1.0000001, -707.9} {
		check(x)
	}
	for _, c := range []struct{ x, want float64 }{{-708.5, 0}, {-1e4, 0}, {math.Inf(-1), 0}} {
		if got := Exp(c.x); got != c.want {
			t.Errorf("Exp(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	if got := Exp(math.NaN()); !math.IsNaN(got) {
		t.Errorf("Exp(NaN) = %v, want NaN", got)
	}
}

// withVec runs f with the vector kernels on (where the CPU has them) or
// off.
func withVec(on bool, f func()) {
	old := useVec
	useVec = on && old
	defer func() { useVec = old }()
	f()
}

// TestKernelsMatchScalar: MaxScore and the terms ExpScores stores are the
// same floats with and without the vector kernels, and the sums of the
// terms differ by no more than two summation orders of nonnegative terms
// can (2(n−1)·2⁻⁵³ of the sum), for every length up to 70 and a vocabulary's,
// with NaN scores, scores far below the maximum (terms 0), a −∞ bias and
// ties.
func TestKernelsMatchScalar(t *testing.T) {
	if !useVec {
		t.Skip("no vector kernels in this build or on this CPU")
	}
	rng := rand.New(rand.NewPCG(3, 4))
	lengths := []int{10000}
	for n := 0; n <= 70; n++ {
		lengths = append(lengths, n)
	}
	for _, n := range lengths {
		for _, kind := range []string{"normal", "wide", "nan", "ties"} {
			name := fmt.Sprintf("n=%d %s", n, kind)
			row, bias := make([]float32, n), make([]float64, n+3)
			for i := range row {
				row[i] = float32(rng.NormFloat64() * 5)
				bias[i] = rng.NormFloat64()
				switch {
				case kind == "wide":
					row[i] = float32(rng.Float64()*2000 - 1000) // many terms below e^−708
				case kind == "nan" && i%9 == 4:
					row[i] = float32(math.NaN())
				case kind == "ties":
					row[i], bias[i] = float32(i%3), 0
				}
			}
			if kind == "wide" && n > 2 {
				bias[1] = math.Inf(-1)
			}
			var mv, ms float64
			withVec(true, func() { mv = MaxScore(row, bias) })
			withVec(false, func() { ms = MaxScore(row, bias) })
			if mv != ms && !(math.IsInf(mv, -1) && math.IsInf(ms, -1)) {
				t.Fatalf("%s: MaxScore %v with the vector kernel, %v without", name, mv, ms)
			}
			m := ms
			if math.IsInf(m, -1) {
				m = 0
			}
			rv, rs := append([]float32(nil), row...), append([]float32(nil), row...)
			var sv, ss, snv float64
			withVec(true, func() {
				snv = ExpScores(append([]float32(nil), row...), bias, m, false)
				sv = ExpScores(rv, bias, m, true)
			})
			withVec(false, func() { ss = ExpScores(rs, bias, m, true) })
			for i := range rv {
				if math.Float32bits(rv[i]) != math.Float32bits(rs[i]) && !(rv[i] != rv[i] && rs[i] != rs[i]) {
					t.Fatalf("%s: term %d (score %v) is %v with the vector kernel, %v without", name, i, row[i], rv[i], rs[i])
				}
			}
			if kind == "nan" && n > 4 {
				if !math.IsNaN(sv) || !math.IsNaN(ss) {
					t.Fatalf("%s: sums %v and %v, want NaN", name, sv, ss)
				}
				continue
			}
			if snv != sv {
				t.Fatalf("%s: sum %v without store, %v with", name, snv, sv)
			}
			if tol := 2 * float64(max(n-1, 0)) * 0x1p-53 * ss; math.Abs(sv-ss) > tol {
				t.Fatalf("%s: sum %v with the vector kernel, %v without (tolerance %g)", name, sv, ss, tol)
			}
		}
	}
}

// TestLogSumExpScores: the one-pass normalizer equals the two-pass one
// (maximum, then the sum) for rows in random, ascending (a rescaling at
// every element) and descending order, and is NaN with a NaN score.
func TestLogSumExpScores(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const n = 1000
	row, bias := make([]float32, n), make([]float64, n)
	for i := range row {
		row[i] = float32(rng.NormFloat64() * 8)
		bias[i] = rng.NormFloat64()
	}
	check := func(name string) {
		m0 := MaxScore(row, bias)
		s0 := 0.0
		for i, x := range row {
			s0 += math.Exp(float64(x) + bias[i] - m0)
		}
		m, s := LogSumExpScores(row, bias)
		// Exp is within 1e-10 relative, and in the ascending row each
		// rescaling adds that much to the terms still weighing in the sum
		// (about 50 of them for steps of 0.02): 1e-8.
		if m != m0 || math.Abs(s-s0) > 1e-8*s0 {
			t.Errorf("%s: max %v, sum %v; two passes give %v, %v", name, m, s, m0, s0)
		}
	}
	check("random")
	for i := range row {
		row[i], bias[i] = float32(i)/50, 0
	}
	check("ascending")
	for i := range row {
		row[i] = float32(n-i) / 50
	}
	check("descending")
	row[n/2] = float32(math.NaN())
	if _, s := LogSumExpScores(row, bias); !math.IsNaN(s) {
		t.Errorf("sum with a NaN score is %v, want NaN", s)
	}
}

// BenchmarkExpScores: the normalizer of a 10,000-word softmax row (maximum,
// then the stored terms and their sum), with and without the vector
// kernels, and Exp against math.Exp per argument.
func BenchmarkExpScores(b *testing.B) {
	const n = 10000
	rng := rand.New(rand.NewPCG(1, 2))
	row, bias := make([]float32, n), make([]float64, n)
	for i := range row {
		row[i] = float32(rng.NormFloat64() * 3)
		bias[i] = rng.NormFloat64() * 0.1
	}
	for _, vec := range []bool{false, true} {
		if vec && !useVec {
			continue
		}
		b.Run(fmt.Sprintf("vector=%v", vec), func(b *testing.B) {
			withVec(vec, func() {
				r := make([]float32, n)
				for i := 0; i < b.N; i++ {
					copy(r, row)
					m := MaxScore(r, bias)
					if ExpScores(r, bias, m, true) == 0 {
						b.Fatal("zero sum")
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/score")
			})
		})
	}
	xs := make([]float64, 4096)
	for i := range xs {
		xs[i] = -rng.Float64() * 30
	}
	for _, f := range []struct {
		name string
		f    func(float64) float64
	}{{"math.Exp", math.Exp}, {"Exp", Exp}} {
		b.Run(f.name, func(b *testing.B) {
			s := 0.0
			for i := 0; i < b.N; i++ {
				for _, x := range xs {
					s += f.f(x)
				}
			}
			if s == 0 {
				b.Fatal(s)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(xs)), "ns/exp")
		})
	}
}
