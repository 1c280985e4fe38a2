package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestParams checks the printed parameter counts against all 33 rows of
// the paper's PTB table (appendix E) and the error cases.
func TestParams(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "lstm", "--hidden", "256"}, "5656336"},
		{[]string{"--model", "lstm", "--hidden", "258"}, "5704576"},
		{[]string{"--model", "lstm", "--hidden", "267"}, "5922448"},
		{[]string{"--model", "jm", "--hidden", "247", "--push-hidden-state"}, "5684828"},
		{[]string{"--model", "jm", "--hidden", "256", "--stack-embedding", "22"}, "5685289"},
		{[]string{"--model", "ns", "--hidden", "256", "--states", "1", "--symbols", "2"}, "5660954"},
		{[]string{"--model", "ns", "--hidden", "256", "--states", "1", "--symbols", "3"}, "5664805"},
		{[]string{"--model", "ns", "--hidden", "256", "--states", "1", "--symbols", "4"}, "5669684"},
		{[]string{"--model", "ns", "--hidden", "256", "--states", "1", "--symbols", "5"}, "5675591"},
		{[]string{"--model", "ns", "--hidden", "256", "--states", "1", "--symbols", "6"}, "5682526"},
		{[]string{"--model", "ns", "--hidden", "256", "--states", "1", "--symbols", "7"}, "5690489"},
		{[]string{"--model", "ns", "--hidden", "256", "--states", "1", "--symbols", "11"}, "5732621"},
		{[]string{"--model", "ns", "--hidden", "256", "--states", "2", "--symbols", "2"}, "5668664"},
		{[]string{"--model", "ns", "--hidden", "256", "--states", "2", "--symbols", "3"}, "5680996"},
		{[]string{"--model", "ns", "--hidden", "256", "--states", "2", "--symbols", "4"}, "5697440"},
		{[]string{"--model", "ns", "--hidden", "256", "--states", "2", "--symbols", "5"}, "5717996"},
		{[]string{"--model", "ns", "--hidden", "256", "--states", "3", "--symbols", "2"}, "5681514"},
		{[]string{"--model", "ns", "--hidden", "256", "--states", "3", "--symbols", "3"}, "5707981"},
		{[]string{"--model", "ns", "--hidden", "256", "--states", "3", "--symbols", "4"}, "5743700"},
		{[]string{"--model", "rns", "--hidden", "256", "--states", "1", "--symbols", "2"}, "5660954"},
		{[]string{"--model", "rns", "--hidden", "256", "--states", "1", "--symbols", "3"}, "5664805"},
		{[]string{"--model", "rns", "--hidden", "256", "--states", "1", "--symbols", "4"}, "5669684"},
		{[]string{"--model", "rns", "--hidden", "256", "--states", "1", "--symbols", "5"}, "5675591"},
		{[]string{"--model", "rns", "--hidden", "256", "--states", "1", "--symbols", "6"}, "5682526"},
		{[]string{"--model", "rns", "--hidden", "256", "--states", "1", "--symbols", "7"}, "5690489"},
		{[]string{"--model", "rns", "--hidden", "256", "--states", "1", "--symbols", "11"}, "5732621"},
		{[]string{"--model", "rns", "--hidden", "256", "--states", "2", "--symbols", "2"}, "5670712"},
		{[]string{"--model", "rns", "--hidden", "256", "--states", "2", "--symbols", "3"}, "5684068"},
		{[]string{"--model", "rns", "--hidden", "256", "--states", "2", "--symbols", "4"}, "5701536"},
		{[]string{"--model", "rns", "--hidden", "256", "--states", "2", "--symbols", "5"}, "5723116"},
		{[]string{"--model", "rns", "--hidden", "256", "--states", "3", "--symbols", "2"}, "5685610"},
		{[]string{"--model", "rns", "--hidden", "256", "--states", "3", "--symbols", "3"}, "5714125"},
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
		{[]string{"--model", "rns"}, "params: --model rns needs --states and --symbols\n"},
		{[]string{"--model", "rns", "--states", "1"}, "params: --model rns needs --states and --symbols: give --symbols too\n"},
		{[]string{"--model", "vrns", "--states", "1", "--symbols", "2"}, "needs --states, --symbols and --stack-embedding: give --stack-embedding too\n"},
		{[]string{"--model", "jm"}, "stack embedding"},
		{[]string{"--model", "lstm", "--vocab", "0"}, "--vocab"},
		{[]string{"--model", "lstm", "--hidden", "-3"}, "params: --hidden -3 must be at least 1\n"},
		{[]string{"--model", "rns", "--states", "1", "--symbols", "2", "--hidden", "0"}, "params: --hidden 0 must be at least 1\n"},
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
