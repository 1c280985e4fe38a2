package stacks

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/nsrnn/nsrnn/stacks/internal/nskernel"
)

// The carried state of the memory-limited nondeterministic stacks (NS
// and VRNS) has one encoding, little-endian: a header of the layer's own
// (none for NS; VRNS's magic and bottom vector), then
//
//	uint64 n, n float64: the last reading (r_0 of the next run)
//	the kernel's state (nskernel.State.MarshalBinary)
//
// appendCarried writes it after header; decodeCarried reads what follows
// the header and checks it against the layer's kernel configuration and
// reading size.

// appendCarried appends the encoding of a carried state to header.
func appendCarried(header []byte, reading []float64, k *nskernel.State) ([]byte, error) {
	b := binary.LittleEndian.AppendUint64(header, uint64(len(reading)))
	for _, v := range reading {
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
	}
	ks, err := k.MarshalBinary()
	if err != nil {
		return nil, err
	}
	return append(b, ks...), nil
}

// errCarried is wrapped by every error about a malformed carried state.
var errCarried = errors.New("stacks: malformed stack state")

// decodeCarried decodes the encoding of appendCarried (without its
// header) for a layer whose kernel configuration is want and whose
// reading has readingSize values per stack; what names the layer in
// errors.
func decodeCarried(data []byte, want nskernel.Config, readingSize int, what string) ([]float64, *nskernel.State, error) {
	if len(data) < 8 {
		return nil, nil, fmt.Errorf("%w: %s state truncated", errCarried, what)
	}
	n := binary.LittleEndian.Uint64(data)
	data = data[8:]
	if n > uint64(len(data))/8 {
		return nil, nil, fmt.Errorf("%w: %s state truncated", errCarried, what)
	}
	r := make([]float64, n)
	for i := range r {
		r[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8*i:]))
	}
	k, err := nskernel.UnmarshalState(data[8*n:])
	if err != nil {
		return nil, nil, fmt.Errorf("stacks: %w", err)
	}
	if k.Config() != want {
		return nil, nil, fmt.Errorf("stacks: %s state of another configuration (%+v, not %+v)", what, k.Config(), want)
	}
	if n != uint64(k.Batch()*readingSize) {
		return nil, nil, fmt.Errorf("%w: %s state with a reading of the wrong size", errCarried, what)
	}
	return r, k, nil
}
