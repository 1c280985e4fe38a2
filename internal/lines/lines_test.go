package lines

import (
	"bufio"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		text string
		want []string
	}{
		{"", nil},
		{"a\nb\n", []string{"a", "b"}},
		{"a\nb", []string{"a", "b"}},
		{"a\r\nb\r\n", []string{"a", "b"}},
		{"a\rb\r", []string{"a", "b"}},
		{"a\r\rb", []string{"a", "", "b"}},
		{"a\r\n\rb\n\nc", []string{"a", "", "b", "", "c"}},
		{"\r", []string{""}},
		{"\r\n", []string{""}},
		{"\n\n", []string{"", ""}},
		{"\uFEFFa\nb", []string{"a", "b"}},
		{"\uFEFF\r\n", []string{""}},
		{"a\n\uFEFFb", []string{"a", "\uFEFFb"}},
		{"a b\tc\r", []string{"a b\tc"}},
	} {
		for _, oneByte := range []bool{false, true} {
			r := strings.NewReader(tc.text)
			sc := bufio.NewScanner(r)
			if oneByte {
				sc = bufio.NewScanner(iotest.OneByteReader(r))
			}
			sc.Split(Split())
			var got []string
			for sc.Scan() {
				got = append(got, sc.Text())
			}
			if err := sc.Err(); err != nil || !slices.Equal(got, tc.want) {
				t.Errorf("%q (byte by byte %v): lines %q, %v; want %q", tc.text, oneByte, got, err, tc.want)
			}
		}
	}
}
