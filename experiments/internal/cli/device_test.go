package cli

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/nsrnn"
)

// TestDeviceFlag: --device defaults to cpu, parses cpu, cuda and cuda:N,
// and refuses anything else with an error naming the flag.
func TestDeviceFlag(t *testing.T) {
	for _, c := range []struct {
		args []string
		want nsrnn.Device
		err  bool
	}{
		{nil, nsrnn.CPU, false},
		{[]string{"--device", "cpu"}, nsrnn.CPU, false},
		{[]string{"--device", "cuda"}, nsrnn.CUDA(0), false},
		{[]string{"--device=cuda:0"}, nsrnn.CUDA(0), false},
		{[]string{"--device", "cuda:3"}, nsrnn.CUDA(3), false},
		{[]string{"--device", "gpu"}, nsrnn.CPU, true},
		{[]string{"--device", "CUDA"}, nsrnn.CPU, true},
		{[]string{"--device", "cuda:-1"}, nsrnn.CPU, true},
		{[]string{"--device", "cuda:x"}, nsrnn.CPU, true},
		{[]string{"--device", "cuda:"}, nsrnn.CPU, true},
	} {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		v := DeviceFlag(fs, "prog", "")
		if err := fs.Parse(c.args); err != nil {
			t.Fatalf("%v: %v", c.args, err)
		}
		d, err := ParseDeviceFlag(*v)
		switch {
		case c.err && (err == nil || !strings.HasPrefix(err.Error(), "--device: ") || !strings.Contains(err.Error(), "want cpu, cuda or cuda:N")):
			t.Errorf("%v: error %v; want one naming --device and the values it takes", c.args, err)
		case !c.err && (err != nil || d != c.want):
			t.Errorf("%v: %v, %v; want %v", c.args, d, err, c.want)
		}
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	DeviceFlag(fs, "prog", "recorded in run.json")
	ShowDefaults(fs)
	if u := fs.FlagUsages(); !strings.Contains(u, "prog devices") || !strings.Contains(u, "recorded in run.json") || strings.Count(u, `(default "cpu")`) != 1 {
		t.Errorf("help of --device:\n%s", u)
	}
}

// TestDeviceSetting: run.json records the CPU as nothing, so that a CPU
// run's file is the one written before there was a choice.
func TestDeviceSetting(t *testing.T) {
	for d, want := range map[nsrnn.Device]string{nsrnn.CPU: "", nsrnn.CUDA(0): "cuda:0", nsrnn.CUDA(2): "cuda:2"} {
		if got := DeviceSetting(d); got != want {
			t.Errorf("DeviceSetting(%v) = %q, want %q", d, got, want)
		}
	}
}

// noDevices makes the listing of GPUs fail the test while f runs: the
// CPU must not touch the CUDA libraries.
func noDevices(t *testing.T, f func()) {
	t.Helper()
	defer func(l func() ([]nsrnn.DeviceInfo, error)) { listDevices = l }(listDevices)
	listDevices = func() ([]nsrnn.DeviceInfo, error) {
		t.Error("the GPUs were listed for the CPU")
		return nil, errors.New("not here")
	}
	f()
}

// TestUseDeviceCPU: for the CPU, UseDevice, CheckDevice and DeviceLabel
// do nothing that needs CUDA, and the model stays on the CPU.
func TestUseDeviceCPU(t *testing.T) {
	cfg := nsrnn.Config{Kind: "lstm", Hidden: 3, InputVocab: 3, OutputVocab: 3}
	m, err := nsrnn.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	noDevices(t, func() {
		if err := UseDevice(m, nsrnn.CPU); err != nil || m.Device() != nsrnn.CPU {
			t.Errorf("UseDevice(cpu): %v, device %v", err, m.Device())
		}
		if err := CheckDevice(nsrnn.CPU, cfg, false); err != nil {
			t.Errorf("CheckDevice(cpu): %v", err)
		}
		if l := DeviceLabel(nsrnn.CPU); l != "cpu" {
			t.Errorf("DeviceLabel(cpu) = %q", l)
		}
	})
}

// noKernelConfig returns the configuration of a small model of a kind
// without an implementation on the GPU (moving it to cuda:0 is refused
// with nsrnn.ErrNoDeviceKernel), trying each kind; false when every kind
// has one.
func noKernelConfig() (nsrnn.Config, bool) {
	for _, k := range nsrnn.AllKinds() {
		cfg := nsrnn.Config{Kind: k.Name, Hidden: 3, InputVocab: 3, OutputVocab: 3}
		for _, h := range k.Hyperparameters {
			if p, ok := cfg.FieldValue(h.Field).(*int); ok && h.Required {
				*p = 2
			}
		}
		m, err := nsrnn.New(cfg, 1)
		if err != nil {
			continue
		}
		err = m.SetDevice(nsrnn.CUDA(0))
		if errors.Is(err, nsrnn.ErrNoDeviceKernel) {
			return cfg, true
		}
		if err == nil {
			_ = m.SetDevice(nsrnn.CPU)
		}
	}
	return nsrnn.Config{}, false
}

// TestUseDeviceNoKernel: a kind without a GPU implementation is refused
// on a GPU, naming --device and saying what to do, and the model stays on
// the CPU; with kindOnly too.
func TestUseDeviceNoKernel(t *testing.T) {
	cfg, ok := noKernelConfig()
	if !ok {
		t.Skip("every kind has a GPU implementation")
	}
	m, err := nsrnn.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	err = UseDevice(m, nsrnn.CUDA(0))
	if _, ok := errors.AsType[*DeviceError](err); !ok || !errors.Is(err, nsrnn.ErrNoDeviceKernel) ||
		!strings.HasPrefix(err.Error(), "--device cuda:0: ") || !strings.Contains(err.Error(), "--device cpu") {
		t.Errorf("%s on cuda:0: %v; want a *DeviceError naming --device, wrapping nsrnn.ErrNoDeviceKernel", cfg.Kind, err)
	}
	if m.Device() != nsrnn.CPU {
		t.Errorf("the refused model is on %v", m.Device())
	}
	for _, kindOnly := range []bool{false, true} {
		if err := CheckDevice(nsrnn.CUDA(0), cfg, kindOnly); !errors.Is(err, nsrnn.ErrNoDeviceKernel) {
			t.Errorf("CheckDevice(%s, kindOnly %v): %v", cfg.Kind, kindOnly, err)
		}
	}
}

// TestUseDeviceWithoutCUDA: where the CUDA libraries cannot be loaded, a
// model that has a GPU implementation is refused on a GPU with the error
// naming the missing libraries, and stays on the CPU; CheckDevice with
// kindOnly lets it pass. (On a machine with a GPU, it checks that the
// model moves there and back.)
func TestUseDeviceWithoutCUDA(t *testing.T) {
	cfg := nsrnn.Config{Kind: "lstm", Hidden: 3, InputVocab: 3, OutputVocab: 3}
	m, err := nsrnn.New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if _, derr := nsrnn.Devices(); derr == nil {
		if err := UseDevice(m, nsrnn.CUDA(0)); err != nil || m.Device() != nsrnn.CUDA(0) {
			t.Fatalf("UseDevice(cuda:0) with CUDA: %v, device %v", err, m.Device())
		}
		if err := CheckDevice(nsrnn.CUDA(0), cfg, false); err != nil {
			t.Errorf("CheckDevice(cuda:0) with CUDA: %v", err)
		}
		if l := DeviceLabel(nsrnn.CUDA(0)); !strings.HasPrefix(l, "cuda:0 (") {
			t.Errorf("DeviceLabel(cuda:0) = %q; want the GPU's name", l)
		}
		return
	}
	err = UseDevice(m, nsrnn.CUDA(0))
	if err == nil || !strings.HasPrefix(err.Error(), "--device cuda:0: ") || !strings.Contains(err.Error(), "NSRNN_CUDA_LIBS") {
		t.Errorf("UseDevice(cuda:0) without CUDA: %v; want an error naming --device and the missing libraries", err)
	}
	if m.Device() != nsrnn.CPU {
		t.Errorf("the refused model is on %v", m.Device())
	}
	if err := CheckDevice(nsrnn.CUDA(0), cfg, false); err == nil || !strings.Contains(err.Error(), "NSRNN_CUDA_LIBS") {
		t.Errorf("CheckDevice(cuda:0) without CUDA: %v", err)
	}
	if err := CheckDevice(nsrnn.CUDA(0), cfg, true); err != nil {
		t.Errorf("CheckDevice(cuda:0, kindOnly) without CUDA: %v; want nil (the runs compute elsewhere)", err)
	}
	if l := DeviceLabel(nsrnn.CUDA(1)); l != "cuda:1" {
		t.Errorf("DeviceLabel(cuda:1) without CUDA = %q", l)
	}
}

// TestWriteDevices: one line per GPU (its --device name, product name,
// memory in GiB, compute capability, usable or why not), or the reason
// there is none; the CPU last, always available.
func TestWriteDevices(t *testing.T) {
	h100 := nsrnn.DeviceInfo{Device: nsrnn.CUDA(0), Name: "NVIDIA H100 80GB HBM3", Memory: 80 << 30, Major: 9, Minor: 0, Usable: true}
	old := nsrnn.DeviceInfo{Device: nsrnn.CUDA(1), Name: "Tesla K80", Memory: 12 << 30, Major: 3, Minor: 7, Why: "compute capability 3.7; want 5.0 or more"}
	for _, c := range []struct {
		name  string
		ds    []nsrnn.DeviceInfo
		err   error
		lines []string
	}{
		{"no libraries", nil, errors.New("nsrnn: cuda: library not found: libcuda.so.1; set NSRNN_CUDA_LIBS"),
			[]string{"no GPU can be used: nsrnn: cuda: library not found: libcuda.so.1; set NSRNN_CUDA_LIBS", "cpu"}},
		{"none", nil, nil, []string{"no GPU found", "cpu"}},
		{"two", []nsrnn.DeviceInfo{h100, old}, nil, []string{
			"cuda:0  NVIDIA H100 80GB HBM3  80.0 GiB  compute capability 9.0  usable",
			"cuda:1  Tesla K80              12.0 GiB  compute capability 3.7  not usable: compute capability 3.7; want 5.0 or more",
			"cpu",
		}},
	} {
		var b bytes.Buffer
		if err := WriteDevices(&b, c.ds, c.err); err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		if len(lines) != len(c.lines) {
			t.Errorf("%s: %d lines, want %d:\n%s", c.name, len(lines), len(c.lines), b.String())
			continue
		}
		for i, want := range c.lines {
			if !strings.HasPrefix(lines[i], want) {
				t.Errorf("%s: line %d is %q, want it to start with %q", c.name, i+1, lines[i], want)
			}
		}
		if last := lines[len(lines)-1]; !strings.Contains(last, "always available") {
			t.Errorf("%s: last line %q does not say the CPU is always available", c.name, last)
		}
	}
}

// TestRunDevices: the devices command succeeds where the GPUs cannot be
// listed, printing why, and refuses arguments.
func TestRunDevices(t *testing.T) {
	defer func(l func() ([]nsrnn.DeviceInfo, error)) { listDevices = l }(listDevices)
	listDevices = func() ([]nsrnn.DeviceInfo, error) {
		return nil, errors.New("nsrnn: cuda: library not found: libcuda.so.1")
	}
	p := New("prog")
	p.Register("devices", DevicesSummary, func(args []string, stdout, _ io.Writer) error { return RunDevices(p, args, stdout) })
	var stdout, stderr bytes.Buffer
	if code := p.Main([]string{"devices"}, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "libcuda.so.1") ||
		!strings.Contains(stdout.String(), "always available") || stderr.Len() != 0 {
		t.Errorf("devices: status %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	stdout.Reset()
	stderr.Reset()
	if code := p.Main([]string{"devices", "extra"}, &stdout, &stderr); code == 0 || !strings.Contains(stderr.String(), "unexpected arguments") {
		t.Errorf("devices extra: status %d, stderr %q", code, stderr.String())
	}
}
