package stacks

import (
	"math/rand/v2"

	G "gorgonia.org/gorgonia"

	"github.com/nsrnn/nsrnn/internal/param"
)

// Layer is a stack together with its Actions layer. It holds the
// parameters, which every graph shares; Bind makes the per-graph part.
type Layer interface {
	// ReadingSize is the size of a reading r_t.
	ReadingSize() int
	// Params returns the layer's parameters (none for a stack without an
	// Actions layer).
	Params() []*param.Param
	// Init initializes the parameters from rng.
	Init(rng *rand.Rand)
	// Bind creates the per-graph instance for a batch of sequences with
	// hidden states of size hidden, over at most steps stack updates.
	Bind(g *G.ExprGraph, batch, steps int) (Instance, error)
}

// Instance is a stack bound to one graph.
type Instance interface {
	// Initial returns the reading r_0 of the initial stack, a (batch,
	// ReadingSize) node.
	Initial() *G.Node
	// Step adds the nodes for stack update t (t = 1, 2, … in order): from
	// the controller's hidden state h_t, a (batch, hidden) node, the
	// actions a_t, the stack s_t and the reading r_t, a (batch,
	// ReadingSize) node, which it returns.
	Step(t int, h *G.Node) (*G.Node, error)
}
