package data

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// grammarFilesDir holds the paper's five grammars in the format of grammar
// files, under both definitions (TestGrammarFilesMatchTasks).
const grammarFilesDir = "../examples/grammars"

// grammarFileName is the example file of a task under a definition.
func grammarFileName(task string, g Grammar) string {
	if g == GrammarReleased {
		return task + ".released.pcfg"
	}
	return task + ".pcfg"
}

// TestGrammarFilesMatchTasks checks the shipped grammar files: each is
// what WritePCFG writes for its built-in task (rewritten with -update),
// and read back it gives the task's probabilities: the same valid
// lengths, log p(w | n) of sampled strings, and lower bound of a sample.
func TestGrammarFilesMatchTasks(t *testing.T) {
	for _, name := range TaskNames() {
		for _, def := range []Grammar{GrammarPaper, GrammarReleased} {
			t.Run(name+"/"+string(def), func(t *testing.T) {
				task := mustTaskFor(t, name, def)
				path := filepath.Join(grammarFilesDir, grammarFileName(name, def))
				header := task.Info().Title + ": the grammar of the " + name + " task of DuSell & Chiang (2022), "
				if def == GrammarReleased {
					header += "as the authors' released code samples it (its ε and unary rules removed; cfl --grammar released)."
				} else {
					header += "as the paper states it (cfl --task " + name + ")."
				}
				header += "\nGrammar file format: go doc github.com/nsrnn/nsrnn/data (Grammar files)."
				var want bytes.Buffer
				if err := WritePCFG(&want, task.Grammar(), header); err != nil {
					t.Fatal(err)
				}
				if *updateGolden {
					if err := os.WriteFile(path, want.Bytes(), 0o666); err != nil {
						t.Fatal(err)
					}
				}
				got, err := os.ReadFile(path)
				if err != nil {
					t.Fatalf("%v (go test ./data -run GrammarFiles -update writes it)", err)
				}
				if !bytes.Equal(got, want.Bytes()) {
					t.Errorf("%s is not what WritePCFG writes for %s (go test ./data -run GrammarFiles -update rewrites it)", path, task)
				}
				g, err := ReadPCFGFile(path)
				if err != nil {
					t.Fatal(err)
				}
				ft, err := NewGrammarTask(filepath.Base(path), g, "")
				if err != nil {
					t.Fatal(err)
				}
				compareTasks(t, task, ft)
			})
		}
	}
}

