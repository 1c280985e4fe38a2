//go:build linux && (amd64 || arm64)

package cuda

import (
	"github.com/ebitengine/purego"
)

// platformErr is nil where the package can load the CUDA libraries.
var platformErr error

// dlopen loads the shared library at path (a file path or a soname) with
// RTLD_NOW|RTLD_GLOBAL and returns its handle.
func dlopen(path string) (uintptr, error) {
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

// dlsym returns the address of the symbol name in the library h, or 0.
func dlsym(h uintptr, name string) uintptr {
	p, err := purego.Dlsym(h, name)
	if err != nil {
		return 0
	}
	return p
}

// ccall calls the C function fn with integer and pointer arguments and
// returns the raw content of the integer return register. Callers
// truncate it to the width of the C return type (32 bits for CUresult,
// nvrtcResult and cublasStatus_t).
//
// Pointers to Go memory may be passed converted to uintptr in the call
// expression itself: the directive below keeps their targets alive, and
// on the heap, for the duration of the call.
//
//go:uintptrescapes
func ccall(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
