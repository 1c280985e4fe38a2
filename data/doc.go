// Package data provides probabilistic context-free grammars, the five
// context-free language tasks of DuSell & Chiang, "Learning Hierarchical
// Structures with Differentiable Nondeterministic Stacks" (ICLR 2022), and
// the seven non-context-free tasks of the authors' 2023 release ("The
// Surprising Computational Power of Nondeterministic Stack RNNs", ICLR
// 2023), all entries of one task table.
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
// symbols separated by single spaces; an empty line is the empty string,
// and so is a line of "(empty)" alone (EmptyString, as cfl generate prints
// one), unless that is a symbol.
//
// The tasks are built by NewTask, TaskFor and TaskWith from the task table
// (see "Tasks" below), and the paper's five also by the New* constructors.
// Datasets follow the paper's training protocol: Task.SampleBatches draws
// one length uniformly from the valid lengths per batch; SampleTestSet
// draws a fixed number of strings per length. The sampled sets are held in
// memory, so a request for more than MaxSampleWords words of strings is
// refused with an error (CheckSampleSize). ComputeLowerBound gives the
// per-symbol cross-entropy of the source distribution
// p(w) = (1/K)·p(w | |w|), the lower bound against which models are
// measured.
//
// # Tasks
//
// AllTasks returns the task table: one TaskInfo per task, with its name
// (as on command lines and in saved settings), its title for figures, a
// one-line description of its strings and alphabet, its parameters with
// their defaults, the |Q| and |Γ| of nondeterministic-stack models on it,
// and the function that builds its Language: the sampler, the exact
// p(w | n), the valid lengths and membership. Command-line flags, task
// lists, help text and figure titles all come from the table, so adding a
// task is adding one entry to it (in tasks.go). TaskNames lists the
// paper's five tasks, AllTaskNames every task.
//
// The paper's five tasks are PCFGs (marked reversal {w # wᴿ}, unmarked
// reversal {w wᴿ}, padded reversal {w aᵖ wᴿ}, Dyck D₂ and the hardest CFL;
// NewHardestCFL spells out the last grammar). Given a length n, a string
// has probability p_G(w)/p_G(|w| = n), and the valid lengths are those the
// grammar generates.
//
// The seven tasks of the 2023 release are not context-free. Each is
// uniform: given a length n, each of the N(n) strings of that length has
// probability 1/N(n), so log p(w | n) = −log N(n). With w ∈ {0, 1}^k, k ≥ 0,
// and # the marker, they are, with their symbols as the release prints
// them:
//
//	count-3                            aᵏ bᵏ cᵏ          n = 3k     N(n) = 1
//	marked-copy                        w # w             n = 2k+1   N(n) = 2^k
//	unmarked-copy                      w w               n = 2k     N(n) = 2^k
//	marked-reverse-and-copy            w # wᴿ # w        n = 3k+2   N(n) = m^k
//	unmarked-reverse-and-copy          w wᴿ w            n = 3k     N(n) = 2^k
//	count-and-copy                     w #ᵏ w            n = 3k     N(n) = 2^k
//	unmarked-copy-different-alphabets  w w′              n = 2k     N(n) = 2^k
//
// where in marked-reverse-and-copy w is over the m symbol types 0 … m−1
// (the symbol-types parameter, 2 by default) and in
// unmarked-copy-different-alphabets w′ is w with 0 written 2 and 1 written
// 3. A string is sampled by drawing w uniformly. Everything built on the
// source distribution (the lower bound, the sampled training, validation
// and test sets) is computed the same way for both kinds of task.
//
// # Task parameters
//
// A task may have integer parameters (TaskInfo.Params), given to TaskWith
// as Params; the paper's values are the defaults, and a Task's Params lists
// only those that differ from them, so settings saved before a task had
// parameters, which name none, still describe the same task. For the
// capacity experiment of the 2023 release:
//
//   - symbol-types m of marked reversal and unmarked reversal: the grammar
//     has S → a S a with probability Cont(60)/m for each of the symbols
//     a = 0 … m−1 (so m = 2 is the paper's grammar, rule for rule);
//   - bracket-types m of Dyck: T → l S r with Cont(39)/m and T → l r with
//     (1 − Cont(39))/m for each of m bracket pairs, named as the release
//     names them: ( ), [ ], { }, < >, then (( )), [[ ]], and so on;
//   - symbol-types m of marked-reverse-and-copy, above.
//
// Each is between 1 and MaxTypes. Every string of such a grammar has the
// probability of its shape with one type times m^(−pairs), uniform over
// the types.
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
//
// The tasks of the 2023 release have no grammar and one definition,
// "paper"; asking for "released" is an error.
//
// # Grammar files
//
// A PCFG of the user's is a text file read by ReadPCFGFile (and written by
// WritePCFG), one rule per line:
//
//	LHS -> RHS1 RHS2 … [p]
//
// with the rule's probability p in brackets at the end of the line (→ may
// be written for ->). Symbols are separated by white space. The
// nonterminals are exactly the symbols that appear as a left side; every
// other symbol of a right side is a terminal. A symbol in double quotes
// (Go's syntax, as "#" or "->") is always a terminal, which lets a
// terminal be written that would otherwise be read as syntax; a quoted
// symbol that is also a left side is an error. An empty right side is an
// ε rule ("A -> [0.5]"). A token that begins with # begins a comment,
// which runs to the end of the line (so a terminal # must be quoted), and
// blank lines are skipped. The first rule's left side is the start
// symbol; the terminals are indexed in their order of first appearance.
// The probabilities of the rules of each left side must sum to 1 within
// GrammarFileProbTol (1e-6; such sums are renormalized): a sum outside it
// is an error naming the file and the line of that left side's first
// rule. A line that is not valid UTF-8, or a quoted symbol whose escapes
// ("\xff") make one that is not, is an error (ErrInvalidUTF8). Errors
// about one line are *LineError values naming the file and the line. A
// grammar with no terminal symbols (whose right sides are all empty or
// all left sides) is an error naming the file: it derives no string of
// one symbol or more. A grammar may have thousands of rules and symbols, but at
// most MaxChainSymbols (4,000) of its symbols may depend on other
// nonterminals of the same length through unary or nullable rules (their
// closure is a dense matrix); the words such rules lead to, and the
// symbols whose rules lead to words alone (A -> "a"), do not count.
// What is valid but probably a mistake (rules the start symbol never
// reaches, terminals that only they hold, nonterminals that derive no
// string) is listed by PCFG.Warnings, which cfl prints.
//
//	# {w # wᴿ : w ∈ {0, 1}*}
//	S -> "0" S "0" [0.4918032786885246]
//	S -> "1" S "1" [0.4918032786885246]
//	S -> "#" [0.016393442622950838]
//
// NewGrammarTask makes a Task of such a grammar, with exact sampling,
// p(w | n), valid lengths and lower bound, as for the paper's tasks. The
// paper's five grammars are in this format in the repository's
// examples/grammars directory, as the paper states them (TASK.pcfg) and as
// the authors' released code samples them (TASK.released.pcfg), and a
// test checks that each gives the built-in task's probabilities.
//
// # The user's own strings
//
// A data set of the user's is text files of strings, one per line, with
// symbols separated by white space (the format of ReadStrings). Its
// vocabulary is that of the training file (ReadVocabularyFile: its
// distinct symbols, sorted), and the strings of the other files are read
// with it, so that an unknown symbol is an error naming the file and the
// line, as is a line that is not valid UTF-8 (ErrInvalidUTF8). NewTextTask makes a Task of the vocabulary, which has no
// distribution (HasDistribution is false): there is no lower bound, and a
// model is measured by its cross-entropy and perplexity alone.
// BatchByLength groups the strings into batches of one length, as the
// paper's protocol does: lengths in increasing order, each length's
// strings in file order, a given number at a time; training shuffles the
// batches every epoch.
//
// # Strings outside the language
//
// A string that is not in a task's language has probability 0:
// LogProbGivenLength returns −Inf and Task.Contains false for it, and
// SourceLogProb and ComputeLowerBound, which need its probability, return
// ErrNotInLanguage (in a *StringError naming its index in a set).
//
// # Errors and panics
//
// Grammars, grammar files, strings, lengths, counts and task parameters
// are checked, and refused with errors that name the file, line or string
// where there is one (MaxLength, MaxSampleWords and MaxChainSymbols bound
// what fits in memory). Panics are kept for programmer errors: methods
// called on a nil or zero-value Task or PCFG (use the constructors), a nil
// reader or writer, and FormatString given an index outside its symbols.
package data
