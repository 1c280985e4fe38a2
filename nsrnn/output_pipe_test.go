package nsrnn

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	G "gorgonia.org/gorgonia"

	"github.com/nsrnn/nsrnn/internal/fastblas"
)

// blockedCase is an output layer large enough for the blocked passes
// (pipeMinWork), with three blocks of positions (the last one shorter)
// and three of the vocabulary (the last one shorter), and its inputs.
type blockedCase struct {
	steps, batch, hidden, vocab int
	in                          [][]float64
}

func newBlockedCase(t *testing.T) blockedCase {
	const batch = 40
	per := (blockRows + batch - 1) / batch
	c := blockedCase{steps: 2*per + 3, batch: batch, hidden: 16, vocab: 2*vocabBlock + 452}
	if c.steps*c.batch*c.vocab < pipeMinWork {
		t.Fatalf("case too small for the blocked layer")
	}
	rng := rand.New(rand.NewPCG(21, 22))
	for range c.steps {
		h := make([]float64, c.batch*c.hidden)
		for j := range h {
			h[j] = math.Tanh(rng.NormFloat64())
		}
		c.in = append(c.in, h)
	}
	w, bias := make([]float64, c.vocab*c.hidden), make([]float64, c.vocab)
	for i := range w {
		w[i] = rng.NormFloat64()
	}
	for i := range bias {
		bias[i] = rng.NormFloat64()
	}
	targets := make([]float64, c.batch*c.steps)
	for i := range targets {
		targets[i] = float64(rng.IntN(c.vocab))
	}
	targets[3] = NoTarget
	c.in = append(c.in, w, bias, targets, nil)
	return c
}

// blockedResult is what a training pass of the output layer computes.
type blockedResult struct {
	loss   float64
	dh     [][]float64
	dw, db []float64
}

// run makes a fresh layer and runs its forward and backward passes on
// the case's inputs, driven as the executor drives a pipelined kernel
// when pipelined is set (begin, the operands in the order of the graph,
// the passes, finish), and as gorgonia's tape machine does otherwise.
func (c blockedCase) run(pipelined bool) (blockedResult, *outputLoss) {
	return c.runWith(pipelined, nil)
}

// runWith is run with beforeForward, if not nil, called just before the
// layer's forward pass.
func (c blockedCase) runWith(pipelined bool, beforeForward func()) (blockedResult, *outputLoss) {
	k := &outputLoss{steps: c.steps, batch: c.batch, hidden: c.hidden, vocab: c.vocab, perToken: true,
		probs: true, prec: Float32, dw: make([]float64, c.vocab*c.hidden), db: make([]float64, c.vocab)}
	if pipelined {
		k.begin()
		for a := c.steps; a <= c.steps+2; a++ { // the inputs come first
			k.operandReady(a, c.in[a])
		}
		per, nb := k.blockSteps()
		for tt := 0; tt < c.steps; tt++ {
			k.operandReady(tt, c.in[tt])
			// A block is open to the helper once all of its states
			// are in, and not before.
			for b := range nb {
				if !k.pipe.on {
					break // one core: not pipelined
				}
				open := false
				select {
				case <-k.pipe.ready[b]:
					open = true
				default:
				}
				if want := tt+1 >= min((b+1)*per, c.steps); open != want {
					panic(fmt.Sprintf("after state %d of %d, block %d of %d steps open: %v", tt, c.steps, b, per, open))
				}
			}
		}
	}
	if beforeForward != nil {
		beforeForward()
	}
	out := []float64{0}
	k.Forward(out, c.in)
	grad := make([][]float64, len(c.in))
	for i := range c.steps {
		grad[i] = make([]float64, c.batch*c.hidden)
	}
	k.Backward(grad, []float64{1}, out, c.in)
	if pipelined {
		k.finish()
	}
	return blockedResult{loss: out[0], dh: grad[:c.steps], dw: k.dw, db: k.db}, k
}

// relDiff is ‖a − b‖ / ‖a‖.
func relDiff(a, b []float64) float64 {
	var d, n float64
	for i := range a {
		d += (a[i] - b[i]) * (a[i] - b[i])
		n += a[i] * a[i]
	}
	return math.Sqrt(d / n)
}

func flat(x [][]float64) []float64 {
	var f []float64
	for _, r := range x {
		f = append(f, r...)
	}
	return f
}

