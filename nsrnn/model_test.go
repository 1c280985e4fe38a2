package nsrnn

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// ptbConfig is the paper's PTB setting: vocabulary 10,000 in and out,
// embedding size equal to the hidden size, every weight uniform in ±0.05.
func ptbConfig(kind string, hidden int) Config {
	return Config{Kind: kind, InputVocab: 10000, OutputVocab: 10000, Embedding: hidden, Hidden: hidden, InitRange: 0.05}
}

// TestParamCountsMatchPaper checks the parameter counts of the paper's PTB
// tables (§5.2 and appendix E).
func TestParamCountsMatchPaper(t *testing.T) {
	ns := func(kind string, q, g int) Config {
		c := ptbConfig(kind, 256)
		c.States, c.Symbols, c.Window = q, g, 35
		return c
	}
	jmHidden := ptbConfig(JM, 247)
	jmHidden.PushHiddenState, jmHidden.DepthLimit = true, 10
	jmLearned := ptbConfig(JM, 256)
	jmLearned.StackEmbedding, jmLearned.DepthLimit = 22, 10
	for _, tc := range []struct {
		name string
		cfg  Config
		want int
	}{
		{"LSTM 256", ptbConfig(LSTM, 256), 5656336},
		{"LSTM 258", ptbConfig(LSTM, 258), 5704576},
		{"LSTM 267", ptbConfig(LSTM, 267), 5922448},
		{"JM push hidden 247", jmHidden, 5684828},
		{"JM learned 22", jmLearned, 5685289},
		{"NS 1,2", ns(NS, 1, 2), 5660954},
		{"NS 1,3", ns(NS, 1, 3), 5664805},
		{"NS 1,11", ns(NS, 1, 11), 5732621},
		{"NS 2,2", ns(NS, 2, 2), 5668664},
		{"NS 2,3", ns(NS, 2, 3), 5680996},
		{"NS 3,3", ns(NS, 3, 3), 5707981},
		{"NS 3,4", ns(NS, 3, 4), 5743700},
		{"RNS 1,2", ns(RNS, 1, 2), 5660954},
		{"RNS 2,2", ns(RNS, 2, 2), 5670712},
		{"RNS 2,5", ns(RNS, 2, 5), 5723116},
		{"RNS 3,3", ns(RNS, 3, 3), 5714125},
		{"RNS 3,4", ns(RNS, 3, 4), 5751892},
	} {
		m, err := build(tc.cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := m.NumParams(); got != tc.want {
			t.Errorf("%s: %d parameters, paper has %d", tc.name, got, tc.want)
		}
		if got, err := CountParams(tc.cfg); err != nil || got != tc.want {
			t.Errorf("%s: CountParams gives %d, %v; paper has %d", tc.name, got, err, tc.want)
		}
	}
}

// TestCountParamsWithoutBuilding: CountParams agrees with the parameters
// of a built model for every kind and shape, and refuses a configuration
// over the memory budget, naming the fields, without allocating it.
func TestCountParamsWithoutBuilding(t *testing.T) {
	for _, k := range AllKinds() {
		for _, c := range []Config{
			{InputVocab: 3, OutputVocab: 4, Hidden: 5},
			{InputVocab: 30, OutputVocab: 31, Embedding: 7, Hidden: 9, Layers: 3},
		} {
			c.Kind = k.Name
			if k.Uses("States") {
				c.States, c.Symbols = 3, 2
			}
			if k.Uses("StackEmbedding") {
				c.StackEmbedding = 4
			}
			m, err := build(c)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := CountParams(c); err != nil || got != m.NumParams() {
				t.Errorf("%+v: CountParams %d (%v), model has %d", c, got, err, m.NumParams())
			}
		}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	huge := Config{Kind: RNS, InputVocab: 3, OutputVocab: 4, Hidden: 20, States: 100, Symbols: 100}
	_, err := New(huge, 1)
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "states, symbols") || !strings.Contains(err.Error(), "GiB") {
		t.Errorf("|Q| = |Γ| = 100: error %v, want one naming states and symbols and the memory", err)
	}
	if _, err := CountParams(huge); err == nil {
		t.Error("CountParams of |Q| = |Γ| = 100: no error")
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("refusing the configuration allocated %d bytes", grew)
	}
}

func TestConfigValidate(t *testing.T) {
	good := Config{Kind: RNS, InputVocab: 3, OutputVocab: 4, Hidden: 5, States: 2, Symbols: 3}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid config rejected: %v", err)
	}
	for _, tc := range []struct {
		name   string
		mod    func(*Config)
		substr string
	}{
		{"unknown kind", func(c *Config) { c.Kind = "gru" }, "unknown model"},
		{"no hidden", func(c *Config) { c.Hidden = 0 }, "hidden size"},
		{"ns without symbols", func(c *Config) { c.Symbols = 0 }, "symbols"},
		{"lstm with states", func(c *Config) { c.Kind = LSTM }, "states and symbols apply only"},
		{"jm without embedding", func(c *Config) { *c = Config{Kind: JM, InputVocab: 3, OutputVocab: 4, Hidden: 5} }, "stack embedding"},
		{"jm push hidden wrong size", func(c *Config) {
			*c = Config{Kind: JM, InputVocab: 3, OutputVocab: 4, Hidden: 5, PushHiddenState: true, StackEmbedding: 4}
		}, "must equal the hidden size"},
		{"gref push hidden", func(c *Config) {
			*c = Config{Kind: Gref, InputVocab: 3, OutputVocab: 4, Hidden: 5, PushHiddenState: true, StackEmbedding: 5}
		}, "only to jm"},
		{"window on lstm", func(c *Config) { *c = Config{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 5, Window: 3} }, "window"},
		{"depth limit on ns", func(c *Config) { c.DepthLimit = 10 }, "depth limit"},
		{"negative window", func(c *Config) { c.Window = -1 }, "window"},
	} {
		c := good
		tc.mod(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.substr) {
			t.Errorf("%s: got error %v, want one containing %q", tc.name, err, tc.substr)
		}
		if _, err := New(c, 1); err == nil {
			t.Errorf("%s: New accepted an invalid configuration", tc.name)
		}
	}
}

