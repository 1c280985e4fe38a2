package nsrnn

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"github.com/nsrnn/nsrnn/controller"
	"github.com/nsrnn/nsrnn/stacks"
)

// State is the carried state of a model's B parallel streams: the LSTM's
// (h, c) of every layer and the stack's own state. It is a detached value:
// no gradient flows into it and no later run changes it. The nil *State is
// the initial state (zero h and c, the initial stack).
type State struct {
	batch int
	// shape is the configuration of the model whose stream made it,
	// without its initialization (Config.shape).
	shape Config
	lstm  controller.Carry // nil while dev holds the values (carry)
	// dev, when not nil, is the device that keeps the LSTM's values until
	// the host needs them.
	dev   *deviceLSTM
	stack stacks.State // nil for the LSTM
	// boundary is that of the stream that made it: with
	// BoundaryNextChunk, stack is the state before the update that the
	// last token's hidden state (in lstm) makes.
	boundary Boundary
	// shared marks a state handed out by Stream.State or given to
	// Stream.SetState: others may hold it, so a stream that advances past
	// it leaves it alone. A stream recycles the memory of the states that
	// only it has held (stacks.Recycler).
	shared bool
}

// carry returns the state's LSTM values, from the device that keeps
// them at the first need.
func (st *State) carry() (controller.Carry, error) {
	if st.lstm == nil && st.dev != nil {
		c, err := st.dev.fetch()
		if err != nil {
			return nil, err
		}
		st.lstm, st.dev = c, nil
	}
	return st.lstm, nil
}

// shape is the configuration without what does not change the shape of a
// model's states (its initialization).
func (c Config) shape() Config {
	c.InitRange = 0
	return c
}

// Batch is the number of streams of the state; 0 for the nil *State, the
// initial state of any number of streams.
func (s *State) Batch() int {
	if s == nil {
		return 0
	}
	return s.batch
}

// Stream runs a model over B parallel token streams, chunk by chunk or token
// by token, from a carried state (see the package documentation, "Sentence
// mode and stream mode"). Every chunk starts from the state the previous one
// ended in; gradients are truncated at chunk starts. A Stream is not safe
// for concurrent use, and shares its model's graphs with the model's other
// streams (they may be used in turn).
type Stream struct {
	m        *Model
	batch    int
	state    *State
	boundary Boundary
}

// Boundary is where a stream computes the stack update that follows a
// chunk's last token. Forward values are the same either way; the
// gradients differ by the path through that update.
type Boundary int

const (
	// BoundaryInChunk (the default) computes the update after a chunk's
	// last token in that chunk, where no loss uses it, and carries the
	// updated stack to the next chunk as a constant.
	BoundaryInChunk Boundary = iota
	// BoundaryNextChunk computes it at the start of the next chunk, from
	// the carried (detached) hidden state, inside that chunk's graph, as
	// the authors' code does for the superposition stack (JM; their
	// nondeterministic stacks compute it in the ending chunk, as
	// BoundaryInChunk): the next chunk's loss then sends gradient
	// through it into the stack's own parameters (the action layer, and
	// a learned pushed vector), one more update per chunk than
	// BoundaryInChunk differentiates. The carried state holds the stack
	// before that update. Both run on the CPU and on a GPU.
	BoundaryNextChunk
)

// String returns "in-chunk" or "next-chunk".
func (b Boundary) String() string {
	switch b {
	case BoundaryInChunk:
		return "in-chunk"
	case BoundaryNextChunk:
		return "next-chunk"
	}
	return fmt.Sprintf("Boundary(%d)", int(b))
}

// ParseBoundary returns the Boundary of a name of String.
func ParseBoundary(name string) (Boundary, error) {
	for _, b := range []Boundary{BoundaryInChunk, BoundaryNextChunk} {
		if name == b.String() {
			return b, nil
		}
	}
	return 0, fmt.Errorf("nsrnn: unknown chunk boundary %q (want in-chunk or next-chunk)", name)
}

// SetBoundary sets where the stream computes the stack update after a
// chunk's last token (see Boundary), at the initial state (after
// NewStream or Reset); a stream with a carried state refuses a change.
// A model without a stack ignores it.
func (s *Stream) SetBoundary(b Boundary) error {
	if b != BoundaryInChunk && b != BoundaryNextChunk {
		return fmt.Errorf("nsrnn: %v is not a chunk boundary", b)
	}
	if s.state != nil && b != s.boundary {
		return fmt.Errorf("nsrnn: the chunk boundary of a stream is set at its initial state (Reset first); it carries a state of boundary %v", s.boundary)
	}
	s.boundary = b
	return nil
}

