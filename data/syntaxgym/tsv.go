package syntaxgym

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/nsrnn/nsrnn/internal/lines"
)

// TSVHeader is the first line of a surprisal file in lm-zoo's format.
const TSVHeader = "sentence_id\ttoken_id\ttoken\tsurprisal"

// WriteSurprisals writes per-token surprisals in lm-zoo's TSV format:
// the header TSVHeader, then one line per token, "sentence_id token_id token
// surprisal" separated by tabs, sentences and tokens numbered from 1.
// surprisals[j][k] is the surprisal in bits of token k of sents[j]. The
// surprisal is written in the shortest form that reads back exactly.
func WriteSurprisals(w io.Writer, sents []Sentence, surprisals [][]float64) error {
	if len(surprisals) != len(sents) {
		return fmt.Errorf("syntaxgym: %d sentences of surprisals, want %d", len(surprisals), len(sents))
	}
	bw := bufio.NewWriter(w)
	bw.WriteString(TSVHeader + "\n")
	for j, s := range sents {
		if len(surprisals[j]) != len(s.Tokens) {
			return fmt.Errorf("syntaxgym: sentence %d (item %d, condition %q): %d surprisals, want %d",
				j+1, s.ItemNumber, s.Condition, len(surprisals[j]), len(s.Tokens))
		}
		for k, tok := range s.Tokens {
			bw.WriteString(strconv.Itoa(j + 1))
			bw.WriteByte('\t')
			bw.WriteString(strconv.Itoa(k + 1))
			bw.WriteByte('\t')
			bw.WriteString(tok)
			bw.WriteByte('\t')
			bw.WriteString(strconv.FormatFloat(surprisals[j][k], 'g', -1, 64))
			bw.WriteByte('\n')
		}
	}
	return bw.Flush()
}

// ReadSurprisalsFile reads the surprisal file at path. See ReadSurprisals.
func ReadSurprisalsFile(path string, sents []Sentence) ([][]float64, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("syntaxgym: %w", err)
	}
	defer f.Close()
	return ReadSurprisals(f, path, sents)
}

// ReadSurprisals reads per-token surprisals in lm-zoo's TSV format (see
// WriteSurprisals) for the sentences sents, usually a suite's Sentences().
// The file must hold exactly the tokens of sents, in order: sentence ids
// 1..len(sents), token ids 1..n within each sentence, and tokens equal to
// the sentences' tokens after lowercasing. A sentence without tokens has no
// lines. The surprisals must be numbers (strconv.ParseFloat syntax); NaN and
// −Inf are rejected. name is used in errors, which give the line, and the
// sentence and token concerned. out[j][k] is the surprisal of token k of
// sents[j].
func ReadSurprisals(r io.Reader, name string, sents []Sentence) ([][]float64, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	sc.Split(lines.Split())
	line := 0
	next := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		line++
		return sc.Text(), true
	}
	h, ok := next()
	if !ok {
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return nil, fmt.Errorf("%s: empty file: want the header %q", name, TSVHeader)
	}
	if strings.TrimSpace(h) != TSVHeader {
		return nil, fmt.Errorf("%s:1: header %q, want %q", name, h, TSVHeader)
	}
	out := make([][]float64, len(sents))
	// j, k: the sentence and token that the next line must hold.
	j, k := 0, 0
	skipEmpty := func() {
		for j < len(sents) && k == len(sents[j].Tokens) {
			j, k = j+1, 0
		}
	}
	for i := range sents {
		out[i] = make([]float64, 0, len(sents[i].Tokens))
	}
	skipEmpty()
	for {
		text, ok := next()
		if !ok {
			break
		}
		if strings.TrimSpace(text) == "" {
			return nil, fmt.Errorf("%s:%d: empty line", name, line)
		}
		fs := strings.Split(text, "\t")
		if len(fs) != 4 {
			return nil, fmt.Errorf("%s:%d: %d tab-separated fields, want 4 (%s)", name, line, len(fs), strings.ReplaceAll(TSVHeader, "\t", ", "))
		}
		sid, err1 := strconv.Atoi(fs[0])
		tid, err2 := strconv.Atoi(fs[1])
		if err1 != nil || err2 != nil {
			return nil, fmt.Errorf("%s:%d: sentence_id %q and token_id %q must be integers", name, line, fs[0], fs[1])
		}
		if j == len(sents) {
			return nil, fmt.Errorf("%s:%d: sentence %d, token %d: the file has more tokens than the %d sentences", name, line, sid, tid, len(sents))
		}
		s := &sents[j]
		if sid != j+1 || tid != k+1 {
			return nil, fmt.Errorf("%s:%d: sentence %d, token %d: want sentence %d (item %d, condition %q), token %d %q",
				name, line, sid, tid, j+1, s.ItemNumber, s.Condition, k+1, s.Tokens[k])
		}
		if strings.ToLower(fs[2]) != s.Tokens[k] {
			return nil, fmt.Errorf("%s:%d: sentence %d (item %d, condition %q), token %d: %q, want %q",
				name, line, sid, s.ItemNumber, s.Condition, tid, fs[2], s.Tokens[k])
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(fs[3]), 64)
		if err != nil && !math.IsInf(v, 1) || math.IsNaN(v) || math.IsInf(v, -1) {
			return nil, fmt.Errorf("%s:%d: sentence %d, token %d: surprisal %q: want a number other than NaN and -Inf", name, line, sid, tid, fs[3])
		}
		out[j] = append(out[j], v)
		k++
		skipEmpty()
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if j < len(sents) {
		s := &sents[j]
		return nil, fmt.Errorf("%s:%d: unexpected end of file: want sentence %d (item %d, condition %q), token %d %q",
			name, line+1, j+1, s.ItemNumber, s.Condition, k+1, s.Tokens[k])
	}
	return out, nil
}
