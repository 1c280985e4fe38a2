package fused_test

import (
	"fmt"
	"hash"
	"math"
	"math/rand/v2"
	"testing"

	G "gorgonia.org/gorgonia"
	"gorgonia.org/tensor"

	"github.com/nsrnn/nsrnn/fused"
	"github.com/nsrnn/nsrnn/internal/gradcheck"
)

// affineTanh computes tanh(x W) for x of shape (b, n) and W of shape (n, m).
type affineTanh struct{ id int }

func (k affineTanh) Name() string          { return "affineTanh" }
func (k affineTanh) WriteHash(h hash.Hash) { fmt.Fprint(h, k.id) }
func (k affineTanh) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	if len(in) != 2 || in[0][1] != in[1][0] {
		return nil, fmt.Errorf("bad shapes %v", in)
	}
	return tensor.Shape{in[0][0], in[1][1]}, nil
}
func (k affineTanh) Forward(out []float64, in [][]float64) {
	x, w := in[0], in[1]
	b := shapeB
	n := len(x) / b
	m := len(w) / n
	for i := 0; i < b; i++ {
		for j := 0; j < m; j++ {
			s := 0.0
			for l := 0; l < n; l++ {
				s += x[i*n+l] * w[l*m+j]
			}
			out[i*m+j] = math.Tanh(s)
		}
	}
}
func (k affineTanh) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {
	x, w := in[0], in[1]
	b := shapeB
	n := len(x) / b
	m := len(w) / n
	for i := 0; i < b; i++ {
		for j := 0; j < m; j++ {
			g := gradOut[i*m+j] * (1 - out[i*m+j]*out[i*m+j])
			for l := 0; l < n; l++ {
				if gradIn[0] != nil {
					gradIn[0][i*n+l] += g * w[l*m+j]
				}
				gradIn[1][l*m+j] += g * x[i*n+l]
			}
		}
	}
}

// constX marks the first input as constant.
type constX struct{ affineTanh }

func (constX) Differentiable(i int) bool { return i != 0 }

const shapeB = 3

func randDense(rng *rand.Rand, shape ...int) *tensor.Dense {
	d := tensor.New(tensor.WithShape(shape...), tensor.Of(tensor.Float64))
	for i := range d.Float64s() {
		d.Float64s()[i] = rng.NormFloat64()
	}
	return d
}

func TestApplyGradients(t *testing.T) {
	for _, tc := range []struct {
		name  string
		k1    fused.Kernel
		k2    fused.Kernel
		check int // number of params checked
	}{
		{"both differentiable", affineTanh{1}, affineTanh{2}, 3},
		{"constant input", constX{affineTanh{1}}, affineTanh{2}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			g := G.NewGraph()
			x := G.NewMatrix(g, tensor.Float64, G.WithShape(shapeB, 4), G.WithName("x"), G.WithValue(randDense(rng, shapeB, 4)))
			w1 := G.NewMatrix(g, tensor.Float64, G.WithShape(4, 5), G.WithName("w1"), G.WithValue(randDense(rng, 4, 5)))
			w2 := G.NewMatrix(g, tensor.Float64, G.WithShape(5, 2), G.WithName("w2"), G.WithValue(randDense(rng, 5, 2)))
			h, err := fused.Apply(tc.k1, x, w1)
			if err != nil {
				t.Fatal(err)
			}
			y, err := fused.Apply(tc.k2, h, w2)
			if err != nil {
				t.Fatal(err)
			}
			loss := G.Must(G.Sum(G.Must(G.Square(y))))
			params := G.Nodes{x, w1, w2}[3-tc.check:]
			bad, worst, err := gradcheck.Check(g, loss, params, gradcheck.Options{Tol: 1e-7})
			if err != nil {
				t.Fatal(err)
			}
			for _, b := range bad {
				t.Error(b)
			}
			t.Logf("worst relative error %.3g", worst)
		})
	}
}

// TestDistinctKernelsDoNotMerge checks that two applications of kernels that
// differ only in their hash stay two nodes, and equal ones are merged.
func TestDistinctKernelsDoNotMerge(t *testing.T) {
	g := G.NewGraph()
	rng := rand.New(rand.NewPCG(3, 4))
	x := G.NewMatrix(g, tensor.Float64, G.WithShape(shapeB, 2), G.WithName("x"), G.WithValue(randDense(rng, shapeB, 2)))
	w := G.NewMatrix(g, tensor.Float64, G.WithShape(2, 2), G.WithName("w"), G.WithValue(randDense(rng, 2, 2)))
	a, _ := fused.Apply(affineTanh{1}, x, w)
	b, _ := fused.Apply(affineTanh{2}, x, w)
	c, _ := fused.Apply(affineTanh{1}, x, w)
	if a == b {
		t.Error("kernels with different hashes were merged")
	}
	if a != c {
		t.Error("identical kernels on identical inputs were not merged")
	}
}
