//go:build !(linux && (amd64 || arm64))

package cuda

import (
	"fmt"
	"runtime"
)

// platformErr says why the package cannot load the CUDA libraries here.
var platformErr = func() error {
	if runtime.GOOS != "linux" {
		return fmt.Errorf("%w: CUDA is supported on Linux only (this is %s/%s)", ErrNoLibrary, runtime.GOOS, runtime.GOARCH)
	}
	return fmt.Errorf("%w: CUDA is supported on linux/amd64 and linux/arm64 only (this is %s/%s)", ErrNoLibrary, runtime.GOOS, runtime.GOARCH)
}()

func dlopen(path string) (uintptr, error) { return 0, platformErr }

func dlsym(h uintptr, name string) uintptr { return 0 }

func ccall(fn uintptr, args ...uintptr) uintptr {
	panic("cuda: C call on an unsupported platform")
}
