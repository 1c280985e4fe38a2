package nskernel

//go:generate go run gen_kernels.go
//go:generate go run gen_vec12.go

// matMul sets R (n×p) += A (n×k) · B (k×p).
func matMul(R, A, B []float64, n, k, p int) {
	if matMulFixed(R, A, B, n, k, p) {
		return
	}
	for i := 0; i < n; i++ {
		r := R[i*p : (i+1)*p]
		for l, av := range A[i*k : (i+1)*k] {
			if av == 0 {
				continue
			}
			for j, bv := range B[l*p : (l+1)*p] {
				r[j] += av * bv
			}
		}
	}
}

// matMulScaled sets R (m×m) += f · A (m×m) · B (m×m).
func matMulScaled(R, A, B []float64, f float64, m int) {
	if hasMulAdd(m) {
		mulAddV(R, A, B, f, m, m, m, 1)
		return
	}
	if matMulScaledFixed(R, A, B, f, m) {
		return
	}
	for i := 0; i < m; i++ {
		r := R[i*m : (i+1)*m]
		for l, av := range A[i*m : (i+1)*m] {
			av *= f
			if av == 0 {
				continue
			}
			for j, bv := range B[l*m : (l+1)*m] {
				r[j] += av * bv
			}
		}
	}
}

// matMulScaledRows sets R (n×m) += f · A (n×m) · B (m×m).
func matMulScaledRows(R, A, B []float64, f float64, n, m int) {
	switch m {
	case 2:
		mulNN2x2f(R, A, B, f, n)
		return
	case 6:
		mulNN6x6f(R, A, B, f, n)
		return
	case 9:
		mulNN9x9f(R, A, B, f, n)
		return
	case 12:
		mulNN12x12f(R, A, B, f, n)
		return
	}
	for i := 0; i < n; i++ {
		r := R[i*m : (i+1)*m]
		for l, av := range A[i*m : (i+1)*m] {
			av *= f
			for j, bv := range B[l*m : (l+1)*m] {
				r[j] += av * bv
			}
		}
	}
}

// matMulBT sets C (n×k) += f · A (n×p) · Bᵀ, B being k×p.
func matMulBT(C, A, B []float64, f float64, n, k, p int) {
	if matMulBTFixed(C, A, B, f, n, k, p) {
		return
	}
	for i := 0; i < n; i++ {
		a := A[i*p : (i+1)*p]
		c := C[i*k : (i+1)*k]
		for l := range c {
			b := B[l*p : (l+1)*p]
			var sum float64
			for j, av := range a {
				sum += av * b[j]
			}
			c[l] += f * sum
		}
	}
}

// matMulAT sets C (k×p) += f · Aᵀ · B, A being n×k and B n×p.
func matMulAT(C, A, B []float64, f float64, n, k, p int) {
	if hasMulAdd(k) && p == k && (n == k || n == 1) {
		mulAddV(C, A, B, f, k, n, 1, k)
		return
	}
	if matMulATFixed(C, A, B, f, n, k, p) {
		return
	}
	for i := 0; i < n; i++ {
		b := B[i*p : (i+1)*p]
		for l, av := range A[i*k : (i+1)*k] {
			av *= f
			if av == 0 {
				continue
			}
			c := C[l*p : (l+1)*p]
			for j, bv := range b {
				c[j] += av * bv
			}
		}
	}
}

// hasMulAdd reports whether mulAddV serves blocks of size m: with the
// vector kernels, m = 6 and 9 (AVX2) and m = 12 (AVX-512).
func hasMulAdd(m int) bool {
	return useVec && (m == 6 || m == 9) || useVec && useZ && m == 12
}

// mulAddV is the vector product kernel (mulAdd6, mulAdd9, mulAdd12) for
// m×m R and K×m B: R += f·A′·B with A′(l,i) = A[l·sr + i·sc]. It needs
// hasMulAdd(m).
func mulAddV(R, A, B []float64, f float64, m, K, sr, sc int) {
	switch m {
	case 6:
		mulAdd6(R, A, B, f, K, sr, sc)
	case 9:
		mulAdd9(R, A, B, f, K, sr, sc)
	default:
		mulAdd12(R, A, B, f, K, sr, sc)
	}
}