// tinyConfigs has one small configuration of every model kind, and the
// memory-limited and fixed-bottom NS variants.
func tinyConfigs() map[string]Config {
	base := Config{InputVocab: 3, OutputVocab: 4, Hidden: 4}
	with := func(f func(*Config)) Config { c := base; f(&c); return c }
	return map[string]Config{
		"lstm":          with(func(c *Config) { c.Kind = LSTM }),
		"lstm 2 layers": with(func(c *Config) { c.Kind = LSTM; c.Layers = 2; c.Embedding = 3 }),
		"gref":          with(func(c *Config) { c.Kind = Gref; c.StackEmbedding = 3 }),
		"jm":            with(func(c *Config) { c.Kind = JM; c.StackEmbedding = 3 }),
		"jm hidden":     with(func(c *Config) { c.Kind = JM; c.PushHiddenState = true; c.DepthLimit = 3 }),
		"ns":            with(func(c *Config) { c.Kind = NS; c.States, c.Symbols = 2, 2 }),
		"ns+s":          with(func(c *Config) { c.Kind = NSS; c.States, c.Symbols = 2, 2 }),
		"ns+u":          with(func(c *Config) { c.Kind = NSU; c.States, c.Symbols = 2, 2 }),
		"rns":           with(func(c *Config) { c.Kind = RNS; c.States, c.Symbols = 2, 2 }),
		"rns limited":   with(func(c *Config) { c.Kind = RNS; c.States, c.Symbols, c.Window = 2, 2, 2 }),
		"rns fixed":     with(func(c *Config) { c.Kind = RNS; c.States, c.Symbols, c.Bottom = 1, 2, 1 }),
	}
}

func randomBatch(rng *rand.Rand, batch, n, vocab int) Batch {
	b := make(Batch, batch)
	for i := range b {
		b[i] = make([]int, n)
		for j := range b[i] {
			b[i][j] = rng.IntN(vocab)
		}
	}
	return b
}

