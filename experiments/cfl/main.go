// Command cfl runs the paper's context-free language experiments: sampling
// task data, computing the true-entropy lower bound, counting parameters,
// training, evaluation, sweeps, model selection, figures and cost tables.
//
// Usage:
//
//	go run ./experiments/cfl <command> [flags]
//
// Run "go run ./experiments/cfl help" for the list of commands, and
// "go run ./experiments/cfl help <command>" (or <command> --help) for a
// command's flags and their defaults. Each command lives in its own file
// and registers itself on prog in an init function.
package main

import (
	"os"

	"github.com/nsrnn/nsrnn/experiments/internal/cli"
)

var prog = cli.New("cfl")

func main() {
	os.Exit(prog.Main(os.Args[1:], os.Stdout, os.Stderr))
}
