package stacks_test

import (
	"bytes"
	"encoding/binary"
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/nsrnn/nsrnn/internal/fma"
	"github.com/nsrnn/nsrnn/param"
	"github.com/nsrnn/nsrnn/stacks"
	"github.com/nsrnn/nsrnn/stacks/stackstest"
)

var updateCarried = flag.Bool("update-carried", false, "rewrite testdata/carried-*.bin from the current code")

// TestCarriedStateCompat keeps the carried states of the memory-limited
// nondeterministic stacks readable across versions: for an RNS, an NS and
// a VRNS stack (fixed parameters and inputs), the files in testdata hold
// the encoding of the state after a run of 5 steps and the readings of 3
// more steps continued from it, as the code that wrote them computed
// them (the NS and VRNS layers before they became one type). The current
// code must encode the same state byte for byte, and continue the
// decoded file's state to the same readings; where the compiler fuses
// products and sums (package fma: arm64, GOAMD64=v3), whose last bits then
// differ from the file's, the same encoding's layout and values within
// 1e-12 relative, and the readings likewise.
func TestCarriedStateCompat(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(hidden int) (stacks.Layer, error)
	}{
		{"rns", func(h int) (stacks.Layer, error) {
			return stacks.NewNS("s", h, stacks.NSConfig{States: 2, Symbols: 2, StateReading: true, Window: 3})
		}},
		{"ns-fixed", func(h int) (stacks.Layer, error) {
			return stacks.NewNS("s", h, stacks.NSConfig{States: 2, Symbols: 3, Normalized: true, Bottom: stacks.Fixed, Window: 4})
		}},
		{"vrns", func(h int) (stacks.Layer, error) {
			return stacks.NewVRNS("s", h, stacks.VRNSConfig{States: 2, Symbols: 2, Vector: 3, Window: 3})
		}},
		{"vrns-fixed-one", func(h int) (stacks.Layer, error) {
			return stacks.NewVRNS("s", h, stacks.VRNSConfig{States: 1, Symbols: 2, Vector: 2, Bottom: stacks.Fixed, Window: 4, BottomVector: stacks.OneBottom})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const batch, hidden = 2, 3
			newLayer := func() stacks.Layer {
				l, err := tc.make(hidden)
				if err != nil {
					t.Fatal(err)
				}
				l.Init(param.Scheme{Uniform: 1}, rand.New(rand.NewPCG(7, 7)))
				return l
			}
			d := stackstest.NewData(rand.New(rand.NewPCG(8, 8)), batch, hidden, newLayer().ReadingSize(), 8)
			net := func(l stacks.Layer, from, steps int) *stackstest.Net {
				n, err := stackstest.NewNet(l, d, stackstest.Options{From: from, Steps: steps, Feedback: true, Carry: true})
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(n.Close)
				return n
			}
			l := newLayer()
			first := net(l, 0, 5)
			if err := first.Run(); err != nil {
				t.Fatal(err)
			}
			st, err := first.Instance.State()
			if err != nil {
				t.Fatal(err)
			}
			enc, err := st.MarshalBinary()
			if err != nil {
				t.Fatal(err)
			}
			path := filepath.Join("testdata", "carried-"+tc.name+".bin")
			if *updateCarried {
				rest := net(l, 5, 3)
				if err := rest.Instance.SetState(st); err != nil {
					t.Fatal(err)
				}
				if err := rest.Run(); err != nil {
					t.Fatal(err)
				}
				var file []byte
				file = binary.LittleEndian.AppendUint64(file, uint64(len(enc)))
				file = append(file, enc...)
				for _, r := range rest.Readings() {
					for _, v := range r {
						file = binary.LittleEndian.AppendUint64(file, math.Float64bits(v))
					}
				}
				if err := os.WriteFile(path, file, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			file, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			n := binary.LittleEndian.Uint64(file)
			old, readings := file[8:8+n], file[8+n:]
			fused := fma.Fused()
			if fused && len(enc) != len(old) || !fused && !bytes.Equal(enc, old) {
				t.Errorf("the state after 5 steps encodes to %d bytes that differ from the file's %d", len(enc), len(old))
			}
			// continued runs 3 more steps from the state encoded as e,
			// decoded by a new layer, and checks their readings against the
			// file's: the same bits, or within rounding where the build
			// fuses (then the current state's continuation too, since its
			// bytes are not compared).
			continued := func(e []byte, what string) {
				l2 := newLayer()
				dec, err := l2.UnmarshalState(e)
				if err != nil {
					t.Fatal(err)
				}
				rest := net(l2, 5, 3)
				if err := rest.Instance.SetState(dec); err != nil {
					t.Fatal(err)
				}
				if err := rest.Run(); err != nil {
					t.Fatal(err)
				}
				i := 0
				for s, r := range rest.Readings() {
					for j, v := range r {
						want := math.Float64frombits(binary.LittleEndian.Uint64(readings[8*i:]))
						if d := math.Abs(v - want); math.Float64bits(v) != math.Float64bits(want) && !(fused && d <= 1e-12*math.Abs(want)) {
							t.Fatalf("%s: step %d reading[%d] = %v, the file's %v", what, 6+s, j, v, want)
						}
						i++
					}
				}
				if 8*i != len(readings) {
					t.Errorf("%s: %d readings, the file has %d", what, i, len(readings)/8)
				}
			}
			continued(old, "the file's state")
			if fused {
				continued(enc, "the state now")
			}
		})
	}
}
