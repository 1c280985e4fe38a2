package controller

import (
	"fmt"
	"hash"
	"math"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
	"gonum.org/v1/gonum/blas/blas64"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/internal/linalg"
)

// cellKernel is one LSTM layer at one time step. Its inputs are the input
// parts (for layers above the first, the lower layer's (batch, 2H) state,
// of which the first H columns are read), the previous state (batch, 2H),
// W_ih, W_hh, b_ih, b_hh and the binding's gradient anchor; its output is
// the new state [h' ; c']. The parameters are not differentiated by
// gorgonia: the backward pass adds their gradients into grads in place.
//
// The forward pass keeps the activated gates and tanh(c') in a buffer of
// the kernel for its own backward pass, which in a gorgonia run always
// follows it.
type cellKernel struct {
	graph    uint64
	layer, t int
	batch    int
	hidden   int
	in       int    // columns of W_ih
	sizes    []int  // columns used from each part
	widths   []int  // columns of each part's node
	constant []bool // parts not differentiated
	// grads are the accumulators of W_ih, W_hh, b_ih and b_hh.
	grads [4][]float64
	// cache holds per batch row the gates i, f, g, o (activated) and
	// tanh(c'), 5H values; dgates is scratch for the backward pass
	// without acc.
	cache, dgates []float64
	// ex holds the arguments and values of the cell's exponentials (4H
	// each; see cellRow).
	ex []float64
	// acc, when set, gathers the step's gate gradients and inputs so that
	// the weight gradients of all the steps of the layer are one product
	// each; the kernel of the graph's first step (flush), whose backward
	// pass runs last, computes them. Without acc the step adds its own.
	acc   *gradAcc
	flush bool
}

// gradAcc gathers, for one layer of one graph, the gate gradients dz and
// the inputs of every step in (steps·batch)-row matrices, one block of
// batch rows per step, so that the gradients of W_ih, W_hh, b_ih and b_hh
// are one product (or sum) over the chunk instead of one rank-batch update
// per step: at the Penn Treebank sizes those updates are memory-bound, each
// reading and writing all of W. The steps' backward passes run from the
// last to the first; the last step's makes the buffers, each step writes
// its gate gradients straight into its block of dz, and the first step's
// computes the gradients.
type gradAcc struct {
	first  int         // the graph's first step
	blocks int         // steps with a block
	dz     []float64   // (blocks·B, 4H)
	x      [][]float64 // per input part: (blocks·B, size)
	h      []float64   // (blocks·B, H): h_{t−1}
	filled []bool      // per block: written since the last flush

	// f32 makes the layer's matrix products float32 (Graph.SetFloat32):
	// wih and whh are float32 copies of W_ih and W_hh made by the first
	// step's forward pass, a, c and in32 scratch for the converted
	// operands and results.
	f32        bool
	wih, whh   []float32
	a, c, in32 []float32
}

// scratch32 returns a and c with at least na and nc elements.
func (a *gradAcc) scratch32(na, nc int) ([]float32, []float32) {
	if len(a.a) < na {
		a.a = make([]float32, na)
	}
	if len(a.c) < nc {
		a.c = make([]float32, nc)
	}
	return a.a[:na], a.c[:nc]
}

// to32 converts the (rows, cols) matrix with row stride stride in src to a
// dense float32 matrix in dst.
func to32(dst []float32, src []float64, rows, cols, stride int) {
	for r := 0; r < rows; r++ {
		d, s := dst[r*cols:(r+1)*cols], src[r*stride:r*stride+cols]
		for j, v := range s {
			d[j] = float32(v)
		}
	}
}

// add32 adds the dense float32 (rows, cols) matrix src into dst, of row
// stride stride.
func add32(dst []float64, src []float32, rows, cols, stride int) {
	for r := 0; r < rows; r++ {
		d, s := dst[r*stride:r*stride+cols], src[r*cols:(r+1)*cols]
		for j, v := range s {
			d[j] += float64(v)
		}
	}
}

