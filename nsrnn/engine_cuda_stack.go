package nsrnn

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/nsrnn/nsrnn/internal/cuda"
	"github.com/nsrnn/nsrnn/stacks"
)

// cudaStack is a stack's implementation on the GPU, inside the engine's
// step-by-step pass: the controller's layer 0 reads r_{t−1} at step t, and
// the stack is updated from the top layer's h_t after steps 1 … S.
type cudaStack interface {
	// params is the number of the stack's parameters (in the order of
	// Params, after the LSTM's).
	params() int
	// prepare sizes the stack's buffers for a pass of S stack steps from
	// the carried state st (nil: the initial stack); onDevice says that st
	// is the one the latest pass saved, whose copy the device may keep.
	prepare(r *lstmRun, S int, st stacks.State, onDevice bool) error
	// shape is what besides the pass's sizes its kernels depend on (the
	// carried positions of a nondeterministic stack), for the graphs.
	shape() int
	// load sets s_0 from a carried state (nil: the empty stack); with
	// onDevice from the device's copy of it, which the latest save kept.
	load(r *lstmRun, st stacks.State, onDevice bool) error
	// reading returns r_t (B rows of m values) and its row stride.
	reading(t int) (cuda.Ptr, int)
	// readings returns r_0 … r_{n−1} as one matrix of n·B rows of m
	// values and its row stride (rows t·B + b).
	readings() (cuda.Ptr, int)
	// forward runs step t from h_t (B rows of H values).
	forward(r *lstmRun, t int, h cuda.Ptr) error
	// zeroAdjoint starts a backward pass.
	zeroAdjoint(r *lstmRun) error
	// backward runs step t backward: dr is ∂L/∂r_t (0: none), h the
	// step's h_t; ∂L/∂h_t is added into dh.
	backward(r *lstmRun, t int, dr, h, dh cuda.Ptr) error
	// weightGrads writes the gradients of the stack's parameters, from
	// h_1 … h_S (S·B rows of H values).
	weightGrads(r *lstmRun, hs cuda.Ptr, G func(int) cuda.Ptr, first int) error
	// save returns s_S as a carried state.
	save(r *lstmRun) (stacks.State, error)
}

// newCUDAStack returns the GPU implementation of the model's stack.
func (e *cudaEngine) newCUDAStack() (cudaStack, error) {
	switch s := e.m.stack.(type) {
	case *stacks.JM:
		return &cudaJM{e: e, s: s}, nil
	case *stacks.Gref:
		return &cudaGref{e: e, s: s}, nil
	case *stacks.NS, *stacks.VRNS:
		ns := nsLayer(s)
		if ns.Config().Vector > 0 {
			return newCUDAVRNS(e, ns), nil
		}
		return &cudaNS{e: e, s: ns, cfg: ns.Config()}, nil
	}
	return nil, fmt.Errorf("nsrnn: model kind %s: %w", e.m.cfg.Kind, ErrNoDeviceKernel)
}

// cudaJM is the superposition stack on the GPU.
type cudaJM struct {
	e *cudaEngine
	s *stacks.JM
	// K is the number of cells of the pass, m their size, S its steps,
	// B its batch.
	K, m, S, B int
	// cells (S+1, B, K, m); act (S, B, 3) the actions; logits (B, 3);
	// v (S, B, m) the learned pushed vectors; adj two (B, K, m) adjoints;
	// dlog (S, B, 3) and dv (S, B, m) the gradients of the actions'
	// and vectors' pre-activations.
	cells, act, logits, v, dlog, dv cuda.Ptr
	adj                             [2]cuda.Ptr
	prec                            Precision
	// kept describes the state of the latest save, which the device keeps
	// in the buffer jm.saved (gen 0: none).
	kept struct {
		gen, B, K int
		prec      Precision
	}
}

func (j *cudaJM) params() int { return len(j.s.Params()) }

func (j *cudaJM) shape() int { return 0 }

func (j *cudaJM) prepare(r *lstmRun, S int, _ stacks.State, _ bool) error {
	e, B := j.e, r.B
	j.m, j.S, j.B, j.prec = j.s.ReadingSize(), S, B, r.prec
	j.K = j.s.DepthLimit()
	if j.K == 0 {
		// Without a depth limit a stack is at most S cells high after S
		// steps from the empty stack.
		j.K = max(S, 1)
	}
	es := elem(r.prec)
	cell := B * j.K * j.m * es
	var err error
	get := func(name string, bytes int) cuda.Ptr {
		if err != nil {
			return 0
		}
		var p cuda.Ptr
		p, err = e.buf("jm."+name, bytes)
		return p
	}
	j.cells = get("cells", (S+1)*cell)
	j.act = get("act", S*B*3*es)
	j.logits = get("logits", B*3*es)
	if !j.s.PushHidden() {
		j.v = get("v", S*B*j.m*es)
	}
	if r.grad {
		j.adj[0] = get("adj0", cell)
		j.adj[1] = get("adj1", cell)
		j.dlog = get("dlog", S*B*3*es)
		j.dv = get("dv", S*B*j.m*es)
	}
	return err
}

func (j *cudaJM) load(r *lstmRun, st stacks.State, onDevice bool) error {
	e := j.e
	cell := r.B * j.K * j.m
	if st == nil {
		return e.ctx.Zero(j.cells, cell*elem(r.prec))
	}
	if onDevice && keeps(j, st) && j.kept.B == r.B && j.kept.K == j.K && j.kept.prec == r.prec {
		return e.ctx.Copy(j.cells, e.ws["jm.saved"].p, cell*elem(r.prec))
	}
	data, err := st.MarshalBinary()
	if err != nil {
		return err
	}
	if len(data) != 8+8*cell || binary.LittleEndian.Uint64(data) != uint64(r.B) {
		return fmt.Errorf("nsrnn: a JM state of %d bytes for a stream of %d stacks of %d cells of %d", len(data), r.B, j.K, j.m)
	}
	vals := make([]float64, cell)
	for i := range vals {
		vals[i] = math.Float64frombits(binary.LittleEndian.Uint64(data[8+8*i:]))
	}
	return e.uploadReal(r.prec, j.cells, vals)
}

// save keeps s_S on the device (the buffer jm.saved) and returns it as a
// state that is copied to the host only when the host needs it
// (deviceStackState).
func (j *cudaJM) save(r *lstmRun) (stacks.State, error) {
	e := j.e
	cell := r.B * j.K * j.m
	es := elem(r.prec)
	j.kept.gen++
	saved, err := e.buf("jm.saved", cell*es)
	if err != nil {
		j.kept.B = 0
		return nil, err
	}
	if err := e.ctx.Copy(saved, j.cells.Offset(j.S*cell*es), cell*es); err != nil {
		j.kept.B = 0
		return nil, err
	}
	j.kept.B, j.kept.K, j.kept.prec = r.B, j.K, r.prec
	return &deviceStackState{k: j, gen: j.kept.gen, batch: r.B}, nil
}

// keptGen implements stateKeeper.
func (j *cudaJM) keptGen() int {
	if j.kept.B == 0 {
		return 0
	}
	return j.kept.gen
}

// fetch implements stateKeeper: the kept state as the JM stack's state.
func (j *cudaJM) fetch() (stacks.State, error) {
	cell := j.kept.B * j.kept.K * j.m
	vals, err := j.e.download(j.kept.prec, j.e.ws["jm.saved"].p, cell)
	if err != nil {
		return nil, err
	}
	data := binary.LittleEndian.AppendUint64(make([]byte, 0, 8+8*cell), uint64(j.kept.B))
	for _, v := range vals {
		data = binary.LittleEndian.AppendUint64(data, math.Float64bits(v))
	}
	return j.s.UnmarshalState(data)
}

func (j *cudaJM) reading(t int) (cuda.Ptr, int) {
	return j.cells.Offset(t * j.cellBytes()), j.K * j.m
}

