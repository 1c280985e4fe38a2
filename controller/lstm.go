package controller

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/fused"
	"github.com/nsrnn/nsrnn/param"
)

// LSTM is a stack of LSTM layers. It holds the parameters, which every
// graph bound to it shares.
type LSTM struct {
	name          string
	input, hidden int
	wih, whh      []*param.Param
	bih, bhh      []*param.Param
}

// MaxParams is the most parameters an LSTM may have (2 GiB of float64
// values): NewLSTM refuses a larger one before anything is allocated.
const MaxParams = 1 << 28

// NewLSTM returns an LSTM with the given number of layers of hidden units
// each, whose first layer reads inputs of inputSize (the total size of the
// parts given to Step). Its parameters are named name+".<l>.W_ih",
// ".<l>.W_hh", ".<l>.b_ih" and ".<l>.b_hh" for layer l = 0, 1, …, and are
// zero until Init.
func NewLSTM(name string, inputSize, hidden, layers int) (*LSTM, error) {
	if inputSize < 0 || hidden < 1 || layers < 1 {
		return nil, fmt.Errorf("controller: LSTM %q needs input size ≥ 0, hidden ≥ 1 and layers ≥ 1, got %d, %d, %d", name, inputSize, hidden, layers)
	}
	H := float64(hidden)
	if n := 4 * H * (float64(inputSize) + H + 2 + float64(layers-1)*(2*H+2)); n > MaxParams {
		return nil, fmt.Errorf("controller: LSTM %q would have %.3g parameters, more than the limit of %d (MaxParams)", name, n, MaxParams)
	}
	l := &LSTM{name: name, input: inputSize, hidden: hidden}
	for i := 0; i < layers; i++ {
		in := hidden
		if i == 0 {
			in = inputSize
		}
		p := fmt.Sprintf("%s.%d.", name, i)
		l.wih = append(l.wih, param.New(p+"W_ih", 4*hidden, in))
		l.whh = append(l.whh, param.New(p+"W_hh", 4*hidden, hidden))
		l.bih = append(l.bih, param.New(p+"b_ih", 4*hidden))
		l.bhh = append(l.bhh, param.New(p+"b_hh", 4*hidden))
	}
	return l, nil
}

// Name returns the name prefix of the parameters.
func (l *LSTM) Name() string { return l.name }

// InputSize is the total size of the first layer's input.
func (l *LSTM) InputSize() int { return l.input }

// Hidden is the number of units per layer, H.
func (l *LSTM) Hidden() int { return l.hidden }

// Layers is the number of layers.
func (l *LSTM) Layers() int { return len(l.wih) }

// Params returns the parameters, per layer W_ih, W_hh, b_ih, b_hh.
func (l *LSTM) Params() []*param.Param {
	var ps []*param.Param
	for i := range l.wih {
		ps = append(ps, l.wih[i], l.whh[i], l.bih[i], l.bhh[i])
	}
	return ps
}

// Init draws the parameters by the scheme's Recurrent rule, in the order
// of Params.
//
// rng is a *rand.Rand of math/rand/v2, e.g. rand.New(rand.NewPCG(seed, 0)).
func (l *LSTM) Init(sc param.Scheme, rng *rand.Rand) {
	s := sc.Recurrent()
	for i := range l.wih {
		s.InitWeight(l.wih[i], rng)
		s.InitWeight(l.whh[i], rng)
		s.InitBias(l.bih[i], rng)
		s.InitBias(l.bhh[i], rng)
	}
}

var graphIDs atomic.Uint64

// Graph is an LSTM bound to one gorgonia graph for one batch size. It
// holds the parameter nodes of that graph.
type Graph struct {
	l      *LSTM
	g      *G.ExprGraph
	pb     *param.Binding
	anchor *G.Node
	id     uint64
	batch  int
	wih    []*G.Node
	whh    []*G.Node
	bih    []*G.Node
	bhh    []*G.Node
	zero   State
	input  State
	inVal  []*tensor.Dense
	accs   []*gradAcc // per layer, made at the first step
}

