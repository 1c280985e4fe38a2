package nsrnn

import (
	"bytes"
	"encoding"
	"encoding/binary"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
)

// Optimizer updates a model's parameters from their gradients. Its state
// (moments, step counts, the current learning rate) is saved in training
// checkpoints through MarshalBinary and UnmarshalBinary.
//
// A new optimizer is one type: Fit needs nothing else of it. One with
// state per parameter may also implement ParamChecker, which Fit calls
// before training. (On a GPU, SGD and Adam update the parameters on the
// device; another optimizer updates them on the host.)
type Optimizer interface {
	// Update applies one step to params given their gradients, one
	// slice of each parameter's size per parameter, in order (Fit checks
	// them; other shapes are a programmer error, on which the
	// optimizers of this package panic).
	Update(params []*Param, grads [][]float64)
	// LearningRate is the current learning rate; SetLearningRate changes
	// it (the schedule's decay).
	LearningRate() float64
	SetLearningRate(lr float64)
	// Name describes the optimizer and its settings, for the checkpoint's
	// check that a resumed run uses the same one.
	Name() string
	// MarshalBinary and UnmarshalBinary save and restore the state.
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// ParamChecker is an Optimizer whose state is made for parameters of
// given sizes: Fit calls CheckParams with the model's (those of its
// Params, in order) and refuses to train on an error.
type ParamChecker interface {
	CheckParams(sizes []int) error
}

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
	// initial is the learning rate it was made with.
	initial float64
}

// NewAdam returns an Adam optimizer for parameters of the given sizes
// (those of a model's Params; Fit refuses an optimizer made for other
// sizes). The learning rate should be positive and finite; as for NewSGD,
// it is not checked here but by Fit (and CheckLearningRate). It panics
// for a negative size.
func NewAdam(lr float64, sizes []int) *Adam {
	a := &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, initial: lr}
	a.M = make([][]float64, len(sizes))
	a.V = make([][]float64, len(sizes))
	for i, n := range sizes {
		a.M[i] = make([]float64, n)
		a.V[i] = make([]float64, n)
	}
	return a
}

// CheckParams returns an error unless a's state is for parameters of the
// given sizes and its settings are usable: β1 and β2 in [0, 1), ε
// positive and finite (ParamChecker).
func (a *Adam) CheckParams(sizes []int) error {
	if a == nil {
		return errors.New("nsrnn: a nil *Adam")
	}
	if !(a.Beta1 >= 0 && a.Beta1 < 1) || !(a.Beta2 >= 0 && a.Beta2 < 1) || !(a.Eps > 0) || math.IsInf(a.Eps, 0) {
		return fmt.Errorf("nsrnn: Adam with β1 %g, β2 %g, ε %g: want β1 and β2 in [0, 1) and ε positive and finite", a.Beta1, a.Beta2, a.Eps)
	}
	if len(a.M) != len(sizes) || len(a.V) != len(sizes) {
		return fmt.Errorf("nsrnn: the Adam optimizer is for %d parameters, the model has %d", len(a.M), len(sizes))
	}
	for i, n := range sizes {
		if len(a.M[i]) != n || len(a.V[i]) != n {
			return fmt.Errorf("nsrnn: the Adam optimizer's parameter %d has %d values, the model's %d", i, len(a.M[i]), n)
		}
	}
	return nil
}

// Update implements Optimizer.
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

// LearningRate implements Optimizer.
func (a *Adam) LearningRate() float64 { return a.LR }

// SetLearningRate implements Optimizer.
func (a *Adam) SetLearningRate(lr float64) { a.LR = lr }

// Name implements Optimizer.
func (a *Adam) Name() string {
	return fmt.Sprintf("adam(lr=%g, betas=%g,%g, eps=%g)", a.initial, a.Beta1, a.Beta2, a.Eps)
}

type adamState struct {
	LR, Beta1, Beta2, Eps float64
	Step                  int
	M, V                  [][]float64
}

// MarshalBinary implements Optimizer.
func (a *Adam) MarshalBinary() ([]byte, error) {
	var b bytes.Buffer
	b.Grow(len(adamMagic) + 44 + 16*len(a.M) + 16*totalLen(a.M))
	err := a.writeState(&b)
	return b.Bytes(), err
}

// The encoding of Adam's state, little-endian:
//
//	magic "nsrnn-adam\x00"
//	float64 LR, Beta1, Beta2, Eps; uint64 Step; uint32 parameters
//	per parameter: uint64 n, n float64 of M, n float64 of V
//
// Checkpoints written before it hold the gob encoding of an adamState,
// which UnmarshalBinary still reads.
const adamMagic = "nsrnn-adam\x00"

func totalLen(vs [][]float64) int {
	n := 0
	for _, v := range vs {
		n += len(v)
	}
	return n
}

