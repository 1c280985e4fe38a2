package data

import (
	"bytes"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// fuzzMaxLen is the longest length the fuzz targets sample and enumerate:
// the grammar's distribution is checked on every length up to it.
const fuzzMaxLen = 4

// FuzzReadPCFG reads arbitrary grammar files. A file is either refused
// with an error or gives a grammar that
//   - writes and reads back into the same rules and terminals;
//   - for every length n ≤ fuzzMaxLen that it generates, samples strings of
//     length n that it contains, with a finite log p(w | n) ≤ 0;
//   - gives probabilities p(w | n) that sum to 1 over all strings of
//     length n (enumerated where there are at most 256 of them) and
//     nothing to strings of the lengths it does not generate;
//
// and the same holds of its ε- and unary-rule removal, when that succeeds.
// The seeds are the paper's grammars (examples/grammars) and small
// grammars with ε rules, unary chains, unproductive and unreachable
// nonterminals, and probabilities that need renormalizing.
func FuzzReadPCFG(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("..", "examples", "grammars", "*.pcfg"))
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		"S -> \"a\" [1]\n",
		"S -> [0.5]\nS -> \"a\" S [0.5]\n",
		"S -> A [1]\nA -> B [0.5]\nA -> \"x\" [0.5]\nB -> A A [1]\n",
		"S -> S S [0.4]\nS -> \"(\" S \")\" [0.3]\nS -> [0.3]\n",
		"S -> A [0.5]\nS -> \"b\" [0.5]\nA -> A \"a\" [1]\n",                 // A unproductive
		"S -> \"a\" [1]\nU -> \"u\" U [1]\n",                                 // U unreachable
		"S -> \"a\" [0.3333333]\nS -> \"b\" [0.3333333]\nS -> [0.3333333]\n", // renormalized
		"S -> S [1]\n",
		"S → \"#\" \"->\" x [1] # comment\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<12 {
			return // keep each input's checks small
		}
		g, err := ReadPCFG(bytes.NewReader(b), "fuzz.pcfg")
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error")
			}
			return
		}
		if len(g.Rules()) > 64 {
			return
		}
		var buf bytes.Buffer
		if err := WritePCFG(&buf, g, "round trip"); err != nil {
			t.Fatal(err)
		}
		h, err := ReadPCFG(&buf, "written.pcfg")
		if err != nil {
			t.Fatalf("written grammar refused: %v\n%s", err, buf.String())
		}
		if !slices.EqualFunc(g.Rules(), h.Rules(), ruleEqual) || !slices.Equal(g.Terminals(), h.Terminals()) || g.Start() != h.Start() {
			t.Fatalf("round trip changed the grammar:\n%v %v\n%v %v", g.Rules(), g.Terminals(), h.Rules(), h.Terminals())
		}
		checkFuzzGrammar(t, g)
		// The warnings are the same for the grammar written and read back.
		if w, v := g.Warnings(), h.Warnings(); !slices.Equal(w, v) {
			t.Fatalf("warnings %q, after the round trip %q", w, v)
		}
		if r, kept, err := g.RemoveEpsilonAndUnaryRules(); err == nil {
			if !(kept > 0 && kept <= 1+1e-12) {
				t.Fatalf("removal kept probability %v", kept)
			}
			for _, rule := range r.Rules() {
				if len(rule.RHS) == 0 || len(rule.RHS) == 1 && slices.Contains(r.Nonterminals(), rule.RHS[0]) {
					t.Fatalf("removal left rule %v", rule)
				}
			}
			checkFuzzGrammar(t, r)
		}
	})
}

func ruleEqual(a, b Rule) bool {
	return a.LHS == b.LHS && a.Prob == b.Prob && slices.Equal(a.RHS, b.RHS)
}

