package cuda

import (
	"errors"
	"runtime"
	"unsafe"
)

// stagingSlots is the number of pinned staging buffers a Context cycles
// through for queued uploads: with two, the host may queue the next
// upload while the device still copies from the previous one, and waits
// only for the copy two uploads back.
const stagingSlots = 2

// stagingSlot is pinned (page-locked) host memory from which a queued
// upload copies, and the event that marks the end of that copy.
type stagingSlot struct {
	host  unsafe.Pointer // cuMemHostAlloc'd; nil until first needed
	bytes int
	done  uintptr // CUevent without timing; 0 until first needed
	busy  bool    // done is recorded and not yet waited for
}

// errUploadInCapture is returned by QueueUploadInt32 during a capture.
var errUploadInCapture = errors.New("cuda: QueueUploadInt32 during a capture: upload before BeginCapture")

// canStage reports whether the driver has what queued uploads need.
func (d *driverAPI) canStage() bool {
	return d.cuMemHostAlloc != 0 && d.cuMemFreeHost != 0 &&
		d.cuEventCreate != 0 && d.cuEventDestroy != 0 && d.cuEventRecord != 0 && d.cuEventSynchronize != 0
}

// QueueUploadInt32 queues a copy of src to the device memory at dst,
// after the work queued before it on the stream, and returns without
// waiting for the stream: src is first copied into pinned host memory
// that the Context owns, so src may be reused on return. It waits only
// where the staging buffer it reuses is still being copied from (the
// Context cycles through two), so the host can queue the next piece of
// work while the device runs the last. Where the driver lacks
// cuMemHostAlloc or the event functions, it is UploadInt32. An empty src
// does nothing; during a capture it is an error.
func (c *Context) QueueUploadInt32(dst Ptr, src []int32) error {
	if len(src) == 0 {
		return nil
	}
	if !c.d.canStage() {
		return c.UploadInt32(dst, src)
	}
	n := len(src) * int(unsafe.Sizeof(src[0]))
	err := c.queueUpload(dst, unsafe.Slice((*byte)(unsafe.Pointer(&src[0])), n))
	runtime.KeepAlive(src)
	return err
}

// queueUpload stages b in the next slot and queues its copy to dst.
func (c *Context) queueUpload(dst Ptr, b []byte) error {
	if c.capturing {
		// The copy from the staging buffer would be captured, and copy
		// whatever the buffer holds when the graph is replayed.
		return errUploadInCapture
	}
	if err := c.enterMain(); err != nil {
		return err
	}
	defer c.leave()
	d := c.d
	s := &c.staging[c.nextSlot]
	c.nextSlot = (c.nextSlot + 1) % stagingSlots
	if s.busy {
		if err := d.check("cuEventSynchronize", ccall(d.cuEventSynchronize, s.done)); err != nil {
			return err
		}
		s.busy = false
	}
	if s.done == 0 {
		h := new(uintptr)
		const disableTiming = 0x2 // CU_EVENT_DISABLE_TIMING
		if err := d.check("cuEventCreate", ccall(d.cuEventCreate, uintptr(unsafe.Pointer(h)), disableTiming)); err != nil {
			return err
		}
		s.done = *h
	}
	if s.bytes < len(b) {
		size := max(len(b), 2*s.bytes, 4096)
		if s.host != nil {
			if err := d.check("cuMemFreeHost", ccall(d.cuMemFreeHost, uintptr(s.host))); err != nil {
				return err
			}
			s.host, s.bytes = nil, 0
		}
		// The driver writes a pointer to its own (C) memory into p.
		p := new(unsafe.Pointer)
		if err := d.check("cuMemHostAlloc", ccall(d.cuMemHostAlloc, uintptr(unsafe.Pointer(p)), uintptr(size), 0)); err != nil {
			return err
		}
		s.host, s.bytes = *p, size
	}
	copy(unsafe.Slice((*byte)(s.host), len(b)), b)
	if err := d.check("cuMemcpyHtoDAsync_v2", ccall(d.cuMemcpyHtoDAsync, uintptr(dst), uintptr(s.host), uintptr(len(b)), c.stream)); err != nil {
		return err
	}
	if err := d.check("cuEventRecord", ccall(d.cuEventRecord, s.done, c.stream)); err != nil {
		return err
	}
	s.busy = true
	return nil
}

// freeStaging releases the staging buffers and their events; the stream
// must have been synchronized. It is called by Close, inside enter.
func (c *Context) freeStaging() []error {
	var errs []error
	d := c.d
	for i := range c.staging {
		s := &c.staging[i]
		if s.host != nil {
			if err := d.check("cuMemFreeHost", ccall(d.cuMemFreeHost, uintptr(s.host))); err != nil {
				errs = append(errs, err)
			}
		}
		if s.done != 0 {
			if err := d.check("cuEventDestroy_v2", ccall(d.cuEventDestroy, s.done)); err != nil {
				errs = append(errs, err)
			}
		}
		*s = stagingSlot{}
	}
	return errs
}
