package nskernel

import (
	"math"
)

// minMaxGo is minMax in Go.
func minMaxGo(R []float64) (lo, hi float64) {
	lo, hi = R[0], R[0]
	nan := false
	for _, v := range R {
		if v < lo {
			lo = v
		}
		if v > hi {
			hi = v
		}
		nan = nan || v != v
	}
	if nan {
		lo = math.NaN()
	}
	return lo, hi
}

// pow2Scale returns f = 2^−e and e for the power of two with x·f in
// [0.5, 1), for a normal x > 0 (finalize's are at least fwdTiny).
func pow2Scale(x float64) (f float64, e int) {
	bits := math.Float64bits(x)
	if ex := int(bits>>52) & 0x7ff; ex > 1 && ex < 2045 {
		e = ex - 1022
		return math.Float64frombits(uint64(1023-e) << 52), e
	}
	_, e = math.Frexp(x)
	return math.Ldexp(1, -e), e
}

// scaledH returns hfac(x) for x = y + e·ln 2, a shift from finalize's fast
// path (fast true), without exp when hy, exp(y), is not 0.
func scaledH(x, hy float64, e int, fast bool) float64 {
	if !(x >= -hLim && x <= hLim) {
		return 0
	}
	if fast && hy != 0 {
		return math.Ldexp(hy, e)
	}
	return math.Exp(x)
}

// hfac returns exp(x) for |x| ≤ hLim and 0 (meaning "compute directly")
// otherwise.
func hfac(x float64) float64 {
	if x >= -hLim && x <= hLim {
		return math.Exp(x)
	}
	return 0
}
