package notebooks

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// gophernotesNotebook is the gophernotes version of notebook, generated
// from it by gophernotesVersion and committed, so that it can be opened in
// Jupyter with the gophernotes kernel.
const gophernotesNotebook = "rns_marked_reversal.gophernotes.ipynb"

// gophernotesInstall is what a skipped gophernotes test tells the reader to
// run.
const gophernotesInstall = "`bash .ci/gophernotes.sh` installs it (see notebooks/README.md)"

var update = flag.Bool("update", false, "rewrite "+gophernotesNotebook+" from "+notebook)

// nbFile is a notebook file, with its fields in the order Jupyter writes
// them.
type nbFile struct {
	Cells         []nbCell        `json:"cells"`
	Metadata      json.RawMessage `json:"metadata"`
	Nbformat      int             `json:"nbformat"`
	NbformatMinor int             `json:"nbformat_minor"`
}

// nbCell is a cell of a notebook file, read whole; a code cell of a
// generated notebook is written without outputs (MarshalJSON).
type nbCell struct {
	CellType string          `json:"cell_type"`
	ID       string          `json:"id"`
	Metadata json.RawMessage `json:"metadata"`
	Source   []string        `json:"source"`
}

// MarshalJSON writes the cell's fields in Jupyter's order, a code cell
// with no execution count and no outputs.
func (c nbCell) MarshalJSON() ([]byte, error) {
	type markdown struct {
		CellType string          `json:"cell_type"`
		ID       string          `json:"id"`
		Metadata json.RawMessage `json:"metadata"`
		Source   []string        `json:"source"`
	}
	type code struct {
		CellType       string          `json:"cell_type"`
		ExecutionCount *int            `json:"execution_count"`
		ID             string          `json:"id"`
		Metadata       json.RawMessage `json:"metadata"`
		Outputs        []struct{}      `json:"outputs"`
		Source         []string        `json:"source"`
	}
	if c.Source == nil {
		c.Source = []string{}
	}
	var v any = markdown(c)
	if c.CellType == "code" {
		v = code{CellType: c.CellType, ID: c.ID, Metadata: c.Metadata, Outputs: []struct{}{}, Source: c.Source}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// text is the cell's source as one string.
func (c nbCell) text() string { return strings.Join(c.Source, "") }

// setText sets the cell's source, split into lines as Jupyter stores them.
func (c *nbCell) setText(s string) {
	c.Source = nil
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			c.Source = append(c.Source, s)
			break
		}
		c.Source = append(c.Source, s[:i+1])
		s = s[i+1:]
	}
}

// gophernotesHeader opens the gophernotes version of the notebook.
const gophernotesHeader = `**The gophernotes version of [` + notebook + `](` + notebook + `)**, generated from it by
` + "`gophernotes_test.go`" + ` (` + "`go test ./notebooks -run TestGophernotesVersion -update`" + `): edit that
notebook, not this one. The code is the same, with GoNB's cell markers removed, its display call
replaced by gophernotes' ` + "`Display`" + `, the kernel's temporary directory replaced by ` + "`os.TempDir()`" + ` (which is not removed when the kernel stops), and the
library imported from this checkout by a path relative to this directory (` + "`\"../nsrnn\"`" + `): gophernotes
builds a plugin of the imported packages, with a replace directive for the module found there. Open
it from ` + "`notebooks/`" + ` with the gophernotes kernel (see ` + "`README.md`" + ` in this directory); the first cell
compiles that plugin, which takes minutes. The text below was written for GoNB: in gophernotes, values
do carry over from cell to cell.`

// gophernotesSetup replaces the GoNB notebook's set-up section.
const gophernotesSetup = `## Set-up

Nothing to run: the imports below name the library's packages by their path relative to this
directory, where Jupyter starts the kernel.`

