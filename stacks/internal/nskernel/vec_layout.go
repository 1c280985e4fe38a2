package nskernel

// Layouts of the G' blocks for the vector pop kernels of m = 6, |Q| = 2
// (vec_amd64.go). A 6×6 block, row-major, is nine vectors of four entries;
// vector v holds two (row, symbol) pairs, whose symbols (yA, yB) follow the
// pattern v mod 3: (0,1), (2,0), (1,2). G' entry (y,u,r) (row (y,u), column
// r) is at index 4y+2u+r of its block.

// vecPat gives (yA, yB) for each pattern.
var vecPat = [3][2]int{{0, 1}, {2, 0}, {1, 2}}

// permXP6x2 writes the forward layout of nk G' blocks X (12 entries each)
// into XP (24 entries each): for each pattern (yA, yB), the entries
// (y,0,r) and then (y,1,r), for y = yA, yB and r = 0, 1.
func permXP6x2(XP, X []float64, nk int) {
	XP, X = XP[:nk*24], X[:nk*12]
	for k := 0; k < nk; k++ {
		x, d := (*[12]float64)(X[k*12:]), (*[24]float64)(XP[k*24:])
		for p, yy := range vecPat {
			a, b := 4*yy[0], 4*yy[1]
			o := d[p*8 : p*8+8]
			o[0], o[1], o[2], o[3] = x[a], x[a+1], x[b], x[b+1]
			o[4], o[5], o[6], o[7] = x[a+2], x[a+3], x[b+2], x[b+3]
		}
	}
}

// permXZ6x2 writes the forward layout of the 512-bit kernel
// (popSumWZ6x2): permXP6x2's, with the first halves of patterns 0 and 1
// side by side, then their second halves, then pattern 2's.
func permXZ6x2(XZ, X []float64, nk int) { permZ6x2(XZ, X, nk, 1, 2) }

// permXTZ6x2 writes the backward layout of the 512-bit kernel
// (popSumBackZ6x2): permXT6x2's, arranged as permXZ6x2 arranges
// permXP6x2's.
func permXTZ6x2(XZ, X []float64, nk int) { permZ6x2(XZ, X, nk, 2, 1) }

// permZ6x2 writes the 512-bit kernels' layouts: per block, for each
// pattern (yA, yB), the first half (a, a+s, b, b+s) and the second
// (a+h, a+h+s, b+h, b+h+s), where a and b are the G' rows of yA and yB,
// the halves of patterns 0 and 1 side by side, then pattern 2's.
func permZ6x2(XZ, X []float64, nk, s, h int) {
	XZ, X = XZ[:nk*24], X[:nk*12]
	for k := 0; k < nk; k++ {
		x, d := (*[12]float64)(X[k*12:]), (*[24]float64)(XZ[k*24:])
		for p, yy := range vecPat {
			a, b := 4*yy[0], 4*yy[1]
			lo, hi := d[4*p:4*p+4], d[4*p+8:4*p+12] // patterns 0 and 1
			if p == 2 {
				lo, hi = d[16:20], d[20:24]
			}
			lo[0], lo[1], lo[2], lo[3] = x[a], x[a+s], x[b], x[b+s]
			hi[0], hi[1], hi[2], hi[3] = x[a+h], x[a+h+s], x[b+h], x[b+h+s]
		}
	}
}

// permXT6x2 writes the backward layout: for each pattern (yA, yB), the
// entries (y,u,0) and then (y,u,1), for y = yA, yB and u = 0, 1.
func permXT6x2(XT, X []float64, nk int) {
	XT, X = XT[:nk*24], X[:nk*12]
	for k := 0; k < nk; k++ {
		x, d := (*[12]float64)(X[k*12:]), (*[24]float64)(XT[k*24:])
		for p, yy := range vecPat {
			a, b := 4*yy[0], 4*yy[1]
			o := d[p*8 : p*8+8]
			o[0], o[1], o[2], o[3] = x[a], x[a+2], x[b], x[b+2]
			o[4], o[5], o[6], o[7] = x[a+1], x[a+3], x[b+1], x[b+3]
		}
	}
}

// permXT9x3 writes the backward layout of nk G' blocks X of m = 9, |Q| = 3
// (27 entries each) into XT: each symbol's 3×3 block transposed, so that
// entry (y,u,r) is at 9y+3r+u.
func permXT9x3(XT, X []float64, nk int) {
	XT, X = XT[:nk*27], X[:nk*27]
	for k := 0; k < nk; k++ {
		x, d := (*[27]float64)(X[k*27:]), (*[27]float64)(XT[k*27:])
		for y := 0; y < 27; y += 9 {
			for u := 0; u < 3; u++ {
				d[y+u], d[y+3+u], d[y+6+u] = x[y+3*u], x[y+3*u+1], x[y+3*u+2]
			}
		}
	}
}

// Layouts of the 512-bit kernels of m = 9, |Q| = 3 (popSumBackZ9x3,
// popSumWZ9x3). With l = 3y+u the index of a G' row:

// permXR9x3 writes nk G' blocks X (27 entries each, (l, r) at 3l+r) with
// each transposed, (r, l) at 9r+l.
func permXR9x3(XR, X []float64, nk int) {
	XR, X = XR[:nk*27], X[:nk*27]
	for k := 0; k < nk; k++ {
		x, d := (*[27]float64)(X[k*27:]), (*[27]float64)(XR[k*27:])
		for l := 0; l < 9; l++ {
			d[l], d[9+l], d[18+l] = x[3*l], x[3*l+1], x[3*l+2]
		}
	}
}

