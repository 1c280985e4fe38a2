//go:build linux && (amd64 || arm64)

package gpuemu

import "github.com/ebitengine/purego"

// platformErr is nil where the emulator can load its compiled kernels.
var platformErr error

// dlopen loads the shared library at path.
func dlopen(path string) (uintptr, error) {
	return purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_LOCAL)
}

// dlsym returns the address of the symbol name in the library h.
func dlsym(h uintptr, name string) (uintptr, error) { return purego.Dlsym(h, name) }

// call calls the C function fn with integer and pointer arguments; the
// directive keeps the targets of pointers passed as uintptr alive for the
// call.
//
//go:uintptrescapes
func call(fn uintptr, args ...uintptr) uintptr {
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}
