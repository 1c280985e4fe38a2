package stacks_test

import (
	"encoding/binary"
	"testing"

	"github.com/nsrnn/nsrnn/stacks"
)

// A JM state whose batch times the stack's depth limit and vector size
// overflows to the number of values it holds (a crafted carried state)
// is refused, not read as a state of an absurd batch. So are a huge depth
// limit whose cells overflow, and states of no values.
func TestJMStateBatchOverflow(t *testing.T) {
	for _, c := range []struct {
		depth  int
		batch  uint64
		values int
	}{
		{2, 1<<62 + 1, 4}, // 4·(2⁶²+1) = 2⁶⁴+4 ≡ 4
		{2, 1 << 62, 0},   // 4·2⁶² ≡ 0
		{1<<62 + 1, 2, 4}, // 2·(2⁶²+1)·2 = 2⁶⁴+4 ≡ 4
		{2, 0, 0},
	} {
		s, err := stacks.NewJM("jm", 3, 2, false, c.depth)
		if err != nil {
			t.Fatal(err)
		}
		data := binary.LittleEndian.AppendUint64(nil, c.batch)
		data = append(data, make([]byte, 8*c.values)...)
		if st, err := s.UnmarshalState(data); err == nil {
			t.Errorf("depth %d: a state of %d values claiming batch %d was read as one of batch %d", c.depth, c.values, c.batch, st.Batch())
		}
	}
	s, err := stacks.NewJM("jm", 3, 2, false, 2)
	if err != nil {
		t.Fatal(err)
	}
	data := binary.LittleEndian.AppendUint64(nil, 3)
	data = append(data, make([]byte, 8*3*2*2)...)
	if st, err := s.UnmarshalState(data); err != nil || st.Batch() != 3 {
		t.Errorf("a state of batch 3: %v", err)
	}
}
