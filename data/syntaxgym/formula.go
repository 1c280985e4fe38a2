package syntaxgym

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tolerances of the = ("close") comparison: x = y holds when
// |x−y| ≤ CloseAbsTol + CloseRelTol·|y|, or when x and y are equal.
const (
	CloseAbsTol = 1e-3
	CloseRelTol = 1e-5
)

// Limits of ParseFormula: a formula longer than MaxFormulaBytes, or with
// parentheses nested more than MaxFormulaDepth deep, is a *SyntaxError.
// Real suites' formulas are a few hundred bytes with a few levels; the
// limits keep a damaged or hostile suite file from exhausting the stack.
const (
	MaxFormulaBytes = 1 << 16
	MaxFormulaDepth = 100
)

// AllRegions is the Region of a Term written with "*": the sum over all the
// regions of the condition.
const AllRegions = 0

// Expr is a node of a parsed formula: a *Term, a *Number or a *Binary.
// Expressions built by ParseFormula are well typed: the operands of + and −
// and of the comparisons are numeric, and the operands of & and | and the
// formula itself are boolean.
type Expr interface {
	// String returns the formula text of the expression, with the
	// parentheses that its structure needs and single spaces around the
	// binary operators. ParseFormula(e.String()) returns an expression
	// structurally equal to e.
	String() string

	expr()
}

// Term is a region's surprisal in a condition, written (N;%condition%), or
// (*;%condition%) for the sum over all of the condition's regions.
type Term struct {
	Region    int    // region number, from 1, or AllRegions
	Condition string // condition name
}

// Number is a numeric literal.
type Number struct {
	Value float64
}

// Binary is a binary operation X Op Y.
type Binary struct {
	Op   Op
	X, Y Expr
}

func (*Term) expr()   {}
func (*Number) expr() {}
func (*Binary) expr() {}

// String returns "(N;%condition%)", or "(*;%condition%)" for AllRegions.
func (t *Term) String() string {
	if t.Region == AllRegions {
		return "(*;%" + t.Condition + "%)"
	}
	return "(" + strconv.Itoa(t.Region) + ";%" + t.Condition + "%)"
}

// String returns the shortest decimal form that parses back to the same
// value, for example "0", "1.5", "-2" or "1e-05".
func (n *Number) String() string { return strconv.FormatFloat(n.Value, 'g', -1, 64) }

// String returns "X op Y", parenthesizing an operand that binds more loosely
// than Op, and a right operand that binds as tightly (the operators are left
// associative).
func (b *Binary) String() string {
	x, y := b.X.String(), b.Y.String()
	p := b.Op.precedence()
	// An & under an | or the other way round is parenthesized, though
	// they group from the left: a reader may expect & to bind tighter.
	if lx, ok := b.X.(*Binary); precedence(b.X) < p || ok && (lx.Op == And || lx.Op == Or) && lx.Op != b.Op {
		x = "(" + x + ")"
	}
	if precedence(b.Y) <= p {
		y = "(" + y + ")"
	}
	return x + " " + b.Op.String() + " " + y
}

// Op is a binary operator of the formula language.
type Op int

// The operators, from the tightest binding to the loosest: Add and Sub;
// the comparisons Less, Greater and Close; And and Or.
const (
	Add     Op = iota + 1 // +, numeric
	Sub                   // -, numeric
	Less                  // <, strict: equal values are not less
	Greater               // >, strict: equal values are not greater
	Close                 // =, within CloseAbsTol + CloseRelTol·|Y|
	And                   // &
	Or                    // |
)

// String returns the operator's symbol.
func (o Op) String() string {
	switch o {
	case Add:
		return "+"
	case Sub:
		return "-"
	case Less:
		return "<"
	case Greater:
		return ">"
	case Close:
		return "="
	case And:
		return "&"
	case Or:
		return "|"
	}
	return fmt.Sprintf("Op(%d)", int(o))
}

// IsComparison reports whether o is Less, Greater or Close.
func (o Op) IsComparison() bool { return o == Less || o == Greater || o == Close }

// precedence is larger for tighter binding.
func (o Op) precedence() int {
	switch o {
	case Or, And:
		return 1
	case Less, Greater, Close:
		return 3
	case Add, Sub:
		return 4
	}
	return 0
}

func precedence(e Expr) int {
	if b, ok := e.(*Binary); ok {
		return b.Op.precedence()
	}
	return 5
}

// isBool reports whether e is a boolean expression: a comparison or an & or
// | of them.
func isBool(e Expr) bool {
	b, ok := e.(*Binary)
	return ok && (b.Op.IsComparison() || b.Op == And || b.Op == Or)
}