// bexp9x3 writes the block adjoint B (9×9, (i, y, r) at 9i+3y+r) expanded
// for the kernel into bx (243 entries): first, for r = 0, 1, 2 and rows
// i, the eight entries B(i, l/3, r) for l < 8 (at 72r+8i+l); then column
// 8 (y = 2) as B8(i, r) = B(i, 2, r) at 216+3i+r.
func bexp9x3(bx, B []float64) {
	bx, B = bx[:243], B[:81]
	for r := 0; r < 3; r++ {
		for i := 0; i < 9; i++ {
			row := bx[72*r+8*i : 72*r+8*i+8]
			b := B[9*i+r : 9*i+r+7]
			row[0], row[1], row[2] = b[0], b[0], b[0]
			row[3], row[4], row[5] = b[3], b[3], b[3]
			row[6], row[7] = b[6], b[6]
		}
	}
	for i := 0; i < 9; i++ {
		bx[216+3*i], bx[216+3*i+1], bx[216+3*i+2] = B[9*i+6], B[9*i+7], B[9*i+8]
	}
}

// addCPT adds nk G' adjoints in the layout of permXR9x3 (CPT) to CP, in the
// blocks' own layout.
func addCPT(CP, CPT []float64, nk int) {
	CP, CPT = CP[:nk*27], CPT[:nk*27]
	for k := 0; k < nk; k++ {
		c, t := (*[27]float64)(CP[k*27:]), (*[27]float64)(CPT[k*27:])
		for l := 0; l < 9; l++ {
			c[3*l] += t[l]
			c[3*l+1] += t[9+l]
			c[3*l+2] += t[18+l]
		}
	}
}

// permXE9x3 writes nk G' blocks X in the layout of the 512-bit forward
// kernel (popSumWZ9x3Asm): for u = 0, 1, 2 the eight entries X(3y+u, r) for
// l = 3y+r < 8 (at 8u+l), then X(6+u, 2) for u = 0, 1, 2 (at 24+u).
func permXE9x3(XE, X []float64, nk int) {
	XE, X = XE[:nk*27], X[:nk*27]
	for k := 0; k < nk; k++ {
		x, d := (*[27]float64)(X[k*27:]), (*[27]float64)(XE[k*27:])
		for u := 0; u < 3; u++ {
			for l := 0; l < 8; l++ {
				y, r := l/3, l%3
				d[8*u+l] = x[(3*y+u)*3+r]
			}
			d[24+u] = x[(6+u)*3+2]
		}
	}
}

// The layouts of the 512-bit pop kernels of m = 12, |Q| = 3 (gen_vec12.go):
// lane l of vector j = 0, 1, 2 of a pair of rows stands for entry e = 8j+l of
// the pair, column c = e mod 12 = 3y + v of its row.

// permXE12x3 writes nk G' blocks X in the layout of the forward kernel
// (popSumWZ12x3): vector 3j+u holds X(3y+u, v) for lane (y, v) of vector j.
func permXE12x3(XE, X []float64, nk int) { perm12(XE, X, nk, &xe12) }

// permXT12x3 writes nk G' blocks X in the layout of the backward kernel
// (popSumBackZ12x3): vector 3j+r holds X(3y+v, r) for lane (y, v) of
// vector j.
func permXT12x3(XT, X []float64, nk int) { perm12(XT, X, nk, &xt12) }

// perm12 writes nk G' blocks X (36 entries each) as 72 entries each, entry
// i from X's entry src[i].
func perm12(dst, X []float64, nk int, src *[72]uint8) {
	dst, X = dst[:nk*72], X[:nk*36]
	for k := 0; k < nk; k++ {
		x, d := (*[36]float64)(X[k*36:]), (*[72]float64)(dst[k*72:])
		for i, s := range src {
			d[i] = x[s]
		}
	}
}

// addCPT12 adds nk G' adjoints in the layout of the backward kernel (CPT:
// entry 12r + c for column c and state r) to CP, in the blocks' own layout
// (entry 3c + r).
func addCPT12(CP, CPT []float64, nk int) {
	CP, CPT = CP[:nk*36], CPT[:nk*36]
	for k := 0; k < nk; k++ {
		c, t := (*[36]float64)(CP[k*36:]), (*[36]float64)(CPT[k*36:])
		for cc := 0; cc < 12; cc++ {
			c[3*cc] += t[cc]
			c[3*cc+1] += t[12+cc]
			c[3*cc+2] += t[24+cc]
		}
	}
}

// xe12 and xt12 are the sources in X (36 entries, X(3y+u, r) at 9y+3u+r) of
// the 72 entries of permXE12x3 and permXT12x3.
var xe12, xt12 = func() (xe, xt [72]uint8) {
	for j := 0; j < 3; j++ {
		for w := 0; w < 3; w++ {
			for l := 0; l < 8; l++ {
				c := (8*j + l) % 12
				y, v := c/3, c%3
				xe[8*(3*j+w)+l] = uint8(9*y + 3*w + v) // u = w, r = v
				xt[8*(3*j+w)+l] = uint8(9*y + 3*v + w) // u = v, r = w
			}
		}
	}
	return
}()
