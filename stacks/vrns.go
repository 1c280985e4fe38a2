package stacks

import (
	"fmt"
	"hash"
	"math"

	"gorgonia.org/tensor"
)

// BottomVector selects the vector that the initial bottom symbol of a VRNS
// stack carries.
type BottomVector int

const (
	// LearnedBottom is σ(w_0) for a parameter w_0 of size m.
	LearnedBottom BottomVector = iota
	// ZeroBottom is the vector of zeros.
	ZeroBottom
	// OneBottom is the vector of ones.
	OneBottom
)

// String returns "learned", "zero" or "one".
func (b BottomVector) String() string {
	switch b {
	case LearnedBottom:
		return "learned"
	case ZeroBottom:
		return "zero"
	case OneBottom:
		return "one"
	}
	return fmt.Sprintf("BottomVector(%d)", int(b))
}

// Set parses "learned", "zero" or "one" (a command-line flag's value).
func (b *BottomVector) Set(s string) error {
	for _, v := range []BottomVector{LearnedBottom, ZeroBottom, OneBottom} {
		if v.String() == s {
			*b = v
			return nil
		}
	}
	return fmt.Errorf("%q: want learned, zero or one", s)
}

// Type names the flag's value type, "string".
func (BottomVector) Type() string { return "string" }

// VRNSConfig fixes the shape and variant of a vector nondeterministic
// stack: a shorthand for the NSConfig of NS (RNS with vectors).
type VRNSConfig struct {
	// States and Symbols are |Q| and |Γ|, both at least 1.
	States, Symbols int
	// Vector is m, the size of the stack's vectors, at least 1.
	Vector int
	// Bottom is the bottom-symbol behaviour.
	Bottom Bottom
	// Window is D for the memory-limited stack; 0 means unlimited.
	Window int
	// BottomVector is the vector of the initial bottom symbol.
	BottomVector BottomVector
}

// NS returns the configuration of the nondeterministic stack that the
// VRNS stack of c is: RNS (StateReading, unnormalized) with vectors of
// size c.Vector.
func (c VRNSConfig) NS() NSConfig {
	return NSConfig{States: c.States, Symbols: c.Symbols, StateReading: true, Bottom: c.Bottom, Window: c.Window,
		Vector: c.Vector, BottomVector: c.BottomVector}
}

// Validate reports an impossible configuration.
func (c VRNSConfig) Validate() error {
	if c.Bottom != Original && c.Bottom != Fixed {
		return fmt.Errorf("stacks: unknown bottom behaviour %d", c.Bottom)
	}
	if c.BottomVector < LearnedBottom || c.BottomVector > OneBottom {
		return fmt.Errorf("stacks: unknown bottom vector %d", c.BottomVector)
	}
	if c.States < 1 || c.Symbols < 1 || c.Vector < 1 {
		return fmt.Errorf("stacks: VRNS: need States, Symbols and Vector of at least 1, have %d, %d and %d", c.States, c.Symbols, c.Vector)
	}
	return c.NS().Validate()
}

// NumActions is the number of action scores per step,
// |Q||Γ|(2|Q||Γ|+|Q|), in the layout of the NS stack.
func (c VRNSConfig) NumActions() int { return c.NS().NumActions() }

// ReadingSize is |Q||Γ|m.
func (c VRNSConfig) ReadingSize() int { return c.NS().ReadingSize() }

// NumParams is the number of scalar parameters of a VRNS stack reading
// hidden states of size hidden: (hidden+1)·NumActions for the Actions
// layer, (hidden+1)·m for the vector layer, and m for a learned bottom
// vector.
func (c VRNSConfig) NumParams(hidden int) int { return c.NS().NumParams(hidden) }

