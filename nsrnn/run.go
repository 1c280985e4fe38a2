package nsrnn

import (
	"fmt"
	"math"

	G "gorgonia.org/gorgonia"

	"github.com/nsrnn/nsrnn/stacks"
)

// load checks a batch and writes it into the graph's input tensors.
func (m *Model) load(batch [][]int, grad bool) (*graph, error) {
	if len(batch) == 0 {
		return nil, fmt.Errorf("nsrnn: empty batch")
	}
	n := len(batch[0])
	for i, w := range batch {
		if len(w) != n {
			return nil, fmt.Errorf("nsrnn: batch sequences must have one length: sequence 0 has %d symbols, sequence %d has %d", n, i, len(w))
		}
		for j, s := range w {
			if s < 0 || s >= m.cfg.InputVocab || s >= m.cfg.OutputVocab {
				return nil, fmt.Errorf("nsrnn: sequence %d has symbol %d at position %d, outside the vocabulary", i, s, j)
			}
		}
	}
	gr, err := m.graphFor(graphKey{n: n, batch: len(batch), grad: grad})
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

func (gr *graph) run() (float64, error) {
	gr.vm.Reset()
	if err := gr.vm.RunAll(); err != nil {
		return 0, fmt.Errorf("nsrnn: running the graph for length %d: %w", gr.key.n, err)
	}
	v, ok := gr.loss.Value().(*G.F64)
	if !ok {
		return 0, fmt.Errorf("nsrnn: loss has value %v", gr.loss.Value())
	}
	return float64(*v), nil
}

// Loss returns the cross-entropy of a batch of sequences of one length:
// the sum over the n+1 predictions w_1 … w_n, EOS of −log p, averaged over
// the batch (nats per sequence).
func (m *Model) Loss(batch [][]int) (float64, error) {
	gr, err := m.load(batch, false)
	if err != nil {
		return 0, err
	}
	return gr.run()
}

// Gradient returns the loss of a batch (as Loss) and its gradient with
// respect to each parameter, in the order of Params. The gradient slices
// are owned by the model and valid until its next call.
func (m *Model) Gradient(batch [][]int) (float64, [][]float64, error) {
	gr, err := m.load(batch, true)
	if err != nil {
		return 0, nil, err
	}
	loss, err := gr.run()
	if err != nil {
		return 0, nil, err
	}
	grads := make([][]float64, len(m.params))
	for i, gn := range gr.grads {
		if gn == nil {
			grads[i] = make([]float64, m.params[i].Size())
			continue
		}
		grads[i] = gn.Value().Data().([]float64)
		if len(grads[i]) != m.params[i].Size() {
			return 0, nil, fmt.Errorf("nsrnn: gradient of %s has %d entries, want %d", m.params[i].Name, len(grads[i]), m.params[i].Size())
		}
	}
	return loss, grads, nil
}

// LogProbs returns, for each sequence of a batch of one length n, the
// log-probabilities of every output symbol at each of the n+1 prediction
// positions: out[b][t][v] = log p(w_{t+1} = v | w_1 … w_t), where position n
// predicts EOS.
func (m *Model) LogProbs(batch [][]int) ([][][]float64, error) {
	gr, err := m.load(batch, false)
	if err != nil {
		return nil, err
	}
	if _, err := gr.run(); err != nil {
		return nil, err
	}
	n, v, bs := gr.key.n, m.cfg.OutputVocab, len(batch)
	out := make([][][]float64, bs)
	for b := range out {
		out[b] = make([][]float64, n+1)
		for t := range out[b] {
			out[b][t] = append([]float64(nil), gr.out.logp[(t*bs+b)*v:(t*bs+b+1)*v]...)
		}
	}
	return out, nil
}

// LogProb returns log p(w·EOS) of one sequence under the model.
func (m *Model) LogProb(w []int) (float64, error) {
	loss, err := m.Loss([][]int{w})
	if err != nil {
		return math.NaN(), err
	}
	return -loss, nil
}

// ActionTypeWeights runs the model on one sequence w and returns, for each
// stack update t = 1 … n−1, the weight of each stack action type (push,
// replace, pop) normalized by the weight of all actions at step t — the
// quantity of the paper's Figure 3. Only the ns+s and rns models, whose
// readings carry the PDA states, support it.
func (m *Model) ActionTypeWeights(w []int) ([][3]float64, error) {
	gr, err := m.load([][]int{w}, false)
	if err != nil {
		return nil, err
	}
	rec, ok := gr.stack.(stacks.ActionRecorder)
	if !ok {
		return nil, fmt.Errorf("nsrnn: model %s does not record stack actions", m.cfg.Kind)
	}
	if _, err := gr.run(); err != nil {
		return nil, err
	}
	out, err := rec.ActionTypeWeights()
	if err != nil {
		return nil, err
	}
	return out[0], nil
}