func (j *cudaJM) readings() (cuda.Ptr, int) { return j.cells, j.K * j.m }

// cellBytes is the size of one s_t.
func (j *cudaJM) cellBytes() int { return j.B * j.K * j.m * elem(j.prec) }

// stackParams returns the indices of W_a, b_a, W_v and b_v (−1 for
// pushed hidden states).
func (j *cudaJM) stackParams(first int) (wa, ba, wv, bv int) {
	if j.s.PushHidden() {
		return first, first + 1, -1, -1
	}
	return first, first + 1, first + 2, first + 3
}

func (j *cudaJM) forward(r *lstmRun, t int, h cuda.Ptr) error {
	e, p, B, H := j.e, r.prec, r.B, j.e.m.cfg.Hidden
	es := elem(p)
	wa, ba, wv, bv := j.stackParams(e.stackFirst())
	W := e.working
	act := j.act.Offset((t - 1) * B * 3 * es)
	if err := e.gemm(p, false, true, B, 3, H, h, H, W(wa), H, 0, j.logits, 3); err != nil {
		return err
	}
	v, ldv, learned := h, H, 0
	var bias cuda.Ptr
	if wv >= 0 {
		v, ldv, learned, bias = j.v.Offset((t-1)*B*j.m*es), j.m, 1, W(bv)
		if err := e.gemm(p, false, true, B, j.m, H, h, H, W(wv), H, 0, v, j.m); err != nil {
			return err
		}
	}
	if err := e.launch(p, "jm_act", B*max(j.m, 3), act, j.logits, W(ba), v, bias, B, j.m, learned); err != nil {
		return err
	}
	old, _ := j.reading(t - 1)
	nw, _ := j.reading(t)
	return e.launch(p, "jm_step", B*j.K*j.m, nw, old, act, v, ldv, B, j.K, j.m)
}

func (j *cudaJM) zeroAdjoint(r *lstmRun) error {
	return j.e.ctx.Zero(j.adj[j.S%2], r.B*j.K*j.m*elem(r.prec))
}

func (j *cudaJM) backward(r *lstmRun, t int, dr, h, dh cuda.Ptr) error {
	e, p, B, H := j.e, r.prec, r.B, j.e.m.cfg.Hidden
	es := elem(p)
	wa, _, wv, _ := j.stackParams(e.stackFirst())
	W := e.working
	act := j.act.Offset((t - 1) * B * 3 * es)
	dnew, dold := j.adj[t%2], j.adj[(t-1)%2]
	dv := j.dv.Offset((t - 1) * B * j.m * es)
	dlog := j.dlog.Offset((t - 1) * B * 3 * es)
	v, ldv, learned := h, H, 0
	if wv >= 0 {
		v, ldv, learned = j.v.Offset((t-1)*B*j.m*es), j.m, 1
	}
	old, _ := j.reading(t - 1)
	if err := e.launch(p, "jm_back_cells", B*j.K*j.m, dold, dnew, dr, act, dv, B, j.K, j.m); err != nil {
		return err
	}
	if err := e.launchGrid(p, "jm_back_actions", uint32(B), dlog, dnew, dr, old, act, v, ldv, dv, j.K, j.m, learned); err != nil {
		return err
	}
	// ∂L/∂h_t: through the actions' layer, and the pushed vector's.
	if err := e.gemm(p, false, false, B, H, 3, dlog, 3, W(wa), H, 1, dh, H); err != nil {
		return err
	}
	if wv >= 0 {
		return e.gemm(p, false, false, B, H, j.m, dv, j.m, W(wv), H, 1, dh, H)
	}
	return e.launch(p, "add_rows", B*H, dh, H, dv, j.m, B, H)
}

func (j *cudaJM) weightGrads(r *lstmRun, hs cuda.Ptr, G func(int) cuda.Ptr, first int) error {
	e, p, H := j.e, r.prec, j.e.m.cfg.Hidden
	SB := j.S * r.B
	if SB == 0 {
		return nil
	}
	wa, ba, wv, bv := j.stackParams(first)
	if err := e.gemm(p, true, false, 3, H, SB, j.dlog, 3, hs, H, 0, G(wa), H); err != nil {
		return err
	}
	ones, err := e.ones(p, SB)
	if err != nil {
		return err
	}
	if err := e.gemm(p, false, false, 1, 3, SB, ones, SB, j.dlog, 3, 0, G(ba), 3); err != nil {
		return err
	}
	if wv < 0 {
		return nil
	}
	if err := e.gemm(p, true, false, j.m, H, SB, j.dv, j.m, hs, H, 0, G(wv), H); err != nil {
		return err
	}
	return e.gemm(p, false, false, 1, j.m, SB, ones, SB, j.dv, j.m, 0, G(bv), j.m)
}

// stackFirst is the index of the stack's first parameter.
func (e *cudaEngine) stackFirst() int {
	i := 4 * e.m.cfg.layers()
	if e.m.embed != nil {
		i++
	}
	return i
}

// runStack is the step-by-step pass of a model with a stack: at each step
// every layer in turn, layer 0 reading the stack's r_{t−1}, then the stack
// updated from the top layer's h_t; with r.grad the backward pass puts
// the gradients in e.grad.
func (e *cudaEngine) runStack(r *lstmRun, bf *lstmBufs, st cudaStack, S int) error {
	cfg := e.m.cfg
	p, T, B := r.prec, r.T, r.B
	H, L := cfg.Hidden, cfg.layers()
	W := e.working
	embedIdx, pi := -1, 0
	if e.m.embed != nil {
		embedIdx, pi = 0, 1
	}
	layerIdx := func(l int) (wih, whh, bih, bhh int) { i := pi + 4*l; return i, i + 1, i + 2, i + 3 }
	sf := e.stackFirst()
	whyIdx := sf + st.params()
	bhyIdx := whyIdx + 1
	TB := T * B
	in0 := cfg.inputSize()
	mR := e.m.stack.ReadingSize()
	ld0 := in0 + mR // row length of layer 0's W_ih

	// Every layer's biases and layer 0's input products for all steps.
	for l := 0; l < L && T > 0; l++ {
		_, _, bih, bhh := layerIdx(l)
		if err := e.launch(p, "bias_rows", TB*4*H, bf.z[l], W(bih), W(bhh), TB, 4*H); err != nil {
			return err
		}
	}
	if T > 0 {
		wih, _, _, _ := layerIdx(0)
		if embedIdx >= 0 {
			if err := e.launch(p, "embed_gather", TB*in0, bf.x0, W(embedIdx), bf.tok, TB, in0); err != nil {
				return err
			}
			if err := e.gemm(p, false, true, TB, 4*H, in0, bf.x0, in0, W(wih), ld0, 1, bf.z[0], 4*H); err != nil {
				return err
			}
		} else if err := e.launch(p, "onehot_add", TB*4*H, bf.z[0], W(wih), bf.tok, TB, 4*H, ld0); err != nil {
			return err
		}
	}
	if r.lead && T > 0 {
		// The update deferred from the previous chunk, from the carried
		// h_0 (row block 0).
		if err := st.forward(r, 1, bf.hs[L-1]); err != nil {
			return err
		}
	}
	pipe := e.newOutputPipe(r, bf, whyIdx, bhyIdx)
	if err := e.stackSteps(r, bf, st, S, layerIdx, pipe); err != nil {
		e.join() // the pass failed: leave none of its work beside the next
		return err
	}
	return e.endPass(r, bf, pipe, whyIdx, bhyIdx, func() error {
		return e.backwardStack(r, bf, st, S, layerIdx, whyIdx, bhyIdx, embedIdx)
	})
}

