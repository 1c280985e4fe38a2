// Package stacks implements the differentiable stacks that nsrnn joins to a
// recurrent controller, as gorgonia graph pieces with hand-written backward
// passes:
//
//   - the stratification stack of Grefenstette et al. (2015), "Gref";
//   - the superposition stack of Joulin & Mikolov (2015), "JM", with a
//     learned pushed vector or the controller's hidden state, and an
//     optional depth limit;
//   - the nondeterministic stack of DuSell & Chiang (NS), with the
//     unnormalized action weights (+U) and the state-aware reading (+S) of
//     the Renormalizing NS-RNN (RNS = NS+S+U), in unlimited and
//     memory-limited (window D) forms.
//
// Each stack kind is a Layer: it owns the parameters of its Actions layer,
// a_t = Actions(h_t) from the controller's hidden state h_t, and, for every
// graph a model builds, binds an Instance that turns h_t into the reading
// r_t, one graph node per step.
//
// # The nondeterministic stack
//
// The NS stack is a weighted pushdown automaton run on all its paths at
// once. Its states are Q = {0, …, |Q|−1} and its stack alphabet
// Γ = {0, …, |Γ|−1}. It starts in state 0 with a stack holding one symbol,
// 0, the initial bottom. At step t = 1, 2, … every run in configuration
// (state q, top symbol x) takes exactly one transition, weighted by the
// step's action weights Δ[t]:
//
//	push     Δ[t][q,x → r,•y]   go to state r and push y on top of x
//	replace  Δ[t][q,x → r,y]    go to state r and replace the top x by y
//	pop      Δ[t][q,x → r,ε]    go to state r and pop x
//
// A run's weight is the product of its transitions' weights; α[t][r,y] is
// the total weight of the runs in state r with top symbol y after step t.
// The readings are distributions derived from α:
//
//	symbol reading (NS, NS+U)         r_t[y]       = Σ_r α[t][r,y] / Σ α[t]    size |Γ|
//	state+symbol reading (NS+S, RNS)  r_t[r·|Γ|+y] = α[t][r,y] / Σ α[t]        size |Q||Γ|
//
// and r_0, the reading of the initial configuration, puts all its mass on
// state 0 and symbol 0. A batch element whose every run has weight zero
// reads all zeros.
//
// The weights are summed by Lang's dynamic program in log space, with the
// pop term factored through an intermediate quantity γ′, in
// O(|Q|³|Γ|²n³) time and O(|Q|²|Γ|²n²) memory for n steps. Log-weights of
// ±500 and beyond give finite readings that sum to one, and weights of
// −∞ (impossible transitions) get a zero gradient, never NaN.
//
// # Bottom behaviours
//
// Two behaviours of the initial bottom are supported (NSConfig.Bottom):
//
//   - Original, the ICLR 2022 paper's equations: the initial bottom can
//     never be replaced, and no pop may uncover it (a pop is allowed only
//     when the symbol below the top is not the initial bottom), so the
//     first step is always a push.
//   - Fixed, the authors' later release (ICLR 2023): the initial bottom is
//     an ordinary symbol except that it cannot be popped; it can be
//     replaced, and pops may uncover it.
//
// # Action scores
//
// An NS stack's Actions layer is affine, W_a h_t + b_a, with NumActions =
// |Q||Γ|(2|Q||Γ|+|Q|) outputs per batch element. They are laid out in
// |Q||Γ| rows, one per configuration (q, x) in the order q·|Γ|+x, each row
// holding the push scores for every (r, y) (index r·|Γ|+y), then the
// replace scores for every (r, y), then the pop scores for every r:
//
//	row (q,x): push (0,0) … push (|Q|−1,|Γ|−1) | replace (0,0) … | pop 0 … pop |Q|−1
//
// For the normalized variants (NS, NS+S) the log-weights are a
// log-softmax over each row of 2|Q||Γ|+|Q| scores (the paper's eq. 1); for
// the unnormalized ones (NS+U, RNS) the scores are the log-weights
// themselves. Run, Viterbi and ActionTypeWeights take log-weights in this
// layout, step by step: logWeights[t−1] holds step t's (batch, NumActions)
// values, row-major.
//
// # The memory-limited stack
//
// With a window D = NSConfig.Window ≥ 1, only the weights γ[i→t] of a
// symbol pushed at step i+1 and still on the stack at step t with
// t − i ≤ D are kept (the paper's §5.1); α still sums over every i in the
// window. Time and memory become O(|Q|³|Γ|²D²n) and O(|Q|²|Γ|²Dn), and
// the computation can stop after any step and resume: D ≥ n gives exactly
// the unlimited result.
//
// # Carrying state
//
// A stack bound with carry (Layer.Bind) starts each run from the State
// given to Instance.SetState (nil: the initial stack) and records the
// state after its last step, which Instance.State returns. A State is a
// detached value: no gradient flows into it, no later run changes it, and
// its MarshalBinary encoding is exact, so that a stream checkpointed in
// the middle resumes bit for bit. The carried state is, for the
// memory-limited NS stack, the last D−1 columns of γ, the last D entries of
// α and the last reading (the next run's r_0); for JM with a depth limit
// K, its K cells. Running a sequence in chunks of any sizes, each from the
// state the previous one ended in, gives exactly the readings of running
// it whole. The unlimited NS stack, JM without a depth limit and Gref grow
// with every step and cannot carry their state: Carryable says why, with an
// error wrapping ErrNoCarry.
//
// # The vector stack
//
// VRNS is the RNS stack of the authors' later release in which every push
// also pushes a vector v_t = σ(W_v h_t + b_v) of size m, and the reading
// is the expected top vector of each (state, symbol), of size |Q||Γ|m. It
// is not a layer of its own but the nondeterministic stack with a vector
// payload: NSConfig.Vector = m on the RNS variant. NewVRNS makes it from a
// VRNSConfig, as the type VRNS, which wraps the NS layer under the
// release's name and configuration (VRNSConfig.NS converts); NewNS makes
// the same layer from the NSConfig. Its carried state has the NS stacks'
// encoding behind a header of its own. Its
// semantics, including the initial bottom's vector (learned, zero or one),
// are in the documentation of VRNS.
//
// # Viterbi decoding
//
// Viterbi runs the same dynamic program in the max-plus semiring with
// backpointers and returns, for each sequence, the highest-weight run of
// the automaton over the given action log-weights: one operation per step,
// push(r, y), replace(r, y) or pop(r) (Op.String names them:
// "push(state=r, symbol=y)"), the stack after every step, and the
// run's log-weight. ViterbiRun.WriteTable prints a run beside the symbols
// it was decoded on.
//
// # Semirings
//
// The recurrences of the dynamic program are written once, over a
// semiring (package semiring); Inside runs them over one sequence's action
// values and returns α, the semiring sum over runs ending in each
// configuration of the product of their transitions' values. The stacks'
// fast kernels compute the semiring.LogSum instance (and are tested
// against it); Viterbi is the semiring.MaxPlus instance with
// back-pointers; semiring.Counting counts runs. A new semiring is one type
// with five methods, for example the Boolean one, which tells which
// configurations some run reaches:
//
//	type Reachable struct{}
//
//	func (Reachable) Zero() bool                           { return false }
//	func (Reachable) One() bool                            { return true }
//	func (Reachable) Times(a, b bool) bool                 { return a && b }
//	func (Reachable) Plus(acc *bool, v bool) bool          { *acc = *acc || v; return false }
//	func (Reachable) AddProduct(acc *bool, a, b bool) bool { *acc = *acc || a && b; return false }
//
//	alpha, err := stacks.Inside[bool](cfg, Reachable{}, rows)
//
// A selective semiring (one whose sum is one of its terms) returns true
// from Plus when the term replaced the sum, and the program then records
// where the sum came from, as Viterbi's back-pointers. The tests check
// every instance against one brute-force enumerator of the automaton's
// runs, written from the semantics alone.
//
// # Runners
//
// A layer that implements Runners runs forward on plain slices, step by
// step and without a graph (Runner): generation feeds each step's output
// back as the next input, which a graph of fixed length cannot do.
//
// # Graphs
//
// An Instance adds one fused node per step, r_t = Step(t, h_t), whose
// backward pass is hand-written. The step also takes r_{t−1} as an input
// that only orders the backward passes (its gradient is zero), so that the
// stack's adjoints are accumulated from the last step to the first even in
// graphs where r_{t−1} does not feed h_t; steps whose readings the loss
// ignores are back-propagated with a zero gradient. Parameters are read
// through the nodes of a param.Binding and are not differentiated by
// gorgonia: each step adds its parameters' gradients into the binding's
// accumulators, and takes the binding's anchor node so that
// differentiating the loss with respect to the anchor runs every step's
// backward pass. The stack's dynamic program works on a scratch tape
// shared by the graphs bound to one stack for one batch size; everything a
// run leaves behind (its final state, its action weights) is copied out of
// the tape, so those graphs may run one after another but not
// concurrently. The nondeterministic stacks' tapes for different batch
// sizes share their sequences' memory, so that a stack holds per batch
// element the memory of the longest run that used it, whatever the sizes
// of the batches its runs came in (a corpus batched by length has its
// longest strings in its smallest batches); a graph kept for later runs
// holds none of it. Graphs that must run at the same time (parts of one batch
// on several cores) are bound to replicas: every stack here implements
// Replicator, whose Replica shares the parameters and keeps tapes of its
// own. A nondeterministic stack's run shares the batch's sequences among
// up to GOMAXPROCS goroutines; a replica is given its own bound, so that
// replicas run side by side (one per core) do not also compete for the
// cores from within. The stacks whose memory grows with the run (NS,
// VRNS, JM, and Gref, whose strengths grow with the square of the length)
// implement Sizer: Bind and NewRunner refuse a tape over MaxTapeBytes,
// and CheckSize gives the same answer without building anything. The
// constructors refuse a layer of more than MaxParams parameters, and
// NSConfig.Validate more than 4,096 (state, symbol) pairs,
// before anything is allocated.
//
// The heavy numeric kernels live in internal packages and work on plain
// []float64 slices, so that they can be tested and benchmarked without a
// graph. The package stackstest holds the conformance tests that every
// stack kind passes.
//
// # Stacks defined elsewhere
//
// Everything a stack needs is public: Layer, Instance and State here,
// parameters and their bindings in package param, and package fused for a
// step's node with a hand-written backward pass (parameters are inputs
// that gorgonia does not differentiate; the backward pass adds their
// gradients into the binding's accumulators, and the step takes the
// binding's anchor). A stack written in another package passes the
// stackstest suite and becomes a model kind through nsrnn.RegisterKind
// (see "Adding a model kind" in package nsrnn, and the package
// examples/counterstack, a complete one).
//
// # Errors and panics
//
// Configurations, sizes, batches and action scores are checked and refused
// with errors: by the Validate methods, the constructors (MaxParams), Bind
// and NewRunner (MaxTapeBytes). Panics are kept for programmer errors:
// a nil binding or random source, a layer not made by its constructor, and
// slices shorter than the sizes a method documents (the h and r of a
// Runner's Step, for instance: a batch of hidden states and of readings).
package stacks