// Boundary returns where the stream computes the stack update after a
// chunk's last token.
func (s *Stream) Boundary() Boundary { return s.boundary }

// NewStream returns B = batch streams over m, at the initial state. Models
// whose stack cannot carry its state (the unlimited nondeterministic stacks,
// JM without a depth limit, Gref) have no streams: the error says why. More
// streams than the graph of a single token can hold under the memory rule
// (MaxGraphBytes) are refused with an error wrapping ErrTooLarge.
func (m *Model) NewStream(batch int) (*Stream, error) {
	if batch < 1 {
		return nil, fmt.Errorf("nsrnn: stream batch size %d < 1", batch)
	}
	if bytes := float64(batch) * m.cfg.positionBytes(); bytes > MaxGraphBytes {
		return nil, fmt.Errorf("%w: %d streams would take about %.3g GiB for a single token, more than the limit of %d GiB (MaxGraphBytes): use fewer streams",
			ErrTooLarge, batch, bytes/(1<<30), MaxGraphBytes>>30)
	}
	if m.stack != nil {
		if err := m.stack.Carryable(); err != nil {
			return nil, fmt.Errorf("nsrnn: model %s cannot run as a stream: %w", m.cfg.Kind, err)
		}
	}
	if err := m.engine().streams(); err != nil {
		return nil, err
	}
	return &Stream{m: m, batch: batch}, nil
}

// Model returns the stream's model.
func (s *Stream) Model() *Model { return s.m }

// Batch is the number of parallel streams, B.
func (s *Stream) Batch() int {
	if s == nil {
		panic("nsrnn: a nil Stream (make one with Model.NewStream)")
	}
	return s.batch
}

// Reset returns every stream to the initial state.
func (s *Stream) Reset() { s.state = nil }

// State returns the current state (nil at the initial state). It is a value:
// continuing the stream does not change it.
func (s *Stream) State() *State {
	if s.state != nil {
		s.state.shared = true
	}
	return s.state
}

// SetState sets the current state, one returned by State of a stream of the
// same model (or one of the same configuration) and batch size, or nil for
// the initial state. A state of another model kind or shape is an error.
func (s *Stream) SetState(st *State) error {
	if st != nil && st.shape != s.m.cfg.shape() {
		return fmt.Errorf("nsrnn: state of a %s model (%+v) given to a stream of a %s model (%+v)", st.shape.Kind, st.shape, s.m.cfg.Kind, s.m.cfg.shape())
	}
	if st != nil && st.batch != s.batch {
		return fmt.Errorf("nsrnn: state of %d streams given to a stream of %d", st.batch, s.batch)
	}
	if st != nil && st.boundary != s.boundary && s.m.stack != nil {
		return fmt.Errorf("nsrnn: state of a stream of chunk boundary %v given to a stream of boundary %v", st.boundary, s.boundary)
	}
	if st != nil {
		st.shared = true
	}
	s.state = st
	return nil
}

// CheckChunk returns the error that a chunk of n tokens per stream would
// meet under the memory rules (MaxGraphBytes for the graph,
// stacks.MaxTapeBytes for the stack's dynamic program or tape, whose size
// depends on the window or depth limit too), and nil if it fits. It builds
// and allocates nothing, so that a program can refuse a chunk length before
// it starts; n < 1 is an error.
func (s *Stream) CheckChunk(n int) error {
	if n < 1 {
		return fmt.Errorf("nsrnn: chunk length %d < 1", n)
	}
	return s.m.checkSize(s.batch, n, n, n, true)
}

