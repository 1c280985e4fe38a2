package fused

import (
	"fmt"
	"hash"
	"hash/fnv"

	"github.com/chewxy/hm"
	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"
)

// Kernel is a differentiable function from float64 tensors to one float64
// tensor, computed on row-major contiguous slices.
type Kernel interface {
	// Name is a short name, used when printing graphs.
	Name() string
	// WriteHash writes every parameter that distinguishes this kernel from
	// another of the same type, including any per-step or per-graph identity.
	WriteHash(h hash.Hash)
	// OutputShape returns the shape of the output for the given input
	// shapes, or an error if the inputs do not fit.
	OutputShape(in []tensor.Shape) (tensor.Shape, error)
	// Forward writes the output into out. It may overwrite all of out.
	Forward(out []float64, in [][]float64)
	// Backward adds ∂L/∂in[i] into gradIn[i], which the caller has zeroed,
	// given gradOut = ∂L/∂out, the forward output out and the inputs.
	// gradIn[i] is nil when input i is not differentiable.
	Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64)
}

// Constant is an optional interface for kernels with inputs that are never
// differentiated (such as integer targets or one-hot inputs).
type Constant interface {
	// Differentiable reports whether the kernel can be differentiated with
	// respect to input i.
	Differentiable(i int) bool
}

// Apply adds a node computing k(inputs...) to the graph of the inputs.
func Apply(k Kernel, inputs ...*G.Node) (*G.Node, error) {
	shapes := make([]tensor.Shape, len(inputs))
	types := make([]hm.Type, len(inputs)+1)
	for i, n := range inputs {
		shapes[i] = n.Shape().Clone()
		types[i] = n.Type()
	}
	out, err := k.OutputShape(shapes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", k.Name(), err)
	}
	types[len(inputs)] = valueType(out)
	op := &forwardOp{k: k, in: shapes, out: out, typ: hm.NewFnType(types...)}
	return G.ApplyOp(op, inputs...)
}

// KernelOf returns the kernel of a node that Apply made, given the node's
// operation, or nil for any other operation (a backward or extraction
// node's included).
func KernelOf(op G.Op) Kernel {
	if f, ok := op.(*forwardOp); ok {
		return f.k
	}
	return nil
}

// valueType is the gorgonia type of a float64 value with the given shape.
func valueType(s tensor.Shape) hm.Type {
	if s.IsScalar() {
		return tensor.Float64
	}
	return G.TensorType{Dims: s.Dims(), Of: tensor.Float64}
}

// Float64s returns the contiguous backing data of a float64 gorgonia value,
// materializing views.
func Float64s(v G.Value) []float64 {
	switch v := v.(type) {
	case *G.F64:
		return []float64{float64(*v)}
	case *tensor.Dense:
		if v.IsMaterializable() {
			return v.Materialize().(*tensor.Dense).Float64s()
		}
		return v.Float64s()
	}
	panic(fmt.Sprintf("fused: value of type %T is not a float64 tensor", v))
}

// newValue returns a zeroed value of shape s: prealloc when it fits, else
// the op's own value from an earlier run (*cache), else a new one, which it
// keeps in *cache.
//
// Gorgonia's tape machine forgets the values of its registers before each
// run (Reset), so that without the cache every run would allocate (and the
// runtime zero) every value of the graph anew. An op's value is dead by
// the time the op runs again, in the next run: the machine's program is the
// same every run, and what a caller reads of a run's values (the loss, the
// carried state) it reads before the next.
func newValue(s tensor.Shape, prealloc G.Value, cache *G.Value) (G.Value, []float64) {
	if s.IsScalar() {
		f, ok := (*cache).(*G.F64)
		if !ok {
			f = new(G.F64)
			*cache = f
		}
		*f = 0
		return f, nil
	}
	fits := func(v G.Value) (*tensor.Dense, bool) {
		d, ok := v.(*tensor.Dense)
		return d, ok && !d.IsView() && d.Dtype() == tensor.Float64 && d.Shape().Eq(s)
	}
	if d, ok := fits(prealloc); ok {
		data := d.Float64s()
		clear(data)
		return d, data
	}
	if d, ok := fits(*cache); ok {
		data := d.Float64s()
		clear(data)
		return d, data
	}
	d := tensor.New(tensor.WithShape(s.Clone()...), tensor.Of(tensor.Float64))
	*cache = d
	return d, d.Float64s()
}

