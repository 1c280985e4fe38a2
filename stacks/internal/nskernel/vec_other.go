//go:build !(goexperiment.simd && amd64)

package nskernel

// Without GOEXPERIMENT=simd on amd64 there are no vector kernels.

// useVec is false: see vec_amd64.go.
var useVec = false

func popSumWVec6x2(acc, E, XP, w []float64) { panic("nskernel: no vector kernels") }

func popSumBackVec6x2(C, CP, B, E, XT, es []float64) { panic("nskernel: no vector kernels") }

func vecClean() {}
