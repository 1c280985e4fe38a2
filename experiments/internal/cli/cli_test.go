package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
)

// testProgram has a command "run" with flags of every kind and zero
// defaults, and a command "fail" that fails with the given error.
func testProgram(failWith error) *Program {
	p := New("prog")
	p.Register("run", "run something", func(args []string, stdout, stderr io.Writer) error {
		fs := p.FlagSet("run", stdout)
		fs.Int("count", 0, "how many")
		fs.Bool("dry", false, "do nothing")
		fs.Float64("rate", 0.5, "the rate")
		fs.String("out", "", "output (required)")
		fs.String("in", "", "input (default: standard input)")
		fs.Int("workers", 4, "parts run in parallel (default 4: every core)")
		if err := fs.Parse(args); err != nil {
			return err
		}
		fmt.Fprintln(stdout, "ran")
		return nil
	})
	p.Register("fail", "fail", func([]string, io.Writer, io.Writer) error { return failWith })
	return p
}

func TestMainHelp(t *testing.T) {
	p := testProgram(nil)
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		var stdout, stderr bytes.Buffer
		if code := p.Main(args, &stdout, &stderr); code != 0 || !strings.Contains(stdout.String(), "run something") || stderr.Len() != 0 {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want the help on stdout", args, code, stdout.String(), stderr.String())
		}
	}
	var stderr bytes.Buffer
	if code := p.Main(nil, io.Discard, &stderr); code != 2 || !strings.Contains(stderr.String(), "usage: prog") {
		t.Errorf("no command: status %d, stderr %q", code, stderr.String())
	}
	for _, args := range [][]string{{"help", "run"}, {"run", "--help"}, {"run", "-h"}} {
		var stdout, stderr bytes.Buffer
		code := p.Main(args, &stdout, &stderr)
		o := stdout.String()
		if code != 0 || strings.Contains(o, "help requested") || stderr.Len() != 0 {
			t.Errorf("%v: status %d, stdout %q, stderr %q; want status 0 and the help alone, on stdout", args, code, o, stderr.String())
		}
		for _, want := range []string{"usage: prog run [flags]", "run something", "--count int", "how many (default 0)",
			"do nothing\n", "the rate (default 0.5)", "output (required)\n", "input (default: standard input)\n",
			"--workers int   parts run in parallel (default 4: every core)\n"} {
			if !strings.Contains(o, want) {
				t.Errorf("%v: help lacks %q:\n%s", args, want, o)
			}
		}
		if strings.Contains(o, "default false") || strings.Count(o, "(default 4") != 1 {
			t.Errorf("%v: a boolean shows its default, or --workers two:\n%s", args, o)
		}
	}
	// Asking twice does not add the defaults twice.
	var o1, o2 bytes.Buffer
	p.Main([]string{"help", "run"}, &o1, io.Discard)
	p.Main([]string{"help", "run"}, &o2, io.Discard)
	if strings.Count(o2.String(), "(default 0)") != 1 {
		t.Errorf("second help:\n%s", o2.String())
	}
	if code := p.Main([]string{"help", "nope"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("help of an unknown command: status %d, want 2", code)
	}
	// An error goes to stderr, nothing to stdout.
	var stdout bytes.Buffer
	stderr.Reset()
	if code := p.Main([]string{"run", "--count", "x"}, &stdout, &stderr); code == 0 || stdout.Len() != 0 || !strings.Contains(stderr.String(), "--count") {
		t.Errorf("bad flag: status %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
}

func TestMainStatus(t *testing.T) {
	var stderr bytes.Buffer
	if code := testProgram(errors.New("boom")).Main([]string{"fail"}, io.Discard, &stderr); code != 1 || stderr.String() != "prog fail: boom\n" {
		t.Errorf("status %d, stderr %q", code, stderr.String())
	}
	stderr.Reset()
	err := &ExitError{Code: 130, Err: errors.New("interrupted")}
	if code := testProgram(err).Main([]string{"fail"}, io.Discard, &stderr); code != 130 || !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("ExitError: status %d, stderr %q", code, stderr.String())
	}
	if code := testProgram(nil).Main([]string{"run", "--nope"}, io.Discard, io.Discard); code == 0 {
		t.Error("unknown flag: status 0")
	}
	if code := testProgram(nil).Main([]string{"nope"}, io.Discard, io.Discard); code != 2 {
		t.Errorf("unknown command: status %d, want 2", code)
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"runs/a": "runs/a", "ns+s": "ns+s", "": "''", "a b": "'a b'", "it's": `'it'\''s'`, "$HOME": "'$HOME'",
	} {
		if got := ShellQuote(in); got != want {
			t.Errorf("ShellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestCommandLine(t *testing.T) {
	got := New("prog").CommandLine([]string{"train", "--out", "a b"})
	if !strings.HasSuffix(got, " train --out 'a b'") {
		t.Errorf("CommandLine: %q", got)
	}
}

func TestMainCPUProfile(t *testing.T) {
	p := testProgram(nil)
	path := t.TempDir() + "/cpu.prof"
	t.Setenv(EnvCPUProfile, path)
	var stdout, stderr bytes.Buffer
	if code := p.Main([]string{"run"}, &stdout, &stderr); code != 0 || stdout.String() != "ran\n" {
		t.Fatalf("status %d, stdout %q, stderr %q", code, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// A pprof profile is a gzip-compressed protocol buffer.
	if len(b) < 2 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("%s: %d bytes, not a gzip-compressed profile", path, len(b))
	}

	t.Setenv(EnvCPUProfile, t.TempDir()+"/missing/cpu.prof")
	stdout.Reset()
	stderr.Reset()
	if code := p.Main([]string{"run"}, &stdout, &stderr); code != 1 || stdout.Len() != 0 || !strings.Contains(stderr.String(), EnvCPUProfile) {
		t.Errorf("unwritable profile: status %d, stdout %q, stderr %q; want status 1, nothing run, an error naming %s", code, stdout.String(), stderr.String(), EnvCPUProfile)
	}
}
