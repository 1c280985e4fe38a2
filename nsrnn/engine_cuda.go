package nsrnn

import (
	_ "embed"
	"errors"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/nsrnn/nsrnn/controller"
	"github.com/nsrnn/nsrnn/internal/cuda"
	"github.com/nsrnn/nsrnn/internal/gpuemu"
	"github.com/nsrnn/nsrnn/stacks"
)

// cudaKernels is the CUDA C source of the GPU engine's kernels.
//
//go:embed cuda_kernels.cu
var cudaKernels string

// cudaKernelSource returns the CUDA C source of the GPU kernels and the
// compiler options of each precision, for tests that compile it with
// NVRTC on a machine without a GPU.
func cudaKernelSource() (src string, opts map[Precision][]string) {
	return cudaKernels, map[Precision][]string{
		Float64: {"-DREAL=double"},
		Float32: {"-DREAL=float"},
	}
}

// deviceKinds are the library's kinds with a GPU implementation (a kind
// without a stack runs as the LSTM).
var deviceKinds = []string{LSTM, Gref, JM, NS, NSS, NSU, RNS, VRNS}

// cudaStackSupported reports whether a stack has a GPU implementation.
func cudaStackSupported(l stacks.Layer) bool {
	switch s := l.(type) {
	case *stacks.JM, *stacks.Gref:
		return true
	case *stacks.NS, *stacks.VRNS:
		// The stacks with an actions layer (not NewNSScores's).
		return len(nsLayer(s).Params()) > 0
	}
	return false
}

// nsLayer returns the nondeterministic stack of l: l itself, or a VRNS's
// (nil for the other layers).
func nsLayer(l stacks.Layer) *stacks.NS {
	switch s := l.(type) {
	case *stacks.NS:
		return s
	case *stacks.VRNS:
		return &s.NS
	}
	return nil
}

// cudaEngine computes a model on one GPU. It keeps the parameters there
// in float64 (the master copy the optimizer updates; with Float32 a
// float32 copy besides, which the passes read), the gradients of the
// latest run in the pass's precision, the optimizer's moments during
// training, and one workspace of buffers that grows to the largest batch
// and length seen.
//
// The passes follow the CPU's graphs: per layer one product for the
// inputs of all positions, then per step one recurrent product and one
// cell kernel; the output layer as one product over all positions, a
// softmax kernel per row, and the loss summed in a fixed order. The
// backward pass mirrors it, with the weight gradients as one product per
// weight over all steps and the embedding's (or one-hot weight's) as
// sums over each token's positions in a fixed order: no atomics, so that
// a pass gives the same bits every time.
type cudaEngine struct {
	m   *Model
	dev Device
	ctx gpuDevice
	// mods holds the compiled kernels per precision.
	mods map[Precision]gpuKernels

	// The flat parameter layout: param i at offs[i] (elements), aligned.
	offs  []int
	total int
	// master holds the parameters in float64; work32 a float32 copy
	// (Float32 passes); grad the gradients of the latest run in the
	// precision gradPrec; adamM and adamV Adam's moments.
	master, work32, grad cuda.Ptr
	gradPrec             Precision
	adamM, adamV         cuda.Ptr
	// hostStale: the device's parameters are newer than the host's;
	// devStale: the host's are newer (upload before the next run);
	// work32Stale: work32 does not hold the master's values.
	hostStale, devStale, work32Stale bool
	// adam is the optimizer whose moments the device holds (nil: none);
	// adamStale says the host's are older.
	adam      *Adam
	adamStale bool
	// hostG holds the host copies of the gradients (hostGrads).
	hostG [][]float64
	// ws holds the workspace buffers by name.
	ws map[string]*cudaBuf
	// carried is the stream state whose values stH and stC hold (nil:
	// none); stB its batch.
	carried     *State
	carriedPrec Precision
	// stateGen numbers the saves into the "state" buffer (deviceLSTM).
	stateGen int
	// lastKept is the latest state whose stack the device keeps
	// (deviceStackState).
	lastKept *State
	// scratch for the packed integer inputs, and the counts of their
	// sort.
	ints   []int32
	counts []int32
	// w and wes are the parameters as the current pass reads them and
	// the size of their values.
	w   cuda.Ptr
	wes int
	// stack is the stack's implementation (nil for the LSTM).
	stack cudaStack
	// graphs holds the captured passes by shape, seen the shapes run once
	// since the buffers last moved; gen counts the buffers' moves;
	// noGraphs turns capture off (EnvCUDAGraphs, or a failed capture).
	graphs   map[passKey]gpuGraph
	seen     map[passKey]bool
	gen      int
	noGraphs bool
	// fusedStep and fusedBack, keys of fusedSteps, run each LSTM step as
	// one kernel, forward and backward (EnvCUDALSTMStep, EnvCUDALSTMBack);
	// cublasOnly sends every product to cuBLAS (EnvCUDASmallProducts).
	fusedStep, fusedBack string
	cublasOnly           bool
	// pipeline runs the output layer of a pass's positions on the side
	// stream, a block at a time, while the main stream runs the top
	// layer's later steps (EnvCUDAPipeline; off where the device has no
	// side stream).
	pipeline bool
	// forked is set while work queued on the second stream is not yet
	// joined (fork, join); capturing while a pass is captured.
	forked, capturing bool
}

// passKey is the shape of a pass, which its captured graph replays.
type passKey struct {
	prec              Precision
	T, B, P, first, S int
	grad, lp, logits  bool
	lead              bool
	// stack is the stack's shape (cudaStack.shape).
	stack int
}

// maxGraphs bounds the captured passes an engine keeps.
const maxGraphs = 256

// EnvCUDAGraphs is the environment variable "NSRNN_CUDA_GRAPHS": 0 turns
// off the capture of passes as CUDA graphs (each pass then launches its
// kernels one by one), for comparison and debugging.
const EnvCUDAGraphs = "NSRNN_CUDA_GRAPHS"

// EnvCUDAPipeline is the environment variable "NSRNN_CUDA_PIPELINE": 0
// keeps a pass's output layer after its recurrence on one stream,
// for comparison. By default the scores, softmax and loss of each block
// of 8 positions are queued on a second stream as soon as
// the top layer's states for them are queued, so that the output layer's
// products fill the multiprocessors that the recurrence's small steps
// (and a stack model's stack kernels) leave idle. The results are the
// same either way but for the products' rounding (cuBLAS may sum a
// block's rows in another order than the whole's).
const EnvCUDAPipeline = "NSRNN_CUDA_PIPELINE"

// outputBlockSteps (EnvCUDAPipeline's doc states it) is the positions per block of the pipelined output
// layer: at B = 32, blocks of 256 rows, which cuBLAS still runs near
// its rate on a large card, and few enough blocks (five for T = 35) that
// their joins cost little.
const outputBlockSteps = 8

// EnvCUDALSTMStep is the environment variable "NSRNN_CUDA_LSTM_STEP":
// "fused" runs each step of an LSTM layer as one kernel (the step's
// products, the recurrent one and in a stack model the reading's or the
// layer below's, split over a warp per hidden unit and four rows of the
// batch, and the cell) instead of cuBLAS products and the cell's kernel;
// "fused2" and "fused8" do so with two and eight rows per warp;
// "persistent" and "persistent8" run all the steps of a chunk of an LSTM
// model's layer in one launch, its warps meeting at a grid barrier
// between steps, with four and eight rows per warp, and a stack model's
// steps as the product does; anything else
// keeps the product. It is for measuring them against each other on a
// card; the results agree to rounding (the product's terms are summed in
// another order).
const EnvCUDALSTMStep = "NSRNN_CUDA_LSTM_STEP"

// EnvCUDALSTMBack is the environment variable "NSRNN_CUDA_LSTM_BACK":
// "fused", "fused2" or "fused8" runs each step of an LSTM layer's backward
// pass as one kernel (the products that complete the gradient of h_t,
// from the next step and from the layer above, with the weights
// transposed once per pass, split over a warp per hidden unit and 4, 2 or
// 8 rows of the batch, and the cell's backward) instead of the cell's
// kernel and cuBLAS products; anything else keeps the products. As
// EnvCUDALSTMStep, it is for measuring them against each other on a card.
const EnvCUDALSTMBack = "NSRNN_CUDA_LSTM_BACK"

// fusedSteps are the fused LSTM step kernels, forward and backward, by
// the value of EnvCUDALSTMStep and EnvCUDALSTMBack, with their batch rows
// per warp.
var fusedSteps = map[string]struct {
	kernel, back string
	rows         int
}{"fused": {"lstm_rec", "lstm_back", 4}, "fused2": {"lstm_rec2", "lstm_back2", 2}, "fused8": {"lstm_rec8", "lstm_back8", 8}}

// persistentSteps are the persistent LSTM kernels, by the value of
// EnvCUDALSTMStep, with their batch rows per warp: the T steps of a layer
// whose only per-step input is h_{t−1} (the LSTM's layers; a stack
// model's take the stack's reading at every step, and keep a launch per
// step) in one launch, its warps meeting at a grid barrier between steps.
var persistentSteps = map[string]struct {
	kernel string
	rows   int
}{"persistent": {"lstm_seq", 4}, "persistent8": {"lstm_seq8", 8}}

