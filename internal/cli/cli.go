// Package cli is the small subcommand dispatcher shared by the programs in
// experiments/.
package cli

import (
	"fmt"
	"io"
	"sort"
)

// RunFunc executes a command with its arguments (without the command name).
// It writes results to stdout and diagnostics to stderr; a returned error is
// printed by the program, prefixed by the program and command names.
type RunFunc func(args []string, stdout, stderr io.Writer) error

// Program is a set of named subcommands.
type Program struct {
	name     string
	commands map[string]command
}

type command struct {
	summary string
	run     RunFunc
}

// New returns an empty program called name.
func New(name string) *Program {
	return &Program{name: name, commands: map[string]command{}}
}

// Register adds a command. Registering a name twice is a programmer error
// and panics.
func (p *Program) Register(name, summary string, run RunFunc) {
	if _, dup := p.commands[name]; dup {
		panic(p.name + ": command registered twice: " + name)
	}
	p.commands[name] = command{summary: summary, run: run}
}

// Usage writes the list of commands to w.
func (p *Program) Usage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s <command> [flags]\n\ncommands:\n", p.name)
	names := make([]string, 0, len(p.commands))
	for n := range p.commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, p.commands[n].summary)
	}
}

// Main runs the command named by args[0] and returns the process exit
// status: 0 on success, 1 when the command fails, 2 for a usage error.
func (p *Program) Main(args []string, stdout, stderr io.Writer) int {
	if len(args) < 1 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		p.Usage(stderr)
		if len(args) < 1 {
			return 2
		}
		return 0
	}
	c, ok := p.commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "%s: unknown command %q\n", p.name, args[0])
		p.Usage(stderr)
		return 2
	}
	if err := c.run(args[1:], stdout, stderr); err != nil {
		fmt.Fprintf(stderr, "%s %s: %v\n", p.name, args[0], err)
		return 1
	}
	return 0
}
