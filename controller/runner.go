package controller

import "fmt"

// Runner runs an LSTM forward, step by step, on plain slices and without a
// graph (generation, decoding). It reads the LSTM's parameters at every
// step; its state is its own.
type Runner struct {
	l       *LSTM
	batch   int
	state   [][]float64 // per layer (batch, 2H) [h ; c]
	next    [][]float64
	kernels []*cellKernel
	h       []float64
}

// NewRunner returns a runner for batch sequences whose first layer reads
// parts of the given sizes (summing to InputSize), at the zero state.
func (l *LSTM) NewRunner(batch int, sizes []int) (*Runner, error) {
	total := 0
	for _, s := range sizes {
		if s < 0 {
			return nil, fmt.Errorf("controller: negative part size %d", s)
		}
		total += s
	}
	if batch < 1 || total != l.input {
		return nil, fmt.Errorf("controller: runner for batch %d with parts %v: want batch ≥ 1 and parts summing to %d", batch, sizes, l.input)
	}
	r := &Runner{l: l, batch: batch, h: make([]float64, batch*l.hidden)}
	for i := range l.wih {
		k := &cellKernel{layer: i, batch: batch, hidden: l.hidden, in: l.hidden,
			sizes: []int{l.hidden}, widths: []int{2 * l.hidden}, constant: []bool{true}}
		if i == 0 {
			k.in, k.sizes, k.widths = l.input, sizes, sizes
			k.constant = make([]bool, len(sizes))
		}
		r.kernels = append(r.kernels, k)
		r.state = append(r.state, make([]float64, batch*2*l.hidden))
		r.next = append(r.next, make([]float64, batch*2*l.hidden))
	}
	return r, nil
}

// Reset returns to the zero state.
func (r *Runner) Reset() {
	for _, s := range r.state {
		clear(s)
	}
	clear(r.h)
}

// Step runs one step on the first layer's input parts, each (batch, size),
// and returns the top layer's new hidden state h, (batch, H), valid until
// the next call.
func (r *Runner) Step(parts [][]float64) []float64 {
	H := r.l.hidden
	for i, k := range r.kernels {
		var in [][]float64
		if i == 0 {
			in = append(in, parts...)
		} else {
			in = append(in, r.state[i-1])
		}
		in = append(in, r.state[i], r.l.wih[i].Data(), r.l.whh[i].Data(), r.l.bih[i].Data(), r.l.bhh[i].Data())
		k.Forward(r.next[i], in)
		r.state[i], r.next[i] = r.next[i], r.state[i]
	}
	top := r.state[len(r.state)-1]
	for b := 0; b < r.batch; b++ {
		copy(r.h[b*H:(b+1)*H], top[b*2*H:b*2*H+H])
	}
	return r.h
}

// H returns the top layer's hidden state, (batch, H).
func (r *Runner) H() []float64 { return r.h }
