package nsrnn_test

import (
	"fmt"
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
					b.ResetTimer()
					b.StartTimer()
					fit(b.N)
					b.ReportMetric(float64(batch*steps)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
				})
			}
		}
	}
}

// BenchmarkGPUEvalPTB measures evaluation on the GPU (Stream.Loss of one
// chunk of T = 35 per step), in tokens per second.
func BenchmarkGPUEvalPTB(b *testing.B) {
	const steps = 35
	for _, c := range ptbBenchModels() {
		for _, prec := range []nsrnn.Precision{nsrnn.Float64, nsrnn.Float32} {
			for _, batch := range gpuBenchBatches {
				b.Run(fmt.Sprintf("%s%s/B%d", c.name, precSuffix(prec), batch), func(b *testing.B) {
					_, s := gpuStream(b, c.cfg, prec, batch)
					in, tgt := ptbChunk(batch, steps, c.cfg.InputVocab)
					if _, err := s.Loss(in, tgt); err != nil {
						b.Fatal(err)
					}
					b.ResetTimer()
					for i := 0; i < b.N; i++ {
						if _, err := s.Loss(in, tgt); err != nil {
							b.Fatal(err)
						}
					}
					b.ReportMetric(float64(batch*steps)*float64(b.N)/b.Elapsed().Seconds(), "tokens/s")
				})
			}
		}
	}
}
