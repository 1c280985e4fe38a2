package nskernel

// Fixed-size variants of the matMul kernels of kernels.go for the common
// shapes (rows of 2, 3, 6 or 9). They perform the same operations in the same
// order as the generic loops, without bounds checks or per-row loop overhead.

type (
	row2 = [2]float64
	row3 = [3]float64
	row6 = [6]float64
	row9 = [9]float64
)

func dot6(a, b *row6) float64 {
	return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] + a[3]*b[3] + a[4]*b[4] + a[5]*b[5]
}

func dot9(a, b *row9) float64 {
	return a[0]*b[0] + a[1]*b[1] + a[2]*b[2] + a[3]*b[3] + a[4]*b[4] +
		a[5]*b[5] + a[6]*b[6] + a[7]*b[7] + a[8]*b[8]
}

// matMulBTFixed is matMulBT for p = 2, 3, 6 or 9; it reports false
// otherwise.
func matMulBTFixed(C, A, B []float64, f float64, n, k, p int) bool {
	switch {
	case n == 6 && k == 6 && p == 6:
		mulNT6x6(C, A, B, f)
		return true
	case n == 6 && k == 6 && p == 2:
		mulNT6x2(C, A, B, f)
		return true
	case n == 9 && k == 9 && p == 9:
		mulNT9x9(C, A, B, f)
		return true
	case n == 9 && k == 9 && p == 3:
		mulNT9x3(C, A, B, f)
		return true
	case n == 12 && k == 12 && p == 12:
		mulNT12x12(C, A, B, f)
		return true
	case n == 12 && k == 12 && p == 3:
		mulNT12x3(C, A, B, f)
		return true
	}
	switch p {
	case 2:
		B = B[:k*2]
		for i := 0; i < n; i++ {
			a := (*row2)(A[i*2:])
			a0, a1 := a[0], a[1]
			c := C[i*k : (i+1)*k]
			for l := range c {
				b := (*row2)(B[l*2:])
				c[l] += f * (a0*b[0] + a1*b[1])
			}
		}
		return true
	case 3:
		B = B[:k*3]
		for i := 0; i < n; i++ {
			a := (*row3)(A[i*3:])
			a0, a1, a2 := a[0], a[1], a[2]
			c := C[i*k : (i+1)*k]
			for l := range c {
				b := (*row3)(B[l*3:])
				c[l] += f * (a0*b[0] + a1*b[1] + a2*b[2])
			}
		}
		return true
	case 6:
		B = B[:k*6]
		for i := 0; i < n; i++ {
			a := (*row6)(A[i*6:])
			c := C[i*k : (i+1)*k]
			for l := range c {
				c[l] += f * dot6(a, (*row6)(B[l*6:]))
			}
		}
		return true
	case 9:
		B = B[:k*9]
		for i := 0; i < n; i++ {
			a := (*row9)(A[i*9:])
			c := C[i*k : (i+1)*k]
			for l := range c {
				c[l] += f * dot9(a, (*row9)(B[l*9:]))
			}
		}
		return true
	}
	return false
}

// matMulATFixed is matMulAT for p = 2, 3, 6 or 9; it reports false
// otherwise.
func matMulATFixed(C, A, B []float64, f float64, n, k, p int) bool {
	switch {
	case n == 6 && k == 6 && p == 6:
		mulTN6x6(C, A, B, f)
		return true
	case n == 6 && k == 6 && p == 2:
		mulTN6x2(C, A, B, f)
		return true
	case n == 9 && k == 9 && p == 9:
		mulTN9x9(C, A, B, f)
		return true
	case n == 9 && k == 9 && p == 3:
		mulTN9x3(C, A, B, f)
		return true
	case n == 12 && k == 12 && p == 12:
		mulTN12x12(C, A, B, f)
		return true
	case n == 12 && k == 12 && p == 3:
		mulTN12x3(C, A, B, f)
		return true
	}
	switch p {
	case 2:
		C = C[:k*2]
		for i := 0; i < n; i++ {
			b := (*row2)(B[i*2:])
			b0, b1 := b[0], b[1]
			for l, av := range A[i*k : (i+1)*k] {
				av *= f
				if av == 0 {
					continue
				}
				c := (*row2)(C[l*2:])
				c[0] += av * b0
				c[1] += av * b1
			}
		}
		return true
	case 3:
		C = C[:k*3]
		for i := 0; i < n; i++ {
			b := (*row3)(B[i*3:])
			b0, b1, b2 := b[0], b[1], b[2]
			for l, av := range A[i*k : (i+1)*k] {
				av *= f
				if av == 0 {
					continue
				}
				c := (*row3)(C[l*3:])
				c[0] += av * b0
				c[1] += av * b1
				c[2] += av * b2
			}
		}
		return true
	case 6:
		C = C[:k*6]
		for i := 0; i < n; i++ {
			b := (*row6)(B[i*6:])
			b0, b1, b2, b3, b4, b5 := b[0], b[1], b[2], b[3], b[4], b[5]
			for l, av := range A[i*k : (i+1)*k] {
				av *= f
				if av == 0 {
					continue
				}
				c := (*row6)(C[l*6:])
				c[0] += av * b0
				c[1] += av * b1
				c[2] += av * b2
				c[3] += av * b3
				c[4] += av * b4
				c[5] += av * b5
			}
		}
		return true
	case 9:
		C = C[:k*9]
		for i := 0; i < n; i++ {
			b := (*row9)(B[i*9:])
			for l, av := range A[i*k : (i+1)*k] {
				av *= f
				if av == 0 {
					continue
				}
				c := (*row9)(C[l*9:])
				c[0] += av * b[0]
				c[1] += av * b[1]
				c[2] += av * b[2]
				c[3] += av * b[3]
				c[4] += av * b[4]
				c[5] += av * b[5]
				c[6] += av * b[6]
				c[7] += av * b[7]
				c[8] += av * b[8]
			}
		}
		return true
	}
	return false
}

