//go:build ignore

// gen_kernels writes kernels_gen.go: fully unrolled small matrix products for
// the block sizes of |Q| = 2, |Γ| = 3 (m = 6), |Q| = |Γ| = 3 (m = 9),
// |Q| = 3, |Γ| = 4 (m = 12) and some of |Q| = 1, |Γ| = 2 (m = 2).
// Run with go generate; -o writes elsewhere (TestGeneratedCode compares a
// fresh output with the committed file).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"go/format"
	"log"
	"os"
)

var b bytes.Buffer

func p(format string, args ...any) { fmt.Fprintf(&b, format, args...) }

// nn writes R (n×q) += f·A (n×k)·B (k×q), a loop over the rows of R with the
// row's q sums in registers (with f, each A entry is scaled first).
func nn(k, q int, scaled bool) {
	name := fmt.Sprintf("mulNN%dx%d", k, q)
	fp := ""
	if scaled {
		name += "f"
		fp = ", f float64"
	}
	p("// %s sets R (n×%d) += ", name, q)
	if scaled {
		p("f·")
	}
	p("A (n×%d) · B (%d×%d).\n", k, k, q)
	p("func %s(R, A, B []float64%s, n int) {\n", name, fp)
	p("\tb := (*[%d]float64)(B)\n", k*q)
	p("\tfor i := 0; i < n; i++ {\n")
	p("\t\ta := (*[%d]float64)(A[i*%d:])\n", k, k)
	p("\t\tr := (*[%d]float64)(R[i*%d:])\n", q, q)
	for j := 0; j < q; j++ {
		p("\t\tr%d := r[%d]\n", j, j)
	}
	for l := 0; l < k; l++ {
		op := "="
		if l == 0 {
			op = ":="
		}
		if scaled {
			p("\t\tav %s f * a[%d]\n", op, l)
		} else {
			p("\t\tav %s a[%d]\n", op, l)
		}
		for j := 0; j < q; j++ {
			p("\t\tr%d += av * b[%d]\n", j, l*q+j)
		}
	}
	for j := 0; j < q; j++ {
		p("\t\tr[%d] = r%d\n", j, j)
	}
	p("\t}\n}\n\n")
}

// tn writes R (k×q) += f·Aᵀ·B for A (n×k), B (n×q), n = k: a loop over the
// rows l of R with the row's q sums in registers.
func tn(k, q int) {
	name := fmt.Sprintf("mulTN%dx%d", k, q)
	p("// %s sets R (%d×%d) += f·Aᵀ·B for A (%d×%d) and B (%d×%d).\n", name, k, q, k, k, k, q)
	p("func %s(R, A, B []float64, f float64) {\n", name)
	p("\ta := (*[%d]float64)(A)\n", k*k)
	p("\tb := (*[%d]float64)(B)\n", k*q)
	p("\tR = R[:%d]\n", k*q)
	p("\tfor l := 0; l < %d; l++ {\n", k)
	p("\t\tr := (*[%d]float64)(R[l*%d:])\n", q, q)
	for j := 0; j < q; j++ {
		p("\t\tvar s%d float64\n", j)
	}
	for i := 0; i < k; i++ {
		op := "="
		if i == 0 {
			op = ":="
		}
		p("\t\tav %s a[%d+l]\n", op, i*k)
		for j := 0; j < q; j++ {
			p("\t\ts%d += av * b[%d]\n", j, i*q+j)
		}
	}
	for j := 0; j < q; j++ {
		p("\t\tr[%d] += f * s%d\n", j, j)
	}
	p("\t}\n}\n\n")
}