// check reports a chunk that does not fit the stream: rows of another
// count or length, no tokens, symbols outside the vocabularies.
func (s *Stream) check(inputs, targets [][]int) error {
	m := s.m
	if len(inputs) != s.batch {
		return fmt.Errorf("nsrnn: chunk has %d rows of inputs, the stream has %d", len(inputs), s.batch)
	}
	if targets != nil && len(targets) != s.batch {
		return fmt.Errorf("nsrnn: chunk has %d rows of targets, the stream has %d", len(targets), s.batch)
	}
	T := len(inputs[0])
	if T < 1 {
		return errors.New("nsrnn: empty chunk")
	}
	for b, row := range inputs {
		if len(row) != T {
			return fmt.Errorf("nsrnn: chunk rows must have one length: row 0 has %d tokens, row %d has %d", T, b, len(row))
		}
		if err := m.checkSymbols(row, "input row", b, false); err != nil {
			return err
		}
		if targets != nil {
			if len(targets[b]) != T {
				return fmt.Errorf("nsrnn: target row %d has %d tokens, its input row %d", b, len(targets[b]), T)
			}
			for j, y := range targets[b] {
				if y != NoTarget && (y < 0 || y >= m.cfg.OutputVocab) {
					return fmt.Errorf("nsrnn: target row %d has symbol %d at position %d, outside the output vocabulary", b, y, j)
				}
			}
		}
	}
	return nil
}

// load writes a checked chunk into its graph's inputs and state.
func (s *Stream) load(inputs, targets [][]int, grad bool) (*graph, error) {
	m := s.m
	T := len(inputs[0])
	key := graphKey{mode: streamMode, n: T, batch: s.batch, grad: grad}
	if s.boundary == BoundaryNextChunk && m.stack != nil {
		key.deferLast, key.lead = true, s.state != nil
	}
	gr, err := m.graphFor(key)
	if err != nil {
		return nil, err
	}
	tok, tgt := gr.tokens.Float64s(), gr.targets.Float64s()
	for b, row := range inputs {
		for j, x := range row {
			tok[b*T+j] = float64(x)
			y := NoTarget
			if targets != nil {
				y = targets[b][j]
			}
			tgt[b*T+j] = float64(y)
		}
	}
	var lstm controller.Carry
	var stack stacks.State
	if s.state != nil {
		if lstm, err = s.state.carry(); err != nil { // a state the GPU kept
			return nil, err
		}
		stack = s.state.stack
	}
	// A state the GPU kept comes to the host.
	stack, err = hostStackState(stack)
	if err != nil {
		return nil, err
	}
	if err := gr.lstm.SetInput(lstm); err != nil {
		return nil, fmt.Errorf("nsrnn: %w", err)
	}
	if gr.stack != nil {
		if err := gr.stack.SetState(stack); err != nil {
			return nil, fmt.Errorf("nsrnn: %w", err)
		}
	}
	return gr, nil
}

// advance records the state the latest run of gr ended in.
func (s *Stream) advance(gr *graph) error {
	c, err := gr.final.CarryWith(gr.value)
	if err != nil {
		return err
	}
	st := &State{batch: s.batch, shape: s.m.cfg.shape(), lstm: c, boundary: s.boundary}
	// A chunk of one token with its update deferred, from the initial
	// state, makes no update: the stack stays initial (nil).
	if gr.stack != nil && !(gr.key.deferLast && !gr.key.lead && gr.key.n == 1) {
		if st.stack, err = gr.stack.State(); err != nil {
			return fmt.Errorf("nsrnn: %w", err)
		}
	}
	old := s.state
	s.state = st
	// The state the stream leaves behind is spent unless it was handed
	// out: its stack's memory goes to the next run's final state.
	if old != nil && !old.shared && old.stack != nil {
		if r, ok := s.m.stack.(stacks.Recycler); ok {
			r.Recycle(old.stack)
		}
	}
	return nil
}

// runCPU runs a chunk on the CPU's graphs (cpuEngine.chunk).
func (s *Stream) runCPU(inputs, targets [][]int, grad, lossOnly bool) (*graph, float64, error) {
	gr, err := s.load(inputs, targets, grad)
	if err != nil {
		return nil, 0, err
	}
	loss, err := gr.run(lossOnly)
	if err != nil {
		return nil, 0, err
	}
	if err := s.advance(gr); err != nil {
		return nil, 0, err
	}
	return gr, loss, nil
}

// Loss runs one chunk, B rows of T input tokens with their B rows of T
// targets (NoTarget where a position has none), from the current state,
// and returns the mean cross-entropy over the chunk's targets in nats per
// token (0 if it has none). It advances the state to the end of the chunk.
func (s *Stream) Loss(inputs, targets [][]int) (float64, error) {
	r, err := s.run(inputs, targets, pass{})
	return r.loss, err
}

