// Package gpuemu runs CUDA C kernels on the CPU, for testing code that
// drives a GPU on machines without one.
//
// # What it emulates
//
// A Device has the memory operations, kernel launches and matrix products
// of internal/cuda's Context, on the CPU: device memory is Go memory (a
// device pointer is its address), the kernels are the same CUDA C source,
// compiled by the system's C++ compiler (c++, g++ or clang++) with a
// header that maps CUDA's built-ins to plain C++, and the products are
// gonum's. A program written against both (a small interface of its own)
// can so run its whole GPU path here and be compared with its CPU path.
//
// # Launches
//
// The CUDA threads of a launch run one after another, so __syncthreads
// does nothing. Two kinds of launch keep that sound: LaunchThreads runs n
// independent threads (blocks of 256 on a GPU), and LaunchBlocks runs a
// grid of blocks whose kernel is correct for any block size, cooperative
// kernels included (block reductions with strided loops over
// threadIdx.x), each block as a single thread. Kernels that need a
// particular block size cannot be emulated. The macro GPUEMU is defined
// for the emulator's compiler: a kernel whose threads cooperate within a
// warp (shuffles) can give one thread the whole of its work there.
//
// # SIMT emulation
//
// NewSIMT emulates what the sequential emulation leaves out, at a cost
// in speed: each CUDA thread runs as a fiber (a stack of its own, switched
// to by the launch's scheduler), so that the lanes of a warp exchange
// values by __shfl_xor_sync, the threads of a block wait for each other
// at __syncthreads, and a thread that spins on memory (calling clock64)
// lets the others run, so that the blocks of a grid can wait for each
// other at a grid barrier (atomicAdd, atomicExch, volatile loads). Blocks
// have SIMTBlock threads, and GPUEMU is not defined: the kernels are
// compiled as for a card. A block starts when those running can go no
// further (ended, or waiting for other blocks), so blocks without a grid
// barrier run one after another, as their __shared__ memory (a static of
// the compiled code) requires. A shuffle that some lanes of the warp never
// reach, a shuffle over a partial mask, and threads that wait for good (a
// barrier the others never reach, a grid barrier that never opens) end
// the launch with an error saying so.
//
// # Requirements
//
// A C++ compiler on PATH (New reports its absence, for tests to skip) and
// linux/amd64 or linux/arm64, where purego loads the compiled kernels.
package gpuemu

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"unsafe"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"

	"github.com/nsrnn/nsrnn/internal/cuda"
)

// Device is an emulated GPU. It is not safe for concurrent use.
type Device struct {
	cxx string
	// simt runs every CUDA thread of a launch as a thread of its own
	// (NewSIMT); clockStep is what each clock64 call adds to the clock
	// (SetClockStep).
	simt      bool
	clockStep int64
	// used and limit are the bytes allocated and the most that may be
	// (0: no limit; SetMemoryLimit).
	used, limit int
	// rec, while capturing, receives the queued operations instead of
	// running them.
	rec *[]func() error
	// allocs maps each allocation's address to its memory, kept alive
	// here; starts lists the addresses in order.
	allocs map[uintptr][]uint64
	starts []uintptr
}

// New returns an emulated device, or an error when no C++ compiler is
// found.
func New() (*Device, error) {
	if platformErr != nil {
		return nil, platformErr
	}
	cxx, err := compiler()
	if err != nil {
		return nil, err
	}
	return &Device{cxx: cxx, allocs: map[uintptr][]uint64{}}, nil
}

// NewSIMT returns an emulated device that runs kernels as a GPU does in
// the respects that the sequential emulator (New) leaves out: each CUDA
// thread of a launch runs as a fiber with a stack of its own, the lanes
// of a warp exchange values by __shfl_xor_sync, the threads of a block
// wait for each other at __syncthreads, and a block that spins on memory
// (clock64) lets the others run, so that a grid barrier between blocks
// works. Blocks have SIMTBlock threads (LaunchBlocks). The macro GPUEMU
// is not defined: the kernels compile as for the GPU. A launch reports as
// an error a warp shuffle that some lanes of the warp never reach, a
// shuffle with a partial mask, and a deadlock (threads waiting at a
// barrier that the others never reach). It is much slower than New.
func NewSIMT() (*Device, error) {
	d, err := New()
	if err != nil {
		return nil, err
	}
	d.simt, d.clockStep = true, 1000
	return d, nil
}