// The blocked output layer, pipelined or not, computes the same bits,
// run after run; and what the whole products compute (one core), up to
// the float32 products' rounding: each gradient within 1e-6 of its norm,
// where a float32 rounding is 6e-8 relative and the sums have 16 terms.
func TestBlockedOutputLayer(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	c := newBlockedCase(t)
	piped, k := c.run(true)
	if !k.pipe.blocked {
		t.Fatal("the pipelined pass did not run blocked")
	}
	for _, pipelined := range []bool{false, true} {
		got, k := c.run(pipelined)
		if !k.pipe.blocked {
			t.Fatal("the pass did not run blocked")
		}
		if math.Float64bits(got.loss) != math.Float64bits(piped.loss) || !sameBits(got.dh, piped.dh) ||
			!sameBits([][]float64{got.dw, got.db}, [][]float64{piped.dw, piped.db}) {
			t.Errorf("pipelined %v: the results differ from the first pipelined run's", pipelined)
		}
	}

	runtime.GOMAXPROCS(1)
	whole, k := c.run(true)
	if k.pipe.blocked {
		t.Fatal("on one core the pass ran blocked")
	}
	if fastblas.Name == "gonum" { // pure Go: each entry of a product is summed alike in any block
		if math.Float64bits(whole.loss) != math.Float64bits(piped.loss) || !sameBits(whole.dh, piped.dh) ||
			!sameBits([][]float64{whole.dw, whole.db}, [][]float64{piped.dw, piped.db}) {
			t.Error("pure Go: the blocked results are not the whole products' bits")
		}
	}
	if d := math.Abs(whole.loss-piped.loss) / whole.loss; d > 1e-7 {
		t.Errorf("loss %v blocked, %v whole (relative %g)", piped.loss, whole.loss, d)
	}
	for name, p := range map[string][2][]float64{"∂L/∂h": {flat(whole.dh), flat(piped.dh)}, "∂L/∂W_hy": {whole.dw, piped.dw},
		"∂L/∂b_hy": {whole.db, piped.db}} {
		if d := relDiff(p[0], p[1]); d > 1e-6 || math.IsNaN(d) {
			t.Errorf("%s: blocked differs from whole by %g of its norm", name, d)
		}
	}
}

// A pipelined run that fails before the output layer's node (its inputs
// or a block's states never come) still finishes: the helper waiting
// for them returns, and OpenBLAS gets its threads back.
func TestBlockedOutputLayerAbort(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	c := newBlockedCase(t)
	threads := fastblas.Threads()
	for _, given := range []int{0, 3, c.steps + 2} { // nothing; the inputs alone; all but the last state
		k := &outputLoss{steps: c.steps, batch: c.batch, hidden: c.hidden, vocab: c.vocab, perToken: true,
			probs: true, prec: Float32}
		k.begin()
		for a := 0; a < given && a <= c.steps+2; a++ {
			arg := (c.steps + a) % (c.steps + 3) // the inputs, then the states
			k.operandReady(arg, c.in[arg])
		}
		done := make(chan struct{})
		go func() {
			k.finish()
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d operands given: finish did not return", given)
		}
		if got := fastblas.Threads(); got != threads {
			t.Errorf("%d operands given: OpenBLAS runs %d threads after finish, %d before begin", given, got, threads)
		}
	}
}

// The cores a pipelined run saw at its begin decide it: GOMAXPROCS
// lowered before the layer's forward pass (by another goroutine, say)
// changes nothing, where a pass that decided again would run its whole
// products beside the helper's blocks.
func TestBlockedOutputLayerCoresDrop(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	c := newBlockedCase(t)
	want, _ := c.run(true)
	got, k := c.runWith(true, func() { runtime.GOMAXPROCS(1) })
	if !k.pipe.blocked {
		t.Fatal("the pass did not run blocked")
	}
	if math.Float64bits(got.loss) != math.Float64bits(want.loss) || !sameBits(got.dh, want.dh) ||
		!sameBits([][]float64{got.dw, got.db}, [][]float64{want.dw, want.db}) {
		t.Errorf("loss %v with the cores lowered mid-run, %v without", got.loss, want.loss)
	}
}

// within runs f, failing the test if it has not returned after d (a
// pipelined pass that deadlocks would otherwise hang the tests).
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s did not return in %v", what, d)
	}
}

// failingOp is an operation of the graph that fails.
type failingOp struct{ G.Op }

func (failingOp) Do(...G.Value) (G.Value, error) { return nil, errors.New("injected failure") }

