package nsrnn

import (
	"runtime"
	"sync"
	"sync/atomic"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"

	"github.com/nsrnn/nsrnn/internal/fastblas"
)

// The output layer of a training pass in float32 (outputLoss with probs
// and Float32) works in blocks, which lets its work overlap with the
// recurrence on a second core:
//
//   - forward, the scores and softmax of a block of positions (blockSteps
//     time steps of the batch) are one product and its rows' reductions,
//     done as soon as the block's hidden states are computed: run by the
//     executor (the pipelined interface), a helper goroutine takes blocks
//     while the recurrence goes on, and the node's forward pass shares the
//     blocks left with it;
//   - backward, the gradients of the scores and of the hidden states are
//     computed in two halves of the positions on two goroutines; then the
//     helper starts on the gradients of W_hy and b_hy, a block of the
//     vocabulary at a time, while the backward pass of the recurrence
//     runs, and the run's end (finish) shares the blocks left and waits
//     for them.
//
// Every block is computed by the same code on one goroutine, whichever
// goroutine it is, so the results do not depend on the timing. During a
// pipelined run (and a blocked pass run otherwise) OpenBLAS is held on
// one thread (fastblas.SingleThreaded): the program owns the cores, and
// the products' roundings do not depend on OpenBLAS's thread count. On
// one core (GOMAXPROCS 1), where there is nothing to overlap, the layer
// keeps its whole products, which are faster there; the pure-Go build's
// products compute each entry alike whatever the block, so that its
// results are the same bits either way, where OpenBLAS's differ by
// float32 roundings.

// blockRows is about the number of positions (rows) of a block of the
// blocked output layer, and vocabBlock the vocabulary entries of a block
// of W_hy's gradient. At the Penn Treebank's sizes (32 streams, 10,000
// words) a block of 10 steps' 320 rows takes about 10 ms on one core;
// blocks of 160 rows were about 3% slower on two cores (every product
// packs W_hy anew).
const (
	blockRows  = 320
	vocabBlock = 1024
)

// pipeMinWork is the least positions·vocabulary for which a training
// pass in float32 uses the blocked output layer (the formal languages'
// few symbols keep the whole products).
const pipeMinWork = 1 << 20

// lossPipe is the state of the blocked output layer during a run.
type lossPipe struct {
	on       bool // the run was begun by an executor (pipelined)
	blocked  bool // this run's forward pass is blocked (see blocked)
	release  func()
	wg       sync.WaitGroup
	next     atomic.Int64    // the next block to claim
	ready    []chan struct{} // per block: its hidden states are in hs32
	have     []int           // per block: steps received
	inputs   chan struct{}   // closed when W_hy, b_hy and the targets are in
	abort    chan struct{}   // closed by finish: a helper still waiting returns
	w32ready chan struct{}   // closed when w32 is made
	w, bias  []float64
	targets  []float64
	inputsIn bool // inputs is closed
	pendingW bool // the gradients of W_hy and b_hy are being computed
	begun    int  // pipelined runs begun (for the tests)
}

// blocked reports whether a pass of k runs the blocked output layer:
// a training pass in float32, large enough, with a second core to
// overlap with (on one, the whole products are faster).
func (k *outputLoss) blocked() bool {
	return k.prec == Float32 && k.probs && k.steps*k.batch*k.vocab >= pipeMinWork && helperWanted()
}

// blockSteps returns the time steps of a block, and the number of blocks.
func (k *outputLoss) blockSteps() (per, n int) {
	per = max(1, (blockRows+k.batch-1)/k.batch)
	return per, (k.steps + per - 1) / per
}

// helperWanted reports whether a second goroutine can share the blocks.
func helperWanted() bool { return runtime.GOMAXPROCS(0) >= 2 }

// watches implements pipelined: the hidden states, W_hy, b_hy and the
// targets.
func (k *outputLoss) watches(arg int) bool { return arg <= k.steps+2 }

// begin implements pipelined: it decides whether the run is blocked (the
// one decision of the run, from the cores it sees now), and if so holds
// OpenBLAS on one thread and starts the helper, which waits for the
// layer's inputs and then for the blocks' states.
func (k *outputLoss) begin() {
	p := &k.pipe
	p.on, p.pendingW = false, false
	if !k.blocked() {
		return
	}
	p.on = true
	p.begun++
	k.allocBlocked()
	p.release = fastblas.SingleThreaded()
	_, nb := k.blockSteps()
	if len(p.ready) != nb {
		p.ready, p.have = make([]chan struct{}, nb), make([]int, nb)
	}
	for b := range p.ready {
		p.ready[b] = make(chan struct{})
		p.have[b] = 0
	}
	p.inputs, p.w32ready, p.abort = make(chan struct{}), make(chan struct{}), make(chan struct{})
	p.w, p.bias, p.targets, p.inputsIn = nil, nil, nil, false
	p.next.Store(0)
	// blocked saw a second core: the helper.
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		select {
		case <-p.inputs:
		case <-p.abort: // the run failed before the layer's inputs
			return
		}
		toFloat32(k.w32, p.w)
		close(p.w32ready)
		k.claimForward()
	}()
}

