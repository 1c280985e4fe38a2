// Package gradcheck compares the gradients that a gorgonia graph computes by
// symbolic differentiation with central finite differences of its loss.
// It is the shared test oracle for every hand-written backward pass in
// nsrnn.
package gradcheck

import (
	"fmt"
	"math"
	"math/rand/v2"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/fused"
	"github.com/nsrnn/nsrnn/param"
)

// Options control a check.
type Options struct {
	// Step is the finite-difference step (default 1e-6).
	Step float64
	// Tol is the largest accepted error |a−n| / max(Floor, |a|+|n|)
	// between an analytic gradient a and a numeric one n (default 1e-6).
	Tol float64
	// Floor keeps tiny gradients from failing on rounding (default 1e-7).
	Floor float64
	// MaxPerParam is how many elements of each parameter are checked,
	// chosen at random (0: all).
	MaxPerParam int
	// Seed chooses the checked elements.
	Seed uint64
	// Binding, when set, is the parameter binding of the graph: the
	// gradients of the nodes of params that are bound parameters are read
	// from the binding's accumulators, after differentiating with
	// respect to its anchor and its parameters of Diff
	// (Binding.Differentiate).
	Binding *param.Binding
}

func (o *Options) defaults() {
	if o.Step == 0 {
		o.Step = 1e-6
	}
	if o.Tol == 0 {
		o.Tol = 1e-6
	}
	if o.Floor == 0 {
		o.Floor = 1e-7
	}
}

// Mismatch describes one element whose gradients disagree.
type Mismatch struct {
	Param             string
	Index             int
	Analytic, Numeric float64
	Err               float64
}

// String describes the mismatch: the parameter entry and both values.
func (m Mismatch) String() string {
	return fmt.Sprintf("%s[%d]: analytic %.10g numeric %.10g (error %.3g)", m.Param, m.Index, m.Analytic, m.Numeric, m.Err)
}

// Check differentiates the scalar loss with respect to params (input nodes
// of g holding float64 tensor values), runs the graph, and compares each
// checked gradient element with a central difference of the loss. It
// returns the mismatches and the largest error seen. A graph that fails to
// build or run is an error.
func Check(g *G.ExprGraph, loss *G.Node, params G.Nodes, opt Options) ([]Mismatch, float64, error) {
	opt.defaults()
	var wrt G.Nodes
	bound := make([]*param.Param, len(params))
	for i, p := range params {
		if opt.Binding != nil {
			if q, ok := opt.Binding.ParamOf(p); ok {
				bound[i] = q
				continue
			}
		}
		wrt = append(wrt, p)
	}
	var gs G.Nodes
	var err error
	if opt.Binding != nil {
		// Through the anchor (the fused kernels' parameters) and
		// directly (the parameters that gorgonia differentiates).
		gs, err = opt.Binding.Differentiate(loss, wrt...)
	} else {
		gs, err = G.Grad(loss, wrt...)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("gradcheck: grad: %w", err)
	}
	if a, b := fused.HashCollision(g); a != nil {
		return nil, 0, fmt.Errorf("gradcheck: nodes %v and %v have equal hashes, which gorgonia's compiler would merge", a, b)
	}
	m := G.NewTapeMachine(g)
	defer m.Close()
	run := func() (float64, error) {
		if opt.Binding != nil {
			opt.Binding.ZeroGrads()
		}
		m.Reset()
		if err := m.RunAll(); err != nil {
			return 0, err
		}
		if opt.Binding != nil {
			if err := opt.Binding.CollectDiff(); err != nil {
				return 0, err
			}
		}
		return scalar(loss.Value())
	}
	if _, err := run(); err != nil {
		return nil, 0, fmt.Errorf("gradcheck: run: %w", err)
	}
	analytic := make([][]float64, len(params))
	j := 0
	for i := range params {
		if bound[i] != nil {
			analytic[i] = append([]float64(nil), opt.Binding.Grad(bound[i])...)
			continue
		}
		analytic[i] = append([]float64(nil), gs[j].Value().Data().([]float64)...)
		j++
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x9e3779b97f4a7c15))
	var bad []Mismatch
	worst := 0.0
	for pi, p := range params {
		data := p.Value().(*tensor.Dense).Float64s()
		idx := rng.Perm(len(data))
		if opt.MaxPerParam > 0 && len(idx) > opt.MaxPerParam {
			idx = idx[:opt.MaxPerParam]
		}
		for _, j := range idx {
			orig := data[j]
			data[j] = orig + opt.Step
			fp, err := run()
			if err != nil {
				return nil, 0, err
			}
			data[j] = orig - opt.Step
			fm, err := run()
			if err != nil {
				return nil, 0, err
			}
			data[j] = orig
			num := (fp - fm) / (2 * opt.Step)
			a := analytic[pi][j]
			e := math.Abs(a-num) / math.Max(opt.Floor, math.Abs(a)+math.Abs(num))
			if math.IsNaN(e) {
				e = math.Inf(1)
			}
			worst = math.Max(worst, e)
			if e > opt.Tol {
				bad = append(bad, Mismatch{Param: p.Name(), Index: j, Analytic: a, Numeric: num, Err: e})
			}
		}
	}
	return bad, worst, nil
}

func scalar(v G.Value) (float64, error) {
	switch v := v.(type) {
	case *G.F64:
		return float64(*v), nil
	case *tensor.Dense:
		if v.Shape().TotalSize() == 1 {
			return v.Float64s()[0], nil
		}
	}
	return 0, fmt.Errorf("gradcheck: loss is not a float64 scalar: %v", v)
}

// TensorsErr is the largest, over tensors i, of ‖a[i]−b[i]‖/‖b[i]‖ (the
// absolute ‖a[i]−b[i]‖ where b[i] is zero): how far gradients a, tensor by
// tensor, are from reference gradients b of the same shapes.
func TensorsErr(a, b [][]float64) float64 {
	worst := 0.0
	for i := range b {
		var d, n float64
		for j := range b[i] {
			d += (a[i][j] - b[i][j]) * (a[i][j] - b[i][j])
			n += b[i][j] * b[i][j]
		}
		e := math.Sqrt(d)
		if n > 0 {
			e /= math.Sqrt(n)
		}
		worst = max(worst, e)
	}
	return worst
}
