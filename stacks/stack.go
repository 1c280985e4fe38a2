package stacks

import (
	"encoding"
	"errors"
	"fmt"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"

	"github.com/nsrnn/nsrnn/param"
)

// Layer is a stack together with its Actions layer. It holds the
// parameters, which every graph shares; Bind makes the per-graph part.
type Layer interface {
	// ReadingSize is the size of a reading r_t.
	ReadingSize() int
	// Params returns the layer's parameters (none for a stack without an
	// Actions layer).
	Params() []*param.Param
	// Init draws the parameters from rng (a *rand.Rand of math/rand/v2),
	// each by the rule of s that applies to it.
	Init(s param.Scheme, rng *rand.Rand)
	// Bind creates the instance of the stack in the graph of b, for a
	// batch of sequences over at most steps stack updates. The instance
	// reads the parameters through b's nodes and adds their gradients
	// into b's accumulators. With carry, every run starts from the state
	// given to SetState and records its final state for State; a stack
	// that cannot carry its state refuses (see Carryable).
	Bind(b *param.Binding, batch, steps int, carry bool) (Instance, error)
	// Carryable returns nil when the stack's state can be carried from
	// one run to the next, and otherwise an error that says why not.
	Carryable() error
	// UnmarshalState decodes a state encoded by its MarshalBinary, for a
	// stack of this configuration.
	UnmarshalState(data []byte) (State, error)
}

// Replicator is implemented by the layers whose graphs may run at the same
// time as the graphs of a replica. A layer keeps scratch space (the
// dynamic programs' tapes) shared by the graphs bound to it, which
// therefore must not run concurrently; graphs bound to different replicas
// may.
type Replicator interface {
	// Replica returns a layer with the same configuration and the same
	// parameters (the same *param.Param values, so that Init and updates
	// reach both) and scratch space of its own. A run of a graph bound to
	// the replica uses at most threads goroutines (threads < 1: as many
	// as GOMAXPROCS), so that replicas run side by side need not compete
	// for the cores.
	Replica(threads int) Layer
}

// MaxParams is the most parameters a stack layer may have (2 GiB of
// float64 values); the constructors refuse larger layers with an error
// before anything is allocated.
const MaxParams = 1 << 28

// checkParams returns an error if a layer named name would have n
// parameters, more than MaxParams (n is counted in float64, so that no
// size overflows).
func checkParams(name string, n float64) error {
	if n > MaxParams {
		return fmt.Errorf("stacks: layer %s would have %.3g parameters, more than the limit of %d (MaxParams)", name, n, MaxParams)
	}
	return nil
}

// Sizer is implemented by the layers whose memory grows with the batch and
// the length of a run (the nondeterministic stacks, JM and Gref). CheckSize
// returns the error that Bind would return for batch sequences over steps
// stack updates (carried, with carry) because the run's memory would
// exceed MaxTapeBytes, and nil otherwise; it allocates nothing, so that a
// program can refuse its settings before it starts.
type Sizer interface {
	CheckSize(batch, steps int, carry bool) error
}

// Recycler is implemented by the layers whose carried states are large
// (the memory-limited nondeterministic stacks, megabytes per sequence):
// Recycle hands the layer a state that its owner will not use again, whose
// memory the layer may reuse for the final state of a later run of a graph
// bound to it (overwriting it). A stream that advances past a state no one
// else holds recycles it, so that a long stream does not allocate a new
// state per run. Recycling a state that is still in use corrupts it; a
// state of another configuration or batch is ignored.
type Recycler interface {
	Recycle(s State)
}

// Instance is a stack bound to one graph.
type Instance interface {
	// Initial returns the reading r_0 of the state the run starts from, a
	// (batch, ReadingSize) node.
	Initial() *G.Node
	// Step adds the nodes for stack update t (t = 1, 2, … in order): from
	// the controller's hidden state h_t, a (batch, hidden) node, the
	// actions a_t, the stack s_t and the reading r_t, a (batch,
	// ReadingSize) node, which it returns.
	Step(t int, h *G.Node) (*G.Node, error)
	// SetState sets the state the next runs start from; nil is the
	// initial stack. It is an error for an instance bound without carry,
	// or for a state of another configuration or batch size.
	SetState(s State) error
	// State returns the state after the last step of the latest run: a
	// detached value that no later run changes. It is an error for an
	// instance bound without carry, or before its first run.
	State() (State, error)
}

// State is the state of a batch of stacks between two runs, detached
// from any graph: no gradient flows into it, and no run changes it. A nil
// State is the initial stack. Its encoding (MarshalBinary) is exact, so a
// checkpoint taken in the middle of a stream resumes it bit for bit.
type State interface {
	// Batch is the number of stacks.
	Batch() int
	encoding.BinaryMarshaler
}

// ErrNoCarry is wrapped by the errors of stacks that cannot carry their
// state from one run to the next.
var ErrNoCarry = errors.New("stack state cannot be carried")

// errNoRun is returned by State before the first run.
var errNoRun = errors.New("stacks: no state yet: the graph has not run")

// errNotCarrying is returned by SetState and State of an instance bound
// without carry.
var errNotCarrying = errors.New("stacks: instance was bound without carry")

// Binding is a set of parameters bound to one gorgonia graph: an input
// node and a gradient accumulator per parameter, and the graph's gradient
// anchor (see the package documentation, "Graphs").
type Binding = param.Binding

// NewBinding returns an empty binding for g.
func NewBinding(g *G.ExprGraph) *Binding { return param.NewBinding(g) }

// Scheme is how parameters are initialized (Layer.Init).
type Scheme = param.Scheme
