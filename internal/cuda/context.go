package cuda

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"
)

// Device attributes (CUdevice_attribute).
const (
	attrMultiprocessorCount = 16
	attrComputeMajor        = 75
	attrComputeMinor        = 76
)

// cuStreamNonBlocking is CU_STREAM_NON_BLOCKING: the stream does not
// synchronize with the legacy default stream.
const cuStreamNonBlocking = 1

// DeviceInfo describes one device found by the driver.
type DeviceInfo struct {
	// Index is the device's ordinal, as Open takes it.
	Index int
	// Name is the device's name, e.g. "NVIDIA H100 80GB HBM3".
	Name string
	// Memory is the device's total memory in bytes.
	Memory uint64
	// Major and Minor are the device's compute capability.
	Major, Minor int
	// SMs is the number of multiprocessors.
	SMs int
	// Usable says whether the package can use the device: its compute
	// capability is at least 6.0 (native float64 atomicAdd) and its
	// primary context can be retained.
	Usable bool
	// Why says why the device is not usable, when Usable is false.
	Why string
}

// Devices loads the libraries (Load) and lists the devices the driver
// finds, checking for each whether it is usable.
func Devices() ([]DeviceInfo, error) {
	d, _, err := loadedAPIs()
	if err != nil {
		return nil, err
	}
	n := new(int32)
	if err := d.check("cuDeviceGetCount", ccall(d.cuDeviceGetCount, uintptr(unsafe.Pointer(n)))); err != nil {
		return nil, err
	}
	infos := make([]DeviceInfo, 0, *n)
	for i := 0; i < int(*n); i++ {
		info, dev, err := d.deviceInfo(i)
		if err != nil {
			return nil, err
		}
		if info.Usable {
			ctx := new(uintptr)
			if err := d.check("cuDevicePrimaryCtxRetain", ccall(d.cuDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(ctx)), uintptr(dev))); err != nil {
				info.Usable = false
				info.Why = "the primary context cannot be retained: " + err.Error()
			} else if err := d.check("cuDevicePrimaryCtxRelease_v2", ccall(d.cuDevicePrimaryCtxRel, uintptr(dev))); err != nil {
				return nil, err
			}
		}
		infos = append(infos, info)
	}
	return infos, nil
}

// deviceInfo describes the device with ordinal i and returns its handle.
// Usable is set from the compute capability alone.
func (d *driverAPI) deviceInfo(i int) (DeviceInfo, int32, error) {
	info := DeviceInfo{Index: i}
	dev := new(int32)
	if err := d.check("cuDeviceGet", ccall(d.cuDeviceGet, uintptr(unsafe.Pointer(dev)), uintptr(i))); err != nil {
		return info, 0, err
	}
	name := make([]byte, 256)
	if err := d.check("cuDeviceGetName", ccall(d.cuDeviceGetName, uintptr(unsafe.Pointer(&name[0])), uintptr(len(name)), uintptr(*dev))); err != nil {
		return info, 0, err
	}
	for j, b := range name {
		if b == 0 {
			name = name[:j]
			break
		}
	}
	info.Name = string(name)
	mem := new(uint64)
	if err := d.check("cuDeviceTotalMem_v2", ccall(d.cuDeviceTotalMem, uintptr(unsafe.Pointer(mem)), uintptr(*dev))); err != nil {
		return info, 0, err
	}
	info.Memory = *mem
	attr := func(a int) (int, error) {
		v := new(int32)
		err := d.check("cuDeviceGetAttribute", ccall(d.cuDeviceGetAttribute, uintptr(unsafe.Pointer(v)), uintptr(a), uintptr(*dev)))
		return int(*v), err
	}
	var err error
	if info.Major, err = attr(attrComputeMajor); err != nil {
		return info, 0, err
	}
	if info.Minor, err = attr(attrComputeMinor); err != nil {
		return info, 0, err
	}
	if info.SMs, err = attr(attrMultiprocessorCount); err != nil {
		return info, 0, err
	}
	info.Usable = info.Major >= 6
	if !info.Usable {
		info.Why = fmt.Sprintf("compute capability %d.%d is below 6.0 (native float64 atomicAdd)", info.Major, info.Minor)
	}
	return info, *dev, nil
}

