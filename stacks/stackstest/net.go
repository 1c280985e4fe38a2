package stackstest

import (
	"cmp"
	"errors"
	"fmt"
	"hash"
	"math"
	"math/rand/v2"
	"sync/atomic"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/fused"
	"github.com/nsrnn/nsrnn/internal/gradcheck"
	"github.com/nsrnn/nsrnn/param"
	"github.com/nsrnn/nsrnn/stacks"
)

// Data holds the fixed values a Net is built from: the inputs x_t, the
// loss weights C_t and the feedback matrix A, for a number of steps that a
// Net may cover in whole or in part.
type Data struct {
	// Batch, Hidden and Reading are the batch size, the size of the
	// hidden states and the size of the readings.
	Batch, Hidden, Reading int
	// X[t−1] is x_t, (Batch, Hidden) row-major.
	X [][]float64
	// C[t−1] is C_t, (Batch, Reading) row-major.
	C [][]float64
	// A is the feedback matrix, (Reading, Hidden) row-major.
	A []float64
}

// NewData returns Data for the given number of steps with every value
// drawn from a standard normal distribution.
//
// rng is a *rand.Rand of math/rand/v2, e.g. rand.New(rand.NewPCG(seed, 0)).
func NewData(rng *rand.Rand, batch, hidden, reading, steps int) *Data {
	d := &Data{Batch: batch, Hidden: hidden, Reading: reading, A: normal(rng, reading*hidden)}
	for range steps {
		d.X = append(d.X, normal(rng, batch*hidden))
		d.C = append(d.C, normal(rng, batch*reading))
	}
	return d
}

func normal(rng *rand.Rand, n int) []float64 {
	x := make([]float64, n)
	for i := range x {
		x[i] = rng.NormFloat64()
	}
	return x
}

// Options shape a Net.
type Options struct {
	// From is the first step of the Data the Net covers, 0-based: the
	// Net's step t uses X[From+t−1] and C[From+t−1].
	From int
	// Steps is the number of steps; the stack is bound for Steps steps
	// (or for BindSteps, when larger).
	Steps int
	// BindSteps, when larger than Steps, is the number of steps the
	// instance is bound for: the graph then adds fewer steps than it may.
	BindSteps int
	// Feedback makes h_t = x_t + tanh(r_{t−1} A) (r_0 the instance's
	// Initial reading); without it h_t = x_t and nothing but the stack
	// itself orders its steps.
	Feedback bool
	// Carry binds the instance with carry.
	Carry bool
	// Used is the number of leading steps whose readings the loss uses
	// (0: all): Loss = Σ_{t ≤ Used} ⟨C_t, r_t⟩.
	Used int
}

// Net is a stack layer bound in a graph of its own: for t = 1 … Steps,
// h_t is x_t, an input node, or with feedback x_t + tanh(r_{t−1} A); r_t =
// Step(t, h_t); and Loss = Σ_{t ≤ Used} ⟨C_t, r_t⟩. The values of h_t and
// of the used readings r_t are recorded as they are computed (a
// TapeMachine reuses the memory of dead nodes, so they cannot be read
// from the nodes after a run).
type Net struct {
	Graph    *G.ExprGraph
	Binding  *param.Binding
	Layer    stacks.Layer
	Instance stacks.Instance
	// Loss is the scalar loss node.
	Loss *G.Node
	// X are the input nodes x_t; their values are the Data's.
	X []*G.Node
	// Params are the nodes of the layer's parameters, in the order of
	// Layer.Params.
	Params G.Nodes
	// MaxPerParam, when positive, is the number of elements of each node
	// that CheckGradients checks (the default is the constant
	// MaxPerParam); negative checks all.
	MaxPerParam int

	data   *Data
	opt    Options
	hs     []*hKernel
	terms  []*termKernel
	vm     G.VM
	xGrads G.Nodes
	// differentiated is set once gradient nodes were added to the graph.
	differentiated bool
}

var kernelIDs atomic.Uint64