// sgemm is C = op(A)·op(B) in float32 on dense row-major matrices: A is
// (ar, ac), B (br, bc), with the given transpositions.
func sgemm(tA, tB blas.Transpose, ar, ac int, a []float32, br, bc, bStride int, b []float32, c []float32) {
	m, n := ar, bc
	if tA == blas.Trans {
		m = ac
	}
	if tB == blas.Trans {
		n = br
	}
	blas32.Gemm(tA, tB, 1, blas32.General{Rows: ar, Cols: ac, Stride: ac, Data: a},
		blas32.General{Rows: br, Cols: bc, Stride: bStride, Data: b}, 0, blas32.General{Rows: m, Cols: n, Stride: n, Data: c})
}

// block returns step k.t's block of dz, making the buffers at the first
// call of a backward pass (the graph's last step).
func (a *gradAcc) block(k *cellKernel) []float64 {
	H, B, i := k.hidden, k.batch, k.t-a.first
	if i >= a.blocks {
		a.blocks = i + 1
		a.dz = make([]float64, a.blocks*B*4*H)
		a.x = make([][]float64, len(k.sizes))
		for p, size := range k.sizes {
			a.x[p] = make([]float64, a.blocks*B*size)
		}
		a.h = make([]float64, a.blocks*B*H)
		a.filled = make([]bool, a.blocks)
	}
	return a.dz[i*B*4*H : (i+1)*B*4*H]
}

// add copies step k.t's inputs into their blocks: the used columns of each
// input part and the previous hidden state.
func (a *gradAcc) add(k *cellKernel, in [][]float64, prev []float64) {
	H, B, i := k.hidden, k.batch, k.t-a.first
	for p, size := range k.sizes {
		w := k.widths[p]
		x := a.x[p][i*B*size:]
		for b := 0; b < B; b++ {
			copy(x[b*size:(b+1)*size], in[p][b*w:b*w+size])
		}
	}
	h := a.h[i*B*H:]
	for b := 0; b < B; b++ {
		copy(h[b*H:(b+1)*H], prev[b*2*H:b*2*H+H])
	}
	a.filled[i] = true
}

// flush adds the gathered steps' weight gradients into k.grads; blocks
// no step wrote since the last flush count as zero.
func (a *gradAcc) flush(k *cellKernel) {
	H, B := k.hidden, k.batch
	for i, f := range a.filled {
		if !f {
			clear(a.dz[i*B*4*H : (i+1)*B*4*H])
		}
		a.filled[i] = false
	}
	if a.f32 {
		k.weightGrads32(a.blocks*B, a.dz, a.x, a.h)
		return
	}
	k.weightGrads(a.blocks*B, a.dz, a.x, k.sizes, a.h, H)
}

// weightGrads32 is weightGrads for dense gathered rows, with the products
// in float32.
func (k *cellKernel) weightGrads32(n int, dz []float64, x [][]float64, h []float64) {
	H, a := k.hidden, k.acc
	k.biasGrads(n, dz)
	dz32, c32 := a.scratch32(n*4*H, 4*H*max(k.in, H))
	to32(dz32, dz, n, 4*H, 4*H)
	// mul adds dzᵀ·in, in dense (n, cols), into dw (4H, cols; row stride ld).
	mul := func(in []float64, cols int, dw []float64, ld int) {
		a.in32 = resize32(a.in32, n*cols)
		to32(a.in32, in, n, cols, cols)
		sgemm(blas.Trans, blas.NoTrans, n, 4*H, dz32, n, cols, cols, a.in32, c32[:4*H*cols])
		add32(dw, c32[:4*H*cols], 4*H, cols, ld)
	}
	off := 0
	for p, size := range k.sizes {
		if size > 0 {
			mul(x[p], size, k.grads[0][off:], k.in)
		}
		off += size
	}
	mul(h, H, k.grads[1], H)
}

// biasGrads adds to the gradients of b_ih and b_hh the sums of the n rows
// of dz (n, 4H).
func (k *cellKernel) biasGrads(n int, dz []float64) {
	H := k.hidden
	dbih, dbhh := k.grads[2], k.grads[3]
	for r := 0; r < n; r++ {
		for j, v := range dz[r*4*H : (r+1)*4*H] {
			dbih[j] += v
			dbhh[j] += v
		}
	}
}