// TestModelGradients checks Gradient against central differences of Loss
// for every model kind, through the whole model.
func TestModelGradients(t *testing.T) {
	for name, cfg := range tinyConfigs() {
		t.Run(name, func(t *testing.T) {
			m, err := New(cfg, 3)
			if err != nil {
				t.Fatal(err)
			}
			// Larger weights than the initialization make the check
			// sensitive to every path.
			rng := rand.New(rand.NewPCG(5, 6))
			for _, p := range m.Params() {
				for i := range p.Data() {
					p.Data()[i] = rng.NormFloat64() * 0.5
				}
			}
			batch := randomBatch(rng, 2, 5, cfg.InputVocab)
			loss, grads, err := m.Gradient(batch)
			if err != nil {
				t.Fatal(err)
			}
			// Central differences carry a rounding error of about
			// ε·|loss|/h; allow ten times that on top of a relative
			// tolerance of 1e-6.
			const h = 1e-6
			atol := 10 * 2.2e-16 * math.Abs(loss) / h
			analytic := make([][]float64, len(grads))
			for i, g := range grads {
				analytic[i] = append([]float64(nil), g...)
			}
			worst := 0.0
			for pi, p := range m.Params() {
				x := p.Data()
				for _, j := range rng.Perm(len(x))[:min(len(x), 12)] {
					orig := x[j]
					x[j] = orig + h
					fp, err := m.Loss(batch)
					if err != nil {
						t.Fatal(err)
					}
					x[j] = orig - h
					fm, _ := m.Loss(batch)
					x[j] = orig
					num := (fp - fm) / (2 * h)
					a := analytic[pi][j]
					e := math.Abs(a-num) / (atol + 1e-6*math.Abs(num))
					worst = math.Max(worst, e)
					if e > 1 {
						t.Errorf("%s[%d]: gradient %.9g, finite difference %.9g", p.Name, j, a, num)
					}
				}
			}
			t.Logf("worst error %.2g of the tolerance", worst)
		})
	}
}

// TestLogProbsNormalized checks that every prediction is a distribution and
// that LogProb is the sum of the log-probabilities of the targets.
func TestLogProbsNormalized(t *testing.T) {
	for name, cfg := range tinyConfigs() {
		m, err := New(cfg, 1)
		if err != nil {
			t.Fatal(err)
		}
		w := []int{0, 2, 1, 1, 0, 2}
		lps, err := m.LogProbs([]([]int){w})
		if err != nil {
			t.Fatal(err)
		}
		if len(lps[0]) != len(w)+1 {
			t.Fatalf("%s: %d predictions for %d symbols", name, len(lps[0]), len(w))
		}
		sum := 0.0
		for pos, lp := range lps[0] {
			z := 0.0
			for _, v := range lp {
				z += math.Exp(v)
			}
			if math.Abs(z-1) > 1e-12 {
				t.Errorf("%s: prediction %d sums to %v", name, pos, z)
			}
			target := m.EOS()
			if pos < len(w) {
				target = w[pos]
			}
			sum += lp[target]
		}
		lp, err := m.LogProb(w)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(lp-sum) > 1e-12 {
			t.Errorf("%s: LogProb %v, sum of LogProbs %v", name, lp, sum)
		}
	}
}

// TestPredictionZeroIsFromZeroState checks that the first prediction does
// not depend on the input.
func TestPredictionZeroIsFromZeroState(t *testing.T) {
	m, err := New(tinyConfigs()["rns"], 2)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := m.LogProbs([]([]int){{0, 1, 2}})
	b, _ := m.LogProbs([]([]int){{2, 2, 1}})
	for v := range a[0][0] {
		if a[0][0][v] != b[0][0][v] {
			t.Fatalf("prediction 0 depends on the input")
		}
	}
	if a[0][1][0] == b[0][1][0] {
		t.Fatalf("prediction 1 does not depend on the input")
	}
}

func TestSeedDeterminism(t *testing.T) {
	cfg := tinyConfigs()["jm"]
	a, _ := New(cfg, 7)
	b, _ := New(cfg, 7)
	c, _ := New(cfg, 8)
	for i, p := range a.Params() {
		for j, v := range p.Data() {
			if b.Params()[i].Data()[j] != v {
				t.Fatalf("same seed, different parameter %s", p.Name)
			}
		}
	}
	same := true
	for i, p := range a.Params() {
		for j, v := range p.Data() {
			same = same && c.Params()[i].Data()[j] == v
		}
	}
	if same {
		t.Fatal("different seeds gave the same parameters")
	}
}

