package data

import (
	"strings"
	"testing"
)

// The paper's grammars, in both definitions, warn of nothing; each kind
// of mistake is named, and only it.
func TestPCFGWarnings(t *testing.T) {
	for _, info := range AllTasks() {
		if !info.IsGrammar() {
			continue
		}
		for _, def := range []Grammar{GrammarPaper, GrammarReleased} {
			task, err := NewTask(info.Name)
			if err != nil {
				t.Fatal(err)
			}
			if task, err = task.WithGrammar(def); err != nil {
				t.Fatal(err)
			}
			if w := task.Grammar().Warnings(); len(w) > 0 {
				t.Errorf("%s (%s): %q", info.Name, def, w)
			}
		}
	}
	for _, c := range []struct {
		name, src string
		want      []string // one substring per warning, in order
	}{
		{"clean", "S -> a S b [0.4]\nS -> [0.6]\n", nil},
		{"dead rule", "S -> a S b [0.4]\nS -> [0.6]\nX -> c [1]\n", []string{"never reached from the start symbol S, whose rules are dead: X", "in no string: c"}},
		{"no string", "S -> a [0.5]\nS -> Y [0.5]\nY -> Y c [1]\n", []string{"in no string: c", "derive no string (every derivation from them goes on forever): Y"}},
		{"zero probability", "S -> a [1]\nS -> b [0]\n", []string{"probability 0"}},
		{"empty language", "S -> a S [1]\n", []string{"in no string: a", "derive no string (every derivation from them goes on forever): S"}},
		{"productive only inside", "S -> a T [1]\nT -> b T [0.5]\nT -> [0.5]\n", nil},
		{"improper", "S -> S S [0.9]\nS -> a [0.1]\n", nil},
	} {
		g, err := ReadPCFG(strings.NewReader(c.src), c.name)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		w := g.Warnings()
		if len(w) != len(c.want) {
			t.Errorf("%s: warnings %q, want %d", c.name, w, len(c.want))
			continue
		}
		for i := range w {
			if !strings.Contains(w[i], c.want[i]) {
				t.Errorf("%s: warning %q, want %q", c.name, w[i], c.want[i])
			}
		}
	}
}