// A pipelined run whose graph fails at any point (before the output
// layer's hidden states exist, among them, between the layer's passes,
// after them) returns the error, leaves no goroutine behind and gives
// OpenBLAS its threads back; the model then trains as a fresh one does,
// bit for bit.
func TestPipelinedRunErrors(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	in, tgt := blockedStream(25)
	stream := func() (*Model, *Stream) { return float32Stream(t, blockedLSTM) }
	gradient := func(s *Stream) [][]float64 {
		var loss float64
		var grads [][]float64
		var err error
		within(t, time.Minute, "a pipelined gradient", func() { loss, grads, err = s.Gradient(in, tgt) })
		if err != nil {
			t.Fatal(err)
		}
		return append([][]float64{{loss}}, grads...)
	}
	_, fresh := stream()
	want := gradient(fresh)

	m, s := stream()
	gradient(s) // builds the graph
	if len(m.graphs) != 1 {
		t.Fatalf("%d graphs, want 1", len(m.graphs))
	}
	var gr *graph
	for _, g := range m.graphs {
		gr = g
	}
	ex := gr.ex
	out, back := -1, -1
	for i, n := range ex.nodes {
		if n == gr.loss {
			out = i
		}
	}
	for i, op := range ex.ops {
		if op != nil && op.String() == "loss′" {
			back = i
		}
	}
	first := slices.IndexFunc(ex.ops, func(op G.Op) bool { return op != nil })
	if out < 0 || back < 0 || first < 0 {
		t.Fatalf("the graph's nodes: output %d, its backward %d, first operation %d", out, back, first)
	}
	threads, goroutines := fastblas.Threads(), runtime.NumGoroutine()
	for _, at := range []int{first, (first + out) / 2, out - 1, out + 1, back + 1, len(ex.ops) - 1} {
		if ex.ops[at] == nil {
			continue // an input
		}
		op := ex.ops[at]
		ex.ops[at] = failingOp{op}
		var err error
		within(t, time.Minute, fmt.Sprintf("a run failing at node %d of %d", at, len(ex.ops)), func() { err = ex.run() })
		ex.ops[at] = op
		if err == nil {
			t.Fatalf("a run failing at node %d returned no error", at)
		}
		for deadline := time.Now().Add(5 * time.Second); runtime.NumGoroutine() > goroutines; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("failing at node %d: %d goroutines left, %d before", at, runtime.NumGoroutine(), goroutines)
			}
		}
		if got := fastblas.Threads(); got != threads {
			t.Fatalf("failing at node %d: OpenBLAS runs %d threads, %d before", at, got, threads)
		}
	}
	s.Reset()
	if !sameBits(gradient(s), want) {
		t.Error("after the failed runs a gradient differs from a fresh model's")
	}
}

// A float32 stream's training pass run by the executor pipelines its
// output layer and computes what the same graph computes on gorgonia's
// tape machine, which runs the layer's passes without the executor's
// calls, bit for bit (OpenBLAS held on one thread for both, so that its
// products round alike); and, on one core, what the whole products do,
// within 1e-6 of each gradient's norm.
func TestBlockedOutputLayerPipelined(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	defer func(v bool) { useTapeMachine = v }(useTapeMachine)
	in, tgt := blockedStream(23)
	gradient := func(tape bool) (float64, [][]float64, int) {
		useTapeMachine = tape
		m, s := float32Stream(t, blockedLSTM)
		var loss float64
		var grads [][]float64
		var err error
		for range 2 { // two chunks: the second from the first's state
			release := fastblas.SingleThreaded()
			within(t, time.Minute, "a gradient", func() { loss, grads, err = s.Gradient(in, tgt) })
			release()
			if err != nil {
				t.Fatal(err)
			}
		}
		begun := 0
		for _, gr := range m.graphs {
			begun += gr.out.pipe.begun
		}
		return loss, grads, begun
	}
	loss, grads, begun := gradient(false)
	if begun != 2 {
		t.Fatalf("the executor began %d pipelined passes, want 2", begun)
	}
	tLoss, tGrads, tBegun := gradient(true)
	if tBegun != 0 {
		t.Fatalf("the tape machine began %d pipelined passes", tBegun)
	}
	if math.Float64bits(loss) != math.Float64bits(tLoss) || !sameBits(grads, tGrads) {
		t.Errorf("the pipelined pass (loss %v) differs from the tape machine's (%v)", loss, tLoss)
	}
	runtime.GOMAXPROCS(1)
	wLoss, wGrads, _ := gradient(false)
	if d := math.Abs(wLoss-loss) / wLoss; d > 1e-7 {
		t.Errorf("loss %v pipelined, %v whole on one core (relative %g)", loss, wLoss, d)
	}
	for i := range grads {
		if d := relDiff(wGrads[i], grads[i]); d > 1e-6 || math.IsNaN(d) {
			t.Errorf("gradient %d: pipelined differs from whole by %g of its norm", i, d)
		}
	}
}

// blockedLSTM is a language model whose float32 training passes run the
// blocked output layer on two cores, with chunks of blockedStream.
var blockedLSTM = Config{Kind: LSTM, InputVocab: 2500, OutputVocab: 2500, Embedding: 8, Hidden: 16, InitRange: 0.3}

// blockedStream returns a chunk of 40 streams whose positions make three
// blocks of the blocked output layer, drawn with the given seed.
func blockedStream(seed uint64) (in, tgt [][]int) {
	return randomStream(rand.New(rand.NewPCG(seed, seed+1)), 40, 2*(blockRows+39)/40+3, blockedLSTM.InputVocab)
}

// float32Stream returns a model of cfg in float32 and a stream of 40 on it.
func float32Stream(t *testing.T, cfg Config) (*Model, *Stream) {
	t.Helper()
	m, err := New(cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	m.Precision = Float32
	s, err := m.NewStream(40)
	if err != nil {
		t.Fatal(err)
	}
	return m, s
}
