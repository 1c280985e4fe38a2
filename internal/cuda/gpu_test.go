package cuda

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// The tests in this file need a GPU and the CUDA libraries. They skip
// when Load fails, unless NSRNN_TEST_REQUIRE_GPU is set, when they fail.

// shared is the Context the GPU tests share, opened by the first of them
// and closed by TestMain.
var shared struct {
	once sync.Once
	c    *Context
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.c != nil {
		if err := shared.c.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "closing the shared Context:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// gpu returns the shared Context, skipping the test when there is no
// driver.
func gpu(t *testing.T) *Context {
	t.Helper()
	if err := Load(); err != nil {
		if os.Getenv("NSRNN_TEST_REQUIRE_GPU") != "" {
			t.Fatalf("no CUDA driver: %v", err)
		}
		t.Skipf("no CUDA driver: %v", err)
	}
	shared.once.Do(func() { shared.c, shared.err = Open(0) })
	if shared.err != nil {
		t.Fatalf("Open(0): %v", shared.err)
	}
	return shared.c
}

func TestDevices(t *testing.T) {
	c := gpu(t)
	devs, err := Devices()
	if err != nil {
		t.Fatal(err)
	}
	if len(devs) == 0 {
		t.Fatal("no devices")
	}
	for _, d := range devs {
		t.Logf("%+v", d)
	}
	info := c.Info()
	if info.Index != 0 || !info.Usable || info.Name == "" || info.Memory == 0 || info.SMs == 0 || info.Major < 6 {
		t.Errorf("Info = %+v", info)
	}
	if want := fmt.Sprintf("compute_%d%d", info.Major, info.Minor); c.Arch() != want {
		t.Errorf("Arch = %q, want %q", c.Arch(), want)
	}
	if devs[0].Name != info.Name || !devs[0].Usable {
		t.Errorf("Devices()[0] = %+v, Info = %+v", devs[0], info)
	}
	major, minor, err := DriverVersion()
	if err != nil || major < 11 {
		t.Errorf("DriverVersion = %d.%d, %v", major, minor, err)
	}
	nmaj, nmin, err := NVRTCVersion()
	if err != nil {
		t.Error(err)
	}
	libs := Libraries()
	if libs["cuda"] == "" || libs["nvrtc"] == "" || libs["cublas"] == "" {
		t.Errorf("Libraries = %v", libs)
	}
	t.Logf("driver CUDA %d.%d, NVRTC %d.%d, libraries %v", major, minor, nmaj, nmin, libs)

	_, err = Open(len(devs))
	if err == nil || !strings.Contains(err.Error(), fmt.Sprint(len(devs))) {
		t.Errorf("Open(%d) = %v, want an error naming the device count", len(devs), err)
	}
	// A second Context on the same device, opened and closed.
	c2, err := Open(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := c2.Close(); err != nil {
		t.Error(err)
	}
	if err := c2.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := c2.Alloc(8); err != errClosed {
		t.Errorf("Alloc on a closed Context: %v", err)
	}
}

func TestMemory(t *testing.T) {
	c := gpu(t)
	const n = 1000
	p, err := c.Alloc(n * 8)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free(p)
	got := make([]float64, n)
	for i := range got {
		got[i] = 1
	}
	if err := c.DownloadFloat64(got, p); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != 0 {
			t.Fatalf("Alloc'd memory not zeroed: [%d] = %v", i, v)
		}
	}
	want := make([]float64, n)
	for i := range want {
		want[i] = float64(i)*0.5 - 3
	}
	if err := c.UploadFloat64(p, want); err != nil {
		t.Fatal(err)
	}
	if err := c.DownloadFloat64(got, p); err != nil {
		t.Fatal(err)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("float64 round trip: [%d] = %v, want %v", i, got[i], want[i])
		}
	}

	// Copy to a second buffer at an offset, and zero part of it.
	q, err := c.Alloc(n * 8)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free(q)
	if err := c.Copy(q.Offset(8*10), p, 8*(n-10)); err != nil {
		t.Fatal(err)
	}
	if err := c.Zero(q.Offset(8*20), 8*5); err != nil {
		t.Fatal(err)
	}
	if err := c.DownloadFloat64(got, q); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		w := 0.0
		if i >= 10 && !(i >= 20 && i < 25) {
			w = want[i-10]
		}
		if got[i] != w {
			t.Fatalf("Copy/Zero: [%d] = %v, want %v", i, got[i], w)
		}
	}

	f32 := []float32{1.5, -2, 3.25, float32(math.Inf(1))}
	g32 := make([]float32, len(f32))
	if err := c.UploadFloat32(p, f32); err != nil {
		t.Fatal(err)
	}
	if err := c.DownloadFloat32(g32, p); err != nil {
		t.Fatal(err)
	}
	i32 := []int32{-1, 2, math.MaxInt32, math.MinInt32}
	gi32 := make([]int32, len(i32))
	if err := c.UploadInt32(q, i32); err != nil {
		t.Fatal(err)
	}
	if err := c.DownloadInt32(gi32, q); err != nil {
		t.Fatal(err)
	}
	for i := range f32 {
		if g32[i] != f32[i] || gi32[i] != i32[i] {
			t.Fatalf("32-bit round trips: %v %v", g32, gi32)
		}
	}
	if err := c.UploadFloat64(p, nil); err != nil {
		t.Error(err)
	}
	if z, err := c.Alloc(0); z != 0 || err != nil {
		t.Errorf("Alloc(0) = %v, %v", z, err)
	}
	if err := c.Free(0); err != nil {
		t.Error(err)
	}

	_, err = c.Alloc(math.MaxInt >> 3)
	var e *Error
	if !errors.As(err, &e) || e.Lib != "cuda" || e.Func != "cuMemAlloc_v2" || !strings.HasPrefix(e.Name, "CUDA_ERROR_") {
		t.Errorf("Alloc(huge) = %v, want a cuMemAlloc_v2 *Error", err)
	}
	t.Log(err)
	if err := c.Sync(); err != nil {
		t.Fatalf("Sync after the failed Alloc: %v", err)
	}
}

