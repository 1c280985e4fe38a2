package cuda

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"
)

func TestLoadMissingLibraries(t *testing.T) {
	if platformErr != nil {
		t.Skip(platformErr)
	}
	dir := t.TempDir()
	var l loader
	err := l.load(searchPath{env: []string{dir}})
	if err == nil {
		t.Fatal("load from an empty directory succeeded")
	}
	if !errors.Is(err, ErrNoLibrary) {
		t.Errorf("error does not wrap ErrNoLibrary: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"libcuda.so.1", "libnvrtc.so.13", "libnvrtc.so.11.2", "libcublas.so.13", EnvLibs, dir} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not name %q: %v", want, msg)
		}
	}
	// The failure is remembered.
	if err2 := l.load(searchPath{}); err2 != err {
		t.Errorf("second load returned %v, want the first error", err2)
	}
}

func TestLoadEnvEmptyDir(t *testing.T) {
	if platformErr != nil {
		t.Skip(platformErr)
	}
	dir := t.TempDir()
	t.Setenv(EnvLibs, dir)
	var l loader
	err := l.load(defaultSearch())
	if l.driver != nil {
		t.Skipf("libcuda is installed here (%s): the missing-library error cannot be tested", l.driver.lib.path)
	}
	if err == nil {
		t.Fatal("load succeeded without libcuda")
	}
	if !errors.Is(err, ErrNoLibrary) {
		t.Errorf("error does not wrap ErrNoLibrary: %v", err)
	}
	msg := err.Error()
	for _, want := range []string{"libcuda.so.1", EnvLibs, dir, "/usr/local/cuda/lib64"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error does not name %q: %v", want, msg)
		}
	}
}

