package nsrnn

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/controller"
	"github.com/nsrnn/nsrnn/fused"
	"github.com/nsrnn/nsrnn/internal/fastblas"
	"github.com/nsrnn/nsrnn/param"
	"github.com/nsrnn/nsrnn/stacks"
)

// BLAS names the implementation of the matrix products: "gonum" (pure Go,
// the default) or "openblas" (built with the tag openblas and Debian's
// libopenblas-dev installed).
//
// Matrix products go through gonum's BLAS interface. The default build
// uses gonum's pure-Go implementation, so the library builds anywhere;
// built with the tag openblas (go build -tags openblas, with cgo and
// OpenBLAS installed, e.g. Debian's libopenblas-dev) they use OpenBLAS,
// which is 5–8.5 times faster at the Penn Treebank sizes (training and
// evaluation of the paper's models, measured on one core) and
// still pays at the small sizes of the formal-language experiments (20
// units, batch 10): on one thread, in interleaved rounds of
// BenchmarkTrainStep, a training step of the Gref and JM models took
// about 1.65× less time with OpenBLAS (medians), and one of the
// nondeterministic stacks about 1.15× less (fastest rounds), their time
// being mostly the dynamic program's. BLAS says
// which one a program was built with; the two round differently, so the
// same seed gives the same results only under the same one. Without OpenBLAS's headers the
// tagged build stops with a message naming the package to install.
//
// OpenBLAS picks its kernels for the CPU it runs on, and the environment
// variable OPENBLAS_CORETYPE overrides the choice. On AVX-512 CPUs that an
// OpenBLAS build does not know, it may fall back to older kernels: on an
// AMD EPYC (Zen 5) machine, Debian's OpenBLAS 0.3.21 with
// OPENBLAS_CORETYPE=SkylakeX trained the Penn Treebank models 1.5–1.6×
// faster than with its Haswell kernels. On a CPU without AVX-512 that
// setting stops the program with an illegal instruction (SIGILL): leave
// it unset there. The stack's dynamic program has AVX2 and AVX-512
// kernels of its own for the common block sizes, chosen at run time (the
// build tag purego leaves them out).
const BLAS = fastblas.Name

// Param is a named parameter tensor of a model.
type Param = param.Param

// Scheme is how a model's parameters are initialized; see Config.InitRange.
type Scheme = param.Scheme