func inputData(vals []G.Value) [][]float64 {
	in := make([][]float64, len(vals))
	for i, v := range vals {
		in[i] = Float64s(v)
	}
	return in
}

func opHash(op interface{ WriteHash(hash.Hash) }) uint32 {
	h := fnv.New32a()
	op.WriteHash(h)
	return h.Sum32()
}

// forwardOp is the gorgonia op of a kernel's forward pass.
type forwardOp struct {
	k   Kernel
	in  []tensor.Shape
	out tensor.Shape
	typ hm.Type
	val G.Value // the value of the latest run (newValue)
}

func (op *forwardOp) Arity() int                                     { return len(op.in) }
func (op *forwardOp) Type() hm.Type                                  { return op.typ }
func (op *forwardOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return op.out.Clone(), nil }
func (op *forwardOp) ReturnsPtr() bool                               { return false }
func (op *forwardOp) CallsExtern() bool                              { return false }
func (op *forwardOp) OverwritesInput() int                           { return -1 }
func (op *forwardOp) String() string                                 { return op.k.Name() }
func (op *forwardOp) Hashcode() uint32                               { return opHash(op) }

func (op *forwardOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "fused.forward:%s:%T:%v->%v;", op.k.Name(), op.k, op.in, op.out)
	op.k.WriteHash(h)
}

func (op *forwardOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op *forwardOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	if len(vals) != len(op.in) {
		return nil, fmt.Errorf("%s: got %d inputs, want %d", op.k.Name(), len(vals), len(op.in))
	}
	v, out := newValue(op.out, prealloc, &op.val)
	if out == nil { // scalar
		out = []float64{0}
		op.k.Forward(out, inputData(vals))
		*(v.(*G.F64)) = G.F64(out[0])
		return v, nil
	}
	op.k.Forward(out, inputData(vals))
	return v, nil
}

func (op *forwardOp) DiffWRT(n int) []bool {
	d := make([]bool, n)
	c, hasConst := op.k.(Constant)
	for i := range d {
		d[i] = !hasConst || c.Differentiable(i)
	}
	return d
}

func (op *forwardOp) SymDiff(inputs G.Nodes, output, grad *G.Node) (G.Nodes, error) {
	diff := op.DiffWRT(len(inputs))
	bw := &backwardOp{fw: op, diff: diff}
	total := 0
	offsets := make([]int, len(inputs))
	for i, s := range op.in {
		offsets[i] = total
		if diff[i] {
			total += s.TotalSize()
		}
	}
	bw.size = total
	args := append(append(G.Nodes{}, inputs...), output, grad)
	b, err := G.ApplyOp(bw, args...)
	if err != nil {
		return nil, fmt.Errorf("%s backward: %w", op.k.Name(), err)
	}
	ret := make(G.Nodes, len(inputs))
	for i := range inputs {
		if !diff[i] {
			continue
		}
		ex := &extractOp{name: op.k.Name(), offset: offsets[i], shape: op.in[i].Clone(), typ: hm.NewFnType(b.Type(), inputs[i].Type())}
		if ret[i], err = G.ApplyOp(ex, b); err != nil {
			return nil, err
		}
	}
	return ret, nil
}

// backwardOp computes the gradients of all differentiable inputs of a
// kernel into one flat vector.
type backwardOp struct {
	fw   *forwardOp
	diff []bool
	size int
	val  G.Value // the value of the latest run (newValue)
}

func (op *backwardOp) Arity() int { return len(op.fw.in) + 2 }
func (op *backwardOp) Type() hm.Type {
	ts := make([]hm.Type, 0, len(op.fw.in)+3)
	for _, s := range op.fw.in {
		ts = append(ts, valueType(s))
	}
	ts = append(ts, valueType(op.fw.out), valueType(op.fw.out), G.TensorType{Dims: 1, Of: tensor.Float64})
	return hm.NewFnType(ts...)
}
func (op *backwardOp) InferShape(...G.DimSizer) (tensor.Shape, error) {
	return tensor.Shape{op.size}, nil
}
func (op *backwardOp) ReturnsPtr() bool     { return false }
func (op *backwardOp) CallsExtern() bool    { return false }
func (op *backwardOp) OverwritesInput() int { return -1 }
func (op *backwardOp) String() string       { return op.fw.k.Name() + "′" }
func (op *backwardOp) Hashcode() uint32     { return opHash(op) }
func (op *backwardOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "fused.backward:%v:", op.diff)
	op.fw.WriteHash(h)
}

