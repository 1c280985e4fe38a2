package cli

import (
	"io"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/data"
)

func TestAddGrammarFlag(t *testing.T) {
	parse := func(args ...string) (data.Grammar, error) {
		fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
		fs.SetOutput(io.Discard)
		g := AddGrammarFlag(fs)
		err := fs.Parse(args)
		return *g, err
	}
	if g, err := parse(); err != nil || g != data.GrammarPaper {
		t.Errorf("default: %q, %v; want paper", g, err)
	}
	if g, err := parse("--grammar", "released"); err != nil || g != data.GrammarReleased {
		t.Errorf("--grammar released: %q, %v", g, err)
	}
	_, err := parse("--grammar=authors")
	if err == nil {
		t.Fatal("no error for an unknown grammar")
	}
	for _, want := range []string{"--grammar", `"authors"`, strings.Join(data.GrammarNames(), ", ")} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}