// nt writes C (k×k) += f·A·Bᵀ for A (k×q) and B (k×q): dot products of rows.
func nt(k, q int) {
	name := fmt.Sprintf("mulNT%dx%d", k, q)
	p("// %s sets C (%d×%d) += f·A·Bᵀ for A (%d×%d) and B (%d×%d).\n", name, k, k, k, q, k, q)
	p("func %s(C, A, B []float64, f float64) {\n", name)
	p("\tb := (*[%d]float64)(B)\n", k*q)
	p("\tA = A[:%d]\n", k*q)
	p("\tC = C[:%d]\n", k*k)
	p("\tfor i := 0; i < %d; i++ {\n", k)
	p("\t\ta := (*[%d]float64)(A[i*%d:])\n", q, q)
	p("\t\tc := (*[%d]float64)(C[i*%d:])\n", k, k)
	for j := 0; j < q; j++ {
		p("\t\ta%d := f * a[%d]\n", j, j)
	}
	for l := 0; l < k; l++ {
		p("\t\tc[%d] += ", l)
		for j := 0; j < q; j++ {
			if j > 0 {
				p(" + ")
			}
			p("a%d*b[%d]", j, l*q+j)
		}
		p("\n")
	}
	p("\t}\n}\n\n")
}

// popBack writes popSumBack<m>x<q>: for every k with es[k] ≠ 0, C_k (m×m) +=
// B ⋆ (es[k]·X_k)ᵀ and CP_k (m×q) += es[k]·(E_kᵀ ⋆ B) (see popSumBack),
// unrolled over the whole block, walking the blocks without bounds checks.
func popBack(m, q int) {
	mm, mq := m*m, m*q
	name := fmt.Sprintf("popSumBack%dx%d", m, q)
	p("// %s is popSumBack for m = %d, |Q| = %d.\n", name, m, q)
	p("func %s(C, CP, B, E, X, es []float64, nk int) {\n", name)
	p("\tif nk == 0 {\n\t\treturn\n\t}\n")
	p("\tes = es[:nk]\n")
	p("\t// bounds for the unchecked walk below\n")
	p("\t_, _, _, _ = C[nk*%d-1], E[nk*%d-1], X[nk*%d-1], CP[nk*%d-1]\n", mm, mm, mq, mq)
	p("\tbb := (*[%d]float64)(B)\n", mm)
	p("\tcb, eb := unsafe.Pointer(&C[0]), unsafe.Pointer(&E[0])\n")
	p("\txb, pb := unsafe.Pointer(&X[0]), unsafe.Pointer(&CP[0])\n")
	p("\tfor k, f := range es {\n")
	p("\t\tif f == 0 {\n\t\t\tcontinue\n\t\t}\n")
	p("\t\tc := (*[%d]float64)(unsafe.Add(cb, k*%d))\n", mm, mm*8)
	p("\t\te := (*[%d]float64)(unsafe.Add(eb, k*%d))\n", mm, mm*8)
	p("\t\tx := (*[%d]float64)(unsafe.Add(xb, k*%d))\n", mq, mq*8)
	p("\t\tcp := (*[%d]float64)(unsafe.Add(pb, k*%d))\n", mq, mq*8)
	for j := 0; j < m; j += q {
		// scaled x[(j+u)][r]
		for u := 0; u < q; u++ {
			for r := 0; r < q; r++ {
				op := "="
				if j == 0 {
					op = ":="
				}
				p("\t\tx%d%d %s f * x[%d]\n", u, r, op, (j+u)*q+r)
			}
		}
		for i := 0; i < m; i++ {
			o := i*m + j
			for u := 0; u < q; u++ {
				p("\t\tc[%d] += ", o+u)
				for r := 0; r < q; r++ {
					if r > 0 {
						p(" + ")
					}
					p("bb[%d]*x%d%d", o+r, u, r)
				}
				p("\n")
			}
		}
		for u := 0; u < q; u++ {
			for r := 0; r < q; r++ {
				op := "="
				if j == 0 {
					op = ":="
				}
				p("\t\tt%d%d %s e[%d] * bb[%d]\n", u, r, op, j+u, j+r)
			}
		}
		for i := 1; i < m; i++ {
			o := i*m + j
			for u := 0; u < q; u++ {
				for r := 0; r < q; r++ {
					p("\t\tt%d%d += e[%d] * bb[%d]\n", u, r, o+u, o+r)
				}
			}
		}
		for u := 0; u < q; u++ {
			for r := 0; r < q; r++ {
				p("\t\tcp[%d] += f * t%d%d\n", (j+u)*q+r, u, r)
			}
		}
	}
	p("\t}\n}\n\n")
}

