package nsrnn

import (
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/nsrnn/nsrnn/internal/cuda"
)

// EnvCUDAProfile is the environment variable "NSRNN_CUDA_PROFILE": set to
// 1 when a model moves to a GPU, its engine times every operation it
// queues there (each kernel, product, copy and transfer) on the device's
// clock, between two events around it, and sums the times by operation.
// Profiling launches the kernels one by one (no CUDA graphs) and waits
// for the events now and then, so a profiled run is slower than a plain
// one; the kernels' own times are what it measures. The GPU benchmarks
// append each profile to the file named by NSRNN_CUDA_PROFILE_OUT.
const EnvCUDAProfile = "NSRNN_CUDA_PROFILE"

// gpuMark is a point on a device's stream whose time can be measured.
type gpuMark interface {
	// record queues the mark after the work queued so far.
	record() error
	// since waits for the mark and returns the device's time since start.
	since(start gpuMark) (time.Duration, error)
	destroy() error
}

// gpuMarker makes marks; the devices that can be profiled implement it.
type gpuMarker interface {
	newMark() (gpuMark, error)
}

// cudaMark is a CUDA event.
type cudaMark struct{ *cuda.Event }

func (m cudaMark) record() error { return m.Record() }

func (m cudaMark) since(start gpuMark) (time.Duration, error) {
	return m.Since(start.(cudaMark).Event)
}

func (m cudaMark) destroy() error { return m.Destroy() }

func (d cudaDevice) newMark() (gpuMark, error) {
	e, err := d.NewEvent()
	if err != nil {
		return nil, err
	}
	return cudaMark{e}, nil
}

// emuMark is a mark on the emulator, which runs each operation when it is
// queued (outside a capture, and profiling captures nothing): the host's
// clock at the record.
type emuMark struct{ t *time.Time }

func (m emuMark) record() error {
	*m.t = time.Now()
	return nil
}

func (m emuMark) since(start gpuMark) (time.Duration, error) {
	return m.t.Sub(*start.(emuMark).t), nil
}

func (emuMark) destroy() error { return nil }

func (emuDevice) newMark() (gpuMark, error) { return emuMark{new(time.Time)}, nil }

// opStat sums one operation's calls and device time.
type opStat struct {
	calls int
	time  time.Duration
	// flops is the arithmetic of all calls (the products'; 0 otherwise).
	flops float64
}

// timedOp is an operation whose marks have not been read yet.
type timedOp struct {
	name       string
	flops      float64
	start, end gpuMark
}

// deviceProfile sums the device time of the operations an engine queues.
type deviceProfile struct {
	marker  gpuMarker
	free    []gpuMark
	pending []timedOp
	stats   map[string]*opStat
	// err is the first error met reading the marks (the profile is then
	// incomplete, the computation unaffected).
	err error
}

// maxPending bounds the operations timed before their marks are read.
const maxPending = 4096

func (p *deviceProfile) mark() (gpuMark, error) {
	if n := len(p.free); n > 0 {
		m := p.free[n-1]
		p.free = p.free[:n-1]
		return m, nil
	}
	return p.marker.newMark()
}

// time runs op, which queues one operation, between two marks.
func (p *deviceProfile) time(name string, flops float64, op func() error) error {
	start, err := p.mark()
	if err != nil {
		return err
	}
	end, err := p.mark()
	if err != nil {
		p.free = append(p.free, start)
		return err
	}
	if err := start.record(); err != nil {
		p.free = append(p.free, start, end)
		return err
	}
	if err := op(); err != nil {
		p.free = append(p.free, start, end)
		return err
	}
	if err := end.record(); err != nil {
		p.free = append(p.free, start, end)
		return err
	}
	p.pending = append(p.pending, timedOp{name, flops, start, end})
	if len(p.pending) >= maxPending {
		p.flush()
	}
	return nil
}

// flush reads the marks of the pending operations.
func (p *deviceProfile) flush() {
	for _, op := range p.pending {
		d, err := op.end.since(op.start)
		if err != nil && p.err == nil {
			p.err = fmt.Errorf("nsrnn: reading the profile's events: %w", err)
		}
		s := p.stats[op.name]
		if s == nil {
			s = &opStat{}
			p.stats[op.name] = s
		}
		s.calls++
		s.time += d
		s.flops += op.flops
		p.free = append(p.free, op.start, op.end)
	}
	clear(p.pending)
	p.pending = p.pending[:0]
}