func TestKernels(t *testing.T) {
	c := gpu(t)
	m, err := c.Module(testKernels, "kernels.cu", "-DREAL=double")
	if err != nil {
		t.Fatal(err)
	}
	if m2, err := c.Module(testKernels, "kernels.cu", "-DREAL=double"); err != nil || m2 != m {
		t.Errorf("Module is not cached: %p %p %v", m, m2, err)
	}
	axpy, err := m.Function("axpy")
	if err != nil {
		t.Fatal(err)
	}
	if axpy.Name() != "axpy" {
		t.Errorf("Name = %q", axpy.Name())
	}
	if _, err := m.Function("nope"); err == nil {
		t.Error("Function(nope) succeeded")
	}

	const n = 1000
	rnd := rand.New(rand.NewPCG(1, 2))
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i], y[i] = rnd.NormFloat64(), rnd.NormFloat64()
	}
	dx, dy := upload64(t, c, x), upload64(t, c, y)
	defer c.Free(dx)
	defer c.Free(dy)
	const a = 0.75
	grid, block := [3]uint32{(n + 127) / 128, 1, 1}, [3]uint32{128, 1, 1}
	if err := c.Launch(axpy, grid, block, 0, n, a, dx, dy); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, n)
	if err := c.DownloadFloat64(got, dy); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if want := y[i] + a*x[i]; math.Abs(got[i]-want) > 1e-14*(1+math.Abs(want)) {
			t.Fatalf("axpy: y[%d] = %v, want %v", i, got[i], want)
		}
	}
	if err := c.Launch(axpy, grid, block, 0, n, "a", dx, dy); err == nil {
		t.Error("Launch with a string argument succeeded")
	}
	if big := math.MaxInt; big > math.MaxInt32 {
		if err := c.Launch(axpy, grid, block, 0, big, a, dx, dy); err == nil {
			t.Error("Launch with an int overflowing a C int succeeded")
		}
	}

	// float64 atomicAdd: a sum of small integers is exact.
	sum, err := m.Function("sum")
	if err != nil {
		t.Fatal(err)
	}
	ints := make([]float64, n)
	total := 0.0
	for i := range ints {
		ints[i] = float64(i % 17)
		total += ints[i]
	}
	di := upload64(t, c, ints)
	defer c.Free(di)
	out, err := c.Alloc(8)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free(out)
	if err := c.Launch(sum, grid, block, 0, int32(n), di, out); err != nil {
		t.Fatal(err)
	}
	s := make([]float64, 1)
	if err := c.DownloadFloat64(s, out); err != nil {
		t.Fatal(err)
	}
	if s[0] != total {
		t.Errorf("sum = %v, want %v", s[0], total)
	}

	// Every argument type.
	args, err := m.Function("args")
	if err != nil {
		t.Fatal(err)
	}
	res, err := c.Alloc(6 * 8)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free(res)
	one := [3]uint32{1, 1, 1}
	if err := c.Launch(args, one, one, 0, -7, int32(-8), uint32(4000000000), int64(-1<<40-3), float32(1.5), -2.25, res); err != nil {
		t.Fatal(err)
	}
	r := make([]float64, 6)
	if err := c.DownloadFloat64(r, res); err != nil {
		t.Fatal(err)
	}
	if want := []float64{-7, -8, 4000000000, -1<<40 - 3, 1.5, -2.25}; fmt.Sprint(r) != fmt.Sprint(want) {
		t.Errorf("args: got %v, want %v", r, want)
	}

	// float32 kernels.
	m32, err := c.Module(testKernels, "kernels.cu", "-DREAL=float")
	if err != nil {
		t.Fatal(err)
	}
	if m32 == m {
		t.Error("modules with different options are the same")
	}
	axpy32, err := m32.Function("axpy")
	if err != nil {
		t.Fatal(err)
	}
	x32, y32 := make([]float32, n), make([]float32, n)
	for i := range x32 {
		x32[i], y32[i] = float32(x[i]), float32(y[i])
	}
	dx32, err := c.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free(dx32)
	dy32, err := c.Alloc(4 * n)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free(dy32)
	if err := c.UploadFloat32(dx32, x32); err != nil {
		t.Fatal(err)
	}
	if err := c.UploadFloat32(dy32, y32); err != nil {
		t.Fatal(err)
	}
	if err := c.Launch(axpy32, grid, block, 0, n, float32(a), dx32, dy32); err != nil {
		t.Fatal(err)
	}
	got32 := make([]float32, n)
	if err := c.DownloadFloat32(got32, dy32); err != nil {
		t.Fatal(err)
	}
	for i := range got32 {
		want := float64(y32[i]) + a*float64(x32[i])
		if math.Abs(float64(got32[i])-want) > 1e-6*(1+math.Abs(want)) {
			t.Fatalf("axpy float32: y[%d] = %v, want %v", i, got32[i], want)
		}
	}
}