// Model is a stack RNN: an input layer (one-hot or a learned embedding),
// an LSTM controller, an optional stack joined to it through the
// controller–stack interface, and an output layer predicting the next
// symbol. Its parameters are shared by the gorgonia graphs it builds and
// caches, one per (mode, length, batch size, with or without gradients).
//
// A Model is not safe for concurrent use: a computation that would overlap
// another's, from another goroutine, is refused with an error wrapping
// ErrConcurrentUse.
type Model struct {
	// MaxGraphs bounds the number of graphs the model caches;
	// the least recently used are dropped first. 0, the default, means
	// no bound by number: GraphCacheBytes bounds the cache. A negative
	// value is an error at the next run.
	MaxGraphs int

	// GraphCacheBytes bounds the memory of the graphs the model
	// caches, as estimated from their sizes (positions × batch × the
	// values a position holds; the stacks' tapes are shared by a model's
	// graphs and not counted): the least recently used are dropped first,
	// and the graph just built is always kept. 0 means no bound; a
	// negative value is an error at the next run. The default is
	// DefaultGraphCacheBytes. A graph dropped is built again
	// when needed, so a bound smaller than the graphs of one epoch (one
	// per length, batch size and part, with and without gradients) makes
	// every epoch build them all again: a few milliseconds a graph, more
	// for one that runs on gorgonia's tape machine (see "Graphs and
	// memory" in the package documentation), whose compiler's time grows
	// with the square of the graph's length.
	GraphCacheBytes int64

	// Precision is the arithmetic of the large matrix products, read at
	// every run: the output layer's (the product with W_hy, its softmax
	// and gradient) and the LSTM's (input and recurrent products and
	// their gradients). The zero value, Float64, is exact to float64
	// rounding; Float32 is about 1.5× faster where these products
	// dominate (Penn Treebank sizes) and changes the loss by about 1e-6
	// relative. The stacks are float64 either way. See the section on
	// precision in the package documentation. Another value is an error
	// at the next run.
	Precision Precision

	// Workers is the number of parts into which Gradient and Loss split a
	// batch, each part run as a graph of its own on its own goroutine, with
	// no synchronization between them until the parts' losses and
	// gradients are combined (weighted by their sizes). 0 and 1 run a
	// batch as one graph (a negative value is an error at the next run);
	// more than the batch size runs one sequence per part. The result
	// equals the whole batch's to rounding. Parts of a stack RNN use
	// replicas of its stack (see stacks.Replicator), so that their
	// scratch tapes are their own: the stacks' memory grows with Workers
	// while the work per part shrinks. Worth it with idle cores (on two
	// idle cores a training step of the paper's CFL models takes 1.7–1.9×
	// less time with two parts), not when other runs keep every core
	// busy. See "Parallel parts" in the package documentation.
	Workers int

	cfg    Config
	kind   Kind
	embed  *param.Param // nil for one-hot inputs
	lstm   *controller.LSTM
	stack  stacks.Layer // nil for the LSTM
	why    *param.Param
	bhy    *param.Param
	params []*param.Param
	graphs map[graphKey]*graph
	order  []graphKey // least recently used first
	// cacheBytes is the sum of the cached graphs' bytes.
	cacheBytes float64
	// replicas[p-1] is the stack of part p ≥ 1 (see Workers).
	replicas []stacks.Layer
	// partGrads holds the combined gradients of a split batch.
	partGrads [][]float64
	// eng computes the model's passes; nil is the CPU (see SetDevice).
	eng engine
	// busy is set while a computation runs (acquire).
	busy atomic.Bool
	// pmu is held while the host's parameters are read whole (MarshalBinary,
	// Save, Sample's check) or written outside a computation (Fit's
	// updates, Init): a reader does not set busy, so that a snapshot
	// taken beside training does not refuse its steps, and sees the
	// parameters of one step.
	pmu sync.Mutex
}

// readParams runs f, which reads the host's parameters whole, with no
// update under way.
func (m *Model) readParams(f func()) {
	m.pmu.Lock()
	defer m.pmu.Unlock()
	f()
}

// writeParams runs f, which writes the host's parameters, once a
// computation of another goroutine under way and a reader have ended.
func (m *Model) writeParams(f func()) {
	m.exclusive(func() {
		m.pmu.Lock()
		defer m.pmu.Unlock()
		f()
	})
}

// New builds a model from a validated configuration and initializes its
// parameters from seed.
func New(cfg Config, seed uint64) (*Model, error) {
	m, err := build(cfg)
	if err != nil {
		return nil, err
	}
	m.init(seed)
	return m, nil
}

// build makes a model with zero parameters.
func build(cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	kind, err := LookupKind(cfg.Kind)
	if err != nil {
		return nil, err
	}
	m := &Model{cfg: cfg, kind: kind, graphs: map[graphKey]*graph{}, GraphCacheBytes: DefaultGraphCacheBytes}
	if cfg.Embedding > 0 {
		m.embed = param.New("embedding", cfg.InputVocab, cfg.Embedding)
		m.params = append(m.params, m.embed)
	}
	if kind.Stack != nil {
		if m.stack, err = kind.Stack("stack", cfg); err != nil {
			return nil, fmt.Errorf("nsrnn: %w", err)
		}
		if err := checkDeclaration(kind, cfg, m.stack); err != nil {
			return nil, err
		}
	}
	in := cfg.inputSize()
	if m.stack != nil {
		in += m.stack.ReadingSize()
	}
	if m.lstm, err = controller.NewLSTM("lstm", in, cfg.Hidden, cfg.layers()); err != nil {
		return nil, fmt.Errorf("nsrnn: %w", err)
	}
	m.params = append(m.params, m.lstm.Params()...)
	if m.stack != nil {
		m.params = append(m.params, m.stack.Params()...)
	}
	m.why = param.New("output.W", cfg.OutputVocab, cfg.Hidden)
	m.bhy = param.New("output.b", cfg.OutputVocab)
	m.params = append(m.params, m.why, m.bhy)
	// A graph's nodes are named after the parameters, and gorgonia gives
	// two nodes of one name and shape a single value: a stack parameter
	// named as another would silently read it.
	seen := map[string]bool{}
	for _, p := range m.params {
		if seen[p.Name] {
			return nil, fmt.Errorf("nsrnn: model kind %s: two parameters are named %q; a stack's parameters are named after the name its Kind.Stack is given (\"stack.…\")", cfg.Kind, p.Name)
		}
		seen[p.Name] = true
	}
	return m, nil
}

