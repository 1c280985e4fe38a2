package main

import (
	"fmt"
	"io"

	"github.com/nsrnn/nsrnn/nsrnn"
)

func init() {
	prog.Register("params", "print the number of parameters of a PTB model", runParams)
}

func runParams(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("params", stdout)
	mf := addModelFlags(fs) // the kinds that can stream, as train
	vocab := fs.Int("vocab", 10000, "vocabulary size (input and output)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *vocab < 1 {
		return fmt.Errorf("--vocab %d must be positive", *vocab)
	}
	cfg, err := ptbConfig(mf, *vocab)
	if err != nil {
		return err
	}
	n, err := nsrnn.CountParams(cfg)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, n)
	return nil
}
