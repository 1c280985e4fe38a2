package nsrnn

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/internal/cuda"
	"github.com/nsrnn/nsrnn/internal/gpuemu"
	"github.com/nsrnn/nsrnn/internal/gradcheck"
	"github.com/nsrnn/nsrnn/stacks"
)

func TestParseDevice(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Device
		ok   bool
	}{
		{"cpu", CPU, true},
		{"", CPU, true},
		{"cuda", CUDA(0), true},
		{"cuda:0", CUDA(0), true},
		{"cuda:3", CUDA(3), true},
		{"cuda:-1", CPU, false},
		{"cuda:x", CPU, false},
		{"gpu", CPU, false},
		{"CUDA", CPU, false},
		{"cuda:+1", CPU, false},
		{"cuda:007", CPU, false},
		{"cuda:10", CUDA(10), true},
	} {
		d, err := ParseDevice(c.in)
		if (err == nil) != c.ok || d != c.want {
			t.Errorf("ParseDevice(%q) = %v, %v; want %v, ok %v", c.in, d, err, c.want, c.ok)
			continue
		}
		if c.ok && c.in != "" && c.in != "cuda" && d.String() != c.in {
			t.Errorf("ParseDevice(%q).String() = %q", c.in, d.String())
		}
	}
	m, err := New(Config{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetDevice(CUDA(-1)); err == nil || !strings.Contains(err.Error(), "index must be 0 or more") {
		t.Errorf("SetDevice(CUDA(-1)): %v", err)
	}
}

// A stack without a GPU implementation (here the nondeterministic stack
// driven by given scores, with no actions layer; the kinds registered from
// outside, as examples/counterstack's test shows) is refused, whether or
// not a GPU is there.
func TestCUDAStackSupported(t *testing.T) {
	scores, err := stacks.NewNSScores("s", stacks.NSConfig{States: 1, Symbols: 2})
	if err != nil {
		t.Fatal(err)
	}
	if cudaStackSupported(scores) {
		t.Fatal("a stack without an actions layer is said to run on the GPU")
	}
	// Every kind listed as running on the GPU is in the GPU suite, with a
	// stack the GPU runs.
	tested := map[string]bool{}
	for name, c := range gpuConfigs() {
		m, err := New(c, 1)
		if err != nil {
			t.Fatal(err)
		}
		if m.stack != nil && !cudaStackSupported(m.stack) {
			t.Errorf("%s: in the GPU suite, but its stack has no GPU implementation", name)
		}
		tested[c.Kind] = true
	}
	for _, k := range deviceKinds {
		if !tested[k] {
			t.Errorf("kind %s runs on the GPU but no configuration of the GPU suite has it", k)
		}
	}
}

// Without the CUDA libraries, asking for a GPU fails at once, naming what
// is missing; the model stays on the CPU.
func TestSetDeviceWithoutCUDA(t *testing.T) {
	if err := cuda.Load(); err == nil {
		t.Skip("the CUDA libraries are present on this machine")
	}
	m, err := New(Config{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 5}, 1)
	if err != nil {
		t.Fatal(err)
	}
	err = m.SetDevice(CUDA(0))
	if !errors.Is(err, cuda.ErrNoLibrary) || !strings.Contains(err.Error(), cuda.EnvLibs) {
		t.Fatalf("SetDevice(cuda:0) without CUDA: %v, want an error wrapping cuda.ErrNoLibrary that names %s", err, cuda.EnvLibs)
	}
	if m.Device() != CPU {
		t.Fatalf("the model moved to %v", m.Device())
	}
	if _, err := Devices(); !errors.Is(err, cuda.ErrNoLibrary) {
		t.Fatalf("Devices() without CUDA: %v", err)
	}
}

// Every kernel compiles, in both precisions, with NVRTC alone (no GPU):
// Debian's NVRTC 11.8 where NSRNN_TEST_NVRTC_DIR points at it.
func TestCUDAKernelsCompile(t *testing.T) {
	dir := os.Getenv("NSRNN_TEST_NVRTC_DIR")
	if dir == "" {
		if err := cuda.Load(); err != nil {
			t.Skip("no NVRTC: set NSRNN_TEST_NVRTC_DIR to a folder holding libnvrtc.so.* (Debian non-free's libnvrtc11.2 and libnvrtc-builtins11.8, unpacked with dpkg -x) to compile the kernels without a GPU")
		}
	} else if err := cuda.LoadNVRTCFrom(dir); err != nil {
		t.Fatalf("NSRNN_TEST_NVRTC_DIR=%s: %v", dir, err)
	}
	src, opts := cudaKernelSource()
	for _, p := range []Precision{Float64, Float32} {
		ptx, err := cuda.CompilePTX(src, "nsrnn_kernels.cu", "compute_80", opts[p]...)
		if err != nil {
			t.Fatalf("%v: %v", p, err)
		}
		for _, k := range []string{"embed_gather", "bias_rows", "onehot_add", "lstm_cell", "lstm_rec", "lstm_rec2", "lstm_rec8", "lstm_cell_back", "lstm_back", "lstm_back2", "lstm_back8", "transpose", "softmax_rows", "sum_scaled", "scatter_rows", "scatter_cols", "sumsq_partial", "sgd_update", "adam_update", "to_real", "jm_act", "jm_step", "jm_back_cells", "jm_back_actions", "add_rows", "gref_act", "gref_step", "gref_read", "gref_back", "ns_init", "ns_act", "ns_gp", "ns_col", "ns_alpha", "ns_read", "ns_back_read", "ns_back_alpha_g", "ns_back_alpha_a", "ns_back_push", "ns_back_rep", "ns_back_rep_w", "ns_back_pop", "ns_back_gp", "ns_back_gp_g", "ns_back_pop_w", "ns_act_back", "gemm_k", "gemm_n", "rows_copy", "fill", "vr_vec", "vr_bottom", "vr_P", "vr_read", "vr_back_P", "vr_back_V", "vr_back_Z", "vr_back_P_g", "vr_back_P_a", "vr_back_vec", "vr_back_bottom"} {
			if !strings.Contains(string(ptx), ".entry "+k+"(") {
				t.Errorf("%v: the PTX has no kernel %s", p, k)
			}
		}
	}
}

// gpu returns the first usable GPU; on a machine without one, the GPU
// emulator of package gpuemu (the same kernels compiled for the CPU by the
// system's C++ compiler) for the rest of the test; without either it
// skips the test saying why, or fails it where NSRNN_TEST_REQUIRE_GPU=1
// (the GPU machine's device check).
func gpu(t *testing.T) Device {
	t.Helper()
	ds, err := Devices()
	for _, d := range ds {
		if d.Usable {
			return d.Device
		}
	}
	if err == nil {
		err = fmt.Errorf("no usable GPU among %d devices (%+v)", len(ds), ds)
	}
	if os.Getenv("NSRNN_TEST_REQUIRE_GPU") == "1" {
		t.Fatalf("NSRNN_TEST_REQUIRE_GPU=1 and no GPU: %v", err)
	}
	if _, emuErr := gpuemu.New(); emuErr != nil {
		t.Skipf("no GPU (%v) and no GPU emulator (%v)", err, emuErr)
	}
	old := openGPU
	newEmu := gpuemu.New
	if os.Getenv(EnvGPUEmulator) == "simt" {
		newEmu = gpuemu.NewSIMT // the kernels' warps and blocks as on a card
	}
	openGPU = func(int) (gpuDevice, error) {
		d, err := newEmu()
		if err != nil {
			return nil, err
		}
		return newEmuDevice(d), nil
	}
	t.Cleanup(func() { openGPU = old })
	return CUDA(0)
}

// gpuSIMT returns the GPU emulator's SIMT emulation (gpuemu.NewSIMT: each
// CUDA thread on its own, warps exchanging values by shuffles, blocks
// meeting at grid barriers) as cuda:0 for the rest of the test, so that
// the kernels' warp and grid cooperation runs without a card; it skips
// the test on a machine with a GPU (whose own tests run the kernels
// themselves) or without the emulator.
func gpuSIMT(t *testing.T, setup ...func(*gpuemu.Device)) Device {
	t.Helper()
	if ds, _ := Devices(); !emulating() && slices.ContainsFunc(ds, func(d DeviceInfo) bool { return d.Usable }) {
		t.Skip("a GPU is here: its tests run the kernels on it")
	}
	if _, err := gpuemu.NewSIMT(); err != nil {
		t.Skipf("no GPU emulator: %v", err)
	}
	old := openGPU
	openGPU = func(int) (gpuDevice, error) {
		d, err := gpuemu.NewSIMT()
		if err != nil {
			return nil, err
		}
		for _, f := range setup {
			f(d)
		}
		return newEmuDevice(d), nil
	}
	t.Cleanup(func() { openGPU = old })
	return CUDA(0)
}

// onEmulator makes cuda:0 the sequential emulator as wrap makes it, for
// the rest of the test; it skips the test without the emulator, or where
// a GPU is here (a test that changes the emulator, for why, has nothing
// to run on a card).
func onEmulator(t *testing.T, why string, wrap func(*gpuemu.Device) gpuDevice) {
	t.Helper()
	if _, err := gpuemu.New(); err != nil {
		t.Skipf("no GPU emulator: %v", err)
	}
	if ds, _ := Devices(); !emulating() && slices.ContainsFunc(ds, func(d DeviceInfo) bool { return d.Usable }) {
		t.Skip("a GPU is here: " + why)
	}
	old := openGPU
	openGPU = func(int) (gpuDevice, error) {
		d, err := gpuemu.New()
		if err != nil {
			return nil, err
		}
		return wrap(d), nil
	}
	t.Cleanup(func() { openGPU = old })
}

// A GPU whose memory runs out (the emulator's, limited) makes the pass
// that needs more fail with an error saying so, not a crash; the model
// goes on computing on the device with what fits, and moves back to the
// CPU with its parameters intact.
func TestGPUOutOfMemory(t *testing.T) {
	onEmulator(t, "the test limits an emulator's memory", func(d *gpuemu.Device) gpuDevice {
		d.SetMemoryLimit(4 << 20)
		return newEmuDevice(d)
	})
	for _, name := range []string{"wide-vocab", "rns-2-3", "jm-hidden"} {
		c := gpuConfigs()[name]
		cpu, g := twins(t, CUDA(0), c, Float64)
		rng := rand.New(rand.NewPCG(1, 2))
		vocab := min(c.InputVocab, c.OutputVocab-1)
		small := randomBatch(rng, 2, 5, vocab)
		big := randomBatch(rng, 64, 120, vocab) // LSTM: 64·121 rows of 700 scores (54 MB); RNS: 64 stack triangles of 121 positions
		if _, _, err := g.Gradient(big); err == nil || !strings.Contains(err.Error(), "out of memory") {
			t.Fatalf("%s: a batch beyond the device's memory: error %v", name, err)
		}
		want, _, err := cpu.Gradient(small)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := g.Gradient(small)
		if err != nil || relErr(got, want) > tolerance(Float64) {
			t.Errorf("%s: a batch that fits, after: loss %v, %v; the CPU's %v", name, got, err, want)
		}
		if err := g.SetDevice(CPU); err != nil {
			t.Fatal(err)
		}
		back, _, err := g.Gradient(small)
		if err != nil || back != want {
			t.Errorf("%s: back on the CPU: loss %v, %v; want %v", name, back, err, want)
		}
	}
	// A stream's chunk beyond the memory fails; the stream's next chunk,
	// which fits, continues from the state the failed one left alone.
	c := gpuConfigs()["rns-2-2-D3"]
	cpu, g := twins(t, CUDA(0), c, Float64)
	s1, s2 := mustStream(t, cpu, 4), mustStream(t, g, 4)
	rng := rand.New(rand.NewPCG(5, 6))
	in, tgt := randomStream(rng, 4, 3, min(c.InputVocab, c.OutputVocab))
	for _, s := range []*Stream{s1, s2} {
		if _, _, err := s.Gradient(in, tgt); err != nil {
			t.Fatal(err)
		}
	}
	bigIn, bigTgt := randomStream(rng, 4, 20000, min(c.InputVocab, c.OutputVocab))
	if _, _, err := s2.Gradient(bigIn, bigTgt); err == nil || !strings.Contains(err.Error(), "out of memory") {
		t.Fatalf("a chunk beyond the device's memory: error %v", err)
	}
	in, tgt = randomStream(rng, 4, 6, min(c.InputVocab, c.OutputVocab))
	l1, _, err := s1.Gradient(in, tgt)
	if err != nil {
		t.Fatal(err)
	}
	l2, _, err := s2.Gradient(in, tgt)
	if err != nil || relErr(l2, l1) > tolerance(Float64) {
		t.Errorf("the stream's next chunk: loss %v, %v; the CPU's %v", l2, err, l1)
	}
}

// A persistent LSTM kernel whose grid barrier times out (blocks that
// cannot all run at once: here, a clock that passes the wait's limit at
// once) makes the pass fail saying so, rather than return the wrong
// results of blocks that went on without the others; the next pass, with
// the barrier's wait long enough, gives the CPU's loss again.
func TestGPUPersistentBarrierTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("the SIMT emulation is slow")
	}
	var emu *gpuemu.Device
	d := gpuSIMT(t, func(g *gpuemu.Device) { emu = g; g.SetClockStep(1 << 40) })
	t.Setenv(EnvCUDALSTMStep, "persistent")
	c := gpuConfigs()["wide-vocab"] // 33 units: a grid of three blocks
	cpu, g := twins(t, d, c, Float64)
	batch := randomBatch(rand.New(rand.NewPCG(1, 2)), 5, 6, min(c.InputVocab, c.OutputVocab-1))
	if _, err := g.Loss(batch); err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("a pass whose grid barrier timed out: error %v", err)
	}
	emu.SetClockStep(1000)
	want, err := cpu.Loss(batch)
	if err != nil {
		t.Fatal(err)
	}
	got, err := g.Loss(batch)
	if err != nil || relErr(got, want) > tolerance(Float64) {
		t.Errorf("the next pass: loss %v, %v; the CPU's %v", got, err, want)
	}
}

