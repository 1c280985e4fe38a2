package baseline

// JM is the tape of a batch of superposition stacks.
//
// Forward step t, for each batch element, from the action probabilities
// (push, no-op, pop) = (p, n, q) and the pushed vector v_t (size m), with
// cell 1 the top:
//
//	s_t[1] = p·v_t + n·s_{t−1}[1] + q·s_{t−1}[2]
//	s_t[i] = p·s_{t−1}[i−1] + n·s_{t−1}[i] + q·s_{t−1}[i+1]   (i > 1)
//	r_t = s_t[1]
//
// The height of s_t is L_t = min(L_{t−1}+1, Depth) for Depth the depth
// limit (cells below it are discarded; 0 means none) and L_0 the height of
// the initial stack; cells beyond the height are zero. When Begin is asked
// to trim, L_t is further capped at T−t+1 for T the number of steps of the
// pass: deeper cells cannot reach the top by step T, so dropping them
// changes no reading r_1 … r_T (but the final stack is then not whole).
type JM struct {
	batch, m, depth int
	steps           int
	height          []int // L_t, t = 0 … steps
	off             []int // offset of s_t in s: (batch, L_t, m)
	s               []float64
	a               []float64 // (steps, batch, 3)
	v               []float64 // (steps, batch, m)
	adj             [2][]float64
	valid           []bool // valid[t]: adj[t%2] holds ∂L/∂s_t
	cap             int    // largest height
}

// NewJM returns a tape for batch stacks of vectors of size m with the
// given depth limit (0: none).
func NewJM(batch, m, depth int) *JM {
	return &JM{batch: batch, m: m, depth: depth}
}

// Begin lays the tape out for a pass of at most steps steps, starting from
// the stack initial (batch, L_0, m) with L_0 = len(initial)/(batch·m)
// (nil: empty), no deeper than the depth limit. With trim, cells that
// cannot reach the top by step steps are dropped.
func (j *JM) Begin(steps int, initial []float64, trim bool) {
	B, m := j.batch, j.m
	l0 := 0
	if B*m > 0 {
		l0 = len(initial) / (B * m)
	}
	j.steps = steps
	j.height = resizeInts(j.height, steps+1)
	j.off = resizeInts(j.off, steps+2)
	j.height[0] = l0
	j.off[0] = 0
	j.cap = l0
	for t := 1; t <= steps; t++ {
		h := j.height[t-1] + 1
		if trim {
			h = min(h, steps-t+1)
		}
		if j.depth > 0 {
			h = min(h, j.depth)
		}
		j.height[t] = h
		j.cap = max(j.cap, h)
	}
	for t := 0; t <= steps; t++ {
		j.off[t+1] = j.off[t] + B*j.height[t]*m
	}
	j.s = resize(j.s, j.off[steps+1])
	copy(j.s, initial)
	j.a = resize(j.a, steps*B*3)
	j.v = resize(j.v, steps*B*m)
	for k := range j.adj {
		j.adj[k] = resize(j.adj[k], B*j.cap*m)
	}
	j.valid = resizeBools(j.valid, steps+1)
}

func resize(x []float64, n int) []float64 {
	if cap(x) < n {
		return make([]float64, n)
	}
	return x[:n]
}

func resizeInts(x []int, n int) []int {
	if cap(x) < n {
		return make([]int, n)
	}
	return x[:n]
}

func resizeBools(x []bool, n int) []bool {
	if cap(x) < n {
		return make([]bool, n)
	}
	return x[:n]
}

// Steps is the number of steps of the pass laid out by Begin.
func (j *JM) Steps() int { return j.steps }

// Words is the number of float64 values of the pass laid out by Begin:
// the stacks s_0 … s_steps and the two gradients of the largest height
// (not the recorded actions and pushed vectors, which a graph's own
// tensors match).
func (j *JM) Words() int { return len(j.s) + len(j.adj[0]) + len(j.adj[1]) }

// Height returns L_t.
func (j *JM) Height(t int) int { return j.height[t] }

// Stack returns s_t of batch element b, (L_t, m) row-major (a view).
func (j *JM) Stack(t, b int) []float64 {
	n := j.height[t] * j.m
	o := j.off[t] + b*n
	return j.s[o : o+n]
}