// weightGrads adds to k.grads the weight and bias gradients of the rows
// dz with inputs x (per part, with row strides xStride) and previous
// hidden states h (row stride hStride).
func (k *cellKernel) weightGrads(n int, dz []float64, x [][]float64, xStride []int, h []float64, hStride int) {
	H := k.hidden
	dzg := gen(n, 4*H, 4*H, dz)
	dwih, dwhh := k.grads[0], k.grads[1]
	k.biasGrads(n, dz)
	off := 0
	for p, size := range k.sizes {
		if size > 0 {
			linalg.Acc(true, dzg, gen(n, size, xStride[p], x[p]), gen(4*H, size, k.in, dwih[off:]))
		}
		off += size
	}
	linalg.Acc(true, dzg, gen(n, H, hStride, h), gen(4*H, H, H, dwhh))
}

func (k *cellKernel) Name() string { return fmt.Sprintf("lstm%d_%d", k.layer, k.t) }

func (k *cellKernel) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "lstm:%d:%d:%d:%d:%d:%d:%v:%v:%v", k.graph, k.layer, k.t, k.batch, k.hidden, k.in, k.sizes, k.widths, k.constant)
}

func (k *cellKernel) Differentiable(i int) bool {
	np := len(k.sizes)
	switch {
	case i < np:
		return !k.constant[i]
	case i == np, i == np+5:
		return true // the previous state and the anchor
	}
	return false
}

func (k *cellKernel) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	np, H := len(k.sizes), k.hidden
	if len(in) != np+6 {
		return nil, fmt.Errorf("got %d inputs, want %d", len(in), np+6)
	}
	want := make([]tensor.Shape, 0, np+6)
	for i := range k.sizes {
		want = append(want, tensor.Shape{k.batch, k.widths[i]})
	}
	want = append(want, tensor.Shape{k.batch, 2 * H}, tensor.Shape{4 * H, k.in}, tensor.Shape{4 * H, H}, tensor.Shape{4 * H}, tensor.Shape{4 * H}, tensor.Shape{})
	for i, s := range in {
		if !s.Eq(want[i]) {
			return nil, fmt.Errorf("input %d has shape %v, want %v", i, s, want[i])
		}
	}
	return tensor.Shape{k.batch, 2 * H}, nil
}

func gen(rows, cols, stride int, data []float64) blas64.General {
	return blas64.General{Rows: rows, Cols: cols, Stride: stride, Data: data}
}

func (k *cellKernel) Forward(out []float64, in [][]float64) {
	np, H, B := len(k.sizes), k.hidden, k.batch
	prev, wih, whh, bih, bhh := in[np], in[np+1], in[np+2], in[np+3], in[np+4]
	if k.cache == nil {
		k.cache = make([]float64, B*5*H)
	}
	// Pre-activations, (batch, 4H) with row stride 5H in the cache.
	z := k.cache
	for b := 0; b < B; b++ {
		row := z[b*5*H : b*5*H+4*H]
		for j := range row {
			row[j] = bih[j] + bhh[j]
		}
	}
	if a := k.acc; a != nil && a.f32 {
		k.preact32(z, in, prev, wih, whh)
	} else {
		zg := gen(B, 4*H, 5*H, z)
		off := 0
		for p, size := range k.sizes {
			if size > 0 {
				linalg.AccT(gen(B, size, k.widths[p], in[p]), gen(4*H, size, k.in, wih[off:]), zg)
			}
			off += size
		}
		linalg.AccT(gen(B, H, 2*H, prev), gen(4*H, H, H, whh), zg)
	}
	if k.ex == nil {
		k.ex = make([]float64, 8*H)
	}
	for b := 0; b < B; b++ {
		cellRow(k.cache[b*5*H:(b+1)*5*H], prev[b*2*H+H:(b+1)*2*H], out[b*2*H:b*2*H+H], out[b*2*H+H:(b+1)*2*H], k.ex)
	}
}