// The kernels whose threads cooperate (the warp reductions of the NS
// program and the output layer, the fused LSTM steps' lanes, the
// persistent LSTM's grid barrier across three blocks) give the CPU's
// results when every CUDA thread runs on its own, as on a card: the
// sequential emulator of the other tests runs one lane per warp and one
// block per grid, where a lane's or a barrier's mistake cannot show. A
// few small models each way, and a memory-limited stack's stream;
// NSRNN_GPU_EMULATOR=simt runs every GPU test so (slowly).
func TestGPUKernelsSIMT(t *testing.T) {
	if testing.Short() {
		t.Skip("the SIMT emulation is slow")
	}
	d := gpuSIMT(t)
	all := gpuConfigs()
	pick := func(names ...string) map[string]Config {
		m := map[string]Config{}
		for _, n := range names {
			m[n] = all[n]
		}
		return m
	}
	checkGPUSentences(t, d, pick("onehot", "rns-2-3", "jm-hidden", "vrns-fixed"))
	checkGPUStreams(t, d, pick("rns-2-2-D3"))
	for _, v := range []string{"fused", "persistent"} {
		t.Run(v, func(t *testing.T) {
			t.Setenv(EnvCUDALSTMStep, v)
			t.Setenv(EnvCUDALSTMBack, "fused")
			checkGPUSentences(t, d, pick("wide-vocab"))
		})
	}
}

