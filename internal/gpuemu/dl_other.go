//go:build !(linux && (amd64 || arm64))

package gpuemu

import (
	"errors"
	"runtime"
)

// platformErr says why the emulator cannot run here.
var platformErr = errors.New("gpuemu: the emulator runs on linux/amd64 and linux/arm64 only, not " + runtime.GOOS + "/" + runtime.GOARCH)

func dlopen(string) (uintptr, error)         { return 0, platformErr }
func dlsym(uintptr, string) (uintptr, error) { return 0, platformErr }
func call(uintptr, ...uintptr) uintptr       { return 0 }