func upload64(t *testing.T, c *Context, v []float64) Ptr {
	t.Helper()
	p, err := c.Alloc(8 * len(v))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.UploadFloat64(p, v); err != nil {
		t.Fatal(err)
	}
	return p
}

// gemmCase is a column-major product C = alpha op(A) op(B) + beta C with
// padded leading dimensions.
type gemmCase struct {
	transA, transB bool
	m, n, k        int
	lda, ldb, ldc  int
	alpha, beta    float64
	a, b, c        []float64
}

func newGemmCase(rnd *rand.Rand, transA, transB bool, m, n, k int) *gemmCase {
	g := &gemmCase{transA: transA, transB: transB, m: m, n: n, k: k, alpha: 1.25, beta: -0.5}
	ra, ca := m, k
	if transA {
		ra, ca = k, m
	}
	rb, cb := k, n
	if transB {
		rb, cb = n, k
	}
	g.lda, g.ldb, g.ldc = ra+1, rb+2, m+3
	fill := func(ld, cols int) []float64 {
		v := make([]float64, ld*cols)
		for i := range v {
			v[i] = rnd.NormFloat64()
		}
		return v
	}
	g.a, g.b, g.c = fill(g.lda, ca), fill(g.ldb, cb), fill(g.ldc, n)
	return g
}

