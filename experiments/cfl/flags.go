package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/internal/readlimit"
	"github.com/nsrnn/nsrnn/protocol"
)

// parseLengths parses a length range written MIN:MAX, with
// 0 <= MIN <= MAX <= data.MaxLength. Errors do not name the flag; callers
// wrap them, e.g. fmt.Errorf("--lengths: %w", err).
func parseLengths(s string) (minLen, maxLen int, err error) {
	lo, hi, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, fmt.Errorf("malformed length range %q: want MIN:MAX", s)
	}
	minLen, err1 := strconv.Atoi(strings.TrimSpace(lo))
	maxLen, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("malformed length range %q: want MIN:MAX with integer bounds", s)
	}
	switch {
	case minLen < 0:
		return 0, 0, fmt.Errorf("length range %q: MIN %d is negative", s, minLen)
	case minLen > maxLen:
		return 0, 0, fmt.Errorf("length range %q: MIN %d > MAX %d", s, minLen, maxLen)
	case maxLen > data.MaxLength:
		return 0, 0, fmt.Errorf("length range %q: MAX %d exceeds %d", s, maxLen, data.MaxLength)
	}
	return minLen, maxLen, nil
}

// requireFlags returns an error naming the first of the named flags that
// was not set on the command line.
func requireFlags(fs interface{ Changed(string) bool }, names ...string) error {
	for _, n := range names {
		if !fs.Changed(n) {
			return fmt.Errorf("--%s is required", n)
		}
	}
	return nil
}

// taskFlag returns the task named by the --task flag's value, with the
// parameters of the task-parameter flags (taskParamFlags) under the
// definition of the --grammar flag. The errors name the flag at fault.
func taskFlag(name string, p data.Params, g data.Grammar) (*data.Task, error) {
	info, err := data.LookupTask(name)
	if err != nil {
		return nil, fmt.Errorf("--task: %w", err)
	}
	for _, k := range slices.Sorted(maps.Keys(p)) {
		if _, err := info.CheckParams(data.Params{k: p[k]}); err != nil {
			return nil, fmt.Errorf("--%s: %w", k, err)
		}
	}
	if g.String() != string(data.GrammarPaper) && !info.IsGrammar() {
		return nil, fmt.Errorf("--grammar %s: task %s is not defined by a grammar; --grammar applies to %s",
			g, name, joinNames(grammarTasks()))
	}
	t, err := data.TaskWith(name, p, g)
	if err != nil {
		return nil, fmt.Errorf("--task: %w", err)
	}
	return t, nil
}

// grammarFileFlag registers --grammar-file, a grammar of the user's in
// place of --task.
func grammarFileFlag(fs *pflag.FlagSet) *string {
	return fs.String("grammar-file", "", "a PCFG file of your own in place of --task (default: none; format: go doc github.com/nsrnn/nsrnn/data, Grammar files; examples in examples/grammars); --grammar released applies its ε- and unary-rule removal")
}

// taskOrGrammarFile returns the task of --task (taskFlag) or, when
// grammarFile is set, the task of the grammar file under the definition g
// with the file's digest (nil for --task). Exactly one of the two flags
// must be given, and the task-parameter flags (p) only with --task.
func taskOrGrammarFile(taskName, grammarFile string, p data.Params, g data.Grammar) (*data.Task, *protocol.FileDigest, error) {
	switch {
	case grammarFile == "" && taskName == "":
		return nil, nil, fmt.Errorf("--task is required, or --grammar-file (tasks: %s)", taskNames())
	case grammarFile == "":
		t, err := taskFlag(taskName, p, g)
		return t, nil, err
	case taskName != "":
		return nil, nil, fmt.Errorf("--task %s and --grammar-file %s: give one of them", taskName, grammarFile)
	case p != nil:
		return nil, nil, fmt.Errorf("--grammar-file %s: the task-parameter flags (%s) apply to --task only", grammarFile, strings.Join(data.TaskParamNames(), ", "))
	}
	t, d, err := protocol.GrammarFileTask(grammarFile)
	if err != nil {
		return nil, nil, fmt.Errorf("--grammar-file: %w", err)
	}
	if t, err = t.WithGrammar(g); err != nil {
		return nil, nil, fmt.Errorf("--grammar %s: --grammar-file %s: %w", g, grammarFile, err)
	}
	return t, &d, nil
}

