package nsrnn

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/controller"
	"github.com/nsrnn/nsrnn/internal/fused"
	"github.com/nsrnn/nsrnn/internal/param"
	"github.com/nsrnn/nsrnn/stacks"
)

// Param is a named parameter tensor of a model.
type Param = param.Param

// Model is a stack RNN: an input layer (one-hot or a learned embedding),
// an LSTM controller, an optional stack joined to it through the
// controller–stack interface of DESIGN §2, and an output layer predicting
// the next symbol. Its parameters are shared by the gorgonia graphs it
// builds and caches, one per (length, batch size, with or without
// gradients).
//
// A Model is not safe for concurrent use.
type Model struct {
	// MaxGraphs bounds the number of compiled graphs the model caches;
	// the least recently used are dropped first. 0 means no bound. The
	// default is 256, enough for the lengths 40–100 of the paper's
	// test sets with and without gradients.
	MaxGraphs int

	cfg    Config
	embed  *param.Param // nil for one-hot inputs
	lstm   *controller.LSTM
	stack  stacks.Layer // nil for the LSTM
	why    *param.Param
	bhy    *param.Param
	params []*param.Param
	graphs map[graphKey]*graph
	order  []graphKey // least recently used first
}

// New builds a model from a validated configuration and initializes its
// parameters from seed.
func New(cfg Config, seed uint64) (*Model, error) {
	m, err := build(cfg)
	if err != nil {
		return nil, err
	}
	m.Init(seed)
	return m, nil
}

// build makes a model with zero parameters.
func build(cfg Config) (*Model, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	m := &Model{cfg: cfg, graphs: map[graphKey]*graph{}, MaxGraphs: 256}
	if cfg.Embedding > 0 {
		m.embed = param.New("embedding", cfg.InputVocab, cfg.Embedding)
		m.params = append(m.params, m.embed)
	}
	var err error
	switch {
	case IsNondeterministic(cfg.Kind):
		m.stack, err = stacks.NewNS("stack", cfg.Hidden, cfg.nsConfig())
	case cfg.Kind == Gref:
		m.stack, err = stacks.NewGref("stack", cfg.Hidden, cfg.StackEmbedding)
	case cfg.Kind == JM:
		e := cfg.StackEmbedding
		if cfg.PushHiddenState {
			e = cfg.Hidden
		}
		m.stack, err = stacks.NewJM("stack", cfg.Hidden, e, cfg.PushHiddenState, cfg.DepthLimit)
	}
	if err != nil {
		return nil, fmt.Errorf("nsrnn: %w", err)
	}
	in := cfg.inputSize()
	if m.stack != nil {
		in += m.stack.ReadingSize()
	}
	if m.lstm, err = controller.NewLSTM("lstm", in, cfg.Hidden, cfg.layers()); err != nil {
		return nil, fmt.Errorf("nsrnn: %w", err)
	}
	m.params = append(m.params, m.lstm.Params()...)
	if m.stack != nil {
		m.params = append(m.params, m.stack.Params()...)
	}
	m.why = param.New("output.W", cfg.OutputVocab, cfg.Hidden)
	m.bhy = param.New("output.b", cfg.OutputVocab)
	m.params = append(m.params, m.why, m.bhy)
	return m, nil
}

// Init draws all parameters afresh from seed (DESIGN §5).
func (m *Model) Init(seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x6e7372726e))
	uniform := param.Scheme{Uniform: 0.1}
	other := param.Scheme{}
	if m.cfg.InitRange > 0 {
		uniform = param.Scheme{Uniform: m.cfg.InitRange}
		other = uniform
	}
	if m.embed != nil {
		uniform.InitWeight(m.embed, rng)
	}
	m.lstm.Init(uniform, rng)
	switch s := m.stack.(type) {
	case *stacks.NS:
		s.Scheme = uniform
	case *stacks.Gref:
		s.Scheme = other
	case *stacks.JM:
		s.Scheme = other
	}
	if m.stack != nil {
		m.stack.Init(rng)
	}
	other.InitWeight(m.why, rng)
	other.InitBias(m.bhy, rng)
}

// Config returns the model's configuration.
func (m *Model) Config() Config { return m.cfg }

// Params returns the model's parameters in a fixed order. The tensors are
// the model's own: changing them changes the model.
func (m *Model) Params() []*Param { return m.params }

// NumParams is the number of scalar parameters.
func (m *Model) NumParams() int { return param.Count(m.params) }

// EOS is the index of the end-of-sequence output symbol, OutputVocab−1.
func (m *Model) EOS() int { return m.cfg.OutputVocab - 1 }

type graphKey struct {
	n, batch int
	grad     bool
}

var graphIDs atomic.Uint64

// graph is the compiled computation for one (length, batch size) and
// whether it computes gradients.
type graph struct {
	key     graphKey
	g       *G.ExprGraph
	tokens  *tensor.Dense // (batch, max(n,1)) input symbols
	targets *tensor.Dense // (batch, n+1) target symbols
	loss    *G.Node
	out     *outputLoss
	// grads[i] is the gradient node of m.params[i], or nil where the
	// parameter does not take part (the stack's for n < 2).
	grads []*G.Node
	vm    G.VM
	// stack is the graph's stack instance (nil for the LSTM).
	stack stacks.Instance
}