// checkDeclaration reports a stack layer that does not agree with its
// kind's declaration (a kind registered from outside): no layer, or
// another reading size or parameter count than the declared ones, which
// the limits, the saved files' checks and the LSTM's input are computed
// from.
func checkDeclaration(kind Kind, cfg Config, layer stacks.Layer) error {
	if layer == nil || reflect.ValueOf(layer).Kind() == reflect.Pointer && reflect.ValueOf(layer).IsNil() {
		return fmt.Errorf("nsrnn: model kind %s: its Kind.Stack returned no layer", cfg.Kind)
	}
	if got, want := float64(layer.ReadingSize()), kind.ReadingSize(cfg); got != want {
		return fmt.Errorf("nsrnn: model kind %s: its layer reads %g values, its Kind.ReadingSize declares %g", cfg.Kind, got, want)
	}
	if got, want := float64(param.Count(layer.Params())), kind.StackParams(cfg); got != want {
		return fmt.Errorf("nsrnn: model kind %s: its layer has %g parameters, its Kind.StackParams declares %g", cfg.Kind, got, want)
	}
	return nil
}

// Scheme returns the initialization scheme of the model's configuration.
func (c Config) Scheme() Scheme { return Scheme{Uniform: c.InitRange} }

// Init draws all parameters afresh from seed, by the configuration's
// Scheme: each layer applies the scheme's rule for its own parameters. A
// computation of another goroutine under way ends first.
func (m *Model) Init(seed uint64) { m.writeParams(func() { m.init(seed) }) }

func (m *Model) init(seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x6e7372726e))
	sc := m.cfg.Scheme()
	if m.embed != nil {
		sc.Recurrent().InitWeight(m.embed, rng)
	}
	m.lstm.Init(sc, rng)
	if m.stack != nil {
		m.stack.Init(sc, rng)
	}
	sc.Affine().InitWeight(m.why, rng)
	sc.Affine().InitBias(m.bhy, rng)
}

// Config returns the model's configuration.
func (m *Model) Config() Config {
	m.mustBeMade()
	return m.cfg
}

// Params returns the model's parameters in a fixed order. The tensors are
// the model's own: changing them changes the model. On a GPU (SetDevice)
// Params first copies the device's parameters to these tensors and takes
// them back to the device at the next run, so that changes made to them
// count; it panics if the copy fails (the device is gone), as any use of
// the model would fail.
func (m *Model) Params() []*Param {
	if err := m.syncHost(); err != nil {
		panic(err)
	}
	m.paramsChanged()
	return m.params
}

// NumParams is the number of scalar parameters.
func (m *Model) NumParams() int {
	m.mustBeMade()
	return param.Count(m.params)
}

// EOS is the index of the end-of-sequence output symbol, OutputVocab−1.
func (m *Model) EOS() int { return m.cfg.OutputVocab - 1 }

// mode is how a graph runs the model: sentence mode from the zero state,
// predicting the n+1 symbols w_1 … w_n, EOS; stream mode from a carried
// state, predicting given targets, with the stack updated after every
// token.
type mode int

