package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/nsrnn/nsrnn/data"
)

func init() {
	prog.Register("tasks", "list the tasks that --task takes, with their alphabets and parameters", runTasks)
}

// runTasks prints the task table (data.AllTasks): for each task its name,
// group, alphabet, parameters with their defaults, the |Q| and |Γ| that
// --states and --symbols default to, and its strings.
func runTasks(args []string, stdout, stderr io.Writer) error {
	fs := prog.FlagSet("tasks", stdout)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TASK\tGROUP\tALPHABET\tPARAMETERS\t|Q| |Γ|\tSTRINGS")
	for _, info := range data.AllTasks() {
		t, err := data.NewTask(info.Name)
		if err != nil {
			return err
		}
		params := "-"
		if len(info.Params) > 0 {
			var ps []string
			for _, p := range info.Params {
				ps = append(ps, fmt.Sprintf("--%s %d", p.Name, p.Default))
			}
			params = strings.Join(ps, " ")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d %d\t%s\n", info.Name, info.Group, strings.Join(t.Terminals(), " "), params, info.States, info.Symbols, info.Strings)
	}
	return tw.Flush()
}
