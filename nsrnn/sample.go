package nsrnn

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"unsafe"

	"github.com/nsrnn/nsrnn/controller"
	"github.com/nsrnn/nsrnn/internal/linalg"
	"github.com/nsrnn/nsrnn/stacks"
)

// runner runs a model forward step by step on plain slices, without a
// graph: the controller's and the stack's runners, for generation.
type runner struct {
	m      *Model
	batch  int
	lstm   *controller.Runner
	stack  stacks.Runner // nil for the LSTM
	x, r   []float64     // the input vector and the stack's reading
	h      []float64     // the latest hidden state (zero at first)
	logits []float64     // (batch, OutputVocab)
}

func (m *Model) newRunner(batch, maxSteps int) (*runner, error) {
	rn := &runner{m: m, batch: batch, x: make([]float64, batch*m.cfg.inputSize()),
		h: make([]float64, batch*m.cfg.Hidden), logits: make([]float64, batch*m.cfg.OutputVocab)}
	sizes := []int{m.cfg.inputSize()}
	if m.stack != nil {
		rs, ok := m.stack.(stacks.Runners)
		if !ok {
			return nil, fmt.Errorf("nsrnn: the %s stack cannot run without a graph", m.cfg.Kind)
		}
		if sz, ok := m.stack.(stacks.Sizer); ok {
			// A runner's tape has room for a carried state (a stream's).
			if err := sz.CheckSize(batch, maxSteps, true); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrTooLarge, err)
			}
		}
		var err error
		if rn.stack, err = rs.NewRunner(batch, maxSteps); err != nil {
			return nil, err
		}
		rn.r = make([]float64, batch*m.stack.ReadingSize())
		rn.stack.Initial(rn.r)
		sizes = append(sizes, m.stack.ReadingSize())
	}
	var err error
	if rn.lstm, err = m.lstm.NewRunner(batch, sizes); err != nil {
		return nil, err
	}
	return rn, nil
}

// feed runs one step on the given input symbols: the controller reads them
// and the previous reading, and the stack is updated from the new state.
func (rn *runner) feed(tokens []int) error {
	m := rn.m
	in := m.cfg.inputSize()
	clear(rn.x)
	for b, s := range tokens {
		if s < 0 || s >= m.cfg.InputVocab {
			return fmt.Errorf("nsrnn: input symbol %d outside the input vocabulary of %d", s, m.cfg.InputVocab)
		}
		if m.embed != nil {
			copy(rn.x[b*in:(b+1)*in], m.embed.Data()[s*in:(s+1)*in])
		} else {
			rn.x[b*in+s] = 1
		}
	}
	parts := [][]float64{rn.x}
	if rn.stack != nil {
		parts = append(parts, rn.r)
	}
	copy(rn.h, rn.lstm.Step(parts))
	if rn.stack != nil {
		return rn.stack.Step(rn.h, rn.r)
	}
	return nil
}

// predict computes the output scores of the latest hidden state.
func (rn *runner) predict() {
	linalg.Affine(rn.logits, rn.h, rn.m.why.Data(), rn.m.bhy.Data(), rn.batch, rn.m.cfg.Hidden, rn.m.cfg.OutputVocab)
}

// SampleOptions control Model.Sample. The zero value, with MaxLength set,
// samples in sentence mode at temperature 1 from the whole distribution.
type SampleOptions struct {
	// Temperature divides the output scores (0 means 1); lower is greedier.
	Temperature float64
	// TopK, when positive, samples only among the TopK likeliest symbols.
	TopK int
	// Seed drives the sampling: the same seed gives the same strings.
	Seed uint64
	// Prompt is a prefix every string starts with (it is part of the
	// returned strings).
	Prompt []int
	// MaxLength bounds the length of a string (prompt included); a string
	// that reaches it without its end symbol is returned unfinished.
	MaxLength int
	// Stream selects stream mode: Start is fed first (e.g. <eos> for the
	// Penn Treebank) and a string ends when End is drawn. Otherwise
	// sentence mode: the first symbol is predicted from the zero state and
	// a string ends at EOS, the last output symbol. The end symbol is not
	// part of the returned string.
	Stream     bool
	Start, End int
	// Batch is the number of strings drawn together (default 20).
	Batch int
}

// Generated is a sampled string.
type Generated struct {
	// Symbols are the string's symbols, without the end symbol.
	Symbols []int
	// Complete reports whether the end symbol was drawn (otherwise the
	// string reached MaxLength).
	Complete bool
	// LogProb is the log-probability under the model (at temperature 1,
	// without top-k truncation) of the string after the prompt, its end
	// symbol included when it is complete.
	LogProb float64
}