// operandReady implements pipelined: it keeps a hidden state (in float32
// too) and opens its block to the helper once the block is complete, or
// keeps W_hy, b_hy or the targets.
func (k *outputLoss) operandReady(arg int, v []float64) {
	p := &k.pipe
	if !p.on {
		return
	}
	H, B := k.hidden, k.batch
	switch {
	case arg < k.steps:
		t := arg
		copy(k.hs[t*B*H:(t+1)*B*H], v[:B*H])
		toFloat32(k.hs32[t*B*H:(t+1)*B*H], k.hs[t*B*H:(t+1)*B*H])
		per, _ := k.blockSteps()
		b := t / per
		p.have[b]++
		if p.have[b] == min(per, k.steps-b*per) {
			close(p.ready[b])
		}
		return
	case arg == k.steps:
		p.w = v
	case arg == k.steps+1:
		p.bias = v
	case arg == k.steps+2:
		p.targets = v
	}
	if p.w != nil && p.bias != nil && p.targets != nil && !p.inputsIn {
		p.inputsIn = true
		close(p.inputs)
	}
}

// finish implements pipelined: it shares the gradient blocks left, makes
// a helper still waiting return, waits for it and gives OpenBLAS its
// threads back.
func (k *outputLoss) finish() {
	p := &k.pipe
	if !p.on {
		return
	}
	if p.pendingW {
		k.claimWeightGrads()
		p.pendingW = false
	}
	close(p.abort)
	p.wg.Wait()
	p.release()
	p.on = false
}

// allocBlocked makes the buffers of the blocked passes.
func (k *outputLoss) allocBlocked() {
	H, rows := k.hidden, k.steps*k.batch
	if k.hs == nil {
		k.hs = make([]float64, rows*H)
		k.logz = make([]float64, rows)
		k.rowLoss = make([]float64, rows)
	}
	k.alloc32()
}

// claimForward computes forward blocks, each once, until none is left,
// waiting for each block's hidden states.
func (k *outputLoss) claimForward() {
	p := &k.pipe
	_, nb := k.blockSteps()
	target := k.targetOf(p.targets)
	for {
		b := int(p.next.Add(1)) - 1
		if b >= nb {
			return
		}
		select {
		case <-p.ready[b]:
		case <-p.abort: // the run failed before the block's states
			return
		}
		k.forwardBlock(b, p.bias, target)
	}
}

// blockRange returns the rows [lo, hi) of block b.
func (k *outputLoss) blockRange(b int) (lo, hi int) {
	per, _ := k.blockSteps()
	return b * per * k.batch, min((b+1)*per, k.steps) * k.batch
}

// forwardBlock computes block b's scores (x W_hyᵀ in float32), and per
// row its unnormalized exponentials, normalizer and cross-entropy, as
// forward32 does (with probs, which the blocked passes have).
func (k *outputLoss) forwardBlock(b int, bias []float64, target func(int) int) {
	v, H := k.vocab, k.hidden
	lo, hi := k.blockRange(b)
	blas32.Gemm(blas.NoTrans, blas.Trans, 1,
		blas32.General{Rows: hi - lo, Cols: H, Stride: H, Data: k.hs32[lo*H : hi*H]},
		blas32.General{Rows: v, Cols: H, Stride: H, Data: k.w32},
		0, blas32.General{Rows: hi - lo, Cols: v, Stride: v, Data: k.logp32[lo*v : hi*v]})
	for r := lo; r < hi; r++ {
		k.normalizeRow32(r, bias, target)
	}
}

// forwardBlocked is the forward pass of the blocked output layer: the
// blocks left to claim when the executor ran it (pipelined), or every
// block, split among goroutines.
func (k *outputLoss) forwardBlocked(w, bias, targets []float64, target func(int) int) {
	p := &k.pipe
	if p.on {
		if !p.inputsIn { // (an executor hands them over first)
			p.w, p.bias, p.targets = w, bias, targets
			p.inputsIn = true
			close(p.inputs)
		}
		<-p.w32ready
		k.claimForward()
		p.wg.Wait() // the helper's last block
		return
	}
	defer fastblas.SingleThreaded()() // the same products as a pipelined pass's
	k.allocBlocked()
	toFloat32(k.hs32, k.hs)
	toFloat32(k.w32, w)
	_, nb := k.blockSteps()
	parallelRows(nb, blockRows*k.vocab, func(lo, hi int) {
		for b := lo; b < hi; b++ {
			k.forwardBlock(b, bias, target)
		}
	})
}

