package main

import (
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
)

func init() {
	prog.Register("sample", "sample strings of a CFL task", runSample)
}

// runSample writes --count strings of --task, one per line (a chunk at a
// time: any count fits in memory), each with a
// length drawn uniformly from the valid lengths in --lengths and then drawn
// from the task's distribution (its PCFG under the definition --grammar,
// or uniform for a task of the 2023 release) conditioned on that length.
func runSample(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("sample", stdout)
	taskName := fs.String("task", "", "task (required, or --grammar-file): "+taskNames())
	params := taskParamFlags(fs)
	grammar := cli.AddGrammarFlag(fs)
	grammarFile := grammarFileFlag(fs)
	count := fs.Int("count", 0, "number of strings (required, at least 1)")
	lengths := fs.String("lengths", "", "MIN:MAX range of lengths (required)")
	seed := fs.Uint64("seed", 1, "random seed")
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
	if err := requireFlags(fs, "count", "lengths"); err != nil {
		return err
	}
	if *count < 1 {
		return fmt.Errorf("--count %d must be at least 1", *count)
	}
	minLen, maxLen, err := parseLengths(*lengths)
	if err != nil {
		return fmt.Errorf("--lengths: %w", err)
	}
	// The strings are drawn and written a chunk at a time, so that any
	// --count fits in memory; the strings are those of one call of
	// data.SampleStrings, which draws them one after the other.
	rng := rand.New(rand.NewPCG(*seed, 0))
	const chunk = 4096 // far below data.MaxSampleWords at any valid length
	for left := *count; ; left -= chunk {
		ws, err := data.SampleStrings(t, min(left, chunk), minLen, maxLen, rng)
		if err != nil {
			return fmt.Errorf("--lengths %s: %w", *lengths, err)
		}
		if err := data.WriteStrings(stdout, ws, t.Terminals()); err != nil {
			return err
		}
		if left <= chunk {
			return nil
		}
	}
}
