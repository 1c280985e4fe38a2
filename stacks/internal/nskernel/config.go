package nskernel

import (
	"errors"
	"fmt"
	"math"
)

// Config fixes the shape and variant of a nondeterministic stack.
type Config struct {
	// States and Symbols are |Q| and |Γ|; both must be at least 1.
	States, Symbols int
	// Fixed selects the bottom behaviour: false is the "original" one of the
	// ICLR 2022 paper (the initial bottom can be neither replaced nor
	// uncovered), true the "fixed" one of the authors' ICLR 2023 release (the
	// initial bottom can be replaced and uncovered, never popped).
	Fixed bool
	// StateReading selects the reading over (state, symbol) pairs, of size
	// |Q||Γ| with index r*|Γ|+y, instead of the reading over symbols (size |Γ|).
	StateReading bool
	// Window is D ≥ 1 for the memory-limited variant (only γ[i→t] with
	// t−i ≤ D are kept); 0 means unlimited.
	Window int
	// Vector is the size m ≥ 1 of the vectors the stack elements carry for
	// the vector stack (VRNS), whose reading is the expected vector on top
	// per (state, top symbol); 0 (the NS and RNS stacks) carries none. A
	// vector stack is driven by BeginVector, StepVector and
	// BackwardVector, and its reading is always over (state, symbol)
	// pairs, so StateReading must be false.
	Vector int
}

// Validate reports whether c describes a valid stack.
func (c Config) Validate() error {
	if c.States < 1 || c.Symbols < 1 {
		return fmt.Errorf("stacks: need States >= 1 and Symbols >= 1, have %d and %d", c.States, c.Symbols)
	}
	if c.Window < 0 {
		return errors.New("stacks: negative Window")
	}
	if c.Vector < 0 {
		return errors.New("stacks: negative Vector")
	}
	if c.Vector > 0 && c.StateReading {
		return errors.New("stacks: a vector stack reads (state, symbol) pairs already; StateReading must be false")
	}
	// Bounds that keep NumActions and ReadingSize far from overflowing an
	// int; a stack this large would not fit in memory anyway.
	if m := float64(c.States) * float64(c.Symbols); m > MaxPairs {
		return fmt.Errorf("stacks: |Q||Γ| = %d·%d is more than %d (state, symbol) pairs", c.States, c.Symbols, MaxPairs)
	}
	if c.Vector > MaxVector {
		return fmt.Errorf("stacks: vector size %d is more than %d", c.Vector, MaxVector)
	}
	return nil
}

// MaxPairs bounds |Q||Γ| and MaxVector the vector size of a
// configuration (Validate).
const (
	MaxPairs  = 1 << 12
	MaxVector = 1 << 20
)

// NumActions returns the number of log-weights per sequence and step,
// |Q||Γ|(2|Q||Γ|+|Q|). For each (q,x), in row index q*|Γ|+x, come the push
// weights for every (r,y) (index r*|Γ|+y), then the replace weights for every
// (r,y), then the pop weights for every r.
func (c Config) NumActions() int {
	m := c.States * c.Symbols
	return m * c.rowLen()
}

func (c Config) rowLen() int { m := c.States * c.Symbols; return 2*m + c.States }

// ReadingSize returns the size of one reading: |Γ|, or |Q||Γ| with
// StateReading, or |Q||Γ|m for a vector stack (index (r·|Γ|+y)·m+j for
// state r, top symbol y and vector component j).
func (c Config) ReadingSize() int {
	if c.Vector > 0 {
		return c.States * c.Symbols * c.Vector
	}
	if c.StateReading {
		return c.States * c.Symbols
	}
	return c.Symbols
}

// InitialReading writes r_0, the reading of the initial configuration (all
// mass on state 0 and symbol 0), into dst[:c.ReadingSize()]. For a vector
// stack see InitialVectorReading.
func (c Config) InitialReading(dst []float64) {
	dst = dst[:c.ReadingSize()]
	for i := range dst {
		dst[i] = 0
	}
	dst[0] = 1
}

// InitialVectorReading writes r_0 of a vector stack, the reading of the
// initial configuration (state 0, the initial bottom symbol 0 on top,
// carrying the vector bottom of size m), into dst[:c.ReadingSize()].
func (c Config) InitialVectorReading(dst, bottom []float64) {
	dst = dst[:c.ReadingSize()]
	clear(dst)
	copy(dst[:c.Vector], bottom[:c.Vector])
}

// LogSoftmaxRows writes into dst the log_softmax of src over each (q,x) row
// of 2|Q||Γ|+|Q| actions, for batch rows of c.NumActions() entries each (the
// normalized NS parameterization). dst and src may be the same slice.
// A row whose entries are all −∞ gives all −∞.
func LogSoftmaxRows(dst, src []float64, c Config, batch int) {
	w := c.rowLen()
	n := batch * c.NumActions()
	src, dst = src[:n], dst[:n]
	for o := 0; o < n; o += w {
		s, d := src[o:o+w], dst[o:o+w]
		mx := math.Inf(-1)
		for _, v := range s {
			if v > mx {
				mx = v
			}
		}
		if math.IsInf(mx, -1) {
			for i := range d {
				d[i] = mx
			}
			continue
		}
		var z float64
		for _, v := range s {
			z += math.Exp(v - mx)
		}
		lz := mx + math.Log(z)
		for i, v := range s {
			d[i] = v - lz
		}
	}
}

// LogSoftmaxRowsBackward writes into gradSrc the gradient with respect to the
// input of LogSoftmaxRows, given gradDst (the gradient with respect to its
// output) and dst (its output). gradSrc is overwritten; it may alias gradDst.
func LogSoftmaxRowsBackward(gradSrc, gradDst, dst []float64, c Config, batch int) {
	w := c.rowLen()
	n := batch * c.NumActions()
	gradSrc, gradDst, dst = gradSrc[:n], gradDst[:n], dst[:n]
	for o := 0; o < n; o += w {
		g, d, gs := gradDst[o:o+w], dst[o:o+w], gradSrc[o:o+w]
		var sum float64
		for _, v := range g {
			sum += v
		}
		for i, v := range d {
			p := 0.0
			if !math.IsInf(v, -1) {
				p = math.Exp(v)
			}
			gs[i] = g[i] - p*sum
		}
	}
}
