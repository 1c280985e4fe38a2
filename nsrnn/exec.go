package nsrnn

import (
	"fmt"

	"github.com/nsrnn/nsrnn/fused"
	G "gorgonia.org/gorgonia"
)

// executor runs a graph without compiling it: its nodes in the order of
// gorgonia's tape machine (G.Sort's, reversed, as gorgonia's Compile
// takes it), each operation's Do, or UsePreallocDo into its value of the
// previous run, on its operands' values.
//
// Gorgonia's compiler costs time that grows with the square of a graph's
// nodes (its pass that inserts register frees scans every register for
// every operand): 17 ms for a sentence of 40 symbols of an RNS-RNN with
// gradients, 166 ms for 150, where the executor prepares the same graphs
// in 0.5 and 2 ms. A model builds one graph per length, part and gradient
// mode, so the compiler dominated the first epoch of a formal-language
// run and every evaluation over many lengths. The executor computes the
// same operations in the same order, and so the same bits; it does no
// common-subexpression elimination, so nodes of equal hashes need no
// rebuild (see fused.HashCollision).
//
// It runs the graphs of the library's kinds: fused kernels, their
// backward and extraction nodes, and gorgonia's element-wise binary
// operations and constants (the sums and seeds of its differentiation). A
// graph with any other operation (a layer written in gorgonia's other
// operations, a G.Read) runs on gorgonia's tape machine, as before
// (newExecutor returns no executor for it).
type executor struct {
	nodes []*G.Node
	ops   []G.Op // nil for the graph's inputs, whose values are bound
	args  [][]int
	vals  []G.Value
	index map[*G.Node]int
	buf   []G.Value
	// pipes are the graph's pipelined kernels, and watch[j] the operands
	// that node j's value is to them.
	pipes []pipelined
	watch [][]watcher
}

// pipelined is a kernel that starts its work before its node runs, as
// its operands are computed, on goroutines of its own. The executor calls
// begin before a run, operandReady with each watched operand's value as
// soon as it is computed (or bound, for an input), and finish after the
// run, also after a failed one; finish returns once the kernel's
// goroutines are done and everything it writes is written (the gradients
// of its parameters among them). A kernel run without these calls (on
// gorgonia's tape machine) does all its work in its node's passes.
type pipelined interface {
	begin()
	watches(arg int) bool
	operandReady(arg int, v []float64)
	finish()
}

// watcher is operand arg of a pipelined kernel.
type watcher struct {
	k   pipelined
	arg int
}

// useTapeMachine makes every graph run on gorgonia's tape machine; the
// tests compare the two.
var useTapeMachine = false

// newExecutor returns the executor of g, or nil when g has an operation
// it does not run.
func newExecutor(g *G.ExprGraph) (*executor, error) {
	if useTapeMachine {
		return nil, nil
	}
	sorted, err := G.Sort(g)
	if err != nil {
		return nil, fmt.Errorf("nsrnn: sorting the graph: %w", err)
	}
	// Compile runs the nodes in the reverse of Sort's order.
	for i, j := 0, len(sorted)-1; i < j; i, j = i+1, j-1 {
		sorted[i], sorted[j] = sorted[j], sorted[i]
	}
	e := &executor{
		nodes: sorted, ops: make([]G.Op, len(sorted)), args: make([][]int, len(sorted)),
		vals: make([]G.Value, len(sorted)), index: make(map[*G.Node]int, len(sorted)),
	}
	for i, n := range sorted {
		e.index[n] = i
	}
	for i, n := range sorted {
		op := n.Op()
		if op == nil {
			continue
		}
		if !executable(op) {
			return nil, nil
		}
		e.ops[i] = op
		it := g.From(n.ID()) // the operands, in order
		for it.Next() {
			c, ok := it.Node().(*G.Node)
			if !ok {
				return nil, nil
			}
			j, ok := e.index[c]
			if !ok || j >= i {
				return nil, fmt.Errorf("nsrnn: graph node %v has operand %v out of order", n, c)
			}
			e.args[i] = append(e.args[i], j)
		}
		if len(e.args[i]) > len(e.buf) {
			e.buf = make([]G.Value, len(e.args[i]))
		}
		if p, ok := fused.KernelOf(op).(pipelined); ok {
			e.pipes = append(e.pipes, p)
			if e.watch == nil {
				e.watch = make([][]watcher, len(sorted))
			}
			for a, j := range e.args[i] {
				if p.watches(a) {
					e.watch[j] = append(e.watch[j], watcher{p, a})
				}
			}
		}
	}
	return e, nil
}

// executable reports whether the executor runs op the way gorgonia's tape
// machine does: the fused package's nodes, and gorgonia's element-wise
// binary operations and constants (the sums and seeds of its
// differentiation), whose Do computes the value alone.
func executable(op G.Op) bool {
	if fused.IsNode(op) {
		return true
	}
	switch fmt.Sprintf("%T", op) {
	case "gorgonia.elemBinOp", "*gorgonia.elemBinOp", "gorgonia.constantScalar", "*gorgonia.constantScalar",
		"gorgonia.constantTensor", "*gorgonia.constantTensor":
		return true
	}
	return false
}

// run computes every node's value.
func (e *executor) run() error {
	for _, p := range e.pipes {
		p.begin()
	}
	defer func() {
		for _, p := range e.pipes {
			p.finish()
		}
	}()
	// The inputs' values first, so that a pipelined kernel has its
	// inputs before the nodes that it waits for run.
	for i, op := range e.ops {
		if op == nil {
			e.vals[i] = e.nodes[i].Value()
			e.ready(i)
		}
	}
	for i, op := range e.ops {
		if op == nil {
			continue
		}
		args := e.buf[:len(e.args[i])]
		for k, j := range e.args[i] {
			args[k] = e.vals[j]
		}
		var v G.Value
		var err error
		if p, ok := op.(G.UsePreallocDoer); ok && e.vals[i] != nil {
			v, err = p.UsePreallocDo(e.vals[i], args...)
		} else {
			v, err = op.Do(args...)
		}
		if err != nil {
			return fmt.Errorf("%v: %w", e.nodes[i], err)
		}
		e.vals[i] = v
		e.ready(i)
	}
	return nil
}

// ready hands node i's value to the pipelined kernels that watch it.
func (e *executor) ready(i int) {
	if e.watch == nil || e.vals[i] == nil {
		return
	}
	for _, w := range e.watch[i] {
		w.k.operandReady(w.arg, fused.Float64s(e.vals[i]))
	}
}

// value returns n's value of the latest run (nil before one, or for a node
// not in the graph).
func (e *executor) value(n *G.Node) G.Value {
	i, ok := e.index[n]
	if !ok {
		return nil
	}
	return e.vals[i]
}
