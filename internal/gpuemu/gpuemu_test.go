package gpuemu

import (
	"math"
	"testing"
)

func device(t *testing.T) *Device {
	t.Helper()
	d, err := New()
	if err != nil {
		t.Skip(err)
	}
	return d
}

const src = `
typedef REAL real;
extern "C" {
__global__ void axpy(real* y, const real* x, real a, int n) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	if (i < n) y[i] += a * x[i];
}
__global__ void rowsum(real* out, const real* x, int cols) {
	__shared__ double sh[256];
	double s = 0;
	for (int j = threadIdx.x; j < cols; j += blockDim.x) s += x[blockIdx.x * cols + j];
	sh[threadIdx.x] = s;
	__syncthreads();
	if (threadIdx.x == 0) out[blockIdx.x] = sh[0];
}
}
`

// Kernels run as on a GPU: independent threads, and blocks with strided
// loops.
func TestKernels(t *testing.T) {
	d := device(t)
	k, err := d.Kernels(src, "test.cu", "-DREAL=double")
	if err != nil {
		t.Fatal(err)
	}
	const n = 600
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i], y[i] = float64(i), 1
	}
	px, _ := d.Alloc(8 * n)
	py, _ := d.Alloc(8 * n)
	if err := d.UploadFloat64(px, x); err != nil {
		t.Fatal(err)
	}
	if err := d.UploadFloat64(py, y); err != nil {
		t.Fatal(err)
	}
	if err := k.LaunchThreads("axpy", n, py, px, 2.0, n); err != nil {
		t.Fatal(err)
	}
	if err := d.DownloadFloat64(y, py); err != nil {
		t.Fatal(err)
	}
	for i, v := range y {
		if v != 1+2*float64(i) {
			t.Fatalf("y[%d] = %v, want %v", i, v, 1+2*float64(i))
		}
	}
	sums, _ := d.Alloc(8 * 3)
	if err := k.LaunchBlocks("rowsum", 3, sums, px, 200); err != nil {
		t.Fatal(err)
	}
	got := make([]float64, 3)
	if err := d.DownloadFloat64(got, sums); err != nil {
		t.Fatal(err)
	}
	for r := range got {
		want := 0.0
		for j := 0; j < 200; j++ {
			want += x[r*200+j]
		}
		if got[r] != want {
			t.Fatalf("row %d sums to %v, want %v", r, got[r], want)
		}
	}
	if err := k.LaunchThreads("nothing", 1); err == nil {
		t.Fatal("a kernel that does not exist was launched")
	}
	if _, err := d.bytesAt(px+8*n, 8); err == nil {
		t.Fatal("an address past an allocation was accepted")
	}
}

// Dgemm and Sgemm are column-major, as cuBLAS's.
func TestGemm(t *testing.T) {
	d := device(t)
	for _, tr := range [][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
		const m, n, k, lda, ldb, ldc = 3, 4, 5, 7, 6, 5
		a, b, c := make([]float64, lda*7), make([]float64, ldb*6), make([]float64, ldc*n)
		for i := range a {
			a[i] = math.Sin(float64(i))
		}
		for i := range b {
			b[i] = math.Cos(float64(i))
		}
		at := func(i, l int) float64 { // op(A)[i, l], column-major
			if tr[0] {
				return a[i*lda+l]
			}
			return a[l*lda+i]
		}
		bt := func(l, j int) float64 {
			if tr[1] {
				return b[l*ldb+j]
			}
			return b[j*ldb+l]
		}
		pa, _ := d.Alloc(8 * len(a))
		pb, _ := d.Alloc(8 * len(b))
		pc, _ := d.Alloc(8 * len(c))
		d.UploadFloat64(pa, a)
		d.UploadFloat64(pb, b)
		if err := d.Dgemm(tr[0], tr[1], m, n, k, 1, pa, lda, pb, ldb, 0, pc, ldc); err != nil {
			t.Fatal(err)
		}
		d.DownloadFloat64(c, pc)
		for i := 0; i < m; i++ {
			for j := 0; j < n; j++ {
				want := 0.0
				for l := 0; l < k; l++ {
					want += at(i, l) * bt(l, j)
				}
				if math.Abs(c[j*ldc+i]-want) > 1e-12 {
					t.Fatalf("transposes %v: C[%d,%d] = %v, want %v", tr, i, j, c[j*ldc+i], want)
				}
			}
		}
	}
}
