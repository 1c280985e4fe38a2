package nsrnn

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/nsrnn/nsrnn/internal/cuda"
	"github.com/nsrnn/nsrnn/internal/gpuemu"
)

// Device is where a model computes: the CPU (the zero value) or one NVIDIA
// GPU through CUDA. See the package documentation, "GPU".
type Device struct {
	cuda  bool
	index int
}

// CPU is the default device.
var CPU = Device{}

// CUDA returns the CUDA device of the given index (0 for the first GPU).
func CUDA(index int) Device { return Device{cuda: true, index: index} }

// ParseDevice parses "cpu", "cuda" (the first GPU) or "cuda:N".
func ParseDevice(s string) (Device, error) {
	switch {
	case s == "cpu" || s == "":
		return CPU, nil
	case s == "cuda":
		return CUDA(0), nil
	case strings.HasPrefix(s, "cuda:"):
		// Decimal digits only, without leading zeros: "cuda:+1" and
		// "cuda:007" are not names a device is written as (String).
		num := s[len("cuda:"):]
		n, err := strconv.Atoi(num)
		if err == nil && n >= 0 && strconv.Itoa(n) == num {
			return CUDA(n), nil
		}
	}
	return CPU, fmt.Errorf("device %q: want cpu, cuda or cuda:N (N = 0, 1, …)", s)
}

// String returns "cpu" or "cuda:N".
func (d Device) String() string {
	if !d.cuda {
		return "cpu"
	}
	return fmt.Sprintf("cuda:%d", d.index)
}

// IsCPU reports whether d is the CPU.
func (d Device) IsCPU() bool { return !d.cuda }