// compareTasks checks that task and ft, the same grammar read from a file
// (whose terminals may be in another order), give the same valid lengths,
// the same log p(w | n) on strings sampled from each, and the same lower
// bound of a sample.
func compareTasks(t *testing.T, task, ft *Task) {
	t.Helper()
	terms, fterms := task.Terminals(), ft.Terminals()
	if !slices.Equal(slices.Sorted(slices.Values(terms)), slices.Sorted(slices.Values(fterms))) {
		t.Fatalf("terminals %q, file's %q", terms, fterms)
	}
	toFile := func(w []int) []int {
		v, err := ParseString(FormatString(w, terms), fterms)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	a, err := task.ValidLengths(0, 120)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ft.ValidLengths(0, 120)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a, b) {
		t.Errorf("valid lengths %v, file's %v", a, b)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	ws, err := SampleStrings(task, 40, 0, 60, rng)
	if err != nil {
		t.Fatal(err)
	}
	var fws [][]int
	for _, w := range ws {
		fws = append(fws, toFile(w))
	}
	// Strings sampled from the file's grammar too, in its terminals.
	more, err := SampleStrings(ft, 20, 0, 60, rng)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range more {
		v, err := ParseString(FormatString(w, fterms), terms)
		if err != nil {
			t.Fatal(err)
		}
		ws, fws = append(ws, v), append(fws, w)
	}
	for i := range ws {
		p, err := task.LogProbGivenLength(ws[i])
		if err != nil {
			t.Fatal(err)
		}
		q, err := ft.LogProbGivenLength(fws[i])
		if err != nil {
			t.Fatal(err)
		}
		if math.IsInf(p, -1) || math.Abs(p-q) > 1e-12*max(1, math.Abs(p)) {
			t.Errorf("%q: log p(w | n) %v, file's %v", FormatString(ws[i], terms), p, q)
		}
	}
	lo, hi := 0, 60
	lb, err := ComputeLowerBound(task, ws, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	flb, err := ComputeLowerBound(ft, fws, lo, hi)
	if err != nil {
		t.Fatal(err)
	}
	if lb.ValidLengths != flb.ValidLengths || math.Abs(lb.Entropy-flb.Entropy) > 1e-12 {
		t.Errorf("lower bound %v over %d lengths, file's %v over %d", lb.Entropy, lb.ValidLengths, flb.Entropy, flb.ValidLengths)
	}
}

func TestReadPCFG(t *testing.T) {
	const text = `# a comment
S -> "a" S "b" [0.25]   # trailing comment
S -> [0.75]
`
	g, err := ReadPCFG(strings.NewReader(text), "g.pcfg")
	if err != nil {
		t.Fatal(err)
	}
	if g.Start() != "S" || !slices.Equal(g.Terminals(), []string{"a", "b"}) || len(g.Rules()) != 2 {
		t.Fatalf("start %q, terminals %q, rules %v", g.Start(), g.Terminals(), g.Rules())
	}
	lp, err := g.LogProb([]int{0, 1})
	if err != nil || math.Abs(lp-math.Log(0.25*0.75)) > 1e-15 {
		t.Errorf("log p(a b) = %v, %v; want log(0.25·0.75)", lp, err)
	}
	// Bare terminals, the arrow →, a start symbol that is not the first
	// terminal, probabilities within the file tolerance renormalized.
	g, err = ReadPCFG(strings.NewReader("T -> A A [1]\nA -> x [0.333333]\nA -> y [0.666667]\n"), "h.pcfg")
	if err != nil {
		t.Fatal(err)
	}
	if g.Start() != "T" || !slices.Equal(g.Terminals(), []string{"x", "y"}) {
		t.Errorf("start %q, terminals %q", g.Start(), g.Terminals())
	}
	// WritePCFG reads back as the same grammar.
	var buf bytes.Buffer
	if err := WritePCFG(&buf, g, "header\nsecond line"); err != nil {
		t.Fatal(err)
	}
	h, err := ReadPCFG(&buf, "again")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(g.Rules(), h.Rules(), func(a, b Rule) bool {
		return a.LHS == b.LHS && slices.Equal(a.RHS, b.RHS) && a.Prob == b.Prob
	}) {
		t.Errorf("rules %v read back as %v", g.Rules(), h.Rules())
	}
}

// TestReadPCFGManyLexicalSymbols: a grammar file with more than
// MaxChainSymbols nonterminals whose rules lead to words alone (A → "a") is
// read, since they depend on no other nonterminal of the same length, and
// gives the probabilities it states; one with more symbols in unary chains
// than MaxChainSymbols is refused.
func TestReadPCFGManyLexicalSymbols(t *testing.T) {
	const k = 5000
	// grammar writes a start rule per nonterminal A_i of start(i), and
	// the rules of A_i of word(i).
	grammar := func(start, word func(i int) string) string {
		var b strings.Builder
		for i := range k {
			fmt.Fprintf(&b, "S -> %s [%v]\n", start(i), 1.0/k)
		}
		for i := range k {
			b.WriteString(word(i))
		}
		return b.String()
	}
	oneWord := func(i int) string { return fmt.Sprintf("A%d -> \"a%d\" [1]\n", i, i) }
	for _, test := range []struct {
		name string
		text string
		w    []int   // a string of the grammar
		want float64 // log p(w | len(w))
		err  string  // in the error, when refused
	}{
		{
			name: "binary start",
			text: grammar(func(i int) string { return fmt.Sprintf("A%d A%d", i, i) }, oneWord),
			w:    []int{0, 0}, want: math.Log(1.0 / k),
		},
		{
			name: "unary start",
			text: grammar(func(i int) string { return fmt.Sprintf("A%d", i) }, oneWord),
			w:    []int{k - 1}, want: math.Log(1.0 / k),
		},
		{
			name: "nullable words",
			text: grammar(func(i int) string { return fmt.Sprintf("A%d A%d", i, i) }, func(i int) string {
				return fmt.Sprintf("A%d -> \"a%d\" [0.5]\nA%d -> [0.5]\n", i, i, i)
			}),
			w: []int{1}, want: math.Log(1.0 / k),
		},
		{
			name: "unary chains",
			text: grammar(func(i int) string { return fmt.Sprintf("A%d", i) }, func(i int) string {
				return fmt.Sprintf("A%d -> B%d [1]\nB%d -> \"a%d\" [1]\n", i, i, i, i)
			}),
			err: "MaxChainSymbols",
		},
	} {
		t.Run(test.name, func(t *testing.T) {
			g, err := ReadPCFG(strings.NewReader(test.text), "g.pcfg")
			if test.err != "" {
				if err == nil || !strings.Contains(err.Error(), test.err) || !strings.Contains(err.Error(), "g.pcfg") {
					t.Fatalf("error %v, want one naming g.pcfg and saying %q", err, test.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if lp, err := g.LogProbGivenLength(test.w); err != nil || math.Abs(lp-test.want) > 1e-9 {
				t.Errorf("log p(%v | %d) = %v, %v; want %v", test.w, len(test.w), lp, err, test.want)
			}
		})
	}
}

func TestReadPCFGErrors(t *testing.T) {
	for _, test := range []struct {
		name, text string
		line       int    // 0: no line
		want       string // in the message
	}{
		{"no rules", "# nothing\n\n", 0, "no rules"},
		{"no arrow", "S a b [1]\n", 1, "want a rule"},
		{"arrow without spaces", "S->[0.5]\nS -> a [0.5]\n", 1, `separated by white space: "S->[0.5]" holds the arrow`},
		{"no probability, empty right side", "S -> a [0.5]\nS ->\n", 2, "the rule has no probability"},
		{"no probability", "S -> a\n", 1, "probability [p]"},
		{"bad probability", "S -> a [x]\n", 1, "not a number"},
		{"probability above 1", "S -> a [1.5]\n", 1, "not a number in [0, 1]"},
		{"sum below 1", "S -> a [0.5]\nS -> b [0.25]\n", 1, "sum to 0.75, not 1"},
		{"sum of a later symbol", "S -> A [1]\n\nA -> a [0.5]\nA -> b [0.6]\n", 3, "rules of A sum to"},
		{"quoted left side", `"S" -> a [1]` + "\n", 1, "quoted"},
		{"quoted nonterminal", "S -> \"S\" [0.5]\nS -> [0.5]\n", 1, "also the left side"},
		{"malformed quote", "S -> \"a [1]\n", 1, "malformed quoted symbol"},
		{"arrow joined to the right side", "S ->a [1]\n", 1, `separated by white space: "->a" holds the arrow`},
		{"quoted symbol with a space", "S -> \"a b\" [1]\n", 1, "no closing quote (a symbol cannot hold white space)"},
		{"second arrow", "S -> a -> b [1]\n", 1, "second ->"},
		{"probability inside", "S -> a [0.5] b [1]\n", 1, "before the end"},
		{"quoted non-UTF-8 terminal", "S -> a [0.5]\nS -> \"\\xff\" [0.5]\n", 2, "not valid UTF-8"},
		{"non-UTF-8 terminal", "S -> a [0.5]\nS -> b\xfe [0.5]\n", 2, "invalid UTF-8 at byte 7"},
		{"quoted raw non-UTF-8 terminal", "S -> \"\xc3\" [1]\n", 1, "invalid UTF-8"},
		{"non-UTF-8 comment", "# \xff\nS -> a [1]\n", 1, "invalid UTF-8"},
		{"only ε", "S -> [1]\n", 0, "no terminal symbols"},
		{"no terminals", "S -> S S [0.25]\nS -> A [0.25]\nS -> [0.5]\nA -> [1]\n", 0, "no terminal symbols"},
	} {
		t.Run(test.name, func(t *testing.T) {
			_, err := ReadPCFG(strings.NewReader(test.text), "g.pcfg")
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), test.want) || !strings.Contains(err.Error(), "g.pcfg") {
				t.Errorf("error %q does not name the file and say %q", err, test.want)
			}
			le, ok := errors.AsType[*LineError](err)
			switch {
			case test.line == 0 && ok:
				t.Errorf("error %q names line %d", err, le.Line)
			case test.line > 0 && (!ok || le.Line != test.line):
				t.Errorf("error %q does not name line %d", err, test.line)
			}
		})
	}
}

func TestTextTask(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "train.txt")
	if err := os.WriteFile(path, []byte("b a\n\nc a b\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	v, err := ReadVocabularyFile(path)
	if err != nil || !slices.Equal(v, []string{"a", "b", "c"}) {
		t.Fatalf("ReadVocabularyFile = %q, %v", v, err)
	}
	task, err := NewTextTask("train.txt", v)
	if err != nil {
		t.Fatal(err)
	}
	if task.HasDistribution() || task.Info().Group != GroupUser || task.EOS() != 3 {
		t.Errorf("HasDistribution %v, group %q, EOS %d", task.HasDistribution(), task.Info().Group, task.EOS())
	}
	if _, err := task.Sample(2, rand.New(rand.NewPCG(1, 1))); !errors.Is(err, ErrNoDistribution) {
		t.Errorf("Sample: %v", err)
	}
	if _, err := task.Contains([]int{0}); !errors.Is(err, ErrNoDistribution) {
		t.Errorf("Contains: %v", err)
	}
	if mustTaskFor(t, Dyck, GrammarPaper).HasDistribution() != true {
		t.Error("Dyck has no distribution")
	}
	// A line of EmptyString alone is the empty string, not a symbol
	// (as cfl generate writes it), unless another line has it among
	// other symbols.
	for text, want := range map[string][]string{
		"a b\n(empty)\n":          {"a", "b"},
		"(empty)\na\n(empty) a\n": {"(empty)", "a"},
	} {
		p := filepath.Join(dir, "empty.txt")
		if err := os.WriteFile(p, []byte(text), 0o666); err != nil {
			t.Fatal(err)
		}
		v, err := ReadVocabularyFile(p)
		if err != nil || !slices.Equal(v, want) {
			t.Errorf("ReadVocabularyFile of %q = %q, %v; want %q", text, v, err, want)
		}
	}
	bad := filepath.Join(dir, "bad.txt")
	if err := os.WriteFile(bad, []byte("a\na EOS\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadVocabularyFile(bad); err == nil || !strings.Contains(err.Error(), bad+":2:") {
		t.Errorf("EOS in a file: %v", err)
	}
	for _, terms := range [][]string{nil, {"a", "a"}, {"a b"}, {EOS}} {
		if _, err := NewTextTask("x", terms); err == nil {
			t.Errorf("NewTextTask(%q): no error", terms)
		}
	}
}

func TestBatchByLength(t *testing.T) {
	ws := [][]int{{1, 1}, {0}, {2, 2}, {1}, {0, 0}, {}, {2}}
	got, err := BatchByLength(ws, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := [][][]int{{{}}, {{0}, {1}}, {{2}}, {{1, 1}, {2, 2}}, {{0, 0}}}
	if !slices.EqualFunc(got, want, func(a, b [][]int) bool {
		return slices.EqualFunc(a, b, func(x, y []int) bool { return slices.Equal(x, y) })
	}) {
		t.Errorf("BatchByLength = %v, want %v", got, want)
	}
	if _, err := BatchByLength(ws, 0); err == nil {
		t.Error("batch size 0: no error")
	}
}

// A grammar with a terminal named EOS, the end symbol's name, makes no
// task: its strings would print like the end of a string.
func TestGrammarTaskRefusesEOS(t *testing.T) {
	g, err := ReadPCFG(strings.NewReader("S -> a S [0.5]\nS -> EOS [0.5]\n"), "eos.pcfg")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewGrammarTask("eos.pcfg", g, ""); err == nil || !strings.Contains(err.Error(), "EOS") {
		t.Errorf("a terminal EOS: error %v", err)
	}
	g, err = ReadPCFG(strings.NewReader("S -> a S [0.5]\nS -> b [0.5]\n"), "ok.pcfg")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewGrammarTask("ok.pcfg", g, ""); err != nil {
		t.Errorf("a grammar without EOS: %v", err)
	}
}