// NewNet builds a Net for layer from d. The layer must read hidden states
// of size d.Hidden and give readings of size d.Reading.
func NewNet(layer stacks.Layer, d *Data, opt Options) (*Net, error) {
	if opt.Steps < 1 || opt.From < 0 || opt.From+opt.Steps > len(d.X) {
		return nil, fmt.Errorf("stackstest: steps %d from %d outside the %d steps of the data", opt.Steps, opt.From, len(d.X))
	}
	if opt.Used == 0 {
		opt.Used = opt.Steps
	}
	if opt.Used < 1 || opt.Used > opt.Steps {
		return nil, fmt.Errorf("stackstest: %d used steps of %d", opt.Used, opt.Steps)
	}
	if layer.ReadingSize() != d.Reading {
		return nil, fmt.Errorf("stackstest: layer reads %d values, data has %d", layer.ReadingSize(), d.Reading)
	}
	g := G.NewGraph()
	pb := param.NewBinding(g)
	inst, err := layer.Bind(pb, d.Batch, max(opt.Steps, opt.BindSteps), opt.Carry)
	if err != nil {
		return nil, err
	}
	n := &Net{Graph: g, Binding: pb, Layer: layer, Instance: inst, data: d, opt: opt}
	for _, p := range layer.Params() {
		n.Params = append(n.Params, pb.Node(p))
	}
	r := inst.Initial()
	for t := 1; t <= opt.Steps; t++ {
		xv := tensor.New(tensor.WithShape(d.Batch, d.Hidden), tensor.Of(tensor.Float64))
		x := G.NewMatrix(g, tensor.Float64, G.WithShape(d.Batch, d.Hidden), G.WithName(fmt.Sprintf("stackstest.x%d", t)), G.WithValue(xv))
		n.X = append(n.X, x)
		hk := &hKernel{id: kernelIDs.Add(1), batch: d.Batch, hidden: d.Hidden, reading: d.Reading, seen: make([]float64, d.Batch*d.Hidden)}
		args := []*G.Node{x}
		if opt.Feedback {
			hk.a = d.A
			args = append(args, r)
		}
		h, err := fused.Apply(hk, args...)
		if err != nil {
			return nil, err
		}
		n.hs = append(n.hs, hk)
		if r, err = inst.Step(t, h); err != nil {
			return nil, err
		}
		if t > opt.Used {
			continue
		}
		tk := &termKernel{id: kernelIDs.Add(1), c: make([]float64, d.Batch*d.Reading), seen: make([]float64, d.Batch*d.Reading)}
		term, err := fused.Apply(tk, r)
		if err != nil {
			return nil, err
		}
		n.terms = append(n.terms, tk)
		if n.Loss == nil {
			n.Loss = term
		} else if n.Loss, err = G.Add(n.Loss, term); err != nil {
			return nil, err
		}
	}
	n.Load(opt.From)
	return n, nil
}

// Load sets the values of x_t and C_t to those of the Data's steps from
// from+1 on, so that one Net can run several chunks of a sequence.
func (n *Net) Load(from int) {
	for t, x := range n.X {
		copy(x.Value().Data().([]float64), n.data.X[from+t])
	}
	for t, tk := range n.terms {
		copy(tk.c, n.data.C[from+t])
	}
	n.opt.From = from
}

// Used is the number of steps whose readings the loss uses.
func (n *Net) Used() int { return n.opt.Used }

// Run runs the graph (with the gradients that Grad added) once, after
// zeroing the binding's accumulators.
func (n *Net) Run() error {
	if n.vm == nil {
		if a, b := fused.HashCollision(n.Graph); a != nil {
			return fmt.Errorf("stackstest: nodes %v and %v have equal hashes, which gorgonia's compiler would merge; build the net again", a, b)
		}
		n.vm = G.NewTapeMachine(n.Graph)
	}
	n.Binding.ZeroGrads()
	n.vm.Reset()
	if err := n.vm.RunAll(); err != nil {
		return err
	}
	if n.differentiated {
		return n.Binding.CollectDiff()
	}
	return nil
}