// Terms returns the terms of e in the order in which they are written.
func Terms(e Expr) []*Term {
	var ts []*Term
	var walk func(Expr)
	walk = func(e Expr) {
		switch e := e.(type) {
		case *Term:
			ts = append(ts, e)
		case *Binary:
			walk(e.X)
			walk(e.Y)
		}
	}
	walk(e)
	return ts
}

// SyntaxError reports a formula that does not parse.
type SyntaxError struct {
	Formula string // the formula text
	Column  int    // 1-based byte offset of the error in Formula
	Msg     string
}

// Error returns `formula "F": column C: message`, F cut after its first
// errorFormulaBytes bytes (and "…" added) when it is longer.
func (e *SyntaxError) Error() string {
	f := e.Formula
	if len(f) > errorFormulaBytes {
		i := errorFormulaBytes
		for i > 0 && !utf8.RuneStart(f[i]) {
			i--
		}
		f = f[:i] + "…"
	}
	return fmt.Sprintf("formula %q: column %d: %s", f, e.Column, e.Msg)
}

// errorFormulaBytes is the most of a formula's text that an error quotes.
const errorFormulaBytes = 200

// ParseFormula parses a prediction formula. The result is a boolean
// expression: a comparison, or comparisons combined with & and |. A
// formula that does not parse or is not well typed gives a *SyntaxError
// that says where.
func ParseFormula(src string) (Expr, error) {
	p := &parser{src: src}
	if len(src) > MaxFormulaBytes {
		return nil, p.errorf(MaxFormulaBytes, "formula longer than %d bytes", MaxFormulaBytes)
	}
	e, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos < len(p.src) {
		return nil, p.errorf(p.pos, "unexpected %s after the end of the formula", p.describe(p.pos))
	}
	if !isBool(e) {
		return nil, p.errorf(0, "formula is a number, not a comparison")
	}
	return e, nil
}

type parser struct {
	src   string
	pos   int
	depth int // parentheses open around pos
}

func (p *parser) errorf(pos int, format string, args ...any) error {
	return &SyntaxError{Formula: p.src, Column: pos + 1, Msg: fmt.Sprintf(format, args...)}
}

// describe returns a description of the input at pos for an error message.
func (p *parser) describe(pos int) string {
	if pos >= len(p.src) {
		return "end of formula"
	}
	r, _ := utf8.DecodeRuneInString(p.src[pos:])
	return strconv.QuoteRune(r)
}

func (p *parser) skipSpace() { p.pos = p.spaceEnd(p.pos) }

// spaceEnd returns the offset of the first non-space at or after i.
func (p *parser) spaceEnd(i int) int {
	for i < len(p.src) {
		r, n := utf8.DecodeRuneInString(p.src[i:])
		if !unicode.IsSpace(r) {
			break
		}
		i += n
	}
	return i
}

// peekOp skips spaces and returns the operator at the current position, if
// it is one of ops, without consuming it.
func (p *parser) peekOp(ops ...Op) (Op, bool) {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return 0, false
	}
	for _, o := range ops {
		if p.src[p.pos] == o.String()[0] {
			return o, true
		}
	}
	return 0, false
}

// parseOr parses a chain of comparisons joined by & and |, which bind
// alike and group from the left, as + and - do (SyntaxGym's levels:
// + and -, then the comparisons, then & and |).
func (p *parser) parseOr() (Expr, error) {
	return p.parseLogical(p.parseCmp, And, Or)
}

func (p *parser) parseLogical(next func() (Expr, error), ops ...Op) (Expr, error) {
	start := p.skipAndPos()
	x, err := next()
	if err != nil {
		return nil, err
	}
	for {
		op, ok := p.peekOp(ops...)
		if !ok {
			return x, nil
		}
		opPos := p.pos
		if !isBool(x) {
			return nil, p.errorf(start, "left operand of %v at column %d is a number, not a comparison", op, opPos+1)
		}
		p.pos++
		ystart := p.skipAndPos()
		y, err := next()
		if err != nil {
			return nil, err
		}
		if !isBool(y) {
			return nil, p.errorf(ystart, "right operand of %v at column %d is a number, not a comparison", op, opPos+1)
		}
		x = &Binary{Op: op, X: x, Y: y}
	}
}

func (p *parser) skipAndPos() int {
	p.skipSpace()
	return p.pos
}

