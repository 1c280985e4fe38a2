package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/nsrnn/nsrnn/data"
)

// parseLengths parses a length range written MIN:MAX, with
// 0 <= MIN <= MAX <= data.MaxLength. Errors do not name the flag; callers
// wrap them, e.g. fmt.Errorf("--lengths: %w", err).
func parseLengths(s string) (minLen, maxLen int, err error) {
	lo, hi, ok := strings.Cut(s, ":")
	if !ok {
		return 0, 0, fmt.Errorf("malformed length range %q: want MIN:MAX", s)
	}
	minLen, err1 := strconv.Atoi(strings.TrimSpace(lo))
	maxLen, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if err1 != nil || err2 != nil {
		return 0, 0, fmt.Errorf("malformed length range %q: want MIN:MAX with integer bounds", s)
	}
	switch {
	case minLen < 0:
		return 0, 0, fmt.Errorf("length range %q: MIN %d is negative", s, minLen)
	case minLen > maxLen:
		return 0, 0, fmt.Errorf("length range %q: MIN %d > MAX %d", s, minLen, maxLen)
	case maxLen > data.MaxLength:
		return 0, 0, fmt.Errorf("length range %q: MAX %d exceeds %d", s, maxLen, data.MaxLength)
	}
	return minLen, maxLen, nil
}

// requireFlags returns an error naming the first of the named flags that
// was not set on the command line.
func requireFlags(fs interface{ Changed(string) bool }, names ...string) error {
	for _, n := range names {
		if !fs.Changed(n) {
			return fmt.Errorf("--%s is required", n)
		}
	}
	return nil
}

// taskFlag returns the task named by the --task flag's value under the
// definition of the --grammar flag.
func taskFlag(name string, g data.Grammar) (*data.Task, error) {
	t, err := data.TaskFor(name, g)
	if err != nil {
		return nil, fmt.Errorf("--task: %w", err)
	}
	return t, nil
}

// taskLabel names a task in messages: its name, followed by its definition
// when that is not the default.
func taskLabel(task string, g data.Grammar) string {
	if g.String() == string(data.GrammarPaper) {
		return task
	}
	return fmt.Sprintf("%s (%s grammar)", task, g)
}

// joinNames joins names with commas.
func joinNames(names []string) string { return strings.Join(names, ", ") }

// readIn reads the strings of --in, over the given symbols, from the named
// file or, when in is empty, from standard input; no strings is an error.
// It also returns the input's name for messages ("<stdin>" or the file).
func readIn(in string, symbols []string) (ws [][]int, name string, err error) {
	name = "<stdin>"
	var r io.Reader = os.Stdin
	if in != "" {
		f, err := os.Open(in)
		if err != nil {
			return nil, "", fmt.Errorf("--in: %w", err)
		}
		defer f.Close()
		name, r = in, f
	}
	if ws, err = data.ReadStrings(r, name, symbols); err != nil {
		return nil, "", err
	}
	if len(ws) == 0 {
		return nil, "", fmt.Errorf("%s: no strings", name)
	}
	return ws, name, nil
}
