package nsrnn

import (
	"fmt"
	"hash"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/internal/linalg"
	"github.com/nsrnn/nsrnn/internal/softmax"
)

// NoTarget marks a stream position without a target: the loss ignores it
// (padding at the end of a corpus, or a step taken only to advance the
// state).
const NoTarget = -1

// Precision is the floating-point arithmetic of a model's large matrix
// products; see Model.Precision.
type Precision uint8

const (
	// Float64 computes everything in float64, with the standard
	// library's exponential. It is the default.
	Float64 Precision = iota
	// Float32 computes the output layer's three matrix products and the
	// LSTM's (input and recurrent products and their gradients) in
	// float32, on float32 copies of the weights made at each run; keeps
	// the output layer's probabilities (or scores) in float32; and takes
	// the softmax's exponentials with a table-driven polynomial accurate
	// to 1e-10 relative. The LSTM's gates and states, normalizers,
	// losses, the stacks and the gradients added into the float64
	// parameters stay float64.
	Float32
)

// String returns "float64" or "float32".
func (p Precision) String() string {
	switch p {
	case Float64:
		return "float64"
	case Float32:
		return "float32"
	}
	return fmt.Sprintf("Precision(%d)", uint8(p))
}

// ParsePrecision parses "float64" or "float32".
func ParsePrecision(s string) (Precision, error) {
	switch s {
	case "float64":
		return Float64, nil
	case "float32":
		return Float32, nil
	}
	return 0, fmt.Errorf("precision %q: want float64 or float32", s)
}

