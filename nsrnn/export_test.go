package nsrnn

import (
	"fmt"
	"io"
	"os"
)

// ResetDeviceProfile forgets the device times that m's profiled engine
// has summed (EnvCUDAProfile); it does nothing where m is not profiled.
func ResetDeviceProfile(m *Model) {
	if p := deviceProfileOf(m); p != nil {
		p.reset()
	}
}

// AppendDeviceProfile appends the profile of m's engine since its last
// reset, headed by title, with the operations and device time per token
// of the tokens computed, to the file that NSRNN_CUDA_PROFILE_OUT names;
// it does nothing where m is not profiled or the variable is unset.
func AppendDeviceProfile(m *Model, title string, tokens float64) error {
	p := deviceProfileOf(m)
	path := os.Getenv("NSRNN_CUDA_PROFILE_OUT")
	if p == nil || path == "" {
		return nil
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(f, "== %s (%.0f tokens; kernels launched one by one, timed on the device's clock)\n", title, tokens); err != nil {
		f.Close()
		return err
	}
	if err := p.write(f, tokens, "token"); err != nil {
		f.Close()
		return err
	}
	if _, err := io.WriteString(f, "\n"); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// DeviceModes reports whether m's GPU engine captures its passes as CUDA
// graphs and runs its output layer on a second stream (either turns off
// for good after a failure, see cudaEngine.pass); false, false on the CPU.
func DeviceModes(m *Model) (graphs, pipeline bool) {
	e, ok := m.eng.(*cudaEngine)
	if !ok {
		return false, false
	}
	return !e.noGraphs, e.pipeline
}
