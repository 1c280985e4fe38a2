package cuda

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// nvrtcForTest loads NVRTC for a test: from $NSRNN_TEST_NVRTC_DIR when set,
// else as LoadNVRTC searches. It skips the test when there is none.
func nvrtcForTest(t *testing.T) {
	t.Helper()
	if dir := os.Getenv("NSRNN_TEST_NVRTC_DIR"); dir != "" {
		if err := LoadNVRTCFrom(dir); err != nil {
			t.Fatalf("NSRNN_TEST_NVRTC_DIR=%s: %v", dir, err)
		}
		return
	}
	if err := LoadNVRTC(); err != nil {
		t.Skipf("no NVRTC (%v); to test without CUDA, get Debian's NVRTC from non-free: "+
			"`apt-get download libnvrtc11.2 libnvrtc-builtins11.8`, unpack both with `dpkg -x FILE.deb root`, "+
			"and set NSRNN_TEST_NVRTC_DIR to root/usr/lib/x86_64-linux-gnu", err)
	}
}

const testKernels = `
extern "C" __global__ void axpy(int n, REAL a, const REAL* __restrict__ x, REAL* __restrict__ y) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		y[i] += a * x[i];
	}
}

extern "C" __global__ void sum(int n, const REAL* __restrict__ x, REAL* out) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) {
		atomicAdd(out, x[i]);
	}
}

extern "C" __global__ void args(int a, int b, unsigned int u, long long l, float f, double d, double* out) {
	out[0] = a;
	out[1] = b;
	out[2] = u;
	out[3] = (double)l;
	out[4] = f;
	out[5] = d;
}
`

func TestCompilePTX(t *testing.T) {
	nvrtcForTest(t)
	major, minor, err := NVRTCVersion()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("NVRTC %d.%d from %s", major, minor, Libraries()["nvrtc"])
	if major < 11 {
		t.Errorf("NVRTC version %d.%d", major, minor)
	}
	ptx, err := CompilePTX(testKernels, "kernels.cu", "compute_80", "-DREAL=double")
	if err != nil {
		t.Fatal(err)
	}
	s := string(ptx)
	for _, want := range []string{".entry", "axpy", "sum", "args", ".target sm_80", ".f64"} {
		if !strings.Contains(s, want) {
			t.Errorf("PTX lacks %q", want)
		}
	}
	// An atomicAdd whose result is unused may compile to red rather than
	// atom.
	if !strings.Contains(s, "atom.global.add.f64") && !strings.Contains(s, "red.global.add.f64") {
		t.Error("PTX lacks a float64 atomic add")
	}
	if strings.IndexByte(s, 0) >= 0 {
		t.Error("PTX holds a NUL")
	}
	ptx32, err := CompilePTX(testKernels, "kernels.cu", "compute_80", "-DREAL=float")
	if err != nil {
		t.Fatal(err)
	}
	if s := string(ptx32); !strings.Contains(s, "atom.global.add.f32") && !strings.Contains(s, "red.global.add.f32") {
		t.Error("float PTX lacks a float32 atomic add")
	}
}

func TestCompilePTXError(t *testing.T) {
	nvrtcForTest(t)
	const bad = "extern \"C\" __global__ void k(double* x) {\n" +
		"\tx[0] = 1;\n" +
		"\tx[1] = 2 +;\n" +
		"}\n"
	_, err := CompilePTX(bad, "bad.cu", "compute_80")
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want an *Error", err)
	}
	if e.Lib != "nvrtc" || e.Func != "nvrtcCompileProgram" || e.Name != "NVRTC_ERROR_COMPILATION" {
		t.Errorf("error %+v", e)
	}
	if !strings.Contains(e.Log, "bad.cu(3)") {
		t.Errorf("log does not name bad.cu(3): %q", e.Log)
	}
	if !strings.Contains(err.Error(), e.Log[:10]) {
		t.Errorf("error text lacks the log: %v", err)
	}
	t.Logf("%v", err)

	_, err = CompilePTX(testKernels, "kernels.cu", "compute_80", "--no-such-option")
	if !errors.As(err, &e) || e.Lib != "nvrtc" {
		t.Errorf("bad option: got %v, want an nvrtc *Error", err)
	}
}
