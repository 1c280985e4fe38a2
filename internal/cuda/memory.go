package cuda

import (
	"fmt"
	"runtime"
	"unsafe"
)

// Ptr is a device pointer (CUdeviceptr).
type Ptr uintptr

// Offset returns p advanced by bytes (which may be negative).
func (p Ptr) Offset(bytes int) Ptr { return p + Ptr(bytes) }

// Alloc allocates bytes of device memory (cuMemAlloc_v2) and zeroes it
// with a memset queued on the (main) stream, so that work queued after it
// sees zeros. Zero bytes give the null Ptr and no error.
func (c *Context) Alloc(bytes int) (Ptr, error) {
	if bytes < 0 {
		return 0, errNegative
	}
	if bytes == 0 {
		return 0, nil
	}
	if err := c.enter(); err != nil {
		return 0, err
	}
	defer c.leave()
	p := new(uint64)
	if err := c.d.check("cuMemAlloc_v2", ccall(c.d.cuMemAlloc, uintptr(unsafe.Pointer(p)), uintptr(bytes))); err != nil {
		return 0, err
	}
	// On the main stream, even while operations go to the side: the
	// work queued on the main stream later sees the zeros (and the side's
	// after its next Side).
	if err := c.d.check("cuMemsetD8Async", ccall(c.d.cuMemsetD8Async, uintptr(*p), 0, uintptr(bytes), c.main.stream)); err != nil {
		ccall(c.d.cuMemFree, uintptr(*p))
		return 0, err
	}
	return Ptr(*p), nil
}

// Free frees memory that Alloc returned (cuMemFree_v2). Freeing the null
// Ptr does nothing.
func (c *Context) Free(p Ptr) error {
	if p == 0 {
		return nil
	}
	if err := c.enter(); err != nil {
		return err
	}
	defer c.leave()
	return c.d.check("cuMemFree_v2", ccall(c.d.cuMemFree, uintptr(p)))
}

// Zero queues the zeroing of bytes at p on the stream (cuMemsetD8Async).
func (c *Context) Zero(p Ptr, bytes int) error {
	if bytes < 0 {
		return errNegative
	}
	if bytes == 0 {
		return nil
	}
	if err := c.enter(); err != nil {
		return err
	}
	defer c.leave()
	return c.d.check("cuMemsetD8Async", ccall(c.d.cuMemsetD8Async, uintptr(p), 0, uintptr(bytes), c.stream))
}

// Copy queues a copy of bytes from src to dst, both device memory, on the
// stream (cuMemcpyDtoDAsync_v2).
func (c *Context) Copy(dst, src Ptr, bytes int) error {
	if bytes < 0 {
		return errNegative
	}
	if bytes == 0 {
		return nil
	}
	if err := c.enter(); err != nil {
		return err
	}
	defer c.leave()
	return c.d.check("cuMemcpyDtoDAsync_v2", ccall(c.d.cuMemcpyDtoDAsync, uintptr(dst), uintptr(src), uintptr(bytes), c.stream))
}

// upload copies bytes from host memory at src to dst on the stream and
// waits for the stream.
func (c *Context) upload(dst Ptr, src unsafe.Pointer, bytes int) error {
	if err := c.enterMain(); err != nil {
		return err
	}
	defer c.leave()
	if err := c.d.check("cuMemcpyHtoDAsync_v2", ccall(c.d.cuMemcpyHtoDAsync, uintptr(dst), uintptr(src), uintptr(bytes), c.stream)); err != nil {
		return err
	}
	return c.d.check("cuStreamSynchronize", ccall(c.d.cuStreamSynchronize, c.stream))
}

// download copies bytes from src to host memory at dst on the stream and
// waits for the stream.
func (c *Context) download(dst unsafe.Pointer, src Ptr, bytes int) error {
	if err := c.enterWait(); err != nil {
		return err
	}
	defer c.leave()
	if err := c.d.check("cuMemcpyDtoHAsync_v2", ccall(c.d.cuMemcpyDtoHAsync, uintptr(dst), uintptr(src), uintptr(bytes), c.stream)); err != nil {
		return err
	}
	return c.d.check("cuStreamSynchronize", ccall(c.d.cuStreamSynchronize, c.stream))
}

// UploadFloat64 copies src to the device memory at dst, after the work
// queued before it on the stream. It waits for the copy, so src may be
// reused on return. An empty src does nothing.
func (c *Context) UploadFloat64(dst Ptr, src []float64) error { return uploadSlice(c, dst, src) }

// UploadFloat32 copies src to the device memory at dst, as UploadFloat64
// does.
func (c *Context) UploadFloat32(dst Ptr, src []float32) error { return uploadSlice(c, dst, src) }

// UploadInt32 copies src to the device memory at dst, as UploadFloat64
// does.
func (c *Context) UploadInt32(dst Ptr, src []int32) error { return uploadSlice(c, dst, src) }

// DownloadFloat64 fills dst from the device memory at src, after the work
// queued before it on the stream: it waits for the stream, so dst is
// filled on return. An empty dst does nothing.
func (c *Context) DownloadFloat64(dst []float64, src Ptr) error { return downloadSlice(c, dst, src) }

// DownloadFloat32 fills dst from the device memory at src, as
// DownloadFloat64 does.
func (c *Context) DownloadFloat32(dst []float32, src Ptr) error { return downloadSlice(c, dst, src) }

// DownloadInt32 fills dst from the device memory at src, as
// DownloadFloat64 does.
func (c *Context) DownloadInt32(dst []int32, src Ptr) error { return downloadSlice(c, dst, src) }

// uploadSlice copies a slice of fixed-size values to the device.
func uploadSlice[T float64 | float32 | int32](c *Context, dst Ptr, src []T) error {
	if len(src) == 0 {
		return nil
	}
	err := c.upload(dst, unsafe.Pointer(&src[0]), len(src)*int(unsafe.Sizeof(src[0])))
	runtime.KeepAlive(src)
	return err
}

// downloadSlice fills a slice of fixed-size values from the device.
func downloadSlice[T float64 | float32 | int32](c *Context, dst []T, src Ptr) error {
	if len(dst) == 0 {
		return nil
	}
	err := c.download(unsafe.Pointer(&dst[0]), src, len(dst)*int(unsafe.Sizeof(dst[0])))
	runtime.KeepAlive(dst)
	return err
}

// checkInt32 returns an error if v, the argument what of fn, is negative
// or does not fit a C int.
func checkInt32(fn, what string, v int) error {
	if v < 0 || v > 1<<31-1 {
		return fmt.Errorf("cuda: %s: %s = %d is out of range", fn, what, v)
	}
	return nil
}
