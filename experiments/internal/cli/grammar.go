package cli

import (
	"strings"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/data"
)

// grammarValue is a data.Grammar as a pflag.Value.
type grammarValue struct{ g *data.Grammar }

func (v grammarValue) String() string     { return v.g.String() }
func (v grammarValue) Set(s string) error { return v.g.Set(s) }
func (v grammarValue) Type() string       { return "grammar" }

// AddGrammarFlag registers --grammar, the definition of the task grammars
// (data.GrammarNames: paper, the default, or released), on fs and returns
// its value. An unknown name is a parse error that names the flag and lists
// the valid names.
func AddGrammarFlag(fs *pflag.FlagSet) *data.Grammar {
	g := new(data.Grammar)
	*g = data.GrammarPaper
	fs.Var(grammarValue{g}, "grammar", "task definition: "+strings.Join(data.GrammarNames(), " or ")+
		" (paper: the grammars as the paper states them; released: as the authors' released code samples them, ε and unary rules removed)")
	return g
}