// stackSteps runs runStack's steps 1 … T, and after each the pipelined
// output layer's (pipe, where not nil).
func (e *cudaEngine) stackSteps(r *lstmRun, bf *lstmBufs, st cudaStack, S int, layerIdx func(int) (int, int, int, int), pipe *outputPipe) error {
	cfg := e.m.cfg
	p, T, B := r.prec, r.T, r.B
	H, L := cfg.Hidden, cfg.layers()
	es := elem(p)
	W := e.working
	in0 := cfg.inputSize()
	mR := e.m.stack.ReadingSize()
	ld0 := in0 + mR
	blk := B * H * es
	zblk := B * 4 * H * es
	for t := 1; t <= T; t++ {
		for l := 0; l < L; l++ {
			wih, whh, _, _ := layerIdx(l)
			zt := bf.z[l].Offset((t - 1) * zblk)
			// The step's input: layer 0 reads the stack, the others the
			// layer below.
			var in stepInput
			if l == 0 {
				read := t - 1
				if r.lead {
					read = t
				}
				rd, ldr := st.reading(read)
				in = stepInput{x: rd, ldx: ldr, w: W(wih).Offset(in0 * es), ldw: ld0, K: mR}
			} else {
				in = stepInput{x: bf.hs[l-1].Offset(t * blk), ldx: H, w: W(wih), ldw: H, K: H}
			}
			hs, cs := bf.hs[l], bf.cs[l]
			if err := e.lstmStep(p, zt, hs.Offset((t-1)*blk), W(whh), in, cs.Offset((t-1)*blk), cs.Offset(t*blk), bf.tc[l].Offset((t-1)*blk), hs.Offset(t*blk), B, H); err != nil {
				return err
			}
		}
		switch {
		case r.lead && t < T:
			if err := st.forward(r, t+1, bf.hs[L-1].Offset(t*blk)); err != nil {
				return err
			}
		case !r.lead && t <= S:
			if err := st.forward(r, t, bf.hs[L-1].Offset(t*blk)); err != nil {
				return err
			}
		}
		if pipe != nil {
			if err := pipe.step(t); err != nil {
				return err
			}
		}
	}
	return nil
}

// backwardStack is runStack's backward pass.
func (e *cudaEngine) backwardStack(r *lstmRun, bf *lstmBufs, st cudaStack, S int, layerIdx func(int) (int, int, int, int), whyIdx, bhyIdx, embedIdx int) error {
	cfg := e.m.cfg
	p, T, B := r.prec, r.T, r.B
	H, L := cfg.Hidden, cfg.layers()
	es := elem(p)
	W := e.working
	TB := T * B
	in0 := cfg.inputSize()
	mR := e.m.stack.ReadingSize()
	ld0 := in0 + mR
	blk := B * H * es
	zblk := B * 4 * H * es
	G, err := e.outputBackward(r, bf, whyIdx, bhyIdx)
	if err != nil || T == 0 {
		return err
	}
	if err := st.zeroAdjoint(r); err != nil {
		return err
	}
	dr, err := e.buf("dr", B*mR*es)
	if err != nil {
		return err
	}
	for l := 0; l < L; l++ {
		if err := e.ctx.Zero(bf.dc[l], blk); err != nil {
			return err
		}
	}
	// stackBack runs stack step k backward, the step from h_t (row block
	// t) whose reading fed layer 0 at token t+1 (none for t = T).
	stackBack := func(k, t int) error {
		var drt cuda.Ptr
		if t < T {
			wih, _, _, _ := layerIdx(0)
			drt = dr
			if err := e.readingGrad(p, B, mR, 4*H, bf.dz[0].Offset(t*zblk), W(wih).Offset(in0*es), ld0, dr); err != nil {
				return err
			}
		}
		return st.backward(r, k, drt, bf.hs[L-1].Offset(t*blk), bf.dhs[L-1].Offset(t*blk))
	}
	// With the fused backward steps, every layer's W_hh and (above layer
	// 0) W_ih transposed, once per pass.
	fb, fused := fusedSteps[e.fusedBack]
	whhT, wihT := make([]cuda.Ptr, L), make([]cuda.Ptr, L)
	for l := 0; fused && l < L; l++ {
		wih, whh, _, _ := layerIdx(l)
		var err error
		if whhT[l], err = e.transposed(p, fmt.Sprintf("lstm.whhT.%d", l), W(whh), 4*H, H, H); err != nil {
			return err
		}
		if l > 0 {
			if wihT[l], err = e.transposed(p, fmt.Sprintf("lstm.wihT.%d", l), W(wih), 4*H, H, H); err != nil {
				return err
			}
		}
	}
	for t := T; t >= 1; t-- {
		switch {
		case r.lead && t < T:
			// Step t+1 followed token t.
			if err := stackBack(t+1, t); err != nil {
				return err
			}
		case !r.lead && t <= S:
			if err := stackBack(t, t); err != nil {
				return err
			}
		}
		for l := L - 1; l >= 0; l-- {
			wih, whh, _, _ := layerIdx(l)
			off := (t - 1) * zblk
			if fused {
				// The gradient of h_t from the next step and from the
				// layer above is completed in the step's kernel.
				var next, up backInput
				if t < T {
					next = backInput{bf.dz[l].Offset(t * zblk), whhT[l]}
				}
				if l < L-1 {
					up = backInput{bf.dz[l+1].Offset(off), wihT[l+1]}
				}
				if err := e.lstmBackFused(p, fb.back, fb.rows, bf.z[l].Offset(off), bf.cs[l].Offset((t-1)*blk), bf.tc[l].Offset((t-1)*blk), bf.dhs[l].Offset(t*blk), next, up, bf.dc[l], bf.dz[l].Offset(off), B, H); err != nil {
					return err
				}
				continue
			}
			if err := e.launch(p, "lstm_cell_back", B*H, bf.z[l].Offset(off), bf.cs[l].Offset((t-1)*blk), bf.tc[l].Offset((t-1)*blk), bf.dhs[l].Offset(t*blk), bf.dc[l], bf.dz[l].Offset(off), B, H); err != nil {
				return err
			}
			if t > 1 {
				if err := e.gemm(p, false, false, B, H, 4*H, bf.dz[l].Offset(off), 4*H, W(whh), H, 1, bf.dhs[l].Offset((t-1)*blk), H); err != nil {
					return err
				}
			}
			if l > 0 {
				if err := e.gemm(p, false, false, B, H, 4*H, bf.dz[l].Offset(off), 4*H, W(wih), H, 1, bf.dhs[l-1].Offset(t*blk), H); err != nil {
					return err
				}
			}
		}
	}
	if r.lead {
		// Step 1, from the carried h_0: its gradient into h_0 (row block
		// 0) goes nowhere, the state being a constant.
		if err := stackBack(1, 0); err != nil {
			return err
		}
	}
	ones, err := e.ones(p, TB)
	if err != nil {
		return err
	}
	for l := 0; l < L; l++ {
		wih, whh, bih, bhh := layerIdx(l)
		dz := bf.dz[l]
		if err := e.gemm(p, true, false, 4*H, H, TB, dz, 4*H, bf.hs[l], H, 0, G(whh), H); err != nil {
			return err
		}
		if err := e.gemm(p, false, false, 1, 4*H, TB, ones, TB, dz, 4*H, 0, G(bih), 4*H); err != nil {
			return err
		}
		if err := e.ctx.Copy(G(bhh), G(bih), 4*H*es); err != nil {
			return err
		}
		if l > 0 {
			if err := e.gemm(p, true, false, 4*H, H, TB, dz, 4*H, bf.hs[l-1].Offset(blk), H, 0, G(wih), H); err != nil {
				return err
			}
			continue
		}
		// Layer 0: the stack's readings r_0 … r_{T−1} (with lead r_1 …
		// r_T), then the inputs.
		rd, ldr := st.readings()
		if r.lead {
			rd = rd.Offset(B * ldr * es)
		}
		if err := e.gemm(p, true, false, 4*H, mR, TB, dz, 4*H, rd, ldr, 0, G(wih).Offset(in0*es), ld0); err != nil {
			return err
		}
		if embedIdx >= 0 {
			if err := e.gemm(p, true, false, 4*H, in0, TB, dz, 4*H, bf.x0, in0, 0, G(wih), ld0); err != nil {
				return err
			}
			if err := e.gemm(p, false, false, TB, in0, 4*H, dz, 4*H, W(wih), ld0, 0, bf.dx0, in0); err != nil {
				return err
			}
			if err := e.launchGrid(p, "scatter_rows", uint32(TB), G(embedIdx), bf.dx0, bf.uniq, bf.uptr, bf.rows, in0, bf.nuniq); err != nil {
				return err
			}
		} else if err := e.launchGrid(p, "scatter_cols", uint32(TB), G(wih), dz, bf.uniq, bf.uptr, bf.rows, 4*H, ld0, bf.nuniq); err != nil {
			return err
		}
	}
	if ig, ok := st.(initialGrader); ok && !r.lead {
		// r_0 fed layer 0 at step 1.
		wih, _, _, _ := layerIdx(0)
		if err := e.readingGrad(p, B, mR, 4*H, bf.dz[0], W(wih).Offset(in0*es), ld0, dr); err != nil {
			return err
		}
		if err := ig.initialGrad(r, dr, G, e.stackFirst()); err != nil {
			return err
		}
	}
	hsFirst := bf.hs[L-1].Offset(blk) // h_1 … h_S
	if r.lead {
		hsFirst = bf.hs[L-1] // h_0 … h_{S−1}
	}
	return st.weightGrads(r, hsFirst, G, e.stackFirst())
}