// gpuConfigs are the configurations that the GPU runs in sentence mode;
// those that can carry their state run in stream mode too.
func gpuConfigs() map[string]Config {
	return map[string]Config{
		"onehot":                {Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 7, InitRange: 0.5},
		"embed":                 {Kind: LSTM, InputVocab: 9, OutputVocab: 9, Embedding: 5, Hidden: 6, InitRange: 0.5},
		"embed-2":               {Kind: LSTM, InputVocab: 9, OutputVocab: 9, Embedding: 5, Hidden: 6, Layers: 2, InitRange: 0.5},
		"onehot-3":              {Kind: LSTM, InputVocab: 5, OutputVocab: 6, Hidden: 4, Layers: 3, InitRange: 0.5},
		"wide-vocab":            {Kind: LSTM, InputVocab: 600, OutputVocab: 700, Embedding: 8, Hidden: 33, InitRange: 0.1},
		"jm-vec":                {Kind: JM, InputVocab: 3, OutputVocab: 4, Hidden: 7, StackEmbedding: 3, InitRange: 0.5},
		"jm-hidden":             {Kind: JM, InputVocab: 3, OutputVocab: 4, Hidden: 5, PushHiddenState: true, InitRange: 0.5},
		"jm-hidden-d3":          {Kind: JM, InputVocab: 9, OutputVocab: 9, Embedding: 4, Hidden: 6, PushHiddenState: true, DepthLimit: 3, InitRange: 0.5},
		"jm-vec-d4-2":           {Kind: JM, InputVocab: 9, OutputVocab: 9, Embedding: 4, Hidden: 6, StackEmbedding: 2, DepthLimit: 4, Layers: 2, InitRange: 0.5},
		"jm-onehot-d2":          {Kind: JM, InputVocab: 5, OutputVocab: 6, Hidden: 4, StackEmbedding: 3, DepthLimit: 2, InitRange: 0.5},
		"gref":                  {Kind: Gref, InputVocab: 3, OutputVocab: 4, Hidden: 7, StackEmbedding: 3, InitRange: 0.5},
		"gref-embed-2":          {Kind: Gref, InputVocab: 9, OutputVocab: 9, Embedding: 4, Hidden: 5, StackEmbedding: 2, Layers: 2, InitRange: 0.5},
		"rns-2-3":               {Kind: RNS, InputVocab: 3, OutputVocab: 4, Hidden: 7, States: 2, Symbols: 3, InitRange: 0.5},
		"ns-2-2":                {Kind: NS, InputVocab: 3, OutputVocab: 4, Hidden: 6, States: 2, Symbols: 2, InitRange: 0.5},
		"nss-1-2-fixed":         {Kind: NSS, InputVocab: 4, OutputVocab: 5, Hidden: 5, States: 1, Symbols: 2, Bottom: stacks.Fixed, InitRange: 0.5},
		"nsu-2-2-fixed":         {Kind: NSU, InputVocab: 3, OutputVocab: 4, Hidden: 5, States: 2, Symbols: 2, Bottom: stacks.Fixed, InitRange: 0.5},
		"rns-2-2-D3":            {Kind: RNS, InputVocab: 3, OutputVocab: 4, Hidden: 6, States: 2, Symbols: 2, Window: 3, InitRange: 0.5},
		"rns-fixed-D4":          {Kind: RNS, InputVocab: 9, OutputVocab: 9, Embedding: 4, Hidden: 6, States: 2, Symbols: 2, Window: 4, Bottom: stacks.Fixed, InitRange: 0.5},
		"rns-1-2-D35":           {Kind: RNS, InputVocab: 9, OutputVocab: 9, Embedding: 4, Hidden: 5, States: 1, Symbols: 2, Window: 35, InitRange: 0.5},
		"ns-fixed-D3":           {Kind: NS, InputVocab: 9, OutputVocab: 9, Embedding: 4, Hidden: 5, States: 2, Symbols: 2, Window: 3, Bottom: stacks.Fixed, InitRange: 0.5},
		"rns-3-4":               {Kind: RNS, InputVocab: 9, OutputVocab: 9, Embedding: 5, Hidden: 8, States: 3, Symbols: 4, InitRange: 0.5},
		"vrns-learned":          {Kind: VRNS, InputVocab: 3, OutputVocab: 4, Hidden: 6, States: 2, Symbols: 2, StackEmbedding: 3, InitRange: 0.5},
		"vrns-fixed":            {Kind: VRNS, InputVocab: 3, OutputVocab: 4, Hidden: 6, States: 2, Symbols: 2, StackEmbedding: 2, Bottom: stacks.Fixed, InitRange: 0.5},
		"vrns-zero-D3":          {Kind: VRNS, InputVocab: 9, OutputVocab: 9, Embedding: 4, Hidden: 5, States: 1, Symbols: 2, StackEmbedding: 2, Window: 3, BottomVector: stacks.ZeroBottom, InitRange: 0.5},
		"vrns-learned-D4-fixed": {Kind: VRNS, InputVocab: 9, OutputVocab: 9, Embedding: 4, Hidden: 5, States: 2, Symbols: 2, StackEmbedding: 2, Window: 4, Bottom: stacks.Fixed, InitRange: 0.5},
		"vrns-one-fixed":        {Kind: VRNS, InputVocab: 3, OutputVocab: 4, Hidden: 5, States: 1, Symbols: 3, StackEmbedding: 2, Bottom: stacks.Fixed, BottomVector: stacks.OneBottom, InitRange: 0.5},
		"jm-wide-hidden":        {Kind: JM, InputVocab: 300, OutputVocab: 300, Embedding: 16, Hidden: 40, PushHiddenState: true, DepthLimit: 10, InitRange: 0.1},
	}
}

// carries reports whether models of c run as streams on the GPU.
func carries(t *testing.T, c Config) bool {
	m, err := New(c, 1)
	if err != nil {
		t.Fatal(err)
	}
	return m.stack == nil || m.stack.Carryable() == nil
}

