package nskernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
)

// The encoding of a State: stateMagic, then the header States, Symbols,
// Window, batch, positions and flags (bit 0 Fixed, bit 1 StateReading,
// bit 2 a vector stack, followed then by Vector), then per sequence the
// arrays la, aE, abar, psi, E, Lx and beta (and hb and V for a vector stack),
// each as its length and its float64 bits, all little-endian uint64. An NS
// state (no vector) is encoded as it always was. UnmarshalState also reads
// the states of the former separate VRNS kernel (legacyVectorMagic).
const (
	stateMagic        = "nskernel-state\x00"
	legacyVectorMagic = "vrnskernel-state\x00"
	flagVector        = 4
)

// Batch returns the number of sequences the state carries.
func (s *State) Batch() int { return s.batch }

// Config returns the configuration the state was made with.
func (s *State) Config() Config { return s.cfg }

// MarshalBinary encodes the state, exactly (every float64 bit for bit).
func (s *State) MarshalBinary() ([]byte, error) {
	var b []byte
	b = append(b, stateMagic...)
	u64 := func(v uint64) { b = binary.LittleEndian.AppendUint64(b, v) }
	flag := uint64(0)
	if s.cfg.Fixed {
		flag |= 1
	}
	if s.cfg.StateReading {
		flag |= 2
	}
	if s.cfg.Vector > 0 {
		flag |= flagVector
	}
	for _, v := range []int{s.cfg.States, s.cfg.Symbols, s.cfg.Window, s.batch, s.np} {
		u64(uint64(v))
	}
	u64(flag)
	if s.cfg.Vector > 0 {
		u64(uint64(s.cfg.Vector))
	}
	for i := range s.elems {
		e := &s.elems[i]
		arrays := [][]float64{e.la, e.aE, e.abar, e.psi, e.E, e.Lx, e.beta}
		if s.cfg.Vector > 0 {
			arrays = append(arrays, e.hb, e.V)
		}
		for _, x := range arrays {
			u64(uint64(len(x)))
			for _, v := range x {
				u64(math.Float64bits(v))
			}
		}
	}
	return b, nil
}

// UnmarshalState decodes a state written by MarshalBinary. It checks that
// the encoding is complete and consistent with its own header; whether the
// state fits a tape is checked by Begin.
func UnmarshalState(data []byte) (*State, error) {
	bad := errors.New("stacks: malformed stack state")
	if len(data) >= len(legacyVectorMagic) && string(data[:len(legacyVectorMagic)]) == legacyVectorMagic {
		return unmarshalLegacyVector(data)
	}
	if len(data) < len(stateMagic) || string(data[:len(stateMagic)]) != stateMagic {
		return nil, bad
	}
	r := data[len(stateMagic):]
	u64 := func() (uint64, bool) {
		if len(r) < 8 {
			return 0, false
		}
		v := binary.LittleEndian.Uint64(r)
		r = r[8:]
		return v, true
	}
	var hdr [6]uint64
	for i := range hdr {
		v, ok := u64()
		if !ok {
			return nil, bad
		}
		hdr[i] = v
	}
	const limit = 1 << 30
	for _, v := range hdr[:5] {
		if v > limit {
			return nil, fmt.Errorf("%w: header value %d out of range", bad, v)
		}
	}
	if hdr[5]&^7 != 0 {
		return nil, fmt.Errorf("%w: unknown flags %#x", bad, hdr[5])
	}
	s := &State{
		cfg:   Config{States: int(hdr[0]), Symbols: int(hdr[1]), Window: int(hdr[2]), Fixed: hdr[5]&1 != 0, StateReading: hdr[5]&2 != 0},
		batch: int(hdr[3]), np: int(hdr[4]),
	}
	if hdr[5]&flagVector != 0 {
		v, ok := u64()
		if !ok || v < 1 || v > limit {
			return nil, fmt.Errorf("%w: bad vector size", bad)
		}
		s.cfg.Vector = int(v)
	}
	if err := s.cfg.Validate(); err != nil || s.cfg.Window < 1 || s.batch < 1 || s.np < 1 || s.np > s.cfg.Window {
		return nil, fmt.Errorf("%w: inconsistent header", bad)
	}
	m := s.cfg.States * s.cfg.Symbols
	blocks := s.np * (s.np - 1) / 2
	want := []int{s.np * m, s.np * m, s.np, s.np, blocks * m * m, blocks * m * m, blocks}
	if s.cfg.Vector > 0 {
		want = append(want, blocks, (s.np-1)*s.cfg.Vector)
	}
	if uint64(len(r)) < uint64(s.batch)*8*uint64(len(want)) {
		return nil, fmt.Errorf("%w: truncated", bad)
	}
	s.elems = make([]seqState, s.batch)
	for i := range s.elems {
		e := &s.elems[i]
		dst := []*[]float64{&e.la, &e.aE, &e.abar, &e.psi, &e.E, &e.Lx, &e.beta}
		if s.cfg.Vector > 0 {
			dst = append(dst, &e.hb, &e.V)
		}
		for k, p := range dst {
			n, ok := u64()
			if !ok || n != uint64(want[k]) || uint64(len(r)) < 8*n {
				return nil, fmt.Errorf("%w: truncated or inconsistent", bad)
			}
			x := make([]float64, n)
			for j := range x {
				v, _ := u64()
				x[j] = math.Float64frombits(v)
			}
			*p = x
		}
	}
	if len(r) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", bad, len(r))
	}
	return s, nil
}