// lstmSteps runs steps 1 to T of an LSTM layer whose only per-step input
// is h_{t−1}: z (T·B, 4H) holds the pre-activations without the recurrent
// terms; hs and cs hold h_0 and c_0 and receive h_t and c_t at block t, tc
// tanh(c_t) at block t−1. With a persistent kernel chosen
// (EnvCUDALSTMStep), in one launch, otherwise a step at a time
// (lstmStep).
// after, where not nil, is called after step t is queued, for t = 1 … T
// (not with a persistent kernel).
func (e *cudaEngine) lstmSteps(p Precision, z, hs, cs, tc, whh cuda.Ptr, T, B, H int, after func(t int) error) error {
	if f, ok := persistentSteps[e.fusedStep]; ok && T > 0 {
		bar, err := e.barrier()
		if err != nil {
			return err
		}
		// One block per multiprocessor, so that every block runs at
		// once: the barrier waits for all of them.
		grid := min(e.ctx.multiprocessors(), (H*((B+f.rows-1)/f.rows)+cudaBlock/32-1)/(cudaBlock/32))
		return e.launchGrid(p, f.kernel, uint32(max(grid, 1)), z, hs, cs, tc, whh, T, B, H, bar)
	}
	es := elem(p)
	blk := B * H * es
	for t := 1; t <= T; t++ {
		zt := z.Offset((t - 1) * B * 4 * H * es)
		if err := e.lstmStep(p, zt, hs.Offset((t-1)*blk), whh, stepInput{}, cs.Offset((t-1)*blk), cs.Offset(t*blk), tc.Offset((t-1)*blk), hs.Offset(t*blk), B, H); err != nil {
			return err
		}
		if after != nil {
			if err := after(t); err != nil {
				return err
			}
		}
	}
	return nil
}

// barrier returns the persistent kernels' grid barrier: its two counters,
// zeroed before each launch (each barrier leaves its count at 0, but one
// whose wait timed out, see grid_barrier, may not, and the next launch
// starts afresh all the same), and the word a timed-out wait sets, which
// barrierTimedOut reads and clears after the pass.
func (e *cudaEngine) barrier() (cuda.Ptr, error) {
	b, err := e.buf("barrier", 16)
	if err != nil {
		return 0, err
	}
	return b, e.ctx.Zero(b, 8)
}

// barrierTimedOut reports, after a pass, whether a persistent kernel's
// grid barrier timed out in it (its blocks could not all run at once, on
// a device shared with others, say: the pass's results are wrong), and
// clears the word for the next.
func (e *cudaEngine) barrierTimedOut() (bool, error) {
	b, ok := e.ws["barrier"]
	if !ok {
		return false, nil
	}
	w := make([]float32, 1) // the flag's bits, read as a float32
	if err := e.ctx.DownloadFloat32(w, b.p.Offset(8)); err != nil {
		return false, err
	}
	if math.Float32bits(w[0]) == 0 {
		return false, nil
	}
	return true, e.ctx.Zero(b.p.Offset(8), 4)
}

// backInput is a product that completes the gradient of an LSTM step's
// h_t in a fused backward step: dz (B rows of 4H) times the weights whose
// transpose is wT (H rows of 4H). A zero dz: none.
type backInput struct{ dz, wT cuda.Ptr }

// lstmBackFused runs step t of an LSTM layer backward in one kernel (the
// fusedSteps entry f): dh (B, H) holds the gradient of h_t from
// elsewhere, next and up the products that complete it (the next step's
// dZ through W_hh, the layer above's through its W_ih), then the cell's
// backward from the activations a, c_{t−1} (cprev) and tanh(c_t) (tc)
// into dz and dc.
func (e *cudaEngine) lstmBackFused(p Precision, back string, rows int, a, cprev, tc, dh cuda.Ptr, next, up backInput, dc, dz cuda.Ptr, B, H int) error {
	kn, ku := 0, 0
	if next.dz != 0 {
		kn = 4 * H
	}
	if up.dz != 0 {
		ku = 4 * H
	}
	return e.launchGroups(p, back, H*((B+rows-1)/rows), a, cprev, tc, dh, next.dz, next.wT, kn, up.dz, up.wT, ku, dc, dz, B, H)
}

// transposed returns wᵀ (cols, rows) of w (rows, cols, row length ld) in
// the workspace buffer name.
func (e *cudaEngine) transposed(p Precision, name string, w cuda.Ptr, rows, cols, ld int) (cuda.Ptr, error) {
	t, err := e.buf(name, rows*cols*elem(p))
	if err != nil {
		return 0, err
	}
	return t, e.launch(p, "transpose", rows*cols, t, w, rows, cols, ld)
}

// stepInput is an input of an LSTM step besides h_{t−1}, whose product
// the step adds: x (B rows of K values, row length ldx) times the K
// columns of the weights w (4H rows of row length ldw). K = 0: none.
type stepInput struct {
	x, w     cuda.Ptr
	ldx, ldw int
	K        int
}

// lstmStep runs one step of an LSTM layer: zt (B, 4H) += in.x·in.wᵀ +
// hprev·Whhᵀ, then the cell, from c_{t−1} (cprev) to c, tanh(c) (tc) and
// h.
func (e *cudaEngine) lstmStep(p Precision, zt, hprev, whh cuda.Ptr, in stepInput, cprev, c, tc, h cuda.Ptr, B, H int) error {
	if f, ok := fusedSteps[e.fusedStep]; ok {
		return e.launchGroups(p, f.kernel, H*((B+f.rows-1)/f.rows), zt, hprev, whh, in.x, in.ldx, in.w, in.ldw, in.K, cprev, c, tc, h, B, H)
	}
	if in.K > 0 {
		if err := e.gemm(p, false, true, B, 4*H, in.K, in.x, in.ldx, in.w, in.ldw, 1, zt, 4*H); err != nil {
			return err
		}
	}
	if err := e.gemm(p, false, true, B, 4*H, H, hprev, H, whh, H, 1, zt, 4*H); err != nil {
		return err
	}
	return e.launch(p, "lstm_cell", B*H, zt, cprev, c, tc, h, B, H)
}

// movedBuffers forgets the captured passes, which refer to buffers that
// moved.
func (e *cudaEngine) movedBuffers() {
	e.gen++
	for _, g := range e.graphs {
		g.Destroy()
	}
	clear(e.graphs)
	clear(e.seen)
}

// cudaBuf is a device buffer of bytes capacity.
type cudaBuf struct {
	p     cuda.Ptr
	bytes int
}

// gpuDevice is what the engine needs of a GPU: internal/cuda's Context
// (through cudaDevice), or in tests an emulator running the same kernels
// on the CPU.
type gpuDevice interface {
	Alloc(bytes int) (cuda.Ptr, error)
	Free(p cuda.Ptr) error
	Zero(p cuda.Ptr, bytes int) error
	Copy(dst, src cuda.Ptr, bytes int) error
	UploadFloat64(dst cuda.Ptr, src []float64) error
	UploadFloat32(dst cuda.Ptr, src []float32) error
	UploadInt32(dst cuda.Ptr, src []int32) error
	// QueueUploadInt32 is UploadInt32 without waiting for the copy (src
	// may still be reused on return), so that the host queues a pass's
	// work while the device runs the last one's.
	QueueUploadInt32(dst cuda.Ptr, src []int32) error
	DownloadFloat64(dst []float64, src cuda.Ptr) error
	DownloadFloat32(dst []float32, src cuda.Ptr) error
	Dgemm(transA, transB bool, m, n, k int, alpha float64, a cuda.Ptr, lda int, b cuda.Ptr, ldb int, beta float64, c cuda.Ptr, ldc int) error
	Sgemm(transA, transB bool, m, n, k int, alpha float32, a cuda.Ptr, lda int, b cuda.Ptr, ldb int, beta float32, c cuda.Ptr, ldc int) error
	// multiprocessors is the number of the device's multiprocessors (1
	// for the emulator, which runs a grid's blocks one after another).
	multiprocessors() int
	// compile returns the kernels of a CUDA C source.
	compile(src, name string, opts ...string) (gpuKernels, error)
	// side makes the operations queued next run on a second stream,
	// after those queued so far and beside those queued on the first
	// after toMain; joinSide returns to the first stream and makes it
	// wait for the second's work (cuda.Context's Side, Main and
	// JoinSide). A device without a second stream returns an error from
	// side.
	side() error
	toMain()
	joinSide() error
	// sync waits for the work queued on the first stream.
	sync() error
	// beginCapture and endCapture record the operations queued between
	// them as a graph instead of running them.
	beginCapture() error
	endCapture() (gpuGraph, error)
	Close() error
}

// gpuGraph is a recorded sequence of a device's operations.
type gpuGraph interface {
	Launch() error
	Destroy() error
}

// gpuKernels launches the kernels of one compiled source: over n
// independent threads, or over a grid of blocks of 256 threads on a GPU
// (and under the SIMT emulator; one thread under the sequential one),
// whose kernels are written for that size and for one thread.
type gpuKernels interface {
	LaunchThreads(name string, n int, args ...any) error
	LaunchBlocks(name string, grid int, args ...any) error
}

// openGPU opens GPU index (the emulator where EnvGPUEmulator is 1); tests
// replace it by an emulator.
var openGPU = func(index int) (gpuDevice, error) {
	if emulating() {
		if index != 0 {
			return nil, fmt.Errorf("the GPU emulator (%s=%s) has one device, cuda:0", EnvGPUEmulator, os.Getenv(EnvGPUEmulator))
		}
		newEmu := gpuemu.New
		if os.Getenv(EnvGPUEmulator) == "simt" {
			newEmu = gpuemu.NewSIMT
		}
		d, err := newEmu()
		if err != nil {
			return nil, err
		}
		return newEmuDevice(d), nil
	}
	ctx, err := cuda.Open(index)
	if err != nil {
		return nil, err
	}
	return cudaDevice{ctx}, nil
}

// cudaDevice is a CUDA context as a gpuDevice.
type cudaDevice struct{ *cuda.Context }

func (d cudaDevice) beginCapture() error { return d.BeginCapture() }

func (d cudaDevice) endCapture() (gpuGraph, error) {
	g, err := d.EndCapture()
	if err != nil {
		return nil, err
	}
	return g, nil
}

func (d cudaDevice) multiprocessors() int { return d.Info().SMs }

func (d cudaDevice) side() error {
	err := d.Side()
	if errors.Is(err, cuda.ErrNoSide) {
		return fmt.Errorf("%w: %w", errNoSecondStream, err)
	}
	return err
}
func (d cudaDevice) toMain()         { d.Main() }
func (d cudaDevice) joinSide() error { return d.JoinSide() }
func (d cudaDevice) sync() error     { return d.Sync() }

