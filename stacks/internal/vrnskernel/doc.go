// Package vrnskernel implements the dynamic program of the vector
// nondeterministic stack (VRNS; DuSell & Chiang, ICLR 2023) on plain
// float64 slices, with a hand-written backward pass.
//
// The VRNS stack is the RNS stack (unnormalized action weights Δ, the
// readings over (state, top symbol) pairs) whose stack elements also carry
// a vector of size m: the push of step t pushes v_t with its symbol, a
// replace changes an element's symbol and keeps its vector, and the
// initial bottom carries a given bottom vector. The reading is the
// expected vector on top, per (state, top symbol):
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
// the terms whose sum is α[t]. The tape computes γ, γ′ and α as the RNS
// stack does and the reading from the P_i, at O(nm|Q||Γ|) extra cost per
// step instead of the O(m) factor of carrying ζ. The tests check the
// readings against a brute-force enumeration of runs that carries the
// vectors and against the literal ζ recursion.
//
// The initial bottom. With the original behaviour the initial bottom is
// never on top after step 1 (the first step pushes, no pop uncovers it),
// so its vector appears only in r_0, which the caller computes
// (Config.InitialReading). With the fixed behaviour it is the element of
// the extra row i = −1 (γ[−1→0] and ζ[−1→0] = bottom one-hot at (0,0)→(0,0)):
// replaced, it keeps its vector; uncovered by pops, its vector is on top
// again; Backward gives its gradient.
//
// Positions, windows and scaling are as in nskernel: for the original
// behaviour position 0 is time 0 and step t makes position t; for the
// fixed one position 0 is the row i = −1, position 1 time 0, and step t
// makes position t+1. The memory-limited variant keeps γ[a→b] for b−a ≤ D
// in positions (the fixed bottom's row counts as a row), and sums α and η
// over the same rows. Each γ block (a,b) is a |Q||Γ|×|Q||Γ| matrix stored
// as exp(β)·E with a scalar shift β and mantissas E of largest entry 1,
// γ′ blocks and α likewise; contractions multiply mantissas and combine
// shifts, so weights whose logarithms exceed the floating-point range
// (long sequences of unnormalized weights) stay finite. Results are exact
// up to rounding while the entries of a block stay within about 700 nats
// of its largest one; an entry further below is flushed to zero. The
// tests check log-weights of ±50 over 60 steps against nskernel, which
// has exact fallbacks for such entries.
//
// The carried state of the memory-limited variant (Tape.State) holds the
// last D positions: α, the γ blocks among them, their potentials and the
// vectors of their elements. Its encoding is exact, and runs continued
// from it equal, bit for bit, the whole run.
package vrnskernel
