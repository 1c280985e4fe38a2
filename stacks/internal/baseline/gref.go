// Package baseline has the slice kernels of the baseline stacks of the
// paper's appendix A: the stratification stack of Grefenstette et al.
// (2015) and the superposition stack of Joulin & Mikolov (2015). Each is a
// tape for a batch of stacks that records the forward steps and runs the
// backward steps in reverse order, keeping the adjoints that flow from a
// step to earlier ones.
//
// Protocol for one pass: Begin, Forward(1 … T) in order, then Backward for
// any suffix of those steps in decreasing order (Backward(t) needs the
// adjoints left by Backward(t+1) when that ran in this pass; when it did
// not, they are zero).
package baseline

// Gref is the tape of a batch of stratification stacks.
//
// Forward step t, for each batch element, from the pop signal u_t, the
// push signal d_t and the pushed vector v_t (size m):
//
//	s_t[i] = max(0, s_{t−1}[i] − max(0, u_t − Σ_{j=i+1}^{t−1} s_{t−1}[j]))  (i < t)
//	s_t[t] = d_t
//	r_t = Σ_{i=1}^t min(s_t[i], max(0, 1 − Σ_{j=i+1}^t s_t[j])) · v_i
//
// Subgradients at the kinks: max(0, x) passes the gradient only when
// x > 0; min(a, b) passes it to a (the strength) when a ≤ b, else to b.
type Gref struct {
	batch, m, steps int
	v               []float64 // (steps, batch, m): v_t
	u, d            []float64 // (steps, batch)
	s               []float64 // s_t at batch·t(t−1)/2, (batch, t)
	adjV            []float64 // like v: ∂L/∂v_i from readings after i
	adjS            [2][]float64
	valid           []bool // valid[t]: adjS[t%2] holds ∂L/∂s_t
	scratch         []float64
}

// NewGref returns a tape for batch stacks of vectors of size m over at most
// steps steps.
func NewGref(batch, m, steps int) *Gref {
	g := &Gref{}
	g.Resize(batch, m, steps)
	return g
}

// Resize makes room for at least the given number of steps (reusing the
// buffers when they are big enough).
func (g *Gref) Resize(batch, m, steps int) {
	if batch == g.batch && m == g.m && steps <= g.steps {
		return
	}
	g.batch, g.m, g.steps = batch, m, steps
	g.v = make([]float64, steps*batch*m)
	g.adjV = make([]float64, steps*batch*m)
	g.u = make([]float64, steps*batch)
	g.d = make([]float64, steps*batch)
	g.s = make([]float64, batch*steps*(steps+1)/2)
	g.adjS = [2][]float64{make([]float64, batch*steps), make([]float64, batch*steps)}
	g.valid = make([]bool, steps+1)
	g.scratch = make([]float64, 2*steps)
}

// Steps is the number of steps the tape holds.
func (g *Gref) Steps() int { return g.steps }

// Strengths returns s_t of batch element b (a view, valid until the next
// pass).
func (g *Gref) Strengths(t, b int) []float64 {
	o := g.batch*t*(t-1)/2 + b*t
	return g.s[o : o+t]
}

// U, D and V return u_t and d_t (batch) and v_t (batch, m) as recorded by
// Forward (views).
func (g *Gref) U(t int) []float64 { return g.u[(t-1)*g.batch : t*g.batch] }

// D returns d_t; see U.
func (g *Gref) D(t int) []float64 { return g.d[(t-1)*g.batch : t*g.batch] }

// V returns v_t; see U.
func (g *Gref) V(t int) []float64 { return g.v[(t-1)*g.batch*g.m : t*g.batch*g.m] }

func (g *Gref) vec(i, b int) []float64 {
	o := ((i-1)*g.batch + b) * g.m
	return g.v[o : o+g.m]
}

func (g *Gref) adjVec(i, b int) []float64 {
	o := ((i-1)*g.batch + b) * g.m
	return g.adjV[o : o+g.m]
}