// popFwd writes popSum<m>x<q>: acc (m×m) += Σ_k E_k ⋆ xs_k (see popSum), one
// k loop per tile of three rows and the q columns of one symbol, with the
// tile's sums in registers, walking the blocks without bounds checks.
func popFwd(m, q, tile int) {
	mm, mq := m*m, m*q
	name := fmt.Sprintf("popSum%dx%d", m, q)
	p("// %s is popSum for m = %d, |Q| = %d.\n", name, m, q)
	p("func %s(acc, E, xs []float64, nk int) {\n", name)
	p("\tif nk == 0 {\n\t\treturn\n\t}\n")
	p("\ta := (*[%d]float64)(acc)\n", mm)
	p("\t// bounds for the unchecked walk below\n")
	p("\t_, _ = E[nk*%d-1], xs[nk*%d-1]\n", mm, mq)
	p("\teb, xb := unsafe.Pointer(&E[0]), unsafe.Pointer(&xs[0])\n")
	first := true
	for j := 0; j < m; j += q {
		for i0 := 0; i0 < m; i0 += tile {
			rows := min(tile, m-i0)
			op := "="
			if first {
				op = ":="
			}
			first = false
			var names, vals []string
			for di := 0; di < rows; di++ {
				for r := 0; r < q; r++ {
					names = append(names, fmt.Sprintf("a%d%d", di, r))
					vals = append(vals, fmt.Sprintf("a[%d]", (i0+di)*m+j+r))
				}
			}
			p("\t%s %s %s\n", join(names), op, join(vals))
			p("\tfor k := 0; k < nk; k++ {\n")
			p("\t\te := (*[%d]float64)(unsafe.Add(eb, k*%d))\n", mm, mm*8)
			p("\t\tx := (*[%d]float64)(unsafe.Add(xb, k*%d))\n", mq, mq*8)
			for di := 0; di < rows; di++ {
				for r := 0; r < q; r++ {
					p("\t\ta%d%d += ", di, r)
					for u := 0; u < q; u++ {
						if u > 0 {
							p(" + ")
						}
						p("e[%d]*x[%d]", (i0+di)*m+j+u, (j+u)*q+r)
					}
					p("\n")
				}
			}
			p("\t}\n")
			p("\t%s = %s\n", join(vals), join(names))
		}
	}
	p("}\n\n")
}

func join(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ", "
		}
		out += v
	}
	return out
}

func main() {
	out := flag.String("o", "kernels_gen.go", "output file")
	flag.Parse()
	p("// Code generated by gen_kernels.go; DO NOT EDIT.\n\npackage nskernel\n\nimport \"unsafe\"\n\n")
	for _, mq := range [][2]int{{6, 2}, {9, 3}, {12, 3}} {
		m, q := mq[0], mq[1]
		nn(m, q, false)
		nn(m, m, true)
		tn(m, q)
		tn(m, m)
		nt(m, q)
		nt(m, m)
		popBack(m, q)
	}
	popFwd(9, 3, 1) // for m = 12 the generic popKernel measured faster
	// |Q| = 1, |Γ| = 2 (the PTB model RNS 1-2): the block products and the
	// pop adjoint (its forward is popSumW2x1, by hand).
	nn(2, 2, true)
	popBack(2, 1)
	src, err := format.Source(b.Bytes())
	if err != nil {
		os.Stdout.Write(b.Bytes())
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}
