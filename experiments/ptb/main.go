// Command ptb runs the paper's Penn Treebank language-modeling experiments
// with the memory-limited stack RNNs, and counts model parameters.
//
// Usage:
//
//	go run ./experiments/ptb <command> [flags]
//
// Run "go run ./experiments/ptb help" for the list of commands. Each command
// lives in its own file and registers itself on prog in an init function.
//
// Profiling: with the environment variable NSRNN_CPUPROFILE set to a file
// name, a command writes a CPU profile of its whole run there, for go tool
// pprof.
package main

import (
	"os"

	"github.com/nsrnn/nsrnn/experiments/internal/cli"
)

var prog = cli.New("ptb")

func main() {
	os.Exit(prog.Main(os.Args[1:], os.Stdout, os.Stderr))
}
