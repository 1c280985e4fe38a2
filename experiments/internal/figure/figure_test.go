package figure

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestLogTicks(t *testing.T) {
	label := func(min, max float64) string {
		var ls []string
		for _, tk := range (LogTicks{}).Ticks(min, max) {
			if tk.Label != "" {
				ls = append(ls, tk.Label)
			}
		}
		return strings.Join(ls, " ")
	}
	for _, tc := range []struct {
		min, max float64
		want     string
	}{
		{100, 1000, "100 200 300 500 1000"},
		{120, 700, "200 300 500"},
		{280, 450, "300 400"},
		{0.02, 0.4, "0.02 0.03 0.05 0.1 0.2 0.3"},
		{0, 10, ""},
		// Fewer than two values d·10^k in range: evenly spaced ticks.
		{124, 189, "125 150 175"},
		{180, 290, "200 240 280"},
	} {
		if got := label(tc.min, tc.max); got != tc.want {
			t.Errorf("LogTicks [%v, %v] labels %q, want %q", tc.min, tc.max, got, tc.want)
		}
	}
	var n int
	for _, tk := range (IntegerTicks{}).Ticks(1, 2) {
		if v, err := strconv.ParseFloat(tk.Label, 64); err != nil || v != tk.Value || v != math.Trunc(v) {
			t.Errorf("IntegerTicks [1, 2]: tick %+v", tk)
		}
		n++
	}
	if n != 2 {
		t.Errorf("IntegerTicks [1, 2]: %d ticks, want 2", n)
	}
}