// Bind binds l to the graph of pb for batches of the given size: the steps
// read the parameters through pb's nodes and add their gradients into pb's
// accumulators (gorgonia does not differentiate the parameter nodes, so no
// step emits a full-size weight gradient).
func (l *LSTM) Bind(pb *param.Binding, batch int) *Graph {
	lg := &Graph{l: l, g: pb.Graph(), pb: pb, anchor: pb.Anchor(), id: graphIDs.Add(1), batch: batch}
	for i := range l.wih {
		lg.wih = append(lg.wih, pb.Node(l.wih[i]))
		lg.whh = append(lg.whh, pb.Node(l.whh[i]))
		lg.bih = append(lg.bih, pb.Node(l.bih[i]))
		lg.bhh = append(lg.bhh, pb.Node(l.bhh[i]))
	}
	return lg
}

// LSTM returns the LSTM that lg binds.
func (lg *Graph) LSTM() *LSTM { return lg.l }

// Batch is the batch size of the graph.
func (lg *Graph) Batch() int { return lg.batch }

func (lg *Graph) stateNodes(kind string) (State, []*tensor.Dense) {
	s := State{nodes: make([]*G.Node, lg.l.Layers()), hidden: lg.l.hidden}
	vals := make([]*tensor.Dense, lg.l.Layers())
	for i := range s.nodes {
		vals[i] = tensor.New(tensor.WithShape(lg.batch, 2*lg.l.hidden), tensor.Of(tensor.Float64))
		s.nodes[i] = G.NewMatrix(lg.g, tensor.Float64, G.WithShape(lg.batch, 2*lg.l.hidden),
			G.WithName(fmt.Sprintf("%s.%s.%d#%d", lg.l.name, kind, i, lg.id)), G.WithValue(vals[i]))
	}
	return s, vals
}

// Zero returns the state h_0 = c_0 = 0, made of input nodes holding zeros
// (the same nodes on every call).
func (lg *Graph) Zero() State {
	if lg.zero.nodes == nil {
		lg.zero, _ = lg.stateNodes("zero")
	}
	return lg.zero
}

// Input returns a state made of input nodes (the same nodes on every
// call) whose values SetInput sets; they start at zero. It is the initial
// state of a chunk in truncated backpropagation through time.
func (lg *Graph) Input() State {
	if lg.input.nodes == nil {
		lg.input, lg.inVal = lg.stateNodes("in")
	}
	return lg.input
}

// SetInput sets the values of the Input state's nodes from c, a Carry of
// the same LSTM and batch size; a nil c sets them to zero.
func (lg *Graph) SetInput(c Carry) error {
	lg.Input()
	if c == nil {
		for _, v := range lg.inVal {
			clear(v.Float64s())
		}
		return nil
	}
	if len(c) != len(lg.inVal) {
		return fmt.Errorf("controller: carry has %d layers, want %d", len(c), len(lg.inVal))
	}
	for i, v := range lg.inVal {
		if len(c[i]) != len(v.Float64s()) {
			return fmt.Errorf("controller: carry layer %d has %d values, want %d", i, len(c[i]), len(v.Float64s()))
		}
		copy(v.Float64s(), c[i])
	}
	return nil
}

// Part is one part of the first layer's input, a (batch, size) node.
type Part struct {
	// Node is the (batch, size) input node.
	Node *G.Node
	// Constant marks a part whose gradient is never needed (one-hot
	// symbols, for instance): the backward pass skips it.
	Constant bool
}

// Step adds the nodes of time step t (used only to tell steps apart),
// one fused node per layer: the new state from prev and the first layer's
// input, the concatenation of parts, each a (batch, size) node with sizes
// summing to InputSize. Every part is differentiated; see StepParts.
func (lg *Graph) Step(t int, parts []*G.Node, prev State) (State, error) {
	ps := make([]Part, len(parts))
	for i, n := range parts {
		ps[i] = Part{Node: n}
	}
	return lg.StepParts(t, ps, prev)
}