func TestBadBatches(t *testing.T) {
	m, _ := New(tinyConfigs()["lstm"], 1)
	for _, tc := range []struct {
		name  string
		batch [][]int
	}{
		{"empty", nil},
		{"ragged", [][]int{{0, 1}, {0}}},
		{"symbol out of range", [][]int{{0, 3}}},
		{"negative symbol", [][]int{{-1}}},
	} {
		if _, err := m.Loss(tc.batch); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	// The empty string is a valid sequence: it predicts EOS only.
	if _, err := m.Loss([][]int{{}}); err != nil {
		t.Errorf("empty string: %v", err)
	}
}

// TestSentenceModeRefusesEOS: when the input vocabulary includes the EOS
// id (OutputVocab−1), a sentence-mode batch holding it is refused by Loss,
// Gradient and LogProbs, while a stream, whose inputs are its targets fed
// back, takes it as an input.
func TestSentenceModeRefusesEOS(t *testing.T) {
	m, err := New(Config{Kind: LSTM, InputVocab: 3, OutputVocab: 3, Hidden: 4}, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		batch [][]int
	}{
		{"last", [][]int{{0, 1, 2}}},
		{"first", [][]int{{2, 0}}},
		{"second sequence", [][]int{{0, 1}, {1, 2}}},
		{"alone", [][]int{{2}}},
	} {
		for op, run := range map[string]func([][]int) error{
			"Loss":     func(b [][]int) error { _, err := m.Loss(b); return err },
			"Gradient": func(b [][]int) error { _, _, err := m.Gradient(b); return err },
			"LogProbs": func(b [][]int) error { _, err := m.LogProbs(b); return err },
		} {
			if err := run(tc.batch); err == nil || !strings.Contains(err.Error(), "EOS") {
				t.Errorf("%s: %s(%v): error %v, want one about EOS", tc.name, op, tc.batch, err)
			}
		}
	}
	if _, err := m.Loss([][]int{{0, 1, 1}}); err != nil {
		t.Errorf("a batch without EOS: %v", err)
	}
	s, err := m.NewStream(1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Loss([][]int{{2, 0, 2}}, [][]int{{0, 2, 1}}); err != nil {
		t.Errorf("stream with EOS among its inputs: %v", err)
	}
}

func TestSaveLoad(t *testing.T) {
	dir := t.TempDir()
	for name, cfg := range tinyConfigs() {
		m, _ := New(cfg, 4)
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		if err := m.Save(path); err != nil {
			t.Fatal(err)
		}
		l, err := Load(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		w := []int{1, 0, 2, 2}
		a, _ := m.LogProb(w)
		b, _ := l.LogProb(w)
		if a != b {
			t.Errorf("%s: loaded model scores %v, saved %v", name, b, a)
		}
	}
	m, _ := New(tinyConfigs()["rns"], 4)
	data, _ := m.MarshalBinary()
	corrupt := append([]byte(nil), data...)
	corrupt[len(corrupt)/2] ^= 0x40
	nan, _ := New(tinyConfigs()["rns"], 4)
	nan.Params()[1].Data()[2] = math.NaN()
	var nanBuf bytes.Buffer // MarshalBinary refuses it
	if err := nan.encode(&nanBuf); err != nil {
		t.Fatal(err)
	}
	nanData := nanBuf.Bytes()
	for _, tc := range []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"truncated", data[:len(data)-9]},
		{"header only", data[:16]},
		{"corrupted", corrupt},
		{"not a model", []byte("hello, world, this is not a model file")},
		{"a NaN parameter", nanData},
	} {
		path := filepath.Join(dir, "bad")
		os.WriteFile(path, tc.data, 0o644)
		_, err := Load(path)
		if err == nil || !errors.Is(err, ErrBadModelFile) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s: got %v, want an ErrBadModelFile naming the file", tc.name, err)
		}
	}
	// A path that is not a regular file is refused before it is read: a
	// directory, and a link to an endless device.
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{dir, zero} {
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), path) {
			t.Errorf("Load(%s): %v, want an error naming it", path, err)
		}
	}
}