// run checks a chunk and runs it on the model's engine.
func (s *Stream) run(inputs, targets [][]int, p pass) (outcome, error) {
	if err := s.check(inputs, targets); err != nil {
		return outcome{}, err
	}
	if err := s.m.acquire(); err != nil {
		return outcome{}, err
	}
	defer s.m.release()
	return s.m.engine().chunk(s, inputs, targets, p)
}

// Gradient is Loss with the gradient of the chunk's loss with respect to
// each parameter, in the order of Params, truncated at the chunk start (the
// carried state is a constant). The gradient slices are owned by the model
// and valid until its next call.
func (s *Stream) Gradient(inputs, targets [][]int) (float64, [][]float64, error) {
	r, err := s.run(inputs, targets, pass{grad: true, hostGrads: true})
	return r.loss, r.grads, err
}

// LogProbs runs one chunk of inputs and returns the log-probabilities of
// every output symbol after each input: out[b][t][v] = log p(x_{t+1} = v |
// the stream up to x_t). It advances the state.
func (s *Stream) LogProbs(inputs [][]int) ([][][]float64, error) {
	r, err := s.run(inputs, nil, pass{logProbs: true})
	return r.lp, err
}

// Next feeds one token to each stream and returns each stream's
// log-probabilities of the next token, out[b][v]. It advances the state;
// use it for generation and surprisal.
func (s *Stream) Next(tokens []int) ([][]float64, error) {
	if len(tokens) != s.batch {
		return nil, fmt.Errorf("nsrnn: Next: %d tokens, want one per stream (%d)", len(tokens), s.batch)
	}
	in := make([][]int, len(tokens))
	for b, x := range tokens {
		in[b] = []int{x}
	}
	lp, err := s.LogProbs(in)
	if err != nil {
		return nil, err
	}
	out := make([][]float64, len(lp))
	for b := range lp {
		out[b] = lp[b][0]
	}
	return out, nil
}

// The encoding of a State: magic, batch, then the LSTM layers (count,
// then per layer the value count and the values), then the stack state's
// own encoding (length-prefixed; length 0 for none), then the model's
// configuration (shape: JSON) and its length, which UnmarshalState
// compares with its model's. stateMagic1 heads the encodings written
// before the configuration was (no trailer), which are read without that
// check.
const (
	stateMagic  = "nsrnn-state2\x00"
	stateMagic1 = "nsrnn-state\x00"
)

// nextChunkStateMagic heads, in place of stateMagic, the encoding of a
// state of BoundaryNextChunk (whose stack is before the update that the
// carried hidden state makes); the rest is the same. nextChunkStateMagic1
// is stateMagic1's.
const (
	nextChunkStateMagic  = "nsrnn-state2-next\x00"
	nextChunkStateMagic1 = "nsrnn-state-next\x00"
)

// MarshalState encodes the stream's current state exactly, for a
// checkpoint; UnmarshalState restores it.
func (s *Stream) MarshalState() ([]byte, error) {
	var b bytes.Buffer
	if s.state != nil && s.state.boundary == BoundaryNextChunk {
		b.WriteString(nextChunkStateMagic)
	} else {
		b.WriteString(stateMagic)
	}
	u64 := func(v uint64) { b.Write(binary.LittleEndian.AppendUint64(nil, v)) }
	u64(uint64(s.batch))
	if s.state == nil {
		u64(0) // initial state: no layers
		return s.appendShape(b.Bytes())
	}
	carry, err := s.state.carry()
	if err != nil {
		return nil, err
	}
	u64(uint64(len(carry)))
	for _, layer := range carry {
		u64(uint64(len(layer)))
		for _, v := range layer {
			u64(math.Float64bits(v))
		}
	}
	var st []byte
	if s.state.stack != nil {
		var err error
		if st, err = s.state.stack.MarshalBinary(); err != nil {
			return nil, err
		}
	}
	u64(uint64(len(st)))
	b.Write(st)
	return s.appendShape(b.Bytes())
}

// appendShape appends to a state's encoding the trailer of its model's
// configuration: its JSON, then the JSON's length.
func (s *Stream) appendShape(b []byte) ([]byte, error) {
	shape, err := json.Marshal(s.m.cfg.shape())
	if err != nil {
		return nil, err
	}
	b = append(b, shape...)
	return binary.LittleEndian.AppendUint64(b, uint64(len(shape))), nil
}

