// Package param holds the trainable parameters of nsrnn models: named
// float64 tensors that live outside any graph, their seeded initialization,
// and their binding to input nodes of gorgonia graphs. One set of parameter
// tensors is shared by every graph a model builds (one per sequence length
// and batch size); each graph reads the same backing arrays.
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

// Scheme selects how a layer's parameters are initialized.
type Scheme struct {
	// Uniform, when positive, draws every weight and bias uniformly from
	// [−Uniform, Uniform]. When zero, weights are Xavier-uniform
	// (bound √(6/(fan_in+fan_out))) and biases zero.
	Uniform float64
}

// InitWeight fills a weight matrix of shape (out, in) per the scheme.
func (s Scheme) InitWeight(p *Param, rng *rand.Rand) {
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
func (s Scheme) InitBias(p *Param, rng *rand.Rand) {
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