// SetClockStep sets what each call of clock64 adds to the SIMT
// emulation's clock (1000 by default), for testing a kernel's timed-out
// waits: with a step beyond a wait's limit, a thread that spins on
// memory times out at its second call.
func (d *Device) SetClockStep(step int64) { d.clockStep = step }

// SIMT reports whether d is a SIMT emulation (NewSIMT).
func (d *Device) SIMT() bool { return d.simt }

// SIMTBlock is the number of threads of a block that LaunchBlocks runs
// under NewSIMT, the engine's block size on a GPU.
const SIMTBlock = 256

func compiler() (string, error) {
	cxx := os.Getenv("CXX")
	for _, c := range []string{cxx, "c++", "g++", "clang++"} {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p, nil
		}
	}
	if cxx != "" {
		return "", fmt.Errorf("gpuemu: no C++ compiler: CXX=%s is not found, nor c++, g++ or clang++ on PATH", cxx)
	}
	return "", errors.New("gpuemu: no C++ compiler (CXX, or c++, g++ or clang++ on PATH)")
}

// Compiler returns the C++ compiler that the emulator compiles the
// kernels with ($CXX, else c++, g++ or clang++ on PATH), or an error
// saying that there is none: an emulated device is usable only with one.
func Compiler() (string, error) { return compiler() }

// SetMemoryLimit makes Alloc fail, as a card's allocation does when its
// memory is spent, where the memory allocated would exceed limit bytes
// (0: no limit): for testing what a program does then.
func (d *Device) SetMemoryLimit(limit int) { d.limit = limit }

// ErrOutOfMemory is the error of an Alloc beyond SetMemoryLimit's limit.
var ErrOutOfMemory = errors.New("gpuemu: out of memory")

// Alloc returns bytes of zeroed memory, aligned to 8 bytes.
func (d *Device) Alloc(bytes int) (cuda.Ptr, error) {
	if bytes < 0 {
		return 0, fmt.Errorf("gpuemu: Alloc(%d)", bytes)
	}
	if bytes == 0 {
		return 0, nil
	}
	if d.limit > 0 && d.used+bytes > d.limit {
		return 0, fmt.Errorf("%w: %d bytes asked for, %d of the limit of %d in use", ErrOutOfMemory, bytes, d.used, d.limit)
	}
	d.used += 8 * ((bytes + 7) / 8)
	mem := make([]uint64, (bytes+7)/8)
	p := uintptr(unsafe.Pointer(&mem[0]))
	d.allocs[p] = mem
	i := sort.Search(len(d.starts), func(i int) bool { return d.starts[i] > p })
	d.starts = append(d.starts, 0)
	copy(d.starts[i+1:], d.starts[i:])
	d.starts[i] = p
	return cuda.Ptr(p), nil
}

// Free releases memory from Alloc; Free(0) does nothing.
func (d *Device) Free(p cuda.Ptr) error {
	if p == 0 {
		return nil
	}
	mem, ok := d.allocs[uintptr(p)]
	if !ok {
		return fmt.Errorf("gpuemu: Free(%#x) of memory not allocated", uintptr(p))
	}
	d.used -= 8 * len(mem)
	delete(d.allocs, uintptr(p))
	i := sort.Search(len(d.starts), func(i int) bool { return d.starts[i] >= uintptr(p) })
	d.starts = append(d.starts[:i], d.starts[i+1:]...)
	return nil
}

// bytesAt returns the memory from p to the end of its allocation; an
// error if p is in none or fewer than n bytes remain.
func (d *Device) bytesAt(p cuda.Ptr, n int) ([]byte, error) {
	a := uintptr(p)
	i := sort.Search(len(d.starts), func(i int) bool { return d.starts[i] > a }) - 1
	if i < 0 {
		return nil, fmt.Errorf("gpuemu: address %#x is in no allocation", a)
	}
	start := d.starts[i]
	mem := d.allocs[start]
	size := 8 * len(mem)
	off := int(a - start)
	if off >= size || off+n > size {
		return nil, fmt.Errorf("gpuemu: %d bytes at %#x run past the end of an allocation of %d bytes at %#x", n, a, size, start)
	}
	all := unsafe.Slice((*byte)(unsafe.Pointer(&mem[0])), size)
	return all[off:], nil
}

// Zero sets bytes bytes at p to zero.
func (d *Device) Zero(p cuda.Ptr, bytes int) error {
	if bytes == 0 {
		return nil
	}
	return d.queue(func() error { return d.zero(p, bytes) })
}