// outputLoss applies the output layer y_t = W_hy h_t + b_hy to the given
// hidden states, takes log-softmax, and returns the cross-entropy of the
// targets: in sentence mode summed over positions and averaged over the
// batch (nats per sequence), in stream mode (perToken) averaged over the
// positions that have a target (nats per token). Its inputs are the hidden
// states, W_hy, b_hy, the (batch, steps) targets and the binding's
// gradient anchor; the gradients of W_hy and b_hy are added into dw and db
// in place. The hidden states of all positions are gathered into one
// matrix, so that the layer is one matrix product forward and two
// backward (its inputs do not feed back into the recurrence).
//
// It keeps the log-probabilities of the latest forward pass, indexed
// [(t·batch + b)·vocab + v], in logp (float64; with probs, probabilities)
// or, when prec was Float32 at the forward pass (f32 records which), the
// scores in logp32 (see forward32). The backward pass overwrites them with
// the gradient of the scores.
type outputLoss struct {
	graph                uint64
	steps, batch, hidden int
	vocab                int
	perToken             bool
	// probs makes the forward pass keep probabilities instead of
	// log-probabilities (graphs with gradients: the backward pass needs
	// the softmax, and one exponential per score is saved).
	probs bool
	// prec is the model's Precision, set whenever the model hands
	// the graph out for a run. (A pointer to the model's field would tie
	// the kernel to the model: a cycle through gorgonia's machine, whose
	// finalizer then keeps the whole model alive forever.)
	prec Precision
	f32  bool // the latest forward pass ran in float32
	// lossOnly, set for a run whose scores no one reads (a loss without
	// gradients or log-probabilities), lets a float32 pass make the
	// scores a block of the vocabulary at a time (forward32Loss) instead
	// of keeping them all; kept records that the latest pass kept them.
	lossOnly, kept bool
	dw, db         []float64
	pipe           lossPipe  // the blocked layer's state (output_pipe.go)
	logp           []float64 // allocated at the first float64 pass
	logp32         []float32 // allocated at the first float32 pass
	// hs and dhs are the (steps·batch, hidden) gathered states and their
	// gradient; hs32, w32, dhs32 and dw32 are float32 copies and scratch.
	hs, dhs          []float64
	hs32, w32, dhs32 []float32
	dw32             []float32
	ones32, db32     []float32 // backward32's bias gradient: a vector of ones, scratch
	logz             []float64 // each row's log-normalizer
	rowScale         []float64 // float32 passes with probs: each row's 1/Σ exp
	bias             []float64 // b_hy of the latest forward pass
	rowLoss          []float64 // scratch: each row's cross-entropy (NaN without a target)
	rowMax, rowSum   []float64 // forward32Loss: each row's running maximum and sum
	count            int       // the number of targets of the latest forward pass
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

// logProbRow returns row r of the latest log-probabilities (without
// probs) as float64, appended to dst.
func (k *outputLoss) logProbRow(dst []float64, r int) []float64 {
	if !k.kept {
		panic("nsrnn: the scores of a loss-only pass were read")
	}
	v := k.vocab
	if !k.f32 {
		return append(dst, k.logp[r*v:(r+1)*v]...)
	}
	z := k.logz[r]
	for i, x := range k.logp32[r*v : (r+1)*v] {
		dst = append(dst, float64(x)+k.bias[i]-z)
	}
	return dst
}

// targetOf returns the target of row r = t·batch + b of the gathered
// positions, from the (batch, steps) target matrix (NoTarget for none).
func (k *outputLoss) targetOf(targets []float64) func(r int) int {
	return func(r int) int { return int(targets[(r%k.batch)*k.steps+r/k.batch]) }
}

func (k *outputLoss) Forward(out []float64, in [][]float64) {
	w, bias, targets := in[k.steps], in[k.steps+1], in[k.steps+2]
	H, B := k.hidden, k.batch
	rows := k.steps * B
	if k.hs == nil {
		k.hs = make([]float64, rows*H)
		k.logz = make([]float64, rows)
		k.rowLoss = make([]float64, rows)
	}
	k.f32 = k.prec == Float32
	// A pipelined run's begin decided (the cores it saw then); otherwise
	// the pass decides now.
	blocked := k.pipe.on || (k.f32 && k.blocked())
	if !blocked || !k.pipe.on { // the pipelined layer has them
		for t := 0; t < k.steps; t++ {
			copy(k.hs[t*B*H:(t+1)*B*H], in[t][:B*H])
		}
	}
	k.pipe.blocked = blocked
	k.bias = bias
	target := k.targetOf(targets)
	k.kept = true
	switch {
	case blocked:
		k.forwardBlocked(w, bias, targets, target)
	case k.f32 && k.lossOnly && !k.probs:
		k.forward32Loss(w, bias, target)
		k.kept = false
	case k.f32:
		k.forward32(w, bias, target)
	default:
		k.forward64(w, bias, target)
	}
	loss := 0.0
	k.count = 0
	for r := 0; r < rows; r++ {
		if target(r) >= 0 {
			loss += k.rowLoss[r]
			k.count++
		}
	}
	out[0] = loss / k.divisor()
}

// forward64 is the float64 forward pass. Each row (position t, sequence b)
// is normalized on its own, so the rows are split among goroutines; the
// loss is summed afterwards in row order, so the result does not depend on
// the split.
func (k *outputLoss) forward64(w, bias []float64, target func(int) int) {
	v, H, rows := k.vocab, k.hidden, k.steps*k.batch
	if k.logp == nil {
		k.logp = make([]float64, rows*v)
	}
	linalg.Affine(k.logp, k.hs, w, bias, rows, H, v)
	parallelRows(rows, v, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := k.logp[r*v : (r+1)*v]
			y := target(r)
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
}

// forward32 is the float32 forward pass: one float32 product gives the
// raw scores x W_hyᵀ, kept in logp32; each row's scores y = x W_hyᵀ + b are
// then normalized in float64, in two passes (the maximum, then the
// exponentials and their sum). With probs, logp32 keeps the unnormalized
// exponentials and rowScale each row's 1/Σ; without, it keeps the raw
// scores and logz the normalizers, and logProbRow makes log-probabilities
// from them on demand.
func (k *outputLoss) forward32(w, bias []float64, target func(int) int) {
	v, H, rows := k.vocab, k.hidden, k.steps*k.batch
	k.alloc32()
	toFloat32(k.hs32, k.hs)
	toFloat32(k.w32, w)
	blas32.Gemm(blas.NoTrans, blas.Trans, 1,
		blas32.General{Rows: rows, Cols: H, Stride: H, Data: k.hs32},
		blas32.General{Rows: v, Cols: H, Stride: H, Data: k.w32},
		0, blas32.General{Rows: rows, Cols: v, Stride: v, Data: k.logp32})
	parallelRows(rows, v, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			k.normalizeRow32(r, bias, target)
		}
	})
}

