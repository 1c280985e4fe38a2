package cuda

import (
	"errors"
	"math"
	"time"
	"unsafe"
)

// Event is a CUDA event (CUevent) of a Context: a mark queued on its
// stream, for timing the work between two marks on the device's clock.
type Event struct {
	c *Context
	h uintptr // CUevent, 0 once destroyed
}

// errNoEvents is returned where the driver lacks the event functions.
var errNoEvents = errors.New("cuda: the driver library lacks the event functions (cuEventCreate, cuEventRecord, cuEventSynchronize, cuEventElapsedTime)")

// errEventDestroyed is returned when a destroyed Event is used.
var errEventDestroyed = errors.New("cuda: use of a destroyed Event")

// NewEvent creates an event that records time (cuEventCreate,
// CU_EVENT_DEFAULT).
func (c *Context) NewEvent() (*Event, error) {
	d := c.d
	if d.cuEventCreate == 0 || d.cuEventDestroy == 0 || d.cuEventRecord == 0 || d.cuEventSynchronize == 0 ||
		(d.cuEventElapsedTime == 0 && d.cuEventElapsedTimeV1 == 0) {
		return nil, errNoEvents
	}
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.leave()
	h := new(uintptr)
	if err := d.check("cuEventCreate", ccall(d.cuEventCreate, uintptr(unsafe.Pointer(h)), 0)); err != nil {
		return nil, err
	}
	return &Event{c: c, h: *h}, nil
}

// Record queues the event on its Context's stream (cuEventRecord): it
// completes when the work queued before it has run.
func (e *Event) Record() error {
	if e.h == 0 {
		return errEventDestroyed
	}
	c := e.c
	if err := c.enter(); err != nil {
		return err
	}
	defer c.leave()
	return c.d.check("cuEventRecord", ccall(c.d.cuEventRecord, e.h, c.stream))
}

// Since waits for e to complete (cuEventSynchronize) and returns the
// device's time from start to e (cuEventElapsedTime, a resolution of
// about half a microsecond). Both must have been recorded.
func (e *Event) Since(start *Event) (time.Duration, error) {
	if e.h == 0 || start.h == 0 {
		return 0, errEventDestroyed
	}
	c := e.c
	if err := c.enter(); err != nil {
		return 0, err
	}
	defer c.leave()
	if err := c.d.check("cuEventSynchronize", ccall(c.d.cuEventSynchronize, e.h)); err != nil {
		return 0, err
	}
	fn, name := c.d.cuEventElapsedTime, "cuEventElapsedTime_v2"
	if fn == 0 {
		fn, name = c.d.cuEventElapsedTimeV1, "cuEventElapsedTime"
	}
	ms := new(float32)
	if err := c.d.check(name, ccall(fn, uintptr(unsafe.Pointer(ms)), start.h, e.h)); err != nil {
		return 0, err
	}
	return time.Duration(math.Round(float64(*ms) * 1e6)), nil
}

// Destroy destroys the event (cuEventDestroy_v2). A second Destroy does
// nothing.
func (e *Event) Destroy() error {
	if e.h == 0 {
		return nil
	}
	c := e.c
	if err := c.enter(); err != nil {
		return err
	}
	defer c.leave()
	err := c.d.check("cuEventDestroy_v2", ccall(c.d.cuEventDestroy, e.h))
	e.h = 0
	return err
}
