package syntaxgym

import (
	"bytes"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSurprisalsRoundTrip(t *testing.T) {
	ts := toySuite()
	// An item whose second condition has no tokens.
	ts.Items = append(ts.Items, tItem{Number: intp(9), Conditions: []tCondition{tCond("good", "A", "b", "c"), tCond("bad", "", " ", "")}})
	s, err := ts.read(t, "toy.json")
	if err != nil {
		t.Fatal(err)
	}
	sents := s.Sentences()
	surprisals := [][]float64{{0.1, 1.0 / 3, 2, 1e-20}, {5, 6, math.Inf(1)}, {0, 1, 2, 3}, {3, 2, 1, 0}, {7, 8, 9}, {}}
	var buf bytes.Buffer
	if err := WriteSurprisals(&buf, sents, surprisals); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(buf.String(), "\n")
	if lines[0] != "sentence_id\ttoken_id\ttoken\tsurprisal" || lines[1] != "1\t1\tthe\t0.1" ||
		lines[6] != "2\t2\tcat\t6" || lines[7] != "2\t3\tsleep\t+Inf" || lines[18] != "5\t3\tc\t9" || lines[19] != "" || len(lines) != 20 {
		t.Errorf("written:\n%s", buf.String())
	}
	got, err := ReadSurprisals(strings.NewReader(buf.String()), "toy.tsv", sents)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, surprisals) {
		t.Errorf("read %v, want %v", got, surprisals)
	}

	// With a byte-order mark and CR line ends.
	if got, err := ReadSurprisals(strings.NewReader("\uFEFF"+strings.ReplaceAll(buf.String(), "\n", "\r")), "toy.tsv", sents); err != nil || !reflect.DeepEqual(got, surprisals) {
		t.Errorf("BOM and CR line ends: read %v, %v; want %v", got, err, surprisals)
	}

	// Through a file, with uppercase tokens, CRLF line ends and surprisals
	// written in other forms.
	text := strings.ReplaceAll(buf.String(), "\n", "\r\n")
	text = strings.Replace(text, "\tthe\t0.1", "\tThe\t1e-1", 1)
	path := filepath.Join(t.TempDir(), "toy.tsv")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err = ReadSurprisalsFile(path, sents)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, surprisals) {
		t.Errorf("read %v, want %v", got, surprisals)
	}
	if _, err := ReadSurprisalsFile(filepath.Join(t.TempDir(), "missing.tsv"), sents); err == nil || !strings.Contains(err.Error(), "missing.tsv") {
		t.Errorf("ReadSurprisalsFile of a missing file: %v", err)
	}

	if err := WriteSurprisals(&buf, sents, surprisals[:5]); err == nil {
		t.Error("WriteSurprisals with a missing sentence succeeded")
	}
	bad := append([][]float64{{1}}, surprisals[1:]...)
	if err := WriteSurprisals(&buf, sents, bad); err == nil || !strings.Contains(err.Error(), `sentence 1 (item 1, condition "good"): 1 surprisals, want 4`) {
		t.Errorf("WriteSurprisals with a missing token: %v", err)
	}
}

