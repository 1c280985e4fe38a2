package main

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMECommandsLeaveNoFiles checks that the commands of README.md's
// shell blocks write their files (redirections, --out, -o, --output)
// outside the repository (absolute paths, such as /tmp/…) or where
// .gitignore ignores them (runs/, the built programs), so that following
// the README leaves no untracked file in the repository.
func TestREADMECommandsLeaveNoFiles(t *testing.T) {
	root := filepath.Join("..", "..")
	ignore, err := os.ReadFile(filepath.Join(root, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	var ignored []string // root-anchored entries, without the slashes
	for _, l := range strings.Split(string(ignore), "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "/") {
			ignored = append(ignored, strings.Trim(l, "/"))
		}
	}
	ok := func(path string) bool {
		if strings.HasPrefix(path, "/") || strings.HasPrefix(path, "$") {
			return true
		}
		path = filepath.Clean(path)
		for _, ig := range ignored {
			if path == ig || strings.HasPrefix(path, ig+"/") {
				return true
			}
		}
		return false
	}
	f, err := os.Open(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	inShell, checked := false, 0
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "```sh"):
			inShell = true
			continue
		case strings.HasPrefix(line, "```"):
			inShell = false
			continue
		case !inShell:
			continue
		}
		cmd, _, _ := strings.Cut(line, "#")
		if strings.HasPrefix(strings.TrimSpace(cmd), "cd ") {
			continue // a command run elsewhere
		}
		words := strings.Fields(cmd)
		for i := 0; i+1 < len(words); i++ {
			switch words[i] {
			case ">", ">>", "--out", "-o", "--output":
				checked++
				if !ok(words[i+1]) {
					t.Errorf("README.md:%d: %s %s writes into the repository, where nothing ignores it: %s", n, words[i], words[i+1], line)
				}
			}
		}
	}
	if checked < 5 {
		t.Errorf("only %d outputs found in README.md's shell blocks", checked)
	}
}