// cudaGref is the stratification stack on the GPU (sentence mode only: its
// state grows with every step and is not carried).
type cudaGref struct {
	e *cudaEngine
	s *stacks.Gref
	// m is the vector size, S the pass's steps, B its batch.
	m, S, B int
	prec    Precision
	// str the strengths, v (S, B, m) the pushed vectors, u and d (S, B)
	// the signals, w (B, S) the reading weights, rd (S+1, B, m) the
	// readings r_0 … r_S; adjV, adjS (two of B·S), scratch (B·2S), du,
	// dd (S, B) and dv (S, B, m) the backward pass's.
	str, v, u, d, w, rd       cuda.Ptr
	adjV, scratch, du, dd, dv cuda.Ptr
	adjS                      [2]cuda.Ptr
}

func (g *cudaGref) params() int { return len(g.s.Params()) }

func (g *cudaGref) shape() int { return 0 }

func (g *cudaGref) prepare(r *lstmRun, S int, _ stacks.State, _ bool) error {
	e, B := g.e, r.B
	g.m, g.S, g.B, g.prec = g.s.ReadingSize(), S, B, r.prec
	es := elem(r.prec)
	T := max(S, 1)
	var err error
	get := func(name string, bytes int) cuda.Ptr {
		if err != nil {
			return 0
		}
		var p cuda.Ptr
		p, err = e.buf("gref."+name, bytes)
		return p
	}
	g.str = get("str", es*B*T*(T+1)/2)
	g.v = get("v", es*T*B*g.m)
	g.u = get("u", es*T*B)
	g.d = get("d", es*T*B)
	g.w = get("w", es*B*T)
	g.rd = get("rd", es*(S+1)*B*g.m)
	if r.grad {
		g.adjV = get("adjV", es*T*B*g.m)
		g.scratch = get("scratch", es*B*2*T)
		g.adjS[0] = get("adjS0", es*B*T)
		g.adjS[1] = get("adjS1", es*B*T)
		g.du = get("du", es*T*B)
		g.dd = get("dd", es*T*B)
		g.dv = get("dv", es*T*B*g.m)
	}
	return err
}

func (g *cudaGref) load(r *lstmRun, st stacks.State, onDevice bool) error {
	if st != nil {
		return fmt.Errorf("nsrnn: a Gref stack carries no state")
	}
	return g.e.ctx.Zero(g.rd, r.B*g.m*elem(r.prec))
}

func (g *cudaGref) save(*lstmRun) (stacks.State, error) {
	return nil, fmt.Errorf("nsrnn: a Gref stack carries no state")
}

func (g *cudaGref) reading(t int) (cuda.Ptr, int) {
	return g.rd.Offset(t * g.B * g.m * elem(g.prec)), g.m
}

func (g *cudaGref) readings() (cuda.Ptr, int) { return g.rd, g.m }

// slot returns step t's row block of a (S, B, n) buffer.
func (g *cudaGref) slot(p cuda.Ptr, t, n int) cuda.Ptr {
	return p.Offset((t - 1) * g.B * n * elem(g.prec))
}

func (g *cudaGref) forward(r *lstmRun, t int, h cuda.Ptr) error {
	e, p, B, H := g.e, r.prec, r.B, g.e.m.cfg.Hidden
	f := g.e.stackFirst()
	W := e.working
	u, d, v := g.slot(g.u, t, 1), g.slot(g.d, t, 1), g.slot(g.v, t, g.m)
	for _, x := range []struct {
		w   int
		out cuda.Ptr
		n   int
	}{{f, u, 1}, {f + 2, d, 1}, {f + 4, v, g.m}} {
		if err := e.gemm(p, false, true, B, x.n, H, h, H, W(x.w), H, 0, x.out, x.n); err != nil {
			return err
		}
	}
	if err := e.launch(p, "gref_act", B*g.m, u, W(f+1), d, W(f+3), v, W(f+5), B, g.m); err != nil {
		return err
	}
	T := max(g.S, 1)
	if err := e.launch(p, "gref_step", B, g.str, u, d, g.w, t, B, T); err != nil {
		return err
	}
	rt, _ := g.reading(t)
	return e.launch(p, "gref_read", B*g.m, rt, g.w, g.v, t, B, T, g.m)
}

func (g *cudaGref) zeroAdjoint(r *lstmRun) error {
	es := elem(r.prec)
	T := max(g.S, 1)
	if err := g.e.ctx.Zero(g.adjS[g.S%2], es*r.B*T); err != nil {
		return err
	}
	return g.e.ctx.Zero(g.adjV, es*T*r.B*g.m)
}

func (g *cudaGref) backward(r *lstmRun, t int, dr, h, dh cuda.Ptr) error {
	e, p, B, H := g.e, r.prec, r.B, g.e.m.cfg.Hidden
	f := g.e.stackFirst()
	W := e.working
	T := max(g.S, 1)
	du, dd, dv := g.slot(g.du, t, 1), g.slot(g.dd, t, 1), g.slot(g.dv, t, g.m)
	if err := e.launch(p, "gref_back", B, dr, g.adjS[t%2], g.adjS[(t-1)%2], g.str, g.slot(g.u, t, 1), g.slot(g.d, t, 1), g.v, g.adjV, du, dd, dv, g.scratch, t, B, T, g.m); err != nil {
		return err
	}
	for _, x := range []struct {
		w  int
		dx cuda.Ptr
		n  int
	}{{f, du, 1}, {f + 2, dd, 1}, {f + 4, dv, g.m}} {
		if err := e.gemm(p, false, false, B, H, x.n, x.dx, x.n, W(x.w), H, 1, dh, H); err != nil {
			return err
		}
	}
	return nil
}

func (g *cudaGref) weightGrads(r *lstmRun, hs cuda.Ptr, G func(int) cuda.Ptr, first int) error {
	e, p, H := g.e, r.prec, g.e.m.cfg.Hidden
	SB := g.S * r.B
	if SB == 0 {
		return nil
	}
	ones, err := e.ones(p, SB)
	if err != nil {
		return err
	}
	for _, x := range []struct {
		w  int
		dx cuda.Ptr
		n  int
	}{{first, g.du, 1}, {first + 2, g.dd, 1}, {first + 4, g.dv, g.m}} {
		if err := e.gemm(p, true, false, x.n, H, SB, x.dx, x.n, hs, H, 0, G(x.w), H); err != nil {
			return err
		}
		if err := e.gemm(p, false, false, 1, x.n, SB, ones, SB, x.dx, x.n, 0, G(x.w+1), x.n); err != nil {
			return err
		}
	}
	return nil
}