// alloc32 makes the buffers of forward32 and the blocked passes.
func (k *outputLoss) alloc32() {
	v, H, rows := k.vocab, k.hidden, k.steps*k.batch
	if len(k.logp32) < rows*v { // forward32Loss's, if any, holds a block
		k.logp32 = make([]float32, rows*v)
	}
	if k.hs32 == nil {
		k.hs32 = make([]float32, rows*H)
		k.w32 = make([]float32, v*H)
	}
	if k.rowScale == nil {
		k.rowScale = make([]float64, rows)
	}
}

// normalizeRow32 normalizes row r of the float32 scores x W_hyᵀ in
// logp32 in float64 (forward32): its normalizer, its cross-entropy and,
// with probs, its exponentials in place and their 1/Σ.
func (k *outputLoss) normalizeRow32(r int, bias []float64, target func(int) int) {
	row := k.logp32[r*k.vocab : (r+1)*k.vocab]
	y := target(r)
	xy := 0.0
	if y >= 0 {
		xy = float64(row[y]) + bias[y]
	}
	m := softmax.MaxScore(row, bias)
	sum := softmax.ExpScores(row, bias, m, k.probs)
	z := m + math.Log(sum)
	k.logz[r] = z
	if k.probs {
		k.rowScale[r] = 1 / sum
	}
	k.rowLoss[r] = math.NaN()
	if y >= 0 {
		k.rowLoss[r] = z - xy
	}
}

// lossBlock is the number of vocabulary columns whose scores
// forward32Loss makes at a time: a (rows, lossBlock) float32 block of a
// chunk of 32×35 positions takes 1.1 MB, which stays in the caches
// between its product and its reduction.
const lossBlock = 256

// forward32Loss is forward32 for a pass that needs the loss alone: the
// scores are made lossBlock columns at a time, each block's product
// reduced at once into every row's running maximum and sum of
// exponentials (rescaled when a block holds a larger score), so that the
// (rows, vocab) scores are never written out and read back from memory.
// The products are the same; the normalizers differ from forward32's in
// the order of their sums alone (within a few float64 roundings).
func (k *outputLoss) forward32Loss(w, bias []float64, target func(int) int) {
	v, H, rows := k.vocab, k.hidden, k.steps*k.batch
	nb := min(lossBlock, v)
	if k.rowMax == nil {
		k.rowMax = make([]float64, rows)
		k.rowSum = make([]float64, rows)
	}
	if k.hs32 == nil {
		k.hs32 = make([]float32, rows*H)
		k.w32 = make([]float32, v*H)
	}
	if len(k.logp32) < rows*nb {
		k.logp32 = make([]float32, rows*nb)
	}
	toFloat32(k.hs32, k.hs)
	toFloat32(k.w32, w)
	for r := range rows {
		k.rowMax[r], k.rowSum[r] = math.Inf(-1), 0
		k.rowLoss[r] = math.NaN()
	}
	x := blas32.General{Rows: rows, Cols: H, Stride: H, Data: k.hs32}
	for c0 := 0; c0 < v; c0 += nb {
		c1 := min(c0+nb, v)
		n := c1 - c0
		block := k.logp32[:rows*n]
		blas32.Gemm(blas.NoTrans, blas.Trans, 1, x,
			blas32.General{Rows: n, Cols: H, Stride: H, Data: k.w32[c0*H : c1*H]},
			0, blas32.General{Rows: rows, Cols: n, Stride: n, Data: block})
		b := bias[c0:c1]
		parallelRows(rows, n, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				row := block[r*n : (r+1)*n]
				if y := target(r); y >= c0 && y < c1 {
					k.rowLoss[r] = -(float64(row[y-c0]) + b[y-c0]) // the target's score, negated; the normalizer is added at the end
				}
				m := k.rowMax[r]
				if bm := softmax.MaxScore(row, b); bm > m {
					if k.rowSum[r] > 0 {
						k.rowSum[r] *= softmax.Exp(m - bm)
					}
					m, k.rowMax[r] = bm, bm
				}
				k.rowSum[r] += softmax.ExpScores(row, b, m, false)
			}
		})
	}
	for r := range rows {
		z := k.rowMax[r] + math.Log(k.rowSum[r])
		k.logz[r] = z
		if target(r) >= 0 {
			k.rowLoss[r] += z
		}
	}
}

