package nsrnn_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/nsrnn/nsrnn/nsrnn"
)

// benchGPU returns the first usable GPU, or skips the benchmark saying why
// there is none.
func benchGPU(b *testing.B) nsrnn.Device {
	b.Helper()
	ds, err := nsrnn.Devices()
	if err != nil {
		b.Skipf("no GPU: %v", err)
	}
	for _, d := range ds {
		if d.Usable {
			return d.Device
		}
	}
	b.Skipf("no usable GPU among %d devices", len(ds))
	return nsrnn.CPU
}

// gpuStream makes a model of cfg in precision prec on the first usable
// GPU and a stream of batch rows on it; it skips the benchmark without a
// GPU or for a kind without a GPU implementation.
func gpuStream(b *testing.B, cfg nsrnn.Config, prec nsrnn.Precision, batch int) (*nsrnn.Model, *nsrnn.Stream) {
	b.Helper()
	d := benchGPU(b)
	m, err := nsrnn.New(cfg, 1)
	if err != nil {
		b.Fatal(err)
	}
	m.Precision = prec
	if err := m.SetDevice(d); err != nil {
		b.Skip(err)
	}
	s, err := m.NewStream(batch)
	if err != nil {
		b.Skip(err)
	}
	return m, s
}

// gpuBenchBatches are the batch sizes of the GPU benchmarks: the paper's
// 32 and a larger one that fills more of the card.
var gpuBenchBatches = []int{32, 256}