// checkFuzzGrammar checks g's distribution on the lengths up to fuzzMaxLen.
func checkFuzzGrammar(t *testing.T, g *PCFG) {
	t.Helper()
	valid, err := g.ValidLengths(0, fuzzMaxLen)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	T := len(g.Terminals())
	for n := 0; n <= fuzzMaxLen; n++ {
		generates := slices.Contains(valid, n)
		if generates {
			for range 3 {
				w, err := g.Sample(n, rng)
				if err != nil {
					t.Fatalf("n = %d: %v", n, err)
				}
				if len(w) != n {
					t.Fatalf("n = %d: sampled %v", n, w)
				}
				lp, err := g.LogProbGivenLength(w)
				if err != nil || math.IsNaN(lp) || math.IsInf(lp, 0) || lp > 1e-9 {
					t.Fatalf("n = %d: log p(%v | n) = %v, %v", n, w, lp, err)
				}
			}
		} else if _, err := g.Sample(n, rng); err == nil {
			t.Fatalf("n = %d: sampled a length the grammar does not generate", n)
		}
		count := 1
		for range n {
			if count *= T; count > 256 {
				break
			}
		}
		if T == 0 && n > 0 || count > 256 {
			continue
		}
		var sum float64
		w := make([]int, n)
		for i := 0; i < count; i++ {
			for j, x := 0, i; j < n; j, x = j+1, x/T {
				w[j] = x % T
			}
			lp, err := g.LogProbGivenLength(w)
			if !generates {
				if err == nil && !math.IsInf(lp, -1) {
					t.Fatalf("n = %d not generated, yet log p(%v | n) = %v", n, w, lp)
				}
				continue
			}
			if err != nil {
				t.Fatalf("n = %d: log p(%v | n): %v", n, w, err)
			}
			sum += math.Exp(lp)
		}
		if generates && math.Abs(sum-1) > 1e-9 {
			t.Fatalf("n = %d: p(w | n) sums to %v over the %d strings\n%s", n, sum, count, describeRules(g))
		}
	}
}

func describeRules(g *PCFG) string {
	var sb strings.Builder
	WritePCFG(&sb, g, "")
	return sb.String()
}

// FuzzTextFile reads arbitrary files of the user's strings. A file is
// either refused with an error naming it, or its vocabulary
// (ReadVocabularyFile: sorted, distinct, without EOS) reads every line of
// it (ReadStringsFile), uses every symbol, and the strings written in text
// form (WriteStrings) read back into the same strings.
func FuzzTextFile(f *testing.F) {
	for _, s := range []string{
		"a b\nb a\n", "\ufeffx y\r\nz\r\rz", "", "\n\n", " \t\n",
		"a\u00a0b\u0085c\u2028d\n", "EOS\n", "x EOS y\n", "\xff\xfe a\n", "( ( ) )\n[ ]\n",
		"(empty)\n", "a\n(empty)\n", "(empty)\n(empty) a\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<12 {
			return
		}
		path := filepath.Join(t.TempDir(), "train.txt")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		vocab, err := ReadVocabularyFile(path)
		if err != nil {
			if !strings.Contains(err.Error(), path) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if !slices.IsSorted(vocab) || len(slices.Compact(slices.Clone(vocab))) != len(vocab) || slices.Contains(vocab, EOS) {
			t.Fatalf("vocabulary %q: want sorted, distinct symbols without %s", vocab, EOS)
		}
		ws, err := ReadStringsFile(path, vocab)
		if err != nil {
			t.Fatalf("the file's own vocabulary %q does not read it: %v", vocab, err)
		}
		used := make([]bool, len(vocab))
		for _, w := range ws {
			for _, x := range w {
				used[x] = true
			}
		}
		if i := slices.Index(used, false); i >= 0 {
			t.Fatalf("symbol %q of the vocabulary is in no string", vocab[i])
		}
		var buf bytes.Buffer
		if err := WriteStrings(&buf, ws, vocab); err != nil {
			t.Fatal(err)
		}
		back, err := ReadStrings(&buf, "written", vocab)
		if err != nil || !slices.EqualFunc(back, ws, slices.Equal[[]int]) {
			t.Fatalf("written and read back: %v (%v), want %v", back, err, ws)
		}
	})
}
