package nsrnn

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"github.com/nsrnn/nsrnn/stacks"
)

// fuzzConfigs are small models of every built-in kind and its variants,
// whose encodings and stream states seed the fuzz targets below.
var fuzzConfigs = []Config{
	{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 2},
	{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Embedding: 2, Hidden: 3, Layers: 2},
	{Kind: Gref, InputVocab: 3, OutputVocab: 4, Hidden: 2, StackEmbedding: 2},
	{Kind: JM, InputVocab: 3, OutputVocab: 4, Hidden: 2, StackEmbedding: 2, DepthLimit: 3},
	{Kind: JM, InputVocab: 3, OutputVocab: 4, Hidden: 2, PushHiddenState: true},
	{Kind: NS, InputVocab: 3, OutputVocab: 4, Hidden: 2, States: 2, Symbols: 2},
	{Kind: NSS, InputVocab: 3, OutputVocab: 4, Hidden: 2, States: 2, Symbols: 2, Bottom: stacks.Fixed},
	{Kind: NSU, InputVocab: 3, OutputVocab: 4, Hidden: 2, States: 1, Symbols: 3},
	{Kind: RNS, InputVocab: 3, OutputVocab: 4, Hidden: 2, States: 2, Symbols: 2},
	{Kind: RNS, InputVocab: 3, OutputVocab: 4, Hidden: 2, States: 2, Symbols: 2, Window: 3},
	{Kind: VRNS, InputVocab: 3, OutputVocab: 4, Hidden: 2, States: 2, Symbols: 2, StackEmbedding: 2},
	{Kind: VRNS, InputVocab: 3, OutputVocab: 4, Hidden: 2, States: 1, Symbols: 2, StackEmbedding: 2, Window: 2, Bottom: stacks.Fixed},
}

// fuzzModels builds the models of fuzzConfigs.
func fuzzModels(f *testing.F) []*Model {
	ms := make([]*Model, len(fuzzConfigs))
	for i, c := range fuzzConfigs {
		m, err := New(c, uint64(i+1))
		if err != nil {
			f.Fatalf("%+v: %v", c, err)
		}
		ms[i] = m
	}
	return ms
}

// exercise runs m on a few sentences and on a stream of two chunks, the
// ways a loaded model is used: a model that decoded must run or return an
// error, never panic.
func exercise(m *Model) {
	c := m.Config()
	v := min(c.InputVocab, c.OutputVocab-1)
	if v < 1 {
		return
	}
	w := func(n int) []int {
		s := make([]int, n)
		for i := range s {
			s[i] = i % v
		}
		return s
	}
	m.Loss([][]int{w(0), w(1), w(4)})
	s, err := m.NewStream(2)
	if err != nil {
		return
	}
	in := [][]int{w(3), w(3)}
	for range 2 {
		if _, err := s.Loss(in, in); err != nil {
			return
		}
	}
}

// withCRC appends the checksum of a model encoding to body, as
// MarshalBinary writes it.
func withCRC(body []byte) []byte {
	return binary.LittleEndian.AppendUint32(append([]byte(nil), body...), crc32.ChecksumIEEE(body))
}

// Any bytes given as a model file, with a valid checksum (a crafted file
// fixes it), decode to a model that runs, or to an error; never a panic.
// The checksum is recomputed here so that the fuzzer's mutations reach
// the decoder rather than stopping at the checksum.
func FuzzUnmarshalModel(f *testing.F) {
	for _, m := range fuzzModels(f) {
		b, err := m.MarshalBinary()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:len(b)-4])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		m, err := UnmarshalModel(withCRC(body))
		if err != nil {
			return
		}
		exercise(m)
		// What decoded encodes again to the same model.
		b, err := m.MarshalBinary()
		if err != nil {
			t.Fatalf("a decoded model does not encode: %v", err)
		}
		m2, err := UnmarshalModel(b)
		if err != nil {
			t.Fatalf("a decoded model's encoding does not decode: %v", err)
		}
		if m2.Config() != m.Config() || m2.NumParams() != m.NumParams() {
			t.Fatalf("decoded again as %+v, %d parameters; was %+v, %d", m2.Config(), m2.NumParams(), m.Config(), m.NumParams())
		}
	})
}

// Any bytes given as a stream's state (a checkpoint's carried state)
// restore a state that the stream runs from, or are an error; never a
// panic. The first byte picks the model among those of fuzzConfigs
// that run as streams.
func FuzzStreamUnmarshalState(f *testing.F) {
	var ms []*Model // the models that run as streams
	for _, m := range fuzzModels(f) {
		if _, err := m.NewStream(2); err == nil {
			ms = append(ms, m)
		}
	}
	for i, m := range ms {
		s, err := m.NewStream(2)
		if err != nil {
			f.Fatal(err)
		}
		in := [][]int{{0, 1, 2}, {2, 1, 0}}
		for _, b := range []Boundary{BoundaryInChunk, BoundaryNextChunk} {
			if err := s.SetBoundary(b); err != nil {
				continue // a kind without the authors' boundary
			}
			s.Reset()
			for range 2 {
				st, err := s.MarshalState()
				if err != nil {
					f.Fatal(err)
				}
				f.Add(byte(i), st)
				if _, err := s.Loss(in, in); err != nil {
					f.Fatal(err)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, which byte, data []byte) {
		m := ms[int(which)%len(ms)]
		s, err := m.NewStream(2)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.UnmarshalState(data); err != nil {
			return
		}
		in := [][]int{{0, 1}, {1, 0}}
		if _, err := s.Loss(in, in); err != nil {
			return
		}
		if _, err := s.MarshalState(); err != nil {
			t.Fatalf("a restored stream's state does not encode: %v", err)
		}
	})
}