// cudaNS is a nondeterministic stack (NS, NS+S, NS+U, RNS; unlimited or
// memory-limited, either bottom) on the GPU, in sentence mode: the
// dynamic program in float64, as on the CPU, over positions.
type cudaNS struct {
	e   *cudaEngine
	s   *stacks.NS
	cfg stacks.NSConfig
	// Q and G are |Q| and |Γ|, m = |Q||Γ|, L the actions of a row, A =
	// m·L those of a step, R the reading's size; P0 the initial
	// positions (1, or 2 with the fixed bottom), NP the pass's, Dw the
	// distances kept; S the pass's steps and B its batch.
	Q, G, m, L, A, R int
	P0, NP, Dw, S, B int
	prec             Precision
	// lg, la and gp are γ, α and γ′ (see the kernels); logits (S, B, A)
	// the scores in the pass's precision, logw (S, B, A) the
	// log-weights; rd (S+1, B, R) the readings. dlg, dla, dgp (B, Dw, m,
	// |Q|), dlogw (B, A) and dlogits (S, B, A) are the backward pass's.
	lg, la, gp, logits, logw, rd  cuda.Ptr
	dlg, dla, dgp, dlogw, dlogits cuda.Ptr
	// carried is the state the pass starts from, in log space (nil: the
	// initial stack, or the kept one); fromKept says the pass starts from
	// kept, the state of the latest save, which the device holds in the
	// buffers ns.keepA and ns.keepG (np positions of Dw distances).
	carried  *stacks.NSLogState
	fromKept bool
	// vec is the vector payload of a VRNS stack (nil for NS and RNS).
	vec  *vrnsPart
	kept struct {
		np, Dw, B, gen int
		prec           Precision
	}
}

func (n *cudaNS) shape() int { return n.P0 }

func (n *cudaNS) params() int { return len(n.s.Params()) }

func (n *cudaNS) prepare(r *lstmRun, S int, st stacks.State, onDevice bool) error {
	B := r.B
	n.carried, n.fromKept = nil, false
	if onDevice && keeps(n, st) && n.kept.B == B && n.kept.prec == r.prec {
		// The device keeps the state that the latest pass saved.
		n.fromKept = true
	} else if st != nil {
		hs, err := hostStackState(st)
		if err != nil {
			return err
		}
		if n.carried, err = n.s.LogState(hs); err != nil {
			return fmt.Errorf("nsrnn: %w", err)
		}
	}
	return n.size(r, S)
}

// size sets the pass's sizes for S steps from n.carried (or the kept
// state, or the initial stack) and sizes its buffers.
func (n *cudaNS) size(r *lstmRun, S int) error {
	e, B := n.e, r.B
	c := n.cfg
	n.Q, n.G = c.States, c.Symbols
	n.m = n.Q * n.G
	n.L = 2*n.m + n.Q
	n.A = n.m * n.L
	n.R = c.ReadingSize()
	n.P0 = 1
	if c.Bottom == stacks.Fixed {
		n.P0 = 2
	}
	if n.carried != nil {
		n.P0 = n.carried.Positions
	}
	if n.fromKept {
		n.P0 = n.kept.np
	}
	n.S, n.B, n.prec = S, B, r.prec
	n.NP = n.P0 + S
	n.Dw = max(n.NP-1, 1)
	if c.Window > 0 {
		n.Dw = min(n.Dw, c.Window)
	}
	es := elem(r.prec)
	m, NP, Dw, Q := n.m, n.NP, n.Dw, n.Q
	var err error
	get := func(name string, bytes int) cuda.Ptr {
		if err != nil {
			return 0
		}
		var p cuda.Ptr
		p, err = e.buf("ns."+name, bytes)
		return p
	}
	n.lg = get("lg", 8*B*NP*Dw*m*m)
	n.la = get("la", 8*B*NP*m)
	n.gp = get("gp", 8*B*NP*Dw*m*Q)
	n.logits = get("logits", es*max(S, 1)*B*n.A)
	n.logw = get("logw", 8*max(S, 1)*B*n.A)
	n.rd = get("rd", es*(S+1)*B*n.R)
	if r.grad {
		n.dlg = get("dlg", 8*B*NP*Dw*m*m)
		n.dla = get("dla", 8*B*NP*m)
		n.dgp = get("dgp", 8*B*Dw*m*Q)
		n.dlogw = get("dlogw", 8*B*n.A)
		n.dlogits = get("dlogits", es*max(S, 1)*B*n.A)
	}
	if err == nil && n.vec != nil {
		err = n.prepareVec(r)
	}
	return err
}

func (n *cudaNS) load(r *lstmRun, st stacks.State, onDevice bool) error {
	e, B, m := n.e, r.B, n.m
	if n.fromKept {
		return n.loadKept(r)
	}
	if n.carried == nil {
		fixed := 0
		if n.P0 == 2 {
			fixed = 1
		}
		if err := e.launch(r.prec, "ns_init", B, n.lg, n.la, B, n.NP, n.Dw, m, fixed); err != nil {
			return err
		}
		if n.vec != nil {
			return n.loadVec(r)
		}
		// r_0: all the mass on state 0 and symbol 0.
		r0 := make([]float64, B*n.R)
		for b := 0; b < B; b++ {
			r0[b*n.R] = 1
		}
		return e.uploadReal(r.prec, n.rd, r0)
	}
	// The carried positions 0 … np−1: α, and the blocks (a, c) at
	// lg[c][c−a−1], through staging buffers.
	ls, np, mm := n.carried, n.P0, m*m
	if len(ls.LogAlpha) != B {
		return fmt.Errorf("nsrnn: an NS state of %d sequences given to a stream of %d", len(ls.LogAlpha), B)
	}
	colLen := n.Dw * mm
	ga := make([]float64, B*np*m)
	gg := make([]float64, B*np*colLen)
	for i := range gg {
		gg[i] = math.Inf(-1)
	}
	for b := 0; b < B; b++ {
		copy(ga[b*np*m:], ls.LogAlpha[b])
		k := 0
		for a := 0; a < np; a++ {
			for c := a + 1; c < np; c++ {
				copy(gg[b*np*colLen+c*colLen+(c-a-1)*mm:], ls.LogGamma[b][k*mm:(k+1)*mm])
				k++
			}
		}
	}
	if err := n.stage(r, ga, n.la, n.NP*m, np*m, true); err != nil {
		return err
	}
	if err := n.stage(r, gg, n.lg, n.NP*colLen, np*colLen, true); err != nil {
		return err
	}
	if v := n.vec; v != nil && np > 1 {
		gv := make([]float64, B*(np-1)*v.mv)
		for b := 0; b < B; b++ {
			copy(gv[b*(np-1)*v.mv:], ls.Vectors[b])
		}
		if err := n.stage(r, gv, v.V, n.NP*v.mv, (np-1)*v.mv, true); err != nil {
			return err
		}
	}
	return e.uploadReal(r.prec, n.rd, ls.Reading)
}

