// Package lines splits text into lines the way every text reader of this
// module does: a line ends at "\n", "\r\n" or a lone "\r" (old Mac files),
// and a UTF-8 byte-order mark at the start of the text is dropped.
package lines

import (
	"bufio"
	"bytes"
)

// bom is the UTF-8 byte-order mark, U+FEFF.
var bom = []byte("\uFEFF")

// Split returns a new bufio.SplitFunc, for one bufio.Scanner, that yields
// the lines of the text without their line ends: "\n", "\r\n" or a lone
// "\r". A line end at the very end of the text does not start another
// line, and a UTF-8 byte-order mark at the start of the first line is
// dropped. A scanner's buffer needs room for a line and two bytes.
func Split() bufio.SplitFunc {
	first := true
	return func(data []byte, atEOF bool) (int, []byte, error) {
		adv, tok, err := split(data, atEOF)
		if first && tok != nil {
			first = false
			tok = bytes.TrimPrefix(tok, bom)
		}
		return adv, tok, err
	}
}

// split is bufio.ScanLines that also ends a line at a lone "\r".
func split(data []byte, atEOF bool) (advance int, token []byte, err error) {
	if atEOF && len(data) == 0 {
		return 0, nil, nil
	}
	if i := bytes.IndexAny(data, "\r\n"); i >= 0 {
		switch {
		case data[i] == '\n':
			return i + 1, data[:i], nil
		case i+1 < len(data) && data[i+1] == '\n':
			return i + 2, data[:i], nil
		case i+1 < len(data) || atEOF:
			return i + 1, data[:i], nil
		}
		return 0, nil, nil // a "\n" may follow the "\r"
	}
	if atEOF {
		return len(data), data, nil
	}
	return 0, nil, nil
}