// VRNS is the vector nondeterministic stack of DuSell & Chiang's ICLR 2023
// release (the stack of the VRNS-RNN) with its Actions layer.
//
// It is the RNS stack (unnormalized action weights, the same action
// layout and weights Δ[t], both bottom behaviours, unlimited and
// memory-limited) whose stack elements are (symbol, vector) pairs. From
// the controller's hidden state h_t,
//
//	log Δ[t] = W_a h_t + b_a          NumActions scores, as for RNS
//	v_t      = σ(W_v h_t + b_v)       the vector pushed at step t, size m
//
// and every push of step t pushes v_t with its symbol. A replace changes
// the symbol of the top element and keeps its vector: the vector belongs
// to the stack element, not to the symbol. A pop uncovers the element
// below with the vector it was pushed with. The initial bottom carries the
// bottom vector v_0 (BottomVector: σ(w_0) of a learned w_0, zeros or
// ones).
//
// The reading is the expected top vector per (state, top symbol):
//
//	r_t[(r·|Γ|+y)·m+j] = Σ_runs weight · [state r, top symbol y] · (top vector)_j / Σ_runs weight
//
// of size |Q||Γ|m; it reads all zeros when every run has weight zero. The
// authors compute it with a vector ζ[i→t][q,x→r,y] beside each γ entry,
//
//	ζ[t−1→t][q,x→r,y] = Δ[t][q,x→r,•y] · v_t
//	ζ[i→t][q,x→r,y]   = Σ_{s,z} ζ[i→t−1][q,x→s,z] Δ[t][s,z→r,y]
//	                  + Σ_{k=i+1}^{t−2} Σ_u ζ[i→k][q,x→u,y] γ′[k→t][u,y→r]
//	η[t][r,y] = Σ_i Σ_{q,x} α[i][q,x] ζ[i→t][q,x→r,y],   r_t = η[t] / Σ α[t]
//
// (in the pop term the vector comes from ζ[i→k], whose top y is the
// element that the pop uncovers). Since every run counted by γ[i→t] has
// on top the element pushed at step i+1, ζ[i→t] = v_{i+1} γ[i→t], and the
// stack computes η[t][r,y] = Σ_i v_{i+1} (α[i] γ[i→t])[r,y] from the terms
// of α[t]: the time and memory of the RNS stack, plus O(nm|Q||Γ|) per
// step.
//
// The bottom vector. With the Original behaviour the initial bottom is
// never on top after step 1, so v_0 appears only in r_0 = v_0 at (state
// 0, symbol 0). With Fixed, the initial bottom is the element of the row
// i = −1 (ζ[−1→0] = v_0 at (0,0)→(0,0)): replaced it keeps v_0, and
// uncovered by pops v_0 is on top again. In the memory-limited stack that
// row counts as an ordinary row, kept while t+1 ≤ D. A learned w_0 gets
// its gradient through r_0 (Initial is then a node whose backward pass adds
// it into the binding) and, with Fixed, through the dynamic program.
//
// Numbers. The dynamic program stores each block of γ as a scalar log
// shift and mantissas, so that unnormalized weights beyond the
// floating-point range stay finite; it is exact up to rounding while the
// entries of a block stay within about 700 nats of its largest one
// (entries further below are flushed to zero). With action log-weights of
// ±50 over 60 steps it reads what the RNS stack reads (m = 1, vectors of
// ones) to 1e-11.
//
// The memory-limited stack carries the last D−1 columns of γ, the last D
// entries of α, the vectors of their elements and the last reading (see
// the package documentation, "Carrying state"); the unlimited one cannot
// carry its state.
//
// VRNS is not a layer of its own: it is the nondeterministic stack with a
// vector payload (an NS whose NSConfig.Vector is m), under the name and
// configuration of the authors' release. It has the NS layer's methods;
// Config returns its VRNSConfig (and NS.Config the NSConfig).
type VRNS struct {
	NS
	vcfg VRNSConfig
}

// NewVRNS returns a vector nondeterministic stack whose actions and
// pushed vectors are computed from hidden states of size hidden: the NS
// layer of NewNS with cfg.NS(). Its parameters are named name+".W_a",
// ".b_a" (the Actions layer, NumActions × hidden), ".W_v", ".b_v" (the
// vector layer, m × hidden) and, for a learned bottom vector, ".w_0"
// (size m).
func NewVRNS(name string, hidden int, cfg VRNSConfig) (*VRNS, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ns, err := NewNS(name, hidden, cfg.NS())
	if err != nil {
		return nil, err
	}
	return &VRNS{NS: *ns, vcfg: cfg}, nil
}

