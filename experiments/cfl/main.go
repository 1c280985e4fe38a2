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
//
// Profiling: with the environment variable NSRNN_CPUPROFILE set to a file
// name, a command writes a CPU profile of its whole run there, for go tool
// pprof.
package main

import (
	"os"

	"github.com/nsrnn/nsrnn/experiments/internal/cli"
)

var prog = cli.New("cfl")

func main() {
	os.Exit(prog.Main(os.Args[1:], os.Stdout, os.Stderr))
}
