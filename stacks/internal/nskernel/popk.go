package nskernel

import "unsafe"

// Fused pop kernels: the pop contraction of one γ block (a,b) summed over all
// split points k, with the blocks (a,k) and G' blocks (k,b) lying
// contiguously in memory (block stride m·m and m·|Q| respectively).
// The fixed-size kernels sum in their own order, so they agree with
// popKernel / popBackKernel called once per k up to rounding.

// popSumW sets acc (m×m) += Σ_k w_k·(E_k ⋆ X_k), with E_k = E[k·m²:(k+1)·m²]
// and X_k = X[k·m|Q|:(k+1)·m|Q|] (see popKernel), for k < len(w). xs
// (len(w)·m|Q|) is scratch.
func popSumW(acc, E, X, w, xs []float64, m, Q int) {
	nk := len(w)
	if nk == 0 {
		return
	}
	switch {
	case Q == 2 && m == 6:
		popSumW6x2(acc, E, X, w)
		return
	case Q == 1 && m == 2:
		popSumW2x1(acc, E, X, w)
		return
	case Q == 3 && m == 9 && useVec:
		popSumWVec9x3(acc, E, X, w)
		return
	}
	mq := m * Q
	for k, f := range w {
		scaleInto(xs[k*mq:(k+1)*mq], X[k*mq:(k+1)*mq], f)
	}
	popSum(acc, E, xs, nk, m, Q)
}

// popSumW2x1 is popSumW for |Q| = 1, m = 2, where E_k ⋆ X_k scales column y
// of E_k by X_k[y].
func popSumW2x1(acc, E, X, w []float64) {
	nk := len(w)
	acc, E, X = acc[:4], E[:nk*4], X[:nk*2]
	a00, a01, a10, a11 := acc[0], acc[1], acc[2], acc[3]
	for k, f := range w {
		e, x := (*[4]float64)(E[k*4:]), (*[2]float64)(X[k*2:])
		x0, x1 := f*x[0], f*x[1]
		a00 += e[0] * x0
		a01 += e[1] * x1
		a10 += e[2] * x0
		a11 += e[3] * x1
	}
	acc[0], acc[1], acc[2], acc[3] = a00, a01, a10, a11
}

// popSum sets acc (m×m) += Σ_k E_k ⋆ xs_k, with E_k = E[k·m²:(k+1)·m²] and
// xs_k = xs[k·m|Q|:(k+1)·m|Q|] (see popKernel), for k < nk.
func popSum(acc, E, xs []float64, nk, m, Q int) {
	switch {
	case Q == 2 && m == 6:
		popSum6x2(acc, E, xs, nk)
		return
	case Q == 3 && m == 9:
		popSum9x3(acc, E, xs, nk)
		return
	}
	mm, mq := m*m, m*Q
	for k := 0; k < nk; k++ {
		popKernel(acc, E[k*mm:(k+1)*mm], xs[k*mq:(k+1)*mq], m, Q)
	}
}

// popSumW6x2 is popSumW for |Q| = 2, m = 6. Each tile of three rows and
// the two columns of one symbol keeps its six sums in registers over all k,
// scaling the four G' entries it needs on the fly.
func popSumW6x2(acc, E, X, w []float64) {
	nk := len(w)
	acc = acc[:36]
	E, X = E[:nk*36], X[:nk*12] // bounds for the unchecked walk below
	eb, xb := unsafe.Pointer(&E[0]), unsafe.Pointer(&X[0])
	for j := 0; j < 6; j += 2 {
		for i0 := 0; i0 < 6; i0 += 3 {
			o := acc[i0*6+j : i0*6+j+14]
			a00, a01, a10, a11, a20, a21 := o[0], o[1], o[6], o[7], o[12], o[13]
			ep, xp := unsafe.Add(eb, (i0*6+j)*8), unsafe.Add(xb, 2*j*8)
			for k, f := range w {
				// E_k[i0..i0+2][j..j+1] and X_k[j..j+1][0..1], within
				// E[k·36:(k+1)·36] and X[k·12:(k+1)·12].
				e := (*[14]float64)(unsafe.Add(ep, k*36*8))
				x := (*[4]float64)(unsafe.Add(xp, k*12*8))
				x00, x01, x10, x11 := f*x[0], f*x[1], f*x[2], f*x[3]
				a00 += e[0] * x00
				a01 += e[0] * x01
				a10 += e[6] * x00
				a11 += e[6] * x01
				a20 += e[12] * x00
				a21 += e[12] * x01
				a00 += e[1] * x10
				a01 += e[1] * x11
				a10 += e[7] * x10
				a11 += e[7] * x11
				a20 += e[13] * x10
				a21 += e[13] * x11
			}
			o[0], o[1], o[6], o[7], o[12], o[13] = a00, a01, a10, a11, a20, a21
		}
	}
}

func popSum6x2(acc, E, xs []float64, nk int) {
	acc = acc[:36]
	E = E[:nk*36]
	xs = xs[:nk*12]
	for j := 0; j < 6; j += 2 {
		for i0 := 0; i0 < 6; i0 += 3 {
			o := acc[i0*6+j : i0*6+j+14]
			a00, a01, a10, a11, a20, a21 := o[0], o[1], o[6], o[7], o[12], o[13]
			eo, xo := i0*6+j, 2*j
			for k := 0; k < nk; k++ {
				e := E[eo : eo+14]
				x := xs[xo : xo+4]
				x00, x01, x10, x11 := x[0], x[1], x[2], x[3]
				e0, e1 := e[0], e[1]
				a00 += e0*x00 + e1*x10
				a01 += e0*x01 + e1*x11
				e0, e1 = e[6], e[7]
				a10 += e0*x00 + e1*x10
				a11 += e0*x01 + e1*x11
				e0, e1 = e[12], e[13]
				a20 += e0*x00 + e1*x10
				a21 += e0*x01 + e1*x11
				eo += 36
				xo += 12
			}
			o[0], o[1], o[6], o[7], o[12], o[13] = a00, a01, a10, a11, a20, a21
		}
	}
}

// popSumBack is the adjoint of popSum for one output adjoint B (m×m) and
// scaled G' blocks xs_k = es_k·X_k: for every k < nk with es_k ≠ 0 it adds to
// C_k (m×m) the adjoint of E_k and to CP_k (m×|Q|) es_k times the adjoint of
// xs_k, as popBackKernel does. xs (m·|Q|) and tmp (m·|Q|) are scratch.
func popSumBack(C, CP, B, E, X, es, xs, tmp []float64, nk, m, Q int) {
	switch {
	case Q == 2 && m == 6:
		popSumBack6x2(C, CP, B, E, X, es, nk)
		return
	case Q == 3 && m == 9:
		popSumBack9x3(C, CP, B, E, X, es, nk)
		return
	case Q == 3 && m == 12:
		popSumBack12x3(C, CP, B, E, X, es, nk)
		return
	case Q == 1 && m == 2:
		popSumBack2x1(C, CP, B, E, X, es, nk)
		return
	}
	mm, mq := m*m, m*Q
	for k := 0; k < nk; k++ {
		f := es[k]
		if f == 0 {
			continue
		}
		for e, xv := range X[k*mq : (k+1)*mq] {
			xs[e] = f * xv
		}
		clear(tmp)
		popBackKernel(C[k*mm:(k+1)*mm], tmp, B, E[k*mm:(k+1)*mm], xs, m, Q)
		cp := CP[k*mq : (k+1)*mq]
		for e, tv := range tmp {
			cp[e] += f * tv
		}
	}
}
