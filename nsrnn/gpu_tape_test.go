package nsrnn

import (
	"testing"

	"github.com/nsrnn/nsrnn/internal/cuda"
	"github.com/nsrnn/nsrnn/stacks"
	"github.com/nsrnn/nsrnn/stacks/stackstest"
)

// gpuTape is the GPU's nondeterministic stack program (cudaNS's advance
// and retreat, its reading and its carried state) as a stackstest.Tape,
// in float64, carrying states in log space as the engine does. It keeps
// the step's log-weights on the host so that State can replay a pass
// sized to the steps taken (the engine saves at the end of a pass).
type gpuTape struct {
	n        *cudaNS
	r        *lstmRun
	max      int
	carried  *stacks.NSLogState
	ld       [][]float64
	backward bool // the adjoints are zeroed for this run
	dr       cuda.Ptr
}

// gpuTapeEngine returns an engine on device d whose nondeterministic
// stack programs the tapes run: the kernels take the configuration as
// arguments, so one engine serves every configuration.
func gpuTapeEngine(t *testing.T, d Device) *cudaEngine {
	t.Helper()
	m, err := New(Config{Kind: RNS, InputVocab: 2, OutputVocab: 2, Hidden: 1, States: 1, Symbols: 1, InitRange: 0.1}, 1)
	if err != nil {
		t.Fatal(err)
	}
	e, err := newCUDAEngine(m, d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.close)
	return e
}

// newGPUTape returns a tape of configuration c on engine e. Tapes of one
// engine share its buffers: a tape's run is over when the next tape
// begins (as the suite uses them).
func newGPUTape(e *cudaEngine, c stacks.NSConfig, batch, maxSteps int) *gpuTape {
	return &gpuTape{n: &cudaNS{e: e, cfg: c}, r: &lstmRun{prec: Float64, B: batch, grad: true}, max: maxSteps}
}

func (g *gpuTape) must(err error) {
	if err != nil {
		panic(err)
	}
}

// begin prepares a pass of S steps from g.carried and loads its state.
func (g *gpuTape) begin(S int) error {
	n := g.n
	n.carried, n.fromKept = g.carried, false
	if err := n.size(g.r, S); err != nil {
		return err
	}
	if g.carried != nil && g.carried.Reading == nil {
		g.carried.Reading = make([]float64, g.r.B*n.R)
	}
	return n.load(g.r, nil, false)
}

func (g *gpuTape) Begin(carried *stacks.NSLogState) error {
	g.carried, g.ld, g.backward = carried, g.ld[:0], false
	return g.begin(g.max)
}

func (g *gpuTape) step(logDelta []float64) {
	n := g.n
	g.must(n.e.ctx.UploadFloat64(n.logWeights(len(g.ld)), logDelta))
	g.must(n.advance(Float64, len(g.ld)))
}

func (g *gpuTape) Step(logDelta, reading []float64) {
	n := g.n
	g.ld = append(g.ld, append([]float64(nil), logDelta...))
	t := len(g.ld)
	g.step(logDelta)
	rt, _ := n.reading(t)
	g.must(n.e.launch(Float64, "ns_read", g.r.B, rt, n.la, n.P0-1+t, g.r.B, n.NP, n.Q, n.G, n.stateReading()))
	g.must(n.e.ctx.DownloadFloat64(reading, rt))
}

func (g *gpuTape) Backward(step int, gradReading, gradLogDelta []float64) {
	n, e := g.n, g.n.e
	if !g.backward {
		g.must(n.zeroAdjoint(g.r))
		var err error
		g.dr, err = e.buf("tape.dr", 8*len(gradReading))
		g.must(err)
		g.backward = true
	}
	g.must(e.ctx.UploadFloat64(g.dr, gradReading))
	g.must(e.launch(Float64, "ns_back_read", g.r.B, n.dla, n.la, g.dr, n.P0-1+step, g.r.B, n.NP, n.Q, n.G, n.stateReading()))
	g.must(n.retreat(Float64, step))
	g.must(e.ctx.DownloadFloat64(gradLogDelta, n.dlogw))
}

// State replays the steps taken in a pass of that many steps, saves its
// state on the device and fetches it.
func (g *gpuTape) State() *stacks.NSLogState {
	g.must(g.begin(len(g.ld)))
	ld := g.ld
	g.ld = nil
	for _, d := range ld {
		g.ld = append(g.ld, d)
		g.step(d)
	}
	_, err := g.n.save(g.r)
	g.must(err)
	ls, err := g.n.fetchLog()
	g.must(err)
	return ls
}

// TestGPUTapeConformance runs the tape suite of package stackstest on the
// GPU's nondeterministic stack program (on a machine without a GPU, on
// the emulator).
func TestGPUTapeConformance(t *testing.T) {
	e := gpuTapeEngine(t, gpu(t))
	stackstest.TestTape(t, func(c stacks.NSConfig, batch, maxSteps int) stackstest.Tape[*stacks.NSLogState] {
		return newGPUTape(e, c, batch, maxSteps)
	})
}