// gophernotesVersion converts the GoNB notebook src into its gophernotes
// version: the set-up cells (shell commands, %goworkfix) are dropped, "%%"
// lines removed, the library imported by relative path, gonbui's display
// replaced by gophernotes' Display and $GONB_TMP_DIR by os.TempDir(). It
// fails on any GoNB construct it does not know, so that the two versions
// cannot drift apart silently.
func gophernotesVersion(src []byte) ([]byte, error) {
	var nb nbFile
	if err := json.Unmarshal(src, &nb); err != nil {
		return nil, err
	}
	display := regexp.MustCompile(`gonbui\.DisplayPng\((.*)\)`)
	out := nbFile{Nbformat: nb.Nbformat, NbformatMinor: nb.NbformatMinor,
		Metadata: json.RawMessage(`{"kernelspec": {"display_name": "Go (gophernotes)", "language": "go", "name": "gophernotes"}, "language_info": {"file_extension": ".go", "mimetype": "text/x-go", "name": "go"}}`)}
	header := nbCell{CellType: "markdown", ID: "gophernotes-header", Metadata: json.RawMessage("{}")}
	header.setText(gophernotesHeader)
	out.Cells = append(out.Cells, header)
	for i, c := range nb.Cells {
		text := c.text()
		switch {
		case c.CellType == "markdown" && strings.HasPrefix(text, "## Set-up"):
			c.setText(gophernotesSetup)
		case c.CellType != "code":
			c.setText(strings.ReplaceAll(text, "`gonbui.DisplayPng`", "`Display(display.PNG(…))`"))
		case strings.HasPrefix(text, "!") || strings.Contains(text, "%goworkfix"):
			continue // the set-up cell
		default:
			var lines []string
			for _, l := range strings.Split(text, "\n") {
				switch {
				case l == "%%":
					continue
				case strings.Contains(l, `"github.com/janpfeifer/gonb/gonbui"`):
					continue
				case strings.HasPrefix(strings.TrimSpace(l), "gonbui.Sync()"):
					// GoNB's display is asynchronous, gophernotes's is not.
					continue
				}
				l = strings.ReplaceAll(l, `"github.com/nsrnn/nsrnn/`, `"../`)
				l = strings.ReplaceAll(l, `os.Getenv("GONB_TMP_DIR")`, `os.TempDir()`)
				l = strings.ReplaceAll(l, "// a directory in the kernel's temporary directory, removed when the kernel stops.",
					"// a directory in os.TempDir(), which stays when the kernel stops (and which the training cell replaces).")
				l = display.ReplaceAllString(l, "Display(display.PNG($1))")
				if strings.HasPrefix(strings.TrimSpace(l), "%") || strings.HasPrefix(strings.TrimSpace(l), "!") ||
					strings.Contains(l, "gonbui") || strings.Contains(l, "GONB_") {
					return nil, fmt.Errorf("cell %d (%s): no gophernotes equivalent for %q", i, c.ID, l)
				}
				lines = append(lines, l)
			}
			// gophernotes shows the values of a cell's last expression:
			// a final top-level fmt.Printf's byte count and error would
			// print after its output.
			for j := len(lines) - 1; j >= 0; j-- {
				if l := lines[j]; l != "" && l[0] != '\t' && l[0] != ' ' && l[0] != ')' && l[0] != '}' {
					if strings.HasPrefix(l, "fmt.Print") {
						lines[j] = "_, _ = " + l
					}
					break
				}
			}
			c.setText(strings.Join(lines, "\n"))
		}
		c.ID = "gophernotes-" + strings.TrimPrefix(c.ID, "cell-")
		out.Cells = append(out.Cells, c)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// TestGophernotesVersion checks that the committed gophernotes version of
// the notebook is the one generated from the GoNB notebook (-update
// rewrites it), and that its code has no GoNB construct left.
func TestGophernotesVersion(t *testing.T) {
	src, err := os.ReadFile(notebook)
	if err != nil {
		t.Fatal(err)
	}
	want, err := gophernotesVersion(src)
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(gophernotesNotebook, want, 0o666); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(gophernotesNotebook)
	if err != nil {
		t.Fatalf("%v (go test ./notebooks -run TestGophernotesVersion -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is not the gophernotes version of %s: run go test ./notebooks -run TestGophernotesVersion -update", gophernotesNotebook, notebook)
	}
	var nb nbFile
	if err := json.Unmarshal(got, &nb); err != nil {
		t.Fatal(err)
	}
	code := ""
	for _, c := range nb.Cells {
		if c.CellType == "code" {
			code += c.text() + "\n"
		}
	}
	for _, bad := range []string{"%%", "gonbui", "GONB_", "github.com/nsrnn/nsrnn/", "[T any]"} {
		if strings.Contains(code, bad) {
			t.Errorf("the gophernotes notebook's code holds %q, which gophernotes cannot run", bad)
		}
	}
	for _, want := range []string{`"../nsrnn"`, `"../data"`, `"../protocol"`, "Display(display.PNG("} {
		if !strings.Contains(code, want) {
			t.Errorf("the gophernotes notebook's code lacks %s", want)
		}
	}
}

// gophernotesKernel returns the name of an installed Jupyter kernel that
// runs gophernotes, if any.
func gophernotesKernel(jupyter string, env []string) (string, error) {
	out, err := command(jupyter, env, "kernelspec", "list", "--json").Output()
	if err != nil {
		return "", err
	}
	var list struct {
		Kernelspecs map[string]struct {
			Spec struct {
				Argv []string `json:"argv"`
			} `json:"spec"`
		} `json:"kernelspecs"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return "", err
	}
	for name, k := range list.Kernelspecs {
		if len(k.Spec.Argv) > 0 && filepath.Base(k.Spec.Argv[0]) == "gophernotes" {
			return name, nil
		}
	}
	return "", fmt.Errorf("no kernel runs gophernotes")
}

// gophernotesEnv is the environment of jupyter and the gophernotes kernel:
// notebookEnv's, with GODEBUG=gotypesalias=0 (gophernotes' interpreter,
// gomacro, panics on the alias types that Go 1.23 and later report
// otherwise), TMPDIR set to tmp (the notebook's os.TempDir()), and a
// module proxy list where a proxy that refuses a module (some answer 403
// for modules they do not hold, such as this unpublished one) falls
// through to an empty proxy that reads as "not found", so that the replace
// directive gophernotes writes for the local module applies.
func gophernotesEnv(t *testing.T, tmp string) []string {
	env := notebookEnv(t)
	proxy := os.Getenv("GOPROXY")
	if out, err := exec.Command("go", "env", "GOPROXY").Output(); err == nil {
		proxy = strings.TrimSpace(string(out))
	}
	var keep []string
	for _, kv := range env {
		if !strings.HasPrefix(kv, "GODEBUG=") && !strings.HasPrefix(kv, "TMPDIR=") && !strings.HasPrefix(kv, "GOPROXY=") {
			keep = append(keep, kv)
		}
	}
	keep = append(keep, "GODEBUG=gotypesalias=0", "TMPDIR="+tmp)
	// "direct" is left out: a failed fetch from version control stops
	// the look-up instead of falling through.
	var proxies []string
	for _, p := range strings.FieldsFunc(proxy, func(r rune) bool { return r == ',' || r == '|' }) {
		if p != "direct" && p != "off" {
			proxies = append(proxies, p)
		}
	}
	if len(proxies) == 0 {
		return append(keep, "GOPROXY="+proxy)
	}
	empty := filepath.Join(tmp, "empty-proxy")
	if err := os.MkdirAll(empty, 0o777); err != nil {
		t.Fatal(err)
	}
	return append(keep, "GOPROXY="+strings.Join(proxies, "|")+"|file://"+filepath.ToSlash(empty))
}

// TestNotebookGophernotes executes the gophernotes version of the notebook
// with jupyter nbconvert and a gophernotes kernel, and checks its outputs
// as TestNotebook does. It is skipped, saying what is missing, where
// jupyter or a gophernotes kernel is not installed, and with -short. Its
// first cell builds a plugin of the library and gonum/plot (minutes the
// first time; the build cache keeps the packages for later runs).
func TestNotebookGophernotes(t *testing.T) {
	if testing.Short() {
		t.Skip("executing the notebook in gophernotes takes minutes; skipped with -short")
	}
	tmp := t.TempDir()
	env := gophernotesEnv(t, tmp)
	jupyter, err := exec.LookPath("jupyter")
	if err != nil {
		t.Skipf("jupyter is not installed (Debian: jupyter-core, jupyter-nbconvert, python3-ipykernel); %s", install)
	}
	if out, err := command(jupyter, env, "nbconvert", "--version").CombinedOutput(); err != nil {
		t.Skipf("jupyter nbconvert does not run (%v: %s); %s", err, firstLine(out), install)
	}
	kernel, err := gophernotesKernel(jupyter, env)
	if err != nil {
		t.Skipf("no gophernotes kernel (%v); %s", err, gophernotesInstall)
	}
	timeout := 25 * time.Minute
	if d, ok := t.Deadline(); ok {
		timeout = min(timeout, time.Until(d)-30*time.Second)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	dir := t.TempDir()
	cmd := exec.CommandContext(ctx, jupyter, "nbconvert", "--to", "notebook", "--execute",
		"--ExecutePreprocessor.kernel_name="+kernel, fmt.Sprintf("--ExecutePreprocessor.timeout=%d", int(timeout.Seconds())),
		"--output-dir", dir, "--output", "executed", gophernotesNotebook)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("jupyter nbconvert --execute %s (kernel %s): %v after %.0f s\n%s", gophernotesNotebook, kernel, err, time.Since(start).Seconds(), failure(stderr.String()))
	}
	t.Logf("executed %s in gophernotes in %.0f s", gophernotesNotebook, time.Since(start).Seconds())
	cells, err := readOutputs(filepath.Join(dir, "executed.ipynb"))
	if err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	pngs := 0
	for _, c := range cells {
		if c.err != "" {
			t.Errorf("cell %s failed: %s", c.id, c.err)
		}
		for _, p := range c.pngs {
			if !bytes.HasPrefix(p, []byte("\x89PNG\r\n\x1a\n")) || len(p) < 1000 {
				t.Errorf("cell %s: image/png output of %d bytes is not a plot", c.id, len(p))
			}
		}
		pngs += len(c.pngs)
		all.WriteString(c.stdout)
	}
	text := all.String()
	if pngs == 0 {
		t.Errorf("no image/png output: the learning curve was not displayed")
	}
	for _, want := range []string{"best epoch ", "learning curve: ", "Viterbi run on ", "stack (bottom to top)", "sampled strings are in the language"} {
		if !strings.Contains(text, want) {
			t.Errorf("outputs lack %q", want)
		}
	}
	if !regexp.MustCompile(`push\(state=\d+, symbol=\d+\)`).MatchString(text) {
		t.Errorf("the Viterbi run has no push")
	}
	if t.Failed() {
		t.Logf("outputs:\n%s", text)
	}
}
