package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestParams checks the printed parameter counts against the paper's PTB
// tables (§5.2 and appendix E) and the error cases.
func TestParams(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "lstm", "--hidden", "256"}, "5656336"},
		{[]string{"--model", "lstm", "--hidden", "258"}, "5704576"},
		{[]string{"--model", "jm", "--hidden", "247", "--push-hidden-state"}, "5684828"},
		{[]string{"--model", "jm", "--hidden", "256", "--stack-embedding", "22"}, "5685289"},
		{[]string{"--model", "ns", "--hidden", "256", "--states", "3", "--symbols", "4"}, "5743700"},
		{[]string{"--model", "rns", "--hidden", "256", "--states", "1", "--symbols", "2"}, "5660954"},
		{[]string{"--model", "rns", "--hidden", "256", "--states", "3", "--symbols", "4"}, "5751892"},
	} {
		var out, errb bytes.Buffer
		if code := prog.Main(append([]string{"params"}, tc.args...), &out, &errb); code != 0 {
			t.Errorf("%v: exit %d: %s", tc.args, code, errb.String())
			continue
		}
		if got := out.String(); got != tc.want+"\n" {
			t.Errorf("%v: printed %q, want %q", tc.args, got, tc.want)
		}
	}
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--hidden", "256"}, "--model"},
		{[]string{"--model", "gru"}, "unknown model"},
		{[]string{"--model", "lstm", "--states", "2"}, "--states"},
		{[]string{"--model", "rns"}, "--states"},
		{[]string{"--model", "jm"}, "stack embedding"},
		{[]string{"--model", "lstm", "--vocab", "0"}, "--vocab"},
		{[]string{"--model", "lstm", "--bogus"}, "bogus"},
	} {
		var out, errb bytes.Buffer
		if code := prog.Main(append([]string{"params"}, tc.args...), &out, &errb); code == 0 {
			t.Errorf("%v: succeeded", tc.args)
		}
		if out.Len() != 0 {
			t.Errorf("%v: printed %q on stdout", tc.args, out.String())
		}
		if !strings.Contains(errb.String(), tc.flag) {
			t.Errorf("%v: error %q does not mention %q", tc.args, errb.String(), tc.flag)
		}
	}
}