// loadKept sets the carried positions from the device's copy of the
// latest saved state.
func (n *cudaNS) loadKept(r *lstmRun) error {
	e, B, m, mm := n.e, r.B, n.m, n.m*n.m
	np := n.kept.np
	ka, ok1 := e.ws["ns.keepA"]
	kg, ok2 := e.ws["ns.keepG"]
	kr, ok3 := e.ws["ns.keepR"]
	if !ok1 || !ok2 || !ok3 {
		return fmt.Errorf("nsrnn: the device lost its copy of the stack's state")
	}
	if err := e.launch(r.prec, "rows_copy", B*np*m, n.la, int64(n.NP*m), ka.p, int64(np*m), int64(np*m), B); err != nil {
		return err
	}
	// The kept columns have kept.Dw distances; this pass's have Dw (at
	// least as many): the others are −∞.
	colLen, keptLen := n.Dw*mm, n.kept.Dw*mm
	if colLen != keptLen {
		if err := e.launch(r.prec, "fill", B*n.NP*colLen, n.lg, math.Inf(-1), int64(B*n.NP*colLen)); err != nil {
			return err
		}
	}
	for c := 0; c < np; c++ {
		if err := e.launch(r.prec, "rows_copy", B*keptLen, n.lg.Offset(8*c*colLen), int64(n.NP*colLen), kg.p.Offset(8*c*keptLen), int64(np*keptLen), int64(keptLen), B); err != nil {
			return err
		}
	}
	if v := n.vec; v != nil && np > 1 {
		kv, ok := e.ws["ns.keepV"]
		if !ok {
			return fmt.Errorf("nsrnn: the device lost its copy of the stack's state")
		}
		if err := e.launch(r.prec, "rows_copy", B*(np-1)*v.mv, v.V, int64(n.NP*v.mv), kv.p, int64((np-1)*v.mv), int64((np-1)*v.mv), B); err != nil {
			return err
		}
	}
	return e.ctx.Copy(n.rd, kr.p, B*n.R*elem(r.prec))
}

// stage copies, for every sequence, n values at the start of its part of
// the device buffer dev (ld values per sequence) from host (in) or to
// host (out), through a staging buffer.
func (n *cudaNS) stage(r *lstmRun, host []float64, dev cuda.Ptr, ld, cnt int, in bool) error {
	e, B := n.e, r.B
	st, err := e.buf("ns.stage", 8*B*cnt)
	if err != nil {
		return err
	}
	if in {
		if err := e.ctx.UploadFloat64(st, host); err != nil {
			return err
		}
		return e.launch(r.prec, "rows_copy", B*cnt, dev, int64(ld), st, int64(cnt), int64(cnt), B)
	}
	if err := e.launch(r.prec, "rows_copy", B*cnt, st, int64(cnt), dev, int64(ld), int64(cnt), B); err != nil {
		return err
	}
	return e.ctx.DownloadFloat64(host, st)
}

// save keeps the carried part of the pass's stack on the device (the
// buffers ns.keepA, ns.keepG and ns.keepR: the last positions' α, their
// γ columns and the last reading) and returns it as a state that is copied
// to the host only when the host needs it (deviceStackState).
func (n *cudaNS) save(r *lstmRun) (stacks.State, error) {
	if n.cfg.Window == 0 {
		return nil, fmt.Errorf("nsrnn: model kind %s: an unlimited stack carries no state", n.e.m.cfg.Kind)
	}
	e, B, m, mm := n.e, r.B, n.m, n.m*n.m
	np := min(n.cfg.Window, n.NP)
	off := n.NP - np
	colLen := n.Dw * mm
	n.kept.np = 0
	n.kept.gen++
	ka, err := e.buf("ns.keepA", 8*B*np*m)
	if err != nil {
		return nil, err
	}
	kg, err := e.buf("ns.keepG", 8*B*np*colLen)
	if err != nil {
		return nil, err
	}
	kr, err := e.buf("ns.keepR", B*n.R*elem(r.prec))
	if err != nil {
		return nil, err
	}
	if err := e.launch(r.prec, "rows_copy", B*np*m, ka, int64(np*m), n.la.Offset(8*off*m), int64(n.NP*m), int64(np*m), B); err != nil {
		return nil, err
	}
	if err := e.launch(r.prec, "rows_copy", B*np*colLen, kg, int64(np*colLen), n.lg.Offset(8*off*colLen), int64(n.NP*colLen), int64(np*colLen), B); err != nil {
		return nil, err
	}
	rd, _ := n.reading(n.S)
	if err := e.ctx.Copy(kr, rd, B*n.R*elem(r.prec)); err != nil {
		return nil, err
	}
	if v := n.vec; v != nil && np > 1 {
		kv, err := e.buf("ns.keepV", 8*B*(np-1)*v.mv)
		if err != nil {
			return nil, err
		}
		if err := e.launch(r.prec, "rows_copy", B*(np-1)*v.mv, kv, int64((np-1)*v.mv), v.V.Offset(8*off*v.mv), int64(n.NP*v.mv), int64((np-1)*v.mv), B); err != nil {
			return nil, err
		}
	}
	n.kept.np, n.kept.Dw, n.kept.B, n.kept.prec = np, n.Dw, B, r.prec
	return &deviceStackState{k: n, gen: n.kept.gen, batch: B}, nil
}

// keptGen implements stateKeeper.
func (n *cudaNS) keptGen() int {
	if n.kept.np == 0 {
		return 0
	}
	return n.kept.gen
}

// fetch implements stateKeeper: the kept state as a stacks.State.
func (n *cudaNS) fetch() (stacks.State, error) {
	ls, err := n.fetchLog()
	if err != nil {
		return nil, err
	}
	st, err := n.s.StateFromLog(ls)
	if err != nil {
		return nil, fmt.Errorf("nsrnn: %w", err)
	}
	return st, nil
}

// fetchLog copies the kept state to the host in log space.
func (n *cudaNS) fetchLog() (*stacks.NSLogState, error) {
	e, B, m, mm := n.e, n.kept.B, n.m, n.m*n.m
	np, colLen := n.kept.np, n.kept.Dw*n.m*n.m
	ga := make([]float64, B*np*m)
	gg := make([]float64, B*np*colLen)
	if err := e.ctx.DownloadFloat64(ga, e.ws["ns.keepA"].p); err != nil {
		return nil, err
	}
	if err := e.ctx.DownloadFloat64(gg, e.ws["ns.keepG"].p); err != nil {
		return nil, err
	}
	reading, err := e.download(n.kept.prec, e.ws["ns.keepR"].p, B*n.R)
	if err != nil {
		return nil, err
	}
	ls := &stacks.NSLogState{Positions: np, Reading: reading,
		LogAlpha: make([][]float64, B), LogGamma: make([][]float64, B)}
	if v := n.vec; v != nil {
		gv := make([]float64, B*(np-1)*v.mv)
		if np > 1 {
			if err := e.ctx.DownloadFloat64(gv, e.ws["ns.keepV"].p); err != nil {
				return nil, err
			}
		}
		ls.Vectors = make([][]float64, B)
		for b := range ls.Vectors {
			ls.Vectors[b] = gv[b*(np-1)*v.mv : (b+1)*(np-1)*v.mv]
		}
	}
	for b := 0; b < B; b++ {
		ls.LogAlpha[b] = ga[b*np*m : (b+1)*np*m]
		lg := make([]float64, 0, np*(np-1)/2*mm)
		for a := 0; a < np; a++ {
			for c := a + 1; c < np; c++ {
				o := b*np*colLen + c*colLen + (c-a-1)*mm
				lg = append(lg, gg[o:o+mm]...)
			}
		}
		ls.LogGamma[b] = lg
	}
	return ls, nil
}

// deviceStackState is a stack's carried state that the GPU keeps: a
// stream that goes on on the GPU continues from the device's copy, and the
// copy comes to the host (download, and for a nondeterministic stack
// conversion from log space) only when the host needs it: for a
// checkpoint (MarshalBinary), for the CPU, or before the device overwrites
// it while someone may still hold the state.
type deviceStackState struct {
	k     stateKeeper
	gen   int // the save that made it (k.keptGen())
	batch int
	st    stacks.State // the host's copy, once made
	err   error
}

// stateKeeper is a GPU stack that keeps the state of its latest save on
// the device (cudaNS, cudaJM).
type stateKeeper interface {
	// keptGen numbers the saves; it is 0 while the device keeps none.
	keptGen() int
	// fetch copies the kept state to the host.
	fetch() (stacks.State, error)
}

// keeps reports whether st is the state that k keeps now.
func keeps(k stateKeeper, st stacks.State) bool {
	d, ok := st.(*deviceStackState)
	return ok && d.k == k && d.gen != 0 && d.gen == k.keptGen()
}

