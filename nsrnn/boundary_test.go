package nsrnn

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/internal/gradcheck"
)

// boundaryChunks are the chunk lengths of the boundary tests: a first
// chunk of one token (with BoundaryNextChunk it makes no update at all),
// then chunks of several lengths.
var boundaryChunks = []int{1, 4, 3, 1, 5}

// stackParam reports, per parameter of m, whether it is the stack's.
func stackParam(m *Model) []bool {
	own := map[*Param]bool{}
	if m.stack != nil {
		for _, p := range m.stack.Params() {
			own[p] = true
		}
	}
	out := make([]bool, len(m.params))
	for i, p := range m.params {
		out[i] = own[p]
	}
	return out
}

// With BoundaryNextChunk the update after a chunk's last token is made in
// the next chunk's graph: every chunk's loss is that of BoundaryInChunk;
// the gradients of the parameters outside the stack are too, and those of
// the stack's own parameters (its action layer, a learned pushed vector)
// gain the path through that update, on every chunk after the first that
// made an update.
func TestBoundaryNextChunk(t *testing.T) {
	for name, cfg := range streamConfigs() {
		if cfg.Kind == LSTM {
			continue
		}
		t.Run(name, func(t *testing.T) {
			m := newTiny(t, cfg, 5)
			in, err := m.NewStream(2)
			if err != nil {
				t.Fatal(err)
			}
			next, err := m.NewStream(2)
			if err != nil {
				t.Fatal(err)
			}
			if err := next.SetBoundary(BoundaryNextChunk); err != nil {
				t.Fatal(err)
			}
			own := stackParam(m)
			rng := rand.New(rand.NewPCG(7, 7))
			for c, n := range boundaryChunks {
				x, y := randomStream(rng, 2, n, cfg.InputVocab)
				l1, g1, err := in.Gradient(x, y)
				if err != nil {
					t.Fatal(err)
				}
				g1 = cloneGrads(g1)
				l2, g2, err := next.Gradient(x, y)
				if err != nil {
					t.Fatal(err)
				}
				if math.Abs(l1-l2) > 1e-12*math.Abs(l1) {
					t.Fatalf("chunk %d: loss %v in-chunk, %v next-chunk", c+1, l1, l2)
				}
				extra := 0.0
				for i := range g1 {
					var d, norm float64
					for j := range g1[i] {
						d += (g1[i][j] - g2[i][j]) * (g1[i][j] - g2[i][j])
						norm += g1[i][j] * g1[i][j]
					}
					rel := math.Sqrt(d / max(norm, 1e-300))
					switch {
					case !own[i] && rel > 1e-10:
						t.Errorf("chunk %d: the gradient of %s (not the stack's) differs by %.3g relative", c+1, m.params[i].Name, rel)
					case own[i]:
						extra = max(extra, rel)
					}
				}
				// The first chunk has no update deferred into it (and the
				// one after its last token, which no loss of it uses, adds
				// nothing to its gradients); every later chunk has.
				if c >= 1 && extra < 1e-6 {
					t.Errorf("chunk %d: the stack's gradients are the same (%.3g relative): no gradient through the deferred update", c+1, extra)
				}
				if c == 0 && extra > 1e-10 {
					t.Errorf("chunk %d: the stack's gradients differ by %.3g with nothing deferred", c+1, extra)
				}
			}
		})
	}
}

// The gradient of a chunk with BoundaryNextChunk is that of its loss as a
// function of the parameters from the carried state, the deferred update
// included: central differences, the state restored before each run.
func TestBoundaryNextChunkFiniteDifferences(t *testing.T) {
	for _, name := range []string{"jm-depth3", "rns-D3", "vrns-D3"} {
		cfg := streamConfigs()[name]
		t.Run(name, func(t *testing.T) {
			m := newTiny(t, cfg, 9)
			s, err := m.NewStream(2)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.SetBoundary(BoundaryNextChunk); err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(3, 1))
			x, y := randomStream(rng, 2, 4, cfg.InputVocab)
			if _, err := s.Loss(x, y); err != nil {
				t.Fatal(err)
			}
			carried := s.State()
			x, y = randomStream(rng, 2, 3, cfg.InputVocab)
			_, g, err := s.Gradient(x, y)
			if err != nil {
				t.Fatal(err)
			}
			g = cloneGrads(g)
			loss := func() float64 {
				if err := s.SetState(carried); err != nil {
					t.Fatal(err)
				}
				l, err := s.Loss(x, y)
				if err != nil {
					t.Fatal(err)
				}
				return l
			}
			const h = 1e-6
			own := stackParam(m)
			for i, p := range m.params {
				if !own[i] {
					continue
				}
				data := p.Data()
				for _, j := range rng.Perm(len(data))[:min(len(data), 6)] {
					orig := data[j]
					data[j] = orig + h
					m.paramsChanged()
					fp := loss()
					data[j] = orig - h
					m.paramsChanged()
					fm := loss()
					data[j] = orig
					m.paramsChanged()
					num := (fp - fm) / (2 * h)
					if math.Abs(num-g[i][j]) > 1e-6+1e-5*math.Abs(num) {
						t.Errorf("%s[%d]: gradient %.10g, central difference %.10g", p.Name, j, g[i][j], num)
					}
				}
			}
		})
	}
}

