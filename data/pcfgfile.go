package data

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/nsrnn/nsrnn/internal/atomicfile"
	"github.com/nsrnn/nsrnn/internal/lines"
	"github.com/nsrnn/nsrnn/internal/readlimit"
)

// GrammarFileProbTol is the tolerance of a grammar file (ReadPCFG) on the
// sum of the probabilities of the rules of one left-hand side: a sum
// within it of 1 is accepted (and the rules divided by it, where it is not
// 1 within the 1e-9 of NewPCFG, so that probabilities written with six
// decimals are usable), and one outside it is refused.
const GrammarFileProbTol = 1e-6

// ReadPCFG reads a grammar in the text format of grammar files (see
// "Grammar files" in the package documentation) from r. name is used in
// errors, which are *LineError values where a line is at fault: among
// them a line that is not valid UTF-8, or a quoted symbol whose escapes
// make one that is not (both wrapping ErrInvalidUTF8). A grammar with no
// terminal symbols is an error naming the file.
func ReadPCFG(r io.Reader, name string) (*PCFG, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<24)
	sc.Split(lines.Split())
	type lhsInfo struct {
		sum   float64
		first int // line of the first rule
	}
	var (
		rules  []Rule
		quoted = map[string]int{} // symbols written quoted somewhere, with a line
		byLHS  = map[string]*lhsInfo{}
		order  []string
	)
	for line := 1; sc.Scan(); line++ {
		if err := checkUTF8(sc.Bytes()); err != nil {
			return nil, &LineError{Name: name, Line: line, Err: err}
		}
		r, q, ok, err := parseRuleLine(sc.Text())
		if err != nil {
			return nil, &LineError{Name: name, Line: line, Err: err}
		}
		if !ok {
			continue
		}
		for _, s := range q {
			if _, seen := quoted[s]; !seen {
				quoted[s] = line
			}
		}
		info := byLHS[r.LHS]
		if info == nil {
			info = &lhsInfo{first: line}
			byLHS[r.LHS] = info
			order = append(order, r.LHS)
		}
		info.sum += r.Prob
		rules = append(rules, r)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("%s: no rules", name)
	}
	for s, line := range quoted {
		if _, ok := byLHS[s]; ok {
			return nil, &LineError{Name: name, Line: line, Err: fmt.Errorf("quoted symbol %q is a terminal, but it is also the left side of a rule (line %d)", s, byLHS[s].first)}
		}
	}
	for _, a := range order {
		if sum := byLHS[a].sum; math.Abs(sum-1) > GrammarFileProbTol {
			return nil, &LineError{Name: name, Line: byLHS[a].first, Err: fmt.Errorf("the probabilities of the rules of %s sum to %v, not 1 (tolerance %g)", a, sum, GrammarFileProbTol)}
		}
	}
	// Terminals, in order of first appearance; symbols that are the left
	// side of no rule.
	var terms []string
	seen := map[string]bool{}
	for _, r := range rules {
		for _, s := range r.RHS {
			if _, nt := byLHS[s]; !nt && !seen[s] {
				seen[s] = true
				terms = append(terms, s)
			}
		}
	}
	if len(terms) == 0 {
		return nil, fmt.Errorf("%s: the grammar has no terminal symbols: every symbol of a right side is the left side of a rule, so it derives only the empty string, if anything", name)
	}
	for i := range rules {
		if sum := byLHS[rules[i].LHS].sum; math.Abs(sum-1) > probTol {
			rules[i].Prob /= sum
		}
	}
	g, err := NewPCFG(rules[0].LHS, terms, rules)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return g, nil
}

