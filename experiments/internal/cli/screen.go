package cli

import "strings"

// Screen is what a terminal shows after out: each \r goes back to the
// start of the line, each \n to a new line, other characters overwrite
// what is under the cursor; trailing spaces are trimmed.
func Screen(out string) []string {
	var lines [][]rune
	line, col := []rune{}, 0
	for _, r := range out {
		switch r {
		case '\r':
			col = 0
		case '\n':
			lines = append(lines, line)
			line, col = []rune{}, 0
		default:
			if col < len(line) {
				line[col] = r
			} else {
				line = append(line, r)
			}
			col++
		}
	}
	lines = append(lines, line)
	var s []string
	for _, l := range lines {
		if t := strings.TrimRight(string(l), " "); t != "" {
			s = append(s, t)
		}
	}
	return s
}