// MarshalText implements encoding.TextMarshaler ("cpu", "cuda:N").
func (d Device) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler with ParseDevice.
func (d *Device) UnmarshalText(b []byte) error {
	v, err := ParseDevice(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// DeviceInfo describes a device that Devices found.
type DeviceInfo struct {
	// Device is the device's name for SetDevice and --device.
	Device Device
	// Name is the product name ("NVIDIA H100 80GB HBM3"); Memory its
	// memory in bytes; Major and Minor its compute capability.
	Name         string
	Memory       uint64
	Major, Minor int
	// Usable reports whether models can run on it; Why says why not.
	Usable bool
	Why    string
}

// Devices lists the CUDA devices of this machine. Where the CUDA driver,
// NVRTC or cuBLAS cannot be loaded, the error names what is missing and
// where it was looked for (see "GPU" in the package documentation); the CPU
// is always usable and is not listed.
func Devices() ([]DeviceInfo, error) {
	if emulating() {
		name := "GPU emulator (" + EnvGPUEmulator + "=1: the CUDA kernels on the CPU)"
		if os.Getenv(EnvGPUEmulator) == "simt" {
			name = "GPU emulator (" + EnvGPUEmulator + "=simt: the CUDA kernels on the CPU, every thread on its own)"
		}
		info := DeviceInfo{Device: CUDA(0), Name: name, Usable: true}
		if _, err := gpuemu.Compiler(); err != nil {
			info.Usable, info.Why = false, err.Error()
		}
		return []DeviceInfo{info}, nil
	}
	ds, err := cuda.Devices()
	if err != nil {
		return nil, fmt.Errorf("nsrnn: %w", err)
	}
	out := make([]DeviceInfo, len(ds))
	for i, d := range ds {
		out[i] = DeviceInfo{Device: CUDA(d.Index), Name: d.Name, Memory: d.Memory, Major: d.Major, Minor: d.Minor, Usable: d.Usable, Why: d.Why}
	}
	return out, nil
}

// ErrNoDeviceKernel is wrapped by SetDevice's error for a model kind that
// has no implementation on the device asked for; the model stays on its
// device.
var ErrNoDeviceKernel = errors.New("no implementation on this device")

// Device returns the device the model computes on.
func (m *Model) Device() Device {
	if m.eng == nil {
		return CPU
	}
	return m.eng.device()
}

// SetDevice moves the model to device d: from then on its Loss, Gradient,
// LogProbs, streams and training compute there. The parameters move with
// it (the model's Params stay the values saved and loaded, on the CPU);
// results agree with the CPU's to rounding (see "GPU" in the package
// documentation). It fails at once, leaving the model where it was, when
// the device cannot be used: the CUDA libraries missing (the error names
// them), no such device, or a model kind without an implementation there
// (ErrNoDeviceKernel). Moving to the CPU always succeeds but for an error
// in copying the parameters back.
func (m *Model) SetDevice(d Device) error {
	if d == m.Device() {
		return nil
	}
	if d.cuda && d.index < 0 {
		return fmt.Errorf("nsrnn: device %v: a GPU's index must be 0 or more", d)
	}
	if err := m.acquire(); err != nil {
		return err
	}
	defer m.release()
	var next engine = cpuEngine{m}
	if !d.IsCPU() {
		e, err := newCUDAEngine(m, d)
		if err != nil {
			return err
		}
		next = e
	}
	if err := m.syncHost(); err != nil {
		if de, ok := next.(deviceEngine); ok {
			de.close()
		}
		return err
	}
	if de, ok := m.eng.(deviceEngine); ok {
		de.close()
	}
	m.eng = next
	return nil
}

// engine computes a model's passes on one device: the seam between the
// model, its streams and the trainer on one side and the kernels on the
// other. cpuEngine runs the gorgonia graphs of fused CPU kernels; a
// deviceEngine holds the parameters on its device as well.
type engine interface {
	device() Device
	// sentence runs a checked batch of sequences of one length in sentence
	// mode (see pass for what it returns).
	sentence(batch [][]int, p pass) (outcome, error)
	// chunk runs one checked chunk of stream s from s.state and advances
	// s.state to the chunk's end.
	chunk(s *Stream, inputs, targets [][]int, p pass) (outcome, error)
	// streams reports why the model cannot run as a stream on the
	// device (nil: it can, if its stack carries its state).
	streams() error
}

// pass says what a run computes beyond the loss: gradients (kept on the
// device unless hostGrads), the log-probabilities of every position, or
// the raw scores (logits).
type pass struct {
	grad, hostGrads bool
	logProbs        bool
	logits          bool
	// queueLoss asks an engine that can (lossQueue) to add the loss times
	// lossWeight to its running total on the device (restarted by
	// lossFirst) rather than return it, so that the caller need not wait
	// for the device; the outcome says whether it did.
	queueLoss, lossFirst bool
	lossWeight           float64
}

// lossQueue is an engine that sums losses on its device (pass.queueLoss).
type lossQueue interface {
	// takeLoss waits for the queued runs and returns their total.
	takeLoss() (float64, error)
}

// outcome is what a run returns: the loss, the gradients in the order of
// Params (with pass.hostGrads or on the CPU; owned by the model, valid
// until its next run) and the log-probabilities or scores, out[b][t][v].
type outcome struct {
	loss  float64
	grads [][]float64
	lp    [][][]float64
	// queued is the engine that queued the loss (pass.queueLoss), whose
	// total takeLoss returns; loss is then NaN.
	queued lossQueue
}

// deviceEngine is an engine that keeps the parameters (and, during
// training, the optimizer's state) in its own memory.
type deviceEngine interface {
	engine
	// update clips the gradients of the latest run by global norm and
	// applies one optimizer step on the device; false when the
	// optimizer has no device implementation (the caller then takes the
	// gradients to the host).
	update(opt Optimizer, clip float64) (bool, error)
	// hostGrads copies the gradients of the latest run to the host.
	hostGrads() ([][]float64, error)
	// syncHost copies the parameters, and the state of the optimizer of
	// the latest update, to the host where the device's are newer.
	syncHost() error
	// invalidate says that the host's parameters or optimizer state have
	// changed: the device copies them before its next use.
	invalidate()
	close()
}

// cpuEngine runs the model's gorgonia graphs of fused CPU kernels.
type cpuEngine struct{ m *Model }

func (cpuEngine) device() Device { return CPU }

func (cpuEngine) streams() error { return nil }

func (e cpuEngine) sentence(batch [][]int, p pass) (outcome, error) {
	if p.logProbs || p.logits {
		gr, err := e.m.loadPart(batch, false, 0, 0)
		if err != nil {
			return outcome{}, err
		}
		loss, err := gr.run(false)
		if err != nil {
			return outcome{}, err
		}
		r := outcome{loss: loss}
		if p.logits {
			r.lp = gr.logits()
		} else {
			r.lp = gr.logProbs()
		}
		return r, nil
	}
	loss, grads, err := e.m.runParts(batch, p.grad)
	return outcome{loss: loss, grads: grads}, err
}

func (e cpuEngine) chunk(s *Stream, inputs, targets [][]int, p pass) (outcome, error) {
	gr, loss, err := s.runCPU(inputs, targets, p.grad, !p.grad && !p.logProbs && !p.logits)
	if err != nil {
		return outcome{}, err
	}
	r := outcome{loss: loss}
	if p.grad {
		r.grads = e.m.grads(gr)
	}
	if p.logits {
		r.lp = gr.logits()
	} else if p.logProbs {
		r.lp = gr.logProbs()
	}
	return r, nil
}

// engine returns the model's engine (the CPU's by default).
func (m *Model) engine() engine {
	if m.eng == nil {
		return cpuEngine{m}
	}
	return m.eng
}

// syncHost brings the host's parameters up to date with the device's.
func (m *Model) syncHost() error {
	if de, ok := m.eng.(deviceEngine); ok {
		return de.syncHost()
	}
	return nil
}

// paramsChanged tells a device that the host's parameters or optimizer
// state changed.
func (m *Model) paramsChanged() {
	if de, ok := m.eng.(deviceEngine); ok {
		de.invalidate()
	}
}
