// Package nskernel implements the dynamic program of the nondeterministic
// stack (NS and RNS; DuSell & Chiang, ICLR 2022) on plain float64 slices,
// with a hand-written backward pass.
//
// A Tape holds, for a batch of independent sequences, the stack WFA weights
// γ[i→t] and the forward weights α[t] (Lang's algorithm; the equations are in
// the stacks package documentation), together with their adjoints. Step appends one column of γ and α
// and writes the stack reading r_t; Backward, called for the steps in
// decreasing order, turns ∂L/∂r_t and the adjoints accumulated from later
// steps into ∂L/∂logΔ_t.
//
// Weights are kept in log space, but every contraction is done as "shift by
// block maxima, exponentiate, real multiply-add, take the logarithm", with an
// exact log-space fallback for every entry whose shifted value underflows,
// so results are exact (up to rounding) whenever the true value is finite.
// Internally each block of γ is stored as a mantissa matrix E with a scalar
// log shift β (γ = exp(β)·E), plus the exact logarithm for the entries whose
// mantissa is tiny.
//
// Positions. Internally the columns of γ are indexed by positions. For the
// "original" bottom behaviour position 0 is time 0 (α[0] one-hot) and step t
// produces position t. For the "fixed" behaviour position 0 is the extra row
// i = −1, position 1 is time 0 (γ[−1→0] one-hot at (0,0)→(0,0)), and step t
// produces position t+1. In the memory-limited variant the band constraint
// t − i ≤ D is applied to positions, so for the fixed behaviour the bottom
// row i = −1 counts as an ordinary row: γ[−1→t] is kept only while t+1 ≤ D
// (D ≥ n+1 reproduces the unlimited result; for the original behaviour
// D ≥ n does).
package nskernel