// TestWorkersMatchOneGraph checks that a batch split into parts run
// concurrently (Model.Workers) gives the loss and gradients of the whole
// batch run as one graph, to rounding, for every model kind and for even,
// uneven and more-parts-than-sequences splits; run it with -race to check
// that the parts share no scratch space.
func TestWorkersMatchOneGraph(t *testing.T) {
	for name, cfg := range tinyConfigs() {
		t.Run(name, func(t *testing.T) {
			m, err := New(cfg, 3)
			if err != nil {
				t.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(7, 8))
			for _, p := range m.Params() {
				for i := range p.Data() {
					p.Data()[i] = rng.NormFloat64() * 0.5
				}
			}
			for _, c := range []struct{ batch, workers int }{{4, 2}, {5, 2}, {5, 3}, {2, 4}} {
				batch := randomBatch(rng, c.batch, 6, cfg.InputVocab)
				m.Workers = 1
				want, wantGrads, err := m.Gradient(batch)
				if err != nil {
					t.Fatal(err)
				}
				wantGrads = cloneGrads(wantGrads)
				wantLoss, err := m.Loss(batch)
				if err != nil {
					t.Fatal(err)
				}
				m.Workers = c.workers
				for rep := 0; rep < 2; rep++ { // the second run reuses the parts' graphs
					got, grads, err := m.Gradient(batch)
					if err != nil {
						t.Fatal(err)
					}
					gotLoss, err := m.Loss(batch)
					if err != nil {
						t.Fatal(err)
					}
					tag := fmt.Sprintf("batch %d in %d parts, run %d", c.batch, c.workers, rep+1)
					if !relClose(got, want, 1e-12) || !relClose(gotLoss, wantLoss, 1e-12) || !relClose(got, gotLoss, 1e-12) {
						t.Fatalf("%s: losses %v and %v, one graph %v", tag, got, gotLoss, want)
					}
					for i, g := range grads {
						for j := range g {
							if !relClose(g[j], wantGrads[i][j], 1e-10) {
								t.Fatalf("%s: %s[%d] gradient %v, one graph %v", tag, m.Params()[i].Name, j, g[j], wantGrads[i][j])
							}
						}
					}
				}
			}
		})
	}
}

func cloneGrads(g [][]float64) [][]float64 {
	out := make([][]float64, len(g))
	for i := range g {
		out[i] = append([]float64(nil), g[i]...)
	}
	return out
}

// relClose reports whether a and b agree to within rel relative to the larger
// magnitude (and 1e-300 absolute).
func relClose(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))+1e-300
}

// One Model used from several goroutines at once: every call either
// computes as alone or is refused with ErrConcurrentUse; none panics or
// races (go test -race), ReleaseGraphs, KeepGraphs and Graphs included.
func TestConcurrentUseRefused(t *testing.T) {
	m, err := New(Config{Kind: RNS, InputVocab: 3, OutputVocab: 4, Hidden: 6, States: 2, Symbols: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	m.Workers = 2
	batch := [][]int{{0, 1, 2, 1}, {1, 1, 0, 2}, {2, 0, 1, 1}}
	wantLoss, err := m.Loss(batch)
	if err != nil {
		t.Fatal(err)
	}
	wantGrad, _, err := m.Gradient(batch)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var refused, done atomic.Int64
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 30 {
				var loss float64
				var err error
				want := wantLoss
				if g%2 == 0 {
					loss, err = m.Loss(batch)
				} else {
					loss, _, err = m.Gradient(batch)
					want = wantGrad
				}
				switch {
				case errors.Is(err, ErrConcurrentUse):
					refused.Add(1)
				case err != nil:
					t.Error(err)
					return
				case loss != want:
					t.Errorf("loss %v beside other calls, %v alone", loss, want)
					return
				default:
					done.Add(1)
				}
			}
		}()
	}
	// The methods that return no error wait for a computation under way
	// instead of racing with it (ReleaseGraphs closed a graph that
	// another goroutine was running).
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 60 {
			m.ReleaseGraphs()
			m.KeepGraphs(1)()
			_ = m.Graphs()
		}
	}()
	wg.Wait()
	if done.Load() == 0 {
		t.Fatal("no call computed")
	}
	t.Logf("%d calls computed, %d refused", done.Load(), refused.Load())
}

// A model file whose configuration asks for far more parameters than the
// file holds values (a few bytes, a valid checksum) is refused before the
// model is made, rather than allocating them.
func TestUnmarshalModelHugeConfig(t *testing.T) {
	cfg := Config{Kind: LSTM, InputVocab: 50000, OutputVocab: 50000, Embedding: 1000, Hidden: 1500, Layers: 2} // 1.5 GiB
	n, err := CountParams(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cj, _ := json.Marshal(cfg)
	b := []byte(modelMagic)
	b = binary.LittleEndian.AppendUint32(b, modelVersion)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(cj)))
	b = append(b, cj...)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint32(b, crc32.ChecksumIEEE(b))
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = UnmarshalModel(b)
	runtime.ReadMemStats(&after)
	if err == nil || !errors.Is(err, ErrBadModelFile) || !strings.Contains(err.Error(), "holds at most") {
		t.Fatalf("a %d-byte file for %d parameters: error %v", len(b), n, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("refusing it allocated %d bytes", grew)
	}
}