func (d cudaDevice) compile(src, name string, opts ...string) (gpuKernels, error) {
	mod, err := d.Module(src, name, opts...)
	if err != nil {
		return nil, err
	}
	return cudaModule{d.Context, mod}, nil
}

// EnvGPUEmulator is the environment variable "NSRNN_GPU_EMULATOR": set to
// 1, the GPU is an emulator that runs the same CUDA kernels on the CPU,
// compiled by the system's C++ compiler (package internal/gpuemu), much
// more slowly than the CPU's own path: for testing the GPU path of a
// program on a machine without a GPU. Set to simt, the emulator runs each
// CUDA thread on its own, so that warps exchange values and blocks wait
// for each other as on a card (slower still).
const EnvGPUEmulator = "NSRNN_GPU_EMULATOR"

func emulating() bool { v := os.Getenv(EnvGPUEmulator); return v == "1" || v == "simt" }

// emuDevice is the emulated GPU of package gpuemu as a gpuDevice.
//
// The emulator runs each operation when it is queued, so its second
// stream is the first, and the pipelined passes run in their order of
// queuing. It keeps the rules of a card's two streams all the same
// (cuda.Context's), so that a pass that breaks them fails here too: while
// operations go to the second stream, the operations of the first alone
// (uploads, downloads, captures) refuse; while work on the second is not
// joined, so do those that wait for the first (downloads, sync) or end a
// capture.
type emuDevice struct {
	*gpuemu.Device
	st *emuStreams
}

// emuStreams is the state of an emuDevice's two streams.
type emuStreams struct{ on, pending bool }

// newEmuDevice returns d as a gpuDevice.
func newEmuDevice(d *gpuemu.Device) emuDevice { return emuDevice{d, &emuStreams{}} }

var (
	errEmuOnSide  = errors.New("gpuemu: an operation of the first stream while operations go to the second")
	errEmuPending = errors.New("gpuemu: work queued on the second stream is not joined to the first")
)

func (d emuDevice) main() error {
	if d.st.on {
		return errEmuOnSide
	}
	return nil
}

func (d emuDevice) wait() error {
	if d.st.pending {
		return errEmuPending
	}
	return d.main()
}

func (d emuDevice) side() error {
	d.st.on, d.st.pending = true, true
	return nil
}

func (d emuDevice) toMain() { d.st.on = false }

func (d emuDevice) joinSide() error {
	d.st.on, d.st.pending = false, false
	return nil
}

func (d emuDevice) sync() error { return d.wait() }

// guard runs f where check allows it.
func guard(check, f func() error) error {
	if err := check(); err != nil {
		return err
	}
	return f()
}

func (d emuDevice) UploadFloat64(dst cuda.Ptr, src []float64) error {
	return guard(d.main, func() error { return d.Device.UploadFloat64(dst, src) })
}

func (d emuDevice) UploadFloat32(dst cuda.Ptr, src []float32) error {
	return guard(d.main, func() error { return d.Device.UploadFloat32(dst, src) })
}

func (d emuDevice) UploadInt32(dst cuda.Ptr, src []int32) error {
	return guard(d.main, func() error { return d.Device.UploadInt32(dst, src) })
}

func (d emuDevice) QueueUploadInt32(dst cuda.Ptr, src []int32) error {
	return guard(d.main, func() error { return d.Device.QueueUploadInt32(dst, src) })
}

func (d emuDevice) DownloadFloat64(dst []float64, src cuda.Ptr) error {
	return guard(d.wait, func() error { return d.Device.DownloadFloat64(dst, src) })
}

func (d emuDevice) DownloadFloat32(dst []float32, src cuda.Ptr) error {
	return guard(d.wait, func() error { return d.Device.DownloadFloat32(dst, src) })
}

func (d emuDevice) beginCapture() error { return guard(d.main, d.BeginCapture) }

func (d emuDevice) endCapture() (gpuGraph, error) {
	if err := d.wait(); err != nil {
		return nil, err
	}
	g, err := d.EndCapture()
	if err != nil {
		return nil, err
	}
	return g, nil
}

// multiprocessors is 1 for the sequential emulator, which runs a grid's
// blocks one after another, and simtMultiprocessors for the SIMT one,
// whose blocks wait for each other at a grid barrier as a card's do.
func (d emuDevice) multiprocessors() int {
	if d.SIMT() {
		return simtMultiprocessors
	}
	return 1
}

// simtMultiprocessors is the multiprocessors of the SIMT emulator: a few,
// so that a persistent kernel's grid has several blocks.
const simtMultiprocessors = 3

func (d emuDevice) compile(src, name string, opts ...string) (gpuKernels, error) {
	return d.Kernels(src, name, opts...)
}

// cudaModule is a loaded module's kernels.
type cudaModule struct {
	ctx *cuda.Context
	mod *cuda.Module
}

// cudaBlock is the engine's block size on a GPU.
const cudaBlock = 256

func (k cudaModule) LaunchThreads(name string, n int, args ...any) error {
	if n <= 0 {
		return nil
	}
	return k.launch(name, (n+cudaBlock-1)/cudaBlock, args)
}

func (k cudaModule) LaunchBlocks(name string, grid int, args ...any) error {
	if grid <= 0 {
		return nil
	}
	return k.launch(name, grid, args)
}

func (k cudaModule) launch(name string, grid int, args []any) error {
	f, err := k.mod.Function(name)
	if err != nil {
		return err
	}
	return k.ctx.Launch(f, [3]uint32{uint32(grid), 1, 1}, [3]uint32{cudaBlock, 1, 1}, 0, args...)
}

func (e *cudaEngine) device() Device { return e.dev }

func (e *cudaEngine) streams() error { return nil }