// Context is one device's primary context, one non-blocking stream on
// which every operation of its methods is queued, in order, and one
// cuBLAS handle bound to that stream (in cuBLAS's default host pointer
// mode). A second stream, the side stream, with a handle of its own, runs
// work beside the first where the caller asks for it (Side, Main,
// JoinSide).
//
// A Context's methods may be called from any goroutine, but a Context is
// not safe for concurrent use: calls must not overlap.
type Context struct {
	d    *driverAPI
	b    *cublasAPI
	info DeviceInfo

	dev    int32   // CUdevice
	ctx    uintptr // CUcontext, 0 once closed
	stream uintptr // CUstream
	handle uintptr // cublasHandle_t

	modules map[moduleKey]*Module

	// Reused buffers for Launch's kernel arguments and for the gemm
	// scalars, kept on the heap by the Context.
	args   []uint64
	argp   []unsafe.Pointer
	scal64 [2]float64
	scal32 [2]float32

	// Pinned buffers for QueueUploadInt32, used in turn.
	staging  [stagingSlots]stagingSlot
	nextSlot int

	// The side stream (see Side) and the main stream; stream and handle
	// are those of the one operations go to.
	side sideLane
	main lane

	// capturing is set between BeginCapture and EndCapture.
	capturing bool
}

// Open loads the libraries (Load) and opens the device with the ordinal
// index: it retains the device's primary context and creates the
// Context's stream and cuBLAS handle. An index out of range, or a device
// that is not usable (see DeviceInfo), is an error.
func Open(index int) (*Context, error) {
	d, b, err := loadedAPIs()
	if err != nil {
		return nil, err
	}
	n := new(int32)
	if err := d.check("cuDeviceGetCount", ccall(d.cuDeviceGetCount, uintptr(unsafe.Pointer(n)))); err != nil {
		return nil, err
	}
	if index < 0 || index >= int(*n) {
		return nil, fmt.Errorf("cuda: device index %d out of range: the driver finds %d device(s)", index, *n)
	}
	info, dev, err := d.deviceInfo(index)
	if err != nil {
		return nil, err
	}
	if !info.Usable {
		return nil, fmt.Errorf("cuda: device %d (%s) is not usable: %s", index, info.Name, info.Why)
	}

	c := &Context{d: d, b: b, info: info, dev: dev, modules: make(map[moduleKey]*Module)}
	ctx := new(uintptr)
	if err := d.check("cuDevicePrimaryCtxRetain", ccall(d.cuDevicePrimaryCtxRetain, uintptr(unsafe.Pointer(ctx)), uintptr(dev))); err != nil {
		return nil, err
	}
	c.ctx = *ctx
	release := func() {
		ccall(d.cuDevicePrimaryCtxRel, uintptr(dev))
		c.ctx = 0
	}

	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.check("cuCtxSetCurrent", ccall(d.cuCtxSetCurrent, c.ctx)); err != nil {
		release()
		return nil, err
	}
	// The main stream has the device's highest priority, the side stream
	// (Side) its lowest: the side's blocks wait for the main stream's
	// when both have work, so that work beside the main stream's chain of
	// small kernels does not delay it.
	stream, err := d.newStream(false)
	if err != nil {
		release()
		return nil, err
	}
	c.stream = stream
	handle := new(uintptr)
	if err := b.check("cublasCreate_v2", ccall(b.cublasCreate, uintptr(unsafe.Pointer(handle)))); err != nil {
		ccall(d.cuStreamDestroy, c.stream)
		release()
		return nil, err
	}
	c.handle = *handle
	if err := b.check("cublasSetStream_v2", ccall(b.cublasSetStream, c.handle, c.stream)); err != nil {
		ccall(b.cublasDestroy, c.handle)
		ccall(d.cuStreamDestroy, c.stream)
		release()
		return nil, err
	}
	c.main = lane{c.stream, c.handle}
	return c, nil
}