// Actions returns the recorded (batch, 3) actions of step t (a view).
func (j *JM) Actions(t int) []float64 { return j.a[(t-1)*j.batch*3 : t*j.batch*3] }

// V returns the recorded (batch, m) pushed vectors of step t (a view).
func (j *JM) V(t int) []float64 { return j.v[(t-1)*j.batch*j.m : t*j.batch*j.m] }

// Forward runs step t on the actions a (batch, 3: push, no-op, pop) and
// the pushed vectors v (batch, m), recording them, and writes the reading
// r_t (batch, m) into r.
func (j *JM) Forward(t int, a, v, r []float64) {
	B, m := j.batch, j.m
	copy(j.Actions(t), a)
	copy(j.V(t), v)
	j.valid[t] = false
	lo, ln := j.height[t-1], j.height[t]
	for b := 0; b < B; b++ {
		p, n, q := a[3*b], a[3*b+1], a[3*b+2]
		old, nw := j.Stack(t-1, b), j.Stack(t, b)
		vb := v[b*m : (b+1)*m]
		for i := 1; i <= ln; i++ {
			cell := nw[(i-1)*m : i*m]
			// push: old[i−1] (old[0] = v); no-op: old[i]; pop: old[i+1].
			var up []float64
			if i == 1 {
				up = vb
			} else if i-1 <= lo {
				up = old[(i-2)*m : (i-1)*m]
			}
			for k := range cell {
				cell[k] = 0
			}
			for k, x := range up {
				cell[k] = p * x
			}
			if i <= lo {
				for k, x := range old[(i-1)*m : i*m] {
					cell[k] += n * x
				}
			}
			if i+1 <= lo {
				for k, x := range old[i*m : (i+1)*m] {
					cell[k] += q * x
				}
			}
		}
		rb := r[b*m : (b+1)*m]
		if ln > 0 {
			copy(rb, nw[:m])
		} else {
			clear(rb)
		}
	}
}

// Backward runs step t backward: given dr = ∂L/∂r_t (batch, m), it adds
// ∂L/∂a_t into da (batch, 3) and ∂L/∂v_t into dv (batch, m), counting the
// later readings that the earlier Backward calls of this pass accounted
// for.
func (j *JM) Backward(t int, dr, da, dv []float64) {
	B, m := j.batch, j.m
	lo, ln := j.height[t-1], j.height[t]
	a := j.Actions(t)
	dNew, dOld := j.adj[t%2], j.adj[(t-1)%2]
	for b := 0; b < B; b++ {
		p, n, q := a[3*b], a[3*b+1], a[3*b+2]
		old := j.Stack(t-1, b)
		vb := j.v[((t-1)*B+b)*m : ((t-1)*B+b+1)*m]
		dn := dNew[b*ln*m : (b+1)*ln*m]
		if !j.valid[t] {
			clear(dn)
		}
		if ln > 0 {
			for k, x := range dr[b*m : (b+1)*m] {
				dn[k] += x
			}
		}
		do := dOld[b*lo*m : (b+1)*lo*m]
		clear(do)
		var dp, dno, dq float64
		dvb := dv[b*m : (b+1)*m]
		for i := 1; i <= ln; i++ {
			dc := dn[(i-1)*m : i*m]
			if i == 1 {
				for k, x := range dc {
					dp += x * vb[k]
					dvb[k] += p * x
				}
			} else if i-1 <= lo {
				up, dup := old[(i-2)*m:(i-1)*m], do[(i-2)*m:(i-1)*m]
				for k, x := range dc {
					dp += x * up[k]
					dup[k] += p * x
				}
			}
			if i <= lo {
				c, dcc := old[(i-1)*m:i*m], do[(i-1)*m:i*m]
				for k, x := range dc {
					dno += x * c[k]
					dcc[k] += n * x
				}
			}
			if i+1 <= lo {
				c, dcc := old[i*m:(i+1)*m], do[i*m:(i+1)*m]
				for k, x := range dc {
					dq += x * c[k]
					dcc[k] += q * x
				}
			}
		}
		da[3*b] += dp
		da[3*b+1] += dno
		da[3*b+2] += dq
	}
	j.valid[t-1] = true
}
