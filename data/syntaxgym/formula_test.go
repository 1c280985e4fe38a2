package syntaxgym

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

func term(r int, c string) *Term   { return &Term{Region: r, Condition: c} }
func num(v float64) *Number        { return &Number{Value: v} }
func bin(op Op, x, y Expr) *Binary { return &Binary{Op: op, X: x, Y: y} }

func TestParseFormula(t *testing.T) {
	a1, b1, a2, b2 := term(1, "a"), term(1, "b"), term(2, "a"), term(2, "b")
	for _, tc := range []struct {
		src  string
		want Expr
		str  string // String of the result
	}{
		{"(1;%a%)<(1;%b%)", bin(Less, a1, b1), "(1;%a%) < (1;%b%)"},
		{"  ( 1 ; %a% )   >\t(1;%b%) ", bin(Greater, a1, b1), "(1;%a%) > (1;%b%)"},
		{"(1;%a%) = (1;%b%)", bin(Close, a1, b1), "(1;%a%) = (1;%b%)"},
		{"(*;%no-sub_matrix.2%) > 0", bin(Greater, term(AllRegions, "no-sub_matrix.2"), num(0)), "(*;%no-sub_matrix.2%) > 0"},
		{"(12;%a%) > 1.5", bin(Greater, term(12, "a"), num(1.5)), "(12;%a%) > 1.5"},
		{"(1;%a%) > -2", bin(Greater, a1, num(-2)), "(1;%a%) > -2"},
		{"(1;%a%) > +.5e1", bin(Greater, a1, num(5)), "(1;%a%) > 5"},
		{"(1;%a%) > 1e-3", bin(Greater, a1, num(1e-3)), "(1;%a%) > 0.001"},
		{"(1;%a%) > 2.", bin(Greater, a1, num(2)), "(1;%a%) > 2"},
		// + and - are left associative.
		{"(1;%a%) - (1;%b%) - (2;%a%) > 0",
			bin(Greater, bin(Sub, bin(Sub, a1, b1), a2), num(0)),
			"(1;%a%) - (1;%b%) - (2;%a%) > 0"},
		{"(1;%a%) - ((1;%b%) - (2;%a%)) > 0",
			bin(Greater, bin(Sub, a1, bin(Sub, b1, a2)), num(0)),
			"(1;%a%) - ((1;%b%) - (2;%a%)) > 0"},
		{"(1;%a%) - -2 > 0", bin(Greater, bin(Sub, a1, num(-2)), num(0)), "(1;%a%) - -2 > 0"},
		{"(1;%a%)-2 > 0", bin(Greater, bin(Sub, a1, num(2)), num(0)), "(1;%a%) - 2 > 0"},
		// Arithmetic binds tighter than comparisons.
		{"(1;%a%) + (2;%a%) < (1;%b%) + (2;%b%)",
			bin(Less, bin(Add, a1, a2), bin(Add, b1, b2)),
			"(1;%a%) + (2;%a%) < (1;%b%) + (2;%b%)"},
		{"((1;%a%) + (2;%a%)) < ((1;%b%) + (2;%b%))",
			bin(Less, bin(Add, a1, a2), bin(Add, b1, b2)),
			"(1;%a%) + (2;%a%) < (1;%b%) + (2;%b%)"},
		// & and | bind alike and group from the left, as in SyntaxGym's
		// grammar; written back, a mix is parenthesized.
		{"(1;%a%) < (1;%b%) & (2;%a%) > (2;%b%) | (1;%a%) = 0",
			bin(Or, bin(And, bin(Less, a1, b1), bin(Greater, a2, b2)), bin(Close, a1, num(0))),
			"((1;%a%) < (1;%b%) & (2;%a%) > (2;%b%)) | (1;%a%) = 0"},
		{"(1;%a%) = 0 | (1;%a%) < (1;%b%) & (2;%a%) > (2;%b%)",
			bin(And, bin(Or, bin(Close, a1, num(0)), bin(Less, a1, b1)), bin(Greater, a2, b2)),
			"((1;%a%) = 0 | (1;%a%) < (1;%b%)) & (2;%a%) > (2;%b%)"},
		{"(1;%a%) = 0 | ((1;%a%) < (1;%b%) & (2;%a%) > (2;%b%))",
			bin(Or, bin(Close, a1, num(0)), bin(And, bin(Less, a1, b1), bin(Greater, a2, b2))),
			"(1;%a%) = 0 | ((1;%a%) < (1;%b%) & (2;%a%) > (2;%b%))"},
		// & and | are left associative; explicit right grouping is kept.
		{"(1;%a%) < 1 & (1;%a%) < 2 & (1;%a%) < 3",
			bin(And, bin(And, bin(Less, a1, num(1)), bin(Less, a1, num(2))), bin(Less, a1, num(3))),
			"(1;%a%) < 1 & (1;%a%) < 2 & (1;%a%) < 3"},
		{"(1;%a%) < 1 | ((1;%a%) < 2 | (1;%a%) < 3)",
			bin(Or, bin(Less, a1, num(1)), bin(Or, bin(Less, a1, num(2)), bin(Less, a1, num(3)))),
			"(1;%a%) < 1 | ((1;%a%) < 2 | (1;%a%) < 3)"},
		{"(((1;%a%) < (1;%b%)))", bin(Less, a1, b1), "(1;%a%) < (1;%b%)"},
		// A shared-suite formula.
		{"((6;%np_mismatch%)-(6;%np_match%))+(((5;%vp_mismatch%)+(6;%vp_mismatch%))-((5;%vp_match%)+(6;%vp_match%)))>0",
			bin(Greater,
				bin(Add,
					bin(Sub, term(6, "np_mismatch"), term(6, "np_match")),
					bin(Sub,
						bin(Add, term(5, "vp_mismatch"), term(6, "vp_mismatch")),
						bin(Add, term(5, "vp_match"), term(6, "vp_match")))),
				num(0)),
			"(6;%np_mismatch%) - (6;%np_match%) + ((5;%vp_mismatch%) + (6;%vp_mismatch%) - ((5;%vp_match%) + (6;%vp_match%))) > 0"},
	} {
		got, err := ParseFormula(tc.src)
		if err != nil {
			t.Errorf("ParseFormula(%q): %v", tc.src, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseFormula(%q) = %v, want %v", tc.src, got, tc.want)
		}
		if s := got.String(); s != tc.str {
			t.Errorf("ParseFormula(%q).String() = %q, want %q", tc.src, s, tc.str)
		}
		again, err := ParseFormula(got.String())
		if err != nil {
			t.Errorf("ParseFormula(%q) of the String of %q: %v", got.String(), tc.src, err)
		} else if !reflect.DeepEqual(again, got) {
			t.Errorf("%q does not round-trip: %v, then %v", tc.src, got, again)
		}
	}
}

func TestParseFormulaErrors(t *testing.T) {
	for _, tc := range []struct {
		src    string
		column int
		msg    string
	}{
		{"", 1, "unexpected end of formula"},
		{"(1;%a%)", 1, "formula is a number"},
		{"(1;%a%) + 2", 1, "formula is a number"},
		{"(1;%a%) <", 10, "unexpected end of formula"},
		{"(1;%a%) < (1;%b%) junk", 19, `unexpected 'j' after the end`},
		{"(1;%a%) < (1;%b%))", 18, `unexpected ')' after the end`},
		{"((1;%a%) < (1;%b%)", 19, `want ")" closing the "(" at column 1`},
		{"(1;%a) < 0", 6, `unexpected ')' in condition name`},
		{"(1;%a < 0", 6, `unexpected ' ' in condition name`},
		{"(1;%a", 4, `not closed by "%"`},
		{"(1;%%) < 0", 5, "empty condition name"},
		{"(1;a%) < 0", 4, `want "%" opening the condition name`},
		{"(1;%a%; < 0", 7, `want ")" closing the term`},
		{"(0;%a%) < 0", 2, "regions are numbered from 1"},
		{"(99999999999999999999;%a%) < 0", 2, "out of range"},
		{"(1;%a%) < 1e999", 11, "out of range"},
		{"(1;%a%) < 1e", 12, "malformed exponent"},
		{"(1;%a%) < .", 11, "malformed number"},
		{"(1;%a%) < - 2", 11, `'-' is not followed by a number`},
		{"-(1;%a%) < 0", 1, `'-' is not followed by a number`},
		{"(1;%a%) < (1;%b%) < 3", 19, "comparisons do not chain"},
		{"((1;%a%) < (1;%b%)) < 3", 1, "left operand of < at column 21 is a comparison"},
		{"3 > ((1;%a%) < (1;%b%))", 5, "right operand of > at column 3 is a comparison"},
		{"((1;%a%) < 1) + 2 > 0", 1, "left operand of + at column 15 is a comparison"},
		{"(1;%a%) + ((1;%a%) < 1) > 0", 11, "right operand of + at column 9 is a comparison"},
		{"(1;%a%) & (1;%a%) < 1", 1, "left operand of & at column 9 is a number"},
		{"(1;%a%) < 1 | (1;%b%)", 15, "right operand of | at column 13 is a number"},
		{"(1;%a%) < 1 && (1;%a%) < 2", 14, `unexpected '&': want a term`},
		{"(1;%a%) <= 1", 10, `unexpected '='`},
		{"(1;%a%) < x", 11, `unexpected 'x'`},
	} {
		_, err := ParseFormula(tc.src)
		if err == nil {
			t.Errorf("ParseFormula(%q) succeeded", tc.src)
			continue
		}
		se, ok := errors.AsType[*SyntaxError](err)
		if !ok {
			t.Errorf("ParseFormula(%q): error %v is not a *SyntaxError", tc.src, err)
			continue
		}
		if se.Column != tc.column || !strings.Contains(se.Msg, tc.msg) || se.Formula != tc.src {
			t.Errorf("ParseFormula(%q): %v; want column %d and a message containing %q", tc.src, err, tc.column, tc.msg)
		}
		if !strings.Contains(err.Error(), `formula "`) {
			t.Errorf("ParseFormula(%q): error %q does not quote the formula", tc.src, err)
		}
	}
}

// TestParseFormulaLimits checks the limits on a formula's nesting and
// length: a formula at the limits parses, one beyond them is a
// *SyntaxError at the right column (and a formula nested five million
// deep, which once exhausted the stack, is refused), and the error quotes
// only the start of a long formula.
func TestParseFormulaLimits(t *testing.T) {
	nest := func(depth int) string {
		return strings.Repeat("(", depth) + "(1;%a%) > 0" + strings.Repeat(")", depth)
	}
	long := func(n int) string { // "(1;%a%) > 0 - 0 - … - 0", n bytes
		s := "(1;%a%) > 0"
		return s + strings.Repeat(" ", n-len(s)-len("- 0")) + "- 0"
	}
	for _, ok := range []string{nest(MaxFormulaDepth), long(MaxFormulaBytes)} {
		if _, err := ParseFormula(ok); err != nil {
			t.Errorf("a formula within the limits (%d bytes): %v", len(ok), err)
		}
	}
	for _, tc := range []struct {
		src    string
		column int
		msg    string
	}{
		{nest(MaxFormulaDepth + 1), MaxFormulaDepth + 1, "nested more than 100 deep"},
		{nest(5_000_000), MaxFormulaBytes + 1, "longer than 65536 bytes"},
		{long(MaxFormulaBytes + 1), MaxFormulaBytes + 1, "longer than 65536 bytes"},
	} {
		_, err := ParseFormula(tc.src)
		se, ok := errors.AsType[*SyntaxError](err)
		if !ok || se.Column != tc.column || !strings.Contains(se.Msg, tc.msg) || se.Formula != tc.src {
			t.Errorf("a formula of %d bytes: %v; want column %d and a message containing %q", len(tc.src), err, tc.column, tc.msg)
			continue
		}
		if msg := err.Error(); len(msg) > 400 || !strings.Contains(msg, "…") || !strings.HasPrefix(msg, `formula "((((`) && !strings.HasPrefix(msg, `formula "(1;%a%) > 0 `) {
			t.Errorf("a formula of %d bytes: error of %d bytes, %.80q…", len(tc.src), len(msg), msg)
		}
	}
}

// TestHolds evaluates formulas on known term values.
func TestHolds(t *testing.T) {
	values := map[Term]float64{
		{1, "a"}: 2, {2, "a"}: 3, {AllRegions, "a"}: 5,
		{1, "b"}: 2, {2, "b"}: 4, {AllRegions, "b"}: 6,
		{1, "big"}: 1000, {1, "nan"}: math.NaN(), {1, "inf"}: math.Inf(1),
	}
	value := func(t *Term) (float64, error) {
		v, ok := values[*t]
		if !ok {
			return 0, errors.New("no value for " + t.String())
		}
		return v, nil
	}
	for _, tc := range []struct {
		src  string
		want bool
	}{
		{"(1;%a%) < (2;%a%)", true},
		{"(1;%a%) > (2;%a%)", false},
		{"(1;%a%) < (1;%b%)", false}, // tie: strict
		{"(1;%a%) > (1;%b%)", false}, // tie: strict
		{"(1;%a%) = (1;%b%)", true},
		{"(2;%a%) = (2;%b%)", false},
		{"(1;%a%) = 2.0009", true},     // within the absolute tolerance
		{"(1;%a%) = 2.0011", false},    // just outside
		{"(1;%a%) = 1.999", true},      // |2 - 1.999| = 0.001 ≤ 1e-3 + 2e-5
		{"(1;%a%) = 1.9989", false},    // 0.0011 > 0.00101998
		{"(1;%big%) = 1001", false},    // 1 > 1e-3 + 1e-5·1001
		{"(1;%big%) = 1000.011", true}, // 0.011 ≤ 0.001 + 0.01000011
		{"(1;%big%) = 1000.012", false},
		{"(1;%inf%) = (1;%inf%)", true},
		{"(1;%a%) = (1;%inf%)", false}, // NumPy: isclose(2, inf) is false
		{"(1;%inf%) = (1;%a%)", false},
		{"(1;%inf%) = 0 - (1;%inf%)", false}, // +Inf against -Inf
		{"(1;%inf%) > (1;%big%)", true},
		{"(1;%nan%) = (1;%nan%)", false},
		{"(1;%nan%) < 1 | (1;%nan%) > 1", false},
		{"(*;%a%) < (*;%b%)", true},
		{"(*;%a%) = (1;%a%) + (2;%a%)", true},
		{"(*;%b%) - (*;%a%) = 1", true},
		{"(1;%a%) - (2;%a%) - (1;%b%) = -3", true},  // left associative
		{"(1;%a%) - ((2;%a%) - (1;%b%)) = 1", true}, // parentheses
		{"(1;%a%) + (2;%a%) > (2;%b%)", true},       // 5 > 4
		{"(1;%a%) < (2;%a%) & (1;%a%) > (2;%a%)", false},
		{"(1;%a%) < (2;%a%) | (1;%a%) > (2;%a%)", true},
		// true | false & false: left to right, as SyntaxGym groups them.
		{"(1;%a%) < 3 | (1;%a%) > 3 & (1;%a%) > 3", false}, // ((a < 3) | (a > 3)) & (a > 3), a = 2
		{"(1;%a%) < 3 | ((1;%a%) > 3 & (1;%a%) > 3)", true},
		{"((1;%a%) < 3 | (1;%a%) > 3) & (1;%a%) > 3", false},
		// false & true | true: left to right.
		{"(1;%a%) > 3 & (1;%a%) < 3 | (1;%a%) < 3", true},
		{"(1;%a%) > 3 & ((1;%a%) < 3 | (1;%a%) < 3)", false},
		{"0 < 1", true},
		{"-1.5 < -1", true},
	} {
		e, err := ParseFormula(tc.src)
		if err != nil {
			t.Errorf("ParseFormula(%q): %v", tc.src, err)
			continue
		}
		got, err := Holds(e, value)
		if err != nil {
			t.Errorf("Holds(%q): %v", tc.src, err)
		} else if got != tc.want {
			t.Errorf("Holds(%q) = %v, want %v", tc.src, got, tc.want)
		}
	}

	// Errors: a missing value, and ill-typed trees built by hand.
	e, _ := ParseFormula("(1;%zz%) < 1")
	if _, err := Holds(e, value); err == nil || !strings.Contains(err.Error(), "(1;%zz%)") {
		t.Errorf("Holds with a missing value: error %v", err)
	}
	if _, err := Holds(num(1), value); err == nil {
		t.Error("Holds(number) succeeded")
	}
	if _, err := Holds(bin(Less, bin(Less, num(1), num(2)), num(3)), value); err == nil {
		t.Error("Holds(comparison < number) succeeded")
	}
	if _, err := Value(nil, value); err == nil {
		t.Error("Value(nil) succeeded")
	}
}

func TestTerms(t *testing.T) {
	e, err := ParseFormula("(2;%b%) + (*;%a%) < (1;%c%) | (2;%b%) > 0")
	if err != nil {
		t.Fatal(err)
	}
	want := []*Term{term(2, "b"), term(AllRegions, "a"), term(1, "c"), term(2, "b")}
	if got := Terms(e); !reflect.DeepEqual(got, want) {
		t.Errorf("Terms = %v, want %v", got, want)
	}
}

// FuzzParseFormula parses arbitrary formulas. A formula is refused with a
// *SyntaxError, or gives a well-typed expression whose String parses back
// to the same expression, and which Holds and Value evaluate without
// error on any term values.
func FuzzParseFormula(f *testing.F) {
	for _, s := range []string{
		"(1;%a%) < (1;%b%)",
		"(*;%no-sub_matrix.2%) > 0",
		"(1;%a%) - ((1;%b%) - (2;%a%)) > +.5e1",
		"((1;%a%) = 0 | (1;%a%) < (1;%b%)) & (2;%a%) > (2;%b%)",
		"(1;%a%) < 1 && (1;%a%) < 2",
		"((((1;%a%) > 0)))",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		e, err := ParseFormula(src)
		if err != nil {
			if _, ok := errors.AsType[*SyntaxError](err); !ok {
				t.Fatalf("error %v is not a *SyntaxError", err)
			}
			return
		}
		back, err := ParseFormula(e.String())
		if err != nil || !reflect.DeepEqual(back, e) {
			t.Fatalf("%q: String %q parses to %v, %v", src, e.String(), back, err)
		}
		value := func(tm *Term) (float64, error) { return float64(tm.Region) - 1.5, nil }
		if _, err := Holds(e, value); err != nil {
			t.Fatalf("%q: Holds: %v", src, err)
		}
		for _, tm := range Terms(e) {
			if tm == nil || tm.Condition == "" {
				t.Fatalf("%q: term %v", src, tm)
			}
		}
	})
}
