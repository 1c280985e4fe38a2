package gpuemu

import (
	"math"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/internal/cuda"
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

const simtSrc = `
typedef REAL real;
__device__ void grid_wait(unsigned* bar) {
	__threadfence();
	__syncthreads();
	if (threadIdx.x == 0) {
		volatile unsigned* gen = bar + 1;
		unsigned g = *gen;
		__threadfence();
		if (atomicAdd(bar, 1u) == gridDim.x - 1) {
			atomicExch(bar, 0u);
			__threadfence();
			atomicAdd(bar + 1, 1u);
		} else {
			long long t0 = clock64();
			while (*gen == g && clock64() - t0 < 4000000000LL) {
			}
		}
		__threadfence();
	}
	__syncthreads();
}
extern "C" {
// warpsum: every lane of each warp gets the sum of its warp's values.
__global__ void warpsum(real* out, const real* x) {
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	real v = x[i];
	for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
	out[i] = v;
}
// blocksum: a tree over the block's threads through shared memory.
__global__ void blocksum(real* out, const real* x, int cols) {
	__shared__ double sh[256];
	int t = threadIdx.x;
	double s = 0;
	for (int j = t; j < cols; j += blockDim.x) s += x[blockIdx.x * cols + j];
	sh[t] = s;
	__syncthreads();
	for (int k = blockDim.x / 2; k > 0; k >>= 1) {
		if (t < k) sh[t] += sh[t + k];
		__syncthreads();
	}
	if (t == 0) out[blockIdx.x] = sh[0];
}
// relay: at each of steps steps, thread t of block b adds the value that
// block b−1 (cyclically) wrote at the step before: only a barrier between
// the blocks at every step makes the values those of the step before.
__global__ void relay(real* v, int steps, unsigned* bar) {
	int n = gridDim.x * blockDim.x;
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int from = (i + n - blockDim.x) % n;
	for (int s = 1; s <= steps; s++) {
		volatile real* prev = v + (s - 1) * n;
		v[s * n + i] = prev[i] + prev[from];
		if (s < steps) grid_wait(bar);
	}
}
// relay_noreset is relay with a barrier that never resets its count.
__device__ void grid_wait_noreset(unsigned* bar) {
	__syncthreads();
	if (threadIdx.x == 0) {
		volatile unsigned* gen = bar + 1;
		unsigned g = *gen;
		if (atomicAdd(bar, 1u) == gridDim.x - 1) {
			atomicAdd(bar + 1, 1u);
		} else {
			long long t0 = clock64();
			while (*gen == g && clock64() - t0 < 4000000000LL) {
			}
		}
	}
	__syncthreads();
}
__global__ void relay_noreset(real* v, int steps, unsigned* bar) {
	int n = gridDim.x * blockDim.x;
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	int from = (i + n - blockDim.x) % n;
	for (int s = 1; s <= steps; s++) {
		volatile real* prev = v + (s - 1) * n;
		v[s * n + i] = prev[i] + prev[from];
		if (s < steps) grid_wait_noreset(bar);
	}
}
// diverged: lane 0 of each warp leaves before the shuffle.
__global__ void diverged(real* out) {
	if (threadIdx.x % 32 == 0) return;
	out[threadIdx.x] = __shfl_xor_sync(0xffffffffu, (real)threadIdx.x, 1);
}
// partial: a shuffle over half a warp's lanes.
__global__ void partial(real* out) {
	out[threadIdx.x] = __shfl_xor_sync(0x0000ffffu, (real)threadIdx.x, 1);
}
}
`

// Under NewSIMT, the lanes of a warp exchange values, the threads of a
// block meet at __syncthreads, and blocks meet at a grid barrier; a
// shuffle that some lanes never reach, or with a partial mask, is an
// error; and a kernel that is right only when a block is one thread (the
// sequential emulator's rowsum) is wrong here too, as on a GPU.
func TestSIMT(t *testing.T) {
	d, err := NewSIMT()
	if err != nil {
		t.Skip(err)
	}
	for _, real := range []string{"double", "float"} {
		t.Run(real, func(t *testing.T) {
			k, err := d.Kernels(simtSrc, "simt.cu", "-DREAL="+real)
			if err != nil {
				t.Fatal(err)
			}
			size := 8
			if real == "float" {
				size = 4
			}
			get := func(p cuda.Ptr, n int) []float64 {
				out := make([]float64, n)
				if size == 8 {
					d.DownloadFloat64(out, p)
					return out
				}
				f := make([]float32, n)
				d.DownloadFloat32(f, p)
				for i, v := range f {
					out[i] = float64(v)
				}
				return out
			}
			put := func(x []float64) cuda.Ptr {
				p, _ := d.Alloc(size * len(x))
				if size == 8 {
					d.UploadFloat64(p, x)
				} else {
					f := make([]float32, len(x))
					for i, v := range x {
						f[i] = float32(v)
					}
					d.UploadFloat32(p, f)
				}
				return p
			}
			// warpsum over two blocks of 256.
			x := make([]float64, 512)
			for i := range x {
				x[i] = float64(i % 37)
			}
			px, out := put(x), put(make([]float64, 512))
			if err := k.LaunchThreads("warpsum", 512, out, px); err != nil {
				t.Fatal(err)
			}
			for i, v := range get(out, 512) {
				want := 0.0
				for j := i / 32 * 32; j < i/32*32+32; j++ {
					want += x[j]
				}
				if v != want {
					t.Fatalf("warpsum: lane %d has %v, want %v", i, v, want)
				}
			}
			// blocksum over 3 rows of 700 (doubles in shared memory).
			y := make([]float64, 3*700)
			for i := range y {
				y[i] = float64(i % 11)
			}
			py, sums := put(y), put(make([]float64, 3))
			if err := k.LaunchBlocks("blocksum", 3, sums, py, 700); err != nil {
				t.Fatal(err)
			}
			for r, v := range get(sums, 3) {
				want := 0.0
				for j := 0; j < 700; j++ {
					want += y[r*700+j]
				}
				if v != want {
					t.Fatalf("blocksum: row %d sums to %v, want %v", r, v, want)
				}
			}
			// relay over 4 blocks and 6 steps, against the recurrence.
			const grid, steps = 4, 6
			n := grid * SIMTBlock
			v := make([]float64, (steps+1)*n)
			for i := 0; i < n; i++ {
				v[i] = float64(i%5) - 2
			}
			pv := put(v)
			bar, _ := d.Alloc(8)
			if err := k.LaunchBlocks("relay", grid, pv, steps, bar); err != nil {
				t.Fatal(err)
			}
			got := get(pv, len(v))
			for s := 1; s <= steps; s++ {
				for i := 0; i < n; i++ {
					v[s*n+i] = v[(s-1)*n+i] + v[(s-1)*n+(i+n-SIMTBlock)%n]
					if got[s*n+i] != v[s*n+i] {
						t.Fatalf("relay: step %d, thread %d: %v, want %v (a grid barrier let a block read another's stale values)", s, i, got[s*n+i], v[s*n+i])
					}
				}
			}
			// The barrier's count not reset: the second barrier never
			// opens (on a GPU it would time out), a deadlock.
			if err := k.LaunchBlocks("relay_noreset", grid, pv, steps, bar); err == nil || !strings.Contains(err.Error(), "deadlock") {
				t.Errorf("a grid barrier that never opens: error %v, want a deadlock", err)
			}
			for _, c := range []struct{ kernel, want string }{
				{"diverged", "never reach"},
				{"partial", "partial mask"},
			} {
				err := k.LaunchThreads(c.kernel, 64, out)
				if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), c.kernel) {
					t.Errorf("%s: error %v, want one saying %q", c.kernel, err, c.want)
				}
			}
			// The sequential emulator's rowsum reads sh[0] alone: right
			// with blocks of one thread, wrong with 256 threads.
			if real == "double" {
				ks, err := d.Kernels(src, "test.cu", "-DREAL=double")
				if err != nil {
					t.Fatal(err)
				}
				if err := ks.LaunchBlocks("rowsum", 3, sums, py, 200); err != nil {
					t.Fatal(err)
				}
				want := 0.0
				for j := 0; j < 200; j++ {
					want += y[j]
				}
				if g := get(sums, 1)[0]; g == want {
					t.Errorf("rowsum with 256 threads summed its row (%v): thread 0's share alone should be there", g)
				}
			}
		})
	}
}