func (op *backwardOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op *backwardOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	n := len(op.fw.in)
	if len(vals) != n+2 {
		return nil, fmt.Errorf("%s backward: got %d inputs, want %d", op.fw.k.Name(), len(vals), n+2)
	}
	v, flat := newValue(tensor.Shape{op.size}, prealloc, &op.val)
	in := inputData(vals[:n])
	gradIn := make([][]float64, n)
	off := 0
	for i, s := range op.fw.in {
		if op.diff[i] {
			sz := s.TotalSize()
			gradIn[i] = flat[off : off+sz : off+sz]
			off += sz
		}
	}
	op.fw.k.Backward(gradIn, Float64s(vals[n+1]), Float64s(vals[n]), in)
	return v, nil
}

// IsNode reports whether op is an operation of this package's nodes: a
// kernel applied by Apply, its backward pass, or the extraction of one
// input's gradient from it. Their Do computes the value from the operands
// alone (and the kernel's own state), so a program may run them in the
// graph's order without gorgonia's tape machine.
func IsNode(op G.Op) bool {
	switch op.(type) {
	case *forwardOp, *backwardOp, *extractOp:
		return true
	}
	return false
}

// extractOp takes one input's gradient out of a backward node's flat
// output.
type extractOp struct {
	name   string
	offset int
	shape  tensor.Shape
	typ    hm.Type
	val    G.Value // the value of the latest run (newValue)
}

func (op *extractOp) Arity() int                                     { return 1 }
func (op *extractOp) Type() hm.Type                                  { return op.typ }
func (op *extractOp) InferShape(...G.DimSizer) (tensor.Shape, error) { return op.shape.Clone(), nil }
func (op *extractOp) ReturnsPtr() bool                               { return false }
func (op *extractOp) CallsExtern() bool                              { return false }
func (op *extractOp) OverwritesInput() int                           { return -1 }
func (op *extractOp) String() string                                 { return fmt.Sprintf("%s′[%d]", op.name, op.offset) }
func (op *extractOp) Hashcode() uint32                               { return opHash(op) }
func (op *extractOp) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "fused.extract:%s:%d:%v", op.name, op.offset, op.shape)
}

func (op *extractOp) Do(vals ...G.Value) (G.Value, error) { return op.UsePreallocDo(nil, vals...) }

func (op *extractOp) UsePreallocDo(prealloc G.Value, vals ...G.Value) (G.Value, error) {
	src := Float64s(vals[0])
	v, dst := newValue(op.shape, prealloc, &op.val)
	if dst == nil {
		*(v.(*G.F64)) = G.F64(src[op.offset])
		return v, nil
	}
	copy(dst, src[op.offset:op.offset+len(dst)])
	return v, nil
}

// HashCollision returns two distinct nodes of g whose 32-bit hashes
// (Node.Hashcode) are equal, or nils when there are none.
//
// Gorgonia's compiler (Compile, NewTapeMachine) eliminates common
// subexpressions by that hash alone: of two distinct nodes with equal
// hashes, the later is replaced by the earlier, whatever their ops and
// inputs, and the program computes the wrong thing, silently when the two
// have one shape. With N nodes a graph has such a pair with probability
// about N²/2³³: one graph in a few thousand of a thousand nodes. A program
// that builds many graphs must check each (a graph build is deterministic,
// so a graph that has a pair has it every time) and build it again with
// other hashes, as nsrnn does by giving the new graph's kernels another
// identity.
func HashCollision(g *G.ExprGraph) (a, b *G.Node) {
	nodes := g.AllNodes()
	seen := make(map[uint32]*G.Node, len(nodes))
	for _, n := range nodes {
		h := n.Hashcode()
		if m, ok := seen[h]; ok && m != n {
			return m, n
		}
		seen[h] = n
	}
	return nil, nil
}