func (p *parser) parseCmp() (Expr, error) {
	start := p.skipAndPos()
	x, err := p.parseSum()
	if err != nil {
		return nil, err
	}
	op, ok := p.peekOp(Less, Greater, Close)
	if !ok {
		return x, nil
	}
	opPos := p.pos
	if isBool(x) {
		return nil, p.errorf(start, "left operand of %v at column %d is a comparison, not a number", op, opPos+1)
	}
	p.pos++
	ystart := p.skipAndPos()
	y, err := p.parseSum()
	if err != nil {
		return nil, err
	}
	if isBool(y) {
		return nil, p.errorf(ystart, "right operand of %v at column %d is a comparison, not a number", op, opPos+1)
	}
	if op2, ok := p.peekOp(Less, Greater, Close); ok {
		return nil, p.errorf(p.pos, "comparisons do not chain: %v after %v at column %d (combine comparisons with & or |)", op2, op, opPos+1)
	}
	return &Binary{Op: op, X: x, Y: y}, nil
}

func (p *parser) parseSum() (Expr, error) {
	start := p.skipAndPos()
	x, err := p.parseAtom()
	if err != nil {
		return nil, err
	}
	for {
		op, ok := p.peekOp(Add, Sub)
		if !ok {
			return x, nil
		}
		opPos := p.pos
		if isBool(x) {
			return nil, p.errorf(start, "left operand of %v at column %d is a comparison, not a number", op, opPos+1)
		}
		p.pos++
		ystart := p.skipAndPos()
		y, err := p.parseAtom()
		if err != nil {
			return nil, err
		}
		if isBool(y) {
			return nil, p.errorf(ystart, "right operand of %v at column %d is a comparison, not a number", op, opPos+1)
		}
		x = &Binary{Op: op, X: x, Y: y}
	}
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

func (p *parser) parseAtom() (Expr, error) {
	p.skipSpace()
	if p.pos >= len(p.src) {
		return nil, p.errorf(p.pos, "unexpected end of formula: want a term, a number or \"(\"")
	}
	switch c := p.src[p.pos]; {
	case c == '(':
		if p.termAhead() {
			return p.parseTerm()
		}
		open := p.pos
		if p.depth++; p.depth > MaxFormulaDepth {
			return nil, p.errorf(open, "parentheses nested more than %d deep", MaxFormulaDepth)
		}
		p.pos++
		e, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		p.depth--
		p.skipSpace()
		if p.pos >= len(p.src) || p.src[p.pos] != ')' {
			return nil, p.errorf(p.pos, "unexpected %s: want \")\" closing the \"(\" at column %d", p.describe(p.pos), open+1)
		}
		p.pos++
		return e, nil
	case isDigit(c) || c == '.' || c == '+' || c == '-':
		return p.parseNumber()
	default:
		return nil, p.errorf(p.pos, "unexpected %s: want a term, a number or \"(\"", p.describe(p.pos))
	}
}

// termAhead reports whether the "(" at the current position starts a term:
// it is followed by a region number or "*" and then ";".
func (p *parser) termAhead() bool {
	i := p.spaceEnd(p.pos + 1)
	if i < len(p.src) && p.src[i] == '*' {
		return true
	}
	j := i
	for j < len(p.src) && isDigit(p.src[j]) {
		j++
	}
	if j == i {
		return false
	}
	j = p.spaceEnd(j)
	return j < len(p.src) && p.src[j] == ';'
}

// expect skips spaces and consumes c, or returns an error saying what was
// wanted.
func (p *parser) expect(c byte, what string) error {
	p.skipSpace()
	if p.pos >= len(p.src) || p.src[p.pos] != c {
		return p.errorf(p.pos, "unexpected %s: want %s", p.describe(p.pos), what)
	}
	p.pos++
	return nil
}

func isNameByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || isDigit(c) || c == '_' || c == '-' || c == '.'
}

func (p *parser) parseTerm() (Expr, error) {
	p.pos++ // "("
	p.skipSpace()
	t := &Term{}
	if p.src[p.pos] == '*' {
		t.Region = AllRegions
		p.pos++
	} else {
		start := p.pos
		for p.pos < len(p.src) && isDigit(p.src[p.pos]) {
			p.pos++
		}
		n, err := strconv.Atoi(p.src[start:p.pos])
		if err != nil {
			return nil, p.errorf(start, "region number %s is out of range", p.src[start:p.pos])
		}
		if n < 1 {
			return nil, p.errorf(start, "region number %d: regions are numbered from 1", n)
		}
		t.Region = n
	}
	if err := p.expect(';', "\";\" after the region number"); err != nil {
		return nil, err
	}
	if err := p.expect('%', "\"%\" opening the condition name"); err != nil {
		return nil, err
	}
	start := p.pos
	for p.pos < len(p.src) && p.src[p.pos] != '%' {
		if !isNameByte(p.src[p.pos]) {
			return nil, p.errorf(p.pos, "unexpected %s in condition name: want a letter, a digit, \"_\", \"-\", \".\" or the closing \"%%\"", p.describe(p.pos))
		}
		p.pos++
	}
	if p.pos >= len(p.src) {
		return nil, p.errorf(start-1, "condition name is not closed by \"%%\"")
	}
	if p.pos == start {
		return nil, p.errorf(p.pos, "empty condition name")
	}
	t.Condition = p.src[start:p.pos]
	p.pos++ // closing "%"
	if err := p.expect(')', "\")\" closing the term"); err != nil {
		return nil, err
	}
	return t, nil
}

