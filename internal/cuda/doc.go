// Package cuda binds the parts of the NVIDIA CUDA driver API, NVRTC and
// cuBLAS that nsrnn uses, in pure Go: the libraries are loaded at run
// time with purego, so the package builds without cgo (CGO_ENABLED=0),
// and a program that imports it runs, without CUDA, on machines that
// have none.
//
// # Libraries
//
// Load loads the driver (libcuda.so.1), NVRTC (libnvrtc.so.13, .12 or
// .11.2) and cuBLAS (libcublas.so.13, .12 or .11), once per process, and
// initializes the driver. Each is searched for in the directories (or
// files) listed in the NSRNN_CUDA_LIBS environment variable (EnvLibs),
// then by the dynamic loader under its soname (the ldconfig cache,
// LD_LIBRARY_PATH), then in the usual CUDA toolkit and driver
// directories. When a library is loaded from a directory, the libraries
// it loads by soname are first loaded from the same directory: NVRTC's
// builtins (libnvrtc-builtins.so.*) and cuBLASLt. A missing library is an
// error wrapping ErrNoLibrary that says where the search looked. The
// package supports linux/amd64 and linux/arm64; elsewhere Load returns
// an error wrapping ErrNoLibrary.
//
// LoadNVRTC loads NVRTC alone, and LoadNVRTCFrom loads it from one
// directory: CompilePTX then compiles kernels on a machine without a GPU
// or driver. Tests use that to check kernels anywhere. An NVRTC can be
// had without installing CUDA, for instance Debian's, from its non-free
// section:
//
//	apt-get download libnvrtc11.2 libnvrtc-builtins11.8
//	for f in *.deb; do dpkg -x $f root; done
//	export NSRNN_TEST_NVRTC_DIR=$PWD/root/usr/lib/x86_64-linux-gnu
//
// # Contexts and threads
//
// A Context is one device's primary context, one stream and one cuBLAS
// handle bound to the stream. Every operation is queued on the stream, in
// order: memory allocation zeroes by a memset on the stream, and copies,
// kernels and matrix products run in the order they were queued. Uploads
// and downloads wait for the stream, so the host slice may be reused, or
// read, on return; QueueUploadInt32 copies through pinned memory of the
// Context's instead and does not wait. Sync waits for everything queued.
//
// # Two streams
//
// Side sends the operations queued next to a second stream, with a cuBLAS
// handle of its own, after the work queued so far on the first; Main
// returns to the first, whose later work runs beside the second's; and
// JoinSide makes the first wait for the second. The first stream has the
// device's highest priority and the second its lowest, so that work put
// beside a chain of small kernels yields the multiprocessors to them. In
// a capture the second stream joins it (a fork and a join in the graph,
// each node with its stream's priority). Operations that wait for the
// first stream, or end a capture, refuse while work on the second is not
// joined.
//
// The driver keeps the current context per OS thread, whereas a
// goroutine moves between OS threads. Each method of a Context therefore
// locks its goroutine to its thread, makes the Context's context current,
// calls the library and unlocks: a Context's methods may be called from
// any goroutine. A Context is not safe for concurrent use.
//
// BeginCapture and EndCapture record the work queued between them into a
// Graph, which Graph.Launch replays on the stream at the cost of one
// call. The capture is in the driver's relaxed mode, since the two calls
// may run on different threads.
//
// # Kernels
//
// Context.Module compiles CUDA C source with NVRTC (CompilePTX) for the
// device's virtual architecture (Context.Arch, e.g. "compute_90"), with
// the given NVRTC options (e.g. "-DREAL=double"), and loads the PTX. A
// source is compiled once per process, and loaded once per Context.
// Kernels are declared extern "C" and looked up by name with
// Module.Function. Context.Launch queues one with its arguments: device
// pointers (Ptr), integers and floating-point numbers.
//
// # Errors
//
// A failure of the C libraries cannot be recovered from in Go, so every
// status that they return is checked. A call that fails returns an
// *Error that holds the library, the C function and the status's code
// and name, for example "cuda: cuMemAlloc_v2: CUDA_ERROR_OUT_OF_MEMORY
// (out of memory)". A compilation error holds NVRTC's log. Kernels run
// asynchronously: their faults are reported by a later call, typically
// the next Sync or download.
package cuda