const (
	sentenceMode mode = iota
	streamMode
)

type graphKey struct {
	mode     mode
	n, batch int
	grad     bool
	// deferLast and lead are a stream's with BoundaryNextChunk: no stack
	// update after the chunk's last token, and (from a carried state) the
	// update deferred from the previous chunk made first, from the
	// carried hidden state.
	deferLast, lead bool
	// part is the part of a batch split into parts parts the graph
	// serves (see Model.Workers; parts 0: not split): graphs of different
	// parts use different stack replicas and may run concurrently.
	part, parts int
}

var graphIDs atomic.Uint64

// MaxGraphBytes is the memory rule of the models: it bounds the memory of
// one graph, estimated from its output layer (scores and probabilities),
// inputs and LSTM (gates, states and their gradients), per sequence and
// position (the stacks' dynamic programs have their own bound,
// stacks.MaxTapeBytes). Larger batches and lengths are refused with an
// error wrapping ErrTooLarge before anything is allocated. The same bound
// applies to what a model allocates by count: NewStream refuses more
// streams than one token's graph can hold, and Sample more strings than
// their worst-case size allows.
const MaxGraphBytes = 8 << 30

// ErrTooLarge is wrapped by the errors of requests that the memory rule
// (MaxGraphBytes) refuses.
var ErrTooLarge = errors.New("nsrnn: over the memory limit")

// positionBytes estimates the memory a graph of the configuration takes
// per sequence and position: the output layer's scores and probabilities,
// the input vector, and the LSTM's values (gates, states and their
// gradients, about 25 per unit and layer as measured).
func (c Config) positionBytes() float64 {
	return 8 * (2*float64(c.OutputVocab) + float64(c.inputSize()) + 25*float64(c.Hidden)*float64(c.layers()))
}

// graph is the computation for one graphKey, ready to run.
type graph struct {
	key     graphKey
	g       *G.ExprGraph
	pb      *param.Binding
	tokens  *tensor.Dense // (batch, max(n,1)) input symbols
	targets *tensor.Dense // (batch, positions) target symbols, NoTarget for none
	loss    *G.Node
	out     *outputLoss
	// ex runs the graph (executor); vm, where ex cannot, gorgonia's tape
	// machine.
	ex *executor
	vm G.VM
	// lstm binds the controller; final is its state after the last step,
	// whose values a stream carries.
	lstm  *controller.Graph
	final controller.State
	// stack is the graph's stack instance (nil for the LSTM).
	stack stacks.Instance
	// bytes estimates the memory of the graph's values (graphBytes).
	bytes float64
}

// close releases the graph's tape machine, if it has one.
func (gr *graph) close() {
	if gr.vm != nil {
		gr.vm.Close()
	}
}

// value returns the value of node n of the graph after its latest run.
func (gr *graph) value(n *G.Node) G.Value {
	if gr.ex != nil {
		return gr.ex.value(n)
	}
	return n.Value()
}

// DefaultGraphCacheBytes is the default of Model.GraphCacheBytes: 1 GiB.
const DefaultGraphCacheBytes = 1 << 30

// graphBytes estimates the memory of the values of a graph for batch
// sequences over positions positions, as checkSize does.
func (c Config) graphBytes(batch, positions int) float64 {
	return float64(positions) * float64(batch) * c.positionBytes()
}

// checkFields refuses the exported fields a caller set out of their
// range: an error at the next run, as their doc comments say.
func (m *Model) checkFields() error {
	switch {
	case m.Precision != Float64 && m.Precision != Float32:
		return fmt.Errorf("nsrnn: Model.Precision is %v, neither Float64 nor Float32", m.Precision)
	case m.Workers < 0:
		return fmt.Errorf("nsrnn: Model.Workers %d must not be negative (0 or 1: one part)", m.Workers)
	case m.MaxGraphs < 0:
		return fmt.Errorf("nsrnn: Model.MaxGraphs %d must not be negative (0: no bound by number)", m.MaxGraphs)
	case m.GraphCacheBytes < 0:
		return fmt.Errorf("nsrnn: Model.GraphCacheBytes %d must not be negative (0: no bound)", m.GraphCacheBytes)
	}
	return nil
}