// parseNumber parses [+-]? (digits [. digits?] | . digits) ([eE] [+-]? digits)?.
func (p *parser) parseNumber() (Expr, error) {
	start := p.pos
	i := p.pos
	if p.src[i] == '+' || p.src[i] == '-' {
		i++
	}
	mant := 0
	for i < len(p.src) && isDigit(p.src[i]) {
		i++
		mant++
	}
	if i < len(p.src) && p.src[i] == '.' {
		i++
		for i < len(p.src) && isDigit(p.src[i]) {
			i++
			mant++
		}
	}
	if mant == 0 {
		if p.src[start] == '+' || p.src[start] == '-' {
			return nil, p.errorf(start, "%q is not followed by a number (only number literals take a sign)", p.src[start])
		}
		return nil, p.errorf(start, "malformed number")
	}
	if i < len(p.src) && (p.src[i] == 'e' || p.src[i] == 'E') {
		j := i + 1
		if j < len(p.src) && (p.src[j] == '+' || p.src[j] == '-') {
			j++
		}
		k := j
		for k < len(p.src) && isDigit(p.src[k]) {
			k++
		}
		if k == j {
			return nil, p.errorf(i, "malformed exponent in number %q", p.src[start:k])
		}
		i = k
	}
	text := p.src[start:i]
	v, err := strconv.ParseFloat(text, 64)
	if math.IsInf(v, 0) {
		return nil, p.errorf(start, "number %s is out of range", text)
	}
	if err != nil {
		return nil, p.errorf(start, "malformed number %q", text)
	}
	p.pos = i
	return &Number{Value: v}, nil
}

// Holds evaluates the boolean expression e, taking the surprisal of each
// term from value. It returns an error when value does, or when e is not
// well typed (an expression that ParseFormula returns always is).
func Holds(e Expr, value func(*Term) (float64, error)) (bool, error) {
	b, ok := e.(*Binary)
	if !ok || !isBool(b) {
		return false, fmt.Errorf("syntaxgym: %v is a number, not a comparison", e)
	}
	switch b.Op {
	case And, Or:
		x, err := Holds(b.X, value)
		if err != nil {
			return false, err
		}
		y, err := Holds(b.Y, value)
		if err != nil {
			return false, err
		}
		if b.Op == And {
			return x && y, nil
		}
		return x || y, nil
	}
	x, err := Value(b.X, value)
	if err != nil {
		return false, err
	}
	y, err := Value(b.Y, value)
	if err != nil {
		return false, err
	}
	switch b.Op {
	case Less:
		return x < y, nil
	case Greater:
		return x > y, nil
	default: // Close
		// As NumPy's isclose: an infinity is close to itself alone (the
		// tolerance of an infinite y would otherwise be infinite).
		return x == y || !math.IsInf(x, 0) && !math.IsInf(y, 0) && math.Abs(x-y) <= CloseAbsTol+CloseRelTol*math.Abs(y), nil
	}
}

// Value evaluates the numeric expression e, taking the surprisal of each
// term from value. It returns an error when value does, or when e is not a
// number.
func Value(e Expr, value func(*Term) (float64, error)) (float64, error) {
	switch e := e.(type) {
	case *Term:
		return value(e)
	case *Number:
		return e.Value, nil
	case *Binary:
		if e.Op != Add && e.Op != Sub {
			return 0, fmt.Errorf("syntaxgym: %v is a comparison, not a number", e)
		}
		x, err := Value(e.X, value)
		if err != nil {
			return 0, err
		}
		y, err := Value(e.Y, value)
		if err != nil {
			return 0, err
		}
		if e.Op == Add {
			return x + y, nil
		}
		return x - y, nil
	}
	return 0, fmt.Errorf("syntaxgym: unknown expression %T", e)
}

// formulaString is used in error messages.
func formulaString(s string) string { return strconv.Quote(strings.TrimSpace(s)) }
