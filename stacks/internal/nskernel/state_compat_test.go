package nskernel

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"testing"

	"github.com/nsrnn/nsrnn/internal/fma"
)

// The files in testdata were written by the kernels before the NS and VRNS
// dynamic programs were one: nskernel-state.bin by nskernel
// (TestNSStateEncodingUnchanged's run), vrnskernel-state.bin by the former
// vrnskernel after 7 steps of goldenVectorInputs with the configuration of
// TestLegacyVectorState, and vrnskernel-continued.bin the readings (float64
// bits, little-endian) of that kernel continuing from the decoded state
// over steps 8 to 12.

// TestNSStateEncodingUnchanged: an NS carried state is encoded byte for
// byte as before (so PTB checkpoints written before still decode, and new
// ones are the same), and the old encoding decodes and re-encodes
// identically.
func TestNSStateEncodingUnchanged(t *testing.T) {
	old, err := os.ReadFile("testdata/nskernel-state.bin")
	if err != nil {
		t.Fatal(err)
	}
	c := Config{States: 2, Symbols: 3, StateReading: true, Fixed: true, Window: 4}
	const B, n = 2, 7
	tp := NewTape(c, B, n)
	r := make([]float64, B*c.ReadingSize())
	for s := 0; s < n; s++ {
		l := make([]float64, B*c.NumActions())
		for i := range l {
			l[i] = 3 * math.Sin(float64(1+7*s+13*i))
		}
		LogSoftmaxRows(l, l, c, B)
		tp.Step(l, r)
	}
	data, err := tp.State().MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	st, err := UnmarshalState(old)
	if err != nil {
		t.Fatal(err)
	}
	if useVec && !fma.Fused() {
		// The file was written with the vector kernels (AVX2 and FMA) and
		// Go code that rounds every product (fma), whose rounding the same
		// run reproduces bit for bit.
		if !bytes.Equal(data, old) {
			t.Fatalf("NS state encoding changed: %d bytes, before %d", len(data), len(old))
		}
	} else {
		// Without them, or where the compiler fuses a product and a sum,
		// the values differ in rounding: the layout must not.
		if len(data) != len(old) || !bytes.Equal(data[:len(stateMagic)+6*8], old[:len(stateMagic)+6*8]) {
			t.Fatalf("NS state layout changed: %d bytes, before %d", len(data), len(old))
		}
		now, _ := UnmarshalState(data)
		for i := range st.elems {
			a, b := &st.elems[i], &now.elems[i]
			for k, x := range [][2][]float64{{a.la, b.la}, {a.E, b.E}, {a.beta, b.beta}, {a.psi, b.psi}} {
				for j := range x[0] {
					if x[0][j] != x[1][j] && !vecRelClose(x[0][j], x[1][j], 1e-12) {
						t.Fatalf("array %d entry %d: %v, before %v", k, j, x[1][j], x[0][j])
					}
				}
			}
		}
	}
	if again, _ := st.MarshalBinary(); !bytes.Equal(again, old) {
		t.Fatal("the old NS encoding does not re-encode identically")
	}
}

// goldenVectorInputs are the inputs of the files of the former vrnskernel:
// step t (0-based) log-weights and vectors, and the bottom vector.
func goldenVectorInputs(c Config, B, n int) *vecInputs {
	in := &vecInputs{bottom: make([]float64, c.Vector)}
	for t := 0; t < n; t++ {
		l := make([]float64, B*c.NumActions())
		for i := range l {
			l[i] = 3 * math.Sin(float64(1+7*t+13*i))
		}
		v := make([]float64, B*c.Vector)
		for i := range v {
			v[i] = math.Cos(float64(3 + 5*t + 11*i))
		}
		in.ld, in.vs = append(in.ld, l), append(in.vs, v)
	}
	for i := range in.bottom {
		in.bottom[i] = 0.5 + 0.1*float64(i)
	}
	return in
}

// TestLegacyVectorState: a state written by the former vrnskernel decodes,
// and continuing from it reads what that kernel read continuing from it,
// and what the whole run reads, to 1e-12 relative.
func TestLegacyVectorState(t *testing.T) {
	data, err := os.ReadFile("testdata/vrnskernel-state.bin")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile("testdata/vrnskernel-continued.bin")
	if err != nil {
		t.Fatal(err)
	}
	c := Config{States: 2, Symbols: 3, Vector: 2, Fixed: true, Window: 4}
	const B, n, k = 2, 12, 7
	st, err := UnmarshalState(data)
	if err != nil {
		t.Fatal(err)
	}
	if st.Config() != c || st.Batch() != B {
		t.Fatalf("decoded %+v batch %d, want %+v batch %d", st.Config(), st.Batch(), c, B)
	}
	in := goldenVectorInputs(c, B, n)
	got := runVec(NewTape(c, B, n), st, in, k, n)
	whole := runVec(NewTape(c, B, n), nil, in, 0, n)
	nr := B * c.ReadingSize()
	if len(raw) != 8*nr*(n-k) {
		t.Fatalf("%d bytes of readings, want %d", len(raw), 8*nr*(n-k))
	}
	for s := range got {
		for j, v := range got[s] {
			old := math.Float64frombits(binary.LittleEndian.Uint64(raw[8*(s*nr+j):]))
			if !vecRelClose(v, old, 1e-12) || !vecRelClose(v, whole[k+s][j], 1e-12) {
				t.Fatalf("step %d reading %d: continued %.17g, former kernel %.17g, whole run %.17g", k+s+1, j, v, old, whole[k+s][j])
			}
		}
	}
	// A decoded legacy state re-encodes in the current format, which
	// decodes to the same continuation.
	again, err := st.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	st2, err := UnmarshalState(again)
	if err != nil {
		t.Fatal(err)
	}
	got2 := runVec(NewTape(c, B, n), st2, in, k, n)
	for s := range got2 {
		for j, v := range got2[s] {
			if v != got[s][j] {
				t.Fatalf("step %d: re-encoded legacy state reads %v, want %v", k+s+1, got2[s], got[s])
			}
		}
	}
}