// setPrecision sets the arithmetic of the graph's next runs.
func (gr *graph) setPrecision(p Precision) {
	gr.out.prec = p
	gr.lstm.SetFloat32(p == Float32)
}

// graphFor returns the cached graph for key, building it if needed.
// The model's fields were checked when the computation began (acquire).
func (m *Model) graphFor(key graphKey) (*graph, error) {
	if gr, ok := m.graphs[key]; ok {
		m.touch(key)
		gr.setPrecision(m.Precision)
		return gr, nil
	}
	gr, err := m.buildGraph(key)
	if err != nil {
		return nil, err
	}
	gr.setPrecision(m.Precision)
	m.graphs[key] = gr
	m.order = append(m.order, key)
	m.cacheBytes += gr.bytes
	for len(m.order) > 1 && (m.MaxGraphs > 0 && len(m.order) > m.MaxGraphs ||
		m.GraphCacheBytes > 0 && m.cacheBytes > float64(m.GraphCacheBytes)) {
		old := m.order[0]
		m.order = m.order[1:]
		m.cacheBytes -= m.graphs[old].bytes
		m.graphs[old].close()
		delete(m.graphs, old)
	}
	return gr, nil
}

// stackFor returns the stack layer of the graphs of a key: the model's own
// for a batch not split, replica p for part p of a split one. A replica's
// runs use GOMAXPROCS/parts goroutines (at least one), parts being the
// split of the run that first needed it.
func (m *Model) stackFor(key graphKey) stacks.Layer {
	if key.parts <= 1 {
		return m.stack
	}
	for len(m.replicas) <= key.part {
		threads := max(1, runtime.GOMAXPROCS(0)/key.parts)
		m.replicas = append(m.replicas, m.stack.(stacks.Replicator).Replica(threads))
	}
	return m.replicas[key.part]
}

func (m *Model) touch(key graphKey) {
	for i, k := range m.order {
		if k == key {
			copy(m.order[i:], m.order[i+1:])
			m.order[len(m.order)-1] = key
			return
		}
	}
}

// KeepGraphs bounds the graphs the model caches to n (MaxGraphs) until the
// function it returns is called, which restores MaxGraphs; a bound of n
// or fewer already set stays. A computation that goes through lengths
// one after another, whose graphs are not needed after their length,
// keeps a few graphs at a time rather than one per length.
//
// Like Init, Graphs and ReleaseGraphs, it waits for a computation that
// another goroutine has under way to end, rather than race with it. It
// panics for n < 1, a programmer error.
func (m *Model) KeepGraphs(n int) (restore func()) {
	if n < 1 {
		panic(fmt.Sprintf("nsrnn: KeepGraphs(%d): a bound must be at least 1 (MaxGraphs 0 means no bound)", n))
	}
	var old int
	m.exclusive(func() {
		old = m.MaxGraphs
		if old == 0 || old > n {
			m.MaxGraphs = n
		}
	})
	if old != 0 && old <= n {
		return func() {}
	}
	return func() { m.exclusive(func() { m.MaxGraphs = old }) }
}

// exclusive runs f with the model marked busy, once a computation that
// another goroutine has under way ends: the methods that return no error
// wait for it where the computations refuse (ErrConcurrentUse). f must
// not compute with the model.
func (m *Model) exclusive(f func()) {
	for !m.busy.CompareAndSwap(false, true) {
		time.Sleep(20 * time.Microsecond)
	}
	defer m.release()
	f()
}

// LargestPart returns the size of the largest part Gradient and Loss split
// a batch of batch sequences into (see Workers): the batch that
// CheckBatch is to be asked about for them.
func (m *Model) LargestPart(batch int) int {
	np := m.parts(batch)
	return (batch + np - 1) / np
}

