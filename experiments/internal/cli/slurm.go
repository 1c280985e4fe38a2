package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"unicode"

	"github.com/nsrnn/nsrnn/internal/atomicfile"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
	"github.com/spf13/pflag"
)

// SlurmFlags are the flags that write a sweep as Slurm job arrays instead
// of running it.
type SlurmFlags struct {
	// Script is the file to write (--slurm); empty runs the sweep here.
	Script string
	// Time, Mem and CPUs are each array task's --time, --mem and
	// --cpus-per-task.
	Time, Mem string
	CPUs      int
	// Binary is a built program to run instead of building one.
	Binary string
	// Sbatch are further #SBATCH options.
	Sbatch []string
}

// AddSlurmFlags registers --slurm, --time, --mem, --cpus-per-task,
// --binary and --sbatch on fs, with the given defaults for the resources
// of one run, and the program's name (for the built binary's path).
func AddSlurmFlags(fs *pflag.FlagSet, program, time, mem string, cpus int) *SlurmFlags {
	f := &SlurmFlags{}
	fs.StringVar(&f.Script, "slurm", "", "write a Slurm script to this file instead of running the sweep here (default: run here); "+
		"run it with bash on the login node: it builds the program once and submits job arrays of at most 1000 runs")
	fs.StringVar(&f.Time, "time", time, "Slurm --time limit of each run (minutes, HH:MM:SS or D-HH:MM:SS)")
	fs.StringVar(&f.Mem, "mem", mem, "Slurm --mem of each run (e.g. 4G)")
	fs.IntVar(&f.CPUs, "cpus-per-task", cpus, "Slurm --cpus-per-task of each run (its GOMAXPROCS)")
	fs.StringVar(&f.Binary, "binary", "", "with --slurm, a built "+program+" binary for the runs (default: the script builds one into <out>/bin/"+program+" with go build and this program's build tags; "+
		"run outside a Go module, a copy of this program goes there)")
	fs.StringArrayVar(&f.Sbatch, "sbatch", nil, "with --slurm, a further #SBATCH option, e.g. --sbatch=--partition=cpu (repeatable; none by default)")
	return f
}

// Check checks the resource flags, naming the one at fault: their
// formats, --binary and --sbatch given without --slurm, a --binary that is
// not an executable file (every array task would fail), and control
// characters (a line end would start a line of its own in the script) in
// the values that the script holds.
func (f *SlurmFlags) Check() error {
	if f.Script == "" && (f.Binary != "" || len(f.Sbatch) > 0) {
		return errors.New("--binary and --sbatch go with --slurm")
	}
	if fi, err := os.Stat(f.Script); f.Script != "" && err == nil && fi.IsDir() {
		return fmt.Errorf("--slurm %s is a directory: give the script's file name", f.Script)
	}
	values := [][2]string{{"--slurm", f.Script}, {"--binary", f.Binary}}
	for _, o := range f.Sbatch {
		values = append(values, [2]string{"--sbatch", o})
	}
	for _, v := range values {
		if err := checkScriptText(v[0], v[1]); err != nil {
			return err
		}
	}
	if f.Binary != "" {
		if err := checkBinary(f.Binary); err != nil {
			return err
		}
	}
	switch {
	case !slurmTime.MatchString(f.Time):
		return fmt.Errorf("--time %q: want minutes, MM:SS, HH:MM:SS, D-HH, D-HH:MM or D-HH:MM:SS", f.Time)
	case !slurmMem.MatchString(f.Mem):
		return fmt.Errorf("--mem %q: want a size such as 4096M or 4G", f.Mem)
	case f.CPUs < 1:
		return fmt.Errorf("--cpus-per-task %d must be at least 1", f.CPUs)
	}
	return nil
}

// checkScriptText refuses a value with control characters, which would
// break the line of the Slurm script that holds it.
func checkScriptText(flag, v string) error {
	if i := strings.IndexFunc(v, unicode.IsControl); i >= 0 {
		return fmt.Errorf("%s %q: a control character (%q) cannot go into the Slurm script", flag, v, v[i])
	}
	return nil
}

// checkBinary refuses a --binary that is not an executable file, which
// the script would run in every array task.
func checkBinary(path string) error {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("--binary %s does not exist: give a built program (go build -o FILE), or leave --binary out for the script to build one", path)
	case err != nil:
		return fmt.Errorf("--binary: %w", err)
	case !fi.Mode().IsRegular():
		return fmt.Errorf("--binary %s is not a file: give a built program", path)
	case runtime.GOOS != "windows" && fi.Mode().Perm()&0o111 == 0:
		return fmt.Errorf("--binary %s is not executable (mode %v): give a built program, or make it executable (chmod +x)", path, fi.Mode().Perm())
	}
	return nil
}