// StepParts is Step with parts that may be marked constant.
func (lg *Graph) StepParts(t int, parts []Part, prev State) (State, error) {
	l := lg.l
	if len(prev.nodes) != l.Layers() {
		return State{}, fmt.Errorf("controller: step %d: previous state has %d layers, want %d", t, len(prev.nodes), l.Layers())
	}
	total := 0
	nodes := make([]*G.Node, 0, len(parts)+5)
	k0 := &cellKernel{graph: lg.id, layer: 0, t: t, batch: lg.batch, hidden: l.hidden, in: l.input, grads: lg.grads(0)}
	for i, p := range parts {
		s := p.Node.Shape()
		if len(s) != 2 || s[0] != lg.batch {
			return State{}, fmt.Errorf("controller: step %d: part %d has shape %v, want (%d, ·)", t, i, s, lg.batch)
		}
		k0.sizes = append(k0.sizes, s[1])
		k0.widths = append(k0.widths, s[1])
		k0.constant = append(k0.constant, p.Constant)
		total += s[1]
		nodes = append(nodes, p.Node)
	}
	if total != l.input {
		return State{}, fmt.Errorf("controller: step %d: parts have total size %d, want %d", t, total, l.input)
	}
	if lg.accs == nil {
		for range l.Layers() {
			lg.accs = append(lg.accs, &gradAcc{first: t})
		}
	}
	next := State{nodes: make([]*G.Node, l.Layers()), hidden: l.hidden}
	var err error
	for i := range next.nodes {
		k := k0
		if i > 0 {
			k = &cellKernel{graph: lg.id, layer: i, t: t, batch: lg.batch, hidden: l.hidden, in: l.hidden,
				sizes: []int{l.hidden}, widths: []int{2 * l.hidden}, constant: []bool{false}, grads: lg.grads(i)}
			nodes = []*G.Node{next.nodes[i-1]}
		}
		if t > lg.accs[i].first {
			k.acc = lg.accs[i]
		} else if t == lg.accs[i].first {
			k.acc, k.flush = lg.accs[i], true
		}
		nodes = append(nodes, prev.nodes[i], lg.wih[i], lg.whh[i], lg.bih[i], lg.bhh[i], lg.anchor)
		if next.nodes[i], err = fused.Apply(k, nodes...); err != nil {
			return State{}, fmt.Errorf("controller: step %d layer %d: %w", t, i, err)
		}
	}
	return next, nil
}

// SetFloat32 makes the graph's LSTM matrix products (the input and
// recurrent products of every step and their gradients) run in float32,
// with float32 copies of the weights made at each forward pass; the gates,
// states and gradients stay float64. It applies to the next runs of the
// graph; off (the default) computes everything in float64.
func (lg *Graph) SetFloat32(on bool) {
	for _, a := range lg.accs {
		a.f32 = on
	}
}

// grads returns the gradient accumulators of layer i's W_ih, W_hh, b_ih,
// b_hh.
func (lg *Graph) grads(i int) [4][]float64 {
	l := lg.l
	return [4][]float64{lg.pb.Grad(l.wih[i]), lg.pb.Grad(l.whh[i]), lg.pb.Grad(l.bih[i]), lg.pb.Grad(l.bhh[i])}
}

// State is the state of every layer after some step: per layer a
// (batch, 2H) node holding [h ; c].
type State struct {
	nodes  []*G.Node
	hidden int
}

// Layers is the number of layers.
func (s State) Layers() int { return len(s.nodes) }

// Layer returns layer l's (batch, 2H) node [h ; c].
func (s State) Layer(l int) *G.Node { return s.nodes[l] }

// H returns the top layer's hidden state h_t, a (batch, H) node.
func (s State) H() *G.Node { return s.extract(0) }

// C returns the top layer's memory cell c_t, a (batch, H) node.
func (s State) C() *G.Node { return s.extract(1) }

func (s State) extract(half int) *G.Node {
	n, err := fused.Apply(halfKernel{hidden: s.hidden, half: half}, s.nodes[len(s.nodes)-1])
	if err != nil {
		panic(fmt.Sprintf("controller: %v", err)) // the state nodes always have the right shape
	}
	return n
}

// Carry is the (h, c) of every layer as plain values: per layer the
// (batch, 2H) row-major [h ; c].
type Carry [][]float64

// Carry copies the values of the state's nodes after a run, to be given
// to SetInput of the graph of the next chunk.
func (s State) Carry() (Carry, error) { return s.CarryWith((*G.Node).Value) }

// CarryWith is Carry for a graph whose values value gives: a program that
// runs the graph itself, rather than on gorgonia's machines, which bind
// each node's value.
func (s State) CarryWith(value func(*G.Node) G.Value) (Carry, error) {
	c := make(Carry, len(s.nodes))
	for i, n := range s.nodes {
		v := value(n)
		if v == nil {
			return nil, fmt.Errorf("controller: state node %s has no value (run the graph first)", n.Name())
		}
		c[i] = append([]float64(nil), fused.Float64s(v)...)
	}
	return c, nil
}