// unmarshalLegacyVector decodes a state of the former separate VRNS kernel:
// its magic, the header States, Symbols, Vector, Window, batch, positions
// and flags (bit 0 Fixed), then per sequence the arrays aE, abar, psi, E,
// beta and V. It kept no exact logarithms nor factors hb; they are
// recomputed from the mantissas and shifts (log E + β), which is what that
// kernel's entries were, and from β and ψ, as that kernel did.
func unmarshalLegacyVector(data []byte) (*State, error) {
	bad := errors.New("stacks: malformed VRNS stack state")
	r := data[len(legacyVectorMagic):]
	u64 := func() (uint64, bool) {
		if len(r) < 8 {
			return 0, false
		}
		v := binary.LittleEndian.Uint64(r)
		r = r[8:]
		return v, true
	}
	var hdr [7]uint64
	for i := range hdr {
		v, ok := u64()
		if !ok {
			return nil, fmt.Errorf("%w: truncated header", bad)
		}
		hdr[i] = v
	}
	const limit = 1 << 20
	for _, v := range hdr[:6] {
		if v > limit {
			return nil, fmt.Errorf("%w: header value %d out of range", bad, v)
		}
	}
	if hdr[6] > 1 {
		return nil, fmt.Errorf("%w: unknown flags %#x", bad, hdr[6])
	}
	s := &State{
		cfg:   Config{States: int(hdr[0]), Symbols: int(hdr[1]), Vector: int(hdr[2]), Window: int(hdr[3]), Fixed: hdr[6]&1 != 0},
		batch: int(hdr[4]), np: int(hdr[5]),
	}
	if err := s.cfg.Validate(); err != nil || s.cfg.Vector < 1 || s.cfg.Window < 1 || s.batch < 1 || s.np < 1 || s.np > s.cfg.Window {
		return nil, fmt.Errorf("%w: inconsistent header", bad)
	}
	K := s.cfg.States * s.cfg.Symbols
	if K > limit {
		return nil, fmt.Errorf("%w: header value out of range", bad)
	}
	// Every count is checked against the data left before it is
	// multiplied further, so that no product overflows.
	words := uint64(len(r)) / 8
	blocks := uint64(s.np) * uint64(s.np-1) / 2
	if uint64(K) > words || blocks > words/uint64(K*K) {
		return nil, fmt.Errorf("%w: truncated", bad)
	}
	want := []uint64{uint64(s.np) * uint64(K), uint64(s.np), uint64(s.np), blocks * uint64(K*K), blocks, uint64(s.np-1) * uint64(s.cfg.Vector)}
	var per uint64
	for _, w := range want {
		per += 1 + w
	}
	if per > words || uint64(s.batch) > words/per || uint64(len(r)) != 8*uint64(s.batch)*per {
		return nil, fmt.Errorf("%w: %d bytes of sequences, want %d", bad, len(r), 8*uint64(s.batch)*per)
	}
	s.elems = make([]seqState, s.batch)
	for i := range s.elems {
		e := &s.elems[i]
		for k, p := range []*[]float64{&e.aE, &e.abar, &e.psi, &e.E, &e.beta, &e.V} {
			n, _ := u64()
			if n != want[k] {
				return nil, fmt.Errorf("%w: inconsistent lengths", bad)
			}
			x := make([]float64, n)
			for j := range x {
				v, _ := u64()
				x[j] = math.Float64frombits(v)
			}
			*p = x
		}
		e.la = logShifted(e.aE, e.abar, K)
		e.Lx = logShifted(e.E, e.beta, K*K)
		// The factors hb, as that kernel recomputed them on Begin.
		e.hb = make([]float64, 0, blocks)
		for a := 0; a < s.np; a++ {
			for b := a + 1; b < s.np; b++ {
				e.hb = append(e.hb, hfac(e.beta[len(e.hb)]-(e.psi[b]-e.psi[a])))
			}
		}
	}
	return s, nil
}