// want returns the expected C, and for each element a bound of the
// rounding error's scale.
func (g *gemmCase) want() (c, scale []float64) {
	c = append([]float64(nil), g.c...)
	scale = make([]float64, len(c))
	for j := 0; j < g.n; j++ {
		for i := 0; i < g.m; i++ {
			s, abs := 0.0, 0.0
			for p := 0; p < g.k; p++ {
				var av, bv float64
				if g.transA {
					av = g.a[p+i*g.lda]
				} else {
					av = g.a[i+p*g.lda]
				}
				if g.transB {
					bv = g.b[j+p*g.ldb]
				} else {
					bv = g.b[p+j*g.ldb]
				}
				s += av * bv
				abs += math.Abs(av * bv)
			}
			idx := i + j*g.ldc
			c[idx] = g.alpha*s + g.beta*g.c[idx]
			scale[idx] = math.Abs(g.alpha)*abs + math.Abs(g.beta*g.c[idx]) + 1e-300
		}
	}
	return c, scale
}

func TestGemm(t *testing.T) {
	c := gpu(t)
	rnd := rand.New(rand.NewPCG(3, 4))
	for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		for _, dims := range [][3]int{{3, 4, 5}, {7, 2, 9}, {33, 17, 65}} {
			g := newGemmCase(rnd, tr[0], tr[1], dims[0], dims[1], dims[2])
			want, scale := g.want()
			name := fmt.Sprintf("transA=%v transB=%v m,n,k=%v", tr[0], tr[1], dims)

			// float64
			da, db, dc := upload64(t, c, g.a), upload64(t, c, g.b), upload64(t, c, g.c)
			if err := c.Dgemm(g.transA, g.transB, g.m, g.n, g.k, g.alpha, da, g.lda, db, g.ldb, g.beta, dc, g.ldc); err != nil {
				t.Fatalf("Dgemm %s: %v", name, err)
			}
			got := make([]float64, len(g.c))
			if err := c.DownloadFloat64(got, dc); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if math.Abs(got[i]-want[i]) > 1e-13*scale[i] && got[i] != want[i] {
					t.Errorf("Dgemm %s: C[%d] = %v, want %v", name, i, got[i], want[i])
					break
				}
			}
			c.Free(da)
			c.Free(db)
			c.Free(dc)

			// float32
			a32, b32, c32 := to32(g.a), to32(g.b), to32(g.c)
			g32 := *g
			g32.a, g32.b, g32.c = to64(a32), to64(b32), to64(c32)
			want32, scale32 := g32.want()
			pa, pb, pc := upload32(t, c, a32), upload32(t, c, b32), upload32(t, c, c32)
			if err := c.Sgemm(g.transA, g.transB, g.m, g.n, g.k, float32(g.alpha), pa, g.lda, pb, g.ldb, float32(g.beta), pc, g.ldc); err != nil {
				t.Fatalf("Sgemm %s: %v", name, err)
			}
			got32 := make([]float32, len(g.c))
			if err := c.DownloadFloat32(got32, pc); err != nil {
				t.Fatal(err)
			}
			for i := range got32 {
				// 1e-3 allows for TF32 tensor cores, should cuBLAS use them.
				if math.Abs(float64(got32[i])-want32[i]) > 1e-3*scale32[i] && float64(got32[i]) != want32[i] {
					t.Errorf("Sgemm %s: C[%d] = %v, want %v", name, i, got32[i], want32[i])
					break
				}
			}
			c.Free(pa)
			c.Free(pb)
			c.Free(pc)
		}
	}
	if err := c.Dgemm(false, false, -1, 1, 1, 1, 0, 1, 0, 1, 0, 0, 1); err == nil {
		t.Error("Dgemm with m = -1 succeeded")
	}
	// An invalid leading dimension is cuBLAS's error.
	err := c.Dgemm(false, false, 4, 4, 4, 1, 0, 1, 0, 4, 0, 0, 4)
	var e *Error
	if !errors.As(err, &e) || e.Lib != "cublas" || e.Name != "CUBLAS_STATUS_INVALID_VALUE" {
		t.Errorf("Dgemm with lda < m: %v, want CUBLAS_STATUS_INVALID_VALUE", err)
	}
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
}

func to32(v []float64) []float32 {
	w := make([]float32, len(v))
	for i, x := range v {
		w[i] = float32(x)
	}
	return w
}

func to64(v []float32) []float64 {
	w := make([]float64, len(v))
	for i, x := range v {
		w[i] = float64(x)
	}
	return w
}

