package cuda

import (
	"errors"
	"unsafe"
)

// lane is a stream and the cuBLAS handle bound to it.
type lane struct{ stream, handle uintptr }

// sideLane is the Context's second stream, made on first use, and the
// events that order it against the main stream.
type sideLane struct {
	lane
	fork, join uintptr // CUevents without timing
	on         bool    // operations are queued on the side stream
	pending    bool    // Side was called since the last JoinSide
}

// ErrNoSide is returned by Side where the driver lacks what a side stream
// needs.
var ErrNoSide = errors.New("cuda: the driver library lacks cuStreamWaitEvent or the event functions: no side stream")

// Side makes the operations queued from now on (Launch, Dgemm, Sgemm,
// Zero, Copy) run on the Context's side stream, after the work queued so
// far on the main stream and concurrently with what is queued on the main
// stream later (after Main). The side stream and its cuBLAS handle are
// made on first use: call Side first outside a capture. In a capture the
// side stream joins it, and JoinSide must be called before EndCapture.
// The uploads, downloads, Sync and captures are for the main stream:
// call Main before them, and JoinSide before those that wait for it (Sync,
// the downloads) or end a capture.
func (c *Context) Side() error {
	d := c.d
	if d.cuStreamWaitEvent == 0 || d.cuEventCreate == 0 || d.cuEventRecord == 0 || d.cuEventDestroy == 0 {
		return ErrNoSide
	}
	if c.side.on {
		return nil
	}
	if err := c.enter(); err != nil {
		return err
	}
	defer c.leave()
	if c.side.stream == 0 {
		if err := c.makeSide(); err != nil {
			return err
		}
	}
	if err := d.check("cuEventRecord", ccall(d.cuEventRecord, c.side.fork, c.stream)); err != nil {
		return err
	}
	if err := d.check("cuStreamWaitEvent", ccall(d.cuStreamWaitEvent, c.side.stream, c.side.fork, 0)); err != nil {
		return err
	}
	c.stream, c.handle = c.side.stream, c.side.handle
	c.side.on, c.side.pending = true, true
	return nil
}

// Main makes the operations queued from now on run on the main stream
// again. What was queued on the side stream runs on; JoinSide waits for
// it.
func (c *Context) Main() {
	if c.side.on {
		c.stream, c.handle = c.main.stream, c.main.handle
		c.side.on = false
	}
}

// JoinSide returns to the main stream (Main) and makes its next
// operations wait for the work queued so far on the side stream. Where
// nothing was queued there since the last JoinSide it does nothing (in a
// capture, a wait for work outside it would invalidate it). Until it is
// called, Sync, the downloads and EndCapture refuse: they would not wait
// for the side's work.
func (c *Context) JoinSide() error {
	c.Main()
	if !c.side.pending {
		return nil
	}
	if err := c.enter(); err != nil {
		return err
	}
	defer c.leave()
	d := c.d
	if err := d.check("cuEventRecord", ccall(d.cuEventRecord, c.side.join, c.side.stream)); err != nil {
		return err
	}
	if err := d.check("cuStreamWaitEvent", ccall(d.cuStreamWaitEvent, c.stream, c.side.join, 0)); err != nil {
		return err
	}
	c.side.pending = false
	return nil
}

// makeSide creates the side stream, its cuBLAS handle and its events;
// inside enter.
func (c *Context) makeSide() error {
	d, b := c.d, c.b
	s := sideLane{}
	undo := func() {
		if s.handle != 0 {
			ccall(b.cublasDestroy, s.handle)
		}
		if s.stream != 0 {
			ccall(d.cuStreamDestroy, s.stream)
		}
		for _, e := range []uintptr{s.fork, s.join} {
			if e != 0 {
				ccall(d.cuEventDestroy, e)
			}
		}
	}
	stream, err := d.newStream(true)
	if err != nil {
		return err
	}
	s.stream = stream
	h := new(uintptr)
	if err := b.check("cublasCreate_v2", ccall(b.cublasCreate, uintptr(unsafe.Pointer(h)))); err != nil {
		undo()
		return err
	}
	s.handle = *h
	if err := b.check("cublasSetStream_v2", ccall(b.cublasSetStream, s.handle, s.stream)); err != nil {
		undo()
		return err
	}
	const disableTiming = 0x2 // CU_EVENT_DISABLE_TIMING
	for _, e := range []*uintptr{&s.fork, &s.join} {
		*h = 0
		if err := d.check("cuEventCreate", ccall(d.cuEventCreate, uintptr(unsafe.Pointer(h)), disableTiming)); err != nil {
			undo()
			return err
		}
		*e = *h
	}
	c.side = s
	return nil
}

// closeSide waits for the side stream and destroys it, its handle and
// its events; called by Close, inside enter, on the main stream.
func (c *Context) closeSide() []error {
	c.Main()
	s := c.side
	if s.stream == 0 {
		return nil
	}
	d, b := c.d, c.b
	var errs []error
	add := func(e error) {
		if e != nil {
			errs = append(errs, e)
		}
	}
	add(d.check("cuStreamSynchronize", ccall(d.cuStreamSynchronize, s.stream)))
	add(b.check("cublasDestroy_v2", ccall(b.cublasDestroy, s.handle)))
	add(d.check("cuStreamDestroy_v2", ccall(d.cuStreamDestroy, s.stream)))
	add(d.check("cuEventDestroy_v2", ccall(d.cuEventDestroy, s.fork)))
	add(d.check("cuEventDestroy_v2", ccall(d.cuEventDestroy, s.join)))
	c.side = sideLane{}
	return errs
}

// newStream creates a non-blocking stream in the current context, of the
// device's lowest priority where low, else of its highest, where the
// driver has priorities (otherwise of the default priority).
func (d *driverAPI) newStream(low bool) (uintptr, error) {
	h := new(uintptr)
	if d.cuStreamCreateWithPriority != 0 && d.cuCtxGetStreamPriorityRange != 0 {
		least, greatest := new(int32), new(int32)
		if err := d.check("cuCtxGetStreamPriorityRange", ccall(d.cuCtxGetStreamPriorityRange, uintptr(unsafe.Pointer(least)), uintptr(unsafe.Pointer(greatest)))); err != nil {
			return 0, err
		}
		prio := *greatest
		if low {
			prio = *least
		}
		err := d.check("cuStreamCreateWithPriority", ccall(d.cuStreamCreateWithPriority, uintptr(unsafe.Pointer(h)), cuStreamNonBlocking, uintptr(uint32(prio))))
		return *h, err
	}
	err := d.check("cuStreamCreate", ccall(d.cuStreamCreate, uintptr(unsafe.Pointer(h)), cuStreamNonBlocking))
	return *h, err
}