// cellRow applies the LSTM cell to one batch row: c holds the
// pre-activations i, f, g, o (H each) and receives the activations and
// tanh(c_t) (5H); cPrev is c_{t−1}; h and cNew receive h_t and c_t. Its
// results are those of sigmoid and math.Tanh bit for bit: their
// exponentials are computed a row at a time by expAll (math.Exp's bits,
// eight lanes at a time), in ex (8H: arguments, then values), and the
// rest of each function as it computes it (tanhFrom).
func cellRow(c, cPrev, h, cNew, ex []float64) {
	H := len(h)
	arg, val := ex[:4*H], ex[4*H:8*H]
	for j := range H {
		arg[j], arg[H+j], arg[3*H+j] = -c[j], -c[H+j], -c[3*H+j]
		arg[2*H+j] = tanhArg(c[2*H+j])
	}
	expAll(val, arg)
	for j := range H {
		i := 1 / (1 + val[j])
		f := 1 / (1 + val[H+j])
		g := tanhFrom(c[2*H+j], val[2*H+j])
		o := 1 / (1 + val[3*H+j])
		cn := f*cPrev[j] + i*g
		c[j], c[H+j], c[2*H+j], c[3*H+j] = i, f, g, o
		cNew[j] = cn
		arg[j] = tanhArg(cn)
	}
	expAll(val[:H], arg[:H])
	for j := range H {
		tc := tanhFrom(cNew[j], val[j])
		c[4*H+j] = tc
		h[j] = c[3*H+j] * tc
	}
}

// The constants of math.Tanh (from Cephes): the bound above which it is
// ±1, and its rational function's coefficients for |x| < 0.625.
const tanhMaxLog = 8.8029691931113054295988e+01

var (
	tanhP = [...]float64{-9.64399179425052238628e-1, -9.92877231001918586564e1, -1.61468768441708447952e3}
	tanhQ = [...]float64{1.12811678491632931402e2, 2.23548839060100448583e3, 4.84406305325125486048e3}
)

// tanhArg is the argument whose exponential math.Tanh takes for x, 2|x|,
// or 0 where it takes none (|x| above its bound, or NaN).
func tanhArg(x float64) float64 {
	if z := math.Abs(x); z <= 0.5*tanhMaxLog {
		return 2 * z
	}
	return 0
}

// tanhFrom returns math.Tanh(x), bit for bit, given s = math.Exp(2|x|)
// (used only for 0.625 ≤ |x| ≤ 44.01): the same branches and the same
// operations in the same order.
func tanhFrom(x, s float64) float64 {
	z := math.Abs(x)
	switch {
	case z > 0.5*tanhMaxLog:
		if x < 0 {
			return -1
		}
		return 1
	case z >= 0.625:
		z = 1 - 2/(s+1)
		if x < 0 {
			z = -z
		}
	default:
		if x == 0 {
			return x
		}
		s := x * x
		z = x + x*s*((tanhP[0]*s+tanhP[1])*s+tanhP[2])/(((s+tanhQ[0])*s+tanhQ[1])*s+tanhQ[2])
	}
	return z
}

func (k *cellKernel) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {
	np, H, B := len(k.sizes), k.hidden, k.batch
	prev, wih, whh := in[np], in[np+1], in[np+2]
	var dz []float64
	if k.acc != nil {
		dz = k.acc.block(k)
	} else {
		if k.dgates == nil {
			k.dgates = make([]float64, B*4*H)
		}
		dz = k.dgates
	}
	dprev := gradIn[np]
	for b := 0; b < B; b++ {
		c := k.cache[b*5*H : (b+1)*5*H]
		cPrev := prev[b*2*H+H : (b+1)*2*H]
		dh := gradOut[b*2*H : b*2*H+H]
		dc := gradOut[b*2*H+H : (b+1)*2*H]
		d := dz[b*4*H : (b+1)*4*H]
		dcPrev := dprev[b*2*H+H : (b+1)*2*H]
		for j := 0; j < H; j++ {
			i, f, g, o, tc := c[j], c[H+j], c[2*H+j], c[3*H+j], c[4*H+j]
			dct := dc[j] + dh[j]*o*(1-tc*tc)
			d[j] = dct * g * i * (1 - i)
			d[H+j] = dct * cPrev[j] * f * (1 - f)
			d[2*H+j] = dct * i * (1 - g*g)
			d[3*H+j] = dh[j] * tc * o * (1 - o)
			dcPrev[j] += dct * f
		}
	}
	if a := k.acc; a != nil && a.f32 {
		k.inputGrads32(gradIn, dz)
	} else {
		dzg := gen(B, 4*H, 4*H, dz)
		off := 0
		for p, size := range k.sizes {
			if size > 0 && gradIn[p] != nil {
				linalg.Acc(false, dzg, gen(4*H, size, k.in, wih[off:]), gen(B, size, k.widths[p], gradIn[p]))
			}
			off += size
		}
		linalg.Acc(false, dzg, gen(4*H, H, H, whh), gen(B, H, 2*H, dprev))
	}
	if a := k.acc; a != nil {
		a.add(k, in, prev)
		if k.flush {
			a.flush(k)
		}
		return
	}
	k.weightGrads(B, dz, in[:np], k.widths, prev, 2*H)
}