func TestLoadBrokenFile(t *testing.T) {
	if platformErr != nil {
		t.Skip(platformErr)
	}
	dir := t.TempDir()
	bad := filepath.Join(dir, "libcuda.so.1")
	if err := os.WriteFile(bad, []byte("not a library"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "unrelated.txt")
	if err := os.WriteFile(other, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, env := range [][]string{{dir}, {other, bad}} {
		sp := searchPath{env: env}
		_, nf := sp.open(cudaSpec)
		if nf == nil {
			t.Fatalf("%v: a broken libcuda.so.1 loaded", env)
		}
		err := sp.missingError([]*notFound{nf})
		if !strings.Contains(err.Error(), "failed loads: "+bad) {
			t.Errorf("%v: error does not report the failed load of %s: %v", env, bad, err)
		}
	}
}

func TestLoadNVRTCFromEmptyDir(t *testing.T) {
	if platformErr != nil {
		t.Skip(platformErr)
	}
	var l loader
	err := l.loadNVRTC(searchPath{env: []string{t.TempDir()}}, false)
	if !errors.Is(err, ErrNoLibrary) || !strings.Contains(err.Error(), "libnvrtc.so.12") {
		t.Errorf("got %v, want an error wrapping ErrNoLibrary naming libnvrtc.so.12", err)
	}
	if err := LoadNVRTCFrom(""); !errors.Is(err, ErrNoLibrary) {
		t.Errorf("LoadNVRTCFrom(\"\") = %v, want an error wrapping ErrNoLibrary", err)
	}
}

func TestPlatform(t *testing.T) {
	supported := runtime.GOOS == "linux" && (runtime.GOARCH == "amd64" || runtime.GOARCH == "arm64")
	if supported != (platformErr == nil) {
		t.Errorf("platformErr = %v on %s/%s", platformErr, runtime.GOOS, runtime.GOARCH)
	}
	if platformErr != nil && !errors.Is(platformErr, ErrNoLibrary) {
		t.Errorf("platformErr does not wrap ErrNoLibrary: %v", platformErr)
	}
}

func TestSplitEnv(t *testing.T) {
	got := splitEnv(" /a::/b/libcuda.so.1: ")
	if len(got) != 2 || got[0] != "/a" || got[1] != "/b/libcuda.so.1" {
		t.Errorf("splitEnv = %q", got)
	}
}

func TestErrorString(t *testing.T) {
	for _, test := range []struct {
		e    *Error
		want string
	}{
		{&Error{Lib: "cuda", Func: "cuMemAlloc_v2", Code: 2, Name: "CUDA_ERROR_OUT_OF_MEMORY", Msg: "out of memory"},
			"cuda: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"},
		{&Error{Lib: "cublas", Func: "cublasDgemm_v2", Code: 7, Name: cublasStatusName(7)},
			"cublas: cublasDgemm_v2: CUBLAS_STATUS_INVALID_VALUE"},
		{&Error{Lib: "nvrtc", Func: "nvrtcCompileProgram", Code: 6, Name: "NVRTC_ERROR_COMPILATION", Log: "k.cu(3): error: oops\n\n"},
			"nvrtc: nvrtcCompileProgram: NVRTC_ERROR_COMPILATION\nk.cu(3): error: oops"},
		{&Error{Lib: "cublas", Func: "f", Code: 99}, "cublas: f: status 99"},
	} {
		if got := test.e.Error(); got != test.want {
			t.Errorf("got %q, want %q", got, test.want)
		}
	}
	if got := cublasStatusName(99); got != "cublasStatus_t(99)" {
		t.Errorf("cublasStatusName(99) = %q", got)
	}
}

func TestStatus(t *testing.T) {
	if high := uint64(0xdeadbeef_00000002); uint64(uintptr(high)) == high {
		if got := status(uintptr(high)); got != 2 {
			t.Errorf("status = %d, want 2", got)
		}
	}
	if got := status(0xffffffff); got != -1 {
		t.Errorf("status = %d, want -1", got)
	}
}

func TestGoString(t *testing.T) {
	b := cString("hello")
	if got := goString(uintptr(unsafe.Pointer(&b[0]))); got != "hello" {
		t.Errorf("goString = %q", got)
	}
	runtime.KeepAlive(b)
	if got := goString(0); got != "" {
		t.Errorf("goString(0) = %q", got)
	}
}

func TestPtrOffset(t *testing.T) {
	p := Ptr(1000)
	if p.Offset(24) != 1024 || p.Offset(-8) != 992 {
		t.Errorf("Offset: %d %d", p.Offset(24), p.Offset(-8))
	}
}

func TestPackArgs(t *testing.T) {
	args := []any{Ptr(0x1234), -7, int32(-8), uint32(4000000000), int64(-1 << 40), float32(1.5), float64(-2.25)}
	vals, ptrs, err := packArgs(nil, nil, args)
	if err != nil {
		t.Fatal(err)
	}
	if len(vals) != len(args) || len(ptrs) != len(args) {
		t.Fatalf("lengths %d, %d", len(vals), len(ptrs))
	}
	for i := range ptrs {
		if ptrs[i] != unsafe.Pointer(&vals[i]) {
			t.Errorf("ptrs[%d] does not point to vals[%d]", i, i)
		}
	}
	if *(*uint64)(ptrs[0]) != 0x1234 ||
		*(*int32)(ptrs[1]) != -7 ||
		*(*int32)(ptrs[2]) != -8 ||
		*(*uint32)(ptrs[3]) != 4000000000 ||
		*(*int64)(ptrs[4]) != -1<<40 ||
		*(*float32)(ptrs[5]) != 1.5 ||
		*(*float64)(ptrs[6]) != -2.25 {
		t.Errorf("packed values wrong: %x", vals)
	}
	// The buffers are reused, and their slots rewritten.
	vals2, ptrs2, err := packArgs(vals, ptrs, []any{int32(3)})
	if err != nil || &vals2[0] != &vals[0] || len(vals2) != 1 || *(*int32)(ptrs2[0]) != 3 || vals2[0]>>32 != 0 {
		t.Errorf("reuse: %v %x", err, vals2)
	}
	bads := []any{"x", uint64(1), uintptr(1), []float64{1}}
	if big := math.MaxInt; big > math.MaxInt32 {
		bads = append(bads, big, -big)
	}
	for _, bad := range bads {
		if _, _, err := packArgs(nil, nil, []any{bad}); err == nil {
			t.Errorf("packArgs(%T %v) succeeded", bad, bad)
		}
	}
}

func TestHashSource(t *testing.T) {
	a := hashSource("src", "compute_90", []string{"-DREAL=double"})
	for _, b := range []moduleKey{
		hashSource("src", "compute_90", []string{"-DREAL=float"}),
		hashSource("src", "compute_80", []string{"-DREAL=double"}),
		hashSource("src", "compute_90", nil),
		hashSource("src-DREAL=double", "compute_90", nil),
	} {
		if a == b {
			t.Error("different compilations hash alike")
		}
	}
	if a != hashSource("src", "compute_90", []string{"-DREAL=double"}) {
		t.Error("hash is not deterministic")
	}
}

func TestNotLoaded(t *testing.T) {
	if _, err := (&Context{}).Alloc(8); err != errClosed {
		t.Errorf("Alloc on a zero Context: %v", err)
	}
	if err := (&Graph{}).Launch(); err != errGraphDestroyed {
		t.Errorf("Launch of a zero Graph: %v", err)
	}
	if err := (&Context{}).Launch(Func{}, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0); err == nil {
		t.Error("Launch of the zero Func succeeded")
	}
}

// Without the driver functions a side stream needs, Side refuses with
// ErrNoSide before touching the driver, and JoinSide with nothing queued
// on the side does nothing: a caller can always fall back to one stream.
func TestSideWithoutDriverSupport(t *testing.T) {
	c := &Context{d: &driverAPI{}}
	if err := c.Side(); !errors.Is(err, ErrNoSide) {
		t.Fatalf("Side without cuStreamWaitEvent: %v, want ErrNoSide", err)
	}
	c.Main()
	if err := c.JoinSide(); err != nil {
		t.Fatalf("JoinSide with nothing queued: %v", err)
	}
	if c.side.on || c.side.pending {
		t.Fatalf("side state after a refused Side: %+v", c.side)
	}
}
