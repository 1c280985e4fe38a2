package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/nsrnn/nsrnn/data/ptb"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
)

func init() {
	prog.Register("generate", "sample sentences from a trained language model", runGenerate)
}

// runGenerate samples text from the model of a finished ptb train run (or
// the best so far of an unfinished one, from its checkpoint) in stream
// mode (Model.SampleEach, written as drawn): every sentence starts from
// the initial state with <eos> fed first, as in the corpus, where every
// sentence follows an <eos>, and ends when <eos> is drawn. Sentence i
// depends only on --seed and i, so the output for a smaller --words or
// --sentences is a prefix of the output for a larger one. Sentences are
// printed one per line, words separated by spaces (the final <eos> not
// printed).
func runGenerate(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("generate", stdout)
	run := fs.String("model", "", "run directory of ptb train, or its checkpoint file for the best model so far of an unfinished run (required)")
	words := fs.Int("words", 100, "number of words to print: sentences until then, the last one cut at the last word")
	sentences := fs.Int("sentences", 0, "number of sentences to print (instead of --words)")
	temperature := fs.Float64("temperature", 1, "sampling temperature (lower is greedier)")
	topK := fs.Int("top-k", 0, "sample only among the K likeliest words (0: all)")
	seed := fs.Uint64("seed", 1, "random seed: the same seed gives the same text")
	prompt := fs.String("prompt", "", "words every sentence begins with, separated by spaces (default: none)")
	maxLength := fs.Int("max-length", 200, "maximum sentence length in words, prompt included; a longer sentence is cut there")
	devFlag := cli.DeviceFlag(fs, "ptb", "sampling itself runs on the CPU, from the model's parameters")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	dev, err := cli.ParseDeviceFlag(*devFlag)
	if err != nil {
		return err
	}
	switch {
	case *run == "":
		return errors.New("--model is required")
	case fs.Changed("words") && fs.Changed("sentences"):
		return errors.New("--words and --sentences are exclusive: give one")
	case fs.Changed("sentences") && *sentences < 1:
		return fmt.Errorf("--sentences %d must be at least 1", *sentences)
	case *words < 1:
		return fmt.Errorf("--words %d must be at least 1", *words)
	case !(*temperature > 0) || math.IsInf(*temperature, 0):
		return fmt.Errorf("--temperature %g must be positive and finite", *temperature)
	case *topK < 0:
		return fmt.Errorf("--top-k %d must not be negative", *topK)
	case *maxLength < 1 || *maxLength > 1<<20:
		return fmt.Errorf("--max-length %d must be in [1, %d]", *maxLength, 1<<20)
	}
	m, v, _, err := loadRun(*run)
	if err != nil {
		return err
	}
	p, err := parsePrompt(*prompt, v)
	if err != nil {
		return err
	}
	if err := cli.UseDevice(m, dev); err != nil {
		return err
	}
	if len(p) >= *maxLength {
		return fmt.Errorf("--prompt has %d words, leaving none to generate within --max-length %d", len(p), *maxLength)
	}
	opt := nsrnn.SampleOptions{
		Temperature: *temperature, TopK: *topK, Seed: *seed, Prompt: p, MaxLength: *maxLength,
		Stream: true, Start: v.EOS(), End: v.EOS(),
	}
	// Sentences are written as they are drawn, a batch at a time, so that
	// any --sentences or --words works.
	count := *sentences
	if !fs.Changed("sentences") {
		count = -1 // until --words words
	}
	n, total, cut := 0, 0, 0
	// Sentences drawn before --words words is given up as hopeless (a
	// model that keeps ending at once).
	maxSentences := 16*min(*words, (math.MaxInt-1024)/16) + 1024
	var b strings.Builder
	var werr error
	err = m.SampleEach(count, opt, func(i int, g nsrnn.Generated) bool {
		if count < 0 {
			if i >= maxSentences {
				werr = fmt.Errorf("--words %d: %d sentences hold only %d words", *words, i, total)
				return false
			}
			if len(g.Symbols) > *words-total {
				g.Symbols = g.Symbols[:*words-total]
			}
		}
		b.Reset()
		for j, id := range g.Symbols {
			if j > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(v.Word(id))
		}
		b.WriteByte('\n')
		if _, werr = io.WriteString(stdout, b.String()); werr != nil {
			return false
		}
		n++
		total += len(g.Symbols)
		if !g.Complete && len(g.Symbols) == *maxLength {
			cut++
		}
		return count >= 0 || total < *words
	})
	if err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	fmt.Fprintf(stderr, "generate: %s, %s; %d reached --max-length %d\n", cli.Count(n, "sentence"), cli.Count(total, "word"), cut, *maxLength)
	return nil
}

// parsePrompt converts the words of --prompt to ids; every word must be in
// the run's vocabulary, and <eos>, which would end the sentence, may not
// be one of them.
func parsePrompt(prompt string, v *ptb.Vocab) ([]int, error) {
	var ids []int
	for _, w := range strings.Fields(prompt) {
		id, ok := v.Lookup(w)
		switch {
		case !ok:
			return nil, fmt.Errorf("--prompt: word %q is not in the run's vocabulary (write unknown words as %s)", w, ptb.UnkWord)
		case id == v.EOS():
			return nil, fmt.Errorf("--prompt: %s would end the sentence; give words within one sentence", ptb.EOSWord)
		}
		ids = append(ids, id)
	}
	return ids, nil
}