// Forward runs step t (1 ≤ t ≤ Steps) on u, d (batch) and v (batch, m),
// recording them, and writes the reading r_t (batch, m) into r.
func (g *Gref) Forward(t int, u, d, v, r []float64) {
	B, m := g.batch, g.m
	copy(g.U(t), u)
	copy(g.D(t), d)
	copy(g.V(t), v)
	clear(g.adjV[(t-1)*B*m : t*B*m])
	g.valid[t] = false
	for b := 0; b < B; b++ {
		sn := g.Strengths(t, b)
		if t > 1 {
			sp := g.Strengths(t-1, b)
			above := 0.0
			for i := t - 1; i >= 1; i-- {
				a := max(0, u[b]-above)
				sn[i-1] = max(0, sp[i-1]-a)
				above += sp[i-1]
			}
		}
		sn[t-1] = d[b]
		rb := r[b*m : (b+1)*m]
		clear(rb)
		c := 0.0
		for i := t; i >= 1; i-- {
			w := min(sn[i-1], max(0, 1-c))
			if w != 0 {
				for k, x := range g.vec(i, b) {
					rb[k] += w * x
				}
			}
			c += sn[i-1]
		}
	}
}

// Backward runs step t backward: given dr = ∂L/∂r_t (batch, m), it adds
// ∂L/∂u_t and ∂L/∂d_t into du, dd (batch) and ∂L/∂v_t into dv (batch, m),
// counting every later reading that the earlier Backward calls of this
// pass accounted for.
func (g *Gref) Backward(t int, dr, du, dd, dv []float64) {
	B, m := g.batch, g.m
	dsOld := g.adjS[(t-1)%2]
	dsNew := g.adjS[t%2]
	for b := 0; b < B; b++ {
		sn := g.Strengths(t, b)
		ds := g.scratch[:t]
		if g.valid[t] {
			copy(ds, dsNew[b*g.steps:b*g.steps+t])
		} else {
			clear(ds)
		}
		dc := g.scratch[t : 2*t] // dc[i−1] = ∂L/∂(Σ_{j>i} s_t[j]) from the reading
		drb := dr[b*m : (b+1)*m]
		c := 0.0
		for i := t; i >= 1; i-- {
			lim := max(0, 1-c)
			w := min(sn[i-1], lim)
			var dvi []float64
			if i == t {
				dvi = dv[b*m : (b+1)*m]
				for k, x := range g.adjVec(t, b) {
					dvi[k] += x
				}
			} else {
				dvi = g.adjVec(i, b)
			}
			dw := 0.0
			for k, x := range g.vec(i, b) {
				dw += drb[k] * x
				dvi[k] += w * drb[k]
			}
			dc[i-1] = 0
			if sn[i-1] <= lim {
				ds[i-1] += dw
			} else if 1-c > 0 {
				dc[i-1] = -dw
			}
			c += sn[i-1]
		}
		// s_t[j] appears in the sums of every i < j.
		acc := 0.0
		for j := 1; j <= t; j++ {
			ds[j-1] += acc
			acc += dc[j-1]
		}
		dd[b] += ds[t-1]
		if t == 1 {
			continue
		}
		// Back through the update of s_{t−1}.
		sp := g.Strengths(t-1, b)
		dsp := dsOld[b*g.steps : b*g.steps+t-1]
		clear(dsp)
		dab := dc[:t-1] // ∂L/∂(Σ_{j=i+1}^{t−1} s_{t−1}[j]) per i
		u := g.U(t)[b]
		above := 0.0
		for i := t - 1; i >= 1; i-- {
			a := max(0, u-above)
			dab[i-1] = 0
			if sp[i-1]-a > 0 {
				dsp[i-1] += ds[i-1]
				if u-above > 0 {
					du[b] -= ds[i-1]
					dab[i-1] = ds[i-1]
				}
			}
			above += sp[i-1]
		}
		acc = 0
		for j := 1; j <= t-1; j++ {
			dsp[j-1] += acc
			acc += dab[j-1]
		}
	}
	if t > 1 {
		g.valid[t-1] = true
	}
}