func (d *Device) zero(p cuda.Ptr, bytes int) error {
	b, err := d.bytesAt(p, bytes)
	if err != nil {
		return err
	}
	clear(b[:bytes])
	return nil
}

// Copy copies bytes bytes from src to dst.
func (d *Device) Copy(dst, src cuda.Ptr, bytes int) error {
	if bytes == 0 {
		return nil
	}
	return d.queue(func() error { return d.copy(dst, src, bytes) })
}

func (d *Device) copy(dst, src cuda.Ptr, bytes int) error {
	s, err := d.bytesAt(src, bytes)
	if err != nil {
		return err
	}
	t, err := d.bytesAt(dst, bytes)
	if err != nil {
		return err
	}
	copy(t[:bytes], s[:bytes])
	return nil
}

func upload[T any](d *Device, dst cuda.Ptr, src []T) error {
	if len(src) == 0 {
		return nil
	}
	if d.rec != nil {
		return errCapture
	}
	n := len(src) * int(unsafe.Sizeof(src[0]))
	t, err := d.bytesAt(dst, n)
	if err != nil {
		return err
	}
	copy(t[:n], unsafe.Slice((*byte)(unsafe.Pointer(&src[0])), n))
	return nil
}

func download[T any](d *Device, dst []T, src cuda.Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	if d.rec != nil {
		return errCapture
	}
	n := len(dst) * int(unsafe.Sizeof(dst[0]))
	s, err := d.bytesAt(src, n)
	if err != nil {
		return err
	}
	copy(unsafe.Slice((*byte)(unsafe.Pointer(&dst[0])), n), s[:n])
	return nil
}

// UploadFloat64 copies src to dst.
func (d *Device) UploadFloat64(dst cuda.Ptr, src []float64) error { return upload(d, dst, src) }

// UploadFloat32 copies src to dst.
func (d *Device) UploadFloat32(dst cuda.Ptr, src []float32) error { return upload(d, dst, src) }

// UploadInt32 copies src to dst.
func (d *Device) UploadInt32(dst cuda.Ptr, src []int32) error { return upload(d, dst, src) }

// QueueUploadInt32 copies src to dst: the emulator runs every operation
// when it is queued, so it is UploadInt32.
func (d *Device) QueueUploadInt32(dst cuda.Ptr, src []int32) error { return upload(d, dst, src) }

// DownloadFloat64 copies len(dst) values from src.
func (d *Device) DownloadFloat64(dst []float64, src cuda.Ptr) error { return download(d, dst, src) }

// DownloadFloat32 copies len(dst) values from src.
func (d *Device) DownloadFloat32(dst []float32, src cuda.Ptr) error { return download(d, dst, src) }

// Close releases all the device's memory.
func (d *Device) Close() error {
	d.used = 0
	d.allocs = map[uintptr][]uint64{}
	d.starts = nil
	return nil
}

// float64s returns the float64 values from p to the end of its allocation.
func (d *Device) float64s(p cuda.Ptr) ([]float64, error) {
	b, err := d.bytesAt(p, 8)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*float64)(unsafe.Pointer(&b[0])), len(b)/8), nil
}

// float32s returns the float32 values from p to the end of its allocation.
func (d *Device) float32s(p cuda.Ptr) ([]float32, error) {
	b, err := d.bytesAt(p, 4)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), len(b)/4), nil
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// Dgemm is cuBLAS's column-major C = alpha·op(A)·op(B) + beta·C, by
// gonum's row-major product of the transposes.
func (d *Device) Dgemm(transA, transB bool, m, n, k int, alpha float64, a cuda.Ptr, lda int, b cuda.Ptr, ldb int, beta float64, c cuda.Ptr, ldc int) error {
	if m == 0 || n == 0 {
		return nil
	}
	return d.queue(func() error { return d.dgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) })
}

func (d *Device) dgemm(transA, transB bool, m, n, k int, alpha float64, a cuda.Ptr, lda int, b cuda.Ptr, ldb int, beta float64, c cuda.Ptr, ldc int) error {
	av, err := d.float64s(a)
	if err != nil {
		return err
	}
	bv, err := d.float64s(b)
	if err != nil {
		return err
	}
	cv, err := d.float64s(c)
	if err != nil {
		return err
	}
	if err := gemmCheck(transA, transB, m, n, k, len(av), lda, len(bv), ldb, len(cv), ldc); err != nil {
		return err
	}
	blas64.Implementation().Dgemm(trans(transB), trans(transA), n, m, k, alpha, bv, ldb, av, lda, beta, cv, ldc)
	return nil
}

