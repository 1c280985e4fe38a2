package nsrnn

import (
	"fmt"
	"hash"
	"math"
	"runtime"
	"sync"

	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/internal/linalg"
)

// oneHot produces the (batch, vocab) one-hot input vectors of step t from
// the (batch, width) matrix of input symbol indices.
type oneHot struct {
	graph      uint64
	t, vocab   int
	batch, col int
}

func (k *oneHot) Name() string { return fmt.Sprintf("onehot%d", k.t) }
func (k *oneHot) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "onehot:%d:%d:%d:%d", k.graph, k.t, k.vocab, k.col)
}
func (k *oneHot) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	return tensor.Shape{k.batch, k.vocab}, nil
}
func (k *oneHot) Differentiable(int) bool { return false }
func (k *oneHot) Forward(out []float64, in [][]float64) {
	clear(out)
	for b := 0; b < k.batch; b++ {
		out[b*k.vocab+int(in[0][b*k.col+k.t-1])] = 1
	}
}
func (k *oneHot) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {}

// embed looks up the (batch, size) embeddings of step t's input symbols.
// Its inputs are the symbols, the embedding table and the binding's
// gradient anchor; the table's gradient is added into grad in place.
type embed struct {
	graph      uint64
	t, size    int
	batch, col int
	grad       []float64
}

func (k *embed) Name() string { return fmt.Sprintf("embed%d", k.t) }
func (k *embed) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "embed:%d:%d:%d:%d", k.graph, k.t, k.size, k.col)
}
func (k *embed) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	return tensor.Shape{k.batch, k.size}, nil
}
func (k *embed) Differentiable(i int) bool { return i == 2 }
func (k *embed) Forward(out []float64, in [][]float64) {
	for b := 0; b < k.batch; b++ {
		s := int(in[0][b*k.col+k.t-1])
		copy(out[b*k.size:(b+1)*k.size], in[1][s*k.size:(s+1)*k.size])
	}
}
func (k *embed) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {
	for b := 0; b < k.batch; b++ {
		s := int(in[0][b*k.col+k.t-1])
		row := k.grad[s*k.size : (s+1)*k.size]
		for j, g := range gradOut[b*k.size : (b+1)*k.size] {
			row[j] += g
		}
	}
}

// NoTarget marks a stream position without a target: the loss ignores it
// (padding at the end of a corpus, or a step taken only to advance the
// state).
const NoTarget = -1

// outputLoss applies the output layer y_t = W_hy h_t + b_hy to the given
// hidden states, takes log-softmax, and returns the cross-entropy of the
// targets: in sentence mode summed over positions and averaged over the
// batch (nats per sequence), in stream mode (perToken) averaged over the
// positions that have a target (nats per token). Its inputs are the hidden
// states, W_hy, b_hy, the (batch, steps) targets and the binding's
// gradient anchor; the gradients of W_hy and b_hy are added into dw and db
// in place. The hidden states of all positions are gathered into one
// matrix, so that the layer is one matrix product forward and two
// backward (its inputs do not feed back into the recurrence). It keeps the
// log-probabilities of the latest forward pass in logp, indexed
// [(t·batch + b)·vocab + v] (the probabilities with probs); the backward
// pass overwrites them with the gradient of the scores.
type outputLoss struct {
	graph                uint64
	steps, batch, hidden int
	vocab                int
	perToken             bool
	// probs makes the forward pass keep probabilities instead of
	// log-probabilities in logp (graphs with gradients: the backward pass
	// needs the softmax, and one exponential per score is saved).
	probs   bool
	dw, db  []float64
	logp    []float64
	hs, dhs []float64 // (steps·batch, hidden) gathered states and their gradient
	// logz holds the log-normalizers of the latest forward pass without probs.
	logz []float64
	// rowLoss is scratch: each row's cross-entropy (NaN without a target).
	rowLoss []float64
	// count is the number of targets of the latest forward pass.
	count int
}

func (k *outputLoss) Name() string { return "loss" }
func (k *outputLoss) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "loss:%d:%d:%d:%v", k.graph, k.steps, k.batch, k.perToken)
}
func (k *outputLoss) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != k.steps+4 {
		return nil, fmt.Errorf("got %d inputs, want %d", len(in), k.steps+4)
	}
	return tensor.ScalarShape(), nil
}
func (k *outputLoss) Differentiable(i int) bool { return i < k.steps || i == k.steps+3 }

