package param

import (
	"fmt"
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Param is one named parameter tensor.
type Param struct {
	// Name is unique within a model; it names the graph nodes bound to the
	// parameter and the entry in saved files.
	Name  string
	Value *tensor.Dense
}

// New returns a zero parameter of the given shape.
func New(name string, shape ...int) *Param {
	return &Param{Name: name, Value: tensor.New(tensor.WithShape(shape...), tensor.Of(tensor.Float64))}
}

// Data returns the parameter's backing array.
func (p *Param) Data() []float64 { return p.Value.Float64s() }

// Size is the number of scalars in the parameter.
func (p *Param) Size() int { return p.Value.Shape().TotalSize() }

// Node returns an input node of g bound to the parameter's tensor (not a
// copy: updates to the tensor are seen by the graph).
func (p *Param) Node(g *G.ExprGraph) *G.Node {
	s := p.Value.Shape()
	var n *G.Node
	switch s.Dims() {
	case 1:
		n = G.NewVector(g, tensor.Float64, G.WithShape(s...), G.WithName(p.Name), G.WithValue(p.Value))
	case 2:
		n = G.NewMatrix(g, tensor.Float64, G.WithShape(s...), G.WithName(p.Name), G.WithValue(p.Value))
	default:
		n = G.NewTensor(g, tensor.Float64, s.Dims(), G.WithShape(s...), G.WithName(p.Name), G.WithValue(p.Value))
	}
	return n
}

// Scheme is how a model's parameters are initialized. Every layer
// initializes itself from the model's Scheme, choosing the Rule that
// applies to each of its parameters: Recurrent for the LSTM and the
// nondeterministic stack's action layer, Affine for every other affine
// layer (the embedding counts as recurrent).
type Scheme struct {
	// Uniform, when positive, draws every parameter uniformly in
	// ±Uniform (the Penn Treebank setting uses 0.05). The zero value is
	// the formal-language setting: recurrent weights and biases uniform
	// in ±0.1, other affine layers Xavier-uniform with zero biases.
	Uniform float64
}

// Recurrent returns the rule for the LSTM's parameters, the embedding and
// the nondeterministic stack's action layer.
func (s Scheme) Recurrent() Rule {
	if s.Uniform > 0 {
		return Rule{Uniform: s.Uniform}
	}
	return Rule{Uniform: 0.1}
}

// Affine returns the rule for the other affine layers (the output layer,
// the stratification and superposition stacks' layers).
func (s Scheme) Affine() Rule { return Rule{Uniform: s.Uniform} }

// Rule draws the weights and biases of one layer.
type Rule struct {
	// Uniform, when positive, draws every weight and bias uniformly from
	// [−Uniform, Uniform]. When zero, weights are Xavier-uniform
	// (bound √(6/(fan_in+fan_out))) and biases zero.
	Uniform float64
}

// InitWeight fills a weight matrix of shape (out, in) per the scheme.
//
// rng is a *rand.Rand of math/rand/v2, e.g. rand.New(rand.NewPCG(seed, 0)).
func (s Rule) InitWeight(p *Param, rng *rand.Rand) {
	shape := p.Value.Shape()
	if len(shape) != 2 {
		panic(fmt.Sprintf("param: InitWeight on %s of shape %v", p.Name, shape))
	}
	bound := s.Uniform
	if bound <= 0 {
		bound = math.Sqrt(6 / float64(shape[0]+shape[1]))
	}
	uniform(p.Data(), bound, rng)
}

// InitBias fills a bias vector per the scheme.
//
// rng is a *rand.Rand of math/rand/v2, e.g. rand.New(rand.NewPCG(seed, 0)).
func (s Rule) InitBias(p *Param, rng *rand.Rand) {
	if s.Uniform > 0 {
		uniform(p.Data(), s.Uniform, rng)
		return
	}
	clear(p.Data())
}

func uniform(x []float64, bound float64, rng *rand.Rand) {
	for i := range x {
		x[i] = (2*rng.Float64() - 1) * bound
	}
}

// Count is the total number of scalars in ps.
func Count(ps []*Param) int {
	n := 0
	for _, p := range ps {
		n += p.Size()
	}
	return n
}

// Binding is a set of parameters bound to one gorgonia graph: one input
// node per parameter and one gradient accumulator per parameter. Kernels
// that own parameters read them through their nodes (which are not
// differentiated by gorgonia) and add their gradients into the binding's
// accumulators in their backward pass, so that a long graph never holds
// one full-size gradient per step. Each graph has its own binding; nothing
// in it is shared with another graph.
type Binding struct {
	g      *G.ExprGraph
	nodes  map[*Param]*G.Node
	grads  map[*Param][]float64
	order  []*Param
	anchor *G.Node
	// diff lists the parameters that gorgonia differentiates (Diff), in
	// order; diffVals receives the values of their gradient nodes at each
	// run (Differentiate).
	diff     []*Param
	diffVals []G.Value
	diffUsed []bool
}

// NewBinding returns an empty binding for g.
func NewBinding(g *G.ExprGraph) *Binding {
	return &Binding{g: g, nodes: map[*Param]*G.Node{}, grads: map[*Param][]float64{}}
}

// Graph returns the graph of the binding.
func (b *Binding) Graph() *G.ExprGraph { return b.g }

// Node returns the input node of p in the binding's graph, creating it on
// first use.
func (b *Binding) Node(p *Param) *G.Node {
	if n, ok := b.nodes[p]; ok {
		return n
	}
	n := p.Node(b.g)
	b.nodes[p] = n
	b.grads[p] = make([]float64, p.Size())
	b.order = append(b.order, p)
	return n
}

// ParamOf returns the parameter whose node n is, if any.
func (b *Binding) ParamOf(n *G.Node) (*Param, bool) {
	for p, m := range b.nodes {
		if m == n {
			return p, true
		}
	}
	return nil, false
}

// Bound reports whether p has a node in the binding.
func (b *Binding) Bound(p *Param) bool { _, ok := b.nodes[p]; return ok }

// Grad returns the gradient accumulator of p (bound with Node first): the
// backward pass adds ∂L/∂p into it. It panics if p is not bound, a
// programmer error.
func (b *Binding) Grad(p *Param) []float64 {
	g, ok := b.grads[p]
	if !ok {
		panic("param: gradient of unbound parameter " + p.Name)
	}
	return g
}

// ZeroGrads clears every accumulator; call it before each run that
// computes gradients.
func (b *Binding) ZeroGrads() {
	for _, g := range b.grads {
		clear(g)
	}
}

// Diff returns the node of p, as Node does, and marks p as a parameter
// that gorgonia itself differentiates: a layer written in gorgonia's
// operations alone (no fused kernel, no backward pass of its own) reads
// its parameters through Diff. Differentiate then asks gorgonia for their
// gradients too, and CollectDiff adds them into the accumulators after
// each run, where the fused kernels add theirs; a parameter may be read
// both ways.
func (b *Binding) Diff(p *Param) *G.Node {
	n := b.Node(p)
	for _, q := range b.diff {
		if q == p {
			return n
		}
	}
	b.diff = append(b.diff, p)
	return n
}

// Differentiate adds to the graph the gradient nodes of loss with respect
// to wrt, the anchor where a kernel took it (which runs every fused
// kernel's backward pass) and the parameters of Diff, whose gradients CollectDiff reads after a run;
// it returns the gradient nodes of wrt. Call it once, after the graph is
// built and before it is compiled.
func (b *Binding) Differentiate(loss *G.Node, wrt ...*G.Node) (G.Nodes, error) {
	all := append(G.Nodes(nil), wrt...)
	if b.anchor != nil {
		all = append(all, b.anchor)
	}
	// The parameters the loss depends on (a graph of no steps may not
	// use a stack's): the others' gradients are 0.
	first, used := len(all), b.ancestors(loss)
	var which []int
	for i, p := range b.diff {
		if used[b.nodes[p].ID()] {
			all = append(all, b.nodes[p])
			which = append(which, i)
		}
	}
	gs, err := G.Grad(loss, all...)
	if err != nil {
		return nil, err
	}
	b.diffVals = make([]G.Value, len(b.diff))
	b.diffUsed = make([]bool, len(b.diff))
	for j, i := range which {
		b.diffUsed[i] = true
		G.Read(gs[first+j], &b.diffVals[i])
	}
	return gs[:len(wrt)], nil
}

// ancestors returns the IDs of n and of every node it is computed from.
func (b *Binding) ancestors(n *G.Node) map[int64]bool {
	seen := map[int64]bool{n.ID(): true}
	stack := []int64{n.ID()}
	for len(stack) > 0 {
		id := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		it := b.g.From(id)
		for it.Next() {
			c := it.Node().ID()
			if !seen[c] {
				seen[c] = true
				stack = append(stack, c)
			}
		}
	}
	return seen
}

// CollectDiff adds the gradients that gorgonia computed in the latest run
// for the parameters of Diff into their accumulators. Call it after each
// run of a graph that Differentiate differentiated.
func (b *Binding) CollectDiff() error {
	for i, p := range b.diff {
		if i < len(b.diffUsed) && !b.diffUsed[i] {
			continue // the loss does not depend on p
		}
		if i >= len(b.diffVals) || b.diffVals[i] == nil {
			return fmt.Errorf("param: no gradient of %s: the graph was not differentiated by Differentiate, or has not run", p.Name)
		}
		acc := b.grads[p]
		switch v := b.diffVals[i].Data().(type) {
		case []float64:
			if len(v) != len(acc) {
				return fmt.Errorf("param: the gradient of %s has %d values, want %d", p.Name, len(v), len(acc))
			}
			for j, x := range v {
				acc[j] += x
			}
		case float64:
			if len(acc) != 1 {
				return fmt.Errorf("param: the gradient of %s is a scalar, want %d values", p.Name, len(acc))
			}
			acc[0] += v
		default:
			return fmt.Errorf("param: the gradient of %s has values of type %T", p.Name, v)
		}
	}
	return nil
}

// Anchor returns the graph's gradient anchor, a scalar input node. Every
// kernel that owns parameters takes it as a differentiable input (its
// gradient is always 0), so that differentiating the loss with respect to
// the anchor makes gorgonia run the backward pass of every such kernel.
func (b *Binding) Anchor() *G.Node {
	if b.anchor == nil {
		b.anchor = G.NewScalar(b.g, tensor.Float64, G.WithName(fmt.Sprintf("param.anchor#%p", b)), G.WithValue(0.0))
	}
	return b.anchor
}
