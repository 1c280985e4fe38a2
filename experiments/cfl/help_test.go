package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data"
)

// helpCommands are the commands whose help TestHelp checks.
var helpCommands = []string{"actions", "cost", "devices", "entropy", "eval", "generate", "params", "plot", "sample", "select", "sweep", "train", "viterbi"}

// TestHelp checks that help and --help exit 0 with the command's help
// alone, on stdout, with the command's description; that every flag's
// default is shown once (or the flag said to be required), booleans
// without one; and that --task lists the task names.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		if status, stdout, stderr := run(args...); status != 0 || !strings.Contains(stdout, "train") || stderr != "" {
			t.Errorf("%v: status %d, stdout %q, stderr %q", args, status, stdout, stderr)
		}
	}
	boolFlag := regexp.MustCompile(`^\s+(-\w, )?--[\w-]+\s{2}`)
	flagLine := regexp.MustCompile(`^\s+(-\w, )?--([\w-]+)`)
	for _, cmd := range helpCommands {
		for _, args := range [][]string{{"help", cmd}, {cmd, "--help"}, {cmd, "-h"}} {
			status, stdout, stderr := run(args...)
			if status != 0 || stderr != "" || strings.Contains(stdout, "help requested") || !strings.Contains(stdout, "usage: cfl "+cmd+" [flags]\n\n"+prog.Summary(cmd)) {
				t.Errorf("%v: status %d, stderr %q, stdout:\n%s", args, status, stderr, stdout)
			}
		}
		_, help, _ := run("help", cmd)
		if strings.Contains(help, "(default false)") {
			t.Errorf("%s: a boolean shows its default:\n%s", cmd, help)
		}
		for _, line := range strings.Split(help, "\n") {
			m := flagLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			l := strings.ToLower(line)
			if !strings.Contains(l, "default") && !strings.Contains(l, "required") && !boolFlag.MatchString(line) {
				t.Errorf("%s --%s shows no default: %q", cmd, m[2], line)
			}
			if strings.Count(l, "(default") > 1 {
				t.Errorf("%s --%s shows two defaults: %q", cmd, m[2], line)
			}
			if m[2] == "task" {
				for _, task := range data.TaskNames() {
					if !strings.Contains(line, task) {
						t.Errorf("%s --task does not list %s: %q", cmd, task, line)
					}
				}
			}
		}
	}
	// The per-task defaults of the stack sizes.
	_, help, _ := run("help", "train")
	for _, want := range []string{"2 for marked-reversal, unmarked-reversal, dyck; 3 for padded-reversal, hardest-cfl", "(default 20;", `(default "40:80")`, "(default 200)"} {
		if !strings.Contains(help, want) {
			t.Errorf("train's help lacks %q:\n%s", want, help)
		}
	}
}