// Sample draws count strings from the model. It runs the model forward on
// plain slices, step by step, so it works for every model kind of the
// library, including the stacks that cannot run as streams (a kind
// registered from outside needs a stack that implements stacks.Runners). A model whose parameters are not
// finite, or whose scores are not (NaN or +Inf), is an error, not strings
// of NaN log-probability. The strings are returned
// together, so a count whose strings could take more memory than the
// memory rule allows at their maximum length (MaxGraphBytes) is refused
// with an error wrapping ErrTooLarge, before anything is drawn; SampleEach
// draws any number of strings, a batch at a time.
func (m *Model) Sample(count int, opt SampleOptions) ([]Generated, error) {
	if count < 0 {
		return nil, fmt.Errorf("nsrnn: sample count %d < 0", count)
	}
	end, err := m.checkSample(count, &opt)
	if err != nil {
		return nil, err
	}
	if bytes := float64(count) * (generatedBytes + 8*float64(opt.MaxLength)); bytes > MaxGraphBytes {
		return nil, fmt.Errorf("%w: %d strings of up to %d symbols could take %.3g GiB, more than the limit of %d GiB (MaxGraphBytes): draw fewer strings, or shorter ones, per call, or use SampleEach",
			ErrTooLarge, count, opt.MaxLength, bytes/(1<<30), MaxGraphBytes>>30)
	}
	out := make([]Generated, 0, min(count, 1<<16))
	err = m.sampleEach(count, opt, end, func(_ int, g Generated) bool {
		out = append(out, g)
		return true
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SampleEach draws strings as Sample does and passes them to yield in
// order, string i as the i-th call (0-based), a batch (opt.Batch) at a
// time: string i is Sample's string i under the same options, whatever
// the count. It stops after count strings, or, for count < 0, only when
// yield returns false; yield returning false stops it early in either
// case. Its memory is that of one batch, so any count may be drawn. The
// options are checked, with the same errors as Sample's, before anything
// is drawn.
func (m *Model) SampleEach(count int, opt SampleOptions, yield func(i int, g Generated) bool) error {
	if yield == nil {
		return errors.New("nsrnn: SampleEach needs a yield function")
	}
	end, err := m.checkSample(count, &opt)
	if err != nil {
		return err
	}
	return m.sampleEach(count, opt, end, yield)
}

// sampleEach is SampleEach after its options are checked (checkSample),
// with end the end symbol.
func (m *Model) sampleEach(count int, opt SampleOptions, end int, yield func(i int, g Generated) bool) error {
	for first := 0; count < 0 || first < count; {
		n := opt.Batch
		if count >= 0 {
			n = min(n, count-first)
		}
		if err := m.acquire(); err != nil {
			return err
		}
		gs, err := m.sampleBatch(first, n, opt, end)
		m.release()
		if err != nil {
			return err
		}
		for _, g := range gs {
			if !yield(first, g) {
				return nil
			}
			first++
		}
	}
	return nil
}

// checkFinite returns an error, starting "nsrnn: what: ", for a parameter
// of the host's that is not finite.
func (m *Model) checkFinite(what string) error {
	for _, p := range m.params {
		for i, v := range p.Data() {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("nsrnn: %s: parameter %s holds %g at index %d (a diverged model?): a model's parameters must be finite", what, p.Name, v, i)
			}
		}
	}
	return nil
}

// checkSample checks the model's parameters (finite) and the options of
// Sample and SampleEach for count strings (count < 0: unbounded), fills in
// their defaults, and returns the end symbol.
func (m *Model) checkSample(count int, opt *SampleOptions) (int, error) {
	// Sampling runs on the CPU, from the device's parameters when the
	// model is on a GPU.
	var err error
	m.readParams(func() {
		if err = m.syncHost(); err == nil {
			err = m.checkFinite("cannot sample")
		}
	})
	if err != nil {
		return 0, err
	}
	if opt.MaxLength < 1 || opt.MaxLength > 1<<20 {
		return 0, fmt.Errorf("nsrnn: sample maximum length %d outside 1 … %d", opt.MaxLength, 1<<20)
	}
	if opt.Temperature == 0 {
		opt.Temperature = 1
	}
	if !(opt.Temperature > 0) || math.IsInf(opt.Temperature, 0) {
		return 0, fmt.Errorf("nsrnn: temperature %g must be positive and finite", opt.Temperature)
	}
	if opt.TopK < 0 {
		return 0, fmt.Errorf("nsrnn: top-k %d < 0", opt.TopK)
	}
	if opt.Batch == 0 {
		opt.Batch = 20
	}
	if opt.Batch < 1 {
		return 0, fmt.Errorf("nsrnn: sample batch %d < 1", opt.Batch)
	}
	batch := opt.Batch
	if count >= 0 {
		batch = min(batch, count)
	}
	if bytes := float64(batch) * m.cfg.positionBytes(); bytes > MaxGraphBytes {
		return 0, fmt.Errorf("%w: a sample batch of %d strings would take about %.3g GiB, more than the limit of %d GiB (MaxGraphBytes): use a smaller batch",
			ErrTooLarge, opt.Batch, bytes/(1<<30), MaxGraphBytes>>30)
	}
	if len(opt.Prompt) > opt.MaxLength {
		return 0, fmt.Errorf("nsrnn: prompt of %d symbols is longer than the maximum length %d", len(opt.Prompt), opt.MaxLength)
	}
	if err := m.checkSymbols(opt.Prompt, "prompt", 0, true); err != nil {
		return 0, err
	}
	end := m.EOS()
	if opt.Stream {
		if opt.Start < 0 || opt.Start >= m.cfg.InputVocab {
			return 0, fmt.Errorf("nsrnn: start symbol %d outside the input vocabulary", opt.Start)
		}
		if opt.End < 0 || opt.End >= m.cfg.OutputVocab {
			return 0, fmt.Errorf("nsrnn: end symbol %d outside the output vocabulary", opt.End)
		}
		end = opt.End
	}
	// A drawn symbol other than the end is fed back as the next input, in
	// both modes.
	if m.cfg.OutputVocab > m.cfg.InputVocab+1 || (m.cfg.OutputVocab > m.cfg.InputVocab && end != m.cfg.InputVocab) {
		return 0, fmt.Errorf("nsrnn: sampling needs every output symbol but the end symbol (%d) to be an input symbol: output symbol %d is not one (input vocabulary %d)",
			end, m.cfg.OutputVocab-1, m.cfg.InputVocab)
	}
	return end, nil
}

// generatedBytes is the size of a Generated without its symbols.
const generatedBytes = float64(unsafe.Sizeof(Generated{}))

// sampleBatch draws strings first … first+n−1, string i from its own
// random stream, so that the strings do not depend on the batch size.
func (m *Model) sampleBatch(first, n int, opt SampleOptions, end int) ([]Generated, error) {
	rngs := make([]*rand.Rand, n)
	for b := range rngs {
		rngs[b] = rand.New(rand.NewPCG(opt.Seed, 0x73616d706c65^uint64(first+b)))
	}
	steps := opt.MaxLength + 1
	rn, err := m.newRunner(n, steps)
	if err != nil {
		return nil, err
	}
	gs := make([]Generated, n)
	tokens := make([]int, n)
	if opt.Stream {
		for b := range tokens {
			tokens[b] = opt.Start
		}
		if err := rn.feed(tokens); err != nil {
			return nil, err
		}
	}
	V := m.cfg.OutputVocab
	probs := make([]float64, V)
	idx := make([]int, V)
	for {
		rn.predict()
		for b := range gs {
			g := &gs[b]
			if g.Complete || len(g.Symbols) >= opt.MaxLength {
				tokens[b] = 0 // finished: the input does not matter
				continue
			}
			row := rn.logits[b*V : (b+1)*V]
			if err := checkScores(row); err != nil {
				return nil, fmt.Errorf("nsrnn: sampling string %d at position %d: %w", first+b, len(g.Symbols), err)
			}
			var y int
			if pos := len(g.Symbols); pos < len(opt.Prompt) {
				y = opt.Prompt[pos]
			} else {
				y = draw(row, probs, idx, opt.Temperature, opt.TopK, rngs[b])
				g.LogProb += row[y] - logSumExp(row)
			}
			if y == end {
				g.Complete = true
				tokens[b] = 0
				continue
			}
			g.Symbols = append(g.Symbols, y)
			tokens[b] = y
		}
		finished := 0
		for _, g := range gs {
			if g.Complete || len(g.Symbols) >= opt.MaxLength {
				finished++
			}
		}
		if finished == n {
			return gs, nil
		}
		if err := rn.feed(tokens); err != nil {
			return nil, err
		}
	}
}

// checkScores returns an error for output scores that hold NaN or +Inf,
// from which no distribution can be drawn nor a log-probability computed:
// a model whose parameters hold such values (a run that diverged).
func checkScores(row []float64) error {
	for v, y := range row {
		if math.IsNaN(y) || math.IsInf(y, 1) {
			return fmt.Errorf("the model's score of output symbol %d is %g: its parameters are not finite (a diverged model?)", v, y)
		}
	}
	return nil
}

func logSumExp(x []float64) float64 {
	m := math.Inf(-1)
	for _, v := range x {
		m = max(m, v)
	}
	s := 0.0
	for _, v := range x {
		s += math.Exp(v - m)
	}
	return m + math.Log(s)
}

// draw samples an index from softmax(scores/temperature), restricted to
// the topK largest scores when topK > 0.
func draw(scores, probs []float64, idx []int, temperature float64, topK int, rng *rand.Rand) int {
	V := len(scores)
	cand := idx[:V]
	for i := range cand {
		cand[i] = i
	}
	if topK > 0 && topK < V {
		sort.SliceStable(cand, func(a, b int) bool { return scores[cand[a]] > scores[cand[b]] })
		cand = cand[:topK]
	}
	mx := math.Inf(-1)
	for _, i := range cand {
		mx = max(mx, scores[i])
	}
	sum := 0.0
	for k, i := range cand {
		probs[k] = math.Exp((scores[i] - mx) / temperature)
		sum += probs[k]
	}
	u := rng.Float64() * sum
	for k, i := range cand {
		u -= probs[k]
		if u < 0 {
			return i
		}
	}
	return cand[len(cand)-1]
}