func TestReadSurprisalsErrors(t *testing.T) {
	s, err := toySuite().read(t, "toy.json")
	if err != nil {
		t.Fatal(err)
	}
	sents := s.Sentences()
	var buf bytes.Buffer
	if err := WriteSurprisals(&buf, sents, [][]float64{{1, 2, 3, 4}, {1, 2, 3}, {1, 2, 3, 4}, {1, 2, 3, 4}}); err != nil {
		t.Fatal(err)
	}
	good := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	// good[i] is line i+1: the header, then the tokens of the four
	// sentences, 4, 3, 4 and 4 of them.
	join := func(lines []string) string { return strings.Join(lines, "\n") + "\n" }
	replace := func(i int, line string) string {
		lines := append([]string(nil), good...)
		lines[i] = line
		return join(lines)
	}
	for _, tc := range []struct {
		name, text, want string
	}{
		{"empty", "", `toy.tsv: empty file: want the header "sentence_id\ttoken_id\ttoken\tsurprisal"`},
		{"header", replace(0, "sentence\ttoken\tsurprisal"), `toy.tsv:1: header "sentence\ttoken\tsurprisal", want`},
		{"token mismatch", replace(6, "2\t2\tdog\t2"), `toy.tsv:7: sentence 2 (item 1, condition "bad"), token 2: "dog", want "cat"`},
		{"sentence out of order", replace(5, "3\t1\tthe\t1"), `toy.tsv:6: sentence 3, token 1: want sentence 2 (item 1, condition "bad"), token 1 "the"`},
		{"token out of order", replace(2, "1\t3\tsleeps\t1"), `toy.tsv:3: sentence 1, token 3: want sentence 1 (item 1, condition "good"), token 2 "cat"`},
		{"missing token", join(append(append([]string(nil), good[:4]...), good[5:]...)), `toy.tsv:5: sentence 2, token 1: want sentence 1 (item 1, condition "good"), token 4 "."`},
		{"missing sentences", join(good[:13]), `toy.tsv:14: unexpected end of file: want sentence 4 (item 7, condition "good"), token 2 "bark"`},
		{"extra token", join(append(append([]string(nil), good...), "4\t5\tfoo\t1")), `toy.tsv:17: sentence 4, token 5: the file has more tokens than the 4 sentences`},
		{"fields", replace(1, "1\t1\tthe"), `toy.tsv:2: 3 tab-separated fields, want 4`},
		{"ids", replace(1, "one\t1\tthe\t1"), `toy.tsv:2: sentence_id "one" and token_id "1" must be integers`},
		{"surprisal", replace(1, "1\t1\tthe\tlots"), `toy.tsv:2: sentence 1, token 1: surprisal "lots": want a number other than NaN and -Inf`},
		{"NaN", replace(1, "1\t1\tthe\tNaN"), `toy.tsv:2: sentence 1, token 1: surprisal "NaN"`},
		{"-Inf", replace(1, "1\t1\tthe\t-Inf"), `toy.tsv:2: sentence 1, token 1: surprisal "-Inf"`},
		{"empty line", replace(1, ""), `toy.tsv:2: empty line`},
	} {
		_, err := ReadSurprisals(strings.NewReader(tc.text), "toy.tsv", sents)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want prefix %q", tc.name, err, tc.want)
		}
	}
}

// FuzzReadSurprisals reads arbitrary surprisal files for the toy suite's
// sentences. A file is refused with an error naming it, or holds one
// finite (or +Inf) value per token of every sentence, which
// WriteSurprisals writes back into a file that reads the same.
func FuzzReadSurprisals(f *testing.F) {
	js, err := json.Marshal(toySuite())
	if err != nil {
		f.Fatal(err)
	}
	s, err := ReadSuite(strings.NewReader(string(js)), "toy.json")
	if err != nil {
		f.Fatal(err)
	}
	sents := s.Sentences()
	tokens := make([][]float64, len(sents))
	for i, sent := range sents {
		for k := range sent.Tokens {
			tokens[i] = append(tokens[i], float64(i+k)/3)
		}
	}
	var good strings.Builder
	if err := WriteSurprisals(&good, sents, tokens); err != nil {
		f.Fatal(err)
	}
	f.Add([]byte(good.String()))
	f.Add([]byte("sentence_id\ttoken_id\ttoken\tsurprisal\n1\t1\tthe\t1\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := ReadSurprisals(strings.NewReader(string(b)), "fuzz.tsv", sents)
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz.tsv") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		if len(got) != len(sents) {
			t.Fatalf("%d sentences, want %d", len(got), len(sents))
		}
		for i, sent := range sents {
			if len(got[i]) != len(sent.Tokens) {
				t.Fatalf("sentence %d: %d values for %d tokens", i+1, len(got[i]), len(sent.Tokens))
			}
			for _, v := range got[i] {
				if math.IsNaN(v) || math.IsInf(v, -1) {
					t.Fatalf("sentence %d: value %v", i+1, v)
				}
			}
		}
		var w strings.Builder
		if err := WriteSurprisals(&w, sents, got); err != nil {
			t.Fatal(err)
		}
		again, err := ReadSurprisals(strings.NewReader(w.String()), "again.tsv", sents)
		if err != nil || !reflect.DeepEqual(again, got) {
			t.Fatalf("round trip: %v, %v", again, err)
		}
	})
}
