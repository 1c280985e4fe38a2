// Package data provides probabilistic context-free grammars and the five
// context-free language tasks of DuSell & Chiang, "Learning Hierarchical
// Structures with Differentiable Nondeterministic Stacks" (ICLR 2022).
//
// A PCFG may contain ε rules, unary rules (including unary cycles) and
// nullable nonterminals anywhere inside longer rules. For such a grammar the
// package computes, exactly and without underflow:
//
//   - inside weights by length, β_A(n), the total probability of all
//     derivations from A of strings of length n, and so p_G(|w| = n);
//   - the probability p_G(w) of a string, summed over all of its
//     derivations;
//   - samples drawn exactly from p_G(w | |w| = n).
//
// Internally the grammar is binarized. Nullable weights are found by
// fixed-point iteration; at every length (or span) the dependencies between
// nonterminals through unary rules and rules whose other children derive ε
// form a linear system that is solved exactly with a precomputed inverse.
// Each length (or span) carries its own log-scale factor so that long strings
// do not underflow.
//
// Strings are represented as []int, each element an index into the
// grammar's terminals. The text form writes one string per line with its
// symbols separated by single spaces; an empty line is the empty string.
//
// The tasks (marked reversal, unmarked reversal, padded reversal, Dyck D₂
// and the hardest CFL) are built by NewTask and the New* constructors.
// Datasets follow the paper's training protocol: SampleBatches draws one
// length uniformly from the valid lengths per batch; SampleTestSet draws a
// fixed number of strings per length. ComputeLowerBound gives the per-symbol
// cross-entropy of the source distribution p(w) = (1/K)·p_G(w)/p_G(|w|), the
// lower bound against which models are measured.
package data
