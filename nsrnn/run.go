package nsrnn

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"gonum.org/v1/gonum/floats"
	G "gorgonia.org/gorgonia"

	"github.com/nsrnn/nsrnn/stacks"
)

// ErrConcurrentUse is wrapped by the error of a call that would compute
// with a model while another goroutine computes with it (a Model and its
// streams are not safe for concurrent use: the call is refused rather
// than racing).
var ErrConcurrentUse = errors.New("nsrnn: the model is in use by another goroutine")

// mustBeMade panics (a programmer error) for a nil or zero-value Model,
// one not made by New, Load or UnmarshalModel, rather than letting it
// compute with an empty configuration.
func (m *Model) mustBeMade() {
	if m == nil || m.lstm == nil {
		panic("nsrnn: a Model not made by New, Load or UnmarshalModel (nil or the zero value)")
	}
}

// acquire marks the model busy for a computation, or refuses one that
// would overlap another's (ErrConcurrentUse); release ends it.
// The model's fields (checkFields) are checked here, at the start of
// every computation, on the CPU as on a device.
func (m *Model) acquire() error {
	m.mustBeMade()
	if !m.busy.CompareAndSwap(false, true) {
		return fmt.Errorf("%w: a Model (and its streams) computes one thing at a time; give each goroutine a model of its own (UnmarshalModel of MarshalBinary copies one)", ErrConcurrentUse)
	}
	if err := m.checkFields(); err != nil {
		m.release()
		return err
	}
	return nil
}

func (m *Model) release() { m.busy.Store(false) }

// checkSymbols reports a symbol outside the model's vocabularies.
func (m *Model) checkSymbols(w []int, what string, i int, output bool) error {
	m.mustBeMade()
	for j, s := range w {
		if s < 0 || s >= m.cfg.InputVocab || (output && s >= m.cfg.OutputVocab) {
			return fmt.Errorf("nsrnn: %s %d has symbol %d at position %d, outside the vocabulary", what, i, s, j)
		}
	}
	return nil
}

// check reports a sentence-mode batch that is empty, has sequences of
// different lengths or a symbol outside the vocabularies, or a symbol that
// is EOS: a string w_1 … w_n is followed by EOS, the last prediction, and
// never holds it (unlike a stream's inputs, which are its targets fed
// back, EOS among them).
func (m *Model) check(batch [][]int) error {
	m.mustBeMade()
	if len(batch) == 0 {
		return fmt.Errorf("nsrnn: empty batch")
	}
	n, eos := len(batch[0]), m.EOS()
	for i, w := range batch {
		if len(w) != n {
			return fmt.Errorf("nsrnn: batch sequences must have one length: sequence 0 has %d symbols, sequence %d has %d", n, i, len(w))
		}
		if err := m.checkSymbols(w, "sequence", i, true); err != nil {
			return err
		}
		if j := slices.Index(w, eos); j >= 0 {
			return fmt.Errorf("nsrnn: sequence %d has the end symbol EOS (%d) at position %d: in sentence mode EOS ends every string and is not one of its symbols", i, eos, j)
		}
	}
	return nil
}

// load checks a batch and writes it into the graph's input tensors.
func (m *Model) load(batch [][]int, grad bool) (*graph, error) {
	if err := m.check(batch); err != nil {
		return nil, err
	}
	return m.loadPart(batch, grad, 0, 0)
}

// loadPart writes a checked batch into the input tensors of the graph of
// part part of parts (0: a batch not split).
func (m *Model) loadPart(batch [][]int, grad bool, part, parts int) (*graph, error) {
	n := len(batch[0])
	gr, err := m.graphFor(graphKey{mode: sentenceMode, n: n, batch: len(batch), grad: grad, part: part, parts: parts})
	if err != nil {
		return nil, err
	}
	width := max(n, 1)
	tok, tgt := gr.tokens.Float64s(), gr.targets.Float64s()
	for i, w := range batch {
		for j, s := range w {
			tok[i*width+j] = float64(s)
			tgt[i*(n+1)+j] = float64(s)
		}
		tgt[i*(n+1)+n] = float64(m.EOS())
	}
	return gr, nil
}

// parts returns the number of parts a batch of size b is split into.
func (m *Model) parts(b int) int {
	w := min(m.Workers, b)
	if w > 1 && m.stack != nil {
		if _, ok := m.stack.(stacks.Replicator); !ok {
			return 1
		}
	}
	return max(w, 1)
}

