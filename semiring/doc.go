// Package semiring holds the semirings in which the nondeterministic
// stack's dynamic program runs (stacks.Inside, stacks.Viterbi): the
// interface a semiring implements and the library's instances.
//
// # Semirings
//
// A Semiring over values of type V has a Zero (the value of no run, the
// identity of Plus and absorbing for Times), a One (the empty run, the
// identity of Times), Times (a run extended by a transition), Plus (the
// sum of two sets of runs, into an accumulator) and AddProduct (Plus of a
// Times in one call, the program's inner operation). A selective semiring,
// whose sum is one of its terms, reports from Plus whether the term
// replaced the sum, so that a program can record where the sum came from
// (back-pointers).
//
// # Instances
//
// LogSum is the sum-product semiring of probabilities in log space (the
// stacks' readings), MaxPlus over Best the max-plus one (decoding), and
// Counting the counting one (numbers of runs). A new semiring is one type
// with the five methods; package stacks's documentation shows one.
package semiring