// SlurmLiteral escapes p for a Slurm filename pattern (sbatch --output
// and --error), in which "%A", "%a", "%j" and the like are replaced: each
// % is doubled, which Slurm writes as one, so that p is taken literally.
// (A backslash, which turns all replacements off, is not escaped.)
func SlurmLiteral(p string) string { return strings.ReplaceAll(p, "%", "%%") }

// SbatchQuote quotes s as one argument of an #SBATCH line, which sbatch
// splits at spaces, ends at an unquoted #, and in which quotes group and
// a backslash escapes the next character: s is returned as it is when it
// needs none of this, else in double quotes with its backslashes and
// double quotes escaped.
func SbatchQuote(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune(`"'\#`, r) }) {
		return s
	}
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// SlurmJob is a sweep to run on Slurm.
type SlurmJob struct {
	// Name is the job name, e.g. "cfl-sweep".
	Name string
	// Package is the import path of the program, which the script builds
	// (go build, with the build tags of the running program) into
	// Out/bin/<Program> unless Flags.Binary is set. Where the working
	// directory is in no Go module, so that go build would find no
	// package, SlurmScript copies the running program there instead.
	Package, Program string
	// Out is the sweep directory; the Slurm output goes to Out/slurm.
	Out string
	// Manifest names the file that lists the runs, for the script's
	// header.
	Manifest string
	Runs     []SweepRun
	Flags    SlurmFlags
}

