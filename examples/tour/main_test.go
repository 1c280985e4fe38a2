package main

import (
	"os"
	"strings"
	"testing"
)

// The README's "Using the library" block is in this program as it is:
// each of its lines, in order, among the lines between the markers of
// tour (spaces aside, which gofmt aligns otherwise here), so that the
// README's calls compile and run.
func TestREADMEBlock(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("main.go")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(readme), "## Using the library\n\n```go\n")
	if !ok {
		t.Fatal(`README.md has no "Using the library" section opening with a Go block`)
	}
	block, _, _ := strings.Cut(after, "```")
	_, body, _ := strings.Cut(string(src), "// README: begin\n")
	body, _, _ = strings.Cut(body, "// README: end")
	norm := func(l string) string { return strings.Join(strings.Fields(l), " ") }
	lines := strings.Split(body, "\n")
	i := 0
	for _, want := range strings.Split(block, "\n") {
		if norm(want) == "" {
			continue
		}
		for i < len(lines) && norm(lines[i]) != norm(want) {
			i++
		}
		if i == len(lines) {
			t.Fatalf("README line %q is not in examples/tour/main.go between the markers (in the README's order)", want)
		}
		i++
	}
}

// The program runs to the end.
func TestTour(t *testing.T) {
	if testing.Short() {
		t.Skip("trains for about ten seconds")
	}
	if err := tour(); err != nil {
		t.Fatal(err)
	}
}
