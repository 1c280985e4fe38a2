// Package linalg has the dense kernels shared by the fused ops of nsrnn:
// affine maps and their gradients on row-major []float64 slices, with the
// weight layout W of shape (out, in) and y = x Wᵀ + b, and the products
// C += op(A)·B (Acc) and C += A·Bᵀ (AccT) that the LSTM's kernels use,
// which in the pure-Go build run the small products faster than gonum's
// BLAS with the same bits.
package linalg

import (
	"gonum.org/v1/gonum/blas/blas64"
)

func general(rows, cols int, data []float64) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: cols, Data: data}
}

// AffineAdd adds x Wᵀ to y, where x is (batch, in), W is (out, in) and y is
// (batch, out). It does not add a bias.
func AffineAdd(y, x, w []float64, batch, in, out int) {
	if batch == 0 || in == 0 || out == 0 {
		return
	}
	AccT(general(batch, in, x), general(out, in, w), general(batch, out, y))
}

// Affine sets y = x Wᵀ + b; b may be nil.
func Affine(y, x, w, b []float64, batch, in, out int) {
	for i := 0; i < batch; i++ {
		if b != nil {
			copy(y[i*out:(i+1)*out], b)
		} else {
			clear(y[i*out : (i+1)*out])
		}
	}
	AffineAdd(y, x, w, batch, in, out)
}

// AffineBackward accumulates the gradients of y = x Wᵀ + b given dy:
// dx += dy W, dW += dyᵀ x, db += Σ_batch dy. Any of dx, dw, db may be nil.
func AffineBackward(dx, dw, db, dy, x, w []float64, batch, in, out int) {
	if batch == 0 || in == 0 || out == 0 {
		return
	}
	if dx != nil {
		Acc(false, general(batch, out, dy), general(out, in, w), general(batch, in, dx))
	}
	if dw != nil {
		Acc(true, general(batch, out, dy), general(batch, in, x), general(out, in, dw))
	}
	if db != nil {
		for i := 0; i < batch; i++ {
			row := dy[i*out : (i+1)*out]
			for j, v := range row {
				db[j] += v
			}
		}
	}
}
