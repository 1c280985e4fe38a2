package ptb

import (
	"errors"
	"fmt"
)

// NoTarget marks a position of Chunk.Targets without a target: padding at
// the end of the last rows. The loss must ignore it.
const NoTarget = -1

// Chunk is one step of truncated backpropagation through time: B rows of
// T' consecutive positions (T' = T except in the last chunk, which may be
// shorter). Inputs[b][t] is the token just before Targets[b][t] in the
// split. A padded position has input pad (the EOS id) and target NoTarget.
type Chunk struct {
	Inputs  [][]int // B rows of T' input ids
	Targets [][]int // B rows of T' target ids or NoTarget
}

// NumTargets returns the number of real targets of c (those other than
// NoTarget).
func (c Chunk) NumTargets() int {
	n := 0
	for _, row := range c.Targets {
		for _, y := range row {
			if y != NoTarget {
				n++
			}
		}
	}
	return n
}

// Batcher cuts a split into chunks for truncated BPTT as the package
// documentation describes. It computes chunk k on demand, so training can
// resume at any chunk without building the ones before it. A Batcher is
// safe for concurrent use.
type Batcher struct {
	tokens []int // the split; not copied
	b, t   int   // rows, positions per chunk
	l      int   // positions per row: ceil((N−1)/B)
	pad    int   // input id of padded positions
}

// NewBatcher returns the Batcher of the split tokens (N ids, N ≥ 2) with
// batchSize rows (B ≥ 1) and bptt positions per chunk (T ≥ 1); pad (≥ 0)
// is the input of padded positions, normally Vocab.EOS(). Token ids must be
// non-negative. The Batcher keeps tokens: do not modify it afterwards.
func NewBatcher(tokens []int, batchSize, bptt, pad int) (*Batcher, error) {
	switch {
	case batchSize < 1:
		return nil, fmt.Errorf("ptb: batcher: batch size %d, want at least 1", batchSize)
	case bptt < 1:
		return nil, fmt.Errorf("ptb: batcher: BPTT length %d, want at least 1", bptt)
	case len(tokens) < 2:
		return nil, fmt.Errorf("ptb: batcher: split of %d tokens, want at least 2 (one input and one target)", len(tokens))
	case pad < 0:
		return nil, fmt.Errorf("ptb: batcher: pad id %d, want non-negative", pad)
	}
	for i, x := range tokens {
		if x < 0 {
			return nil, fmt.Errorf("ptb: batcher: token %d has negative id %d", i, x)
		}
	}
	m := len(tokens) - 1
	l := (m-1)/batchSize + 1 // ceil(m/B), without overflow
	if cells := float64(batchSize) * float64(min(bptt, l)); cells > MaxChunkCells {
		return nil, fmt.Errorf("ptb: batcher: a chunk of %d rows × %d positions is more than %d cells", batchSize, min(bptt, l), MaxChunkCells)
	}
	return &Batcher{tokens: tokens, b: batchSize, t: bptt, l: l, pad: pad}, nil
}

// MaxChunkCells bounds B × T, the cells of a chunk (of its inputs and of
// its targets): NewBatcher refuses more.
const MaxChunkCells = 1 << 26

// BatchSize returns B, the number of rows.
func (bt *Batcher) BatchSize() int { return bt.b }

// BPTT returns T, the positions of every chunk but maybe the last.
func (bt *Batcher) BPTT() int { return bt.t }

// RowLen returns L = ceil((N−1)/B), the positions of every row over all
// chunks.
func (bt *Batcher) RowLen() int { return bt.l }

// NumTargets returns the number of real targets over all chunks, N−1.
func (bt *Batcher) NumTargets() int { return len(bt.tokens) - 1 }

// NumChunks returns the number of chunks, ceil(L/T).
func (bt *Batcher) NumChunks() int { return (bt.l-1)/bt.t + 1 }

// ErrChunkRange reports a chunk index outside 0 … NumChunks()−1.
var ErrChunkRange = errors.New("chunk index out of range")

// Chunk returns chunk k, 0 ≤ k < NumChunks(): positions kT … min(kT+T, L)−1
// of every row. Row b at position i has input x_{bL+i} and target
// x_{bL+i+1}, or input pad and target NoTarget when bL+i+1 > N−1. The
// slices are new on every call.
func (bt *Batcher) Chunk(k int) (Chunk, error) {
	if k < 0 || k >= bt.NumChunks() {
		return Chunk{}, fmt.Errorf("ptb: batcher: %w: %d of %d chunks", ErrChunkRange, k, bt.NumChunks())
	}
	start := k * bt.t
	n := min(bt.t, bt.l-start)
	m := len(bt.tokens) - 1
	in := make([]int, bt.b*n)
	tg := make([]int, bt.b*n)
	c := Chunk{Inputs: make([][]int, bt.b), Targets: make([][]int, bt.b)}
	for b := range bt.b {
		ri, rt := in[b*n:(b+1)*n:(b+1)*n], tg[b*n:(b+1)*n:(b+1)*n]
		for i := range n {
			j := b*bt.l + start + i // input position
			if j < m {
				ri[i], rt[i] = bt.tokens[j], bt.tokens[j+1]
			} else {
				ri[i], rt[i] = bt.pad, NoTarget
			}
		}
		c.Inputs[b], c.Targets[b] = ri, rt
	}
	return c, nil
}

// Chunks returns all chunks of the split tokens in order, as
// NewBatcher(tokens, batchSize, bptt, pad) cuts them, and the number of
// real targets, N−1.
func Chunks(tokens []int, batchSize, bptt, pad int) ([]Chunk, int, error) {
	bt, err := NewBatcher(tokens, batchSize, bptt, pad)
	if err != nil {
		return nil, 0, err
	}
	cs := make([]Chunk, bt.NumChunks())
	for k := range cs {
		if cs[k], err = bt.Chunk(k); err != nil {
			return nil, 0, err
		}
	}
	return cs, bt.NumTargets(), nil
}