// SlurmScript writes the Slurm script of job to job.Flags.Script and
// returns the number of job arrays it submits. The script runs in two
// ways:
//
//   - "bash SCRIPT" (on the login node) builds the program once, unless
//     --binary names one or no Go module holds the working directory
//     (the program was copied then), and submits the runs as job arrays of at most
//     MaxArrayTasks tasks each (sbatch --array=0-999 SCRIPT OFFSET);
//   - as an array task, it runs run number OFFSET + SLURM_ARRAY_TASK_ID
//     with the built binary, as a local sweep would: a finished run is
//     skipped, an interrupted one resumed, and its output appended to
//     the run's log (<run dir>.log).
//
// Paths are made absolute, so that the script works from any directory.
// The #SBATCH --output path under job.Out is quoted for sbatch
// (SbatchQuote) with its % doubled (SlurmLiteral), so that an --out with
// spaces, # or % is taken as it is; one with a backslash is refused.
func SlurmScript(job SlurmJob) (arrays int, err error) {
	if len(job.Runs) == 0 {
		return 0, errors.New("no runs")
	}
	f := job.Flags
	if err := f.Check(); err != nil {
		return 0, err
	}
	for _, v := range []struct{ flag, value string }{{"--out", job.Out}, {"--out", job.Manifest}} {
		if err := checkScriptText(v.flag, v.value); err != nil {
			return 0, err
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return 0, err
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return filepath.Clean(p)
		}
		return filepath.Join(wd, p)
	}
	script := abs(f.Script)
	out := abs(job.Out)
	if strings.Contains(out, `\`) {
		// Slurm takes a backslash in an --output path as "replace no %
		// pattern": the runs' outputs would all go to one file.
		return 0, fmt.Errorf("--out %s: a backslash cannot go into the Slurm script's --output path", out)
	}
	bin := filepath.Join(out, "bin", job.Program)
	if f.Binary != "" {
		bin = abs(f.Binary)
	}
	if err := checkScriptPath(script, abs(job.Manifest), bin, job.Runs, abs); err != nil {
		return 0, err
	}
	build, tags := f.Binary == "", ""
	switch {
	case f.Binary != "":
	case inGoModule(wd):
		tags = buildTags()
	default:
		// No module here for go build to find the program in (a built
		// program run outside the source tree): the runs use a copy of
		// this program, made now.
		if err := copyExecutable(bin); err != nil {
			return 0, fmt.Errorf("--slurm: no Go module in %s to build %s in, and copying this program to %s failed (give a built program with --binary): %w", wd, job.Program, bin, err)
		}
		build = false
	}
	var b strings.Builder
	arrays = (len(job.Runs) + MaxArrayTasks - 1) / MaxArrayTasks
	fmt.Fprintf(&b, "%s%s. %d training runs (listed in %s).\n", scriptHeader, job.Name, len(job.Runs), abs(job.Manifest))
	fmt.Fprintf(&b, "# Submit from a login node with:  bash %s\n", ShellQuote(script))
	switch {
	case build:
		fmt.Fprintf(&b, "# It builds %s once into %s and submits %d job array(s) of at most %d runs.\n", job.Program, bin, arrays, MaxArrayTasks)
	case f.Binary == "":
		fmt.Fprintf(&b, "# It submits %d job array(s) of at most %d runs of %s, a copy of the program that wrote it.\n", arrays, MaxArrayTasks, bin)
	default:
		fmt.Fprintf(&b, "# It submits %d job array(s) of at most %d runs of %s.\n", arrays, MaxArrayTasks, bin)
	}
	fmt.Fprintf(&b, "# Submitting it again resumes interrupted runs and skips finished ones.\n")
	fmt.Fprintf(&b, "#SBATCH --job-name=%s\n", job.Name)
	fmt.Fprintf(&b, "#SBATCH --ntasks=1\n#SBATCH --cpus-per-task=%d\n#SBATCH --mem=%s\n#SBATCH --time=%s\n", f.CPUs, f.Mem, f.Time)
	fmt.Fprintf(&b, "#SBATCH --output=%s\n", SbatchQuote(SlurmLiteral(filepath.Join(out, "slurm"))+string(filepath.Separator)+"%A_%a.out"))
	for _, o := range f.Sbatch {
		fmt.Fprintf(&b, "#SBATCH %s\n", o)
	}
	b.WriteString("set -euo pipefail\n")
	fmt.Fprintf(&b, "cd %s\n", ShellQuote(wd))
	fmt.Fprintf(&b, "BIN=%s\n", ShellQuote(bin))
	b.WriteString("if [ -z \"${SLURM_ARRAY_TASK_ID:-}\" ]; then\n")
	fmt.Fprintf(&b, "  mkdir -p %s\n", ShellQuote(filepath.Join(out, "slurm")))
	if build {
		b.WriteString("  mkdir -p \"$(dirname \"$BIN\")\"\n")
		tagArg := ""
		if tags != "" {
			tagArg = "-tags " + ShellQuote(tags) + " "
		}
		fmt.Fprintf(&b, "  echo \"building $BIN\"\n  go build %s-o \"$BIN\" %s\n", tagArg, ShellQuote(job.Package))
	}
	// The program must be there before anything is submitted, and in
	// every task: a --binary written on another machine, or a program
	// removed since, is reported as such, not as a failure of each run.
	var missing string
	switch {
	case build:
		missing = "it is built when the script is run with bash: run bash " + ShellQuote(script) + " again"
	case f.Binary == "":
		missing = "it is the copy of the program made when the script was written: write the script again"
	default:
		missing = "it is the --binary given when the script was written: build the program there, or write the script again with --binary naming it on this machine"
	}
	checkBin := fmt.Sprintf("if [ ! -x \"$BIN\" ]; then\n  echo %s >&2\n  exit 1\nfi\n", ShellQuote("no executable file "+bin+" on this machine: "+missing))
	b.WriteString(indent(checkBin, "  "))
	for a := range arrays {
		n := min(MaxArrayTasks, len(job.Runs)-a*MaxArrayTasks)
		fmt.Fprintf(&b, "  sbatch --array=0-%d %s %d\n", n-1, ShellQuote(script), a*MaxArrayTasks)
	}
	b.WriteString("  exit 0\nfi\n")
	b.WriteString("export GOMAXPROCS=${GOMAXPROCS:-${SLURM_CPUS_PER_TASK:-1}}\n")
	b.WriteString("i=$(( ${1:?usage: sbatch --array=… SCRIPT OFFSET} + SLURM_ARRAY_TASK_ID ))\n")
	b.WriteString("case $i in\n")
	for i, r := range job.Runs {
		fmt.Fprintf(&b, "%d) DIR=%s; RESUME=%s; set -- %s ;;\n", i, ShellQuote(abs(r.Dir)), ShellQuote(r.Resume), ShellJoin(r.Args))
	}
	b.WriteString("*) echo \"no run $i\" >&2; exit 1 ;;\nesac\n")
	b.WriteString(`if [ -f "$DIR/` + protocol.SummaryFile + `" ]; then
  echo "run $i finished already: $DIR"
  exit 0
fi
if [ -n "$RESUME" ] && [ -d "$DIR" ] && [ -n "$(ls -A "$DIR")" ]; then
  set -- "$@" "$RESUME"
fi
` + checkBin + `mkdir -p "$(dirname "$DIR")"
LOG="$DIR.log"
echo "run $i: $BIN $* (output in $LOG)"
echo "# $(date -Iseconds) $BIN $* (Slurm job ${SLURM_ARRAY_JOB_ID:-?} task ${SLURM_ARRAY_TASK_ID})" >>"$LOG"
exec "$BIN" "$@" >>"$LOG" 2>&1
`)
	if err := os.MkdirAll(filepath.Dir(script), 0o777); err != nil {
		return 0, fmt.Errorf("--slurm: %w", err)
	}
	if err := atomicfile.WriteBytes(script, []byte(b.String())); err != nil {
		return 0, fmt.Errorf("--slurm: %w", err)
	}
	return arrays, nil
}

// indent puts prefix before every line of s.
func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}

// scriptHeader begins every script SlurmScript writes.
const scriptHeader = "#!/bin/bash\n# Generated by: "

// checkScriptPath refuses a --slurm path that would overwrite what is not
// a script of an earlier sweep: the sweep's manifest, the runs' program,
// anything in a run's directory or its log, or an existing file that does
// not begin as SlurmScript's scripts do.
func checkScriptPath(script, manifest, bin string, runs []SweepRun, abs func(string) string) error {
	switch script {
	case manifest:
		return fmt.Errorf("--slurm %s is the sweep's manifest: give the script another name", script)
	case bin:
		return fmt.Errorf("--slurm %s is the program the runs execute: give the script another name", script)
	}
	for _, r := range runs {
		dir := abs(r.Dir)
		if rel, err := filepath.Rel(dir, script); err == nil && !strings.HasPrefix(rel, "..") || script == abs(r.LogFile()) {
			return fmt.Errorf("--slurm %s is in the files of run %s: give the script a path outside them", script, dir)
		}
	}
	fi, err := os.Stat(script)
	if err != nil {
		return nil // absent: it is made (other errors: writing it says why)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("--slurm %s exists and is not a file", script)
	}
	f, err := os.Open(script)
	if err != nil {
		return fmt.Errorf("--slurm: %w", err)
	}
	defer f.Close()
	head := make([]byte, len(scriptHeader))
	if _, err := io.ReadFull(f, head); err != nil || string(head) != scriptHeader {
		return fmt.Errorf("--slurm %s exists and is not a script that a sweep wrote: give another file name, or remove it first", script)
	}
	return nil
}

// inGoModule reports whether dir or a directory above it holds a go.mod,
// so that go build run in dir finds a module.
func inGoModule(dir string) bool {
	for {
		if fi, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil && !fi.IsDir() {
			return true
		}
		up := filepath.Dir(dir)
		if up == dir {
			return false
		}
		dir = up
	}
}

// buildTags returns the build tags this program was built with (for
// example "openblas"), so that the program the Slurm script builds has
// the same matrix products; "" when there were none.
func buildTags() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "-tags" {
				return s.Value
			}
		}
	}
	return ""
}

// copyExecutable copies the running program to path, executable, written
// atomically.
func copyExecutable(path string) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	src, err := os.Open(exe)
	if err != nil {
		return err
	}
	defer src.Close()
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return err
	}
	if err := atomicfile.Write(path, func(w io.Writer) error {
		_, err := io.Copy(w, src)
		return err
	}); err != nil {
		return err
	}
	return os.Chmod(path, 0o755)
}

// MaxArrayTasks is the most tasks SlurmScript puts in one job array:
// Slurm's default MaxArraySize is 1001, which allows indices 0 … 1000.
const MaxArrayTasks = 1000

var (
	slurmTime = regexp.MustCompile(`^(\d+-)?\d+(:\d+){0,2}$`)
	slurmMem  = regexp.MustCompile(`^\d+[KMGT]?$`)
)

// GPUWarning returns a warning for a script whose runs compute on dev, a
// GPU, when no --sbatch option asks Slurm for one (--gres or --gpus),
// and "" otherwise: on a node without a GPU every run would fail.
func (f SlurmFlags) GPUWarning(dev nsrnn.Device) string {
	if dev.IsCPU() {
		return ""
	}
	for _, o := range f.Sbatch {
		if strings.Contains(o, "gres") || strings.Contains(o, "gpu") {
			return ""
		}
	}
	return fmt.Sprintf("warning: the runs compute on --device %v, but no --sbatch option asks Slurm for a GPU (--sbatch=--gres=gpu:1, or your cluster's form): on a node without one every run fails", dev)
}
