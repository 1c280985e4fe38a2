package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
)

func init() {
	prog.Register("entropy", "compute the true-entropy lower bound of a set of strings", runEntropy)
}

// runEntropy reads strings of --task and prints the per-symbol cross-entropy
// of the source distribution p(w) = (1/K)·p(w | |w|) on them, the lower
// bound of a model's cross-entropy, in nats: p(w | |w|) = p_G(w)/p_G(|w|)
// for a task's grammar G under the definition --grammar, 1/N(|w|) for a
// task of the 2023 release. A string outside the task's language is an
// error naming its line.
func runEntropy(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("entropy", stdout)
	taskName := fs.String("task", "", "task (required, or --grammar-file): "+taskNames())
	params := taskParamFlags(fs)
	grammar := cli.AddGrammarFlag(fs)
	grammarFile := grammarFileFlag(fs)
	lengths := fs.String("lengths", "", "MIN:MAX range of lengths of the source distribution (required)")
	in := fs.String("in", "", "file of strings, one per line (- or default: standard input)")
	asJSON := fs.Bool("json", false, "print one JSON object")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	t, _, err := taskOrGrammarFile(*taskName, *grammarFile, params(), *grammar)
	if err != nil {
		return err
	}
	warnGrammar(stderr, t, *grammarFile)
	if err := requireFlags(fs, "lengths"); err != nil {
		return err
	}
	minLen, maxLen, err := parseLengths(*lengths)
	if err != nil {
		return fmt.Errorf("--lengths: %w", err)
	}
	if ns, err := t.ValidLengths(minLen, maxLen); err != nil {
		return fmt.Errorf("--lengths: %w", err)
	} else if len(ns) == 0 {
		return fmt.Errorf("--lengths: task %s has no strings with length in [%d, %d]", t, minLen, maxLen)
	}

	ws, name, err := readIn(*in, t.Terminals())
	if err != nil {
		return err
	}
	lb, err := data.ComputeLowerBound(t, ws, minLen, maxLen)
	if err != nil {
		if se, ok := errors.AsType[*data.StringError](err); ok {
			return &data.LineError{Name: name, Line: se.Index + 1, Err: notInLanguage(se.Err, t, ws[se.Index])}
		}
		return err
	}
	if *asJSON {
		b, err := json.Marshal(lb)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s\n", b)
		return err
	}
	_, err = fmt.Fprintf(stdout, "strings        %d\nsymbols        %d (EOS included)\nlengths        %d in [%d, %d] that the task's strings can have\nlower bound    %.6f nats/symbol\n",
		lb.Strings, lb.Symbols, lb.ValidLengths, minLen, maxLen, lb.Entropy)
	return err
}
