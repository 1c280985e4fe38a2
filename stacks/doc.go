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
// Each stack kind is a Layer: it owns the parameters of its Actions layer
// (DESIGN §2: a_t = Actions(h_t)) and, for every graph the model builds,
// binds an Instance that turns the controller's hidden state h_t into the
// reading r_t, one graph node (or two) per step.
//
// The heavy numeric kernels live in internal packages and work on plain
// []float64 slices, so that they can be tested and benchmarked without a
// graph.
package stacks
