package cuda

import (
	"errors"
	"fmt"
	"unsafe"
)

// cuStreamCaptureModeRelaxed is CU_STREAM_CAPTURE_MODE_RELAXED. The other
// modes require cuStreamEndCapture to be called on the OS thread that
// called cuStreamBeginCapture, which a goroutine does not stay on between
// calls.
const cuStreamCaptureModeRelaxed = 2

// Graph is an executable CUDA graph (CUgraphExec) captured from a
// Context's stream.
type Graph struct {
	c *Context
	h uintptr // CUgraphExec, 0 once destroyed
}

// BeginCapture starts capturing the work queued on the stream into a
// graph (cuStreamBeginCapture_v2): until EndCapture, the stream's work is
// recorded, not run. The capture mode is CU_STREAM_CAPTURE_MODE_RELAXED,
// so that BeginCapture and EndCapture may run on different OS threads.
// While capturing, only queue work: Launch, Dgemm, Sgemm, Zero and Copy.
// Sync, the uploads and downloads wait for the stream, which a capture
// forbids; they fail and invalidate the capture. Alloc's zeroing would be
// captured rather than done: allocate before capturing. Running each
// kernel and product once before capturing it keeps the libraries' lazy
// loading out of the capture. Dgemm's and Sgemm's alpha and beta are
// captured by value.
func (c *Context) BeginCapture() error {
	if err := c.enterMain(); err != nil {
		return err
	}
	defer c.leave()
	if err := c.d.check("cuStreamBeginCapture_v2", ccall(c.d.cuStreamBeginCapture, c.stream, cuStreamCaptureModeRelaxed)); err != nil {
		return err
	}
	c.capturing = true
	return nil
}

// EndCapture ends the capture that BeginCapture started
// (cuStreamEndCapture) and returns the captured work as an executable
// graph (cuGraphInstantiateWithFlags, with the nodes' own priorities
// where the driver has them). It ends the capture
// whatever else fails, so that the stream can be used again: side work
// not joined (JoinSide) is an error, after an attempt to join it.
func (c *Context) EndCapture() (*Graph, error) {
	c.Main()
	var sideErr error
	if c.side.pending {
		sideErr = errSidePending
		if err := c.JoinSide(); err != nil {
			sideErr = fmt.Errorf("%w: %w", errSidePending, err)
			c.side.pending = false
		}
	}
	if err := c.enter(); err != nil {
		return nil, err
	}
	defer c.leave()
	c.capturing = false
	graph := new(uintptr)
	if err := c.d.check("cuStreamEndCapture", ccall(c.d.cuStreamEndCapture, c.stream, uintptr(unsafe.Pointer(graph)))); err != nil {
		if *graph != 0 {
			ccall(c.d.cuGraphDestroy, *graph)
		}
		return nil, errors.Join(sideErr, err)
	}
	if sideErr != nil {
		if *graph != 0 {
			ccall(c.d.cuGraphDestroy, *graph)
		}
		return nil, sideErr
	}
	if *graph == 0 {
		return nil, errors.New("cuda: cuStreamEndCapture returned no graph: the capture was invalidated")
	}
	// Each kernel node keeps the priority of the stream it was captured
	// from (CUDA_GRAPH_INSTANTIATE_FLAG_USE_NODE_PRIORITY, CUDA 11.7 on),
	// so that the side stream's work stays behind the main stream's in a
	// replay as when launched; a driver without the flag instantiates
	// without it.
	const useNodePriority = 8
	exec := new(uintptr)
	err := c.d.check("cuGraphInstantiateWithFlags", ccall(c.d.cuGraphInstantiate, uintptr(unsafe.Pointer(exec)), *graph, useNodePriority))
	if err != nil {
		*exec = 0
		err = c.d.check("cuGraphInstantiateWithFlags", ccall(c.d.cuGraphInstantiate, uintptr(unsafe.Pointer(exec)), *graph, 0))
	}
	if derr := c.d.check("cuGraphDestroy", ccall(c.d.cuGraphDestroy, *graph)); err == nil && derr != nil {
		if *exec != 0 {
			ccall(c.d.cuGraphExecDestroy, *exec)
		}
		err = derr
	}
	if err != nil {
		return nil, err
	}
	return &Graph{c: c, h: *exec}, nil
}

// errGraphDestroyed is returned when a destroyed Graph is launched.
var errGraphDestroyed = errors.New("cuda: use of a destroyed Graph")

// Launch queues the graph's work on its Context's stream (cuGraphLaunch).
// It does not wait for it.
func (g *Graph) Launch() error {
	if g.h == 0 {
		return errGraphDestroyed
	}
	c := g.c
	if err := c.enterMain(); err != nil {
		return err
	}
	defer c.leave()
	return c.d.check("cuGraphLaunch", ccall(c.d.cuGraphLaunch, g.h, c.stream))
}

// Destroy destroys the executable graph (cuGraphExecDestroy). A second
// Destroy does nothing.
func (g *Graph) Destroy() error {
	if g.h == 0 {
		return nil
	}
	c := g.c
	if err := c.enter(); err != nil {
		return err
	}
	defer c.leave()
	err := c.d.check("cuGraphExecDestroy", ccall(c.d.cuGraphExecDestroy, g.h))
	g.h = 0
	return err
}