// Batch implements stacks.State.
func (d *deviceStackState) Batch() int { return d.batch }

// MarshalBinary implements stacks.State: the host copy's encoding.
func (d *deviceStackState) MarshalBinary() ([]byte, error) {
	st, err := d.host()
	if err != nil {
		return nil, err
	}
	return st.MarshalBinary()
}

// host returns the state's host copy, making it from the device's.
func (d *deviceStackState) host() (stacks.State, error) {
	if d.st != nil || d.err != nil {
		return d.st, d.err
	}
	if !keeps(d.k, d) {
		d.err = fmt.Errorf("nsrnn: the GPU's copy of a stream's stack state was overwritten before the host read it")
		return nil, d.err
	}
	d.st, d.err = d.k.fetch()
	return d.st, d.err
}

// hostStackState returns a stack state the host can use: the host copy of
// a state the GPU keeps, or st itself.
func hostStackState(st stacks.State) (stacks.State, error) {
	if d, ok := st.(*deviceStackState); ok {
		return d.host()
	}
	return st, nil
}

func (n *cudaNS) reading(t int) (cuda.Ptr, int) {
	return n.rd.Offset(t * n.B * n.R * elem(n.prec)), n.R
}

func (n *cudaNS) readings() (cuda.Ptr, int) { return n.rd, n.R }

func (n *cudaNS) normalized() int {
	if n.cfg.Normalized {
		return 1
	}
	return 0
}

func (n *cudaNS) stateReading() int {
	if n.cfg.StateReading {
		return 1
	}
	return 0
}

func (n *cudaNS) forward(r *lstmRun, t int, h cuda.Ptr) error {
	e, p, B, H := n.e, r.prec, r.B, n.e.m.cfg.Hidden
	f := e.stackFirst()
	W := e.working
	logits := n.logits.Offset((t - 1) * B * n.A * elem(p))
	if err := e.gemm(p, false, true, B, n.A, H, h, H, W(f), H, 0, logits, n.A); err != nil {
		return err
	}
	if err := e.launch(p, "ns_act", B*n.m, n.logWeights(t), logits, W(f+1), B, n.m, n.L, n.normalized()); err != nil {
		return err
	}
	if err := n.advance(p, t); err != nil {
		return err
	}
	if n.vec != nil {
		return n.forwardVec(r, t, n.P0-1+t, h)
	}
	rt, _ := n.reading(t)
	return e.launch(p, "ns_read", B, rt, n.la, n.P0-1+t, B, n.NP, n.Q, n.G, n.stateReading())
}

// logWeights returns step t's action log-weights log Δ[t] (B rows of A).
func (n *cudaNS) logWeights(t int) cuda.Ptr { return n.logw.Offset((t - 1) * n.B * n.A * 8) }

// advance runs the dynamic program's step t from its log-weights
// (logWeights(t)): γ's new column and α[t]. It is the device's half of
// the tape's Step, without the reading.
func (n *cudaNS) advance(p Precision, t int) error {
	e, B := n.e, n.B
	logw := n.logWeights(t)
	pos := n.P0 - 1 + t
	if err := e.launch(p, "ns_gp", B*n.Dw*n.m*n.Q, n.gp, n.lg, logw, pos, B, n.NP, n.Dw, n.Q, n.G); err != nil {
		return err
	}
	if err := e.launch(p, "ns_col", B*n.Dw*n.m*n.m, n.lg, n.gp, logw, pos, B, n.NP, n.Dw, n.Q, n.G); err != nil {
		return err
	}
	return e.launchGroups(p, "ns_alpha", B*n.m, n.la, n.lg, pos, B, n.NP, n.Dw, n.m)
}

func (n *cudaNS) zeroAdjoint(r *lstmRun) error {
	if err := n.e.ctx.Zero(n.dlg, 8*r.B*n.NP*n.Dw*n.m*n.m); err != nil {
		return err
	}
	if n.vec != nil {
		if err := n.e.ctx.Zero(n.vec.dV, 8*r.B*n.NP*n.vec.mv); err != nil {
			return err
		}
	}
	return n.e.ctx.Zero(n.dla, 8*r.B*n.NP*n.m)
}

func (n *cudaNS) backward(r *lstmRun, t int, dr, h, dh cuda.Ptr) error {
	e, p, B, H := n.e, r.prec, r.B, n.e.m.cfg.Hidden
	f := e.stackFirst()
	pos := n.P0 - 1 + t
	if n.vec != nil {
		// The reading is the vectors', not α's.
		if err := n.backwardVecRead(r, t, pos, dr); err != nil {
			return err
		}
	} else if err := e.launch(p, "ns_back_read", B, n.dla, n.la, dr, pos, B, n.NP, n.Q, n.G, n.stateReading()); err != nil {
		return err
	}
	if err := n.retreat(p, t); err != nil {
		return err
	}
	dlogits := n.dlogits.Offset((t - 1) * B * n.A * elem(p))
	if err := e.launch(p, "ns_act_back", B*n.m, dlogits, n.dlogw, n.logWeights(t), B, n.m, n.L, n.normalized()); err != nil {
		return err
	}
	if err := e.gemm(p, false, false, B, H, n.A, dlogits, n.A, e.working(f), H, 1, dh, H); err != nil {
		return err
	}
	if n.vec != nil {
		return n.backwardVec(r, t, pos, dh)
	}
	return nil
}

// retreat runs the dynamic program's step t backward, once the
// gradient of step t's reading is in α's adjoint: it writes ∂L/∂log Δ[t]
// into dlogw (B rows of A) and sends the rest into the adjoints of the
// earlier steps. It is the device's half of the tape's Backward.
func (n *cudaNS) retreat(p Precision, t int) error {
	e, B := n.e, n.B
	logw := n.logWeights(t)
	pos := n.P0 - 1 + t
	m, NP, Dw, Q, G := n.m, n.NP, n.Dw, n.Q, n.G
	steps := []struct {
		name   string
		n      int
		groups bool
		args   []any
	}{
		{"ns_back_alpha_g", B * Dw * m * m, false, []any{n.dlg, n.lg, n.la, n.dla, pos, B, NP, Dw, m}},
		{"ns_back_alpha_a", B * Dw * m, false, []any{n.dla, n.lg, n.la, pos, B, NP, Dw, m}},
		{"ns_back_push", B * m * m, false, []any{n.dlogw, n.dlg, pos, B, NP, Dw, Q, G}},
		{"ns_back_rep", B * Dw * m * m, false, []any{n.dlg, n.lg, logw, pos, B, NP, Dw, Q, G}},
		{"ns_back_rep_w", B * m * m, true, []any{n.dlogw, n.dlg, n.lg, logw, pos, B, NP, Dw, Q, G}},
		{"ns_back_pop", B * Dw * Dw * m * m, false, []any{n.dlg, n.lg, n.gp, pos, B, NP, Dw, Q, G}},
		{"ns_back_gp", B * Dw * m * Q, true, []any{n.dgp, n.dlg, n.lg, n.gp, pos, B, NP, Dw, Q, G}},
		{"ns_back_gp_g", B * Dw * m * m, false, []any{n.dlg, n.lg, n.gp, n.dgp, logw, pos, B, NP, Dw, Q, G}},
		{"ns_back_pop_w", B * m * Q, true, []any{n.dlogw, n.lg, n.gp, n.dgp, logw, pos, B, NP, Dw, Q, G}},
	}
	for _, s := range steps {
		launch := e.launch
		if s.groups {
			launch = e.launchGroups
		}
		if err := launch(p, s.name, s.n, s.args...); err != nil {
			return err
		}
	}
	return nil
}