func upload32(t *testing.T, c *Context, v []float32) Ptr {
	t.Helper()
	p, err := c.Alloc(4 * len(v))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.UploadFloat32(p, v); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGraph(t *testing.T) {
	c := gpu(t)
	m, err := c.Module(testKernels, "kernels.cu", "-DREAL=double")
	if err != nil {
		t.Fatal(err)
	}
	axpy, err := m.Function("axpy")
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	rnd := rand.New(rand.NewPCG(5, 6))
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i], y[i] = rnd.NormFloat64(), rnd.NormFloat64()
	}
	dx, dy := upload64(t, c, x), upload64(t, c, y)
	defer c.Free(dx)
	defer c.Free(dy)
	// A product captured too: C += A B, 5×3 = (5×4)(4×3), beta 1.
	g := newGemmCase(rnd, false, false, 5, 3, 4)
	g.alpha, g.beta = 1, 1
	da, db, dc := upload64(t, c, g.a), upload64(t, c, g.b), upload64(t, c, g.c)
	defer c.Free(da)
	defer c.Free(db)
	defer c.Free(dc)

	const a = -1.5
	grid, block := [3]uint32{(n + 63) / 64, 1, 1}, [3]uint32{64, 1, 1}
	// Run the kernel and the product once before capturing them, changing
	// nothing (a = 0, alpha = 0), as a program would have: lazy loading
	// then happens outside the capture.
	if err := c.Launch(axpy, grid, block, 0, n, 0.0, dx, dy); err != nil {
		t.Fatal(err)
	}
	if err := c.Dgemm(false, false, g.m, g.n, g.k, 0, da, g.lda, db, g.ldb, 1, dc, g.ldc); err != nil {
		t.Fatal(err)
	}
	if err := c.BeginCapture(); err != nil {
		t.Fatal(err)
	}
	if err := c.Launch(axpy, grid, block, 0, n, a, dx, dy); err != nil {
		t.Fatal(err)
	}
	if err := c.Dgemm(false, false, g.m, g.n, g.k, g.alpha, da, g.lda, db, g.ldb, g.beta, dc, g.ldc); err != nil {
		t.Fatal(err)
	}
	graph, err := c.EndCapture()
	if err != nil {
		t.Fatal(err)
	}
	got := make([]float64, n)
	if err := c.DownloadFloat64(got, dy); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != y[i] {
			t.Fatalf("the captured work ran during the capture: y[%d] = %v, want %v", i, got[i], y[i])
		}
	}
	for range 2 {
		if err := graph.Launch(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := c.DownloadFloat64(got, dy); err != nil {
		t.Fatal(err)
	}
	for i := range got {
		want := y[i] + a*x[i] + a*x[i]
		if math.Abs(got[i]-want) > 1e-13*(1+math.Abs(want)) {
			t.Fatalf("after two replays: y[%d] = %v, want %v", i, got[i], want)
		}
	}
	// C = C0 + 2 A B.
	once, scale := g.want()
	gotC := make([]float64, len(g.c))
	if err := c.DownloadFloat64(gotC, dc); err != nil {
		t.Fatal(err)
	}
	for i := range gotC {
		want := 2*once[i] - g.c[i]
		if math.Abs(gotC[i]-want) > 1e-13*(2*scale[i]) && gotC[i] != want {
			t.Fatalf("captured Dgemm after two replays: C[%d] = %v, want %v", i, gotC[i], want)
		}
	}
	if err := graph.Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := graph.Destroy(); err != nil {
		t.Errorf("second Destroy: %v", err)
	}
	if err := graph.Launch(); err == nil {
		t.Error("Launch of a destroyed Graph succeeded")
	}
}

func TestEvents(t *testing.T) {
	c := gpu(t)
	const n = 512
	rnd := rand.New(rand.NewPCG(7, 8))
	g := newGemmCase(rnd, false, false, n, n, n)
	da, db, dc := upload64(t, c, g.a), upload64(t, c, g.b), upload64(t, c, g.c)
	defer c.Free(da)
	defer c.Free(db)
	defer c.Free(dc)
	var ev [3]*Event
	for i := range ev {
		e, err := c.NewEvent()
		if err != nil {
			t.Fatal(err)
		}
		defer e.Destroy()
		ev[i] = e
	}
	gemm := func(times int) {
		for range times {
			if err := c.Dgemm(false, false, n, n, n, 1, da, n, db, n, 0, dc, n); err != nil {
				t.Fatal(err)
			}
		}
	}
	gemm(1) // loads cuBLAS's kernels outside the timing
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}
	host := time.Now()
	if err := ev[0].Record(); err != nil {
		t.Fatal(err)
	}
	gemm(2)
	if err := ev[1].Record(); err != nil {
		t.Fatal(err)
	}
	gemm(8)
	if err := ev[2].Record(); err != nil {
		t.Fatal(err)
	}
	d02, err := ev[2].Since(ev[0])
	if err != nil {
		t.Fatal(err)
	}
	wall := time.Since(host)
	d01, err := ev[1].Since(ev[0])
	if err != nil {
		t.Fatal(err)
	}
	d12, err := ev[2].Since(ev[1])
	if err != nil {
		t.Fatal(err)
	}
	// Ten products of 2n³ flops each take time on any device; the marks
	// are ordered on the stream, the parts sum to the whole (to the
	// clock's resolution), and the device cannot have taken longer than
	// the host waited.
	if d01 <= 0 || d12 <= 0 {
		t.Errorf("the device's times between marks: %v and %v, want both > 0", d01, d12)
	}
	if diff := d02 - d01 - d12; diff < -2*time.Microsecond || diff > 2*time.Microsecond {
		t.Errorf("the device's time from mark 0 to 2 is %v, from 0 to 1 %v and from 1 to 2 %v: the parts do not sum to the whole", d02, d01, d12)
	}
	if d02 > wall {
		t.Errorf("the device's time between marks %v exceeds the host's %v around them", d02, wall)
	}
	t.Logf("2 products of %d×%d×%d in %v, 8 in %v", n, n, n, d01, d12)
	if err := ev[0].Destroy(); err != nil {
		t.Fatal(err)
	}
	if err := ev[0].Destroy(); err != nil {
		t.Errorf("second Destroy: %v", err)
	}
	if err := ev[0].Record(); err == nil {
		t.Error("Record of a destroyed Event succeeded")
	}
	if _, err := ev[2].Since(ev[0]); err == nil {
		t.Error("Since a destroyed Event succeeded")
	}
}