// graphFor returns the cached graph for key, building it if needed.
func (m *Model) graphFor(key graphKey) (*graph, error) {
	if gr, ok := m.graphs[key]; ok {
		m.touch(key)
		return gr, nil
	}
	gr, err := m.buildGraph(key)
	if err != nil {
		return nil, err
	}
	m.graphs[key] = gr
	m.order = append(m.order, key)
	for m.MaxGraphs > 0 && len(m.order) > m.MaxGraphs {
		old := m.order[0]
		m.order = m.order[1:]
		m.graphs[old].vm.Close()
		delete(m.graphs, old)
	}
	return gr, nil
}

func (m *Model) touch(key graphKey) {
	for i, k := range m.order {
		if k == key {
			copy(m.order[i:], m.order[i+1:])
			m.order[len(m.order)-1] = key
			return
		}
	}
}

func (m *Model) buildGraph(key graphKey) (*graph, error) {
	n, batch := key.n, key.batch
	id := graphIDs.Add(1)
	g := G.NewGraph()
	gr := &graph{key: key, g: g}
	width := max(n, 1)
	gr.tokens = tensor.New(tensor.WithShape(batch, width), tensor.Of(tensor.Float64))
	gr.targets = tensor.New(tensor.WithShape(batch, n+1), tensor.Of(tensor.Float64))
	tokens := G.NewMatrix(g, tensor.Float64, G.WithShape(batch, width), G.WithName("tokens"), G.WithValue(gr.tokens))
	targets := G.NewMatrix(g, tensor.Float64, G.WithShape(batch, n+1), G.WithName("targets"), G.WithValue(gr.targets))

	var embedNode *G.Node
	if m.embed != nil {
		embedNode = m.embed.Node(g)
	}
	lg := m.lstm.Bind(g, batch)
	var st stacks.Instance
	var r *G.Node
	if m.stack != nil {
		var err error
		if st, err = m.stack.Bind(g, batch, max(n-1, 0)); err != nil {
			return nil, err
		}
		r = st.Initial()
		gr.stack = st
	}
	state := lg.Zero()
	hs := []*G.Node{state.H()}
	for t := 1; t <= n; t++ {
		var x *G.Node
		var err error
		if embedNode != nil {
			x, err = fused.Apply(&embed{graph: id, t: t, size: m.cfg.Embedding, batch: batch, col: width}, tokens, embedNode)
		} else {
			x, err = fused.Apply(&oneHot{graph: id, t: t, vocab: m.cfg.InputVocab, batch: batch, col: width}, tokens)
		}
		if err != nil {
			return nil, err
		}
		parts := []*G.Node{x}
		if r != nil {
			parts = append(parts, r)
		}
		if state, err = lg.Step(t, parts, state); err != nil {
			return nil, err
		}
		h := state.H()
		hs = append(hs, h)
		if st != nil && t < n {
			if r, err = st.Step(t, h); err != nil {
				return nil, err
			}
		}
	}
	gr.out = &outputLoss{graph: id, steps: n + 1, batch: batch, hidden: m.cfg.Hidden, vocab: m.cfg.OutputVocab,
		logp: make([]float64, (n+1)*batch*m.cfg.OutputVocab)}
	args := append(hs, m.why.Node(g), m.bhy.Node(g), targets)
	var err error
	if gr.loss, err = fused.Apply(gr.out, args...); err != nil {
		return nil, err
	}
	if key.grad {
		var wrt G.Nodes
		var idx []int
		for i, p := range m.params {
			if !m.usedAt(p, n) {
				continue
			}
			// Every component binds its parameters to nodes named after
			// them.
			nd := g.ByName(p.Name)
			if len(nd) != 1 {
				return nil, fmt.Errorf("nsrnn: graph for length %d has %d nodes named %q", n, len(nd), p.Name)
			}
			wrt = append(wrt, nd[0])
			idx = append(idx, i)
		}
		gs, err := G.Grad(gr.loss, wrt...)
		if err != nil {
			return nil, fmt.Errorf("nsrnn: differentiating the graph for length %d: %w", n, err)
		}
		gr.grads = make([]*G.Node, len(m.params))
		for j, i := range idx {
			gr.grads[i] = gs[j]
		}
	}
	gr.vm = G.NewTapeMachine(g)
	return gr, nil
}

// usedAt reports whether parameter p takes part in the computation for a
// sequence of length n.
func (m *Model) usedAt(p *param.Param, n int) bool {
	if p == m.why || p == m.bhy {
		return true
	}
	if m.stack != nil {
		for _, q := range m.stack.Params() {
			if q == p {
				return n >= 2
			}
		}
	}
	return n >= 1
}

// CountParams returns the number of scalar parameters of a model with the
// given configuration, without initializing one.
func CountParams(cfg Config) (int, error) {
	m, err := build(cfg)
	if err != nil {
		return 0, err
	}
	return m.NumParams(), nil
}