// Config returns the stack's configuration.
func (s *VRNS) Config() VRNSConfig { return s.vcfg }

// Replica implements Replicator: a VRNS sharing the parameters of s, with
// its own scratch tapes.
func (s *VRNS) Replica(threads int) Layer {
	return &VRNS{NS: *s.NS.Replica(threads).(*NS), vcfg: s.vcfg}
}

// bottomVector writes v_0 into dst, from w_0 (the value of its node) for
// a learned bottom vector.
func (s *NS) bottomVector(dst, w0 []float64) {
	switch s.cfg.BottomVector {
	case LearnedBottom:
		for j, x := range w0[:len(dst)] {
			dst[j] = sigmoid(x)
		}
	case ZeroBottom:
		clear(dst)
	case OneBottom:
		for j := range dst {
			dst[j] = 1
		}
	}
}

func sigmoid(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// vrnsStateMagic starts the encoding of a vector stack's carried state,
// followed by its bottom vector (uint64) and the common encoding of
// carried.go.
const vrnsStateMagic = "stacks-vrns-state\x00"

// addSigmoidGrad adds g ⊙ σ′ into dst, for y = σ(x): σ′ = y(1−y).
func addSigmoidGrad(dst, g, y []float64) {
	for j, v := range y {
		dst[j] += g[j] * v * (1 - v)
	}
}

// vrnsInitial is the fused kernel of r_0 for a learned bottom vector: v_0
// = σ(w_0) at (state 0, symbol 0) for each batch element, or the carried
// reading. Its inputs are w_0 (not differentiated by gorgonia: the
// backward pass adds its gradient into the binding) and the binding's
// anchor.
type vrnsInitial struct {
	in *nsInstance
	// fromStart: the latest forward pass computed r_0 from w_0.
	fromStart bool
}

func (k *vrnsInitial) Name() string { return "VRNS_r0" }

func (k *vrnsInitial) WriteHash(h hash.Hash) {
	fmt.Fprintf(h, "vrns.r0:%d:%+v", k.in.id, k.in.s.cfg)
}

// Differentiable implements fused.Constant: the anchor.
func (k *vrnsInitial) Differentiable(i int) bool { return i == 1 }

func (k *vrnsInitial) OutputShape(in []tensor.Shape) (tensor.Shape, error) {
	m := k.in.s.cfg.Vector
	if len(in) != 2 || !in[0].Eq(tensor.Shape{m}) || !in[1].IsScalar() {
		return nil, fmt.Errorf("want w_0 of shape (%d) and the anchor, got %v", m, in)
	}
	return tensor.Shape{k.in.batch, k.in.s.ReadingSize()}, nil
}

func (k *vrnsInitial) Forward(out []float64, in [][]float64) {
	inst := k.in
	k.fromStart = inst.start == nil
	if !k.fromStart {
		copy(out, inst.start.reading)
		return
	}
	rs := inst.s.ReadingSize()
	v0 := make([]float64, inst.s.cfg.Vector)
	inst.s.bottomVector(v0, in[0])
	for b := 0; b < inst.batch; b++ {
		inst.s.cfg.kernel().InitialVectorReading(out[b*rs:(b+1)*rs], v0)
	}
}

func (k *vrnsInitial) Backward(gradIn [][]float64, gradOut, out []float64, in [][]float64) {
	if !k.fromStart {
		return
	}
	inst := k.in
	rs, m := inst.s.ReadingSize(), inst.s.cfg.Vector
	g := make([]float64, m)
	for b := 0; b < inst.batch; b++ {
		for j, v := range gradOut[b*rs : b*rs+m] {
			g[j] += v
		}
	}
	addSigmoidGrad(inst.pb.Grad(inst.s.w0), g, out[:m])
}
