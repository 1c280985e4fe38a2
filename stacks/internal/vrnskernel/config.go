package vrnskernel

import (
	"errors"
	"fmt"
)

// Config fixes the shape and variant of a vector nondeterministic stack.
type Config struct {
	// States and Symbols are |Q| and |Γ|, Vector the size m of the
	// stack's vectors; all must be at least 1.
	States, Symbols, Vector int
	// Fixed selects the bottom behaviour: false is the "original" one of
	// the ICLR 2022 paper (the initial bottom can be neither replaced nor
	// uncovered), true the "fixed" one of the authors' ICLR 2023 release
	// (the initial bottom can be replaced and uncovered, never popped).
	Fixed bool
	// Window is D ≥ 1 for the memory-limited variant (only γ[i→t] with
	// t−i ≤ D, counted in positions, are kept); 0 means unlimited.
	Window int
}

// Validate reports whether c describes a valid stack.
func (c Config) Validate() error {
	if c.States < 1 || c.Symbols < 1 || c.Vector < 1 {
		return fmt.Errorf("vrnskernel: need States, Symbols and Vector of at least 1, have %d, %d and %d", c.States, c.Symbols, c.Vector)
	}
	if c.Window < 0 {
		return errors.New("vrnskernel: negative Window")
	}
	return nil
}

// NumActions returns the number of action log-weights per sequence and
// step, |Q||Γ|(2|Q||Γ|+|Q|), in the layout of the NS stack: for each (q,x),
// in row q·|Γ|+x, the push weights for every (r,y) (index r·|Γ|+y), then
// the replace weights for every (r,y), then the pop weights for every r.
func (c Config) NumActions() int {
	k := c.States * c.Symbols
	return k * (2*k + c.States)
}

// ReadingSize returns the size of one reading, |Q||Γ|m, with index
// (r·|Γ|+y)·m+j for state r, top symbol y and vector component j.
func (c Config) ReadingSize() int { return c.States * c.Symbols * c.Vector }

// InitialReading writes r_0, the reading of the initial configuration
// (state 0, the initial bottom symbol 0 on top, carrying the vector bottom
// of size m), into dst[:c.ReadingSize()].
func (c Config) InitialReading(dst, bottom []float64) {
	dst = dst[:c.ReadingSize()]
	clear(dst)
	copy(dst[:c.Vector], bottom[:c.Vector])
}
