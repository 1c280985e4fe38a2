package syntaxgym

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// FuzzReadCircuits reads arbitrary circuit files. A file is refused with
// an error naming it, or gives circuits with distinct, non-empty names,
// each of at least one suite and none twice, that write as JSON and read
// back the same. The seeds are the shared circuits.json (when present)
// and the files of TestScores.
func FuzzReadCircuits(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join(sharedDir, "circuits.json")); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		`{"circuits": [{"name": "A", "suites": ["s1", "s2"]}, {"name": "B", "suites": ["s3"]}]}`,
		`{"circuits": []}`,
		`{"circuits": [{"name": "", "suites": ["a"]}]}`,
		`{"circuits": [{"name": "A", "suites": ["a"]}, {"name": "A", "suites": ["b"]}]}`,
		`{"circuits": [{"name": "A", "suites": ["a", "a"]}]}`,
		`{"circuits": [}`,
		"{\"circuits\":\n [{\"name\": 1}]}",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, err := ReadCircuits(bytes.NewReader(b), "c.json")
		if err != nil {
			if !strings.Contains(err.Error(), "c.json") {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		names := map[string]bool{}
		for _, c := range cs {
			if c.Name == "" || names[c.Name] || len(c.Suites) == 0 {
				t.Fatalf("circuit %+v accepted", c)
			}
			names[c.Name] = true
		}
		out, err := json.Marshal(map[string][]Circuit{"circuits": cs})
		if err != nil {
			t.Fatal(err)
		}
		back, err := ReadCircuits(bytes.NewReader(out), "written.json")
		if err != nil || !reflect.DeepEqual(back, cs) {
			t.Fatalf("written as %s and read back: %+v, %v", out, back, err)
		}
	})
}