// backwardRows computes the score gradients dy = scale·(softmax −
// onehot) of rows lo … hi−1 in place of their exponentials, and their
// rows of ∂L/∂h (dhs).
func (k *outputLoss) backwardRows(lo, hi int, scale float64, target func(int) int) {
	v, H := k.vocab, k.hidden
	for r := lo; r < hi; r++ {
		row := k.logp32[r*v : (r+1)*v]
		y := target(r)
		if y < 0 {
			clear(row)
			continue
		}
		fs := float32(scale * k.rowScale[r])
		for i, e := range row {
			row[i] = fs * e
		}
		row[y] -= float32(scale)
	}
	blas32.Gemm(blas.NoTrans, blas.NoTrans, 1,
		blas32.General{Rows: hi - lo, Cols: v, Stride: v, Data: k.logp32[lo*v : hi*v]},
		blas32.General{Rows: v, Cols: H, Stride: H, Data: k.w32},
		0, blas32.General{Rows: hi - lo, Cols: H, Stride: H, Data: k.dhs32[lo*H : hi*H]})
	for i, d := range k.dhs32[lo*H : hi*H] {
		k.dhs[lo*H+i] = float64(d)
	}
}

// weightGradBlock adds into dw and db the gradients of W_hy's rows and
// b_hy's entries of vocabulary block c: dyᵀ·h and dyᵀ·1 over the block's
// columns of dy.
func (k *outputLoss) weightGradBlock(c int) {
	v, H, rows := k.vocab, k.hidden, k.steps*k.batch
	lo, hi := c*vocabBlock, min((c+1)*vocabBlock, v)
	dy := blas32.General{Rows: rows, Cols: hi - lo, Stride: v, Data: k.logp32[lo:]}
	if k.dw != nil {
		blas32.Gemm(blas.Trans, blas.NoTrans, 1, dy,
			blas32.General{Rows: rows, Cols: H, Stride: H, Data: k.hs32},
			0, blas32.General{Rows: hi - lo, Cols: H, Stride: H, Data: k.dw32[lo*H : hi*H]})
		for i, d := range k.dw32[lo*H : hi*H] {
			k.dw[lo*H+i] += float64(d)
		}
	}
	if k.db != nil {
		blas32.Gemv(blas.Trans, 1, dy, blas32.Vector{N: rows, Inc: 1, Data: k.ones32}, 0, blas32.Vector{N: hi - lo, Inc: 1, Data: k.db32[lo:hi]})
		for i, d := range k.db32[lo:hi] {
			k.db[lo+i] += float64(d)
		}
	}
}

// claimWeightGrads computes vocabulary blocks of the weight gradients,
// each once, until none is left.
func (k *outputLoss) claimWeightGrads() {
	nc := (k.vocab + vocabBlock - 1) / vocabBlock
	for {
		c := int(k.pipe.next.Add(1)) - 1
		if c >= nc {
			return
		}
		k.weightGradBlock(c)
	}
}

// backwardBlocked is the backward pass of the blocked output layer: the
// score and hidden-state gradients of every block, split among
// goroutines; then the gradients of W_hy and b_hy, left to a helper and
// to the run's end (finish) when the executor runs the pass, done here
// otherwise.
func (k *outputLoss) backwardBlocked(scale float64, target func(int) int) {
	v, H, rows := k.vocab, k.hidden, k.steps*k.batch
	p := &k.pipe
	if !p.on {
		defer fastblas.SingleThreaded()() // the same products as a pipelined pass's
	}
	if k.dhs32 == nil {
		k.dhs32 = make([]float32, rows*H)
		k.dw32 = make([]float32, v*H)
	}
	if k.ones32 == nil {
		k.ones32 = make([]float32, rows)
		for i := range k.ones32 {
			k.ones32[i] = 1
		}
		k.db32 = make([]float32, v)
	}
	// The rows in two halves, one product each (each product packs W_hy
	// anew, so fewer are faster), the second on a goroutine.
	half := rows / 2
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		k.backwardRows(half, rows, scale, target)
	}()
	k.backwardRows(0, half, scale, target)
	wg.Wait()
	nc := (v + vocabBlock - 1) / vocabBlock
	if !p.on {
		parallelRows(nc, vocabBlock*rows, func(lo, hi int) {
			for c := lo; c < hi; c++ {
				k.weightGradBlock(c)
			}
		})
		return
	}
	p.next.Store(0)
	p.pendingW = true
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		k.claimWeightGrads()
	}()
}
