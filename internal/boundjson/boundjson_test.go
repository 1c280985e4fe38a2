package boundjson

import "testing"

func TestMarshal(t *testing.T) {
	type rec struct {
		A int     `json:"a"`
		B float64 `json:"b"`
		C string  `json:"c,omitempty"`
		D bool    `json:"d"`
	}
	for _, tc := range []struct {
		omit, null []string
		want       string
	}{
		{nil, nil, `{"a":1,"b":2.5,"c":"x\u003c","d":true}`},
		{[]string{"b"}, nil, `{"a":1,"c":"x\u003c","d":true}`},
		{nil, []string{"d", "a"}, `{"b":2.5,"c":"x\u003c","d":null,"a":null}`},
		{[]string{"a", "c"}, []string{"b"}, `{"d":true,"b":null}`},
		{[]string{"absent"}, []string{"z"}, `{"a":1,"b":2.5,"c":"x\u003c","d":true,"z":null}`},
	} {
		got, err := Marshal(rec{1, 2.5, "x<", true}, tc.omit, tc.null)
		if err != nil || string(got) != tc.want {
			t.Errorf("omit %v null %v: %s (%v), want %s", tc.omit, tc.null, got, err, tc.want)
		}
	}
	if _, err := Marshal([]int{1}, []string{"a"}, nil); err == nil {
		t.Error("a JSON array accepted")
	}
}