// popKernel sets out[i][y·Q+r] += Σ_u e[i][y·Q+u] · x[(y·Q+u)·Q+r] for an
// m×m out and e and an m×Q x.
func popKernel(out, e, x []float64, m, Q int) {
	switch Q {
	case 1:
		x = x[:m]
		for i := 0; i < m; i++ {
			o, er := out[i*m:(i+1)*m], e[i*m:(i+1)*m]
			for j, xv := range x {
				o[j] += er[j] * xv
			}
		}
		return
	case 2:
		for j := 0; j+1 < m; j += 2 {
			xx := x[2*j : 2*j+4]
			x00, x01, x10, x11 := xx[0], xx[1], xx[2], xx[3]
			for i := 0; i < m; i++ {
				er := e[i*m+j : i*m+j+2]
				o := out[i*m+j : i*m+j+2]
				e0, e1 := er[0], er[1]
				o[0] += e0*x00 + e1*x10
				o[1] += e0*x01 + e1*x11
			}
		}
		return
	case 3:
		for j := 0; j+2 < m; j += 3 {
			xx := x[3*j : 3*j+9]
			x00, x01, x02 := xx[0], xx[1], xx[2]
			x10, x11, x12 := xx[3], xx[4], xx[5]
			x20, x21, x22 := xx[6], xx[7], xx[8]
			for i := 0; i < m; i++ {
				er := e[i*m+j : i*m+j+3]
				o := out[i*m+j : i*m+j+3]
				e0, e1, e2 := er[0], er[1], er[2]
				o[0] += e0*x00 + e1*x10 + e2*x20
				o[1] += e0*x01 + e1*x11 + e2*x21
				o[2] += e0*x02 + e1*x12 + e2*x22
			}
		}
		return
	}
	for i := 0; i < m; i++ {
		o, er := out[i*m:(i+1)*m], e[i*m:(i+1)*m]
		for j := 0; j < m; j += Q {
			for u := 0; u < Q; u++ {
				ev := er[j+u]
				xr := x[(j+u)*Q : (j+u+1)*Q]
				for r, xv := range xr {
					o[j+r] += ev * xv
				}
			}
		}
	}
}

// popBackKernel is the adjoint of popKernel: with B the output adjoint
// (m×m), it sets cx[i][y·Q+u] += Σ_r B[i][y·Q+r] · x[(y·Q+u)·Q+r] and
// tmp[(y·Q+u)·Q+r] += Σ_i e[i][y·Q+u] · B[i][y·Q+r].
func popBackKernel(cx, tmp, B, e, x []float64, m, Q int) {
	switch Q {
	case 2:
		for j := 0; j+1 < m; j += 2 {
			xx := x[2*j : 2*j+4]
			x00, x01, x10, x11 := xx[0], xx[1], xx[2], xx[3]
			var t00, t01, t10, t11 float64
			for i := 0; i < m; i++ {
				br := B[i*m+j : i*m+j+2]
				er := e[i*m+j : i*m+j+2]
				c := cx[i*m+j : i*m+j+2]
				b0, b1 := br[0], br[1]
				e0, e1 := er[0], er[1]
				c[0] += b0*x00 + b1*x01
				c[1] += b0*x10 + b1*x11
				t00 += e0 * b0
				t01 += e0 * b1
				t10 += e1 * b0
				t11 += e1 * b1
			}
			tt := tmp[2*j : 2*j+4]
			tt[0] += t00
			tt[1] += t01
			tt[2] += t10
			tt[3] += t11
		}
		return
	}
	for i := 0; i < m; i++ {
		br, er, c := B[i*m:(i+1)*m], e[i*m:(i+1)*m], cx[i*m:(i+1)*m]
		for j := 0; j < m; j += Q {
			for u := 0; u < Q; u++ {
				xr := x[(j+u)*Q : (j+u+1)*Q]
				tr := tmp[(j+u)*Q : (j+u+1)*Q]
				ev := er[j+u]
				var sum float64
				for r, xv := range xr {
					bv := br[j+r]
					sum += bv * xv
					tr[r] += ev * bv
				}
				c[j+u] += sum
			}
		}
	}
}