// reset forgets the times summed so far.
func (p *deviceProfile) reset() {
	p.flush()
	clear(p.stats)
	p.err = nil
}

func (p *deviceProfile) close() {
	p.flush()
	for _, m := range p.free {
		m.destroy()
	}
	p.free = nil
}

// profileRow is one operation of a profile.
type profileRow struct {
	name  string
	calls int
	time  time.Duration
	flops float64
}

// rows returns the operations by decreasing time.
func (p *deviceProfile) rows() []profileRow {
	p.flush()
	var rs []profileRow
	for n, s := range p.stats {
		rs = append(rs, profileRow{n, s.calls, s.time, s.flops})
	}
	slices.SortFunc(rs, func(a, b profileRow) int {
		if c := cmp.Compare(b.time, a.time); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name)
	})
	return rs
}

// write writes the profile as a table: per operation its calls, device
// time, mean time per call, share of the total and, for the products,
// the arithmetic rate; then the totals, and per unit of work (tokens,
// where units > 0) the calls and device time.
func (p *deviceProfile) write(w io.Writer, units float64, unit string) error {
	rs := p.rows()
	var total time.Duration
	calls := 0
	for _, r := range rs {
		total += r.time
		calls += r.calls
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-44s %9s %12s %10s %7s %10s\n", "operation", "calls", "device ms", "mean µs", "share", "GFLOP/s")
	for _, r := range rs {
		share := 0.0
		if total > 0 {
			share = 100 * float64(r.time) / float64(total)
		}
		rate := ""
		if r.flops > 0 && r.time > 0 {
			rate = fmt.Sprintf("%.0f", r.flops/r.time.Seconds()/1e9)
		}
		fmt.Fprintf(&b, "%-44s %9d %12.3f %10.2f %6.1f%% %10s\n", r.name, r.calls,
			float64(r.time)/1e6, float64(r.time)/1e3/float64(max(r.calls, 1)), share, rate)
	}
	fmt.Fprintf(&b, "%-44s %9d %12.3f %10.2f\n", "total", calls, float64(total)/1e6, float64(total)/1e3/float64(max(calls, 1)))
	if units > 0 {
		fmt.Fprintf(&b, "per %s: %.4f operations, %.4f device µs (a device-bound rate of %.0f %ss/s)\n",
			unit, float64(calls)/units, float64(total)/1e3/units, units/total.Seconds(), unit)
	}
	if p.err != nil {
		fmt.Fprintf(&b, "incomplete: %v\n", p.err)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// profDevice is a device whose operations a deviceProfile times.
type profDevice struct {
	gpuDevice
	p *deviceProfile
}

// newProfDevice wraps d in a profiler, or returns an error if d cannot
// be profiled.
func newProfDevice(d gpuDevice) (*profDevice, error) {
	m, ok := d.(gpuMarker)
	if !ok {
		return nil, fmt.Errorf("nsrnn: %s=1: this device cannot be profiled", EnvCUDAProfile)
	}
	return &profDevice{d, &deviceProfile{marker: m, stats: map[string]*opStat{}}}, nil
}

func (d *profDevice) Zero(p cuda.Ptr, bytes int) error {
	if bytes <= 0 {
		return d.gpuDevice.Zero(p, bytes)
	}
	return d.p.time("memset", 0, func() error { return d.gpuDevice.Zero(p, bytes) })
}

func (d *profDevice) Copy(dst, src cuda.Ptr, bytes int) error {
	if bytes <= 0 {
		return d.gpuDevice.Copy(dst, src, bytes)
	}
	return d.p.time("copy device→device", 0, func() error { return d.gpuDevice.Copy(dst, src, bytes) })
}

func (d *profDevice) UploadFloat64(dst cuda.Ptr, src []float64) error {
	return d.p.time("copy host→device", 0, func() error { return d.gpuDevice.UploadFloat64(dst, src) })
}

func (d *profDevice) UploadFloat32(dst cuda.Ptr, src []float32) error {
	return d.p.time("copy host→device", 0, func() error { return d.gpuDevice.UploadFloat32(dst, src) })
}

func (d *profDevice) UploadInt32(dst cuda.Ptr, src []int32) error {
	return d.p.time("copy host→device", 0, func() error { return d.gpuDevice.UploadInt32(dst, src) })
}

func (d *profDevice) QueueUploadInt32(dst cuda.Ptr, src []int32) error {
	return d.p.time("copy host→device", 0, func() error { return d.gpuDevice.QueueUploadInt32(dst, src) })
}

func (d *profDevice) DownloadFloat64(dst []float64, src cuda.Ptr) error {
	return d.p.time("copy device→host", 0, func() error { return d.gpuDevice.DownloadFloat64(dst, src) })
}

func (d *profDevice) DownloadFloat32(dst []float32, src cuda.Ptr) error {
	return d.p.time("copy device→host", 0, func() error { return d.gpuDevice.DownloadFloat32(dst, src) })
}

// gemmName names a product by its precision, transposes and shape.
func gemmName(prec string, transA, transB bool, m, n, k int) string {
	t := func(b bool) string {
		if b {
			return "T"
		}
		return "N"
	}
	return fmt.Sprintf("%sgemm %s%s %d×%d×%d", prec, t(transA), t(transB), m, n, k)
}

func (d *profDevice) Dgemm(transA, transB bool, m, n, k int, alpha float64, a cuda.Ptr, lda int, b cuda.Ptr, ldb int, beta float64, c cuda.Ptr, ldc int) error {
	return d.p.time(gemmName("d", transA, transB, m, n, k), 2*float64(m)*float64(n)*float64(k), func() error {
		return d.gpuDevice.Dgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	})
}

func (d *profDevice) Sgemm(transA, transB bool, m, n, k int, alpha float32, a cuda.Ptr, lda int, b cuda.Ptr, ldb int, beta float32, c cuda.Ptr, ldc int) error {
	return d.p.time(gemmName("s", transA, transB, m, n, k), 2*float64(m)*float64(n)*float64(k), func() error {
		return d.gpuDevice.Sgemm(transA, transB, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)
	})
}

func (d *profDevice) compile(src, name string, opts ...string) (gpuKernels, error) {
	k, err := d.gpuDevice.compile(src, name, opts...)
	if err != nil {
		return nil, err
	}
	return profKernels{k, d.p}, nil
}

// side refuses: the profiler times each operation between events on the
// one stream, so a profiled engine keeps its passes on it.
func (d *profDevice) side() error {
	return fmt.Errorf("%w: a profiled device keeps one stream", errNoSecondStream)
}

// beginCapture refuses: a profiled engine launches its operations one by
// one (the engine then stops trying to capture).
func (d *profDevice) beginCapture() error {
	return fmt.Errorf("nsrnn: %s=1: no capture while profiling", EnvCUDAProfile)
}

func (d *profDevice) Close() error {
	d.p.close()
	return d.gpuDevice.Close()
}

// profKernels times each launch of a module's kernels.
type profKernels struct {
	k gpuKernels
	p *deviceProfile
}

func (k profKernels) LaunchThreads(name string, n int, args ...any) error {
	if n <= 0 {
		return k.k.LaunchThreads(name, n, args...)
	}
	return k.p.time(name, 0, func() error { return k.k.LaunchThreads(name, n, args...) })
}

func (k profKernels) LaunchBlocks(name string, grid int, args ...any) error {
	if grid <= 0 {
		return k.k.LaunchBlocks(name, grid, args...)
	}
	return k.p.time(name, 0, func() error { return k.k.LaunchBlocks(name, grid, args...) })
}

// profiling reports whether EnvCUDAProfile asks for a profile.
func profiling() bool { return os.Getenv(EnvCUDAProfile) == "1" }

// deviceProfileOf returns the profile of m's engine, or nil where m does
// not compute on a profiled GPU.
func deviceProfileOf(m *Model) *deviceProfile {
	e, ok := m.eng.(*cudaEngine)
	if !ok {
		return nil
	}
	d, ok := e.ctx.(*profDevice)
	if !ok {
		return nil
	}
	return d.p
}
