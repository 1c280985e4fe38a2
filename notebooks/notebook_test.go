package notebooks

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// notebook is the notebook that TestNotebook executes.
const notebook = "rns_marked_reversal.ipynb"

// install is what a skipped test tells the reader to run.
const install = "`bash .ci/notebook.sh` installs everything the notebook needs (see notebooks/README.md)"

// TestNotebook executes the notebook headlessly with jupyter nbconvert and
// the GoNB kernel, fails if any cell fails, and checks that its outputs hold
// the learning curve (a PNG), a Viterbi run with pushes and pops, and the
// count of sampled strings in the language. It is skipped, saying what is
// missing, where jupyter, nbconvert, the GoNB kernel or GoNB's tools are not
// installed, except under CI (CI=true), where .ci/notebook.sh installs them
// and their absence fails the test; and with -short (it takes one to two
// minutes).
func TestNotebook(t *testing.T) {
	if testing.Short() {
		t.Skip("executing the notebook takes one to two minutes; skipped with -short")
	}
	env := notebookEnv(t)
	jupyter, err := exec.LookPath("jupyter")
	if err != nil {
		missing(t, "jupyter is not installed (Debian: jupyter-core, jupyter-nbconvert, python3-ipykernel); %s", install)
	}
	if out, err := command(jupyter, env, "nbconvert", "--version").CombinedOutput(); err != nil {
		missing(t, "jupyter nbconvert does not run (%v: %s); %s", err, firstLine(out), install)
	}
	out, err := command(jupyter, env, "kernelspec", "list").CombinedOutput()
	if err != nil {
		missing(t, "jupyter kernelspec list failed (%v: %s); %s", err, firstLine(out), install)
	}
	if !hasKernel(string(out), "gonb") {
		missing(t, "the GoNB kernel is not installed (jupyter kernelspec list has no gonb); %s", install)
	}
	for _, tool := range []string{"goimports", "gopls"} {
		if _, err := lookPath(tool, env); err != nil {
			missing(t, "%s, which the GoNB kernel needs, is not on PATH or in $(go env GOPATH)/bin; %s", tool, install)
		}
	}

	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 9*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, jupyter, "nbconvert", "--to", "notebook", "--execute",
		"--ExecutePreprocessor.timeout=600", "--output-dir", dir, "--output", "executed", notebook)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("jupyter nbconvert --execute %s: %v\n%s", notebook, err, failure(stderr.String()))
	}
	t.Logf("executed %s in %.0f s", notebook, time.Since(start).Seconds())

	cells, err := readOutputs(filepath.Join(dir, "executed.ipynb"))
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	var pngs int
	viterbi := ""
	for _, c := range cells {
		if c.err != "" {
			t.Errorf("cell %s failed: %s", c.id, c.err)
		}
		// A failed shell command (!, !*) does not fail its cell: GoNB
		// only reports its exit status on stderr.
		if strings.Contains(c.stderr, "exit status") {
			t.Errorf("a command of cell %s failed:\n%s", c.id, c.stderr)
		}
		for _, p := range c.pngs {
			if !bytes.HasPrefix(p, []byte("\x89PNG\r\n\x1a\n")) || len(p) < 1000 {
				t.Errorf("cell %s: image/png output of %d bytes is not a plot", c.id, len(p))
			}
		}
		pngs += len(c.pngs)
		all.WriteString(c.stdout)
		if strings.Contains(c.stdout, "Viterbi run on ") {
			viterbi = c.stdout
		}
	}
	text := all.String()
	if pngs == 0 {
		t.Errorf("no image/png output: the learning curve was not displayed")
	}
	for _, want := range []string{
		"github.com/nsrnn/nsrnn: ",            // the set-up found the module
		"best epoch ",                         // training finished
		"learning curve: ",                    // the plot cell ran
		"Viterbi run on ",                     // the Viterbi cell ran
		"stack (bottom to top)",               // with its table
		"sampled strings are in the language", // the sampling cell ran
	} {
		if !strings.Contains(text, want) {
			t.Errorf("outputs lack %q", want)
		}
	}
	// Rows of the Viterbi table: step, symbol read, operation, ….
	push := regexp.MustCompile(`(?m)^\d+\s+\S+\s+push\(state=\d+, symbol=\d+\)`)
	pop := regexp.MustCompile(`(?m)^\d+\s+\S+\s+pop\(state=\d+\)`)
	if viterbi != "" && (!push.MatchString(viterbi) || !pop.MatchString(viterbi)) {
		t.Errorf("the Viterbi run has no push or no pop:\n%s", viterbi)
	}
	if m := regexp.MustCompile(`(\d+) of (\d+) sampled strings are in the language`).FindStringSubmatch(text); m != nil {
		// The trained model gets most of them right (96 of 100 when
		// the notebook was written); under half means training failed.
		in, _ := strconv.Atoi(m[1])
		count, _ := strconv.Atoi(m[2])
		if count == 0 || 2*in < count {
			t.Errorf("only %d of %d sampled strings are in the language", in, count)
		}
		t.Log(m[0])
	}
	if t.Failed() {
		t.Logf("outputs:\n%s", text)
	}
}

