package linalg

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestAffineBackward checks the gradients of L = Σ c ⊙ (x Wᵀ + b) against
// central differences.
func TestAffineBackward(t *testing.T) {
	const batch, in, out = 3, 4, 5
	rng := rand.New(rand.NewPCG(1, 1))
	randv := func(n int) []float64 {
		v := make([]float64, n)
		for i := range v {
			v[i] = rng.NormFloat64()
		}
		return v
	}
	x, w, b, c := randv(batch*in), randv(out*in), randv(out), randv(batch*out)
	loss := func() float64 {
		y := make([]float64, batch*out)
		Affine(y, x, w, b, batch, in, out)
		s := 0.0
		for i := range y {
			s += c[i] * y[i]
		}
		return s
	}
	dx, dw, db := make([]float64, len(x)), make([]float64, len(w)), make([]float64, len(b))
	AffineBackward(dx, dw, db, c, x, w, batch, in, out)
	for _, tc := range []struct {
		name string
		v, g []float64
	}{{"x", x, dx}, {"w", w, dw}, {"b", b, db}} {
		for i := range tc.v {
			o := tc.v[i]
			tc.v[i] = o + 1e-6
			fp := loss()
			tc.v[i] = o - 1e-6
			fm := loss()
			tc.v[i] = o
			num := (fp - fm) / 2e-6
			if math.Abs(num-tc.g[i]) > 1e-7*(1+math.Abs(num)) {
				t.Errorf("d%s[%d] = %g, numeric %g", tc.name, i, tc.g[i], num)
			}
		}
	}
}