// warnGrammar prints on stderr the warnings of the grammar of file, the
// grammar file of task t (none for a task of the table, file ""). Under
// --grammar released they are the transformed grammar's, and say so: a
// nonterminal reached in the file only through a removed unary rule of
// the start symbol is dead there.
func warnGrammar(stderr io.Writer, t *data.Task, file string) {
	if file == "" || t.Grammar() == nil {
		return
	}
	under := ""
	if t.Definition() == data.GrammarReleased {
		under = " (under --grammar released, after its ε- and unary-rule removal)"
	}
	for _, w := range t.Grammar().Warnings() {
		fmt.Fprintf(stderr, "warning: --grammar-file %s%s: %s\n", file, under, w)
	}
}

// grammarTasks lists the tasks defined by a grammar, which have both
// definitions of --grammar.
func grammarTasks() []string {
	var names []string
	for _, info := range data.AllTasks() {
		if info.IsGrammar() {
			names = append(names, info.Name)
		}
	}
	return names
}

// taskNames lists every task of the table, for the help of --task.
func taskNames() string { return joinNames(data.AllTaskNames()) }

// taskParamFlags registers a flag for each parameter of the tasks of the
// table (--symbol-types, --bracket-types), whose help names the tasks
// that take it, and returns a function giving the values of those set on
// the command line (nil if none): taskFlag checks that the task takes
// them.
func taskParamFlags(fs *pflag.FlagSet) func() data.Params {
	names := data.TaskParamNames()
	for _, name := range names {
		var tasks []string
		var p data.TaskParam
		for _, info := range data.AllTasks() {
			if q, ok := info.Param(name); ok {
				tasks, p = append(tasks, info.Name), q
			}
		}
		fs.Int(name, p.Default, fmt.Sprintf("%s, %d to %d, for %s (the paper's is the default)", p.Usage, p.Min, p.Max, joinNames(tasks)))
	}
	return func() data.Params {
		var p data.Params
		for _, name := range names {
			if fs.Changed(name) {
				if p == nil {
					p = data.Params{}
				}
				p[name], _ = fs.GetInt(name)
			}
		}
		return p
	}
}

// taskLabel names a task in messages: its name, followed by its definition
// when that is not the default.
func taskLabel(task string, g data.Grammar) string {
	if g.String() == string(data.GrammarPaper) {
		return task
	}
	return fmt.Sprintf("%s (%s grammar)", task, g)
}

// notInLanguage names the task in err when it says that the string w is
// not in the task's language (data.ErrNotInLanguage), and says so when w
// is the empty string (an empty line, which a file may end with
// unawares); it returns other errors as they are.
func notInLanguage(err error, t *data.Task, w []int) error {
	if errors.Is(err, data.ErrNotInLanguage) {
		if len(w) == 0 {
			return fmt.Errorf("the empty string (an empty line) is not in the language of %s: %w", t, err)
		}
		return fmt.Errorf("%w of %s", err, t)
	}
	return err
}

// joinNames joins names with commas.
func joinNames(names []string) string { return strings.Join(names, ", ") }

// readIn reads the strings of --in, over the given symbols, from the named
// file or, when in is empty, from standard input, at most
// data.MaxTextBytes; no strings is an error.
// It also returns the input's name for messages ("<stdin>" or the file).
func readIn(in string, symbols []string) (ws [][]int, name string, err error) {
	name = "<stdin>"
	var r io.Reader = os.Stdin
	if in != "" && in != "-" {
		f, err := os.Open(in)
		if err != nil {
			return nil, "", fmt.Errorf("--in: %w", err)
		}
		defer f.Close()
		name, r = in, f
	}
	if ws, err = data.ReadStrings(readlimit.Reader(r, name, data.MaxTextBytes), name, symbols); err != nil {
		return nil, "", err
	}
	if len(ws) == 0 {
		return nil, "", fmt.Errorf("%s: no strings", name)
	}
	return ws, name, nil
}
