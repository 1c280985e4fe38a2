// Package cli is the small subcommand dispatcher shared by the programs in
// experiments/, with what their commands have in common: flag sets whose
// help shows every default, the model and grammar flags, the training
// progress lines, and the execution of sweeps (locally in parallel, or as
// Slurm job arrays).
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/pprof"
	"sort"
	"strings"

	"github.com/spf13/pflag"
)

// RunFunc executes a command with its arguments (without the command name).
// It writes results to stdout and diagnostics to stderr; a returned error is
// printed by the program, prefixed by the program and command names.
// Returning pflag.ErrHelp (as FlagSet.Parse does for --help) ends the
// program with status 0; an *ExitError sets the exit status.
type RunFunc func(args []string, stdout, stderr io.Writer) error

// ExitError is an error that ends the program with exit status Code.
type ExitError struct {
	Code int
	Err  error
}

// Error is the wrapped error's.
func (e *ExitError) Error() string { return e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *ExitError) Unwrap() error { return e.Err }

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

// Name is the program's name.
func (p *Program) Name() string { return p.name }

// Register adds a command. Registering a name twice is a programmer error
// and panics.
func (p *Program) Register(name, summary string, run RunFunc) {
	if _, dup := p.commands[name]; dup {
		panic(p.name + ": command registered twice: " + name)
	}
	p.commands[name] = command{summary: summary, run: run}
}

// Commands returns the names of the commands, sorted.
func (p *Program) Commands() []string {
	names := make([]string, 0, len(p.commands))
	for n := range p.commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Summary returns the description of the command name, as registered, or
// "" for an unknown command.
func (p *Program) Summary(name string) string { return p.commands[name].summary }

// Usage writes the list of commands to w.
func (p *Program) Usage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s <command> [flags]\n\ncommands:\n", p.name)
	for _, n := range p.Commands() {
		fmt.Fprintf(w, "  %-10s %s\n", n, p.commands[n].summary)
	}
	fmt.Fprintf(w, "\nRun \"%s help <command>\" (or \"%s <command> --help\") for a command's flags.\n", p.name, p.name)
}

// Main runs the command named by args[0] and returns the process exit
// status: 0 on success and for help (help, help <command>, --help), 1 when
// the command fails (or an ExitError's code), 2 for a usage error (no or
// an unknown command). Help that is asked for goes to stdout; the list of
// commands printed for a usage error goes to stderr.
func (p *Program) Main(args []string, stdout, stderr io.Writer) int {
	if len(args) < 1 {
		p.Usage(stderr)
		return 2
	}
	name, rest := args[0], args[1:]
	switch name {
	case "-h", "--help", "help":
		if name != "help" || len(rest) == 0 {
			p.Usage(stdout)
			return 0
		}
		if len(rest) > 1 {
			fmt.Fprintf(stderr, "%s help: want one command, got %q\n", p.name, rest)
			return 2
		}
		name, rest = rest[0], []string{"--help"}
	}
	c, ok := p.commands[name]
	if !ok {
		fmt.Fprintf(stderr, "%s: unknown command %q\n", p.name, name)
		p.Usage(stderr)
		return 2
	}
	stop, err := startProfile(os.Getenv(EnvCPUProfile))
	if err != nil {
		fmt.Fprintf(stderr, "%s %s: %v\n", p.name, name, err)
		return 1
	}
	err = c.run(rest, stdout, stderr)
	stop()
	switch {
	case err == nil, errors.Is(err, pflag.ErrHelp):
		return 0
	}
	fmt.Fprintf(stderr, "%s %s: %v\n", p.name, name, err)
	if ee, ok := errors.AsType[*ExitError](err); ok {
		return ee.Code
	}
	return 1
}

// EnvCPUProfile names the environment variable that, when set to a file
// name, makes Main write a CPU profile of the whole command into that file
// (runtime/pprof; read it with go tool pprof).
const EnvCPUProfile = "NSRNN_CPUPROFILE"

// startProfile starts a CPU profile into the file path, if path is not
// empty, and returns the function that stops it and closes the file.
func startProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvCPUProfile, err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", EnvCPUProfile, err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// FlagSet returns a new flag set for the command name that reports parse
// errors (rather than exiting: the command returns them, and Main prints
// them on stderr) and writes its help, asked for with --help, -h or
// "help <command>", to stdout: the command's usage line and description,
// then every flag with its default, zero defaults included (see
// ShowDefaults).
func (p *Program) FlagSet(name string, stdout io.Writer) *pflag.FlagSet {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stdout)
	fs.SortFlags = false
	fs.Usage = func() {
		fmt.Fprintf(stdout, "usage: %s %s [flags]\n", p.name, name)
		if c, ok := p.commands[name]; ok {
			fmt.Fprintf(stdout, "\n%s\n", c.summary)
		}
		ShowDefaults(fs)
		fmt.Fprintf(stdout, "\nflags:\n%s", fs.FlagUsages())
	}
	return fs
}

// ShowDefaults makes the help of every flag show its default once. It adds
// "(default V)" to the help of every non-boolean flag whose default pflag
// would not show because it is a zero value (0, 0s), unless the help
// already speaks of its default or says the flag is required; and when
// the help gives the default itself ("(default …"), it keeps pflag from
// adding its own. A boolean flag is off unless given, which its help does
// not repeat. Flags whose default is empty ("" or []) must say in their
// help what the absence of a value means.
func ShowDefaults(fs *pflag.FlagSet) {
	fs.VisitAll(func(f *pflag.Flag) {
		u := strings.ToLower(f.Usage)
		if strings.Contains(u, "(default") {
			f.DefValue = zeroDefault(f)
			return
		}
		if strings.Contains(u, "default") || strings.Contains(u, "required") {
			return
		}
		switch f.DefValue {
		case "0", "0s":
			f.Usage += " (default " + f.DefValue + ")"
		}
	})
}

// zeroDefault is the DefValue for which pflag shows no default for f.
func zeroDefault(f *pflag.Flag) string {
	switch f.Value.Type() {
	case "bool":
		return "false"
	case "duration":
		return "0s"
	case "string":
		return ""
	}
	if strings.HasSuffix(f.Value.Type(), "Slice") || strings.HasSuffix(f.Value.Type(), "Array") {
		return "[]"
	}
	return "0"
}

// CommandLine is the shell command that runs this program with args (the
// command name first), as the user would type it again: "go run
// ./path/to/program" when the running binary is one that go run built
// (in a temporary directory), otherwise the binary's path as invoked.
func (p *Program) CommandLine(args []string) string {
	return ShellJoin(append(strings.Fields(p.invocation()), args...))
}

func (p *Program) invocation() string {
	exe, err := os.Executable()
	if err == nil && strings.Contains(exe, string(filepath.Separator)+"go-build") {
		if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Path != "" && strings.HasPrefix(bi.Path, bi.Main.Path+"/") {
			return "go run ./" + strings.TrimPrefix(bi.Path, bi.Main.Path+"/")
		}
	}
	if len(os.Args) > 0 {
		return os.Args[0]
	}
	return p.name
}

// ShellQuote quotes s for a POSIX shell where needed.
func ShellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:=+,@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellJoin quotes and joins words into a shell command line.
func ShellJoin(words []string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = ShellQuote(w)
	}
	return strings.Join(q, " ")
}