// BenchmarkGPUTrainPTB measures training on the GPU at the Penn Treebank's
// sizes (T = 35): the steps of Fit on a stream objective (the chunk's
// forward and backward passes, clipping and the SGD update, all on the
// device), in tokens per second, as PyTorch's reference times its steps;
// the end of the epoch (validation, the copy of the best parameters) is
// not timed. The kinds without a GPU implementation are skipped.
func BenchmarkGPUTrainPTB(b *testing.B) {
	const steps = 35
	for _, c := range ptbBenchModels() {
		for _, prec := range []nsrnn.Precision{nsrnn.Float64, nsrnn.Float32} {
			for _, batch := range gpuBenchBatches {
				b.Run(fmt.Sprintf("%s%s/B%d", c.name, precSuffix(prec), batch), func(b *testing.B) {
					m, s := gpuStream(b, c.cfg, prec, batch)
					in, tgt := ptbChunk(batch, steps, c.cfg.InputVocab)
					fit := func(chunks int) {
						obj, err := nsrnn.StreamObjective(s, chunks, func(int) ([][]int, [][]int, error) { return in, tgt, nil },
							func() (float64, error) { return 1, nil })
						if err != nil {
							b.Fatal(err)
						}
						stop := nsrnn.RecorderFunc(func(e nsrnn.Event) error {
							if e.Kind == nsrnn.StepDone && e.Step == e.Steps {
								b.StopTimer()
							}
							return nil
						})
						cfg := nsrnn.TrainConfig{Optimizer: nsrnn.NewSGD(1), Clip: 0.25, MaxEpochs: 1, NoLowerBound: true, Recorder: stop}
						if _, err := nsrnn.Fit(m, obj, cfg); err != nil {
							b.Fatal(err)
						}
					}
					fit(3) // compiles the kernels, sizes the buffers
					nsrnn.ResetDeviceProfile(m)
					b.ResetTimer()
					b.StartTimer()
					fit(b.N)
					b.ReportMetric(float64(batch*steps)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
					reportModes(b, m)
					if err := nsrnn.AppendDeviceProfile(m, b.Name(), float64(batch*steps*b.N)); err != nil {
						b.Fatal(err)
					}
				})
			}
		}
	}
}

// BenchmarkGPUEvalPTB measures evaluation on the GPU (Stream.Loss of one
// chunk of T = 35 per step), in tokens per second; the variant named
// MODEL+queued evaluates the chunks as Stream.CrossEntropy does (ptb eval
// and the validation of ptb train), the chunks queued on the device and
// their losses summed there, read once at the end, as PyTorch's reference
// loop (torch_lm.py) reads none.
func BenchmarkGPUEvalPTB(b *testing.B) {
	const steps = 35
	for _, c := range ptbBenchModels() {
		for _, prec := range []nsrnn.Precision{nsrnn.Float64, nsrnn.Float32} {
			for _, batch := range gpuBenchBatches {
				for _, queued := range []bool{false, true} {
					name := c.name + precSuffix(prec)
					if queued {
						name += "+queued"
					}
					b.Run(fmt.Sprintf("%s/B%d", name, batch), func(b *testing.B) {
						m, s := gpuStream(b, c.cfg, prec, batch)
						in, tgt := ptbChunk(batch, steps, c.cfg.InputVocab)
						chunk := func(int) ([][]int, [][]int, error) { return in, tgt, nil }
						if _, _, err := s.CrossEntropy(2, chunk); err != nil { // the graphs of both ways
							b.Fatal(err)
						}
						nsrnn.ResetDeviceProfile(m)
						b.ResetTimer()
						if queued {
							if _, _, err := s.CrossEntropy(b.N, chunk); err != nil {
								b.Fatal(err)
							}
						} else {
							for i := 0; i < b.N; i++ {
								if _, err := s.Loss(in, tgt); err != nil {
									b.Fatal(err)
								}
							}
						}
						b.ReportMetric(float64(batch*steps)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
						reportModes(b, m)
						if err := nsrnn.AppendDeviceProfile(m, b.Name(), float64(batch*steps*b.N)); err != nil {
							b.Fatal(err)
						}
					})
				}
			}
		}
	}
}

// BenchmarkGPUTrainStepCFL times one sentence-mode training step on the
// GPU (Model.Gradient: forward and backward) at the size of the paper's
// CFL experiments, as BenchmarkTrainStep does on the CPU: batch 10,
// length 60, 20 hidden units, the RNS-RNN with |Q| = 2 and 3, |Γ| = 3,
// and the LSTM; a CFL epoch of 200 strings is 20 such steps.
func BenchmarkGPUTrainStepCFL(b *testing.B) {
	const batch, length = 10, 60
	base := nsrnn.Config{InputVocab: 3, OutputVocab: 4, Hidden: 20}
	with := func(f func(*nsrnn.Config)) nsrnn.Config { c := base; f(&c); return c }
	cases := []struct {
		name string
		cfg  nsrnn.Config
	}{
		{"lstm", with(func(c *nsrnn.Config) { c.Kind = nsrnn.LSTM })},
		{"rns", with(func(c *nsrnn.Config) { c.Kind, c.States, c.Symbols = nsrnn.RNS, 2, 3 })},
		{"rns-Q3", with(func(c *nsrnn.Config) { c.Kind, c.States, c.Symbols = nsrnn.RNS, 3, 3 })},
	}
	rng := rand.New(rand.NewPCG(1, 2))
	data := make([][]int, batch)
	for i := range data {
		data[i] = make([]int, length)
		for j := range data[i] {
			data[i][j] = rng.IntN(3)
		}
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			d := benchGPU(b)
			m, err := nsrnn.New(c.cfg, 1)
			if err != nil {
				b.Fatal(err)
			}
			if err := m.SetDevice(d); err != nil {
				b.Skip(err)
			}
			if _, _, err := m.Gradient(data); err != nil {
				b.Fatal(err)
			}
			nsrnn.ResetDeviceProfile(m)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := m.Gradient(data); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N)*200/batch, "s/200-strings")
			if err := nsrnn.AppendDeviceProfile(m, b.Name(), float64(batch*(length+1)*b.N)); err != nil {
				b.Fatal(err)
			}
		})
	}
}

// reportModes reports whether m's engine ran its passes as CUDA graphs
// and its output layer on a second stream (1 or 0): either turns off for
// good after a failure, which would otherwise go unseen in a rate.
func reportModes(b *testing.B, m *nsrnn.Model) {
	graphs, pipeline := nsrnn.DeviceModes(m)
	one := func(v bool) float64 {
		if v {
			return 1
		}
		return 0
	}
	b.ReportMetric(one(graphs), "graphs")
	b.ReportMetric(one(pipeline), "pipeline")
}