// errOnSide is returned by the operations of the main stream alone when
// they are called while operations go to the side stream.
var errOnSide = errors.New("cuda: an operation of the main stream called while operations go to the side stream: call Main or JoinSide first")

// errSidePending is returned by the operations that wait for the main
// stream, or end a capture, while work queued on the side stream is not
// joined to it.
var errSidePending = errors.New("cuda: work queued on the side stream is not joined to the main stream: call JoinSide first")

// enterMain is enter for the operations of the main stream alone.
func (c *Context) enterMain() error {
	if c.side.on {
		return errOnSide
	}
	return c.enter()
}

// enterWait is enterMain for the operations that wait for the main
// stream's work: they refuse while side work is not joined, which they
// would not wait for.
func (c *Context) enterWait() error {
	if c.side.pending {
		return errSidePending
	}
	return c.enterMain()
}

// enter locks the calling goroutine to its OS thread and makes the
// Context's context current on it. On success the caller must call
// leave.
func (c *Context) enter() error {
	if c.ctx == 0 {
		return errClosed
	}
	runtime.LockOSThread()
	if err := c.d.check("cuCtxSetCurrent", ccall(c.d.cuCtxSetCurrent, c.ctx)); err != nil {
		runtime.UnlockOSThread()
		return err
	}
	return nil
}

// leave undoes enter.
func (c *Context) leave() { runtime.UnlockOSThread() }

// Close waits for the streams' work, destroys the side stream (Side),
// frees the pinned buffers of QueueUploadInt32, destroys the cuBLAS
// handle, unloads the Context's modules, destroys the stream and releases
// the primary context. It frees no device memory: Free what Alloc
// returned before closing (the driver frees it all when the last user of
// the primary context releases it). Close returns the first error met; a
// second Close does nothing.
func (c *Context) Close() error {
	if c.ctx == 0 {
		return nil
	}
	err := c.enter()
	if err != nil {
		return err
	}
	var errs []error
	add := func(e error) {
		if e != nil {
			errs = append(errs, e)
		}
	}
	errs = append(errs, c.closeSide()...)
	add(c.d.check("cuStreamSynchronize", ccall(c.d.cuStreamSynchronize, c.stream)))
	errs = append(errs, c.freeStaging()...)
	add(c.b.check("cublasDestroy_v2", ccall(c.b.cublasDestroy, c.handle)))
	for _, m := range c.modules {
		if m.h != 0 {
			add(c.d.check("cuModuleUnload", ccall(c.d.cuModuleUnload, m.h)))
			m.h = 0
		}
	}
	c.modules = nil
	add(c.d.check("cuStreamDestroy_v2", ccall(c.d.cuStreamDestroy, c.stream)))
	add(c.d.check("cuCtxSetCurrent", ccall(c.d.cuCtxSetCurrent, 0)))
	c.leave()
	add(c.d.check("cuDevicePrimaryCtxRelease_v2", ccall(c.d.cuDevicePrimaryCtxRel, uintptr(c.dev))))
	c.ctx, c.stream, c.handle = 0, 0, 0
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// Info describes the Context's device.
func (c *Context) Info() DeviceInfo { return c.info }

// Arch returns the virtual architecture of the Context's device for
// NVRTC, "compute_<major><minor>", e.g. "compute_90".
func (c *Context) Arch() string {
	return fmt.Sprintf("compute_%d%d", c.info.Major, c.info.Minor)
}

// Sync waits until the work queued on the Context's stream is done
// (cuStreamSynchronize), returning the error of any that failed.
func (c *Context) Sync() error {
	if err := c.enterWait(); err != nil {
		return err
	}
	defer c.leave()
	return c.d.check("cuStreamSynchronize", ccall(c.d.cuStreamSynchronize, c.stream))
}

// errNegative is returned for negative sizes.
var errNegative = errors.New("cuda: negative size")