// logShifted returns log(x[i]) + shift[i/n], −∞ for x[i] = 0.
func logShifted(x, shift []float64, n int) []float64 {
	l := make([]float64, len(x))
	for i, v := range x {
		if v == 0 || shift[i/n] == negInf {
			l[i] = negInf
		} else {
			l[i] = math.Log(v) + shift[i/n]
		}
	}
	return l
}

// TapeBytes estimates the memory of a tape for batch sequences of up to
// maxSteps steps (the γ blocks, their adjoints and scratch), in float64 so
// that absurd sizes cannot overflow.
func TapeBytes(c Config, batch, maxSteps int) float64 {
	return TapeBytesFrom(c, batch, maxSteps, true)
}

// TapeBytesFrom is TapeBytes for a tape of Pool.TapeFrom: with carried
// false, no room for a carried window.
func TapeBytesFrom(c Config, batch, maxSteps int, carried bool) float64 {
	capPos := float64(maxSteps + 2)
	d := capPos
	if c.Window > 0 {
		if carried {
			capPos = float64(maxSteps + max(2, c.Window))
		}
		d = float64(c.Window)
	}
	m := float64(c.States) * float64(c.Symbols)
	blocks := capPos * min(d, capPos)
	v := float64(c.Vector)
	if v > 0 {
		v = blocks*m + capPos*(2*v+m) // P, V, Vbar and the per-row reading adjoints
	}
	return float64(batch) * 8 * (blocks*(4*m*m+2) + capPos*m*float64(c.States)*4 + v)
}

func (s *seq) saveState(np int, st *seqState) {
	m, mm := s.m, s.m*s.m
	off := s.np - np
	// The slices of st are overwritten, their memory reused when large
	// enough (Tape.StateInto).
	st.la = append(st.la[:0], s.la[off*m:s.np*m]...)
	st.aE = append(st.aE[:0], s.aE[off*m:s.np*m]...)
	st.abar = append(st.abar[:0], s.abar[off:s.np]...)
	st.psi = append(st.psi[:0], s.psi[off:s.np]...)
	if s.M == 0 {
		// The NS stack carries its potential relative to the oldest
		// position; the vector stack carries it as it is, so that a run
		// continued from the state equals the whole run bit for bit.
		for i := range st.psi {
			st.psi[i] -= s.psi[off]
		}
	}
	nb := np * (np - 1) / 2 // the blocks (a, b), a < b < np
	st.E = slices.Grow(st.E[:0], nb*mm)
	st.Lx = slices.Grow(st.Lx[:0], nb*mm)
	st.beta = slices.Grow(st.beta[:0], nb)
	for a := 0; a < np; a++ {
		for b := a + 1; b < np; b++ {
			bi := s.blk(a+off, b+off)
			st.E = append(st.E, s.E[bi*mm:(bi+1)*mm]...)
			st.Lx = append(st.Lx, s.Lx[bi*mm:(bi+1)*mm]...)
			st.beta = append(st.beta, s.beta[bi])
		}
	}
	if s.M > 0 {
		st.V = append(st.V[:0], s.V[(off+1)*s.M:s.np*s.M]...)
		// The factors hb as the steps made them (scaled, not by exp).
		st.hb = slices.Grow(st.hb[:0], nb)
		for a := 0; a < np; a++ {
			for b := a + 1; b < np; b++ {
				st.hb = append(st.hb, s.hb[s.blk(a+off, b+off)])
			}
		}
	}
}

func (s *seq) beginState(np int, st *seqState) {
	m, mm := s.m, s.m*s.m
	copy(s.la, st.la)
	copy(s.aE, st.aE)
	copy(s.abar, st.abar)
	copy(s.psi, st.psi)
	for p := 0; p < np; p++ {
		s.ha[p] = hfac(s.abar[p] - s.psi[p])
	}
	clear(s.Ca[:np*m])
	clear(s.AXa[:np*m])
	clear(s.rowLive)
	j := 0
	for a := 0; a < np; a++ {
		for b := a + 1; b < np; b++ {
			bi := s.blk(a, b)
			copy(s.E[bi*mm:(bi+1)*mm], st.E[j*mm:(j+1)*mm])
			copy(s.Lx[bi*mm:(bi+1)*mm], st.Lx[j*mm:(j+1)*mm])
			s.markRows(a, bi)
			s.beta[bi] = st.beta[j]
			if st.hb != nil {
				s.hb[bi] = st.hb[j]
			} else {
				s.setH(a, b)
			}
			s.clearAdj(bi)
			j++
		}
	}
	if s.M > 0 {
		copy(s.V[s.M:np*s.M], st.V)
		clear(s.Vbar[:np*s.M])
	}
	s.np = np
	s.base = np - 1
}
