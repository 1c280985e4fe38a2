//go:build !openblas

package fastblas

// Name is the BLAS implementation in use.
const Name = "gonum"

// Core is the CPU kernel of the implementation.
const Core = "pure Go"