// twins returns a model on the CPU and the same model on the GPU.
func twins(t *testing.T, d Device, c Config, p Precision) (cpu, gpu *Model) {
	t.Helper()
	a, err := New(c, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, err := New(c, 7)
	if err != nil {
		t.Fatal(err)
	}
	b.Precision = p
	if err := b.SetDevice(d); err != nil {
		t.Fatal(err)
	}
	if b.Device() != d {
		t.Fatalf("Device() = %v after SetDevice(%v)", b.Device(), d)
	}
	return a, b
}

// relErr is |a−b|/max(|a|, |b|, tiny).
func relErr(a, b float64) float64 {
	s := max(math.Abs(a), math.Abs(b), 1e-300)
	return math.Abs(a-b) / s
}

// tolerance is the GPU's agreement with the CPU in float64: the CPU's own
// rounding times the products' lengths; in float32 the GPU computes every
// product, state and score in float32.
func tolerance(p Precision) float64 {
	if p == Float32 {
		return 1e-5
	}
	return 1e-9
}

// The GPU's loss, every gradient and the log-probabilities equal the CPU's
// from the same parameters and batch, in sentence mode.
func TestGPUSentenceMatchesCPU(t *testing.T) {
	checkGPUSentences(t, gpu(t), gpuConfigs())
}

// The GPU's fused LSTM steps (EnvCUDALSTMStep and EnvCUDALSTMBack =
// fused, fused2, fused8: a step's products split over warps, and the
// cell, in one kernel, forward, backward or both) give the CPU's loss,
// gradients and log-probabilities as the product and cell kernels do: for LSTMs of one to three layers, hidden sizes below and
// above a warp, and stack models of one and two layers (whose steps add
// the stack's reading, or the layer below's h_t, in the same kernel);
// batches of 5 leave the last warp's group of rows part-filled (with 2 and
// 4 rows per warp) or fill part of one (8).
func TestGPUFusedLSTMStepMatchesCPU(t *testing.T) {
	d := gpu(t)
	all := gpuConfigs()
	some := map[string]Config{}
	for _, name := range []string{"onehot", "embed-2", "onehot-3", "wide-vocab", "jm-hidden", "jm-vec-d4-2", "gref", "gref-embed-2", "rns-2-2-D3", "vrns-fixed"} {
		some[name] = all[name]
	}
	for v := range fusedSteps {
		dirs := []string{"forward", "backward", "both"}
		if v != "fused" {
			dirs = dirs[2:] // the other widths: both directions at once
		}
		for _, dir := range dirs {
			t.Run(v+"/"+dir, func(t *testing.T) {
				if dir != "backward" {
					t.Setenv(EnvCUDALSTMStep, v)
				}
				if dir != "forward" {
					t.Setenv(EnvCUDALSTMBack, v)
				}
				checkGPUSentences(t, d, some)
			})
		}
	}
}

// The persistent LSTM kernels (EnvCUDALSTMStep = persistent,
// persistent8: a chunk's steps of a layer in one launch, its warps
// meeting at a grid barrier between steps) give the CPU's loss, gradients
// and log-probabilities, forward (they run the LSTM's layers; a stack
// model's keep a launch per step), on sentences and on streams, which
// start from a carried state: LSTMs of one to three layers, hidden sizes
// below and above a warp, batches that part-fill a warp's rows. On a
// card the small models run on two blocks and more, so the barrier is
// crossed; under the sequential emulator, one block (TestGPUKernelsSIMT
// crosses it on three). (A test of its own, so that the device check can
// give it a time limit of its own.)
func TestGPUPersistentLSTMMatchesCPU(t *testing.T) {
	d := gpu(t)
	all := gpuConfigs()
	lstms := map[string]Config{}
	for _, name := range []string{"onehot", "embed-2", "onehot-3", "wide-vocab"} {
		lstms[name] = all[name]
	}
	for v := range persistentSteps {
		t.Run(v, func(t *testing.T) {
			t.Setenv(EnvCUDALSTMStep, v)
			checkGPUSentences(t, d, lstms)
			checkGPUStreams(t, d, lstms)
		})
	}
}

// The output layer pipelined beside the recurrence on a second stream
// (the default, EnvCUDAPipeline; LSTMs and stack models of every family)
// and queued after it on one stream both
// give the CPU's loss, gradients and log-probabilities, and each other's:
// on a card to the products' rounding (cuBLAS may sum a block of rows in
// another order than all of them), under the emulator bit for bit. The
// sentence lengths and stream chunks put the positions in one block, in
// whole blocks (outputBlockSteps) and in whole blocks and a rest.
func TestGPUPipelinedOutput(t *testing.T) {
	d := gpu(t)
	all := gpuConfigs()
	lstms := map[string]Config{}
	for _, name := range []string{"onehot", "embed-2", "wide-vocab", "jm-hidden-d3", "gref-embed-2", "rns-1-2-D35", "vrns-fixed"} {
		lstms[name] = all[name]
	}
	t.Run("serial", func(t *testing.T) {
		t.Setenv(EnvCUDAPipeline, "0")
		checkGPUSentences(t, d, lstms)
		checkGPUStreams(t, d, lstms)
	})
	// run returns a model's losses, gradients and log-probabilities on
	// sentences and on a stream's chunks.
	run := func(c Config, p Precision) (losses []float64, grads [][][]float64, lps [][][][]float64) {
		_, g := twins(t, d, c, p)
		rng := rand.New(rand.NewPCG(5, 6))
		for _, n := range []int{1, outputBlockSteps - 1, outputBlockSteps, 2*outputBlockSteps + 3, 40} {
			batch := randomBatch(rng, 3, n, min(c.InputVocab, c.OutputVocab-1))
			l, gr, err := g.Gradient(batch)
			if err != nil {
				t.Fatal(err)
			}
			lp, err := g.LogProbs(batch)
			if err != nil {
				t.Fatal(err)
			}
			losses, grads, lps = append(losses, l), append(grads, cloneGrads(gr)), append(lps, lp)
		}
		if !carries(t, c) {
			return losses, grads, lps
		}
		s := mustStream(t, g, 3)
		for _, T := range []int{outputBlockSteps, 2 * outputBlockSteps, 3, 35} {
			in, tgt := randomStream(rng, 3, T, min(c.InputVocab, c.OutputVocab))
			l, gr, err := s.Gradient(in, tgt)
			if err != nil {
				t.Fatal(err)
			}
			losses, grads = append(losses, l), append(grads, cloneGrads(gr))
		}
		return losses, grads, lps
	}
	for name, c := range lstms {
		for _, p := range []Precision{Float64, Float32} {
			t.Setenv(EnvCUDAPipeline, "1")
			l1, g1, lp1 := run(c, p)
			t.Setenv(EnvCUDAPipeline, "0")
			l2, g2, lp2 := run(c, p)
			tol := tolerance(p)
			if emulating() {
				tol = 0
			}
			for i := range l1 {
				if e := relErr(l1[i], l2[i]); e > tol {
					t.Errorf("%s %v pass %d: loss %v pipelined, %v on one stream", name, p, i, l1[i], l2[i])
				}
				if e := gradcheck.TensorsErr(g1[i], g2[i]); e > tol {
					t.Errorf("%s %v pass %d: gradients differ by %.2g relative", name, p, i, e)
				}
			}
			for i := range lp1 {
				if e := maxAbsDiff3(lp1[i], lp2[i]); e > 100*tol {
					t.Errorf("%s %v sentences %d: log-probabilities differ by %.2g", name, p, i, e)
				}
			}
		}
	}
}

// captureFaults is an emulated GPU whose captures fail: those in which the
// second stream was used, or all of them (all), as a driver that refuses
// them would.
type captureFaults struct {
	gpuDevice
	all, capturing, sideUsed bool
}

func (d *captureFaults) beginCapture() error {
	d.capturing, d.sideUsed = true, false
	return d.gpuDevice.beginCapture()
}

func (d *captureFaults) side() error {
	d.sideUsed = d.sideUsed || d.capturing
	return d.gpuDevice.side()
}

func (d *captureFaults) endCapture() (gpuGraph, error) {
	d.capturing = false
	g, err := d.gpuDevice.endCapture()
	if err == nil && (d.all || d.sideUsed) {
		g.Destroy()
		return nil, errors.New("injected: the capture failed")
	}
	return g, err
}

// A capture that fails with the output layer on the second stream turns
// the second stream off and keeps the graphs (captured on one stream
// from then on); where captures fail on one stream too, the passes run
// launch by launch. Either way every pass gives the CPU's results.
func TestGPUCaptureFallback(t *testing.T) {
	for _, all := range []bool{false, true} {
		onEmulator(t, "the test injects faults into an emulator", func(d *gpuemu.Device) gpuDevice {
			return &captureFaults{gpuDevice: newEmuDevice(d), all: all}
		})
		for _, name := range []string{"embed", "rns-2-3"} {
			c := gpuConfigs()[name]
			cpu, g := twins(t, CUDA(0), c, Float64)
			rng := rand.New(rand.NewPCG(3, 3))
			for i := range 4 { // the second pass of the shape is captured
				batch := randomBatch(rng, 3, 9, min(c.InputVocab, c.OutputVocab-1))
				checkGradient(t, cpu, g, batch, tolerance(Float64), fmt.Sprintf("%s all=%v pass %d", name, all, i))
			}
			graphs, pipeline := DeviceModes(g)
			if pipeline || graphs == all {
				t.Errorf("%s all=%v: graphs %v, pipeline %v after failed captures; want graphs %v, pipeline false", name, all, graphs, pipeline, !all)
			}
		}
	}
}

// With every product in cuBLAS (EnvCUDASmallProducts=0: the small
// models of these tests otherwise run most of theirs in the engine's own
// kernels), the GPU still gives the CPU's loss, gradients and
// log-probabilities.
func TestGPUCuBLASProductsMatchCPU(t *testing.T) {
	t.Setenv(EnvCUDASmallProducts, "0")
	d := gpu(t)
	all := gpuConfigs()
	some := map[string]Config{}
	for _, name := range []string{"embed-2", "wide-vocab", "jm-vec", "jm-hidden-d3", "gref", "rns-2-3", "ns-fixed-D3", "vrns-learned"} {
		some[name] = all[name]
	}
	checkGPUSentences(t, d, some)
}

// checkGradient checks g's loss and gradients on batch against cpu's,
// within tol relative (what names the case), and returns g's loss.
func checkGradient(t *testing.T, cpu, g *Model, batch Batch, tol float64, what string) float64 {
	t.Helper()
	l1, g1, err := cpu.Gradient(batch)
	if err != nil {
		t.Fatal(err)
	}
	g1 = cloneGrads(g1)
	l2, g2, err := g.Gradient(batch)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if e := relErr(l2, l1); e > tol {
		t.Errorf("%s: loss %v on the GPU, %v on the CPU (relative %.2g)", what, l2, l1, e)
	}
	var own [][]float64
	if g.Precision == Float32 {
		_, g3, err := float32Twin(t, cpu).Gradient(batch)
		if err != nil {
			t.Fatal(err)
		}
		own = g3
	}
	if e := gradErr(g2, g1, own); e > tol {
		t.Errorf("%s: gradients differ by %.2g relative", what, e)
	}
	return l2
}

// float32Twin returns a copy of the CPU model m that computes its products
// in float32.
func float32Twin(t *testing.T, m *Model) *Model {
	t.Helper()
	b, err := m.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	c, err := UnmarshalModel(b)
	if err != nil {
		t.Fatal(err)
	}
	c.Precision = Float32
	return c
}

// gradErr is the worst relative error, each tensor by its norm, of the
// GPU's gradients got against the CPU's in float64 (ref). With own, the
// CPU's gradients from float32 products (for a GPU computing in float32),
// a tensor counts only where its error exceeds twice the CPU's own
// float32 error on it: the gradient of a layer orders of magnitude below
// the others' (a stack's action layer at initialization) is a sum whose
// terms cancel, and float32 rounding costs it digits on either device, as
// much as 1.9e-5 of its norm on the CPU; there the GPU is held to the
// CPU's float32 accuracy rather than to the tolerance.
func gradErr(got, ref, own [][]float64) float64 {
	worst := 0.0
	for i := range ref {
		e := gradcheck.TensorsErr(got[i:i+1], ref[i:i+1])
		if own != nil && e <= 2*gradcheck.TensorsErr(own[i:i+1], ref[i:i+1]) {
			continue
		}
		worst = max(worst, e)
	}
	return worst
}

// checkGPUSentences checks the GPU's loss, gradients and log-probabilities
// against the CPU's for each configuration, in both precisions.
func checkGPUSentences(t *testing.T, d Device, configs map[string]Config) {
	t.Helper()
	for name, c := range configs {
		for _, p := range []Precision{Float64, Float32} {
			cpu, g := twins(t, d, c, p)
			rng := rand.New(rand.NewPCG(1, 2))
			for _, n := range []int{0, 1, 9, 40} {
				batch := randomBatch(rng, 5, n, min(c.InputVocab, c.OutputVocab-1))
				tol := tolerance(p)
				l2 := checkGradient(t, cpu, g, batch, tol, fmt.Sprintf("%s %v n=%d", name, p, n))
				lp1, err := cpu.LogProbs(batch)
				if err != nil {
					t.Fatal(err)
				}
				lp2, err := g.LogProbs(batch)
				if err != nil {
					t.Fatal(err)
				}
				if e := maxAbsDiff3(lp1, lp2); e > 100*tol {
					t.Errorf("%s %v n=%d: log-probabilities differ by %.2g", name, p, n, e)
				}
				loss, err := g.Loss(batch)
				if err != nil {
					t.Fatal(err)
				}
				if loss != l2 {
					t.Errorf("%s %v n=%d: Loss %v, Gradient's loss %v", name, p, n, loss, l2)
				}
			}
		}
	}
}

// stateErr compares the states of two streams: for a nondeterministic
// stack the LSTM's and the stack's log weights (whose encodings differ in
// their choice of scales), else their encodings, whose integers must be
// equal; it returns the largest difference relative to the largest value.
func stateErr(t *testing.T, a, b *Stream) float64 {
	t.Helper()
	if ns := nsLayer(a.m.stack); ns != nil {
		logState := func(st *State) *stacks.NSLogState {
			hs, err := hostStackState(st.stack)
			if err != nil {
				t.Fatal(err)
			}
			ls, err := ns.LogState(hs)
			if err != nil {
				t.Fatal(err)
			}
			return ls
		}
		x, y := logState(a.State()), logState(b.State())
		if x.Positions != y.Positions {
			t.Fatalf("states of %d and %d positions", x.Positions, y.Positions)
		}
		bl, err := b.State().carry()
		if err != nil {
			t.Fatal(err)
		}
		al, err := a.State().carry()
		if err != nil {
			t.Fatal(err)
		}
		worst := gradcheck.TensorsErr(bl, al)
		worst = max(worst, gradcheck.TensorsErr([][]float64{y.Reading}, [][]float64{x.Reading}))
		for i := range x.LogAlpha {
			for _, pair := range [][2][]float64{{x.LogAlpha[i], y.LogAlpha[i]}, {x.LogGamma[i], y.LogGamma[i]}} {
				for j := range pair[0] {
					u, v := pair[0][j], pair[1][j]
					if math.IsInf(u, -1) && math.IsInf(v, -1) {
						continue
					}
					worst = max(worst, math.Abs(u-v)/max(1, math.Abs(u)))
				}
			}
		}
		return worst
	}
	x, err := a.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	y, err := b.MarshalState()
	if err != nil {
		t.Fatal(err)
	}
	if len(x) != len(y) {
		t.Fatalf("states of %d and %d bytes", len(x), len(y))
	}
	var worst, scale float64
	for i := len(stateMagic); i+8 <= len(x); i += 8 {
		u, v := binary.LittleEndian.Uint64(x[i:]), binary.LittleEndian.Uint64(y[i:])
		if u == v {
			continue
		}
		f, g := math.Float64frombits(u), math.Float64frombits(v)
		worst = max(worst, math.Abs(f-g))
		scale = max(scale, math.Abs(f))
	}
	if worst == 0 {
		return 0
	}
	return worst / max(scale, 1e-300)
}

func maxAbsDiff3(a, b [][][]float64) float64 {
	worst := 0.0
	for i := range a {
		for j := range a[i] {
			for k := range a[i][j] {
				worst = max(worst, math.Abs(a[i][j][k]-b[i][j][k]))
			}
		}
	}
	return worst
}

// In stream mode, chunk after chunk with the state carried (on the device)
// and positions without targets, the GPU's losses, gradients and final
// states equal the CPU's; a state handed from the CPU continues on the GPU.
func TestGPUStreamMatchesCPU(t *testing.T) {
	checkGPUStreams(t, gpu(t), gpuConfigs())
}

// checkGPUStreams checks, for each configuration that carries a state,
// a stream's losses, gradients, states and log-probabilities on the GPU
// against the CPU's over chunks of several lengths, with the state handed
// from one device to the other between them, in both precisions.
func checkGPUStreams(t *testing.T, d Device, configs map[string]Config) {
	t.Helper()
	for name, c := range configs {
		if !carries(t, c) {
			continue
		}
		for _, p := range []Precision{Float64, Float32} {
			cpu, g := twins(t, d, c, p)
			s1, s2 := mustStream(t, cpu, 4), mustStream(t, g, 4)
			// In float32, the CPU's own float32 gradients, from the CPU's
			// state at every chunk, measure what float32 rounding costs.
			var s3 *Stream
			if p == Float32 {
				s3 = mustStream(t, float32Twin(t, cpu), 4)
			}
			rng := rand.New(rand.NewPCG(3, 4))
			tol := tolerance(p)
			for k, T := range []int{5, 1, 12, 7} {
				in, tgt := randomStream(rng, 4, T, min(c.InputVocab, c.OutputVocab))
				tgt[1][0] = NoTarget
				var g3 [][]float64
				if s3 != nil {
					if err := s3.SetState(s1.State()); err != nil {
						t.Fatal(err)
					}
					_, g, err := s3.Gradient(in, tgt)
					if err != nil {
						t.Fatal(err)
					}
					g3 = cloneGrads(g)
				}
				l1, g1, err := s1.Gradient(in, tgt)
				if err != nil {
					t.Fatal(err)
				}
				g1 = cloneGrads(g1)
				l2, g2, err := s2.Gradient(in, tgt)
				if err != nil {
					t.Fatal(err)
				}
				if e := relErr(l2, l1); e > tol {
					t.Errorf("%s %v chunk %d: loss %v on the GPU, %v on the CPU", name, p, k, l2, l1)
				}
				if e := gradErr(g2, g1, g3); e > tol {
					t.Errorf("%s %v chunk %d: gradients differ by %.2g relative", name, p, k, e)
				}
				if e := stateErr(t, s1, s2); e > tol {
					t.Errorf("%s %v chunk %d: final states differ by %.2g relative", name, p, k, e)
				}
				switch k {
				case 1:
					// The GPU continues from the CPU's state.
					if err := s2.SetState(s1.State()); err != nil {
						t.Fatal(err)
					}
				case 2:
					// The CPU continues from the GPU's.
					if err := s1.SetState(s2.State()); err != nil {
						t.Fatal(err)
					}
				}
			}
			in := randomBatch(rng, 4, 3, min(c.InputVocab, c.OutputVocab))
			lp1, err := s1.LogProbs(in)
			if err != nil {
				t.Fatal(err)
			}
			lp2, err := s2.LogProbs(in)
			if err != nil {
				t.Fatal(err)
			}
			if e := maxAbsDiff3(lp1, lp2); e > 100*tol {
				t.Errorf("%s %v: stream log-probabilities differ by %.2g", name, p, e)
			}
		}
	}
}

// On the GPU a stream's loss computed in chunks equals its loss as one
// chunk (the forward pass is exact across chunk boundaries).
func TestGPUStreamChunkedEqualsWhole(t *testing.T) {
	d := gpu(t)
	c := gpuConfigs()["embed-2"]
	_, g := twins(t, d, c, Float64)
	rng := rand.New(rand.NewPCG(5, 6))
	in, tgt := randomStream(rng, 3, 30, c.InputVocab)
	s := mustStream(t, g, 3)
	whole, err := s.Loss(in, tgt)
	if err != nil {
		t.Fatal(err)
	}
	s.Reset()
	total := 0.0
	for _, cut := range [][2]int{{0, 7}, {7, 8}, {8, 30}} {
		l, err := s.Loss(cols(in, cut[0], cut[1]), cols(tgt, cut[0], cut[1]))
		if err != nil {
			t.Fatal(err)
		}
		total += l * float64(3*(cut[1]-cut[0]))
	}
	if e := relErr(total/90, whole); e > 1e-12 {
		t.Fatalf("chunked loss %v, whole %v (relative %.2g)", total/90, whole, e)
	}
}

// 200 training steps on the GPU (SGD with clipping on a stream, Adam on
// sentences, the update made on the device) track the CPU's losses, and
// the trained parameters come back to the host.
func TestGPUTrainingTracksCPU(t *testing.T) {
	d := gpu(t)
	type trace []float64
	train := func(m *Model, adam bool) (trace, *Model) {
		var losses trace
		rec := RecorderFunc(func(e Event) error {
			if e.Kind == StepDone {
				losses = append(losses, e.Loss)
			}
			return nil
		})
		rng := rand.New(rand.NewPCG(9, 9))
		if adam {
			var train, valid []Batch
			for i := 0; i < 50; i++ {
				train = append(train, randomBatch(rng, 4, 6+i%5, 3))
			}
			valid = append(valid, randomBatch(rng, 4, 8, 3))
			cfg := TrainConfig{Optimizer: NewAdam(0.01, m.paramSizes()), Clip: 1, MaxEpochs: 4, EarlyStop: 10, Recorder: rec, NoLowerBound: true}
			if _, err := Train(m, train, valid, cfg); err != nil {
				t.Fatal(err)
			}
			return losses, m
		}
		s := mustStream(t, m, 4)
		in, tgt := randomStream(rng, 4, 50*5, m.cfg.InputVocab)
		obj, err := StreamObjective(s, 50, func(i int) ([][]int, [][]int, error) {
			return cols(in, 5*i, 5*i+5), cols(tgt, 5*i, 5*i+5), nil
		}, func() (float64, error) { return 1, nil })
		if err != nil {
			t.Fatal(err)
		}
		cfg := TrainConfig{Optimizer: NewSGD(0.5), Clip: 0.5, MaxEpochs: 4, EarlyStop: 10, Recorder: rec, NoLowerBound: true}
		if _, err := Fit(m, obj, cfg); err != nil {
			t.Fatal(err)
		}
		return losses, m
	}
	for _, c := range []struct {
		name string
		cfg  Config
		adam bool
	}{
		{"sgd-stream", gpuConfigs()["embed"], false},
		{"adam-sentences", gpuConfigs()["onehot"], true},
		{"jm-sgd-stream", gpuConfigs()["jm-hidden-d3"], false},
		{"jm-adam-sentences", gpuConfigs()["jm-vec"], true},
		{"gref-adam-sentences", gpuConfigs()["gref"], true},
		{"rns-adam-sentences", gpuConfigs()["rns-2-3"], true},
		{"rns-sgd-stream", gpuConfigs()["rns-fixed-D4"], false},
		{"vrns-adam-sentences", gpuConfigs()["vrns-fixed"], true},
	} {
		cpu, g := twins(t, d, c.cfg, Float64)
		l1, m1 := train(cpu, c.adam)
		l2, m2 := train(g, c.adam)
		if len(l1) != 200 || len(l2) != 200 {
			t.Fatalf("%s: %d and %d steps, want 200", c.name, len(l1), len(l2))
		}
		for i := range l1 {
			if e := relErr(l2[i], l1[i]); e > 1e-6 {
				t.Fatalf("%s: step %d: mean loss %v on the GPU, %v on the CPU (relative %.2g)", c.name, i+1, l2[i], l1[i], e)
			}
		}
		p1, p2 := m1.Params(), m2.Params()
		for i := range p1 {
			a, b := p1[i].Data(), p2[i].Data()
			for j := range a {
				if relErr(a[j], b[j]) > 1e-6 && math.Abs(a[j]-b[j]) > 1e-9 {
					t.Fatalf("%s: parameter %s[%d] is %v after GPU training, %v after CPU training", c.name, p1[i].Name, j, b[j], a[j])
				}
			}
		}
		// Back on the CPU, the GPU-trained model scores as it did there.
		batch := randomBatch(rand.New(rand.NewPCG(1, 1)), 3, 5, 3)
		lg, err := m2.Loss(batch)
		if err != nil {
			t.Fatal(err)
		}
		if err := m2.SetDevice(CPU); err != nil {
			t.Fatal(err)
		}
		lc, err := m2.Loss(batch)
		if err != nil {
			t.Fatal(err)
		}
		if e := relErr(lg, lc); e > 1e-12 {
			t.Fatalf("%s: loss %v on the GPU, %v after moving to the CPU", c.name, lg, lc)
		}
	}
}

// The GPU gives the same bits on the same inputs (its reductions have a
// fixed order).
func TestGPUDeterministic(t *testing.T) {
	d := gpu(t)
	for _, p := range []Precision{Float64, Float32} {
		_, g := twins(t, d, gpuConfigs()["wide-vocab"], p)
		batch := randomBatch(rand.New(rand.NewPCG(2, 2)), 8, 20, 600)
		l1, g1, err := g.Gradient(batch)
		if err != nil {
			t.Fatal(err)
		}
		g1 = cloneGrads(g1)
		l2, g2, err := g.Gradient(batch)
		if err != nil {
			t.Fatal(err)
		}
		if l1 != l2 || gradcheck.TensorsErr(g1, g2) != 0 {
			t.Fatalf("%v: two runs differ: loss %v and %v, gradients by %g", p, l1, l2, gradcheck.TensorsErr(g1, g2))
		}
	}
}

// A pass of a shape seen before is captured as a graph and replayed, with
// the results of the pass launched kernel by kernel, for every kind the
// GPU runs, in both modes.
func TestGPUGraphsReplay(t *testing.T) {
	d := gpu(t)
	for name, c := range gpuConfigs() {
		_, g := twins(t, d, c, Float64)
		e := g.eng.(*cudaEngine)
		if e.noGraphs {
			t.Skipf("%s=0", EnvCUDAGraphs)
		}
		batch := randomBatch(rand.New(rand.NewPCG(4, 4)), 3, 6, min(c.InputVocab, c.OutputVocab-1))
		var losses []float64
		var grads [][][]float64
		for range 3 {
			l, gr, err := g.Gradient(batch)
			if err != nil {
				t.Fatal(err)
			}
			losses, grads = append(losses, l), append(grads, cloneGrads(gr))
		}
		if e.noGraphs || len(e.graphs) == 0 {
			t.Fatalf("%s: no pass was captured (noGraphs %v)", name, e.noGraphs)
		}
		for i := 1; i < 3; i++ {
			if losses[i] != losses[0] || gradcheck.TensorsErr(grads[i], grads[0]) != 0 {
				t.Fatalf("%s: pass %d (captured or replayed) gives loss %v, the first %v; gradients differ by %g", name, i+1, losses[i], losses[0], gradcheck.TensorsErr(grads[i], grads[0]))
			}
		}
		if !carries(t, c) {
			continue
		}
		s := mustStream(t, g, 2)
		rng := rand.New(rand.NewPCG(5, 5))
		var first []float64
		for k := range 4 {
			in, tgt := randomStream(rng, 2, 5, min(c.InputVocab, c.OutputVocab))
			l, err := s.Loss(in, tgt)
			if err != nil {
				t.Fatal(err)
			}
			first = append(first, l)
			_ = k
		}
		s.Reset()
		e.noGraphs = true
		rng = rand.New(rand.NewPCG(5, 5))
		for k := range 4 {
			in, tgt := randomStream(rng, 2, 5, min(c.InputVocab, c.OutputVocab))
			l, err := s.Loss(in, tgt)
			if err != nil {
				t.Fatal(err)
			}
			if l != first[k] {
				t.Fatalf("%s: stream chunk %d: loss %v from graphs, %v launched kernel by kernel", name, k, first[k], l)
			}
		}
	}
}

// Two streams of one model take turns on the GPU, and a state handed out
// is taken up again later: the LSTM and stack states the device keeps
// come to the host whenever something may still need them, and every loss
// equals the CPU's.
func TestGPUStreamStatesKept(t *testing.T) {
	d := gpu(t)
	for _, name := range []string{"embed-2", "rns-2-2-D3", "ns-fixed-D3", "rns-1-2-D35", "vrns-zero-D3", "vrns-learned-D4-fixed", "jm-hidden-d3", "jm-vec-d4-2"} {
		c := gpuConfigs()[name]
		cpu, g := twins(t, d, c, Float64)
		rng := rand.New(rand.NewPCG(8, 8))
		var chunks [][2][][]int
		for range 6 {
			in, tgt := randomStream(rng, 2, 4, min(c.InputVocab, c.OutputVocab))
			chunks = append(chunks, [2][][]int{in, tgt})
		}
		script := func(m *Model) []float64 {
			a, b := mustStream(t, m, 2), mustStream(t, m, 2)
			var losses []float64
			run := func(s *Stream, k int) {
				l, err := s.Loss(chunks[k][0], chunks[k][1])
				if err != nil {
					t.Fatal(err)
				}
				losses = append(losses, l)
			}
			run(a, 0)
			run(b, 1)
			run(a, 2) // a's state was kept on the device before b's chunk
			held := a.State()
			run(a, 3)
			run(b, 4)
			if err := a.SetState(held); err != nil {
				t.Fatal(err)
			}
			run(a, 3) // again from the state handed out
			run(a, 5)
			return losses
		}
		want, got := script(cpu), script(g)
		for i := range want {
			if e := relErr(got[i], want[i]); e > 1e-9 {
				t.Fatalf("%s: loss %d: %v on the GPU, %v on the CPU", name, i, got[i], want[i])
			}
		}
		t.Logf("%s: got %v want %v", name, got, want)
		// The held state came to the host, where γ is kept in the CPU's
		// scaled form (log γ → a mantissa and a block exponent → log γ
		// again rounds): the chunk run again from it is the first run to
		// within that rounding, not bit for bit (TestGPUDeterministic has
		// the same bits from the same device state).
		if e := relErr(got[5], got[3]); e > 1e-12 {
			t.Fatalf("%s: the chunk run again from the held state gives %v, first %v (relative difference %.2g)", name, got[5], got[3], e)
		}
	}
}

// A training run on the GPU stopped within an epoch with a checkpoint
// resumes on the GPU where it stopped and ends where the uninterrupted GPU
// run ends, to the rounding of the stack state's trip through the host;
// resumed on the CPU it ends there too, to the rounding that separates the
// devices. Stream objectives (the carried state in the checkpoint) with SGD,
// and Adam on sentences.
func TestGPUResumeAcrossDevices(t *testing.T) {
	d := gpu(t)
	for _, name := range []string{"rns-fixed-D4", "jm-hidden-d3", "embed-2"} {
		cfg := gpuConfigs()[name]
		dir := t.TempDir()
		tc := func(file string) TrainConfig {
			return TrainConfig{
				Optimizer: NewAdam(0.01, nil), Clip: 1, Schedule: &Plateau{Factor: 1 / 1.5, Patience: 0, Threshold: 1e-4},
				EarlyStop: 2, MaxEpochs: 2, Seed: 3, Checkpoint: filepath.Join(dir, file), NoLowerBound: true,
			}
		}
		onGPU := func(seed uint64) *Model {
			m := newTiny(t, cfg, seed)
			if err := m.SetDevice(d); err != nil {
				t.Fatal(err)
			}
			return m
		}
		withAdam := func(c TrainConfig, m *Model) TrainConfig {
			c.Optimizer = NewAdam(0.01, m.paramSizes())
			return c
		}
		full := onGPU(1)
		want, err := Fit(full, tinyStream(t, full, 4), withAdam(tc("full"), full))
		if err != nil {
			t.Fatal(err)
		}
		wantParams := paramData(full)
		part := onGPU(1)
		c := withAdam(tc("part"), part)
		c.Recorder = RecorderFunc(func(e Event) error {
			if e.Kind == StepDone && e.Epoch == 2 && e.Step == 3 {
				return ErrStopAfterCheckpoint
			}
			return nil
		})
		if stopped, err := Fit(part, tinyStream(t, part, 4), c); err != nil || stopped.Finished {
			t.Fatalf("%s: stopped run: %+v, %v", name, stopped, err)
		}
		for _, resumeOn := range []Device{d, CPU} {
			chk := filepath.Join(dir, "part")
			data, err := os.ReadFile(chk)
			if err != nil {
				t.Fatal(err)
			}
			copyChk := filepath.Join(dir, "resume-"+resumeOn.String())
			if err := os.WriteFile(copyChk, data, 0o644); err != nil {
				t.Fatal(err)
			}
			m := newTiny(t, cfg, 99)
			if err := m.SetDevice(resumeOn); err != nil {
				t.Fatal(err)
			}
			c := withAdam(tc("resume-"+resumeOn.String()), m)
			var started Event
			c.Recorder = RecorderFunc(func(e Event) error {
				if e.Kind == Started {
					started = e
				}
				return nil
			})
			got, err := Fit(m, tinyStream(t, m, 4), c)
			if err != nil {
				t.Fatal(err)
			}
			if !started.Resumed || started.Epoch != 2 || started.Step != 3 {
				t.Fatalf("%s on %v: resumed at epoch %d step %d (resumed %v), want epoch 2 step 3", name, resumeOn, started.Epoch, started.Step, started.Resumed)
			}
			if len(got.History) != len(want.History) {
				t.Fatalf("%s on %v: %d epochs, want %d", name, resumeOn, len(got.History), len(want.History))
			}
			for i := range want.History {
				if e := relErr(got.History[i].ValidCrossEntropy, want.History[i].ValidCrossEntropy); e > 1e-9 {
					t.Errorf("%s resumed on %v: epoch %d validation %v, uninterrupted %v", name, resumeOn, i+1, got.History[i].ValidCrossEntropy, want.History[i].ValidCrossEntropy)
				}
			}
			if e := gradcheck.TensorsErr(paramData(m), wantParams); e > 1e-9 {
				t.Errorf("%s resumed on %v: parameters differ from the uninterrupted GPU run's by %.2g relative", name, resumeOn, e)
			}
		}
	}
}

// What runs on the CPU for a model on the GPU (sampling, the stack's
// action weights) reads the parameters the GPU has trained so far, also in
// the middle of an epoch, when the host's copy is behind.
func TestGPUHostPathsUseTrainedParameters(t *testing.T) {
	d := gpu(t)
	_, g := twins(t, d, gpuConfigs()["rns-2-3"], Float64)
	rng := rand.New(rand.NewPCG(6, 6))
	var train []Batch
	for range 5 {
		train = append(train, randomBatch(rng, 3, 6, 3))
	}
	opt := SampleOptions{Seed: 3, MaxLength: 20}
	w := []int{0, 1, 2, 1, 0}
	checked := false
	rec := RecorderFunc(func(e Event) error {
		if e.Kind != StepDone || e.Epoch != 1 || e.Step != 3 {
			return nil
		}
		onGPU, err := g.Sample(4, opt)
		if err != nil {
			return err
		}
		lwGPU, err := g.ActionLogWeights(w)
		if err != nil {
			return err
		}
		data, err := g.MarshalBinary()
		if err != nil {
			return err
		}
		c, err := UnmarshalModel(data)
		if err != nil {
			return err
		}
		onCPU, err := c.Sample(4, opt)
		if err != nil {
			return err
		}
		lwCPU, err := c.ActionLogWeights(w)
		if err != nil {
			return err
		}
		for i := range onCPU {
			if !slices.Equal(onGPU[i].Symbols, onCPU[i].Symbols) || onGPU[i].LogProb != onCPU[i].LogProb {
				t.Errorf("sample %d: %+v from the model on the GPU, %+v from its parameters on the CPU", i, onGPU[i], onCPU[i])
			}
		}
		if gradcheck.TensorsErr(lwGPU, lwCPU) != 0 {
			t.Error("the action weights of the model on the GPU are not those of its parameters")
		}
		checked = true
		return nil
	})
	if _, err := Train(g, train, train[:1], TrainConfig{Optimizer: NewAdam(0.05, g.paramSizes()), Clip: 1, MaxEpochs: 1, NoLowerBound: true, Recorder: rec}); err != nil {
		t.Fatal(err)
	}
	if !checked {
		t.Fatal("the recorder never ran its check")
	}
}

// The surprisals of sentences (Model.Surprisals, the SG score's input) on
// the GPU equal the CPU's, both as surprisals (the log-probabilities of
// the output layer) and as the released script's raw scores (RawLogit:
// the output layer's biased scores, left in place by its softmax).
func TestGPUSurprisalsMatchCPU(t *testing.T) {
	d := gpu(t)
	for _, name := range []string{"wide-vocab", "jm-hidden-d3", "rns-1-2-D35", "vrns-zero-D3"} {
		c := gpuConfigs()[name]
		cpu, g := twins(t, d, c, Float64)
		rng := rand.New(rand.NewPCG(3, 4))
		sents := make([][]int, 5)
		for i := range sents {
			sents[i] = make([]int, 1+rng.IntN(9))
			for j := range sents[i] {
				sents[i][j] = 1 + rng.IntN(min(c.InputVocab, c.OutputVocab)-1)
			}
		}
		for _, raw := range []bool{false, true} {
			opt := SurprisalOptions{Start: 0, Batch: 2, RawLogit: raw}
			want, err := cpu.Surprisals(sents, opt)
			if err != nil {
				t.Fatal(err)
			}
			got, err := g.Surprisals(sents, opt)
			if err != nil {
				t.Fatal(err)
			}
			for i := range want {
				for j := range want[i] {
					if e := relErr(got[i][j], want[i][j]); e > 1e-9 {
						t.Fatalf("%s, raw %v: sentence %d token %d: %v on the GPU, %v on the CPU", name, raw, i, j, got[i][j], want[i][j])
					}
				}
			}
		}
	}
}

// Stream.CrossEntropy on a GPU sums the chunks' losses on the device,
// queueing the chunks without waiting for each loss: its total is, bit
// for bit, the sum of the losses that Loss returns chunk by chunk (the
// same products and sums), and the CPU's to within the tolerance; chunks
// with positions without a target count only their targets.
func TestGPUCrossEntropyQueued(t *testing.T) {
	d := gpu(t)
	for _, name := range []string{"embed", "embed-2", "rns-1-2-D35", "jm-hidden-d3"} {
		for _, p := range []Precision{Float64, Float32} {
			c := gpuConfigs()[name]
			cpu, g := twins(t, d, c, p)
			rng := rand.New(rand.NewPCG(9, 9))
			var chunks [][2][][]int
			for k := range 4 {
				in, tgt := randomStream(rng, 3, 5, min(c.InputVocab, c.OutputVocab))
				if k == 1 {
					tgt[0][2], tgt[2][4] = NoTarget, NoTarget
				}
				chunks = append(chunks, [2][][]int{in, tgt})
			}
			chunk := func(i int) ([][]int, [][]int, error) { return chunks[i][0], chunks[i][1], nil }
			ce := func(m *Model) (float64, int) {
				s := mustStream(t, m, 3)
				h, n, err := s.CrossEntropy(len(chunks), chunk)
				if err != nil {
					t.Fatal(err)
				}
				return h, n
			}
			got, n := ce(g)
			if again, _ := ce(g); math.Float64bits(again) != math.Float64bits(got) { // a new total
				t.Fatalf("%s %v: cross-entropy %v, then %v", name, p, got, again)
			}
			want, wantN := ce(cpu)
			if n != wantN || n != 4*15-2 {
				t.Fatalf("%s %v: %d targets on the GPU, %d on the CPU, want %d", name, p, n, wantN, 4*15-2)
			}
			if e := relErr(got, want); e > tolerance(p) {
				t.Errorf("%s %v: cross-entropy %v on the GPU, %v on the CPU (relative %.2g)", name, p, got, want, e)
			}
			// The same GPU chunk by chunk, summed as CrossEntropy sums.
			s := mustStream(t, g, 3)
			total := 0.0
			for i, ch := range chunks {
				l, err := s.Loss(ch[0], ch[1])
				if err != nil {
					t.Fatal(err)
				}
				total += l * float64(countTargets(chunks[i][1]))
			}
			if byChunk := total / float64(n); math.Float64bits(byChunk) != math.Float64bits(got) {
				t.Errorf("%s %v: queued cross-entropy %v, chunk by chunk %v", name, p, got, byChunk)
			}
		}
	}
}

// A model's negative Workers, MaxGraphs or GraphCacheBytes is refused on
// a device as on the CPU, where graphFor checks them (a device builds no
// graph), and a stream's pass is refused too.
func TestGPUChecksModelFields(t *testing.T) {
	d := gpu(t)
	c := gpuConfigs()["onehot"]
	for _, f := range []struct {
		name string
		set  func(m *Model, v int)
	}{
		{"Workers", func(m *Model, v int) { m.Workers = v }},
		{"MaxGraphs", func(m *Model, v int) { m.MaxGraphs = v }},
		{"GraphCacheBytes", func(m *Model, v int) { m.GraphCacheBytes = int64(v) }},
	} {
		_, g := twins(t, d, c, Float64)
		f.set(g, -1)
		batch := [][]int{{0, 1, 0}}
		if _, err := g.Loss(batch); err == nil || !strings.Contains(err.Error(), "Model."+f.name+" -1 must not be negative") {
			t.Errorf("%s -1 on %v: Loss: %v", f.name, d, err)
		}
		s, err := g.NewStream(1)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Loss([][]int{{0, 1}}, [][]int{{1, 0}}); err == nil {
			t.Errorf("%s -1 on %v: Stream.Loss: no error", f.name, d)
		}
		f.set(g, 0)
		if _, err := g.Loss(batch); err != nil {
			t.Errorf("%s 0 on %v: %v", f.name, d, err)
		}
	}
}
