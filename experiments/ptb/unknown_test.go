package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/experiments/internal/cli"
)

// TestUnknownWordsReport checks the report of unknown words: a line with
// their number, then one short line per file with its count, its first
// unknown word and its first few distinct ones, and a hint when "," is
// among them.
func TestUnknownWordsReport(t *testing.T) {
	for _, tc := range []struct {
		name     string
		files    int
		words    []string // the unknown words of each file, in order
		comma    bool
		noStrict bool   // a command without --strict (select)
		first    string // the first line's beginning, where not the usual
	}{
		{"one file", 1, []string{"zebra", "yak", "zebra"}, false, false, ""},
		{"33 suites with commas", 33, []string{",", "whom", ",", "himself", "herself", "themselves", "itself", ";", ","}, true, false, ""},
		{"one word", 1, []string{"zebra"}, false, false, "sg: 1 word not in the run's vocabulary was read as <unk> (--strict refuses it):"},
		{"no --strict", 1, []string{"zebra", "yak"}, false, true, "sg: 2 words not in the run's vocabulary were read as <unk>:"},
	} {
		u := newUnknownWords()
		u.noStrict = tc.noStrict
		for i := range tc.files {
			for j, w := range tc.words {
				u.add(fmt.Sprintf("suite%02d.json", i), j+1, w)
			}
		}
		var b bytes.Buffer
		u.report(&b, "sg", "the run's vocabulary")
		lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
		want := 1 + tc.files
		if tc.comma {
			want++
		}
		if len(lines) != want {
			t.Errorf("%s: %d lines, want %d:\n%s", tc.name, len(lines), want, b.String())
			continue
		}
		w := fmt.Sprintf("sg: %d words not in the run's vocabulary were read as <unk> (--strict refuses them):", tc.files*len(tc.words))
		if tc.first != "" {
			w = tc.first
		}
		if lines[0] != w {
			t.Errorf("%s: first line %q, want %q", tc.name, lines[0], w)
		}
		for i := range tc.files {
			l := lines[1+i]
			w := fmt.Sprintf("suite%02d.json: %s, the first %q at line 1; among them ", i, cli.Count(len(tc.words), "unknown word"), tc.words[0])
			if !strings.Contains(l, w) || len(l) > 200 {
				t.Errorf("%s: line %q, want one of at most 200 bytes with %q", tc.name, l, w)
			}
			if !strings.Contains(l, `"`+tc.words[min(1, len(tc.words)-1)]+`"`) || strings.Count(l, `","`) > 2 {
				t.Errorf("%s: line %q does not list the file's distinct words once each", tc.name, l)
			}
		}
		if hint := strings.Contains(b.String(), "no commas"); hint != tc.comma {
			t.Errorf("%s: comma hint given: %v, want %v:\n%s", tc.name, hint, tc.comma, b.String())
		}
	}
}
