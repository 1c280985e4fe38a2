package nsrnn

import (
	"github.com/nsrnn/nsrnn/internal/gpuemu"
)

// emuDevice is the emulated GPU of package gpuemu as a gpuDevice: the
// engine's kernels compiled for the CPU, so that the GPU tests run the
// whole GPU path on machines without a GPU.
type emuDevice struct{ *gpuemu.Device }

func (d emuDevice) compile(src, name string, opts ...string) (gpuKernels, error) {
	return d.Kernels(src, name, opts...)
}
