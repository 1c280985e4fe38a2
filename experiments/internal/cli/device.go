package cli

import (
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/nsrnn"
)

// DeviceFlag registers --device on fs, the device the command's models
// compute on (default cpu); program names the program, whose devices
// command lists the GPUs, and more, when set, is added to the help. The
// value is parsed by ParseDeviceFlag.
func DeviceFlag(fs *pflag.FlagSet, program, more string) *string {
	usage := "device the model computes on: cpu, cuda (the first GPU) or cuda:N (N = 0, 1, …; " + program +
		" devices lists the GPUs); a model kind without an implementation on the GPU is refused"
	if more != "" {
		usage += "; " + more
	}
	return fs.String("device", "cpu", usage)
}

// ParseDeviceFlag parses the value of --device (nsrnn.ParseDevice); the
// error names the flag. It does not touch the CUDA libraries: whether the
// device can be used is known only when a model is moved there
// (UseDevice, CheckDevice).
func ParseDeviceFlag(s string) (nsrnn.Device, error) {
	d, err := nsrnn.ParseDevice(s)
	if err != nil {
		return nsrnn.CPU, fmt.Errorf("--device: %w", err)
	}
	return d, nil
}

// DeviceSetting is the value of a device in the settings files of runs
// (run.json's "device"): empty for the CPU, so that the files of CPU runs
// are those written before there was a choice, and "cuda:N" otherwise.
func DeviceSetting(d nsrnn.Device) string {
	if d.IsCPU() {
		return ""
	}
	return d.String()
}

// DeviceError is the error of UseDevice and CheckDevice: models cannot
// compute on Device, for the reason Err (the error of
// nsrnn.Model.SetDevice). Its message names --device.
type DeviceError struct {
	Device nsrnn.Device
	Err    error
}

// Error says which device is at fault and why.
func (e *DeviceError) Error() string {
	if errors.Is(e.Err, nsrnn.ErrNoDeviceKernel) {
		return fmt.Sprintf("--device %s: %v; give --device cpu for this model", e.Device, e.Err)
	}
	return fmt.Sprintf("--device %s: %v", e.Device, e.Err)
}

// Unwrap returns the device's error.
func (e *DeviceError) Unwrap() error { return e.Err }

// UseDevice moves the model m to the device d (nsrnn.Model.SetDevice),
// and does nothing for the CPU, where every model is created: a program
// run on the CPU never loads the CUDA libraries. The error is a
// *DeviceError; the model then stays on the CPU.
func UseDevice(m *nsrnn.Model, d nsrnn.Device) error {
	if d.IsCPU() {
		return nil
	}
	if err := m.SetDevice(d); err != nil {
		return &DeviceError{Device: d, Err: err}
	}
	return nil
}

// CheckDevice checks, with a throwaway model of configuration cfg, that
// models of that configuration can compute on the device d (nothing is
// checked for the CPU), so that a command can refuse the device before it
// writes anything: the error is UseDevice's. With kindOnly, only a kind
// without an implementation on the device (nsrnn.ErrNoDeviceKernel) is
// refused, not the absence of the device or of its libraries: for runs
// that are to compute on another machine (a Slurm script's).
func CheckDevice(d nsrnn.Device, cfg nsrnn.Config, kindOnly bool) error {
	if d.IsCPU() {
		return nil
	}
	m, err := nsrnn.New(cfg, 0)
	if err != nil {
		return err
	}
	err = UseDevice(m, d)
	if err == nil {
		// Give the device's memory back at once.
		_ = m.SetDevice(nsrnn.CPU)
	}
	if err != nil && kindOnly && !errors.Is(err, nsrnn.ErrNoDeviceKernel) {
		return nil
	}
	return err
}

// DeviceLabel names the device d for progress lines: "cpu", or "cuda:N"
// with the GPU's name, as "cuda:0 (NVIDIA H100 80GB HBM3)". For the CPU it
// does not touch the CUDA libraries.
func DeviceLabel(d nsrnn.Device) string {
	if d.IsCPU() {
		return d.String()
	}
	ds, err := listDevices()
	if err != nil {
		return d.String()
	}
	for _, info := range ds {
		if info.Device == d && info.Name != "" {
			return fmt.Sprintf("%s (%s)", d, info.Name)
		}
	}
	return d.String()
}

// listDevices lists the GPUs (nsrnn.Devices); tests replace it.
var listDevices = nsrnn.Devices

// DevicesSummary is the description of the devices command of the
// programs (RunDevices).
const DevicesSummary = "list the GPUs that --device can name, or say why there is none (the CPU is always available)"

// RunDevices is the devices command of program p: it lists the GPUs found
// (WriteDevices) and succeeds where the CUDA libraries cannot be loaded,
// saying why.
func RunDevices(p *Program, args []string, stdout io.Writer) error {
	fs := p.FlagSet("devices", stdout)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	ds, err := listDevices()
	return WriteDevices(stdout, ds, err)
}

// WriteDevices writes the GPUs ds, one line each: the name --device takes
// (cuda:N), the product name, the memory in GiB, the compute capability,
// and "usable" or why not; then that the CPU is always available. For err,
// the error of nsrnn.Devices (the CUDA libraries missing, say), it writes
// the error instead of the GPUs. Only an error of w is returned.
func WriteDevices(w io.Writer, ds []nsrnn.DeviceInfo, err error) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	switch {
	case err != nil:
		fmt.Fprintf(tw, "no GPU can be used: %v\n", err)
	case len(ds) == 0:
		fmt.Fprintln(tw, "no GPU found: the CUDA libraries were loaded, but the driver reports no device")
	}
	for _, d := range ds {
		usable := "usable"
		if !d.Usable {
			usable = "not usable"
			if d.Why != "" {
				usable += ": " + d.Why
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%.1f GiB\tcompute capability %d.%d\t%s\n", d.Device, d.Name, float64(d.Memory)/(1<<30), d.Major, d.Minor, usable)
	}
	fmt.Fprintln(tw, "cpu\tthe CPU is always available (--device cpu, the default)")
	return tw.Flush()
}