// UnmarshalState restores a state encoded by MarshalState of a stream of
// the same model configuration and batch size.
func (s *Stream) UnmarshalState(data []byte) error {
	bad := func(why string) error { return fmt.Errorf("nsrnn: malformed stream state: %s", why) }
	boundary := BoundaryInChunk
	var r []byte
	shaped := true
	switch {
	case bytes.HasPrefix(data, []byte(stateMagic)):
		r = data[len(stateMagic):]
	case bytes.HasPrefix(data, []byte(nextChunkStateMagic)):
		boundary, r = BoundaryNextChunk, data[len(nextChunkStateMagic):]
	case bytes.HasPrefix(data, []byte(stateMagic1)):
		r, shaped = data[len(stateMagic1):], false
	case bytes.HasPrefix(data, []byte(nextChunkStateMagic1)):
		boundary, r, shaped = BoundaryNextChunk, data[len(nextChunkStateMagic1):], false
	default:
		return bad("missing header")
	}
	if shaped {
		if len(r) < 8 {
			return bad("truncated")
		}
		n := binary.LittleEndian.Uint64(r[len(r)-8:])
		if n > uint64(len(r)-8) {
			return bad("truncated")
		}
		shape := r[len(r)-8-int(n) : len(r)-8]
		r = r[:len(r)-8-int(n)]
		want, err := json.Marshal(s.m.cfg.shape())
		if err != nil {
			return err
		}
		if !bytes.Equal(shape, want) {
			var c Config
			if err := json.Unmarshal(shape, &c); err != nil {
				return bad("its model's configuration is not valid JSON")
			}
			return fmt.Errorf("nsrnn: stream state of a %s model (%s) given to a stream of a %s model (%s)", c.Kind, shape, s.m.cfg.Kind, want)
		}
	}
	u64 := func() (uint64, bool) {
		if len(r) < 8 {
			return 0, false
		}
		v := binary.LittleEndian.Uint64(r)
		r = r[8:]
		return v, true
	}
	batch, ok := u64()
	if !ok || batch != uint64(s.batch) {
		return fmt.Errorf("nsrnn: stream state of %d streams, this stream has %d", batch, s.batch)
	}
	layers, ok := u64()
	if !ok {
		return bad("truncated")
	}
	if layers == 0 {
		if len(r) != 0 {
			return bad("trailing bytes")
		}
		s.state = nil
		return nil
	}
	if layers != uint64(s.m.cfg.layers()) {
		return fmt.Errorf("nsrnn: stream state of %d layers, the model has %d", layers, s.m.cfg.layers())
	}
	if boundary != s.boundary && s.m.stack != nil {
		return fmt.Errorf("nsrnn: stream state of chunk boundary %v, this stream's is %v", boundary, s.boundary)
	}
	want := uint64(s.batch * 2 * s.m.cfg.Hidden)
	st := &State{batch: s.batch, shape: s.m.cfg.shape(), lstm: make(controller.Carry, layers), boundary: boundary}
	for i := range st.lstm {
		n, ok := u64()
		if !ok || n != want || uint64(len(r)) < 8*n {
			return bad("LSTM state does not fit the model")
		}
		st.lstm[i] = make([]float64, n)
		for j := range st.lstm[i] {
			v, _ := u64()
			if st.lstm[i][j] = math.Float64frombits(v); !finite(st.lstm[i][j]) {
				return bad(fmt.Sprintf("LSTM state of layer %d has the value %g", i+1, st.lstm[i][j]))
			}
		}
	}
	n, ok := u64()
	if !ok || n != uint64(len(r)) {
		return bad("truncated stack state")
	}
	if n > 0 {
		if s.m.stack == nil {
			return bad("a stack state for a model without a stack")
		}
		var err error
		if st.stack, err = s.m.stack.UnmarshalState(r); err != nil {
			return fmt.Errorf("nsrnn: %w", err)
		}
		if st.stack.Batch() != s.batch {
			return bad("stack state of another batch size")
		}
	} else if s.m.stack != nil && boundary == BoundaryInChunk {
		return bad("missing stack state")
	}
	s.state = st
	return nil
}

// streamObjective trains a stream chunk by chunk.
type streamObjective struct {
	s        *Stream
	chunks   int
	chunk    func(i int) (inputs, targets [][]int, err error)
	validate func() (float64, error)
}