// A stream's boundary is set at its initial state; states and their
// encodings carry it, and a stream of the other boundary refuses them;
// a model on a GPU refuses BoundaryNextChunk.
func TestBoundaryStates(t *testing.T) {
	cfg := streamConfigs()["rns-D3"]
	m := newTiny(t, cfg, 1)
	s, _ := m.NewStream(2)
	if err := s.SetBoundary(BoundaryNextChunk); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	x, y := randomStream(rng, 2, 3, cfg.InputVocab)
	if _, err := s.Loss(x, y); err != nil {
		t.Fatal(err)
	}
	if err := s.SetBoundary(BoundaryInChunk); err == nil {
		t.Error("SetBoundary with a carried state of the other boundary: no error")
	}
	enc, err := s.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	other, _ := m.NewStream(2)
	if err := other.SetState(s.State()); err == nil || !strings.Contains(err.Error(), "boundary") {
		t.Errorf("SetState of a next-chunk state into an in-chunk stream: %v", err)
	}
	if err := other.UnmarshalState(enc); err == nil || !strings.Contains(err.Error(), "boundary") {
		t.Errorf("UnmarshalState of a next-chunk state into an in-chunk stream: %v", err)
	}
	same, _ := m.NewStream(2)
	if err := same.SetBoundary(BoundaryNextChunk); err != nil {
		t.Fatal(err)
	}
	if err := same.UnmarshalState(enc); err != nil {
		t.Fatal(err)
	}
	x, y = randomStream(rng, 2, 4, cfg.InputVocab)
	l1, err := s.Loss(x, y)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := same.Loss(x, y)
	if err != nil {
		t.Fatal(err)
	}
	if l1 != l2 {
		t.Errorf("after the state's round trip: loss %v, want %v", l2, l1)
	}
	s.Reset()
	if err := s.SetBoundary(BoundaryInChunk); err != nil {
		t.Errorf("SetBoundary after Reset: %v", err)
	}
	for _, name := range []string{"in-chunk", "next-chunk"} {
		b, err := ParseBoundary(name)
		if err != nil || b.String() != name {
			t.Errorf("ParseBoundary(%q) = %v, %v", name, b, err)
		}
	}
	if _, err := ParseBoundary("authors"); err == nil {
		t.Error("ParseBoundary of an unknown name: no error")
	}
}

// Training with BoundaryNextChunk stops and resumes mid-epoch exactly, its
// stream state in the checkpoint.
func TestBoundaryNextChunkResumes(t *testing.T) {
	cfg := streamConfigs()["jm-depth3"]
	dir := t.TempDir()
	obj := func(m *Model) StatefulObjective {
		o := tinyStream(t, m, 4)
		if err := o.(*streamObjective).s.SetBoundary(BoundaryNextChunk); err != nil {
			t.Fatal(err)
		}
		return o
	}
	full := newTiny(t, cfg, 1)
	want, err := Fit(full, obj(full), streamTC(filepath.Join(dir, "full")))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "part")
	c := streamTC(path)
	c.Recorder = RecorderFunc(func(e Event) error {
		if e.Kind == Checkpointed && e.Epoch == 2 && e.Step == 3 {
			return ErrStop
		}
		return nil
	})
	part := newTiny(t, cfg, 1)
	if _, err := Fit(part, obj(part), c); err != nil {
		t.Fatal(err)
	}
	resumed := newTiny(t, cfg, 99)
	got, err := Fit(resumed, obj(resumed), streamTC(path))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(withoutTiming(got.History), withoutTiming(want.History)) {
		t.Errorf("histories differ:\nresumed       %+v\nuninterrupted %+v", withoutTiming(got.History), withoutTiming(want.History))
	}
	if !sameBits(paramData(resumed), paramData(full)) {
		t.Error("final parameters of the resumed run differ from the uninterrupted run's")
	}
}

// On a GPU, BoundaryNextChunk gives the CPU's losses and gradients, chunk
// after chunk (a first chunk of one token, which makes no update, then
// chunks of several lengths), for every kind that streams there.
func TestBoundaryNextChunkGPU(t *testing.T) {
	d := gpu(t)
	for _, name := range []string{"jm-depth3", "jm-hidden", "rns-D3", "ns-D3", "rns-D3-fix", "vrns-D3"} {
		cfg := streamConfigs()[name]
		for _, p := range []Precision{Float64, Float32} {
			cpu, g := twins(t, d, cfg, p)
			sc, err := cpu.NewStream(2)
			if err != nil {
				t.Fatal(err)
			}
			sg, err := g.NewStream(2)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range []*Stream{sc, sg} {
				if err := s.SetBoundary(BoundaryNextChunk); err != nil {
					t.Fatal(err)
				}
			}
			rng := rand.New(rand.NewPCG(6, 6))
			tol := tolerance(p)
			// Three chunks of one shape at the end: the second is captured
			// as a graph, the third replays it.
			for c, n := range append(slices.Clone(boundaryChunks), 4, 4, 4) {
				x, y := randomStream(rng, 2, n, cfg.InputVocab)
				l1, g1, err := sc.Gradient(x, y)
				if err != nil {
					t.Fatal(err)
				}
				g1 = cloneGrads(g1)
				l2, g2, err := sg.Gradient(x, y)
				if err != nil {
					t.Fatalf("%s %v chunk %d on %v: %v", name, p, c+1, d, err)
				}
				if e := relErr(l2, l1); e > tol {
					t.Errorf("%s %v chunk %d: loss %v on the GPU, %v on the CPU", name, p, c+1, l2, l1)
				}
				if e := gradcheck.TensorsErr(g2, g1); e > tol {
					t.Errorf("%s %v chunk %d: gradients differ by %.2g relative", name, p, c+1, e)
				}
			}
		}
	}
}
