package nsrnn

import "math"

// Adam is the Adam optimizer (Kingma & Ba) with PyTorch's defaults
// β1 = 0.9, β2 = 0.999, ε = 1e-8 and bias correction.
type Adam struct {
	LR           float64
	Beta1, Beta2 float64
	Eps          float64
	// Step counts the updates made; M and V are the moment estimates, one
	// slice per parameter.
	Step int
	M, V [][]float64
}

// NewAdam returns an Adam optimizer for parameters of the given sizes.
func NewAdam(lr float64, sizes []int) *Adam {
	a := &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8}
	a.M = make([][]float64, len(sizes))
	a.V = make([][]float64, len(sizes))
	for i, n := range sizes {
		a.M[i] = make([]float64, n)
		a.V[i] = make([]float64, n)
	}
	return a
}

// Update applies one step to params given their gradients.
func (a *Adam) Update(params []*Param, grads [][]float64) {
	a.Step++
	c1 := 1 - math.Pow(a.Beta1, float64(a.Step))
	c2 := 1 - math.Pow(a.Beta2, float64(a.Step))
	for i, p := range params {
		x, g, m, v := p.Data(), grads[i], a.M[i], a.V[i]
		for j := range x {
			m[j] = a.Beta1*m[j] + (1-a.Beta1)*g[j]
			v[j] = a.Beta2*v[j] + (1-a.Beta2)*g[j]*g[j]
			x[j] -= a.LR * (m[j] / c1) / (math.Sqrt(v[j]/c2) + a.Eps)
		}
	}
}

// ClipGradNorm scales grads in place so that their global L2 norm is at
// most maxNorm (as PyTorch's clip_grad_norm_), and returns the norm before
// clipping. maxNorm ≤ 0 disables clipping.
func ClipGradNorm(grads [][]float64, maxNorm float64) float64 {
	s := 0.0
	for _, g := range grads {
		for _, v := range g {
			s += v * v
		}
	}
	norm := math.Sqrt(s)
	if maxNorm > 0 && norm > maxNorm {
		scale := maxNorm / (norm + 1e-6)
		for _, g := range grads {
			for j := range g {
				g[j] *= scale
			}
		}
	}
	return norm
}