func (n *cudaNS) weightGrads(r *lstmRun, hs cuda.Ptr, G func(int) cuda.Ptr, first int) error {
	e, p, H := n.e, r.prec, n.e.m.cfg.Hidden
	SB := n.S * r.B
	if SB == 0 {
		return nil
	}
	if err := e.gemm(p, true, false, n.A, H, SB, n.dlogits, n.A, hs, H, 0, G(first), H); err != nil {
		return err
	}
	ones, err := e.ones(p, SB)
	if err != nil {
		return err
	}
	if err := e.gemm(p, false, false, 1, n.A, SB, ones, SB, n.dlogits, n.A, 0, G(first+1), n.A); err != nil {
		return err
	}
	if v := n.vec; v != nil {
		if err := e.gemm(p, true, false, v.mv, H, SB, v.dpre, v.mv, hs, H, 0, G(first+2), H); err != nil {
			return err
		}
		return e.gemm(p, false, false, 1, v.mv, SB, ones, SB, v.dpre, v.mv, 0, G(first+3), v.mv)
	}
	return nil
}

// vrnsPart is what the vector stack (VRNS) adds to the nondeterministic
// stack's program on the GPU: the stack elements' vectors and the reading
// they make.
type vrnsPart struct {
	mv int
	// bottom is the bottom vector's kind for vr_bottom: 0 learned, 1
	// zeros, 2 ones.
	bottom int
	// V (B, NP, mv) the vectors by position, P (S, B, Dw, m) the terms of
	// α by row, pre (S, B, mv) the pushed vectors' pre-activations; dV,
	// dP (B, Dw, m) and dpre (S, B, mv) the backward pass's.
	V, P, pre, dV, dP, dpre cuda.Ptr
}

// newCUDAVRNS returns the GPU implementation of a VRNS stack: the NS
// program with the vector payload.
func newCUDAVRNS(e *cudaEngine, s *stacks.NS) *cudaNS {
	c := s.Config()
	n := &cudaNS{e: e, s: s, cfg: stacks.NSConfig{States: c.States, Symbols: c.Symbols, Bottom: c.Bottom, Window: c.Window}}
	n.vec = &vrnsPart{mv: c.Vector}
	switch c.BottomVector {
	case stacks.ZeroBottom:
		n.vec.bottom = 1
	case stacks.OneBottom:
		n.vec.bottom = 2
	}
	return n
}

// prepareVec sizes the vector stack's buffers.
func (n *cudaNS) prepareVec(r *lstmRun) error {
	v, e, B := n.vec, n.e, r.B
	es := elem(r.prec)
	S := max(n.S, 1)
	n.R = n.m * v.mv
	var err error
	get := func(name string, bytes int) cuda.Ptr {
		if err != nil {
			return 0
		}
		var p cuda.Ptr
		p, err = e.buf("vrns."+name, bytes)
		return p
	}
	n.rd = get("rd", es*(n.S+1)*B*n.R)
	v.V = get("V", 8*B*n.NP*v.mv)
	v.P = get("P", 8*S*B*n.Dw*n.m)
	v.pre = get("pre", es*S*B*v.mv)
	if r.grad {
		v.dV = get("dV", 8*B*n.NP*v.mv)
		v.dP = get("dP", 8*B*n.Dw*n.m)
		v.dpre = get("dpre", es*S*B*v.mv)
	}
	return err
}

// loadVec sets r_0 (and, with the fixed bottom, the bottom's vector).
func (n *cudaNS) loadVec(r *lstmRun) error {
	e, v := n.e, n.vec
	if err := e.setWeights(r.prec); err != nil {
		return err
	}
	var w0 cuda.Ptr
	if v.bottom == 0 {
		w0 = e.working(e.stackFirst() + 4)
	}
	fixed := 0
	if n.cfg.Bottom == stacks.Fixed {
		fixed = 1
	}
	return e.launch(r.prec, "vr_bottom", r.B*n.m*v.mv, v.V, n.rd, w0, v.bottom, fixed, r.B, n.NP, n.m, v.mv)
}

// forwardVec makes step t's pushed vectors and its reading.
func (n *cudaNS) forwardVec(r *lstmRun, t, pos int, h cuda.Ptr) error {
	e, v, p, B, H := n.e, n.vec, r.prec, r.B, n.e.m.cfg.Hidden
	f := e.stackFirst()
	W := e.working
	pre := v.pre.Offset((t - 1) * B * v.mv * elem(p))
	if err := e.gemm(p, false, true, B, v.mv, H, h, H, W(f+2), H, 0, pre, v.mv); err != nil {
		return err
	}
	if err := e.launch(p, "vr_vec", B*v.mv, v.V, pre, W(f+3), pos, B, n.NP, v.mv); err != nil {
		return err
	}
	P := v.P.Offset((t - 1) * B * n.Dw * n.m * 8)
	if err := e.launch(p, "vr_P", B*n.Dw*n.m, P, n.lg, n.la, pos, B, n.NP, n.Dw, n.m); err != nil {
		return err
	}
	rt, _ := n.reading(t)
	return e.launch(p, "vr_read", B*n.m*v.mv, rt, P, v.V, n.la, pos, B, n.NP, n.Dw, n.m, v.mv)
}

// backwardVecRead sends the gradient dr of step t's reading into α, γ and
// the vectors (in place of ns_back_read).
func (n *cudaNS) backwardVecRead(r *lstmRun, t, pos int, dr cuda.Ptr) error {
	e, v, p, B := n.e, n.vec, r.prec, r.B
	m, NP, Dw, mv := n.m, n.NP, n.Dw, v.mv
	P := v.P.Offset((t - 1) * B * Dw * m * 8)
	steps := []struct {
		name string
		n    int
		args []any
	}{
		{"vr_back_P", B * Dw * m, []any{v.dP, P, v.V, n.la, dr, pos, B, NP, Dw, m, mv}},
		{"vr_back_V", B * Dw * mv, []any{v.dV, P, n.la, dr, pos, B, NP, Dw, m, mv}},
		{"vr_back_Z", B, []any{n.dla, v.dP, n.la, pos, B, NP, Dw, m}},
		{"vr_back_P_g", B * Dw * m * m, []any{n.dlg, n.lg, n.la, P, v.dP, pos, B, NP, Dw, m}},
		{"vr_back_P_a", B * Dw * m, []any{n.dla, n.lg, n.la, P, v.dP, pos, B, NP, Dw, m}},
	}
	for _, s := range steps {
		if err := e.launch(p, s.name, s.n, s.args...); err != nil {
			return err
		}
	}
	return nil
}

// backwardVec sends the gradient of step t's pushed vectors into h_t.
func (n *cudaNS) backwardVec(r *lstmRun, t, pos int, dh cuda.Ptr) error {
	e, v, p, B, H := n.e, n.vec, r.prec, r.B, n.e.m.cfg.Hidden
	dpre := v.dpre.Offset((t - 1) * B * v.mv * elem(p))
	if err := e.launch(p, "vr_back_vec", B*v.mv, dpre, v.dV, v.V, pos, B, n.NP, v.mv); err != nil {
		return err
	}
	return e.gemm(p, false, false, B, H, v.mv, dpre, v.mv, e.working(e.stackFirst()+2), H, 1, dh, H)
}

// initialGrad implements initialGrader: the learned bottom vector's
// gradient, from r_0's (dr0) and, with the fixed bottom, its element's.
func (n *cudaNS) initialGrad(r *lstmRun, dr0 cuda.Ptr, G func(int) cuda.Ptr, first int) error {
	v := n.vec
	if v == nil || v.bottom != 0 || n.carried != nil || n.fromKept {
		// Only a pass from the initial stack reads the bottom vector.
		return nil
	}
	fixed := 0
	if n.cfg.Bottom == stacks.Fixed {
		fixed = 1
	}
	return n.e.launch(r.prec, "vr_back_bottom", v.mv, G(first+4), v.dV, dr0, n.e.working(first+4), fixed, r.B, n.NP, n.m, v.mv)
}

// initialGrader is a stack whose initial reading r_0 has parameters: the
// pass gives it ∂L/∂r_0.
type initialGrader interface {
	initialGrad(r *lstmRun, dr0 cuda.Ptr, G func(int) cuda.Ptr, first int) error
}