// runParts runs a batch split into m.parts parts (contiguous, sizes
// differing by at most one), each on its own goroutine, and returns the
// batch's loss (the parts' losses weighted by their sizes) and, with
// grad, its gradients.
func (m *Model) runParts(batch [][]int, grad bool) (float64, [][]float64, error) {
	if err := m.check(batch); err != nil {
		return 0, nil, err
	}
	np := m.parts(len(batch))
	if np == 1 {
		gr, err := m.loadPart(batch, grad, 0, 0)
		if err != nil {
			return 0, nil, err
		}
		loss, err := gr.run(!grad)
		if err != nil || !grad {
			return loss, nil, err
		}
		return loss, m.grads(gr), nil
	}
	grs := make([]*graph, np)
	weights := make([]float64, np)
	for p, lo := 0, 0; p < np; p++ {
		size := len(batch) / np
		if p < len(batch)%np {
			size++
		}
		gr, err := m.loadPart(batch[lo:lo+size], grad, p, np)
		if err != nil {
			return 0, nil, err
		}
		grs[p], weights[p] = gr, float64(size)/float64(len(batch))
		lo += size
	}
	losses, errs := make([]float64, np), make([]error, np)
	var wg sync.WaitGroup
	for p := 1; p < np; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			losses[p], errs[p] = grs[p].run(!grad)
		}()
	}
	losses[0], errs[0] = grs[0].run(!grad)
	wg.Wait()
	var loss float64
	for p, err := range errs {
		if err != nil {
			return 0, nil, err
		}
		loss += weights[p] * losses[p]
	}
	if !grad {
		return loss, nil, nil
	}
	if m.partGrads == nil {
		m.partGrads = make([][]float64, len(m.params))
		for i, p := range m.params {
			m.partGrads[i] = make([]float64, p.Size())
		}
	}
	for i, prm := range m.params {
		dst := m.partGrads[i]
		clear(dst)
		for p, gr := range grs {
			floats.AddScaled(dst, weights[p], gr.pb.Grad(prm))
		}
	}
	return loss, m.partGrads, nil
}

// run runs the graph and returns its loss. lossOnly says that no one
// will read the run's scores or log-probabilities (a loss without
// gradients), which lets the output layer make them a block at a time.
func (gr *graph) run(lossOnly bool) (float64, error) {
	gr.out.lossOnly = lossOnly && !gr.key.grad
	if gr.key.grad {
		gr.pb.ZeroGrads()
	}
	if gr.ex != nil {
		if err := gr.ex.run(); err != nil {
			return 0, fmt.Errorf("nsrnn: running the graph for length %d: %w", gr.key.n, err)
		}
	} else {
		gr.vm.Reset()
		if err := gr.vm.RunAll(); err != nil {
			return 0, fmt.Errorf("nsrnn: running the graph for length %d: %w", gr.key.n, err)
		}
	}
	if gr.key.grad {
		if err := gr.pb.CollectDiff(); err != nil {
			return 0, fmt.Errorf("nsrnn: the graph for length %d: %w", gr.key.n, err)
		}
	}
	v, ok := gr.value(gr.loss).(*G.F64)
	if !ok {
		return 0, fmt.Errorf("nsrnn: loss has value %v", gr.value(gr.loss))
	}
	return float64(*v), nil
}

// grads returns the gradient of every parameter of m from the graph's
// accumulators, in the order of Params.
func (m *Model) grads(gr *graph) [][]float64 {
	out := make([][]float64, len(m.params))
	for i, p := range m.params {
		out[i] = gr.pb.Grad(p)
	}
	return out
}

// Loss returns the cross-entropy of a batch of sequences of one length:
// the sum over the n+1 predictions w_1 … w_n, EOS of −log p, averaged over
// the batch (nats per sequence).
func (m *Model) Loss(batch [][]int) (float64, error) {
	if err := m.check(batch); err != nil {
		return 0, err
	}
	if err := m.acquire(); err != nil {
		return 0, err
	}
	defer m.release()
	r, err := m.engine().sentence(batch, pass{})
	return r.loss, err
}

// Gradient returns the loss of a batch (as Loss) and its gradient with
// respect to each parameter, in the order of Params. The gradient slices
// are owned by the model and valid until its next call.
func (m *Model) Gradient(batch [][]int) (float64, [][]float64, error) {
	if err := m.check(batch); err != nil {
		return 0, nil, err
	}
	if err := m.acquire(); err != nil {
		return 0, nil, err
	}
	defer m.release()
	r, err := m.engine().sentence(batch, pass{grad: true, hostGrads: true})
	return r.loss, r.grads, err
}

