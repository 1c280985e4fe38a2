//go:build !amd64 || purego

package nskernel

// Without amd64 assembly (other architectures, or the tag purego) there are
// no vector kernels.

// useVec is false: see vec_amd64.go.
var useVec = false

func popSumWVec6x2(acc, E, XP, w []float64) { panic("nskernel: no vector kernels") }

func popSumBackVec6x2(C, CP, B, E, XT, es []float64) { panic("nskernel: no vector kernels") }

func popSumWVec9x3(acc, E, X, w []float64) { panic("nskernel: no vector kernels") }

func popSumBackVec9x3(C, CP, B, E, XT, es []float64) { panic("nskernel: no vector kernels") }

func mulAdd9(R, A, B []float64, f float64, K, sr, sc int) { panic("nskernel: no vector kernels") }

func mulAdd6(R, A, B []float64, f float64, K, sr, sc int) { panic("nskernel: no vector kernels") }

// useZ and useZ6 are false: see vec_amd64.go.
var useZ, useZ6 = false, false

func popSumBackZ9x3(C, CPT, bx, E, XR, es []float64) { panic("nskernel: no vector kernels") }

func minMax(R []float64) (lo, hi float64) { return minMaxGo(R) }

func popSumWZ9x3(acc, E, XE, w []float64)          { panic("nskernel: no vector kernels") }
func popSumWZ6x2(acc, E, XZ, w []float64)          { panic("nskernel: no vector kernels") }
func popSumBackZ6x2(C, CP, B, E, XZ, es []float64) { panic("nskernel: no vector kernels") }

func popSumWZ12x3(acc, E, XE, w []float64) { panic("nskernel: no vector kernels") }

func popSumBackZ12x3(C, CPT, B, bx, E, XT, es []float64) { panic("nskernel: no vector kernels") }

func mulAdd12(R, A, B []float64, f float64, K, sr, sc int) { panic("nskernel: no vector kernels") }
