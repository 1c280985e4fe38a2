package nsrnn

import (
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/nsrnn/nsrnn/stacks"
)

// TestKindTable: the library's kinds register in the paper's order, then
// the vector stack, and each declaration is consistent with Config.
func TestKindTable(t *testing.T) {
	want := []string{LSTM, Gref, JM, NS, NSS, NSU, RNS, VRNS}
	if got := KindNames(); !slices.Equal(got[:min(len(got), len(want))], want) {
		t.Errorf("KindNames() = %v, want %v first", got, want)
	}
	for _, k := range AllKinds() {
		for _, h := range k.Hyperparameters {
			if h.Name == "" || !strings.Contains(h.Doc, "%s") || FieldFlag(h.Field) == "" {
				t.Errorf("%s: hyperparameter %+v lacks a name, a doc naming the kinds or a field", k.Name, h)
			}
		}
	}
	if got := FieldFlag("StackEmbedding"); got != "stack-embedding" {
		t.Errorf("FieldFlag(StackEmbedding) = %q", got)
	}
	if got := strings.Join(StackFields(), ","); got != "States,Symbols,Window,Bottom,StackEmbedding,BottomVector,PushHiddenState,DepthLimit" {
		t.Errorf("StackFields() = %s", got)
	}
}

// TestRegisterKindPanics: an inconsistent declaration or a name already
// registered is a programmer error, and leaves the table as it was.
func TestRegisterKindPanics(t *testing.T) {
	before := KindNames()
	noStack := func(n string, c Config) (stacks.Layer, error) { return nil, nil }
	for _, tc := range []struct {
		name string
		k    Kind
	}{
		{"duplicate", Kind{Name: RNS}},
		{"empty name", Kind{}},
		{"name with a comma", Kind{Name: "a,b"}},
		{"common field", Kind{Name: "x1", Hyperparameters: []Hyperparameter{{Field: "Hidden"}}}},
		{"unknown field", Kind{Name: "x2", Hyperparameters: []Hyperparameter{{Field: "Depth"}}}},
		{"field twice", Kind{Name: "x3", Hyperparameters: []Hyperparameter{{Field: "Window"}, {Field: "Window"}}}},
		{"stack without sizes", Kind{Name: "x4", Stack: noStack}},
		{"option with a field", Kind{Name: "x5", Hyperparameters: []Hyperparameter{{Field: "Window", Option: "w"}}}},
		{"option not a flag name", Kind{Name: "x6", Hyperparameters: []Hyperparameter{{Option: "Counters"}}}},
		{"option named as a field's flag", Kind{Name: "x7", Hyperparameters: []Hyperparameter{{Option: "states"}}}},
		{"option twice", Kind{Name: "x8", Hyperparameters: []Hyperparameter{{Option: "k"}, {Option: "k"}}}},
		{"option named as a common field's flag", Kind{Name: "x9", Hyperparameters: []Hyperparameter{{Option: "hidden"}}}},
		{"option named as another common flag", Kind{Name: "x10", Hyperparameters: []Hyperparameter{{Option: "input-vocab"}}}},
		{"option named model", Kind{Name: "x11", Hyperparameters: []Hyperparameter{{Option: "model"}}}},
		{"name with a slash", Kind{Name: "a/b"}},
		{"name with a no-break space", Kind{Name: "a\u00a0b"}},
		{"name with a control", Kind{Name: "a\rb"}},
		{"name with an equals sign", Kind{Name: "x=1"}},
		{"name ..", Kind{Name: ".."}},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", tc.name)
				}
			}()
			RegisterKind(tc.k)
		}()
	}
	if got := KindNames(); !slices.Equal(got, before) {
		t.Errorf("refused registrations changed the table: %v, was %v", got, before)
	}
	// Readers and a registration may run concurrently (go test -race).
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				if _, err := LookupKind(RNS); err != nil {
					t.Error(err)
				}
				_ = AllKinds()
			}
		}()
	}
	wg.Wait()
}

// TestNotApplicableMessages: a field set for a kind that does not declare
// it names the kinds that do.
func TestNotApplicableMessages(t *testing.T) {
	c := Config{Kind: LSTM, InputVocab: 3, OutputVocab: 4, Hidden: 5, DepthLimit: 3, BottomVector: stacks.ZeroBottom}
	err := c.Validate()
	for _, want := range []string{"a bottom vector applies only to vrns, not lstm", "a depth limit applies only to jm, not lstm"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v lacks %q", err, want)
		}
	}
}