func (k *outputLoss) divisor() float64 {
	if k.perToken {
		return float64(max(k.count, 1))
	}
	return float64(k.batch)
}

func (k *outputLoss) Forward(out []float64, in [][]float64) {
	w, bias, targets := in[k.steps], in[k.steps+1], in[k.steps+2]
	v, H, B := k.vocab, k.hidden, k.batch
	if k.hs == nil {
		k.hs = make([]float64, k.steps*B*H)
		k.logz = make([]float64, k.steps*B)
	}
	for t := 0; t < k.steps; t++ {
		copy(k.hs[t*B*H:(t+1)*B*H], in[t][:B*H])
	}
	linalg.Affine(k.logp, k.hs, w, bias, k.steps*B, H, v)
	// Each row (position t, sequence b) is normalized on its own, so the
	// rows are split among goroutines; the loss is summed afterwards in
	// row order, so the result does not depend on the split.
	rows := k.steps * B
	if len(k.rowLoss) != rows {
		k.rowLoss = make([]float64, rows)
	}
	parallelRows(rows, v, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			t, b := r/B, r%B
			row := k.logp[r*v : (r+1)*v]
			y := int(targets[b*k.steps+t])
			k.rowLoss[r] = math.NaN() // no target
			if !k.probs {
				k.logz[r] = logSoftmax(row)
				if y >= 0 {
					k.rowLoss[r] = -row[y]
				}
				continue
			}
			m := math.Inf(-1)
			for _, x := range row {
				m = max(m, x)
			}
			var zy float64
			if y >= 0 {
				zy = row[y] - m
			}
			sum := 0.0
			for i, x := range row {
				e := math.Exp(x - m)
				row[i] = e
				sum += e
			}
			inv := 1 / sum
			for i := range row {
				row[i] *= inv
			}
			if y >= 0 {
				k.rowLoss[r] = -(zy - math.Log(sum))
			}
		}
	})
	loss := 0.0
	k.count = 0
	for t := 0; t < k.steps; t++ {
		for b := 0; b < B; b++ {
			if int(targets[b*k.steps+t]) >= 0 {
				loss += k.rowLoss[t*B+b]
				k.count++
			}
		}
	}
	out[0] = loss / k.divisor()
}

func (k *outputLoss) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {
	w, targets := in[k.steps], in[k.steps+2]
	v, H, B := k.vocab, k.hidden, k.batch
	scale := gradOut[0] / k.divisor()
	dy := k.logp // overwritten in place: dy = scale·(softmax − onehot)
	parallelRows(k.steps*B, v, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			t, b := r/B, r%B
			row := dy[r*v : (r+1)*v]
			y := int(targets[b*k.steps+t])
			if y < 0 {
				clear(row)
				continue
			}
			if k.probs {
				for i, p := range row {
					row[i] = scale * p
				}
			} else {
				for i, l := range row {
					row[i] = scale * math.Exp(l)
				}
			}
			row[y] -= scale
		}
	})
	if k.dhs == nil {
		k.dhs = make([]float64, k.steps*B*H)
	}
	clear(k.dhs)
	linalg.AffineBackward(k.dhs, k.dw, k.db, dy, k.hs, w, k.steps*B, H, v)
	for t := 0; t < k.steps; t++ {
		g := gradIn[t]
		for i, d := range k.dhs[t*B*H : (t+1)*B*H] {
			g[i] += d
		}
	}
}

// parallelRows calls f on contiguous ranges of rows 0 … n−1, in parallel
// on up to GOMAXPROCS goroutines when the work (n rows of width values)
// is large enough to pay for the hand-off.
func parallelRows(n, width int, f func(lo, hi int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	if workers < 2 || n*width < 1<<18 {
		f(0, n)
		return
	}
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo, hi := n*w/workers, n*(w+1)/workers
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(lo, hi)
		}()
	}
	wg.Wait()
}

// logSoftmax replaces x by log softmax(x).
// It returns the normalizer log Σ exp(x) subtracted.
func logSoftmax(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = max(m, v)
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(v - m)
	}
	z := m + math.Log(s)
	for i := range x {
		x[i] -= z
	}
	return z
}
