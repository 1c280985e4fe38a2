// Package boundjson writes the JSON of the records of runs that may have
// no lower bound (a run on data of no known distribution): the one place
// that leaves out, or writes as null, the fields that mean nothing there
// (nsrnn.EpochRecord, protocol.Summary, protocol.Selected).
package boundjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
)

// Marshal returns the JSON object of v (a struct, or a pointer to one,
// whose own MarshalJSON, if any, v's type does not have: pass a type
// defined from it) with the keys omit left out, and the keys null moved to
// the end of the object with the value null, in the order given. The
// other keys keep their order and bytes.
func Marshal(v any, omit, null []string) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil || len(omit)+len(null) == 0 {
		return b, err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("boundjson: %T is not written as a JSON object", v)
	}
	var out bytes.Buffer
	out.WriteByte('{')
	n := 0
	put := func(key string, raw []byte) {
		if n > 0 {
			out.WriteByte(',')
		}
		n++
		k, _ := json.Marshal(key)
		out.Write(k)
		out.WriteByte(':')
		out.Write(raw)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if slices.Contains(omit, key) || slices.Contains(null, key) {
			continue
		}
		put(key, raw)
	}
	for _, key := range null {
		put(key, []byte("null"))
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}