// LogProbs returns, for each sequence of a batch of one length n, the
// log-probabilities of every output symbol at each of the n+1 prediction
// positions: out[b][t][v] = log p(w_{t+1} = v | w_1 … w_t), where position n
// predicts EOS.
func (m *Model) LogProbs(batch [][]int) ([][][]float64, error) {
	if err := m.check(batch); err != nil {
		return nil, err
	}
	if err := m.acquire(); err != nil {
		return nil, err
	}
	defer m.release()
	r, err := m.engine().sentence(batch, pass{logProbs: true})
	return r.lp, err
}

// logProbs copies the output log-probabilities of the latest run,
// out[b][t][v].
func (gr *graph) logProbs() [][][]float64 {
	k := gr.out
	out := make([][][]float64, k.batch)
	for b := range out {
		out[b] = make([][]float64, k.steps)
		for t := range out[b] {
			out[b][t] = k.logProbRow(make([]float64, 0, k.vocab), t*k.batch+b)
		}
	}
	return out
}

// logits copies the raw output scores of the latest run (without
// gradients), out[b][t][v] = y_t[v]: the log-probabilities plus each
// row's normalizer.
func (gr *graph) logits() [][][]float64 {
	out := gr.logProbs()
	k := gr.out
	for b := range out {
		for t, row := range out[b] {
			z := k.logz[t*k.batch+b]
			for v := range row {
				row[v] += z
			}
		}
	}
	return out
}

// LogProb returns log p(w·EOS) of one sequence under the model.
func (m *Model) LogProb(w []int) (float64, error) {
	loss, err := m.Loss([][]int{w})
	if err != nil {
		return math.NaN(), err
	}
	return -loss, nil
}

// StackConfig returns the configuration of the model's nondeterministic
// stack, and false for the other kinds.
func (m *Model) StackConfig() (stacks.NSConfig, bool) {
	if m.kind.NSConfig == nil {
		return stacks.NSConfig{}, false
	}
	return m.kind.NSConfig(m.cfg), true
}

// ActionLogWeights runs the model on one sequence w (in sentence mode) and
// returns the log-weights of the stack actions of its n−1 stack updates, in
// the layout of stacks.Run: out[t−1] holds step t's NumActions
// log-weights (normalized for NS and NS+S). Only the nondeterministic
// stacks have them. Feed them to stacks.ActionTypeWeights for the paper's
// Figure 3, or to stacks.Viterbi for the best run.
func (m *Model) ActionLogWeights(w []int) ([][]float64, error) {
	if m.kind.NSConfig == nil {
		return nil, fmt.Errorf("nsrnn: model %s has no nondeterministic stack actions", m.cfg.Kind)
	}
	if err := m.acquire(); err != nil {
		return nil, err
	}
	defer m.release()
	// The actions are computed on the CPU, from the device's parameters
	// when the model is on a GPU.
	if err := m.syncHost(); err != nil {
		return nil, err
	}
	gr, err := m.load([][]int{w}, false)
	if err != nil {
		return nil, err
	}
	if _, err := gr.run(false); err != nil {
		return nil, err
	}
	if len(w) < 2 {
		return [][]float64{}, nil
	}
	rec, ok := gr.stack.(stacks.ActionRecorder)
	if !ok {
		return nil, fmt.Errorf("nsrnn: model %s does not record stack actions", m.cfg.Kind)
	}
	return rec.ActionLogWeights()
}

// ActionTypeWeights runs the model on one sequence w and returns, for each
// stack update t = 1 … n−1, the weight of each stack action type (push,
// replace, pop) normalized by the weight of all actions at step t — the
// quantity of the paper's Figure 3 (see stacks.ActionTypeWeights). It
// works for all four nondeterministic variants.
func (m *Model) ActionTypeWeights(w []int) ([][3]float64, error) {
	lw, err := m.ActionLogWeights(w)
	if err != nil {
		return nil, err
	}
	out, err := stacks.ActionTypeWeights(m.kind.NSConfig(m.cfg), 1, lw)
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// Viterbi runs the model on one sequence w (in sentence mode) and decodes
// the highest-weight run of its nondeterministic stack over the n−1 stack
// updates: the operation of every step, the stack after it, and the run's
// log-weight (see stacks.Viterbi).
func (m *Model) Viterbi(w []int) (stacks.ViterbiRun, error) {
	lw, err := m.ActionLogWeights(w)
	if err != nil {
		return stacks.ViterbiRun{}, err
	}
	runs, err := stacks.Viterbi(m.kind.NSConfig(m.cfg), 1, lw)
	if err != nil {
		return stacks.ViterbiRun{}, err
	}
	return runs[0], nil
}