// Sgemm is Dgemm in float32.
func (d *Device) Sgemm(transA, transB bool, m, n, k int, alpha float32, a cuda.Ptr, lda int, b cuda.Ptr, ldb int, beta float32, c cuda.Ptr, ldc int) error {
	if m == 0 || n == 0 {
		return nil
	}
	return d.queue(func() error { return d.sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc) })
}

func (d *Device) sgemm(transA, transB bool, m, n, k int, alpha float32, a cuda.Ptr, lda int, b cuda.Ptr, ldb int, beta float32, c cuda.Ptr, ldc int) error {
	av, err := d.float32s(a)
	if err != nil {
		return err
	}
	bv, err := d.float32s(b)
	if err != nil {
		return err
	}
	cv, err := d.float32s(c)
	if err != nil {
		return err
	}
	if err := gemmCheck(transA, transB, m, n, k, len(av), lda, len(bv), ldb, len(cv), ldc); err != nil {
		return err
	}
	blas32.Implementation().Sgemm(trans(transB), trans(transA), n, m, k, alpha, bv, ldb, av, lda, beta, cv, ldc)
	return nil
}

// gemmCheck reports column-major operands that do not fit their memory,
// as cuBLAS would fault.
func gemmCheck(transA, transB bool, m, n, k, la, lda, lb, ldb, lc, ldc int) error {
	need := func(rows, cols, ld, have int, name string) error {
		if ld < max(rows, 1) {
			return fmt.Errorf("gpuemu: gemm: %s has leading dimension %d < %d rows", name, ld, rows)
		}
		if cols > 0 && ld*(cols-1)+rows > have {
			return fmt.Errorf("gpuemu: gemm: %s of %d×%d (ld %d) needs %d values, its memory has %d", name, rows, cols, ld, ld*(cols-1)+rows, have)
		}
		return nil
	}
	ar, ac := m, k
	if transA {
		ar, ac = k, m
	}
	br, bc := k, n
	if transB {
		br, bc = n, k
	}
	return errors.Join(need(ar, ac, lda, la, "A"), need(br, bc, ldb, lb, "B"), need(m, n, ldc, lc, "C"))
}

// errCapture is the error of a copy between host and device during a
// capture, which CUDA refuses too.
var errCapture = errors.New("gpuemu: a copy between host and device while capturing a graph")

// queue runs f, or records it while capturing.
func (d *Device) queue(f func() error) error {
	if d.rec != nil {
		*d.rec = append(*d.rec, f)
		return nil
	}
	return f()
}

// BeginCapture starts recording the device's operations (memory set and
// copy on the device, kernels, products) into a graph instead of running
// them; copies between host and device are refused until EndCapture.
func (d *Device) BeginCapture() error {
	if d.rec != nil {
		return errors.New("gpuemu: BeginCapture while capturing")
	}
	d.rec = new([]func() error)
	return nil
}

// EndCapture stops recording and returns the recorded operations as a
// graph.
func (d *Device) EndCapture() (*Graph, error) {
	if d.rec == nil {
		return nil, errors.New("gpuemu: EndCapture without BeginCapture")
	}
	g := &Graph{ops: *d.rec}
	d.rec = nil
	return g, nil
}

// Graph is a recorded sequence of operations.
type Graph struct{ ops []func() error }

// Launch runs the recorded operations in order.
func (g *Graph) Launch() error {
	for _, f := range g.ops {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// Destroy does nothing.
func (g *Graph) Destroy() error { return nil }

// Kernels is one compiled source's kernels.
type Kernels struct {
	d      *Device
	run    uintptr
	errMsg uintptr // emu_error: the message of a failed launch
	funcs  map[string]uintptr
	// args and ptrs are the launch's argument slots and their addresses.
	args []uint64
	ptrs []uintptr
}

var compiled struct {
	sync.Mutex
	m map[string]*Kernels
}

// kernelSig matches a kernel's declaration.
var kernelSig = regexp.MustCompile(`__global__\s+void\s+(\w+)\s*\(([^)]*)\)`)

// shimCommon maps to C++ the CUDA built-ins that both emulations map
// alike: the thread coordinates, the qualifiers and the bit casts.
const shimCommon = `#include <cmath>
#include <cstring>
#include <cstdint>
#include <algorithm>
using std::min; using std::max;
using std::exp; using std::log; using std::tanh; using std::sqrt; using std::fmax; using std::fmin; using std::fabs;
struct emu_uint3 { unsigned x, y, z; };
static emu_uint3 threadIdx, blockIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static
static inline double __dadd_rn(double a, double b) { return a + b; }
static inline double __dmul_rn(double a, double b) { return a * b; }
static inline double __longlong_as_double(long long x) { double d; std::memcpy(&d, &x, 8); return d; }
static inline long long __double_as_longlong(double x) { long long i; std::memcpy(&i, &x, 8); return i; }
`

// shim maps CUDA's built-ins to C++ for sequential emulation.
const shim = "#define GPUEMU 1\n" + shimCommon + "#define __syncthreads() ((void)0)\n"

// simtShim maps CUDA's built-ins to C++ for the SIMT emulation (NewSIMT),
// and simtRun is its scheduler.
const simtShim = shimCommon + `#include <cstdlib>
#include <cstdio>
#include <vector>
#include <setjmp.h>
#include <sys/mman.h>

// SIMT emulation: every CUDA thread of a launch is a fiber with a stack of
// its own; the scheduler runs them one at a time, switching at the points
// where threads wait for each other (warp shuffles, __syncthreads) and
// where one spins on memory (clock64), so that lanes exchange values and
// blocks wait for each other as on a GPU.
namespace emu {
enum State { RUN, SHFL, SYNC, SPIN, DONE };
struct Fiber {
	jmp_buf jb;
	char* stack;
	int state, parity;
	bool started;
};
static const size_t stackSize = 64 * 1024;
static const size_t guardSize = 4096;

// newStack maps a fiber's stack with an inaccessible page below it, so
// that a kernel that overflows it faults rather than overwrite another's.
static char* newStack() {
	void* p = mmap(0, stackSize + guardSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED) return 0;
	mprotect(p, guardSize, PROT_NONE);
	return (char*)p + guardSize;
}
static std::vector<Fiber> fibers;  // the active blocks' fibers, block slot by slot
static std::vector<unsigned> slotBlock; // the block each slot runs
static std::vector<uint64_t> slots[2]; // shuffle values, by parity, per fiber
static jmp_buf sched;
static int cur = -1;
static void (*kfn)(void**);
static void** kargs;
static long long clk, clkStep = 1000;
static char msg[1024];
static bool failed;

static void fail(const char* m) {
	if (!failed) {
		failed = true;
		snprintf(msg, sizeof msg, "%s (block %u, thread %u)", m, blockIdx.x, threadIdx.x);
	}
}

__attribute__((noinline)) static void yield(int st) {
	asm volatile("" ::: "memory");
	Fiber& f = fibers[cur];
	f.state = st;
	if (!_setjmp(f.jb)) _longjmp(sched, 1);
	asm volatile("" ::: "memory");
}

static void trampoline() {
	kfn(kargs);
	fibers[cur].state = DONE;
	_longjmp(sched, 1);
}

// resume runs fiber i until it waits, spins or ends.
static void resume(int i) {
	Fiber& f = fibers[i];
	unsigned n = blockDim.x;
	cur = i;
	blockIdx.x = slotBlock[i / n];
	threadIdx.x = i % n;
	blockIdx.y = blockIdx.z = threadIdx.y = threadIdx.z = 0;
	if (_setjmp(sched)) return;
	if (!f.started) {
		f.started = true;
		// Onto the fiber's stack (16-byte aligned at the call, as both
		// ABIs ask) and into the trampoline, which never returns: it
		// longjmps back to the scheduler. No system call, where
		// makecontext and setcontext save and set the signal mask.
		char* top = (char*)(((uintptr_t)(f.stack + stackSize)) & ~(uintptr_t)15);
#if defined(__x86_64__)
		asm volatile("mov %0, %%rsp\n\tcall *%1" : : "r"(top), "r"(trampoline) : "memory");
#elif defined(__aarch64__)
		asm volatile("mov sp, %0\n\tblr %1" : : "r"(top), "r"(trampoline) : "memory");
#else
#error "the SIMT emulation needs amd64 or arm64"
#endif
	}
	_longjmp(f.jb, 1);
}
} // namespace emu

template <typename T>
static T __shfl_xor_sync(unsigned mask, T v, int laneMask) {
	using namespace emu;
	if (mask != 0xffffffffu) fail("a warp shuffle with a partial mask");
	Fiber& f = fibers[cur];
	int p = f.parity;
	f.parity ^= 1;
	uint64_t bits = 0;
	std::memcpy(&bits, &v, sizeof(T));
	int me = cur;
	slots[p][me] = bits;
	yield(SHFL);
	int lane = threadIdx.x % 32;
	uint64_t r = slots[p][me - lane + (lane ^ laneMask)];
	T out;
	std::memcpy(&out, &r, sizeof(T));
	return out;
}

static inline void __syncthreads() { emu::yield(emu::SYNC); }
static inline void __threadfence() { asm volatile("" ::: "memory"); }
static inline long long clock64() {
	emu::yield(emu::SPIN);
	return emu::clk += emu::clkStep;
}
static inline unsigned atomicAdd(unsigned* p, unsigned v) { unsigned o = *p; *p = o + v; return o; }
static inline unsigned atomicExch(unsigned* p, unsigned v) { unsigned o = *p; *p = v; return o; }
`

const simtRun = `namespace emu {
// run launches k over grid blocks of block threads. Blocks start one at a
// time: the next when the running ones can make no progress (all done, or
// waiting for other blocks at a grid barrier), so that blocks without
// one run one after another, as their __shared__ memory (static here)
// requires.
static int run1(void (*k)(void**), unsigned grid, unsigned block, void** a);
static std::vector<char*> pool; // stacks of ended launches, for the next

static int run(void (*k)(void**), unsigned grid, unsigned block, void** a) {
	int rc = run1(k, grid, block, a);
	// The stacks go back to the pool, a failed launch's too (its threads
	// are abandoned where they stopped).
	for (auto& f : fibers) if (f.stack) { pool.push_back(f.stack); f.stack = 0; }
	return rc;
}

static int run1(void (*k)(void**), unsigned grid, unsigned block, void** a) {
	failed = false;
	msg[0] = 0;
	kfn = k;
	kargs = a;
	gridDim.x = grid; gridDim.y = gridDim.z = 1;
	blockDim.x = block; blockDim.y = blockDim.z = 1;
	if (block % 32 != 0) {
		snprintf(msg, sizeof msg, "block of %u threads: want a multiple of a warp (32)", block);
		return 1;
	}
	fibers.clear();
	slotBlock.clear();
	unsigned started = 0, live = 0;
	std::vector<int> liveSlot; // per slot: 1 while its block runs
	auto start = [&]() -> bool {
		// reuse a retired slot, or add one
		size_t s = 0;
		while (s < liveSlot.size() && liveSlot[s]) s++;
		if (s == liveSlot.size()) {
			liveSlot.push_back(0);
			slotBlock.push_back(0);
			fibers.resize(fibers.size() + block);
			for (int p = 0; p < 2; p++) slots[p].resize(fibers.size());
		}
		liveSlot[s] = 1;
		slotBlock[s] = started++;
		live++;
		for (unsigned t = 0; t < block; t++) {
			Fiber& f = fibers[s * block + t];
			if (!f.stack) {
				if (!pool.empty()) { f.stack = pool.back(); pool.pop_back(); }
				else if (!(f.stack = newStack())) {
					snprintf(msg, sizeof msg, "no memory for the stack of a thread (%u threads of %u blocks running)", live * block, live);
					return false;
				}
			}
			f.state = RUN; f.parity = 0; f.started = false;
		}
		return true;
	};
	if (!start()) return 1;
	long long idle = 0;
	for (;;) {
		bool progress = false, spin = false;
		for (size_t s = 0; s < liveSlot.size(); s++) {
			if (!liveSlot[s]) continue;
			for (unsigned t = 0; t < block; t++) {
				int i = s * block + t;
				if (fibers[i].state == RUN || fibers[i].state == SPIN) {
					resume(i);
					if (failed) return 1;
					if (fibers[i].state == SPIN) spin = true;
					else progress = true;
				}
			}
		}
		for (size_t s = 0; s < liveSlot.size(); s++) {
			if (!liveSlot[s]) continue;
			Fiber* b = &fibers[s * block];
			bool allDone = true, allSync = true, anySync = false;
			for (unsigned w = 0; w < block; w += 32) {
				bool shfl = false, done = false, other = false;
				for (unsigned l = 0; l < 32; l++) {
					int st = b[w + l].state;
					shfl |= st == SHFL;
					done |= st == DONE;
					other |= st != SHFL && st != DONE;
				}
				if (shfl && !other) {
					if (done) {
						blockIdx.x = slotBlock[s]; threadIdx.x = w;
						fail("a warp shuffle that some lanes of the warp never reach (they have returned): undefined on a GPU");
						return 1;
					}
					for (unsigned l = 0; l < 32; l++) b[w + l].state = RUN;
					progress = true;
				}
			}
			for (unsigned t = 0; t < block; t++) {
				int st = b[t].state;
				allDone &= st == DONE;
				allSync &= st == SYNC || st == DONE;
				anySync |= st == SYNC;
			}
			if (allSync && anySync) {
				for (unsigned t = 0; t < block; t++) if (b[t].state == SYNC) b[t].state = RUN;
				progress = true;
			}
			if (allDone) {
				liveSlot[s] = 0;
				live--;
				progress = true;
			}
		}
		if (live == 0 && started == grid) break;
		if (progress) { idle = 0; continue; }
		if (started < grid) {
			if (!start()) return 1;
			continue;
		}
		// Every block has started and only spinning threads ran: nothing
		// can change what they wait for (a GPU would spin until a
		// timeout, if the kernel has one).
		if (spin && ++idle < 1000) continue;
		// No block can go on: report who waits where.
		int counts[5] = {0, 0, 0, 0, 0};
		for (size_t s = 0; s < liveSlot.size(); s++)
			if (liveSlot[s]) for (unsigned t = 0; t < block; t++) counts[fibers[s * block + t].state]++;
		snprintf(msg, sizeof msg, "deadlock: %d threads at a warp shuffle, %d at __syncthreads, %d spinning, %d done, in %u running blocks of %u (a barrier that not every thread reaches, or a grid barrier over blocks that cannot all run)",
			counts[SHFL], counts[SYNC], counts[SPIN], counts[DONE], live, grid);
		return 1;
	}
	return 0;
}
} // namespace emu
extern "C" int emu_run(void (*k)(void**), unsigned grid, unsigned block, void** a, long long clockStep) {
	emu::clkStep = clockStep;
	return emu::run(k, grid, block, a);
}
extern "C" void emu_error(char* buf, int n) { snprintf(buf, n, "%s", emu::msg); }
`

// Kernels compiles src with opts (-D definitions) for the CPU, once per
// process for each (src, opts) and kind of emulation.
func (d *Device) Kernels(src, name string, opts ...string) (*Kernels, error) {
	h := sha256.New()
	if d.simt {
		h.Write([]byte("simt\x00"))
	}
	h.Write([]byte(src))
	for _, o := range opts {
		h.Write([]byte{0})
		h.Write([]byte(o))
	}
	key := hex.EncodeToString(h.Sum(nil))[:16]
	compiled.Lock()
	defer compiled.Unlock()
	if k, ok := compiled.m[key]; ok {
		return &Kernels{d: d, run: k.run, errMsg: k.errMsg, funcs: k.funcs}, nil
	}
	var wrap strings.Builder
	var names []string
	for _, m := range kernelSig.FindAllStringSubmatch(src, -1) {
		kname, params := m[1], strings.TrimSpace(m[2])
		var args []string
		if params != "" {
			for i, p := range strings.Split(params, ",") {
				p = strings.TrimSpace(p)
				j := strings.LastIndexFunc(p, func(r rune) bool {
					return !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
				})
				if j < 0 {
					return nil, fmt.Errorf("gpuemu: %s: kernel %s: cannot read parameter %q", name, kname, p)
				}
				typ := strings.TrimSpace(p[:j+1])
				args = append(args, fmt.Sprintf("*(%s*)a[%d]", typ, i))
			}
		}
		fmt.Fprintf(&wrap, "extern \"C\" void emu_k_%s(void** a) { %s(%s); }\n", kname, kname, strings.Join(args, ", "))
		names = append(names, kname)
	}
	head := shim
	if d.simt {
		head = simtShim
		wrap.WriteString(simtRun)
	} else {
		wrap.WriteString(`extern "C" int emu_run(void (*k)(void**), unsigned grid, unsigned block, void** a, long long) {
	gridDim.x = grid; gridDim.y = gridDim.z = 1; blockDim.x = block; blockDim.y = blockDim.z = 1;
	for (unsigned b = 0; b < grid; b++) { blockIdx.x = b; blockIdx.y = blockIdx.z = 0;
		for (unsigned t = 0; t < block; t++) { threadIdx.x = t; threadIdx.y = threadIdx.z = 0; k(a); } }
	return 0;
}
extern "C" void emu_error(char* buf, int n) { buf[0] = 0; }
`)
	}
	dir, err := os.MkdirTemp("", "gpuemu-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "k.cpp")
	if err := os.WriteFile(file, []byte(head+src+"\n"+wrap.String()), 0o644); err != nil {
		return nil, err
	}
	lib := filepath.Join(dir, "k.so")
	// -U_FORTIFY_SOURCE: the SIMT scheduler longjmps between stacks,
	// which the fortified longjmp refuses.
	args := append([]string{"-O1", "-std=c++17", "-shared", "-fPIC", "-fno-fast-math", "-ffp-contract=off", "-U_FORTIFY_SOURCE", "-o", lib, file}, opts...)
	if out, err := exec.Command(d.cxx, args...).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("gpuemu: compiling %s: %v\n%s", name, err, out)
	}
	h2, err := dlopen(lib)
	if err != nil {
		return nil, fmt.Errorf("gpuemu: loading %s: %w", name, err)
	}
	k := &Kernels{funcs: map[string]uintptr{}}
	if k.run, err = dlsym(h2, "emu_run"); err != nil {
		return nil, err
	}
	if k.errMsg, err = dlsym(h2, "emu_error"); err != nil {
		return nil, err
	}
	for _, n := range names {
		if k.funcs[n], err = dlsym(h2, "emu_k_"+n); err != nil {
			return nil, err
		}
	}
	if compiled.m == nil {
		compiled.m = map[string]*Kernels{}
	}
	compiled.m[key] = k
	return &Kernels{d: d, run: k.run, errMsg: k.errMsg, funcs: k.funcs}, nil
}

// LaunchThreads runs kernel name over n independent threads (blocks of
// 256, as on a GPU), one after another.
func (k *Kernels) LaunchThreads(name string, n int, args ...any) error {
	if n <= 0 {
		return nil
	}
	return k.launch(name, uint32((n+255)/256), 256, args)
}

// LaunchBlocks runs kernel name over grid blocks, each as one thread (the
// kernel must be correct for any block size), or, under NewSIMT, of
// SIMTBlock threads.
func (k *Kernels) LaunchBlocks(name string, grid int, args ...any) error {
	if grid <= 0 {
		return nil
	}
	block := uint32(1)
	if k.d.simt {
		block = SIMTBlock
	}
	return k.launch(name, uint32(grid), block, args)
}

func (k *Kernels) launch(name string, grid, block uint32, args []any) error {
	if _, ok := k.funcs[name]; !ok {
		return fmt.Errorf("gpuemu: no kernel %s", name)
	}
	args = append([]any(nil), args...)
	return k.d.queue(func() error { return k.call(name, grid, block, args) })
}

func (k *Kernels) call(name string, grid, block uint32, args []any) error {
	f := k.funcs[name]
	k.args = k.args[:0]
	for i, a := range args {
		var v uint64
		switch x := a.(type) {
		case cuda.Ptr:
			v = uint64(x)
		case int:
			if x < math.MinInt32 || x > math.MaxInt32 {
				return fmt.Errorf("gpuemu: kernel %s: argument %d (%d) overflows a C int", name, i, x)
			}
			v = uint64(uint32(int32(x)))
		case int32:
			v = uint64(uint32(x))
		case uint32:
			v = uint64(x)
		case int64:
			v = uint64(x)
		case float32:
			v = uint64(math.Float32bits(x))
		case float64:
			v = math.Float64bits(x)
		default:
			return fmt.Errorf("gpuemu: kernel %s: argument %d of type %T", name, i, a)
		}
		k.args = append(k.args, v)
	}
	k.ptrs = k.ptrs[:0]
	for i := range k.args {
		k.ptrs = append(k.ptrs, uintptr(unsafe.Pointer(&k.args[i])))
	}
	var p uintptr
	if len(k.ptrs) > 0 {
		p = uintptr(unsafe.Pointer(&k.ptrs[0]))
	}
	if call(k.run, f, uintptr(grid), uintptr(block), p, uintptr(k.d.clockStep)) != 0 {
		buf := make([]byte, 1024)
		call(k.errMsg, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
		if i := bytes.IndexByte(buf, 0); i >= 0 {
			buf = buf[:i]
		}
		return fmt.Errorf("gpuemu: kernel %s (grid %d, block %d): %s", name, grid, block, buf)
	}
	return nil
}
