package nskernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

const stateMagic = "nskernel-state\x00"

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
	for _, v := range []int{s.cfg.States, s.cfg.Symbols, s.cfg.Window, s.batch, s.np} {
		u64(uint64(v))
	}
	u64(flag)
	for i := range s.elems {
		e := &s.elems[i]
		for _, x := range [][]float64{e.la, e.aE, e.abar, e.psi, e.E, e.Lx, e.beta} {
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
	bad := errors.New("nskernel: malformed stack state")
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
	s := &State{
		cfg:   Config{States: int(hdr[0]), Symbols: int(hdr[1]), Window: int(hdr[2]), Fixed: hdr[5]&1 != 0, StateReading: hdr[5]&2 != 0},
		batch: int(hdr[3]), np: int(hdr[4]),
	}
	if err := s.cfg.Validate(); err != nil || s.cfg.Window < 1 || s.batch < 1 || s.np < 1 || s.np > s.cfg.Window {
		return nil, fmt.Errorf("%w: inconsistent header", bad)
	}
	m := s.cfg.States * s.cfg.Symbols
	blocks := s.np * (s.np - 1) / 2
	want := []int{s.np * m, s.np * m, s.np, s.np, blocks * m * m, blocks * m * m, blocks}
	if uint64(len(r)) < uint64(s.batch)*8*uint64(len(want)) {
		return nil, fmt.Errorf("%w: truncated", bad)
	}
	s.elems = make([]seqState, s.batch)
	for i := range s.elems {
		e := &s.elems[i]
		dst := []*[]float64{&e.la, &e.aE, &e.abar, &e.psi, &e.E, &e.Lx, &e.beta}
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

// TapeBytes estimates the memory of a tape for batch sequences of up to
// maxSteps steps (the γ blocks, their adjoints and scratch), in float64 so
// that absurd sizes cannot overflow.
func TapeBytes(c Config, batch, maxSteps int) float64 {
	capPos := float64(maxSteps + 2)
	d := capPos
	if c.Window > 0 {
		capPos = float64(maxSteps + max(2, c.Window))
		d = float64(c.Window)
	}
	m := float64(c.States) * float64(c.Symbols)
	blocks := capPos * min(d, capPos)
	return float64(batch) * 8 * (blocks*(4*m*m+2) + capPos*m*float64(c.States)*4)
}