// Graphs returns the number of graphs the model holds, ready to run.
func (m *Model) Graphs() (n int) {
	m.exclusive(func() { n = len(m.graphs) })
	return n
}

// ReleaseGraphs drops every graph, returning their memory; the
// model builds them again when needed. A computation of another
// goroutine under way ends first.
func (m *Model) ReleaseGraphs() { m.exclusive(m.releaseGraphs) }

func (m *Model) releaseGraphs() {
	for _, gr := range m.graphs {
		gr.close()
	}
	m.graphs = map[graphKey]*graph{}
	m.order = nil
	m.cacheBytes = 0
}

func (m *Model) buildGraph(key graphKey) (*graph, error) {
	// The graph runs on the executor, or, with an operation the executor
	// does not run, on gorgonia's tape machine, whose compiler merges
	// distinct nodes whose 32-bit hashes are equal (see
	// fused.HashCollision): every attempt gives the graph's kernels a new
	// identity, and so new hashes.
	const attempts = 8
	for i := 1; ; i++ {
		gr, err := m.buildGraphOnce(key)
		if err != nil {
			return nil, err
		}
		if gr.ex, err = newExecutor(gr.g); err != nil {
			return nil, err
		}
		if gr.ex != nil {
			return gr, nil // no compiler, no merging of equal hashes
		}
		a, b := hashCollision(gr.g)
		if a == nil {
			gr.vm = G.NewTapeMachine(gr.g)
			return gr, nil
		}
		if i == attempts {
			return nil, fmt.Errorf("nsrnn: the graph for length %d has nodes %v and %v of equal hashes, which gorgonia's compiler would merge, in %d builds", key.n, a, b, attempts)
		}
	}
}

// hashCollision is fused.HashCollision; tests replace it.
var hashCollision = fused.HashCollision

// CheckBatch returns the error that Loss, Gradient or LogProbs would
// return, before they allocate anything, for a batch of batch sequences
// of length n because of the memory rules (MaxGraphBytes, and the stack's
// stacks.MaxTapeBytes), and nil if they allow it: a program can refuse
// its longest strings before it starts.
func (m *Model) CheckBatch(batch, n int) error {
	if batch < 1 || n < 0 {
		return fmt.Errorf("nsrnn: a batch of %d sequences of length %d", batch, n)
	}
	if n >= math.MaxInt32 {
		return fmt.Errorf("%w: sequences of length %d", ErrTooLarge, n)
	}
	return m.checkSize(batch, n, n+1, max(n-1, 0), false)
}

// checkSize applies the memory rules to a graph for batch sequences of n
// symbols (positions outputs, stackSteps stack updates, carried with
// carry): MaxGraphBytes to the graph and, for a stack whose memory grows
// with the run (stacks.Sizer), stacks.MaxTapeBytes to its tape.
func (m *Model) checkSize(batch, n, positions, stackSteps int, carry bool) error {
	if bytes := m.cfg.graphBytes(batch, positions); bytes > MaxGraphBytes {
		return fmt.Errorf("%w: a graph for a batch of %d over %d positions would take about %.3g GiB, more than the limit of %d GiB (MaxGraphBytes): reduce the batch or the length",
			ErrTooLarge, batch, n, bytes/(1<<30), MaxGraphBytes>>30)
	}
	if sz, ok := m.stack.(stacks.Sizer); ok {
		if err := sz.CheckSize(batch, stackSteps, carry); err != nil {
			return fmt.Errorf("%w: %w", ErrTooLarge, err)
		}
	}
	return nil
}

