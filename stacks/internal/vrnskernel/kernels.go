package vrnskernel

// Dense kernels on row-major blocks. K is |Q||Γ|, Q is |Q|; a γ block is
// K×K, a γ′ block K×Q, with configurations indexed y·Q+u (see seq).

// matMul sets R (n×p) += A (n×k) · B (k×p).
func matMul(R, A, B []float64, n, k, p int) {
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

// matMulScaled sets R (K×K) += f · A (K×K) · B (K×K).
func matMulScaled(R, A, B []float64, f float64, K int) {
	for i := 0; i < K; i++ {
		r := R[i*K : (i+1)*K]
		for l, av := range A[i*K : (i+1)*K] {
			av *= f
			if av == 0 {
				continue
			}
			for j, bv := range B[l*K : (l+1)*K] {
				r[j] += av * bv
			}
		}
	}
}

// matMulBT sets C (n×k) += f · A (n×p) · Bᵀ, B being k×p.
func matMulBT(C, A, B []float64, f float64, n, k, p int) {
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

// vecMat sets p (K) += w · aᵀ E for a (K) and E (K×K).
func vecMat(p, a, E []float64, w float64, K int) {
	for i, av := range a[:K] {
		av *= w
		if av == 0 {
			continue
		}
		for j, ev := range E[i*K : (i+1)*K] {
			p[j] += av * ev
		}
	}
}

// popAdd sets acc[i][y·Q+r] += Σ_u E[i][y·Q+u] · X[(y·Q+u)·Q+r] for a K×K
// acc and E and a K×Q X: the pop term of one split point.
func popAdd(acc, E, X []float64, K, Q int) {
	if Q == 1 {
		X = X[:K]
		for i := 0; i < K; i++ {
			o, e := acc[i*K:(i+1)*K], E[i*K:(i+1)*K]
			for j, xv := range X {
				o[j] += e[j] * xv
			}
		}
		return
	}
	for i := 0; i < K; i++ {
		o, e := acc[i*K:(i+1)*K], E[i*K:(i+1)*K]
		for y0 := 0; y0 < K; y0 += Q {
			oy := o[y0 : y0+Q]
			for u := 0; u < Q; u++ {
				ev := e[y0+u]
				if ev == 0 {
					continue
				}
				xr := X[(y0+u)*Q : (y0+u+1)*Q]
				for r, xv := range xr {
					oy[r] += ev * xv
				}
			}
		}
	}
}

// popBack is the adjoint of popAdd scaled by f: with B the adjoint of acc
// (K×K), it sets cE[i][y·Q+u] += f Σ_r B[i][y·Q+r] · X[(y·Q+u)·Q+r] and
// cX[(y·Q+u)·Q+r] += f Σ_i E[i][y·Q+u] · B[i][y·Q+r].
func popBack(cE, cX, B, E, X []float64, f float64, K, Q int) {
	if Q == 2 {
		X = X[:2*K]
		for y0 := 0; y0 < K; y0 += 2 {
			x := X[2*y0 : 2*y0+4]
			x00, x01, x10, x11 := f*x[0], f*x[1], f*x[2], f*x[3]
			var t00, t01, t10, t11 float64
			for i := 0; i < K; i++ {
				o := i*K + y0
				b, e, c := B[o:o+2], E[o:o+2], cE[o:o+2]
				b0, b1, e0, e1 := b[0], b[1], e[0], e[1]
				c[0] += b0*x00 + b1*x01
				c[1] += b0*x10 + b1*x11
				t00 += e0 * b0
				t01 += e0 * b1
				t10 += e1 * b0
				t11 += e1 * b1
			}
			t := cX[2*y0 : 2*y0+4]
			t[0] += f * t00
			t[1] += f * t01
			t[2] += f * t10
			t[3] += f * t11
		}
		return
	}
	for i := 0; i < K; i++ {
		br, er, cr := B[i*K:(i+1)*K], E[i*K:(i+1)*K], cE[i*K:(i+1)*K]
		for y0 := 0; y0 < K; y0 += Q {
			by := br[y0 : y0+Q]
			for u := 0; u < Q; u++ {
				xr := X[(y0+u)*Q : (y0+u+1)*Q]
				tr := cX[(y0+u)*Q : (y0+u+1)*Q]
				ev := f * er[y0+u]
				var sum float64
				for r, xv := range xr {
					bv := by[r]
					sum += bv * xv
					tr[r] += ev * bv
				}
				cr[y0+u] += f * sum
			}
		}
	}
}

// popSum sets acc += Σ_{k<nk} popAdd(E_k, X_k), with E_k =
// E[k·K²:(k+1)·K²] and X_k = X[k·K·Q:(k+1)·K·Q]: the pop term of a block
// over all its split points, each X_k already scaled by its weight.
func popSum(acc, E, X []float64, nk, K, Q int) {
	kk, kq := K*K, K*Q
	switch Q {
	case 1:
		for i := 0; i < K; i++ {
			o := acc[i*K : (i+1)*K]
			for j := range o {
				v := o[j]
				for k := 0; k < nk; k++ {
					v += E[k*kk+i*K+j] * X[k*kq+j]
				}
				o[j] = v
			}
		}
		return
	case 2:
		E, X = E[:nk*kk], X[:nk*kq]
		for i := 0; i < K; i++ {
			for y0 := 0; y0 < K; y0 += 2 {
				o := acc[i*K+y0 : i*K+y0+2]
				o0, o1 := o[0], o[1]
				eo, xo := i*K+y0, 2*y0
				for k := 0; k < nk; k++ {
					e := E[eo : eo+2]
					x := X[xo : xo+4]
					e0, e1 := e[0], e[1]
					o0 += e0*x[0] + e1*x[2]
					o1 += e0*x[1] + e1*x[3]
					eo += kk
					xo += kq
				}
				o[0], o[1] = o0, o1
			}
		}
		return
	case 3:
		E, X = E[:nk*kk], X[:nk*kq]
		for i := 0; i < K; i++ {
			for y0 := 0; y0 < K; y0 += 3 {
				o := acc[i*K+y0 : i*K+y0+3]
				o0, o1, o2 := o[0], o[1], o[2]
				eo, xo := i*K+y0, 3*y0
				for k := 0; k < nk; k++ {
					e := E[eo : eo+3]
					x := X[xo : xo+9]
					e0, e1, e2 := e[0], e[1], e[2]
					o0 += e0*x[0] + e1*x[3] + e2*x[6]
					o1 += e0*x[1] + e1*x[4] + e2*x[7]
					o2 += e0*x[2] + e1*x[5] + e2*x[8]
					eo += kk
					xo += kq
				}
				o[0], o[1], o[2] = o0, o1, o2
			}
		}
		return
	}
	for k := 0; k < nk; k++ {
		popAdd(acc, E[k*kk:(k+1)*kk], X[k*kq:(k+1)*kq], K, Q)
	}
}
