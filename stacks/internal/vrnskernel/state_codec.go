package vrnskernel

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

const stateMagic = "vrnskernel-state\x00"

// MarshalBinary encodes the state exactly (every float64 bit for bit).
func (s *State) MarshalBinary() ([]byte, error) {
	b := append([]byte(nil), stateMagic...)
	u64 := func(v uint64) { b = binary.LittleEndian.AppendUint64(b, v) }
	flags := uint64(0)
	if s.cfg.Fixed {
		flags |= 1
	}
	for _, v := range []int{s.cfg.States, s.cfg.Symbols, s.cfg.Vector, s.cfg.Window, s.batch, s.np} {
		u64(uint64(v))
	}
	u64(flags)
	for i := range s.elems {
		e := &s.elems[i]
		for _, x := range [][]float64{e.aE, e.abar, e.psi, e.E, e.beta, e.V} {
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
	bad := errors.New("vrnskernel: malformed stack state")
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
	if err := s.cfg.Validate(); err != nil || s.cfg.Window < 1 || s.batch < 1 || s.np < 1 || s.np > s.cfg.Window {
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
	}
	return s, nil
}