// TestQueuedUploads checks QueueUploadInt32: each upload lands in stream
// order between the operations queued around it, holds the values src had
// at the call even though src is overwritten at once, and survives its
// staging buffer being reused (more uploads than buffers) and grown (sizes
// that rise past the first allocation).
func TestQueuedUploads(t *testing.T) {
	c := gpu(t)
	sizes := []int{3, 1000, 7, 5000, 1, 20000, 20000, 2}
	maxN := 0
	for _, n := range sizes {
		maxN = max(maxN, n)
	}
	x, err := c.Alloc(4 * maxN)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free(x)
	outs := make([]Ptr, len(sizes))
	for i, n := range sizes {
		if outs[i], err = c.Alloc(4 * n); err != nil {
			t.Fatal(err)
		}
		defer c.Free(outs[i])
	}
	value := func(round, j int) int32 { return int32(round*100003 + j*7 - 5) }
	src := make([]int32, maxN)
	for r, n := range sizes {
		for j := range n {
			src[j] = value(r, j)
		}
		if err := c.QueueUploadInt32(x, src[:n]); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
		for j := range src {
			src[j] = -1 // the caller reuses src at once
		}
		if err := c.Copy(outs[r], x, 4*n); err != nil {
			t.Fatalf("round %d: %v", r, err)
		}
	}
	for r, n := range sizes {
		got := make([]int32, n)
		if err := c.DownloadInt32(got, outs[r]); err != nil {
			t.Fatal(err)
		}
		for j, v := range got {
			if w := value(r, j); v != w {
				t.Fatalf("round %d (%d values): [%d] = %d, want %d", r, n, j, v, w)
			}
		}
	}
	if err := c.QueueUploadInt32(x, nil); err != nil {
		t.Errorf("empty upload: %v", err)
	}
}