// matMulScaledFixed is matMulScaled for m = 6 or 9; it reports false
// otherwise.
func matMulScaledFixed(R, A, B []float64, f float64, m int) bool {
	switch m {
	case 2:
		mulNN2x2f(R, A, B, f, 2)
		return true
	case 6:
		mulNN6x6f(R, A, B, f, 6)
		return true
	case 9:
		mulNN9x9f(R, A, B, f, 9)
		return true
	case 12:
		mulNN12x12f(R, A, B, f, 12)
		return true
	}
	return false
}

// matMulFixed is matMul for p = 2 or 3; it reports false otherwise.
func matMulFixed(R, A, B []float64, n, k, p int) bool {
	switch {
	case k == 6 && p == 2:
		mulNN6x2(R, A, B, n)
		return true
	case k == 9 && p == 3:
		mulNN9x3(R, A, B, n)
		return true
	case k == 12 && p == 3:
		mulNN12x3(R, A, B, n)
		return true
	}
	switch p {
	case 2:
		B = B[:k*2]
		for i := 0; i < n; i++ {
			r := (*row2)(R[i*2:])
			r0, r1 := r[0], r[1]
			for l, av := range A[i*k : (i+1)*k] {
				if av == 0 {
					continue
				}
				b := (*row2)(B[l*2:])
				r0 += av * b[0]
				r1 += av * b[1]
			}
			r[0], r[1] = r0, r1
		}
		return true
	case 3:
		B = B[:k*3]
		for i := 0; i < n; i++ {
			r := (*row3)(R[i*3:])
			r0, r1, r2 := r[0], r[1], r[2]
			for l, av := range A[i*k : (i+1)*k] {
				if av == 0 {
					continue
				}
				b := (*row3)(B[l*3:])
				r0 += av * b[0]
				r1 += av * b[1]
				r2 += av * b[2]
			}
			r[0], r[1], r[2] = r0, r1, r2
		}
		return true
	}
	return false
}

// scaleInto sets dst[i] = w·src[i] for i < len(src).
func scaleInto(dst, src []float64, w float64) {
	switch len(src) {
	case 27:
		d, x := (*[27]float64)(dst), (*[27]float64)(src)
		d[0], d[1], d[2] = w*x[0], w*x[1], w*x[2]
		d[3], d[4], d[5] = w*x[3], w*x[4], w*x[5]
		d[6], d[7], d[8] = w*x[6], w*x[7], w*x[8]
		d[9], d[10], d[11] = w*x[9], w*x[10], w*x[11]
		d[12], d[13], d[14] = w*x[12], w*x[13], w*x[14]
		d[15], d[16], d[17] = w*x[15], w*x[16], w*x[17]
		d[18], d[19], d[20] = w*x[18], w*x[19], w*x[20]
		d[21], d[22], d[23] = w*x[21], w*x[22], w*x[23]
		d[24], d[25], d[26] = w*x[24], w*x[25], w*x[26]
		return
	case 12:
		d, x := (*[12]float64)(dst), (*[12]float64)(src)
		d[0], d[1], d[2], d[3] = w*x[0], w*x[1], w*x[2], w*x[3]
		d[4], d[5], d[6], d[7] = w*x[4], w*x[5], w*x[6], w*x[7]
		d[8], d[9], d[10], d[11] = w*x[8], w*x[9], w*x[10], w*x[11]
		return
	}
	dst = dst[:len(src)]
	for i, v := range src {
		dst[i] = w * v
	}
}
