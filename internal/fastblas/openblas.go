//go:build openblas

package fastblas

// #cgo LDFLAGS: -lopenblas
// char* openblas_get_corename(void);
import "C"

import (
	"os"
	"syscall"

	"golang.org/x/sys/cpu"
	"gonum.org/v1/gonum/blas/blas64"
	"gonum.org/v1/netlib/blas/netlib"
)

// Name is the BLAS implementation in use.
const Name = "openblas"

// Core is the CPU kernel OpenBLAS chose.
var Core = C.GoString(C.openblas_get_corename())

func init() {
	retarget()
	blas64.Use(netlib.Implementation{})
}

// retarget works around OpenBLAS's CPU detection on virtual machines whose
// CPUID hides the model (common in the cloud): OpenBLAS then falls back to
// its generic "Prescott" kernels, several times slower than the AVX-512 or
// AVX2 ones the CPU supports. Its kernel can only be chosen before the
// library loads, through OPENBLAS_CORETYPE, so the process re-executes
// itself once with the variable set. Setting OPENBLAS_CORETYPE yourself
// disables this.
func retarget() {
	if Core != "Prescott" || os.Getenv("OPENBLAS_CORETYPE") != "" {
		return
	}
	core := ""
	switch {
	case cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL:
		core = "SkylakeX"
	case cpu.X86.HasAVX2 && cpu.X86.HasFMA:
		core = "Haswell"
	default:
		return
	}
	exe, err := os.Executable()
	if err != nil {
		return
	}
	env := append(os.Environ(), "OPENBLAS_CORETYPE="+core)
	_ = syscall.Exec(exe, os.Args, env) // returns only on failure: keep the generic kernels
}
