package cuda

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// ErrNoLibrary is wrapped by the errors of Load, LoadNVRTC and
// LoadNVRTCFrom when a library cannot be found or loaded, and on systems
// where the package does not support CUDA at all.
var ErrNoLibrary = errors.New("cuda: library not found")

// errClosed is returned by the methods of a closed Context.
var errClosed = errors.New("cuda: use of a closed Context")

// Error is a failed call into the CUDA driver, NVRTC or cuBLAS.
type Error struct {
	// Lib is the library: "cuda", "nvrtc" or "cublas".
	Lib string
	// Func is the C function that failed, e.g. "cuMemAlloc_v2".
	Func string
	// Code is the status the function returned (a CUresult, an
	// nvrtcResult or a cublasStatus_t).
	Code int
	// Name is the name of the status, e.g. "CUDA_ERROR_OUT_OF_MEMORY".
	Name string
	// Msg is the library's description of the status, where it has one.
	Msg string
	// Log is NVRTC's compilation log, for compilation errors.
	Log string
}

// Error returns the error as text, like
// "cuda: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (out of memory)",
// followed by the compilation log, if any, on the next lines.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Lib)
	b.WriteString(": ")
	b.WriteString(e.Func)
	b.WriteString(": ")
	if e.Name != "" {
		b.WriteString(e.Name)
	} else {
		fmt.Fprintf(&b, "status %d", e.Code)
	}
	if e.Msg != "" && e.Msg != e.Name {
		b.WriteString(" (")
		b.WriteString(e.Msg)
		b.WriteString(")")
	}
	if log := strings.TrimSpace(e.Log); log != "" {
		b.WriteString("\n")
		b.WriteString(log)
	}
	return b.String()
}

// status returns the 32-bit C enum held in the low half of a return
// register.
func status(r uintptr) int { return int(int32(uint32(r))) }

// cublasStatusNames are the names of the cublasStatus_t values.
var cublasStatusNames = map[int]string{
	0:  "CUBLAS_STATUS_SUCCESS",
	1:  "CUBLAS_STATUS_NOT_INITIALIZED",
	3:  "CUBLAS_STATUS_ALLOC_FAILED",
	7:  "CUBLAS_STATUS_INVALID_VALUE",
	8:  "CUBLAS_STATUS_ARCH_MISMATCH",
	11: "CUBLAS_STATUS_MAPPING_ERROR",
	13: "CUBLAS_STATUS_EXECUTION_FAILED",
	14: "CUBLAS_STATUS_INTERNAL_ERROR",
	15: "CUBLAS_STATUS_NOT_SUPPORTED",
	16: "CUBLAS_STATUS_LICENSE_ERROR",
}

// cublasStatusName returns the name of a cublasStatus_t.
func cublasStatusName(code int) string {
	if s, ok := cublasStatusNames[code]; ok {
		return s
	}
	return fmt.Sprintf("cublasStatus_t(%d)", code)
}

// goString copies the NUL-terminated C string at p.
func goString(p uintptr) string {
	if p == 0 {
		return ""
	}
	// p is C memory, not managed by Go; the double conversion keeps vet's
	// unsafe.Pointer check quiet about it.
	ptr := *(*unsafe.Pointer)(unsafe.Pointer(&p))
	n := 0
	for *(*byte)(unsafe.Add(ptr, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(ptr), n))
}

// cString returns s as a NUL-terminated byte slice for C. Callers pass
// &b[0] and keep b alive until the call returns.
func cString(s string) []byte {
	b := make([]byte, len(s)+1)
	copy(b, s)
	return b
}