// StreamObjective is the objective of truncated backpropagation through
// time over s: an epoch is chunks gradient steps, step i on the chunk
// that chunk(i) returns, each from the state the previous chunk ended in
// (the stream is reset at the start of every epoch); a step's loss is the
// chunk's mean cross-entropy per target, weighted by its number of
// targets. validate scores the model after each epoch (lower is better;
// it must not use s). The stream's carried state is saved in checkpoints
// taken within an epoch.
func StreamObjective(s *Stream, chunks int, chunk func(i int) (inputs, targets [][]int, err error), validate func() (float64, error)) (StatefulObjective, error) {
	if chunks < 1 {
		return nil, fmt.Errorf("nsrnn: a stream objective needs at least one chunk, got %d", chunks)
	}
	if s == nil {
		return nil, errors.New("nsrnn: a stream objective needs a stream (Model.NewStream)")
	}
	if chunk == nil || validate == nil {
		return nil, errors.New("nsrnn: a stream objective needs chunk and validate functions")
	}
	return &streamObjective{s: s, chunks: chunks, chunk: chunk, validate: validate}, nil
}

// model is the model whose gradients the objective computes (Fit
// refuses another).
func (o *streamObjective) model() *Model { return o.s.m }

func (o *streamObjective) Steps() int { return o.chunks }

func (o *streamObjective) Gradient(e, i int) (float64, float64, [][]float64, error) {
	if i == 0 {
		o.s.Reset()
	}
	in, tgt, err := o.chunk(i)
	if err != nil {
		return 0, 0, nil, fmt.Errorf("nsrnn: chunk %d: %w", i, err)
	}
	loss, grads, err := o.s.Gradient(in, tgt)
	if err != nil {
		return 0, 0, nil, err
	}
	n := 0
	for _, row := range tgt {
		for _, y := range row {
			if y != NoTarget {
				n++
			}
		}
	}
	return loss, float64(n), grads, nil
}

func (o *streamObjective) deviceGradient(e, i int) (float64, float64, error) {
	if i == 0 {
		o.s.Reset()
	}
	in, tgt, err := o.chunk(i)
	if err != nil {
		return 0, 0, fmt.Errorf("nsrnn: chunk %d: %w", i, err)
	}
	r, err := o.s.run(in, tgt, pass{grad: true})
	if err != nil {
		return 0, 0, err
	}
	return r.loss, float64(countTargets(tgt)), nil
}

// countTargets is the number of positions of a chunk that have a target.
func countTargets(tgt [][]int) int {
	n := 0
	for _, row := range tgt {
		for _, y := range row {
			if y != NoTarget {
				n++
			}
		}
	}
	return n
}

func (o *streamObjective) Validate() (float64, error)    { return o.validate() }
func (o *streamObjective) MarshalState() ([]byte, error) { return o.s.MarshalState() }
func (o *streamObjective) UnmarshalState(b []byte) error { return o.s.UnmarshalState(b) }

// CrossEntropy runs chunks from the initial state, chunk(i) for i = 0 …
// chunks−1, and returns the mean cross-entropy per target in nats and the
// number of targets (perplexity is the exponential of the first). The
// stream is reset before and after.
func (s *Stream) CrossEntropy(chunks int, chunk func(i int) (inputs, targets [][]int, err error)) (float64, int, error) {
	if chunk == nil {
		return 0, 0, errors.New("nsrnn: CrossEntropy needs a chunk function")
	}
	s.Reset()
	defer s.Reset()
	total, count := 0.0, 0
	// A GPU sums the losses itself (the same products and sums as here),
	// so that its chunks queue without a wait for each loss.
	var queued lossQueue
	for i := 0; i < chunks; i++ {
		in, tgt, err := chunk(i)
		if err != nil {
			return 0, 0, fmt.Errorf("nsrnn: chunk %d: %w", i, err)
		}
		n := countTargets(tgt)
		r, err := s.run(in, tgt, pass{queueLoss: true, lossFirst: queued == nil, lossWeight: float64(n)})
		if err != nil {
			return 0, 0, err
		}
		if r.queued != nil {
			queued = r.queued
		} else {
			total += r.loss * float64(n)
		}
		count += n
	}
	if queued != nil {
		var err error
		if total, err = queued.takeLoss(); err != nil {
			return 0, 0, err
		}
	}
	if count == 0 {
		return 0, 0, errors.New("nsrnn: cross-entropy of a stream without targets")
	}
	return total / float64(count), count, nil
}