// newCUDAEngine opens device d for m, compiles its kernels and copies the
// parameters there.
func newCUDAEngine(m *Model, d Device) (*cudaEngine, error) {
	if m.stack != nil && !cudaStackSupported(m.stack) {
		return nil, fmt.Errorf("nsrnn: model kind %s on %v: %w (the kinds with one: %v); it runs on the CPU", m.cfg.Kind, d, ErrNoDeviceKernel, deviceKinds)
	}
	ctx, err := openGPU(d.index)
	if err != nil {
		return nil, fmt.Errorf("nsrnn: device %v: %w", d, err)
	}
	if profiling() {
		pd, err := newProfDevice(ctx)
		if err != nil {
			ctx.Close()
			return nil, fmt.Errorf("nsrnn: device %v: %w", d, err)
		}
		ctx = pd
	}
	e := &cudaEngine{m: m, dev: d, ctx: ctx, mods: map[Precision]gpuKernels{}, ws: map[string]*cudaBuf{},
		graphs: map[passKey]gpuGraph{}, seen: map[passKey]bool{}, noGraphs: os.Getenv(EnvCUDAGraphs) == "0" || profiling(),
		fusedStep: os.Getenv(EnvCUDALSTMStep), fusedBack: os.Getenv(EnvCUDALSTMBack), cublasOnly: os.Getenv(EnvCUDASmallProducts) == "0",
		pipeline: os.Getenv(EnvCUDAPipeline) != "0"}
	if m.stack != nil {
		if e.stack, err = e.newCUDAStack(); err != nil {
			ctx.Close()
			return nil, err
		}
	}
	const align = 64 // elements: 512 bytes in float64, 256 in float32
	for _, p := range m.params {
		e.offs = append(e.offs, e.total)
		e.total += (p.Size() + align - 1) / align * align
	}
	if e.master, err = ctx.Alloc(8 * e.total); err != nil {
		e.close()
		return nil, fmt.Errorf("nsrnn: device %v: the parameters: %w", d, err)
	}
	e.devStale = true
	if _, err := e.module(m.Precision); err != nil {
		e.close()
		return nil, err
	}
	if err := e.upload(); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

func (e *cudaEngine) close() {
	// The latest states the device keeps come to the host first, for the
	// streams that will go on elsewhere.
	if e.carried != nil && e.carried.dev != nil {
		e.carried.carry()
	}
	if e.lastKept != nil {
		if d, ok := e.lastKept.stack.(*deviceStackState); ok {
			d.host()
		}
	}
	for _, b := range e.ws {
		e.ctx.Free(b.p)
	}
	for _, p := range []cuda.Ptr{e.master, e.work32, e.grad, e.adamM, e.adamV} {
		if p != 0 {
			e.ctx.Free(p)
		}
	}
	e.ws = map[string]*cudaBuf{}
	e.master, e.work32, e.grad, e.adamM, e.adamV = 0, 0, 0, 0, 0
	e.ctx.Close()
}

// module returns the kernels of precision p, compiling them at first use.
func (e *cudaEngine) module(p Precision) (gpuKernels, error) {
	if md, ok := e.mods[p]; ok {
		return md, nil
	}
	if p != Float64 && p != Float32 {
		return nil, fmt.Errorf("nsrnn: Model.Precision is %v, neither Float64 nor Float32", p)
	}
	src, opts := cudaKernelSource()
	md, err := e.ctx.compile(src, "nsrnn_kernels.cu", opts[p]...)
	if err != nil {
		return nil, fmt.Errorf("nsrnn: compiling the CUDA kernels (%v): %w", p, err)
	}
	e.mods[p] = md
	return md, nil
}

// elem is the size of a value of precision p.
func elem(p Precision) int {
	if p == Float32 {
		return 4
	}
	return 8
}

// buf returns the workspace buffer name with at least bytes, reallocated
// (its contents lost) when it is smaller.
func (e *cudaEngine) buf(name string, bytes int) (cuda.Ptr, error) {
	bytes = max(bytes, 8)
	b, ok := e.ws[name]
	if ok && b.bytes >= bytes {
		return b.p, nil
	}
	if ok {
		// Work queued before may still read the buffer: wait for it
		// (growth is rare; a pass being captured only queues, and its
		// buffers were sized by the shape's first pass).
		if !e.capturing {
			err := e.join() // the second stream's work too
			if err == nil {
				err = e.ctx.sync()
			}
			if err != nil {
				return 0, fmt.Errorf("nsrnn: device %v: %w", e.dev, err)
			}
		}
		if err := e.ctx.Free(b.p); err != nil {
			return 0, err
		}
		delete(e.ws, name)
	}
	p, err := e.ctx.Alloc(bytes)
	if err != nil {
		return 0, fmt.Errorf("nsrnn: device %v: %d bytes for %s: %w", e.dev, bytes, name, err)
	}
	e.movedBuffers()
	e.ws[name] = &cudaBuf{p: p, bytes: bytes}
	return p, nil
}

// upload copies the host's parameters to the device when they are newer.
func (e *cudaEngine) upload() error {
	if !e.devStale {
		return nil
	}
	flat := make([]float64, e.total)
	for i, p := range e.m.params {
		copy(flat[e.offs[i]:], p.Data())
	}
	if err := e.ctx.UploadFloat64(e.master, flat); err != nil {
		return fmt.Errorf("nsrnn: device %v: copying the parameters: %w", e.dev, err)
	}
	e.devStale, e.hostStale, e.work32Stale = false, false, true
	return nil
}

// syncHost implements deviceEngine.
func (e *cudaEngine) syncHost() error {
	if e.hostStale {
		flat := make([]float64, e.total)
		if err := e.ctx.DownloadFloat64(flat, e.master); err != nil {
			return fmt.Errorf("nsrnn: device %v: copying the parameters back: %w", e.dev, err)
		}
		for i, p := range e.m.params {
			copy(p.Data(), flat[e.offs[i]:e.offs[i]+p.Size()])
		}
		e.hostStale = false
	}
	if e.adam != nil && e.adamStale {
		flat := make([]float64, e.total)
		for _, pair := range []struct {
			src cuda.Ptr
			dst [][]float64
		}{{e.adamM, e.adam.M}, {e.adamV, e.adam.V}} {
			if err := e.ctx.DownloadFloat64(flat, pair.src); err != nil {
				return fmt.Errorf("nsrnn: device %v: copying Adam's moments back: %w", e.dev, err)
			}
			for i, p := range e.m.params {
				copy(pair.dst[i], flat[e.offs[i]:e.offs[i]+p.Size()])
			}
		}
		e.adamStale = false
	}
	return nil
}

// invalidate implements deviceEngine.
func (e *cudaEngine) invalidate() {
	e.devStale = true
	e.adam = nil
}

// weights returns the parameters as the passes of precision p read them,
// making the float32 copy when it is out of date.
func (e *cudaEngine) weights(p Precision) (cuda.Ptr, error) {
	if err := e.upload(); err != nil {
		return 0, err
	}
	if p == Float64 {
		return e.master, nil
	}
	if e.work32 == 0 {
		var err error
		if e.work32, err = e.ctx.Alloc(4 * e.total); err != nil {
			return 0, fmt.Errorf("nsrnn: device %v: %w", e.dev, err)
		}
		e.movedBuffers()
		e.work32Stale = true
	}
	if e.work32Stale {
		if err := e.launch(p, "to_real", e.total, e.work32, e.master, int64(e.total)); err != nil {
			return 0, err
		}
		e.work32Stale = false
	}
	return e.work32, nil
}

// launch runs kernel name of precision p over n independent threads.
func (e *cudaEngine) launch(p Precision, name string, n int, args ...any) error {
	md, err := e.module(p)
	if err != nil {
		return err
	}
	if err := md.LaunchThreads(name, n, args...); err != nil {
		return fmt.Errorf("nsrnn: CUDA kernel %s: %w", name, err)
	}
	return nil
}

// groupLanes is the number of threads that compute one output of a
// group kernel (a warp; the kernels' group_of).
const groupLanes = 32

// launchGroups runs group kernel name of precision p over n outputs.
func (e *cudaEngine) launchGroups(p Precision, name string, n int, args ...any) error {
	return e.launch(p, name, groupLanes*n, args...)
}

// launchGrid runs kernel name of precision p on grid blocks of cudaBlock
// threads (one thread under the sequential emulator): the block kernels
// (the block reductions, the persistent LSTM) are written for blocks of a
// power of two of at most 256 threads, whole warps, and correct for one
// thread too.
func (e *cudaEngine) launchGrid(p Precision, name string, grid uint32, args ...any) error {
	md, err := e.module(p)
	if err != nil {
		return err
	}
	if err := md.LaunchBlocks(name, int(grid), args...); err != nil {
		return fmt.Errorf("nsrnn: CUDA kernel %s: %w", name, err)
	}
	return nil
}

// gemm computes, in precision p, the row-major product C = op(A)·op(B) +
// beta·C of M×N, op(A) M×K and op(B) K×N, with leading dimensions (row
// lengths as stored) lda, ldb and ldc. cuBLAS is column-major: a
// row-major matrix is the transpose of the column-major one on the same
// memory, so C is computed as Cᵀ = op(B)ᵀ·op(A)ᵀ.
func (e *cudaEngine) gemm(p Precision, tA, tB bool, M, N, K int, a cuda.Ptr, lda int, b cuda.Ptr, ldb int, beta float64, c cuda.Ptr, ldc int) error {
	if M == 0 || N == 0 {
		return nil
	}
	if !tA && !e.cublasOnly && (K <= smallTerms || N <= smallCols) {
		// A product that cuBLAS runs far below the card's rate (10–50 µs
		// for a few thousand multiply-adds on an H200).
		name, launch := "gemm_k", e.launch
		if K > smallTerms {
			name, launch = "gemm_n", e.launchGroups
		}
		return launch(p, name, M*N, c, ldc, a, lda, b, ldb, boolInt(tB), M, N, K, beta)
	}
	var err error
	if p == Float64 {
		err = e.ctx.Dgemm(tB, tA, N, M, K, 1, b, ldb, a, lda, beta, c, ldc)
	} else {
		err = e.ctx.Sgemm(tB, tA, N, M, K, 1, b, ldb, a, lda, float32(beta), c, ldc)
	}
	if err != nil {
		return fmt.Errorf("nsrnn: device %v: %w", e.dev, err)
	}
	return nil
}

// The products of at most smallTerms terms per entry, or of at most
// smallCols columns, run in the engine's own kernels (gemm_k, gemm_n)
// unless EnvCUDASmallProducts is 0.
const smallTerms, smallCols = 32, 32

// EnvCUDASmallProducts is the environment variable
// "NSRNN_CUDA_SMALL_PRODUCTS": 0 sends every product to cuBLAS, including
// those of few terms or few columns that the engine's own kernels compute
// otherwise, for comparison.
const EnvCUDASmallProducts = "NSRNN_CUDA_SMALL_PRODUCTS"

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// readingGrad computes, in precision p, dr (B×n, row-major) = dz (B×K) ·
// w (K×n of row length ldw): the gradient of a stack reading of n
// columns that fed the LSTM's input, through the slice w of its input
// weights.
func (e *cudaEngine) readingGrad(p Precision, B, n, K int, dz, w cuda.Ptr, ldw int, dr cuda.Ptr) error {
	return e.gemm(p, false, false, B, n, K, dz, K, w, ldw, 0, dr, n)
}

// lstmRun describes one pass: T steps of B sequences, P output positions
// reading the last layer's h from row block first (0 in sentence mode,
// h_0 … h_n; 1 in stream mode, h_1 … h_T).
type lstmRun struct {
	prec    Precision
	T, B, P int
	first   int
	// lead (a stream of BoundaryNextChunk from a carried state): stack
	// step 1 is the update deferred from the previous chunk, from the
	// carried h_0, step t+1 follows token t, and token t reads r_t.
	lead         bool
	tok, tgt     []int32 // tok[t·B+b], tgt[t·B+b] (−1: none)
	divisor      float64
	grad, logits bool
	lp           bool
}

// ptrs are the workspace buffers of a pass.
type lstmBufs struct {
	ints                   cuda.Ptr // div | nuniq | tok | tgt | uniq | ptr | rows
	div, nuniq             cuda.Ptr
	tok, tgt, uniq, uptr   cuda.Ptr
	rows                   cuda.Ptr
	x0, dx0                cuda.Ptr // layer 0's embedded inputs and their gradient
	z, hs, cs, tc, dhs, dz []cuda.Ptr
	dc                     []cuda.Ptr
	s, logz, rowloss, loss cuda.Ptr
}

// sumsqBlocks is the fixed grid of the gradient norm's partial sums.
const sumsqBlocks = 256

// pack lays out the integer inputs of a run in e.ints: the loss's
// divisor, the number of distinct tokens, the tokens, the targets and,
// with gradients, the distinct tokens, the start of each one's positions
// and the positions in the order of the tokens (areas of fixed sizes, so
// that a pass of the same shape reads them at the same places).
func (e *cudaEngine) pack(r *lstmRun) {
	n := len(r.tok)
	ints := append(e.ints[:0], int32(r.divisor), 0)
	ints = append(ints, r.tok...)
	ints = append(ints, r.tgt...)
	if r.grad {
		// The positions grouped by token, in order within each: a
		// counting sort over the vocabulary.
		V := e.m.cfg.InputVocab
		if cap(e.counts) < V+1 {
			e.counts = make([]int32, V+1)
		}
		counts := e.counts[:V+1]
		clear(counts)
		for _, x := range r.tok {
			counts[x+1]++
		}
		// The three areas of the layout, written in place.
		base := len(ints)
		ints = slices.Grow(ints, 3*n+1)[:base+3*n+1]
		clear(ints[base:])
		uniq, ptr, order := ints[base:base+n], ints[base+n:base+2*n+1], ints[base+2*n+1:]
		nu := 0
		for v := 0; v < V; v++ {
			if counts[v+1] > 0 {
				uniq[nu] = int32(v)
				ptr[nu] = counts[v]
				nu++
			}
			counts[v+1] += counts[v]
		}
		ptr[nu] = int32(n)
		for i, x := range r.tok {
			order[counts[x]] = int32(i)
			counts[x]++
		}
		ints[1] = int32(nu)
	}
	e.ints = ints
}

// run makes one pass of the model: the loss, and with r.grad the
// gradients into e.grad; with r.lp the log-probabilities (or scores) are
// left in the score buffer. The initial state is in row block 0 of hs and
// cs (set by the caller), and a stack's in st (S stack steps).
func (e *cudaEngine) run(r *lstmRun, bf *lstmBufs, st cudaStack, S int) (float64, error) {
	if err := e.setWeights(r.prec); err != nil {
		return 0, err
	}
	if err := e.pass(r, bf, st, S); err != nil {
		return 0, err
	}
	return e.lossValue(bf)
}

// pass queues a pass's kernels. The second pass of a shape (its buffers
// in place since the first) is captured as a graph, and later ones replay
// it: one launch instead of hundreds. A capture that fails turns capture
// off for the engine (first the second stream, EnvCUDAPipeline, where it
// was on), and the pass runs launch by launch.
func (e *cudaEngine) pass(r *lstmRun, bf *lstmBufs, st cudaStack, S int) error {
	key := passKey{prec: r.prec, T: r.T, B: r.B, P: r.P, first: r.first, S: S, grad: r.grad, lp: r.lp, logits: r.logits, lead: r.lead}
	if st != nil {
		key.stack = st.shape()
	}
	if g, ok := e.graphs[key]; ok {
		if err := g.Launch(); err != nil {
			return fmt.Errorf("nsrnn: device %v: %w", e.dev, err)
		}
		return nil
	}
	if e.noGraphs || !e.seen[key] {
		if !e.noGraphs {
			e.seen[key] = true
		}
		return e.body(r, bf, st, S)
	}
	if len(e.graphs) >= maxGraphs {
		e.movedBuffers()
	}
	gen := e.gen
	if err := e.ctx.beginCapture(); err != nil {
		e.noGraphs = true
		return e.body(r, bf, st, S)
	}
	e.capturing = true
	berr := e.body(r, bf, st, S)
	g, err := e.ctx.endCapture()
	e.capturing = false
	if berr != nil || err != nil || e.gen != gen {
		// Run the pass launch by launch; a pass that failed to capture
		// turns capture off, one that moved buffers is captured later.
		if g != nil {
			g.Destroy()
		}
		if berr != nil || err != nil {
			// A capture with the second stream failed: capture on one
			// stream from now on; one without it: launch one by one.
			if e.pipeline {
				e.pipeline = false
			} else {
				e.noGraphs = true
			}
		}
		return e.body(r, bf, st, S)
	}
	e.graphs[key] = g
	e.seen[key] = true
	if err := g.Launch(); err != nil {
		return fmt.Errorf("nsrnn: device %v: %w", e.dev, err)
	}
	return nil
}

// body queues the kernels of a pass, one by one.
func (e *cudaEngine) body(r *lstmRun, bf *lstmBufs, st cudaStack, S int) error {
	if st != nil {
		return e.runStack(r, bf, st, S)
	}
	cfg := e.m.cfg
	p, T, B := r.prec, r.T, r.B
	H, L := cfg.Hidden, cfg.layers()
	es := elem(p)
	W := e.working
	pi := 0 // the index of the next parameter, in the order of Params
	embedIdx := -1
	if e.m.embed != nil {
		embedIdx, pi = 0, 1
	}
	layerIdx := func(l int) (wih, whh, bih, bhh int) { i := pi + 4*l; return i, i + 1, i + 2, i + 3 }
	whyIdx := pi + 4*L
	bhyIdx := whyIdx + 1
	TB := T * B
	tok := bf.tok

	// The inputs of layer 0.
	in0 := cfg.inputSize()
	var x cuda.Ptr
	if embedIdx >= 0 {
		if err := e.launch(p, "embed_gather", TB*in0, bf.x0, W(embedIdx), tok, TB, in0); err != nil {
			return err
		}
		x = bf.x0
	}
	in := in0
	var pipe *outputPipe
	if _, persistent := persistentSteps[e.fusedStep]; !persistent {
		pipe = e.newOutputPipe(r, bf, whyIdx, bhyIdx)
	}
	for l := 0; l < L && T > 0; l++ {
		wih, whh, bih, bhh := layerIdx(l)
		z := bf.z[l]
		if err := e.launch(p, "bias_rows", TB*4*H, z, W(bih), W(bhh), TB, 4*H); err != nil {
			return err
		}
		if l == 0 && embedIdx < 0 {
			if err := e.launch(p, "onehot_add", TB*4*H, z, W(wih), tok, TB, 4*H, in0); err != nil {
				return err
			}
		} else if err := e.gemm(p, false, true, TB, 4*H, in, x, in, W(wih), in, 1, z, 4*H); err != nil {
			return err
		}
		hs := bf.hs[l]
		var after func(int) error
		if pipe != nil && l == L-1 {
			after = pipe.step
		}
		if err := e.lstmSteps(p, z, hs, bf.cs[l], bf.tc[l], W(whh), T, B, H, after); err != nil {
			e.join() // the pass failed: leave none of its work beside the next
			return err
		}
		x, in = hs.Offset(B*H*es), H
	}
	return e.endPass(r, bf, pipe, whyIdx, bhyIdx, func() error {
		return e.backward(r, bf, layerIdx, whyIdx, bhyIdx, embedIdx)
	})
}

// endPass runs a pass's output layer after its steps (the pipe's last
// block and the join, or the whole layer on one stream) and, with r.grad,
// the backward pass (back), joining the second stream after it.
func (e *cudaEngine) endPass(r *lstmRun, bf *lstmBufs, pipe *outputPipe, whyIdx, bhyIdx int, back func() error) error {
	if pipe != nil {
		if err := pipe.finish(); err != nil {
			return err
		}
	} else if err := e.output(r, bf, whyIdx, bhyIdx); err != nil {
		return err
	}
	if !r.grad {
		return nil
	}
	err := back()
	if jerr := e.join(); err == nil {
		err = jerr
	}
	return err
}

// setWeights points working at the parameters as the passes of precision
// p read them.
func (e *cudaEngine) setWeights(p Precision) error {
	w, err := e.weights(p)
	if err != nil {
		return err
	}
	e.w, e.wes = w, elem(p)
	return nil
}

// working returns parameter i's values as the current pass reads them.
func (e *cudaEngine) working(i int) cuda.Ptr { return e.w.Offset(e.wes * e.offs[i]) }

// output runs the output layer: the scores of the P·B positions, the
// softmax of each row (replaced by the gradient of the scores with
// r.grad, by the log-probabilities with r.lp), and the loss.
func (e *cudaEngine) output(r *lstmRun, bf *lstmBufs, whyIdx, bhyIdx int) error {
	if err := e.outputRows(r, bf, e.working(whyIdx), e.working(bhyIdx), 0, r.P*r.B); err != nil {
		return err
	}
	return e.launchGrid(r.prec, "sum_scaled", 1, bf.rowloss, r.P*r.B, 1.0, bf.div, bf.loss)
}

// outputRows runs the output layer's scores and softmax (output) for
// the rows row0 … row0+n−1 of the pass's P·B output rows (position
// r.first + row/B, batch row row%B), with weights why and bias.
func (e *cudaEngine) outputRows(r *lstmRun, bf *lstmBufs, why, bias cuda.Ptr, row0, n int) error {
	if n == 0 {
		return nil
	}
	cfg := e.m.cfg
	p, B, H, V := r.prec, r.B, cfg.Hidden, cfg.OutputVocab
	es := elem(p)
	h := bf.hs[cfg.layers()-1].Offset((r.first*B + row0) * H * es)
	sc := bf.s.Offset(row0 * V * es)
	if err := e.gemm(p, false, true, n, V, H, h, H, why, H, 0, sc, V); err != nil {
		return err
	}
	mode := 3 // the loss alone
	switch {
	case r.grad:
		mode = 1
	case r.lp && !r.logits:
		mode = 2
	case r.logits:
		mode = 0
	}
	return e.launchGrid(p, "softmax_rows", uint32(n), sc, bias, bf.tgt.Offset(4*row0), bf.logz.Offset(8*row0), bf.rowloss.Offset(8*row0), V, mode, bf.div)
}

// outputPipe queues a pass's output layer on the device's second
// stream, a block of outputBlockSteps positions at a time, as soon as the
// top layer's steps that make their states are queued (EnvCUDAPipeline);
// finish queues the rest, joins the streams and sums the loss over every
// row, in the order output sums it.
type outputPipe struct {
	e         *cudaEngine
	r         *lstmRun
	bf        *lstmBufs
	why, bias cuda.Ptr
	next      int // the first position whose rows are not queued
}

// newOutputPipe returns the pipelined output layer of a pass, or nil
// where the engine keeps it on one stream.
func (e *cudaEngine) newOutputPipe(r *lstmRun, bf *lstmBufs, whyIdx, bhyIdx int) *outputPipe {
	if !e.pipeline {
		return nil
	}
	return &outputPipe{e: e, r: r, bf: bf, why: e.working(whyIdx), bias: e.working(bhyIdx), next: r.first}
}

// fork makes the operations queued next go to the device's second stream,
// after those queued so far, and reports whether they do: not where the
// pipeline is off (EnvCUDAPipeline) or the device has no second stream
// (which turns it off: errNoSecondStream). The caller returns to the
// first stream with ctx.toMain.
func (e *cudaEngine) fork() (bool, error) {
	if !e.pipeline {
		return false, nil
	}
	if err := e.ctx.side(); err != nil {
		if errors.Is(err, errNoSecondStream) {
			e.pipeline = false
			return false, nil
		}
		return false, fmt.Errorf("nsrnn: device %v: %w", e.dev, err)
	}
	e.forked = true
	return true, nil
}

// errNoSecondStream is the error of a device's side where it has no
// second stream.
var errNoSecondStream = errors.New("no second stream")

// join makes the first stream's next operations wait for the work queued
// on the second since the last join.
func (e *cudaEngine) join() error {
	if !e.forked {
		return nil
	}
	e.forked = false
	return e.ctx.joinSide()
}

// step implements lstmSteps' after: with step t queued, the states of
// positions 0 … t are.
func (o *outputPipe) step(t int) error {
	if t+1-o.next < outputBlockSteps {
		return nil
	}
	return o.queue(t + 1)
}

// queue queues the rows of positions next … end−1 (within the pass's
// output positions) on the second stream. A device without one turns
// the pipeline off and queues them on the first.
func (o *outputPipe) queue(end int) error {
	r, e := o.r, o.e
	end = min(end, r.first+r.P)
	if end <= o.next {
		return nil
	}
	side, err := e.fork()
	if err != nil {
		return err
	}
	row0, n := (o.next-r.first)*r.B, (end-o.next)*r.B
	o.next = end
	err = e.outputRows(r, o.bf, o.why, o.bias, row0, n)
	if side {
		e.ctx.toMain()
	}
	return err
}

// finish queues the rows left, joins the streams and sums the loss.
func (o *outputPipe) finish() error {
	r, e := o.r, o.e
	err := o.queue(r.first + r.P)
	if jerr := e.join(); err == nil {
		err = jerr
	}
	if err != nil {
		return err
	}
	return e.launchGrid(r.prec, "sum_scaled", 1, o.bf.rowloss, r.P*r.B, 1.0, o.bf.div, o.bf.loss)
}

// queueLoss queues a pass and the addition of its loss times
// p.lossWeight to the total in the buffer "lossacc" (restarted with
// p.lossFirst), without waiting for the device.
func (e *cudaEngine) queueLoss(r *lstmRun, bf *lstmBufs, p pass, S int) error {
	if err := e.setWeights(r.prec); err != nil {
		return err
	}
	if err := e.pass(r, bf, e.stack, S); err != nil {
		return err
	}
	acc, err := e.buf("lossacc", 8)
	if err != nil {
		return err
	}
	return e.launchGrid(r.prec, "loss_acc", 1, bf.loss, p.lossWeight, boolInt(p.lossFirst), acc)
}

// takeLoss implements lossQueue: it waits for the queued passes and
// returns their total, or an error where a persistent kernel's grid
// barrier timed out in one of them.
func (e *cudaEngine) takeLoss() (float64, error) {
	acc := e.ws["lossacc"]
	if acc == nil {
		return 0, fmt.Errorf("nsrnn: device %v: no loss was queued", e.dev)
	}
	return e.lossValue(&lstmBufs{loss: acc.p})
}

// lossValue waits for the pass and returns its loss, or an error where a
// persistent kernel's grid barrier timed out in it.
func (e *cudaEngine) lossValue(bf *lstmBufs) (float64, error) {
	loss := make([]float64, 1)
	if err := e.ctx.DownloadFloat64(loss, bf.loss); err != nil {
		return 0, fmt.Errorf("nsrnn: device %v: %w", e.dev, err)
	}
	if _, ok := persistentSteps[e.fusedStep]; ok {
		timedOut, err := e.barrierTimedOut()
		if err != nil {
			return 0, fmt.Errorf("nsrnn: device %v: %w", e.dev, err)
		}
		if timedOut {
			return 0, fmt.Errorf("nsrnn: device %v: the persistent LSTM kernel's grid barrier timed out (%s=%s): its blocks could not all run at once, on a device shared with other work, say; the pass's results are wrong: run without it", e.dev, EnvCUDALSTMStep, e.fusedStep)
		}
	}
	return loss[0], nil
}

// outputBackward zeroes the gradients, writes the output layer's and the
// gradient of the top layer's h at the output positions (the other
// layers' and positions' zero), and returns the gradient of parameter i.
func (e *cudaEngine) outputBackward(r *lstmRun, bf *lstmBufs, whyIdx, bhyIdx int) (func(int) cuda.Ptr, error) {
	cfg := e.m.cfg
	p, T, B := r.prec, r.T, r.B
	H, V, L := cfg.Hidden, cfg.OutputVocab, cfg.layers()
	es := elem(p)
	R := r.P * B
	if err := e.gradBuffer(p); err != nil {
		return nil, err
	}
	G := func(i int) cuda.Ptr { return e.grad.Offset(es * e.offs[i]) }
	if err := e.ctx.Zero(e.grad, es*e.total); err != nil {
		return nil, err
	}
	hout := bf.hs[L-1].Offset(r.first * B * H * es)
	ones, err := e.ones(p, R)
	if err != nil {
		return nil, err
	}
	// dW_hy = dSᵀ·h, db_hy = 1ᵀ·dS, dh = dS·W_hy. No later operation of
	// the pass reads the first two: they run on the second stream beside
	// the backward pass through the layers (the pass's end joins it).
	side, err := e.fork()
	if err != nil {
		return nil, err
	}
	if err := e.gemm(p, true, false, V, H, R, bf.s, V, hout, H, 0, G(whyIdx), H); err != nil {
		return nil, err
	}
	if err := e.gemm(p, false, false, 1, V, R, ones, R, bf.s, V, 0, G(bhyIdx), V); err != nil {
		return nil, err
	}
	if side {
		e.ctx.toMain()
	}
	if T == 0 {
		return G, nil
	}
	blk := B * H * es
	for l := 0; l < L; l++ {
		if err := e.ctx.Zero(bf.dhs[l], (T+1)*blk); err != nil {
			return nil, err
		}
	}
	if err := e.gemm(p, false, false, R, H, V, bf.s, V, e.working(whyIdx), H, 0, bf.dhs[L-1].Offset(r.first*blk), H); err != nil {
		return nil, err
	}
	return G, nil
}

// ones returns at least n ones of precision p.
func (e *cudaEngine) ones(p Precision, n int) (cuda.Ptr, error) {
	es := elem(p)
	key := fmt.Sprint("ones", es)
	if b, ok := e.ws[key]; ok && b.bytes >= es*n {
		return b.p, nil
	}
	n = max(n, 1024)
	ptr, err := e.buf(key, es*n)
	if err != nil {
		return 0, err
	}
	if err := e.fillOnes(p, ptr, n); err != nil {
		return 0, err
	}
	return ptr, nil
}

// backward computes the gradients of a pass of the plain LSTM into
// e.grad, from the gradient of the scores left in bf.s.
func (e *cudaEngine) backward(r *lstmRun, bf *lstmBufs, layerIdx func(int) (int, int, int, int), whyIdx, bhyIdx, embedIdx int) error {
	cfg := e.m.cfg
	p, T, B := r.prec, r.T, r.B
	H, L := cfg.Hidden, cfg.layers()
	es := elem(p)
	TB := T * B
	W := e.working
	G, err := e.outputBackward(r, bf, whyIdx, bhyIdx)
	if err != nil || T == 0 {
		return err
	}
	ones, err := e.ones(p, TB)
	if err != nil {
		return err
	}
	blk := B * H * es
	in0 := cfg.inputSize()
	for l := L - 1; l >= 0; l-- {
		wih, whh, bih, bhh := layerIdx(l)
		z, dz, cs, tc, dhs, hs := bf.z[l], bf.dz[l], bf.cs[l], bf.tc[l], bf.dhs[l], bf.hs[l]
		if err := e.ctx.Zero(bf.dc[l], blk); err != nil {
			return err
		}
		if f, ok := fusedSteps[e.fusedBack]; ok {
			whhT, err := e.transposed(p, "lstm.whhT", W(whh), 4*H, H, H)
			if err != nil {
				return err
			}
			for t := T; t >= 1; t-- {
				off := (t - 1) * B * 4 * H * es
				var next backInput
				if t < T {
					next = backInput{dz.Offset(t * B * 4 * H * es), whhT}
				}
				if err := e.lstmBackFused(p, f.back, f.rows, z.Offset(off), cs.Offset((t-1)*blk), tc.Offset((t-1)*blk), dhs.Offset(t*blk), next, backInput{}, bf.dc[l], dz.Offset(off), B, H); err != nil {
					return err
				}
			}
		} else {
			for t := T; t >= 1; t-- {
				off := (t - 1) * B * 4 * H * es
				if err := e.launch(p, "lstm_cell_back", B*H, z.Offset(off), cs.Offset((t-1)*blk), tc.Offset((t-1)*blk), dhs.Offset(t*blk), bf.dc[l], dz.Offset(off), B, H); err != nil {
					return err
				}
				if t > 1 {
					if err := e.gemm(p, false, false, B, H, 4*H, dz.Offset(off), 4*H, W(whh), H, 1, dhs.Offset((t-1)*blk), H); err != nil {
						return err
					}
				}
			}
		}
		// dW_hh = dZᵀ·h_{0…T−1}; db = 1ᵀ·dZ for both biases.
		if err := e.gemm(p, true, false, 4*H, H, TB, dz, 4*H, hs, H, 0, G(whh), H); err != nil {
			return err
		}
		if err := e.gemm(p, false, false, 1, 4*H, TB, ones, TB, dz, 4*H, 0, G(bih), 4*H); err != nil {
			return err
		}
		if err := e.ctx.Copy(G(bhh), G(bih), 4*H*es); err != nil {
			return err
		}
		switch {
		case l > 0:
			// Layer l reads h_1 … h_T of layer l−1.
			if err := e.gemm(p, true, false, 4*H, H, TB, dz, 4*H, bf.hs[l-1].Offset(blk), H, 0, G(wih), H); err != nil {
				return err
			}
			if err := e.gemm(p, false, false, TB, H, 4*H, dz, 4*H, W(wih), H, 1, bf.dhs[l-1].Offset(blk), H); err != nil {
				return err
			}
		case embedIdx >= 0:
			if err := e.gemm(p, true, false, 4*H, in0, TB, dz, 4*H, bf.x0, in0, 0, G(wih), in0); err != nil {
				return err
			}
			if err := e.gemm(p, false, false, TB, in0, 4*H, dz, 4*H, W(wih), in0, 0, bf.dx0, in0); err != nil {
				return err
			}
			if err := e.launchGrid(p, "scatter_rows", uint32(TB), G(embedIdx), bf.dx0, bf.uniq, bf.uptr, bf.rows, in0, bf.nuniq); err != nil {
				return err
			}
		default:
			if err := e.launchGrid(p, "scatter_cols", uint32(TB), G(wih), dz, bf.uniq, bf.uptr, bf.rows, 4*H, in0, bf.nuniq); err != nil {
				return err
			}
		}
	}
	return nil
}

// gradBuffer makes e.grad hold gradients of precision p.
func (e *cudaEngine) gradBuffer(p Precision) error {
	if e.grad != 0 && e.gradPrec == p {
		return nil
	}
	if e.grad != 0 {
		if err := e.ctx.Free(e.grad); err != nil {
			return err
		}
		e.grad = 0
	}
	var err error
	if e.grad, err = e.ctx.Alloc(elem(p) * e.total); err != nil {
		return fmt.Errorf("nsrnn: device %v: the gradients: %w", e.dev, err)
	}
	e.movedBuffers()
	e.gradPrec = p
	return nil
}

// buffers sizes the workspace for a run and uploads its integer inputs.
func (e *cudaEngine) buffers(r *lstmRun) (*lstmBufs, error) {
	cfg := e.m.cfg
	H, V, L := cfg.Hidden, cfg.OutputVocab, cfg.layers()
	es := elem(r.prec)
	T, B, P := r.T, r.B, r.P
	TB, R := T*B, P*B
	bf := &lstmBufs{}
	e.pack(r)
	var err error
	get := func(name string, bytes int) cuda.Ptr {
		if err != nil {
			return 0
		}
		var ptr cuda.Ptr
		ptr, err = e.buf(name, bytes)
		return ptr
	}
	bf.ints = get("ints", 4*len(e.ints))
	if cfg.Embedding > 0 {
		bf.x0 = get("x0", es*TB*cfg.Embedding)
		if r.grad {
			bf.dx0 = get("dx0", es*TB*cfg.Embedding)
		}
	}
	for l := 0; l < L; l++ {
		bf.z = append(bf.z, get(fmt.Sprint("z", l), es*TB*4*H))
		bf.hs = append(bf.hs, get(fmt.Sprint("hs", l), es*(T+1)*B*H))
		bf.cs = append(bf.cs, get(fmt.Sprint("cs", l), es*(T+1)*B*H))
		bf.tc = append(bf.tc, get(fmt.Sprint("tc", l), es*TB*H))
		if r.grad {
			bf.dz = append(bf.dz, get(fmt.Sprint("dz", l), es*TB*4*H))
			bf.dhs = append(bf.dhs, get(fmt.Sprint("dhs", l), es*(T+1)*B*H))
			bf.dc = append(bf.dc, get(fmt.Sprint("dc", l), es*B*H))
		}
	}
	bf.s = get("scores", es*R*V)
	bf.logz = get("logz", 8*R)
	bf.rowloss = get("rowloss", 8*R)
	bf.loss = get("loss", 8)
	if err != nil {
		return nil, err
	}
	if err := e.ctx.QueueUploadInt32(bf.ints, e.ints); err != nil {
		return nil, fmt.Errorf("nsrnn: device %v: %w", e.dev, err)
	}
	n := len(r.tok)
	bf.div, bf.nuniq = bf.ints, bf.ints.Offset(4)
	bf.tok = bf.ints.Offset(8)
	bf.tgt = bf.tok.Offset(4 * n)
	if r.grad {
		bf.uniq = bf.tgt.Offset(4 * len(r.tgt))
		bf.uptr = bf.uniq.Offset(4 * n)
		bf.rows = bf.uptr.Offset(4 * (n + 1))
	}
	return bf, nil
}

// fillOnes writes n ones of precision p at ptr.
func (e *cudaEngine) fillOnes(p Precision, ptr cuda.Ptr, n int) error {
	if p == Float32 {
		ones := make([]float32, n)
		for i := range ones {
			ones[i] = 1
		}
		return e.ctx.UploadFloat32(ptr, ones)
	}
	ones := make([]float64, n)
	for i := range ones {
		ones[i] = 1
	}
	return e.ctx.UploadFloat64(ptr, ones)
}

// sentence implements engine.
func (e *cudaEngine) sentence(batch [][]int, p pass) (outcome, error) {
	m := e.m
	n, B := len(batch[0]), len(batch)
	if err := m.checkSize(B, n, n+1, max(n-1, 0), false); err != nil {
		return outcome{}, err
	}
	r := &lstmRun{prec: m.Precision, T: n, B: B, P: n + 1, first: 0, grad: p.grad, lp: p.logProbs || p.logits, logits: p.logits, divisor: float64(B)}
	r.tok = make([]int32, n*B)
	r.tgt = make([]int32, (n+1)*B)
	for b, w := range batch {
		for t, s := range w {
			r.tok[t*B+b] = int32(s)
			r.tgt[t*B+b] = int32(s)
		}
		r.tgt[n*B+b] = int32(m.EOS())
	}
	if _, err := e.module(r.prec); err != nil {
		return outcome{}, err
	}
	bf, err := e.buffers(r)
	if err != nil {
		return outcome{}, err
	}
	es := elem(r.prec)
	for l := range bf.hs {
		if err := e.ctx.Zero(bf.hs[l], es*B*m.cfg.Hidden); err != nil {
			return outcome{}, err
		}
		if err := e.ctx.Zero(bf.cs[l], es*B*m.cfg.Hidden); err != nil {
			return outcome{}, err
		}
	}
	S := max(n-1, 0)
	if e.stack != nil {
		if err := e.stack.prepare(r, S, nil, false); err != nil {
			return outcome{}, err
		}
		if err := e.stack.load(r, nil, false); err != nil {
			return outcome{}, err
		}
	}
	return e.finish(r, bf, p, S)
}

// finish runs a pass of S stack steps and collects what p asks for.
func (e *cudaEngine) finish(r *lstmRun, bf *lstmBufs, p pass, S int) (outcome, error) {
	if p.queueLoss && !r.grad && !r.lp {
		if err := e.queueLoss(r, bf, p, S); err != nil {
			return outcome{}, err
		}
		return outcome{loss: math.NaN(), queued: e}, nil
	}
	loss, err := e.run(r, bf, e.stack, S)
	if err != nil {
		return outcome{}, err
	}
	res := outcome{loss: loss}
	if r.lp {
		if res.lp, err = e.scores(r, bf); err != nil {
			return outcome{}, err
		}
	}
	if p.grad && p.hostGrads {
		if res.grads, err = e.hostGrads(); err != nil {
			return outcome{}, err
		}
	}
	return res, nil
}

// scores downloads the log-probabilities (or raw scores) of a pass,
// out[b][t][v].
func (e *cudaEngine) scores(r *lstmRun, bf *lstmBufs) ([][][]float64, error) {
	V := e.m.cfg.OutputVocab
	R := r.P * r.B
	flat, err := e.download(r.prec, bf.s, R*V)
	if err != nil {
		return nil, err
	}
	out := make([][][]float64, r.B)
	for b := range out {
		out[b] = make([][]float64, r.P)
		for t := range out[b] {
			row := (t*r.B + b) * V
			out[b][t] = flat[row : row+V : row+V]
		}
	}
	return out, nil
}

// download copies n values of precision p from the device as float64.
func (e *cudaEngine) download(p Precision, src cuda.Ptr, n int) ([]float64, error) {
	out := make([]float64, n)
	if p == Float64 {
		if err := e.ctx.DownloadFloat64(out, src); err != nil {
			return nil, fmt.Errorf("nsrnn: device %v: %w", e.dev, err)
		}
		return out, nil
	}
	f := make([]float32, n)
	if err := e.ctx.DownloadFloat32(f, src); err != nil {
		return nil, fmt.Errorf("nsrnn: device %v: %w", e.dev, err)
	}
	for i, v := range f {
		out[i] = float64(v)
	}
	return out, nil
}

// uploadReal copies float64 values to the device in precision p.
func (e *cudaEngine) uploadReal(p Precision, dst cuda.Ptr, src []float64) error {
	if p == Float64 {
		return e.ctx.UploadFloat64(dst, src)
	}
	f := make([]float32, len(src))
	for i, v := range src {
		f[i] = float32(v)
	}
	return e.ctx.UploadFloat32(dst, f)
}

// hostGrads implements deviceEngine.
func (e *cudaEngine) hostGrads() ([][]float64, error) {
	if e.grad == 0 {
		return nil, errors.New("nsrnn: no gradients on the device")
	}
	flat, err := e.download(e.gradPrec, e.grad, e.total)
	if err != nil {
		return nil, err
	}
	if e.hostG == nil {
		e.hostG = make([][]float64, len(e.m.params))
		for i, p := range e.m.params {
			e.hostG[i] = make([]float64, p.Size())
		}
	}
	for i := range e.hostG {
		copy(e.hostG[i], flat[e.offs[i]:])
	}
	return e.hostG, nil
}

// chunk implements engine.
func (e *cudaEngine) chunk(s *Stream, inputs, targets [][]int, p pass) (outcome, error) {
	m := e.m
	B, T := s.batch, len(inputs[0])
	if err := e.streams(); err != nil {
		return outcome{}, err
	}
	if err := m.checkSize(B, T, T, T, true); err != nil {
		return outcome{}, err
	}
	r := &lstmRun{prec: m.Precision, T: T, B: B, P: T, first: 1, grad: p.grad, lp: p.logProbs || p.logits, logits: p.logits}
	// The stack steps: one after every token; with BoundaryNextChunk none
	// after the last, and, from a carried state, first the one deferred
	// from the previous chunk.
	S := T
	deferLast := s.boundary == BoundaryNextChunk && m.stack != nil
	if deferLast {
		r.lead = s.state != nil
		if !r.lead {
			S = T - 1
		}
	}
	r.tok = make([]int32, T*B)
	r.tgt = make([]int32, T*B)
	count := 0
	for b, row := range inputs {
		for t, x := range row {
			r.tok[t*B+b] = int32(x)
			y := NoTarget
			if targets != nil {
				y = targets[b][t]
			}
			if y != NoTarget {
				count++
			}
			r.tgt[t*B+b] = int32(y)
		}
	}
	r.divisor = float64(max(count, 1))
	if _, err := e.module(r.prec); err != nil {
		return outcome{}, err
	}
	bf, err := e.buffers(r)
	if err != nil {
		return outcome{}, err
	}
	onDevice := s.state != nil && s.state == e.carried && e.carriedPrec == r.prec
	if err := e.loadState(r, bf, s.state); err != nil {
		return outcome{}, err
	}
	if e.stack != nil {
		var st stacks.State
		if s.state != nil {
			st = s.state.stack
		}
		if err := e.stack.prepare(r, S, st, onDevice); err != nil {
			return outcome{}, err
		}
		if err := e.stack.load(r, st, onDevice); err != nil {
			return outcome{}, err
		}
	}
	res, err := e.finish(r, bf, p, S)
	if err != nil {
		return outcome{}, err
	}
	st, err := e.saveState(r, bf, s)
	if err != nil {
		return outcome{}, err
	}
	st.boundary = s.boundary
	// A chunk of one token with its update deferred, from the initial
	// state, makes no update: the stack stays initial (nil), as on the CPU.
	if e.stack != nil && !(deferLast && S == 0) {
		// The save overwrites the device's copy of the previous state:
		// a state that may still be held (another stream's, or one handed
		// out) comes to the host first.
		if prev := s.state; prev != nil && prev.stack != nil {
			if d, ok := prev.stack.(*deviceStackState); ok && prev.shared {
				if _, err := d.host(); err != nil {
					return outcome{}, err
				}
			}
		}
		if prev := e.lastKept; prev != nil && prev != s.state && prev.stack != nil {
			if d, ok := prev.stack.(*deviceStackState); ok {
				if _, err := d.host(); err != nil {
					return outcome{}, err
				}
			}
		}
		if st.stack, err = e.stack.save(r); err != nil {
			return outcome{}, err
		}
		e.lastKept = st
	}
	s.state = st
	return res, nil
}

// loadState writes a stream's state into row block 0 of hs and cs: from
// the device's copy when it is the state the latest chunk ended in, else
// from the host's values.
func (e *cudaEngine) loadState(r *lstmRun, bf *lstmBufs, st *State) error {
	H, L := e.m.cfg.Hidden, e.m.cfg.layers()
	B, es := r.B, elem(r.prec)
	blk := B * H * es
	saved := e.ws["state"]
	onDevice := st != nil && st == e.carried && saved != nil && saved.bytes >= 2*L*blk && e.carriedPrec == r.prec
	for l := 0; l < L; l++ {
		switch {
		case st == nil:
			if err := e.ctx.Zero(bf.hs[l], blk); err != nil {
				return err
			}
			if err := e.ctx.Zero(bf.cs[l], blk); err != nil {
				return err
			}
		case onDevice:
			if err := e.ctx.Copy(bf.hs[l], saved.p.Offset(2*l*blk), blk); err != nil {
				return err
			}
			if err := e.ctx.Copy(bf.cs[l], saved.p.Offset((2*l+1)*blk), blk); err != nil {
				return err
			}
		default:
			carry, err := st.carry()
			if err != nil {
				return err
			}
			layer := carry[l]
			h, c := make([]float64, B*H), make([]float64, B*H)
			for b := 0; b < B; b++ {
				copy(h[b*H:(b+1)*H], layer[b*2*H:b*2*H+H])
				copy(c[b*H:(b+1)*H], layer[b*2*H+H:(b+1)*2*H])
			}
			if err := e.uploadReal(r.prec, bf.hs[l], h); err != nil {
				return err
			}
			if err := e.uploadReal(r.prec, bf.cs[l], c); err != nil {
				return err
			}
		}
	}
	return nil
}

// saveState keeps the final (h, c) of every layer on the device, in the
// buffer "state" (per layer h then c), and returns it as the stream's new
// State, whose values come to the host only when the host needs them
// (deviceLSTM; no download, so that the chunks of a stream queue on the
// device without waiting). The state the buffer held until now comes to
// the host first where someone may still need it: handed out (shared), or
// another stream's current state; s, the stream of the chunk, moves past
// its own.
func (e *cudaEngine) saveState(r *lstmRun, bf *lstmBufs, s *Stream) (*State, error) {
	H, L := e.m.cfg.Hidden, e.m.cfg.layers()
	B, T, es := r.B, r.T, elem(r.prec)
	blk := B * H * es
	if prev := e.carried; prev != nil && prev.dev != nil && (prev != s.state || prev.shared) {
		if _, err := prev.carry(); err != nil {
			return nil, err
		}
	}
	saved, err := e.buf("state", 2*L*blk)
	if err != nil {
		return nil, err
	}
	for l := 0; l < L; l++ {
		if err := e.ctx.Copy(saved.Offset(2*l*blk), bf.hs[l].Offset(T*blk), blk); err != nil {
			return nil, err
		}
		if err := e.ctx.Copy(saved.Offset((2*l+1)*blk), bf.cs[l].Offset(T*blk), blk); err != nil {
			return nil, err
		}
	}
	e.stateGen++
	st := &State{batch: B, shape: e.m.cfg.shape(), dev: &deviceLSTM{e: e, gen: e.stateGen, prec: r.prec, batch: B}}
	e.carried, e.carriedPrec = st, r.prec
	return st, nil
}

// deviceLSTM is the LSTM part of a stream's State while its values are
// only on the device: the engine's "state" buffer as its save numbered
// gen left it.
type deviceLSTM struct {
	e     *cudaEngine
	gen   int
	prec  Precision
	batch int
}

// fetch downloads the values (State.carry).
func (d *deviceLSTM) fetch() (controller.Carry, error) {
	e := d.e
	saved := e.ws["state"]
	if d.gen != e.stateGen || saved == nil {
		// saveState and close fetch a state before its buffer changes.
		return nil, fmt.Errorf("nsrnn: device %v: a stream state's values were lost on the device before they came to the host", e.dev)
	}
	H, L, B := e.m.cfg.Hidden, e.m.cfg.layers(), d.batch
	vals, err := e.download(d.prec, saved.p, 2*L*B*H)
	if err != nil {
		return nil, err
	}
	carry := make(controller.Carry, L)
	for l := 0; l < L; l++ {
		h, c := vals[2*l*B*H:(2*l+1)*B*H], vals[(2*l+1)*B*H:(2*l+2)*B*H]
		layer := make([]float64, B*2*H)
		for b := 0; b < B; b++ {
			copy(layer[b*2*H:b*2*H+H], h[b*H:(b+1)*H])
			copy(layer[b*2*H+H:(b+1)*2*H], c[b*H:(b+1)*H])
		}
		carry[l] = layer
	}
	return carry, nil
}

// update implements deviceEngine: the global norm of the gradients (a
// fixed grid of partial sums, then their sum), then one kernel that clips
// and applies SGD or Adam to every parameter, writing the float32 copy.
func (e *cudaEngine) update(opt Optimizer, clip float64) (bool, error) {
	var adam *Adam
	switch o := opt.(type) {
	case *SGD:
	case *Adam:
		adam = o
	default:
		return false, nil
	}
	if e.grad == 0 {
		return false, errors.New("nsrnn: an update without gradients on the device")
	}
	p := e.gradPrec
	if err := e.upload(); err != nil {
		return false, err
	}
	partial, err := e.buf("sumsq_partial", 8*sumsqBlocks)
	if err != nil {
		return false, err
	}
	sumsq, err := e.buf("sumsq", 8)
	if err != nil {
		return false, err
	}
	if err := e.launchGrid(p, "sumsq_partial", sumsqBlocks, e.grad, int64(e.total), partial); err != nil {
		return false, err
	}
	if err := e.launchGrid(p, "sum_scaled", 1, partial, sumsqBlocks, 1.0, cuda.Ptr(0), sumsq); err != nil {
		return false, err
	}
	var w cuda.Ptr // the float32 copy, kept up to date where there is one
	if p == Float32 && e.work32 != 0 {
		w = e.work32
	}
	if adam == nil {
		err = e.launch(p, "sgd_update", e.total, e.master, e.grad, w, int64(e.total), opt.LearningRate(), sumsq, clip)
	} else {
		if err := e.adamState(adam); err != nil {
			return false, err
		}
		adam.Step++
		c1 := 1 - math.Pow(adam.Beta1, float64(adam.Step))
		c2 := 1 - math.Pow(adam.Beta2, float64(adam.Step))
		err = e.launch(p, "adam_update", e.total, e.master, e.grad, e.adamM, e.adamV, w, int64(e.total), adam.LR, adam.Beta1, adam.Beta2, adam.Eps, c1, c2, sumsq, clip)
		e.adamStale = true
	}
	if err != nil {
		return false, err
	}
	e.hostStale = true
	if w == 0 {
		e.work32Stale = true
	}
	return true, nil
}

// adamState makes the device hold a's moments.
func (e *cudaEngine) adamState(a *Adam) error {
	if e.adam == a {
		return nil
	}
	if e.adamM == 0 {
		var err error
		if e.adamM, err = e.ctx.Alloc(8 * e.total); err != nil {
			return fmt.Errorf("nsrnn: device %v: Adam's moments: %w", e.dev, err)
		}
		if e.adamV, err = e.ctx.Alloc(8 * e.total); err != nil {
			return fmt.Errorf("nsrnn: device %v: Adam's moments: %w", e.dev, err)
		}
	}
	flat := make([]float64, e.total)
	for _, pair := range []struct {
		dst cuda.Ptr
		src [][]float64
	}{{e.adamM, a.M}, {e.adamV, a.V}} {
		clear(flat)
		for i := range e.m.params {
			copy(flat[e.offs[i]:], pair.src[i])
		}
		if err := e.ctx.UploadFloat64(pair.dst, flat); err != nil {
			return fmt.Errorf("nsrnn: device %v: Adam's moments: %w", e.dev, err)
		}
	}
	e.adam, e.adamStale = a, false
	return nil
}
