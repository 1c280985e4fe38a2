package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
)

func init() {
	prog.Register("generate", "sample strings from a trained model and count those in the task's language", runGenerate)
}

// generatedRecord is a line of generate --json: one sampled string.
type generatedRecord struct {
	// String is the string, symbols separated by spaces (its end symbol
	// not included).
	String string `json:"string"`
	Length int    `json:"length"`
	// Complete is false for a string that reached --max-length without
	// its end symbol.
	Complete bool `json:"complete"`
	// InLanguage reports whether the string is complete and in the
	// task's language (has a positive probability under its grammar);
	// left out for a run on the user's strings, which have no language
	// to check against.
	InLanguage *bool `json:"in_language,omitempty"`
	// LogProb is the model's log-probability of the string after the
	// prompt (at temperature 1, without top-k), its end symbol included
	// when it is complete.
	LogProb float64 `json:"log_prob"`
}

// generateSummary is the last line of generate --json.
type generateSummary struct {
	Task    string `json:"task"`
	Grammar string `json:"grammar"`
	// TaskParams are the task's parameters not at their defaults.
	TaskParams data.Params `json:"task_params,omitempty"`
	Count      int         `json:"count"`
	// InLanguage counts the complete strings of the task's language; both
	// are left out for a run on the user's strings (NoLanguage).
	InLanguage         *int     `json:"in_language,omitempty"`
	InLanguageFraction *float64 `json:"in_language_fraction,omitempty"`
	NoLanguage         bool     `json:"no_language,omitempty"`
	// ReachedMaxLength counts the strings cut off at MaxLength.
	ReachedMaxLength int     `json:"reached_max_length"`
	MaxLength        int     `json:"max_length"`
	MeanLength       float64 `json:"mean_length"`
}

// emptySample is the line generate prints (without --json) for an empty
// string, which would otherwise be a blank line; a file of strings reads
// it back as the empty string.
const emptySample = data.EmptyString

// runGenerate samples --count strings from the model of a cfl train run
// in sentence mode (Model.SampleEach: written as they are drawn, so any
// count works), prints them, one per line (an empty string as
// emptySample), or with
// --json one generatedRecord per line and a final {"summary": …} line,
// and reports on standard error how many are in the task's language
// (complete strings of the language of the run's task: p_G(w) > 0 under
// its definition for a task with a grammar)
// and how many reached --max-length.
func runGenerate(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("generate", stdout)
	modelPath, last := modelFlags(fs, taskFromRun)
	count := fs.Int("count", 1000, "number of strings")
	temperature := fs.Float64("temperature", 1, "sampling temperature (lower is greedier)")
	topK := fs.Int("top-k", 0, "sample only among the K likeliest symbols (0: all)")
	seed := fs.Uint64("seed", 1, "random seed: the same seed gives the same strings")
	prompt := fs.String("prompt", "", "symbols every string begins with, separated by spaces (default: none)")
	maxLength := fs.Int("max-length", 0, "maximum string length, prompt included (default: twice the run's maximum training length)")
	asJSON := fs.Bool("json", false, "print one JSON object per string, then a summary object (default: the strings, one per line, an empty one as "+emptySample+")")
	devFlag := cli.DeviceFlag(fs, "cfl", "sampling itself runs on the CPU, from the model's parameters")
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
	if err := requireFlags(fs, "model"); err != nil {
		return err
	}
	switch {
	case *count < 1:
		return fmt.Errorf("--count %d must be at least 1", *count)
	case !(*temperature > 0) || math.IsInf(*temperature, 0):
		return fmt.Errorf("--temperature %g must be positive and finite", *temperature)
	case *topK < 0:
		return fmt.Errorf("--top-k %d must not be negative", *topK)
	case fs.Changed("max-length") && (*maxLength < 1 || *maxLength > data.MaxLength):
		return fmt.Errorf("--max-length %d must be in [1, %d]", *maxLength, data.MaxLength)
	}
	m, t, s, err := loadTaskRun(*modelPath, *last)
	if err != nil {
		return err
	}
	p, err := data.ParseString(*prompt, t.Terminals())
	if err != nil {
		return fmt.Errorf("--prompt: %w", err)
	}
	if !fs.Changed("max-length") {
		*maxLength = min(max(2*s.MaxLength, len(p)+1, 1), data.MaxLength)
	}
	if len(p) > *maxLength {
		return fmt.Errorf("--prompt has %d symbols, more than --max-length %d", len(p), *maxLength)
	}
	if err := cli.UseDevice(m, dev); err != nil {
		return err
	}
	sum := generateSummary{Task: t.Name(), Grammar: string(t.Definition()), TaskParams: t.Params(), Count: *count, MaxLength: *maxLength}
	enc := json.NewEncoder(stdout)
	total, inLanguage := 0, 0
	check := t.HasDistribution()
	sum.NoLanguage = !check
	// The strings are written as they are drawn, a batch at a time, so
	// that any --count works.
	var werr error
	err = m.SampleEach(*count, nsrnn.SampleOptions{
		Temperature: *temperature, TopK: *topK, Seed: *seed, Prompt: p, MaxLength: *maxLength,
	}, func(_ int, x nsrnn.Generated) bool {
		in := false
		if !x.Complete {
			sum.ReachedMaxLength++
		} else if check {
			if in, werr = t.Contains(x.Symbols); werr != nil {
				return false
			}
		}
		if in {
			inLanguage++
		}
		total += len(x.Symbols)
		text := data.FormatString(x.Symbols, t.Terminals())
		if *asJSON {
			rec := generatedRecord{String: text, Length: len(x.Symbols), Complete: x.Complete, LogProb: x.LogProb}
			if check {
				rec.InLanguage = &in
			}
			werr = enc.Encode(rec)
		} else {
			if len(x.Symbols) == 0 {
				text = emptySample
			}
			_, werr = fmt.Fprintln(stdout, text)
		}
		return werr == nil
	})
	if err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	frac := float64(inLanguage) / float64(sum.Count)
	if check {
		sum.InLanguage, sum.InLanguageFraction = &inLanguage, &frac
	}
	sum.MeanLength = float64(total) / float64(sum.Count)
	if *asJSON {
		if err := enc.Encode(map[string]generateSummary{"summary": sum}); err != nil {
			return err
		}
	}
	in := fmt.Sprintf("%d of %d strings (%.1f%%) are in the language of %s", inLanguage, sum.Count, 100*frac, t)
	if !check {
		in = fmt.Sprintf("%d strings (%s is your own strings: no language to check them against)", sum.Count, t)
	}
	fmt.Fprintf(stderr, "generate: %s; %d reached --max-length %d; mean length %.2f\n",
		in, sum.ReachedMaxLength, *maxLength, sum.MeanLength)
	return nil
}