// Close releases the machine that Run made.
func (n *Net) Close() {
	if n.vm != nil {
		n.vm.Close()
		n.vm = nil
	}
}

// Readings returns copies of the used readings r_1 … r_Used of the latest
// run.
func (n *Net) Readings() [][]float64 {
	out := make([][]float64, len(n.terms))
	for i, tk := range n.terms {
		out[i] = append([]float64(nil), tk.seen...)
	}
	return out
}

// Hidden returns copies of the hidden states h_1 … h_Steps of the latest
// run.
func (n *Net) Hidden() [][]float64 {
	out := make([][]float64, len(n.hs))
	for i, hk := range n.hs {
		out[i] = append([]float64(nil), hk.seen...)
	}
	return out
}

// usedX returns the x_t that the loss depends on.
func (n *Net) usedX() G.Nodes { return n.X[:n.opt.Used] }

// Grad adds the gradient nodes of the loss with respect to the used x_t
// and, through the binding's anchor, the parameters. Call it before the
// runs whose gradients Gradients reads, once.
func (n *Net) Grad() error {
	if n.differentiated {
		return errors.New("stackstest: the net already has gradient nodes")
	}
	n.Close()
	gs, err := n.Binding.Differentiate(n.Loss, n.usedX()...)
	if err != nil {
		return err
	}
	n.differentiated = true
	n.xGrads = gs[:n.opt.Used]
	return nil
}

// Gradients returns, after Grad and Run, copies of the gradients of the
// parameters (in the order of Layer.Params) and of the used x_t.
func (n *Net) Gradients() (params, xs [][]float64) {
	for _, p := range n.Layer.Params() {
		params = append(params, append([]float64(nil), n.Binding.Grad(p)...))
	}
	for _, g := range n.xGrads {
		xs = append(xs, append([]float64(nil), g.Value().Data().([]float64)...))
	}
	return params, xs
}

// Magnitude is the scale at which the loss of the latest run is
// computed: Σ_{t,b} max_i |C_t[b,i]| · max(1, ‖r_t[b]‖₁). Each term bounds
// |⟨C_t[b], r_t[b]⟩| (for the nondeterministic stacks, whose readings are
// distributions, it is max_i |C_t[b,i]|); the floor of 1 covers a reading
// that is small through cancellation, since the readings of the
// stratification and superposition stacks mix vectors of magnitude up to
// 1 (or, pushing the hidden states, of the hidden states' magnitude, which
// their readings then show), and the rounding of a sum is relative to the
// size of its terms, not to its own.
func (n *Net) Magnitude() float64 {
	d := n.data
	m := 0.0
	for t, tk := range n.terms {
		c := d.C[n.opt.From+t]
		for b := 0; b < d.Batch; b++ {
			cm, rs := 0.0, 0.0
			for i := b * d.Reading; i < (b+1)*d.Reading; i++ {
				cm = math.Max(cm, math.Abs(c[i]))
				rs += math.Abs(tk.seen[i])
			}
			m += cm * math.Max(1, rs)
		}
	}
	return m
}

// The gradient checks: relative error Tol, finite-difference step Step,
// and by default at most MaxPerParam elements of each parameter and input
// node, chosen at random. The gradient of every action reaches the
// gradients of the inputs x_t, all of whose elements are checked in the
// suite's graphs (they have batch·hidden = 6 each), so checking some
// elements of the larger weight matrices loses little.
const (
	Tol         = 1e-6
	Step        = 1e-6
	MaxPerParam = 10
)

