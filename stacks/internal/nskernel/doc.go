// Package nskernel implements the dynamic program of the nondeterministic
// stacks (NS and RNS, DuSell & Chiang, ICLR 2022; VRNS, ICLR 2023) on
// plain float64 slices, with a hand-written backward pass.
//
// One program serves every stack. A Tape holds, for a batch of independent
// sequences, the stack WFA weights γ[i→t] and the forward weights α[t]
// (Lang's algorithm; the equations are in the stacks package
// documentation), together with their adjoints, in one block layout
// (layout.go: γ blocks by row then column, γ′ blocks by column, positions
// and window, and the internal order of the actions); one sequence driver (seq.step: the γ′ blocks of a column, its γ
// blocks by push, replace and the pop contraction over split points, then
// α) and its adjoint (backward.go); one parallel dispatch over the batch
// (Tape.dispatch); and one encoding of the carried state (state_codec.go).
// Step appends one column of γ and α and writes the stack reading r_t;
// Backward, called for the steps in decreasing order, turns ∂L/∂r_t and
// the adjoints accumulated from later steps into ∂L/∂logΔ_t.
//
// What differs between the instances is the semiring and the payload the
// program carries beside the weights:
//
//   - NS and RNS (Config.Vector = 0): log-sum-exp on scaled mantissas (see
//     Scales) with no payload. The reading is α[t] normalized, summed over
//     states (the reading over symbols) or not (StateReading). NS
//     normalizes its action weights first (LogSoftmaxRows); RNS does not.
//   - VRNS (Config.Vector = m > 0): the same semiring and kernels; the
//     stack elements carry vectors of size m (BeginVector, StepVector,
//     BackwardVector), and the reading is the expected vector on top per
//     (state, top symbol), computed from the terms P_i of α; see "The
//     vector payload" below.
//   - Viterbi (maxplus.go): max-plus, with back-pointers in place of
//     adjoints, over the same layout, positions, window and action order,
//     column by column in the driver's order; it finds a run of highest
//     weight for stacks.Viterbi. It needs neither a backward pass nor a
//     carried state, so it runs one sequence on its own arrays rather than
//     on a Tape.
//
// The vector payload. The VRNS stack is the RNS stack whose stack elements
// also carry a vector of size m: the push of step t pushes v_t with its
// symbol, a replace changes an element's symbol and keeps its vector, and
// the initial bottom carries a given bottom vector. The reading is
//
//	r_t[(r·|Γ|+y)·m+j] = Σ_runs weight · [state r, top y] · (top vector)_j / Σ_runs weight.
//
// The authors' equations compute it with a vector ζ[i→t][q,x→r,y] beside
// every γ entry:
//
//	ζ[t−1→t][q,x→r,y] = Δ[t][q,x→r,•y] · v_t
//	ζ[i→t][q,x→r,y]   = Σ_{s,z} ζ[i→t−1][q,x→s,z] Δ[t][s,z→r,y]
//	                  + Σ_{k=i+1}^{t−2} Σ_u ζ[i→k][q,x→u,y] γ′[k→t][u,y→r]
//	η[t][r,y] = Σ_i Σ_{q,x} α[i][q,x] ζ[i→t][q,x→r,y],   r_t = η[t] / Σ α[t]
//
// ζ[i→t] counts the runs of γ[i→t], whose top element at t is the one
// pushed by step i+1 (replaced perhaps, never popped): each such run's top
// vector is v_{i+1}. The three equations are linear and keep this, so by
// induction ζ[i→t] = v_{i+1} ⊗ γ[i→t] exactly, and
//
//	η[t][r,y] = Σ_i v_{i+1} · P_i[t][r,y],   P_i[t] = α[i] γ[i→t],
//
// the terms whose sum is α[t]. The program computes γ, γ′ and α as for the
// RNS stack, keeping the terms P_i of α[t] (relative to α[t]'s shift, and
// recomputed exactly in log space when an entry of α[t] needs its exact
// fallback), and the reading from them, at O(nm|Q||Γ|) extra cost per step
// instead of the O(m) factor of carrying ζ. Backward sends the adjoint of
// each P_i through the contraction α[i]·γ[i→t] as it does that of α[t], with
// the same exact fallbacks, and returns ∂L/∂v_t. The tests check the
// readings against a brute-force enumeration of runs that carries the
// vectors and against the literal ζ recursion. With the original behaviour
// the initial bottom is never on top after step 1, so its vector appears
// only in r_0, which the caller computes (Config.InitialVectorReading);
// with the fixed behaviour it is the element of the extra row i = −1
// (position 0 below), and BackwardVector gives its gradient.
//
// Weights are kept in log space, but every contraction is done as "shift by
// block maxima, exponentiate, real multiply-add, take the logarithm", with an
// exact log-space fallback for every entry whose shifted value underflows,
// so results are exact (up to rounding) whenever the true value is finite.
// Internally each block of γ is stored as a mantissa matrix E with a scalar
// log shift β (γ = exp(β)·E), plus the exact logarithm for the entries whose
// mantissa is tiny.
//
// Positions (layout.go). Internally the columns of γ are indexed by
// positions. For the "original" bottom behaviour position 0 is time 0 (α[0]
// one-hot) and step t produces position t. For the "fixed" behaviour position 0 is the extra row
// i = −1, position 1 is time 0 (γ[−1→0] one-hot at (0,0)→(0,0)), and step t
// produces position t+1. In the memory-limited variant the band constraint
// t − i ≤ D is applied to positions, so for the fixed behaviour the bottom
// row i = −1 counts as an ordinary row: γ[−1→t] is kept only while t+1 ≤ D
// (D ≥ n+1 reproduces the unlimited result; for the original behaviour
// D ≥ n does).
//
// Kernels. The contractions of the common block sizes (|Q||Γ| = 6 with |Q| =
// 2, 9 and 12 with |Q| = 3, and 2 with |Q| = 1) use fixed-size, unrolled
// kernels, most of them generated by gen_kernels.go (go generate). On amd64
// CPUs with AVX2 and FMA the pop contractions of |Q| = 2 and 3 with |Γ| = 3,
// and the m×m products of replace, of the pop adjoints and of α (m = 6 and
// 9), use 256-bit vector kernels written in assembly (vec_amd64.s), and on
// CPUs with AVX-512 the pop contractions of |Q| = 2 (m = 6: patterns 0 and
// 1 of a block's vectors as one vector of eight, each lane's operations
// those of the 256-bit kernels, so the same bits) and of |Q| = 3 use
// 512-bit ones: for
// m = 9 written by hand (vec512_amd64.s; the backward one holds the 27 rows
// of its expanded block adjoint in registers over all split points), for
// m = 12 (|Γ| = 4, the PTB model RNS 3-4) generated by gen_vec12.go
// (vec512_12x3_amd64.s, with the m×m products), each pair of a block's rows
// three vectors of eight and the pop's permutation within groups of |Q|
// done by one two-table permute per vector. The build tag purego, or
// another architecture, leaves them out, and the tests check both paths in
// one binary. The batch elements of a step run in parallel
// on up to GOMAXPROCS goroutines (Tape.SetThreads lowers the bound) when
// the step has enough work and measurement shows that this is faster than
// running them one after another (see Tape.dispatch).
//
// Scales. A block's shift is chosen so that its mantissas are its fast-path
// sums scaled by a power of two (no exp or log, and no rounding), and the
// weights of the contractions are products of per-block factors exp(β −
// (ψ_b − ψ_a)) kept relative to a potential ψ over positions, so that the
// common case needs one exp per block and column rather than one per
// product. A factor out of range falls back to the exponential itself.
//
// Carried state. The memory-limited variant's State holds the last D
// positions: α, the γ blocks among them (mantissas, shifts and exact
// logarithms), the potentials and, for the vector stack, the blocks'
// factors hb and the vectors of their elements. Its encoding is exact; an
// NS state is encoded as it always was, and states of the former separate
// VRNS kernel still decode. A vector stack's run continued from a state
// equals, bit for bit, the whole run.
//
// Memory. Every column reads all blocks of its triangle (the backward
// pass also rewrites their adjoints), so a step of a batch streams B
// triangles: at the paper's sizes (B = 10, n up to 80, m = 9) they exceed
// the caches, and BenchmarkForwardBackwardBatch shows the time per string
// at B = 10 about 1.45 times that at B = 1.
//
// Semirings and checks. Program is the same recurrences written once over
// any semiring (package semiring): its log-sum instance is the reference
// that the fast kernels are tested against, its max-plus instance with
// back-pointers is Viterbi. stackstest.TestTape is the conformance suite
// of a tape (readings against Program, gradients against finite
// differences, chunked runs against whole ones, repeated runs bit for
// bit), which Tape passes and the GPU's implementation of the tape (in
// package nsrnn) runs the same way; package nsenum, the brute-force enumerator of the automaton's
// runs, is the oracle of Program in every semiring.
package nskernel
