package nsrnn

import (
	"fmt"
	"hash"
	"math"
	"runtime"
	"sync"

	"gorgonia.org/tensor"
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