// buildGraphOnce builds the graph of a key, without its tape machine.
func (m *Model) buildGraphOnce(key graphKey) (*graph, error) {
	n, batch := key.n, key.batch
	stream := key.mode == streamMode
	id := graphIDs.Add(1)
	g := G.NewGraph()
	pb := param.NewBinding(g)
	gr := &graph{key: key, g: g, pb: pb}
	width := max(n, 1)
	positions := n + 1 // sentence mode predicts w_1 … w_n, EOS
	stackSteps := max(n-1, 0)
	if stream {
		positions, stackSteps = n, n
		if key.deferLast {
			stackSteps--
		}
		if key.lead {
			stackSteps++
		}
	}
	if err := m.checkSize(batch, n, positions, stackSteps, stream); err != nil {
		return nil, err
	}
	gr.bytes = m.cfg.graphBytes(batch, positions)
	gr.tokens = tensor.New(tensor.WithShape(batch, width), tensor.Of(tensor.Float64))
	gr.targets = tensor.New(tensor.WithShape(batch, positions), tensor.Of(tensor.Float64))
	tokens := G.NewMatrix(g, tensor.Float64, G.WithShape(batch, width), G.WithName("tokens"), G.WithValue(gr.tokens))
	targets := G.NewMatrix(g, tensor.Float64, G.WithShape(batch, positions), G.WithName("targets"), G.WithValue(gr.targets))

	var embedNode *G.Node
	if m.embed != nil {
		embedNode = pb.Node(m.embed)
	}
	lg := m.lstm.Bind(pb, batch)
	gr.lstm = lg
	var st stacks.Instance
	var r *G.Node
	if m.stack != nil {
		var err error
		if st, err = m.stackFor(key).Bind(pb, batch, stackSteps, stream); err != nil {
			return nil, fmt.Errorf("nsrnn: %w", err)
		}
		r = st.Initial()
		gr.stack = st
	}
	state := lg.Zero()
	var hs []*G.Node
	if stream {
		state = lg.Input()
	} else {
		hs = append(hs, state.H())
	}
	// k counts the stack updates added; with lead, the first is the one
	// deferred from the previous chunk, from the carried hidden state.
	k := 0
	if st != nil && key.lead {
		k++
		var err error
		if r, err = st.Step(k, state.H()); err != nil {
			return nil, err
		}
	}
	for t := 1; t <= n; t++ {
		var x *G.Node
		var err error
		if embedNode != nil {
			x, err = fused.Apply(&embed{graph: id, t: t, size: m.cfg.Embedding, batch: batch, col: width, grad: pb.Grad(m.embed)},
				tokens, embedNode, pb.Anchor())
		} else {
			x, err = fused.Apply(&oneHot{graph: id, t: t, vocab: m.cfg.InputVocab, batch: batch, col: width}, tokens)
		}
		if err != nil {
			return nil, err
		}
		parts := []controller.Part{{Node: x, Constant: embedNode == nil}}
		if r != nil {
			parts = append(parts, controller.Part{Node: r})
		}
		if state, err = lg.StepParts(t, parts, state); err != nil {
			return nil, err
		}
		h := state.H()
		hs = append(hs, h)
		if st != nil && k < stackSteps {
			k++
			if r, err = st.Step(k, h); err != nil {
				return nil, err
			}
		}
	}
	gr.final = state
	why, bhy := pb.Node(m.why), pb.Node(m.bhy)
	gr.out = &outputLoss{graph: id, steps: positions, batch: batch, hidden: m.cfg.Hidden, vocab: m.cfg.OutputVocab,
		perToken: stream, probs: key.grad, dw: pb.Grad(m.why), db: pb.Grad(m.bhy)}
	args := append(hs, why, bhy, targets, pb.Anchor())
	var err error
	if gr.loss, err = fused.Apply(gr.out, args...); err != nil {
		return nil, err
	}
	if key.grad {
		if _, err := pb.Differentiate(gr.loss); err != nil {
			return nil, fmt.Errorf("nsrnn: differentiating the graph for length %d: %w", n, err)
		}
	}
	return gr, nil
}

// CountParams returns the number of scalar parameters of a model with the
// given configuration, computed from the configuration alone (nothing is
// allocated).
func CountParams(cfg Config) (int, error) {
	if err := cfg.Validate(); err != nil {
		return 0, err
	}
	kind, _ := LookupKind(cfg.Kind)
	return int(cfg.countParams(kind)), nil
}