// notebookEnv is the environment for jupyter and the kernel: this process's,
// with the go command's directory and $(go env GOPATH)/bin (where go install
// puts gonb, goimports and gopls) appended to PATH, and NSRNN_ROOT set to the
// repository, for the notebook's set-up cell.
func notebookEnv(t *testing.T) []string {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.SplitList(os.Getenv("PATH"))
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command, which the GoNB kernel needs, is not on PATH")
	}
	if out, err := exec.Command(goCmd, "env", "GOPATH").Output(); err == nil {
		for _, p := range filepath.SplitList(strings.TrimSpace(string(out))) {
			path = append(path, filepath.Join(p, "bin"))
		}
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, "NSRNN_ROOT=") {
			env = append(env, kv)
		}
	}
	return append(env, "PATH="+strings.Join(path, string(os.PathListSeparator)), "NSRNN_ROOT="+root)
}

// command is name with args, run with env.
func command(name string, env []string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = env
	return cmd
}

// lookPath finds an executable on the PATH of env.
func lookPath(name string, env []string) (string, error) {
	for i := len(env) - 1; i >= 0; i-- {
		if p, ok := strings.CutPrefix(env[i], "PATH="); ok {
			for _, dir := range filepath.SplitList(p) {
				f := filepath.Join(dir, name)
				if fi, err := os.Stat(f); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
					return f, nil
				}
			}
			break
		}
	}
	return "", fmt.Errorf("%s not found", name)
}

// hasKernel reports whether the output of "jupyter kernelspec list" names
// the kernel.
func hasKernel(list, name string) bool {
	for _, line := range strings.Split(list, "\n") {
		if f := strings.Fields(line); len(f) > 0 && f[0] == name {
			return true
		}
	}
	return false
}

// cellOutputs is what one executed code cell printed and displayed.
type cellOutputs struct {
	id             string
	stdout, stderr string
	pngs           [][]byte
	err            string // an error output: "ename: evalue"
}

// readOutputs reads the code cells' outputs of an executed notebook.
func readOutputs(path string) ([]cellOutputs, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var nb struct {
		Cells []struct {
			ID       string `json:"id"`
			CellType string `json:"cell_type"`
			Outputs  []struct {
				OutputType string                     `json:"output_type"`
				Name       string                     `json:"name"`
				Text       multiline                  `json:"text"`
				Data       map[string]json.RawMessage `json:"data"`
				Ename      string                     `json:"ename"`
				Evalue     string                     `json:"evalue"`
			} `json:"outputs"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(b, &nb); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	var cells []cellOutputs
	for i, c := range nb.Cells {
		if c.CellType != "code" {
			continue
		}
		co := cellOutputs{id: c.ID}
		if co.id == "" {
			co.id = strconv.Itoa(i)
		}
		for _, o := range c.Outputs {
			switch o.OutputType {
			case "stream":
				if o.Name == "stderr" {
					co.stderr += string(o.Text)
				} else {
					co.stdout += string(o.Text)
				}
			case "error":
				co.err += o.Ename + ": " + o.Evalue + "\n"
			case "display_data", "execute_result":
				if raw, ok := o.Data["image/png"]; ok {
					var s multiline
					if err := json.Unmarshal(raw, &s); err != nil {
						return nil, fmt.Errorf("%s: cell %s: image/png: %w", path, co.id, err)
					}
					p, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(string(s)), ""))
					if err != nil {
						return nil, fmt.Errorf("%s: cell %s: image/png: %w", path, co.id, err)
					}
					co.pngs = append(co.pngs, p)
				}
				if raw, ok := o.Data["text/plain"]; ok {
					var s multiline
					if err := json.Unmarshal(raw, &s); err == nil {
						co.stdout += string(s)
					}
				}
			}
		}
		cells = append(cells, co)
	}
	return cells, nil
}

// multiline is a notebook text field: a string or a list of strings.
type multiline string

func (m *multiline) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*m = multiline(s)
		return nil
	}
	var ss []string
	if err := json.Unmarshal(b, &ss); err != nil {
		return errors.New("neither a string nor a list of strings")
	}
	*m = multiline(strings.Join(ss, ""))
	return nil
}

func firstLine(b []byte) string {
	s, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
	return s
}

// failure is the part of nbconvert's output that tells why it failed: from
// the cell execution error on, which names the cell and its error, or else
// the end of the output.
func failure(out string) string {
	const max = 6000
	if i := strings.LastIndex(out, "CellExecutionError"); i >= 0 {
		out = out[i:]
		if len(out) > max {
			out = out[:max] + "…"
		}
		return out
	}
	if len(out) > max {
		out = "…" + out[len(out)-max:]
	}
	return out
}

// missing skips the test for a missing tool, saying what to install, or
// under CI (CI=true, where .ci/notebook.sh installs the tools) fails it.
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true, and the notebook tools should have been installed by .ci/notebook.sh: "+format, args...)
	}
	t.Skipf(format, args...)
}