// CheckGradients compares the gradients of the loss with respect to every
// parameter (from the binding's accumulators) and every used x_t with
// central finite differences, reporting mismatches as errors of t. It
// must be called on a Net without gradient nodes (no Grad before), and
// adds them.
//
// It checks, with internal/gradcheck, each of MaxPerParam elements of
// every parameter and input chosen at random, and then the derivative of
// the loss along Directions random directions in the space of all the
// parameters and used inputs together, ⟨∇L, v⟩ against (L(θ+hv) −
// L(θ−hv)) / 2h, which an error in any one element of the gradient
// disturbs.
//
// The tolerance is 1e-6 relative, plus an absolute allowance for the
// rounding of the finite difference: the loss is computed with a relative
// error of a few ε of its Magnitude M, so (f(x+h) − f(x−h)) / 2h carries an
// error up to about 10·ε·M / h. gradcheck accepts |a − n| ≤
// Tol·max(Floor, |a|+|n|), so Floor = allowance / Tol.
func (n *Net) CheckGradients(t *testing.T, seed uint64) {
	t.Helper()
	if n.differentiated {
		t.Fatal("stackstest: CheckGradients on a net that already has gradient nodes")
	}
	if err := n.Run(); err != nil {
		t.Fatal(err)
	}
	n.Close()
	allowance := n.allowance()
	wrt := append(append(G.Nodes(nil), n.Params...), n.usedX()...)
	opt := gradcheck.Options{Tol: Tol, Step: Step, Floor: allowance / Tol, Seed: seed, MaxPerParam: cmp.Or(n.MaxPerParam, MaxPerParam)}
	if len(n.Params) > 0 {
		// Without parameters nothing takes the binding's anchor.
		opt.Binding = n.Binding
	}
	n.differentiated = true
	bad, worst, err := gradcheck.Check(n.Graph, n.Loss, wrt, opt)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range bad {
		if i == 10 {
			t.Errorf("… %d mismatches in all", len(bad))
			break
		}
		t.Error(b)
	}
	t.Logf("%d parameters and %d inputs checked, worst error %.3g (absolute allowance %.2g)", len(n.Params), len(n.usedX()), worst, allowance)
	n.checkDirections(t, seed, opt.Floor)
}

// allowance is the absolute allowance for the rounding of a finite
// difference of the loss (see CheckGradients), from the latest run.
func (n *Net) allowance() float64 { return 10 * 0x1p-52 * math.Max(n.Magnitude(), 1) / Step }

// Directions is the number of random directions along which
// CheckGradients and CheckDirections check the derivative of the loss.
const Directions = 3

// CheckDirections checks the derivative of the loss along Directions
// random directions in the space of all the parameters and used inputs,
// as the second part of CheckGradients does, with the same tolerance. It
// adds the gradient nodes (Grad) if the net has none yet.
func (n *Net) CheckDirections(t *testing.T, seed uint64) {
	t.Helper()
	if !n.differentiated {
		if err := n.Grad(); err != nil {
			t.Fatal(err)
		}
	}
	if err := n.Run(); err != nil {
		t.Fatal(err)
	}
	n.checkDirections(t, seed, n.allowance()/Tol)
}

// checkDirections is the second part of CheckGradients, run on the graph
// with the gradient nodes that gradcheck added.
func (n *Net) checkDirections(t *testing.T, seed uint64, floor float64) {
	t.Helper()
	defer n.Close()
	// The analytic gradients, in the order of vals.
	if err := n.Run(); err != nil {
		t.Fatal(err)
	}
	var vals, grads [][]float64
	for _, p := range n.Layer.Params() {
		vals = append(vals, p.Data())
		grads = append(grads, append([]float64(nil), n.Binding.Grad(p)...))
	}
	for _, x := range n.usedX() {
		g, err := x.Grad()
		if err != nil {
			t.Fatal(err)
		}
		vals = append(vals, x.Value().Data().([]float64))
		grads = append(grads, append([]float64(nil), g.Data().([]float64)...))
	}
	loss := func() float64 {
		t.Helper()
		if err := n.Run(); err != nil {
			t.Fatal(err)
		}
		switch v := n.Loss.Value().(type) {
		case *G.F64:
			return float64(*v)
		default:
			t.Fatalf("loss of type %T", v)
		}
		return 0
	}
	rng := rand.New(rand.NewPCG(seed, 0xd1ec))
	for k := 0; k < Directions; k++ {
		dir := make([][]float64, len(vals))
		a := 0.0
		for i, v := range vals {
			dir[i] = normal(rng, len(v))
			for j, d := range dir[i] {
				a += grads[i][j] * d
			}
		}
		move := func(s float64) {
			for i, v := range vals {
				for j, d := range dir[i] {
					v[j] += s * d
				}
			}
		}
		orig := make([][]float64, len(vals))
		for i, v := range vals {
			orig[i] = append([]float64(nil), v...)
		}
		move(Step)
		fp := loss()
		for i, v := range vals {
			copy(v, orig[i])
		}
		move(-Step)
		fm := loss()
		for i, v := range vals {
			copy(v, orig[i])
		}
		num := (fp - fm) / (2 * Step)
		if e := math.Abs(a-num) / math.Max(floor, math.Abs(a)+math.Abs(num)); !(e <= Tol) {
			t.Errorf("direction %d: derivative %.10g, numeric %.10g (error %.3g)", k, a, num, e)
		}
	}
}

