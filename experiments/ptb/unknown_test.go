package main

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// TestUnknownWordsReport checks the report of unknown words: a line with
// their number, then one short line per file with its count, its first
// unknown word and its first few distinct ones, and a hint when "," is
// among them.
func TestUnknownWordsReport(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files int
		words []string // the unknown words of each file, in order
		comma bool
	}{
		{"one file", 1, []string{"zebra", "yak", "zebra"}, false},
		{"33 suites with commas", 33, []string{",", "whom", ",", "himself", "herself", "themselves", "itself", ";", ","}, true},
	} {
		u := newUnknownWords()
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
		if w := fmt.Sprintf("sg: %d words not in the run's vocabulary were read as <unk>", tc.files*len(tc.words)); !strings.HasPrefix(lines[0], w) {
			t.Errorf("%s: first line %q, want it to begin %q", tc.name, lines[0], w)
		}
		for i := range tc.files {
			l := lines[1+i]
			w := fmt.Sprintf("suite%02d.json: %d unknown words, the first %q at line 1; among them ", i, len(tc.words), tc.words[0])
			if !strings.Contains(l, w) || len(l) > 200 {
				t.Errorf("%s: line %q, want one of at most 200 bytes with %q", tc.name, l, w)
			}
			if !strings.Contains(l, `"`+tc.words[1]+`"`) || strings.Count(l, `","`) > 2 {
				t.Errorf("%s: line %q does not list the file's distinct words once each", tc.name, l)
			}
		}
		if hint := strings.Contains(b.String(), "no commas"); hint != tc.comma {
			t.Errorf("%s: comma hint given: %v, want %v:\n%s", tc.name, hint, tc.comma, b.String())
		}
	}
}
