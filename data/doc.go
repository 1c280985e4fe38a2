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
//
// # Task definitions
//
// Each task has two definitions, named by a Grammar value and selected with
// TaskFor or Task.WithGrammar:
//
//   - "paper" (GrammarPaper, the default, and what NewTask and the New*
//     constructors return): the grammars exactly as stated in the paper.
//   - "released" (GrammarReleased): what the authors' released code
//     samples. Its sampler cannot handle ε rules or unary rules, so it first
//     removes them (PCFG.RemoveEpsilonAndUnaryRules is the same
//     transformation). Removing a rule A → α splits every other rule that
//     has A on its right-hand side into the variants with and without A
//     replaced by α and renormalizes A's remaining rules. Every nonterminal
//     keeps its distribution where it occurs inside a rule, but the start
//     symbol loses its own derivations through a removed rule: the root's
//     distribution becomes the stated one conditioned on the derivations
//     that are kept.
//
// Use "released" to reproduce the authors' data and lower bounds, and
// "paper" for the distributions the paper describes. Under "released",
// everything (sampling, valid lengths, p_G(w)/p_G(|w|), K, the lower
// bound) is computed on the transformed grammar, as the authors' code
// does, so it is exact for what that code samples. The tasks differ as
// follows.
//
//   - Dyck: S → T is lost at the root, which is left with S → S T | T T
//     (1/2 each with the paper's parameters); inside brackets S → T
//     survives as T → ( T ) | [ T ]. No string is a single top-level
//     bracket pair ( … ) or [ … ], and length 2 is not valid. Given length 4, each of ( ) ( ),
//     ( ) [ ], [ ] ( ) and [ ] [ ] has probability 1/4; under "paper" they
//     have 1/160 each and the nested ( ( ) ), ( [ ] ), [ ( ) ], [ [ ] ] have
//     39/160 each.
//   - Padded reversal (v aᵖ vᴿ): S → T_a is lost at the root, so v is never
//     empty; the padding aᵖ still can be (0 1 1 0 is v = 0 1 with no
//     padding). Lengths 0 and 1 are not valid. A string aⁿ is no longer
//     derived as pure padding, only with a non-empty v, so given length 3
//     each of 0 0 0, 0 1 0, 1 0 1 and 1 1 1 has probability 1/4, where
//     "paper" favors 0 0 0 and 1 1 1.
//   - Unmarked reversal: S → ε is lost at the root: the empty string is not
//     generated and length 0 is not valid. Every other string has the same
//     probability given its length.
//   - Marked reversal has no ε or unary rules, and the hardest CFL's start
//     rule S′ → R $ Q S L ; is never removed, so both are unchanged: same
//     valid lengths, same probabilities.
//
// On the paper's length range [40, 80] both definitions have the same valid
// lengths, hence the same K, for every task; only Dyck and padded reversal
// give different probabilities there. A string that "paper" generates but
// "released" does not (a single Dyck pair) is an error for SourceLogProb and
// ComputeLowerBound under "released".
package data