// writeState writes the encoding of MarshalBinary to w in pieces of a
// bounded size (stateWriter).
func (a *Adam) writeState(w io.Writer) error {
	const chunk = 1 << 13
	buf := make([]byte, 0, 8*chunk)
	flush := func() error {
		_, err := w.Write(buf)
		buf = buf[:0]
		return err
	}
	f64 := func(v float64) { buf = binary.LittleEndian.AppendUint64(buf, math.Float64bits(v)) }
	buf = append(buf, adamMagic...)
	for _, v := range []float64{a.LR, a.Beta1, a.Beta2, a.Eps} {
		f64(v)
	}
	buf = binary.LittleEndian.AppendUint64(buf, uint64(a.Step))
	buf = binary.LittleEndian.AppendUint32(buf, uint32(len(a.M)))
	for i := range a.M {
		if len(a.V[i]) != len(a.M[i]) {
			return fmt.Errorf("nsrnn: Adam's moments of parameter %d have %d and %d values", i, len(a.M[i]), len(a.V[i]))
		}
		buf = binary.LittleEndian.AppendUint64(buf, uint64(len(a.M[i])))
		for _, vs := range [][]float64{a.M[i], a.V[i]} {
			for _, v := range vs {
				if len(buf)+8 > cap(buf) {
					if err := flush(); err != nil {
						return err
					}
				}
				f64(v)
			}
		}
	}
	return flush()
}

// decodeAdam decodes the encoding of writeState.
func decodeAdam(data []byte) (adamState, error) {
	var s adamState
	r := data[len(adamMagic):]
	if len(r) < 44 {
		return s, errors.New("truncated header")
	}
	f64 := func() float64 {
		v := math.Float64frombits(binary.LittleEndian.Uint64(r))
		r = r[8:]
		return v
	}
	s.LR, s.Beta1, s.Beta2, s.Eps = f64(), f64(), f64(), f64()
	step := binary.LittleEndian.Uint64(r)
	r = r[8:]
	if step > math.MaxInt32 {
		return s, fmt.Errorf("%d steps", step)
	}
	s.Step = int(step)
	n := int(binary.LittleEndian.Uint32(r))
	r = r[4:]
	if n > len(r)/8 {
		return s, fmt.Errorf("%d parameters in %d bytes", n, len(r))
	}
	s.M, s.V = make([][]float64, n), make([][]float64, n)
	for i := range n {
		if len(r) < 8 {
			return s, fmt.Errorf("truncated at parameter %d", i)
		}
		k := binary.LittleEndian.Uint64(r)
		r = r[8:]
		if k > uint64(len(r))/16 {
			return s, fmt.Errorf("parameter %d has %d values in %d bytes", i, k, len(r))
		}
		s.M[i], s.V[i] = make([]float64, k), make([]float64, k)
		for _, vs := range [][]float64{s.M[i], s.V[i]} {
			for j := range vs {
				vs[j] = f64()
			}
		}
	}
	if len(r) != 0 {
		return s, fmt.Errorf("%d bytes after the moments", len(r))
	}
	return s, nil
}

// UnmarshalBinary implements Optimizer; the state must fit the optimizer's
// parameter sizes. It reads the encoding of MarshalBinary and the gob
// encoding of older checkpoints.
func (a *Adam) UnmarshalBinary(data []byte) error {
	var s adamState
	if bytes.HasPrefix(data, []byte(adamMagic)) {
		var err error
		if s, err = decodeAdam(data); err != nil {
			return fmt.Errorf("nsrnn: Adam state: %w", err)
		}
	} else if err := gob.NewDecoder(bytes.NewReader(data)).Decode(&s); err != nil {
		return fmt.Errorf("nsrnn: Adam state: %w", err)
	}
	if len(s.M) != len(a.M) || len(s.V) != len(a.V) {
		return fmt.Errorf("nsrnn: Adam state for %d parameters, want %d", len(s.M), len(a.M))
	}
	for i := range s.M {
		// gob drops empty slices; restore their shape.
		if s.M[i] == nil {
			s.M[i] = make([]float64, len(a.M[i]))
		}
		if s.V[i] == nil {
			s.V[i] = make([]float64, len(a.V[i]))
		}
		if len(s.M[i]) != len(a.M[i]) || len(s.V[i]) != len(a.V[i]) {
			return fmt.Errorf("nsrnn: Adam state of parameter %d has the wrong size", i)
		}
	}
	if s.Beta1 != a.Beta1 || s.Beta2 != a.Beta2 || s.Eps != a.Eps {
		return fmt.Errorf("nsrnn: Adam state with betas %g, %g and eps %g, the optimizer has %g, %g and %g", s.Beta1, s.Beta2, s.Eps, a.Beta1, a.Beta2, a.Eps)
	}
	if s.Step < 0 {
		return fmt.Errorf("nsrnn: Adam state after %d steps", s.Step)
	}
	if err := CheckLearningRate(s.LR); err != nil {
		return fmt.Errorf("nsrnn: Adam state: %w", err)
	}
	for i := range s.M {
		for j, m := range s.M[i] {
			if v := s.V[i][j]; !finite(m) || !finite(v) || v < 0 {
				return fmt.Errorf("nsrnn: Adam state of parameter %d has moments %g and %g at %d (want finite, the second non-negative)", i, m, v, j)
			}
		}
	}
	a.LR, a.Beta1, a.Beta2, a.Eps, a.Step, a.M, a.V = s.LR, s.Beta1, s.Beta2, s.Eps, s.Step, s.M, s.V
	return nil
}

