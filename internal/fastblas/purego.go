//go:build !openblas

package fastblas

// Name is the BLAS implementation in use.
const Name = "gonum"

// Core is the CPU kernel of the implementation.
const Core = "pure Go"

// SingleThreaded does nothing for gonum's BLAS, whose products split
// themselves among goroutines, and returns a function that does nothing.
func SingleThreaded() (release func()) { return func() {} }

// Threads returns 0: gonum's BLAS has no threads of its own.
func Threads() int { return 0 }
