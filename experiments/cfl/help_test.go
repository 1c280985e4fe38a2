package main

import (
	"regexp"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/data"
)

// helpCommands are the commands whose help TestHelp checks.
var helpCommands = []string{"actions", "cost", "entropy", "eval", "params", "plot", "sample", "select", "sweep", "train"}

// TestHelp checks that help and --help exit 0 with the command's help
// alone, that every flag's default is shown (or the flag said to be
// required), and that --task lists the task names.
func TestHelp(t *testing.T) {
	for _, args := range [][]string{{"help"}, {"--help"}, {"-h"}} {
		if status, _, stderr := run(args...); status != 0 || !strings.Contains(stderr, "train") {
			t.Errorf("%v: status %d: %s", args, status, stderr)
		}
	}
	flagLine := regexp.MustCompile(`^\s+(-\w, )?--([\w-]+)`)
	for _, cmd := range helpCommands {
		for _, args := range [][]string{{"help", cmd}, {cmd, "--help"}, {cmd, "-h"}} {
			status, stdout, stderr := run(args...)
			if status != 0 || stdout != "" || strings.Contains(stderr, "help requested") || !strings.Contains(stderr, "usage: cfl "+cmd) {
				t.Errorf("%v: status %d, stdout %q, stderr:\n%s", args, status, stdout, stderr)
			}
		}
		_, _, help := run("help", cmd)
		for _, line := range strings.Split(help, "\n") {
			m := flagLine.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			if l := strings.ToLower(line); !strings.Contains(l, "default") && !strings.Contains(l, "required") {
				t.Errorf("%s --%s shows no default: %q", cmd, m[2], line)
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
	_, _, help := run("help", "train")
	for _, want := range []string{"2 for marked-reversal, unmarked-reversal, dyck; 3 for padded-reversal, hardest-cfl", "(default 20;", `(default "40:80")`, "(default 200)"} {
		if !strings.Contains(help, want) {
			t.Errorf("train's help lacks %q:\n%s", want, help)
		}
	}
}