// SGD is plain stochastic gradient descent: x ← x − LR·g.
type SGD struct {
	LR      float64
	initial float64
}

// NewSGD returns SGD with learning rate lr, which should be positive and
// finite: NewSGD does not check it (it returns no error), but Fit refuses
// an optimizer whose rate is not, before any step. Check a rate that comes
// from a user with CheckLearningRate, or use NewSGDChecked.
func NewSGD(lr float64) *SGD { return &SGD{LR: lr, initial: lr} }

// NewSGDChecked is NewSGD with the learning rate checked by
// CheckLearningRate.
func NewSGDChecked(lr float64) (*SGD, error) {
	if err := CheckLearningRate(lr); err != nil {
		return nil, err
	}
	return NewSGD(lr), nil
}

// CheckLearningRate reports a learning rate that is not positive and
// finite (NaN, ±Inf, zero or negative) with an error; Fit refuses such a
// rate, whether it is TrainConfig.LR or the rate of TrainConfig.Optimizer.
func CheckLearningRate(lr float64) error {
	if !(lr > 0) || math.IsInf(lr, 0) {
		return fmt.Errorf("nsrnn: learning rate %g must be positive and finite", lr)
	}
	return nil
}

// Update implements Optimizer.
func (s *SGD) Update(params []*Param, grads [][]float64) {
	for i, p := range params {
		x, g := p.Data(), grads[i]
		for j := range x {
			x[j] -= s.LR * g[j]
		}
	}
}

// LearningRate implements Optimizer.
func (s *SGD) LearningRate() float64 { return s.LR }

// SetLearningRate implements Optimizer.
func (s *SGD) SetLearningRate(lr float64) { s.LR = lr }

// Name implements Optimizer.
func (s *SGD) Name() string { return fmt.Sprintf("sgd(lr=%g)", s.initial) }

// MarshalBinary implements Optimizer.
func (s *SGD) MarshalBinary() ([]byte, error) {
	return []byte(fmt.Sprintf("%016x", math.Float64bits(s.LR))), nil
}

// UnmarshalBinary implements Optimizer.
func (s *SGD) UnmarshalBinary(data []byte) error {
	// Sixteen hexadecimal digits, all of them (Sscanf stopped at the
	// first other byte and took a damaged state for a tiny rate).
	bits, err := strconv.ParseUint(string(data), 16, 64)
	if err != nil || len(data) != 16 {
		return fmt.Errorf("nsrnn: malformed SGD state")
	}
	lr := math.Float64frombits(bits)
	if err := CheckLearningRate(lr); err != nil {
		return fmt.Errorf("nsrnn: SGD state: %w", err)
	}
	s.LR = lr
	return nil
}

// scaledNorm is the L2 norm of grads taken relative to their largest
// magnitude, so that squares beyond the float64 range do not overflow:
// +Inf only for an infinite entry, NaN for a NaN one.
func scaledNorm(grads [][]float64) float64 {
	mx := 0.0
	for _, g := range grads {
		for _, v := range g {
			if math.IsNaN(v) {
				return math.NaN()
			}
			mx = max(mx, math.Abs(v))
		}
	}
	if mx == 0 || math.IsInf(mx, 1) {
		return mx
	}
	s := 0.0
	for _, g := range grads {
		for _, v := range g {
			s += (v / mx) * (v / mx)
		}
	}
	return mx * math.Sqrt(s)
}

// ClipGradNorm scales grads in place so that their global L2 norm is at
// most maxNorm (as PyTorch's clip_grad_norm_), and returns the norm before
// clipping. maxNorm ≤ 0 disables clipping, and so does a NaN maxNorm
// (which Fit refuses).
func ClipGradNorm(grads [][]float64, maxNorm float64) float64 {
	s := 0.0
	for _, g := range grads {
		for _, v := range g {
			s += v * v
		}
	}
	norm := math.Sqrt(s)
	if math.IsInf(s, 1) {
		norm = scaledNorm(grads) // the squares overflowed; the entries may be finite
	}
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
