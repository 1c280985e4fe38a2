package nsrnn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

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
	cfg := Config{Kind: LSTM, InputVocab: 2500, OutputVocab: 2500, Embedding: 8, Hidden: 16, InitRange: 0.3}
	rng := rand.New(rand.NewPCG(23, 24))
	in, tgt := randomStream(rng, 40, 2*(blockRows+39)/40+3, cfg.InputVocab) // three blocks of positions
	gradient := func(tape bool) (float64, [][]float64, int) {
		useTapeMachine = tape
		m, err := New(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		m.Precision = Float32
		s, err := m.NewStream(40)
		if err != nil {
			t.Fatal(err)
		}
		var loss float64
		var grads [][]float64
		for range 2 { // two chunks: the second from the first's state
			release := fastblas.SingleThreaded()
			loss, grads, err = s.Gradient(in, tgt)
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
