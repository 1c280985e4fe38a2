package controller

import (
	"math"
	"math/rand/v2"
	"testing"
)

// expAll gives math.Exp's bits for every argument: random ones over the
// whole range, the edges of the kernel's range and beyond (overflow,
// denormal results, underflow), zeros, infinities and NaN, at every
// position of an eight-lane block and in the scalar tail.
func TestExpAllMatchesMathExp(t *testing.T) {
	if !useVecExp {
		t.Log("no AVX-512 here: expAll is math.Exp itself")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var xs []float64
	for range 200000 {
		switch rng.IntN(4) {
		case 0:
			xs = append(xs, rng.NormFloat64())
		case 1:
			xs = append(xs, (rng.Float64()*2-1)*60)
		case 2:
			xs = append(xs, (rng.Float64()*2-1)*750)
		default:
			xs = append(xs, math.Float64frombits(rng.Uint64()))
		}
	}
	for _, x := range []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 1e-300, -1e-300, expSafe, -expSafe,
		math.Nextafter(expSafe, 1000), 709.78, 709.79, -708.4, -708.39, -745.2, -746, math.Inf(1), math.Inf(-1), math.NaN(),
		math.Ln2 / 2, -math.Ln2 / 2, 0.5 * math.Ln2 * 3, 88.0296919311130543, -88.0296919311130543} {
		for range 9 {
			xs = append(xs, x)
		}
	}
	xs = append(xs, 1, 2, 3) // a tail
	got := make([]float64, len(xs))
	expAll(got, xs)
	for i, x := range xs {
		want := math.Exp(x)
		if math.Float64bits(got[i]) != math.Float64bits(want) && !(math.IsNaN(want) && math.IsNaN(got[i])) {
			t.Fatalf("expAll(%v) = %v (%#x), math.Exp %v (%#x)", x, got[i], math.Float64bits(got[i]), want, math.Float64bits(want))
		}
	}
}

func BenchmarkExpAll(b *testing.B) {
	xs := make([]float64, 1024)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range xs {
		xs[i] = rng.NormFloat64() * 4
	}
	dst := make([]float64, len(xs))
	for _, vec := range []bool{false, true} {
		if vec && !useVecExp {
			continue
		}
		name := map[bool]string{false: "math.Exp", true: "vector"}[vec]
		b.Run(name, func(b *testing.B) {
			defer func(v bool) { useVecExp = v }(useVecExp)
			useVecExp = vec
			for i := 0; i < b.N; i++ {
				expAll(dst, xs)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(xs)), "ns/exp")
		})
	}
}

// cellRow gives the bits of the cell written with sigmoid and math.Tanh,
// on pre-activations of every size, zeros, the bounds of tanh's branches,
// infinities and NaN, with the vector exponentials and without.
func TestCellRowMatchesScalar(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	const H = 37 // a tail after the blocks of eight
	special := []float64{0, math.Copysign(0, -1), 0.625, -0.625, math.Nextafter(0.625, 0), 0.5 * tanhMaxLog, -0.5 * tanhMaxLog,
		math.Nextafter(0.5*tanhMaxLog, 100), 800, -800, 1e-8, -1e-8, math.Inf(1), math.Inf(-1), math.NaN(), 40, -40}
	for trial := range 400 {
		c := make([]float64, 5*H)
		cPrev := make([]float64, H)
		for i := range 4 * H {
			switch {
			case trial%4 == 3:
				c[i] = special[rng.IntN(len(special))]
			case trial%4 == 2:
				c[i] = rng.NormFloat64() * 30
			default:
				c[i] = rng.NormFloat64() * 2
			}
		}
		for i := range cPrev {
			cPrev[i] = rng.NormFloat64() * 3
		}
		want := slicesClone(c)
		wantH, wantC := make([]float64, H), make([]float64, H)
		for j := range H {
			i, f, g, o := sigmoid(want[j]), sigmoid(want[H+j]), math.Tanh(want[2*H+j]), sigmoid(want[3*H+j])
			cn := f*cPrev[j] + i*g
			tc := math.Tanh(cn)
			want[j], want[H+j], want[2*H+j], want[3*H+j], want[4*H+j] = i, f, g, o, tc
			wantC[j], wantH[j] = cn, o*tc
		}
		for _, vec := range []bool{true, false} {
			func() {
				defer func(v bool) { useVecExp = v }(useVecExp)
				useVecExp = useVecExp && vec
				got, h, cn := slicesClone(c), make([]float64, H), make([]float64, H)
				cellRow(got, cPrev, h, cn, make([]float64, 8*H))
				for _, p := range []struct {
					name      string
					got, want []float64
				}{{"activations", got, want}, {"h", h, wantH}, {"c", cn, wantC}} {
					for i := range p.want {
						if math.Float64bits(p.got[i]) != math.Float64bits(p.want[i]) && !(math.IsNaN(p.got[i]) && math.IsNaN(p.want[i])) {
							t.Fatalf("trial %d vector %v: %s[%d] = %v, want %v", trial, vec, p.name, i, p.got[i], p.want[i])
						}
					}
				}
			}()
		}
	}
}

func slicesClone(s []float64) []float64 { return append([]float64(nil), s...) }

// sigmoid is the logistic function as the cell computed it before cellRow.
func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }
