package cuda

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"
)

// moduleKey identifies a compilation: a hash of the source and options
// (and, in the process-wide PTX cache, the architecture).
type moduleKey [sha256.Size]byte

// hashSource returns the key of src compiled with opts for arch.
func hashSource(src, arch string, opts []string) moduleKey {
	h := sha256.New()
	write := func(s string) {
		var n [8]byte
		for i := range n {
			n[i] = byte(uint64(len(s)) >> (8 * i))
		}
		h.Write(n[:])
		h.Write([]byte(s))
	}
	write(src)
	write(arch)
	for _, o := range opts {
		write(o)
	}
	var k moduleKey
	h.Sum(k[:0])
	return k
}

// ptxCache holds the PTX of every source compiled by Context.Module, so
// that a process compiles each source once per architecture.
var ptxCache struct {
	sync.Mutex
	m map[moduleKey][]byte
}

// cachedPTX compiles src for arch with opts, or returns the PTX of an
// earlier compilation.
func cachedPTX(key moduleKey, src, name, arch string, opts []string) ([]byte, error) {
	ptxCache.Lock()
	ptx, ok := ptxCache.m[key]
	ptxCache.Unlock()
	if ok {
		return ptx, nil
	}
	ptx, err := CompilePTX(src, name, arch, opts...)
	if err != nil {
		return nil, err
	}
	ptxCache.Lock()
	if ptxCache.m == nil {
		ptxCache.m = make(map[moduleKey][]byte)
	}
	ptxCache.m[key] = ptx
	ptxCache.Unlock()
	return ptx, nil
}

// Module is a compiled and loaded CUDA module (CUmodule) of a Context.
// It stays loaded until the Context is closed.
type Module struct {
	c     *Context
	h     uintptr // CUmodule, 0 once unloaded
	name  string
	funcs map[string]Func
}

// Func is a kernel of a Module (CUfunction). The zero Func is not a
// kernel.
type Func struct {
	m    *Module
	h    uintptr
	name string
}

// Name returns the kernel's name.
func (f Func) Name() string { return f.name }

// Module compiles the CUDA C source src with CompilePTX for the
// Context's architecture (Arch) with the NVRTC options opts, and loads
// the PTX (cuModuleLoadData). name is the program's file name for NVRTC's
// messages. Modules are cached by a hash of src and opts: asking again
// for the same source and options returns the same Module, and the PTX
// is cached for the whole process, so that a process compiles each
// source once.
func (c *Context) Module(src, name string, opts ...string) (*Module, error) {
	if c.ctx == 0 {
		return nil, errClosed
	}
	arch := c.Arch()
	key := hashSource(src, arch, opts)
	if m, ok := c.modules[key]; ok {
		return m, nil
	}
	ptx, err := cachedPTX(key, src, name, arch, opts)
	if err != nil {
		return nil, err
	}
	image := make([]byte, len(ptx)+1) // NUL-terminated
	copy(image, ptx)

	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.leave()
	h := new(uintptr)
	r := ccall(c.d.cuModuleLoadData, uintptr(unsafe.Pointer(h)), uintptr(unsafe.Pointer(&image[0])))
	runtime.KeepAlive(image)
	if err := c.d.check("cuModuleLoadData", r); err != nil {
		return nil, fmt.Errorf("cuda: loading module %s: %w", name, err)
	}
	m := &Module{c: c, h: *h, name: name, funcs: make(map[string]Func)}
	c.modules[key] = m
	return m, nil
}

// Function returns the kernel called name in the module
// (cuModuleGetFunction). The kernel must be declared extern "C", so that
// its name is not mangled.
func (m *Module) Function(name string) (Func, error) {
	if m.h == 0 || m.c.ctx == 0 {
		return Func{}, errClosed
	}
	if f, ok := m.funcs[name]; ok {
		return f, nil
	}
	if err := m.c.enter(); err != nil {
		return Func{}, err
	}
	defer m.c.leave()
	cname := cString(name)
	h := new(uintptr)
	r := ccall(m.c.d.cuModuleGetFunction, uintptr(unsafe.Pointer(h)), m.h, uintptr(unsafe.Pointer(&cname[0])))
	runtime.KeepAlive(cname)
	if err := m.c.d.check("cuModuleGetFunction", r); err != nil {
		return Func{}, fmt.Errorf("cuda: kernel %s in module %s: %w", name, m.name, err)
	}
	f := Func{m: m, h: *h, name: name}
	m.funcs[name] = f
	return f, nil
}

// Launch queues the kernel f on the stream (cuLaunchKernel) with grid
// blocks of block threads and shared bytes of dynamic shared memory. The
// kernel's arguments args may be of the types Ptr, int, int32, uint32,
// int64, float32 and float64; an int is passed as a C int (32 bits) and
// must fit one. Any other type is an error. Launch does not wait for the
// kernel.
func (c *Context) Launch(f Func, grid, block [3]uint32, shared uint32, args ...any) error {
	if f.h == 0 {
		return errors.New("cuda: Launch of the zero Func")
	}
	if f.m.c != c {
		return fmt.Errorf("cuda: Launch of kernel %s of another Context", f.name)
	}
	var err error
	c.args, c.argp, err = packArgs(c.args, c.argp, args)
	if err != nil {
		return fmt.Errorf("cuda: kernel %s: %w", f.name, err)
	}
	if err := c.enter(); err != nil {
		return err
	}
	defer c.leave()
	var params unsafe.Pointer
	if len(args) > 0 {
		params = unsafe.Pointer(&c.argp[0])
	}
	r := ccall(c.d.cuLaunchKernel, f.h,
		uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
		uintptr(block[0]), uintptr(block[1]), uintptr(block[2]),
		uintptr(shared), c.stream, uintptr(params), 0)
	runtime.KeepAlive(c.args)
	runtime.KeepAlive(c.argp)
	if err := c.d.check("cuLaunchKernel", r); err != nil {
		return fmt.Errorf("cuda: kernel %s: %w", f.name, err)
	}
	return nil
}

// packArgs stores the kernel arguments args in vals, one 8-byte slot
// each, and points ptrs at the slots: ptrs is cuLaunchKernel's
// kernelParams. It reuses the buffers' memory when large enough.
func packArgs(vals []uint64, ptrs []unsafe.Pointer, args []any) ([]uint64, []unsafe.Pointer, error) {
	if cap(vals) < len(args) || cap(ptrs) < len(args) {
		vals = make([]uint64, len(args))
		ptrs = make([]unsafe.Pointer, len(args))
	}
	vals, ptrs = vals[:len(args)], ptrs[:len(args)]
	for i, a := range args {
		vals[i] = 0
		slot := unsafe.Pointer(&vals[i])
		switch v := a.(type) {
		case Ptr:
			vals[i] = uint64(v)
		case int:
			if v < math.MinInt32 || v > math.MaxInt32 {
				return vals, ptrs, fmt.Errorf("argument %d: int %d overflows a C int", i, v)
			}
			*(*int32)(slot) = int32(v)
		case int32:
			*(*int32)(slot) = v
		case uint32:
			*(*uint32)(slot) = v
		case int64:
			*(*int64)(slot) = v
		case float32:
			*(*float32)(slot) = v
		case float64:
			*(*float64)(slot) = v
		default:
			return vals, ptrs, fmt.Errorf("argument %d: unsupported type %T", i, a)
		}
		ptrs[i] = slot
	}
	return vals, ptrs, nil
}
