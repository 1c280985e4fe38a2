package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestParamsCommand checks the CFL parameter counts against formulas: an
// LSTM with the PyTorch layout on one-hot inputs, plus the stack's action
// layer and reading.
func TestParamsCommand(t *testing.T) {
	const h = 20
	lstm := func(in, out int) int { return 4*h*(in+h) + 8*h + out*h + out }
	for _, tc := range []struct {
		args []string
		want int
	}{
		// marked reversal: 3 terminals, 4 outputs with EOS.
		{[]string{"--task", "marked-reversal", "--model", "lstm"}, lstm(3, 4)},
		// rns with the task's |Q|=2, |Γ|=3: reading 6, actions 6·(12+2) = 84.
		{[]string{"--task", "marked-reversal", "--model", "rns"}, lstm(3+6, 4) + 84*(h+1)},
		// ns reads symbols only: reading 3.
		{[]string{"--task", "marked-reversal", "--model", "ns"}, lstm(3+3, 4) + 84*(h+1)},
		// padded reversal defaults to |Q|=3, |Γ|=3: actions 9·(18+3) = 189.
		{[]string{"--task", "padded-reversal", "--model", "ns+s"}, lstm(2+9, 3) + 189*(h+1)},
		// jm with stack vectors of 2: actions 3, pushed vector 2.
		{[]string{"--task", "dyck", "--model", "jm", "--stack-embedding", "2"}, lstm(4+2, 5) + 3*(h+1) + 2*(h+1)},
		// gref with the default stack vectors of 20: u, d and v.
		{[]string{"--task", "dyck", "--model", "gref"}, lstm(4+20, 5) + (h+1)*22},
	} {
		var out, errb bytes.Buffer
		if code := prog.Main(append([]string{"params"}, tc.args...), &out, &errb); code != 0 {
			t.Errorf("%v: exit %d: %s", tc.args, code, errb.String())
			continue
		}
		want := paramsLine(tc.args[3], tc.args[1], tc.want)
		if got := strings.TrimSpace(out.String()); got != want {
			t.Errorf("%v: printed %q, want %q (%d)", tc.args, got, want, tc.want)
		}
	}
	for _, args := range [][]string{
		{"--model", "rns"},
		{"--task", "nope", "--model", "rns"},
		{"--task", "dyck", "--model", "lstm", "--symbols", "3"},
	} {
		var out, errb bytes.Buffer
		if prog.Main(append([]string{"params"}, args...), &out, &errb) == 0 || out.Len() != 0 {
			t.Errorf("%v: want an error and nothing on stdout", args)
		}
	}
}

// TestParamsLine checks the labelled line of cfl params, with its
// thousands separated.
func TestParamsLine(t *testing.T) {
	for n, want := range map[int]string{
		7:       "rns on dyck: 7 parameters",
		999:     "rns on dyck: 999 parameters",
		4328:    "rns on dyck: 4,328 parameters",
		1234567: "rns on dyck: 1,234,567 parameters",
	} {
		if got := paramsLine("rns", "dyck", n); got != want {
			t.Errorf("paramsLine(%d) = %q, want %q", n, got, want)
		}
	}
	var out bytes.Buffer
	if code := prog.Main([]string{"params", "--task", "marked-reversal", "--model", "rns"}, &out, &bytes.Buffer{}); code != 0 ||
		!strings.HasPrefix(out.String(), "rns on marked-reversal: ") || !strings.HasSuffix(out.String(), " parameters\n") {
		t.Errorf("cfl params printed %q", out.String())
	}
}