// TestSideStream checks Side, Main and JoinSide: a product queued on the
// side stream sees the work queued on the main stream before Side, the
// main stream's work after JoinSide sees the side's, and the same holds
// inside a captured graph, replayed after its inputs change; and the
// operations of the main stream alone refuse to run while the side is in
// use.
func TestSideStream(t *testing.T) {
	c := gpu(t)
	rnd := rand.New(rand.NewPCG(11, 12))
	// A large enough product that the side's work is still running when
	// the main stream's next operations are queued.
	g := newGemmCase(rnd, false, true, 300, 200, 500)
	g.beta = 0
	want, scale := g.want()
	// A is copied into da on the main stream, asynchronously, just
	// before Side: the side's product must wait for the copy.
	a0, da, db := upload64(t, c, g.a), upload64(t, c, make([]float64, len(g.a))), upload64(t, c, g.b)
	defer c.Free(a0)
	defer c.Free(da)
	defer c.Free(db)
	side, main := upload64(t, c, make([]float64, len(g.c))), upload64(t, c, make([]float64, len(g.c)))
	defer c.Free(side)
	defer c.Free(main)
	out, err := c.Alloc(8 * len(g.c))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Free(out)
	queue := func() error {
		if err := c.Zero(da, 8*len(g.a)); err != nil {
			return err
		}
		if err := c.Copy(da, a0, 8*len(g.a)); err != nil {
			return err
		}
		if err := c.Side(); err != nil {
			return err
		}
		if err := c.Dgemm(g.transA, g.transB, g.m, g.n, g.k, g.alpha, da, g.lda, db, g.ldb, 0, side, g.ldc); err != nil {
			return err
		}
		c.Main()
		if err := c.Dgemm(g.transA, g.transB, g.m, g.n, g.k, g.alpha, da, g.lda, db, g.ldb, 0, main, g.ldc); err != nil {
			return err
		}
		if err := c.JoinSide(); err != nil {
			return err
		}
		return c.Copy(out, side, 8*len(g.c))
	}
	check := func(what string) {
		t.Helper()
		for _, p := range []Ptr{out, main} {
			got := make([]float64, len(g.c))
			if err := c.DownloadFloat64(got, p); err != nil {
				t.Fatal(err)
			}
			for j := 0; j < g.n; j++ {
				for i := 0; i < g.m; i++ {
					k := i + j*g.ldc
					if d := math.Abs(got[k] - want[k]); d > 1e-13*scale[k] {
						t.Fatalf("%s: C[%d,%d] = %v, want %v", what, i, j, got[k], want[k])
					}
				}
			}
		}
	}
	if err := queue(); err != nil {
		t.Fatal(err)
	}
	check("launched")

	if err := c.Side(); err != nil {
		t.Fatal(err)
	}
	if err := c.Sync(); !errors.Is(err, errOnSide) {
		t.Errorf("Sync on the side stream: %v, want errOnSide", err)
	}
	c.Main()
	if err := c.Sync(); !errors.Is(err, errSidePending) {
		t.Errorf("Sync with the side not joined: %v, want errSidePending", err)
	}
	if err := c.DownloadFloat64(make([]float64, 1), out); !errors.Is(err, errSidePending) {
		t.Errorf("a download with the side not joined: %v, want errSidePending", err)
	}
	for range 2 { // the second has nothing to join
		if err := c.JoinSide(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Sync(); err != nil {
		t.Fatal(err)
	}

	if err := c.BeginCapture(); err != nil {
		t.Fatal(err)
	}
	if err := c.QueueUploadInt32(out, []int32{1}); !errors.Is(err, errUploadInCapture) {
		t.Errorf("QueueUploadInt32 in a capture: %v, want errUploadInCapture", err)
	}
	qerr := queue()
	graph, err := c.EndCapture()
	if qerr != nil || err != nil {
		t.Fatalf("capture: %v, %v", qerr, err)
	}
	defer graph.Destroy()
	for _, p := range []Ptr{out, main, side} {
		if err := c.Zero(p, 8*len(g.c)); err != nil {
			t.Fatal(err)
		}
	}
	// New inputs, then the graph replayed.
	for i := range g.a {
		g.a[i] = rnd.NormFloat64()
	}
	want, scale = g.want()
	if err := c.UploadFloat64(a0, g.a); err != nil {
		t.Fatal(err)
	}
	if err := graph.Launch(); err != nil {
		t.Fatal(err)
	}
	check("captured")
}