func (k *outputLoss) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {
	w, targets := in[k.steps], in[k.steps+2]
	v, H, B := k.vocab, k.hidden, k.batch
	rows := k.steps * B
	scale := gradOut[0] / k.divisor()
	target := k.targetOf(targets)
	if k.dhs == nil {
		k.dhs = make([]float64, rows*H)
	}
	switch {
	case k.f32 && k.pipe.blocked:
		k.backwardBlocked(scale, target)
	case k.f32:
		k.backward32(scale, target)
	default:
		dy := k.logp // overwritten in place: dy = scale·(softmax − onehot)
		parallelRows(rows, v, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				row := dy[r*v : (r+1)*v]
				y := target(r)
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
		clear(k.dhs)
		linalg.AffineBackward(k.dhs, k.dw, k.db, dy, k.hs, w, rows, H, v)
	}
	for t := 0; t < k.steps; t++ {
		g := gradIn[t]
		for i, d := range k.dhs[t*B*H : (t+1)*B*H] {
			g[i] += d
		}
	}
}

// backward32 is the float32 backward pass: dy = scale·(softmax − onehot)
// in float32 in place of the probabilities, two float32 products, and the
// results added into the float64 gradients.
func (k *outputLoss) backward32(scale float64, target func(int) int) {
	v, H, rows := k.vocab, k.hidden, k.steps*k.batch
	if k.dhs32 == nil {
		k.dhs32 = make([]float32, rows*H)
		k.dw32 = make([]float32, v*H)
	}
	dy := k.logp32
	parallelRows(rows, v, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			row := dy[r*v : (r+1)*v]
			y := target(r)
			if y < 0 {
				clear(row)
				continue
			}
			s := scale
			if k.probs { // unnormalized exponentials
				s *= k.rowScale[r]
			} else { // raw scores: make the probabilities
				softmax.ExpScores(row, k.bias, k.logz[r], true)
			}
			fs := float32(s)
			for i, e := range row {
				row[i] = fs * e
			}
			row[y] -= float32(scale)
		}
	})
	dyM := blas32.General{Rows: rows, Cols: v, Stride: v, Data: dy}
	blas32.Gemm(blas.NoTrans, blas.NoTrans, 1, dyM,
		blas32.General{Rows: v, Cols: H, Stride: H, Data: k.w32},
		0, blas32.General{Rows: rows, Cols: H, Stride: H, Data: k.dhs32})
	for i, d := range k.dhs32 {
		k.dhs[i] = float64(d)
	}
	if k.dw != nil {
		blas32.Gemm(blas.Trans, blas.NoTrans, 1, dyM,
			blas32.General{Rows: rows, Cols: H, Stride: H, Data: k.hs32},
			0, blas32.General{Rows: v, Cols: H, Stride: H, Data: k.dw32})
		for i, d := range k.dw32 {
			k.dw[i] += float64(d)
		}
	}
	if k.db != nil {
		// db += dyᵀ·1, a product too (each column summed by one thread).
		if k.ones32 == nil {
			k.ones32 = make([]float32, rows)
			for i := range k.ones32 {
				k.ones32[i] = 1
			}
			k.db32 = make([]float32, v)
		}
		blas32.Gemv(blas.Trans, 1, dyM, blas32.Vector{N: rows, Inc: 1, Data: k.ones32}, 0, blas32.Vector{N: v, Inc: 1, Data: k.db32})
		for i, d := range k.db32 {
			k.db[i] += float64(d)
		}
	}
}

// toFloat32 sets dst[i] = float32(src[i]).
func toFloat32(dst []float32, src []float64) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = float32(x)
	}
}