// preact32 adds to the pre-activations z (batch, 4H; row stride 5H) the
// input and recurrent products in float32. The graph's first step makes
// the float32 copies of the weights for the whole pass.
func (k *cellKernel) preact32(z []float64, in [][]float64, prev, wih, whh []float64) {
	H, B, a := k.hidden, k.batch, k.acc
	if k.flush || a.wih == nil { // the first step: its forward pass runs first
		a.wih = resize32(a.wih, len(wih))
		a.whh = resize32(a.whh, len(whh))
		to32(a.wih, wih, 1, len(wih), len(wih))
		to32(a.whh, whh, 1, len(whh), len(whh))
	}
	x32, z32 := a.scratch32(B*max(k.in, H), B*4*H)
	acc := func() { add32(z, z32, B, 4*H, 5*H) }
	off := 0
	for p, size := range k.sizes {
		if size > 0 {
			to32(x32, in[p], B, size, k.widths[p])
			sgemm(blas.NoTrans, blas.Trans, B, size, x32[:B*size], 4*H, size, k.in, a.wih[off:], z32)
			acc()
		}
		off += size
	}
	to32(x32, prev, B, H, 2*H)
	sgemm(blas.NoTrans, blas.Trans, B, H, x32[:B*H], 4*H, H, H, a.whh, z32)
	acc()
}

// inputGrads32 adds to the gradients of the input parts and of the
// previous state the products of the gate gradients dz (batch, 4H) with
// the weights, in float32.
func (k *cellKernel) inputGrads32(gradIn [][]float64, dz []float64) {
	H, B, a, np := k.hidden, k.batch, k.acc, len(k.sizes)
	dz32, c32 := a.scratch32(B*4*H, B*max(k.in, H))
	to32(dz32, dz, B, 4*H, 4*H)
	off := 0
	for p, size := range k.sizes {
		if size > 0 && gradIn[p] != nil {
			sgemm(blas.NoTrans, blas.NoTrans, B, 4*H, dz32, 4*H, size, k.in, a.wih[off:], c32[:B*size])
			add32(gradIn[p], c32[:B*size], B, size, k.widths[p])
		}
		off += size
	}
	sgemm(blas.NoTrans, blas.NoTrans, B, 4*H, dz32, 4*H, H, H, a.whh, c32[:B*H])
	add32(gradIn[np], c32[:B*H], B, H, 2*H)
}

// resize32 returns s with n elements, reallocated if too small.
func resize32(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// halfKernel extracts h (half 0) or c (half 1) from a (batch, 2H) state.
type halfKernel struct{ hidden, half int }

func (k halfKernel) Name() string {
	if k.half == 0 {
		return "lstm_h"
	}
	return "lstm_c"
}

func (k halfKernel) WriteHash(h hash.Hash) { fmt.Fprintf(h, "lstmhalf:%d:%d", k.hidden, k.half) }

func (k halfKernel) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 1 || len(in[0]) != 2 || in[0][1] != 2*k.hidden {
		return nil, fmt.Errorf("want one (batch, %d) input, got %v", 2*k.hidden, in)
	}
	return tensor.Shape{in[0][0], k.hidden}, nil
}

func (k halfKernel) Forward(out []float64, in [][]float64) {
	H := k.hidden
	for b := 0; b < len(out)/H; b++ {
		copy(out[b*H:(b+1)*H], in[0][b*2*H+k.half*H:])
	}
}

func (k halfKernel) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {
	H := k.hidden
	for b := 0; b < len(out)/H; b++ {
		d := gradIn[0][b*2*H+k.half*H : b*2*H+k.half*H+H]
		for j, v := range gradOut[b*H : (b+1)*H] {
			d[j] += v
		}
	}
}
