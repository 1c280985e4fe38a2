package main

import (
	"bytes"
	"strconv"
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
		if got := strings.TrimSpace(out.String()); got != strconv.Itoa(tc.want) {
			t.Errorf("%v: printed %s, want %d", tc.args, got, tc.want)
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
