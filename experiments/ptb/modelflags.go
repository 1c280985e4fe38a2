package main

import (
	"fmt"
	"strings"

	"github.com/nsrnn/nsrnn/experiments/internal/cli"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/spf13/pflag"
)

// precisionFlag adds --precision with the given default.
func precisionFlag(fs *pflag.FlagSet, def, what string) *string {
	return fs.String("precision", def, "arithmetic of the output layer and LSTM products (nsrnn.Model.Precision), "+what+": float32 (about 1.5× faster at these sizes, loss within about 1e-6 relative) or float64")
}

// parsePrecision checks --precision and returns the precision and its
// settings value (empty for float64).
func parsePrecision(s string) (nsrnn.Precision, string, error) {
	p, err := nsrnn.ParsePrecision(s)
	if err != nil {
		return 0, "", fmt.Errorf("--precision: %w", err)
	}
	if p == nsrnn.Float64 {
		return p, "", nil
	}
	return p, p.String(), nil
}

// chunkFlags names the settings that fix the memory of a training chunk:
// the batch, the chunk length and the stack's window or depth limit.
func chunkFlags(s settings) string {
	f := fmt.Sprintf("--batch %d, --bptt %d", s.Batch, s.BPTT)
	if s.Model.Window > 0 {
		f += fmt.Sprintf(", --window %d", s.Model.Window)
	}
	if s.Model.DepthLimit > 0 {
		f += fmt.Sprintf(", --depth-limit %d", s.Model.DepthLimit)
	}
	return f
}

// ptbConfig turns model flags into the paper's PTB configuration:
// embedding = hidden size, untied, every parameter uniform in ±0.05, and
// the kind's hyperparameters that it requires asked for, and those with a
// stream default (nsrnn.Hyperparameter.StreamDefault: JM's depth limit 10,
// the NS window D = 35) given it unless set (0 too selects it: an
// unlimited stack cannot run as a stream).
func ptbConfig(mf *cli.ModelFlags, vocab int) (nsrnn.Config, error) {
	m := &mf.Model
	if m.Kind == "" {
		return nsrnn.Config{}, fmt.Errorf("--model is required (one of %s)", streamKinds())
	}
	k, err := nsrnn.LookupKind(m.Kind)
	if err != nil {
		return nsrnn.Config{}, fmt.Errorf("--model: %w", err)
	}
	if !k.Streams {
		return nsrnn.Config{}, fmt.Errorf("--model %s: its stack state cannot be carried from chunk to chunk, so it cannot run as a stream over the corpus; want one of %s", m.Kind, streamKinds())
	}
	if err := mf.CheckGiven(); err != nil {
		return nsrnn.Config{}, err
	}
	var required, missing []string
	for _, h := range k.Hyperparameters {
		if h.Required {
			required = append(required, "--"+h.Flag())
			if !m.FieldSet(h.Field) {
				missing = append(missing, "--"+h.Flag())
			}
		}
		if h.StreamDefault != 0 {
			if p, ok := m.FieldValue(h.Field).(*int); ok && *p == 0 {
				if mf.Given(h.Flag()) {
					// 0 (none) elsewhere; a stream's stack needs one to
					// carry its state.
					return nsrnn.Config{}, fmt.Errorf("--%s 0: --model %s as a stream needs %s of at least 1 (default %d)", h.Flag(), m.Kind, h.Name, h.StreamDefault)
				}
				*p = h.StreamDefault
			}
		}
	}
	switch {
	case len(missing) == len(required) && len(missing) > 0:
		return nsrnn.Config{}, fmt.Errorf("--model %s needs %s", m.Kind, joinAnd(required))
	case len(missing) > 0:
		return nsrnn.Config{}, fmt.Errorf("--model %s needs %s: give %s too", m.Kind, joinAnd(required), joinAnd(missing))
	}
	if m.Hidden < 1 {
		// Said here, before the embedding (of the hidden size, no flag
		// of its own) is blamed for it.
		return nsrnn.Config{}, fmt.Errorf("--hidden %d must be at least 1", m.Hidden)
	}
	return mf.Config(vocab, vocab, m.Hidden, 0.05)
}

// joinAnd joins words as "a", "a and b", "a, b and c".
func joinAnd(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// streamKinds lists the model kinds that can run as streams
// (nsrnn.Kind.Streams), the only ones ptb trains.
func streamKinds() string { return strings.Join(streamKindsUsing(""), ", ") }

// streamKindsUsing returns the names of the kinds that can run as streams
// and declare the flag's field (every one for "").
func streamKindsUsing(flag string) []string {
	var names []string
	for _, k := range nsrnn.AllKinds() {
		if k.Streams && (flag == "" || cli.KindUses(k.Name, flag)) {
			names = append(names, k.Name)
		}
	}
	return names
}

// streamHyperparameter returns the declaration of the field of flag by
// the first kind that streams and declares it, and whether every such
// kind requires it.
func streamHyperparameter(flag string) (h nsrnn.Hyperparameter, required, ok bool) {
	required = true
	for _, k := range nsrnn.AllKinds() {
		if !k.Streams {
			continue
		}
		for _, kh := range k.Hyperparameters {
			if kh.Flag() == flag {
				if !ok {
					h, ok = kh, true
				}
				required = required && kh.Required
			}
		}
	}
	return h, required && ok, ok
}

// addModelFlags registers the model flags with ptb's help: only the kinds
// that can stream, the flags that they require, and the stream defaults
// that ptbConfig gives; the flags of no kind that streams are hidden.
func addModelFlags(fs *pflag.FlagSet) *cli.ModelFlags {
	mf := cli.AddModelFlags(fs, 256)
	fs.Lookup("model").Usage = "model: " + streamKinds() + " (required; the kinds whose stack can run as a stream)"
	for _, flag := range cli.StackFlags() {
		h, required, ok := streamHyperparameter(flag)
		if !ok {
			fs.Lookup(flag).Hidden = true
			continue
		}
		usage := strings.ReplaceAll(h.Doc, "%s", strings.Join(streamKindsUsing(flag), ", "))
		switch {
		case h.StreamDefault != 0:
			usage, _, _ = strings.Cut(usage, " (default 0")
			usage += fmt.Sprintf(" (default %d, as is 0: an unlimited stack cannot stream)", h.StreamDefault)
		case required:
			usage += " (required for them)"
		case flag == "stack-embedding":
			// jm: a learned pushed vector needs its size; the hidden
			// state has the hidden size. vrns always needs it.
			usage, _, _ = strings.Cut(usage, " (default 0")
			usage += " (required; for jm, unless --push-hidden-state)"
		}
		fs.Lookup(flag).Usage = usage
	}
	return mf
}