// hKernel computes h_t = x_t (without feedback) or x_t + tanh(r_{t−1} A),
// recording h_t.
type hKernel struct {
	id                     uint64
	batch, hidden, reading int
	a                      []float64 // (reading, hidden); nil without feedback
	seen                   []float64
}

func (k *hKernel) Name() string          { return "stackstest_h" }
func (k *hKernel) WriteHash(h hash.Hash) { fmt.Fprintf(h, "stackstest.h:%d", k.id) }

func (k *hKernel) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	want := []tensor.Shape{{k.batch, k.hidden}}
	if k.a != nil {
		want = append(want, tensor.Shape{k.batch, k.reading})
	}
	if len(in) != len(want) {
		return nil, fmt.Errorf("got %d inputs, want %d", len(in), len(want))
	}
	for i := range in {
		if !in[i].Eq(want[i]) {
			return nil, fmt.Errorf("input %d has shape %v, want %v", i, in[i], want[i])
		}
	}
	return tensor.Shape{k.batch, k.hidden}, nil
}

// feedback writes tanh(r A) into out.
func (k *hKernel) feedback(out, r []float64) {
	for b := 0; b < k.batch; b++ {
		for j := 0; j < k.hidden; j++ {
			z := 0.0
			for i := 0; i < k.reading; i++ {
				z += r[b*k.reading+i] * k.a[i*k.hidden+j]
			}
			out[b*k.hidden+j] = math.Tanh(z)
		}
	}
}

func (k *hKernel) Forward(out []float64, in [][]float64) {
	if k.a == nil {
		copy(out, in[0])
	} else {
		k.feedback(out, in[1])
		for i, x := range in[0] {
			out[i] += x
		}
	}
	copy(k.seen, out)
}

func (k *hKernel) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {
	for i, g := range gradOut {
		gradIn[0][i] += g
	}
	if k.a == nil {
		return
	}
	th := make([]float64, len(gradOut))
	k.feedback(th, in[1])
	for b := 0; b < k.batch; b++ {
		for j := 0; j < k.hidden; j++ {
			dz := gradOut[b*k.hidden+j] * (1 - th[b*k.hidden+j]*th[b*k.hidden+j])
			for i := 0; i < k.reading; i++ {
				gradIn[1][b*k.reading+i] += dz * k.a[i*k.hidden+j]
			}
		}
	}
}

// termKernel computes the scalar ⟨c, r⟩, recording r.
type termKernel struct {
	id      uint64
	c, seen []float64
}

func (k *termKernel) Name() string          { return "stackstest_term" }
func (k *termKernel) WriteHash(h hash.Hash) { fmt.Fprintf(h, "stackstest.term:%d", k.id) }

func (k *termKernel) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 1 || in[0].TotalSize() != len(k.c) {
		return nil, fmt.Errorf("want one input of %d values, got %v", len(k.c), in)
	}
	return tensor.ScalarShape(), nil
}

func (k *termKernel) Forward(out []float64, in [][]float64) {
	copy(k.seen, in[0])
	s := 0.0
	for i, v := range in[0] {
		s += k.c[i] * v
	}
	out[0] = s
}

func (k *termKernel) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {
	for i := range gradIn[0] {
		gradIn[0][i] += gradOut[0] * k.c[i]
	}
}
