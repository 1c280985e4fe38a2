package controller

import "math"

// expSafe bounds the arguments that expAsm computes: inside it e^x is a
// normal float64 and math.Exp takes neither its overflow nor its denormal
// branch; outside it (and for NaN), expAll calls math.Exp.
const expSafe = 700

// expAll sets dst[i] = math.Exp(src[i]), bit for bit: eight at a time by
// the AVX-512 kernel, which follows the instructions of math.Exp's own
// amd64 assembly (its fused multiply-add path), where there is one;
// math.Exp for the rest of the slice and for arguments outside ±expSafe.
// dst must be at least as long as src.
func expAll(dst, src []float64) {
	dst = dst[:len(src)]
	n := 0
	if useVecExp {
		if n = len(src) &^ 7; n > 0 {
			expAsm(&dst[0], &src[0], n)
		}
	}
	for i, x := range src[:n] {
		if !(x >= -expSafe && x <= expSafe) {
			dst[i] = math.Exp(x)
		}
	}
	for i := n; i < len(src); i++ {
		dst[i] = math.Exp(src[i])
	}
}