// parseRuleLine parses one line of a grammar file. It reports ok = false
// for a line that holds no rule (blank or a comment), and returns the
// symbols that were written quoted.
func parseRuleLine(text string) (r Rule, quoted []string, ok bool, err error) {
	fields := strings.Fields(text)
	for i, f := range fields {
		if strings.HasPrefix(f, "#") {
			fields = fields[:i]
			break
		}
	}
	if len(fields) == 0 {
		return Rule{}, nil, false, nil
	}
	if len(fields) >= 2 && (fields[1] == "->" || fields[1] == "→") && len(fields) < 3 {
		return Rule{}, nil, false, errors.New(`the rule has no probability: want "LHS -> RHS1 RHS2 … [p]" (an ε rule is "LHS -> [p]")`)
	}
	if len(fields) < 3 || (fields[1] != "->" && fields[1] != "→") {
		for _, f := range fields[:min(2, len(fields))] {
			if strings.Contains(f, "->") || strings.Contains(f, "→") {
				return Rule{}, nil, false, fmt.Errorf(`want a rule "LHS -> RHS1 RHS2 … [p]", its symbols separated by white space: %q holds the arrow`, f)
			}
		}
		return Rule{}, nil, false, errors.New(`want a rule "LHS -> RHS1 RHS2 … [p]"`)
	}
	lhs := fields[0]
	if strings.HasPrefix(lhs, `"`) {
		return Rule{}, nil, false, fmt.Errorf("left side %s is quoted: quoted symbols are terminals", lhs)
	}
	if lhs == "->" || lhs == "→" || isProbToken(lhs) {
		return Rule{}, nil, false, fmt.Errorf("invalid left side %q", lhs)
	}
	last := fields[len(fields)-1]
	if !isProbToken(last) {
		return Rule{}, nil, false, fmt.Errorf("the rule does not end with its probability [p]: last symbol %q", last)
	}
	p, perr := strconv.ParseFloat(last[1:len(last)-1], 64)
	if perr != nil || math.IsNaN(p) || p < 0 || p > 1 {
		return Rule{}, nil, false, fmt.Errorf("probability %s is not a number in [0, 1]", last)
	}
	r = Rule{LHS: lhs, Prob: p, RHS: []string{}}
	for _, f := range fields[2 : len(fields)-1] {
		s := f
		if strings.HasPrefix(f, `"`) {
			if s, err = strconv.Unquote(f); err != nil {
				if len(f) < 2 || !strings.HasSuffix(f, `"`) {
					return Rule{}, nil, false, fmt.Errorf("malformed quoted symbol %s: no closing quote (a symbol cannot hold white space)", f)
				}
				return Rule{}, nil, false, fmt.Errorf("malformed quoted symbol %s", f)
			}
			if !utf8.ValidString(s) {
				return Rule{}, nil, false, fmt.Errorf("quoted symbol %s is not valid UTF-8: %w", f, ErrInvalidUTF8)
			}
			if s == "" || strings.ContainsFunc(s, isSpace) {
				return Rule{}, nil, false, fmt.Errorf("quoted symbol %s is empty or holds white space", f)
			}
			quoted = append(quoted, s)
		} else if f == "->" || f == "→" {
			return Rule{}, nil, false, fmt.Errorf("a second %s in the rule (quote a terminal %q)", f, f)
		} else if isProbToken(f) {
			return Rule{}, nil, false, fmt.Errorf("probability %s before the end of the rule", f)
		}
		r.RHS = append(r.RHS, s)
	}
	return r, quoted, true, nil
}

func isSpace(r rune) bool { return strings.TrimSpace(string(r)) == "" }

// isProbToken reports whether a bare token has the form of a probability,
// "[…]" with something inside.
func isProbToken(f string) bool {
	return len(f) > 2 && f[0] == '[' && f[len(f)-1] == ']'
}

// ReadPCFGFile reads a grammar file (see ReadPCFG) of at most
// MaxTextBytes; errors name the file.
func ReadPCFGFile(path string) (*PCFG, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadPCFG(readlimit.Reader(f, path, MaxTextBytes), path)
}

// WritePCFG writes g in the format of grammar files, which ReadPCFG reads
// back into the same grammar (same start symbol, rules and probabilities):
// one rule per line in g's order, terminals quoted, probabilities in the
// shortest form that reads back exactly. The terminals read back are
// numbered in the order in which they first occur in the rules, which is
// g's order only when g's terminals first occur in that order (not so for
// hardest-cfl's: a model of --task hardest-cfl and one of its grammar file
// number their symbols differently). header, when not empty, is written
// first as comment lines.
func WritePCFG(w io.Writer, g *PCFG, header string) error {
	if g == nil {
		return errNilGrammar
	}
	bw := bufio.NewWriter(w)
	if header != "" {
		for l := range strings.SplitSeq(strings.TrimRight(header, "\n"), "\n") {
			bw.WriteString(strings.TrimRight("# "+l, " ") + "\n")
		}
	}
	for _, r := range g.rules {
		bw.WriteString(r.LHS)
		bw.WriteString(" ->")
		for _, s := range r.RHS {
			bw.WriteByte(' ')
			if _, ok := g.termIndex[s]; ok {
				bw.WriteString(strconv.Quote(s))
			} else {
				bw.WriteString(s)
			}
		}
		fmt.Fprintf(bw, " [%s]\n", strconv.FormatFloat(r.Prob, 'g', -1, 64))
	}
	return bw.Flush()
}

// WritePCFGFile writes g to the named file as WritePCFG does, atomically.
func WritePCFGFile(path string, g *PCFG, header string) error {
	return atomicfile.Write(path, func(w io.Writer) error { return WritePCFG(w, g, header) })
}
