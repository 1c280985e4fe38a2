package main

import (
	"encoding/json"
	"math"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/protocol"
)

// generateJSON runs generate --json on the testdata model and decodes its
// records and summary.
func generateJSON(t *testing.T, args ...string) ([]generatedRecord, generateSummary, string) {
	t.Helper()
	status, stdout, stderr := run(append([]string{"generate", "--json"}, args...)...)
	if status != 0 {
		t.Fatalf("generate %v: status %d: %s", args, status, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	var recs []generatedRecord
	for _, l := range lines[:len(lines)-1] {
		var r generatedRecord
		dec := json.NewDecoder(strings.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			t.Fatalf("generate output line %q: %v", l, err)
		}
		recs = append(recs, r)
	}
	var sum map[string]generateSummary
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &sum); err != nil {
		t.Fatalf("generate summary %q: %v", lines[len(lines)-1], err)
	}
	s, ok := sum["summary"]
	if !ok {
		t.Fatalf("no summary in %q", lines[len(lines)-1])
	}
	return recs, s, stderr
}

// TestGenerateMarkedReversal samples 200 strings from the testdata model
// (trained near the bound on marked reversal) and checks that at least
// 98% are in the language w#wᴿ (the model gets 199 of 200; the strings
// are those of seed 3), that every record's membership and the
// summary's counts are right, and that the same seed gives the same
// strings and another seed other ones.
func TestGenerateMarkedReversal(t *testing.T) {
	recs, sum, stderr := generateJSON(t, "--model", markedRNS, "--count", "200", "--seed", "3")
	if len(recs) != 200 || sum.Count != 200 {
		t.Fatalf("%d records, summary count %d; want 200", len(recs), sum.Count)
	}
	task, err := data.NewTask(data.MarkedReversal)
	if err != nil {
		t.Fatal(err)
	}
	s, err := protocol.ReadSettings(markedRNS)
	if err != nil {
		t.Fatal(err)
	}
	in, cut, total := 0, 0, 0
	for _, r := range recs {
		w, err := data.ParseString(r.String, task.Terminals())
		if err != nil {
			t.Fatal(err)
		}
		if len(w) != r.Length || math.IsNaN(r.LogProb) || r.LogProb > 0 {
			t.Errorf("record %+v", r)
		}
		// Marked reversal is w#wᴿ: check membership directly.
		k := len(w) / 2
		member := r.Complete && len(w)%2 == 1 && w[k] == 2
		for i := 0; member && i < k; i++ {
			member = w[i] != 2 && w[i] == w[len(w)-1-i]
		}
		if r.InLanguage == nil || member != *r.InLanguage {
			t.Errorf("%q: in_language %v, want %v", r.String, r.InLanguage, member)
		}
		if member {
			in++
		}
		if !r.Complete {
			cut++
			if r.Length != 2*s.MaxLength {
				t.Errorf("unfinished string of length %d, want the default maximum %d", r.Length, 2*s.MaxLength)
			}
		}
		total += r.Length
	}
	if sum.InLanguage == nil || *sum.InLanguage != in || sum.ReachedMaxLength != cut || sum.MaxLength != 2*s.MaxLength ||
		math.Abs(sum.MeanLength-float64(total)/200) > 1e-12 || sum.InLanguageFraction == nil || *sum.InLanguageFraction != float64(in)/200 || sum.NoLanguage ||
		sum.Task != data.MarkedReversal || sum.Grammar != "paper" {
		t.Errorf("summary %+v; counted %d in the language, %d unfinished", sum, in, cut)
	}
	if in < 196 {
		t.Errorf("only %d of 200 generated strings are in the language", in)
	}
	if !strings.Contains(stderr, "of 200 strings") || !strings.Contains(stderr, "--max-length") {
		t.Errorf("stderr %q does not report the counts", stderr)
	}

	again, _, _ := generateJSON(t, "--model", markedRNS, "--count", "20", "--seed", "3")
	other, _, _ := generateJSON(t, "--model", markedRNS, "--count", "20", "--seed", "4")
	same := 0
	for i := range again {
		if !reflect.DeepEqual(again[i], recs[i]) {
			t.Errorf("string %d with the same seed: %+v, then %+v", i, recs[i], again[i])
		}
		if other[i].String == recs[i].String {
			same++
		}
	}
	if same == len(other) {
		t.Error("seeds 3 and 4 gave the same strings")
	}
}

// TestGenerateOptions: the text output is the JSON's strings, the prompt
// begins every string, --max-length cuts strings, and greedy decoding
// (--top-k 1) gives one string.
func TestGenerateOptions(t *testing.T) {
	model := filepath.Join(markedRNS, protocol.ModelFile)
	status, stdout, stderr := run("generate", "--model", model, "--count", "10", "--seed", "5")
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	recs, _, _ := generateJSON(t, "--model", model, "--count", "10", "--seed", "5")
	var want strings.Builder
	for _, r := range recs {
		want.WriteString(r.String + "\n")
	}
	if stdout != want.String() {
		t.Errorf("text output\n%s\ndiffers from the JSON's strings\n%s", stdout, want.String())
	}

	recs, _, _ = generateJSON(t, "--model", markedRNS, "--count", "20", "--prompt", "0 1 1", "--temperature", "0.5")
	for _, r := range recs {
		if !strings.HasPrefix(r.String, "0 1 1 ") {
			t.Errorf("%q does not begin with the prompt", r.String)
		}
	}
	recs, sum, _ := generateJSON(t, "--model", markedRNS, "--count", "20", "--max-length", "4")
	for _, r := range recs {
		if r.Length > 4 || (!r.Complete && r.Length != 4) {
			t.Errorf("--max-length 4 gave %+v", r)
		}
	}
	if sum.ReachedMaxLength == 0 || sum.MaxLength != 4 {
		t.Errorf("--max-length 4: summary %+v", sum)
	}
	recs, _, _ = generateJSON(t, "--model", markedRNS, "--count", "5", "--top-k", "1", "--seed", "9")
	for _, r := range recs[1:] {
		if r.String != recs[0].String {
			t.Errorf("greedy decoding gave %q and %q", recs[0].String, r.String)
		}
	}
}

// TestGenerateErrors: bad flags are refused naming the flag, before
// anything is printed.
func TestGenerateErrors(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--model"},
		{[]string{"--model", filepath.Join(t.TempDir(), "nope")}, "--model"},
		{[]string{"--model", t.TempDir()}, "--model"},
		{[]string{"--model", markedRNS, "--count", "0"}, "--count"},
		{[]string{"--model", markedRNS, "--temperature", "0"}, "--temperature"},
		{[]string{"--model", markedRNS, "--temperature", "NaN"}, "--temperature"},
		{[]string{"--model", markedRNS, "--top-k", "-2"}, "--top-k"},
		{[]string{"--model", markedRNS, "--max-length", "0"}, "--max-length"},
		{[]string{"--model", markedRNS, "--max-length", "100000"}, "--max-length"},
		{[]string{"--model", markedRNS, "--prompt", "0 a"}, "--prompt"},
		{[]string{"--model", markedRNS, "--prompt", "0 1 0", "--max-length", "2"}, "--prompt"},
		{[]string{"--model", markedRNS, "extra"}, "unexpected"},
	} {
		status, stdout, stderr := run(append([]string{"generate"}, c.args...)...)
		if status == 0 || !strings.Contains(stderr, c.want) {
			t.Errorf("generate %v: status %d, stderr %q; want an error naming %s", c.args, status, stderr, c.want)
		}
		if stdout != "" {
			t.Errorf("generate %v printed %q", c.args, stdout)
		}
	}
}

// TestGenerateEmpty checks that an empty sample is printed as
// emptySample, not as a blank line, and stays "" in --json. At a high
// temperature the model ends many strings at once (those of seed 1
// include empty ones).
func TestGenerateEmpty(t *testing.T) {
	args := []string{"--model", markedRNS, "--count", "40", "--seed", "1", "--temperature", "50", "--max-length", "3"}
	recs, _, _ := generateJSON(t, args...)
	empty := 0
	for _, r := range recs {
		if r.Length == 0 {
			empty++
			if r.String != "" {
				t.Errorf("--json: empty string as %q", r.String)
			}
		}
	}
	if empty == 0 {
		t.Fatal("no empty string among the samples: choose another seed")
	}
	status, stdout, stderr := run(append([]string{"generate"}, args...)...)
	if status != 0 {
		t.Fatalf("status %d: %s", status, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	if len(lines) != len(recs) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(recs), stdout)
	}
	for i, l := range lines {
		want := recs[i].String
		if recs[i].Length == 0 {
			want = emptySample
		}
		if l != want {
			t.Errorf("line %d: %q, want %q", i+1, l, want)
		}
	}
}
