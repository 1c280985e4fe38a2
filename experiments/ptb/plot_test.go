package main

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/nsrnn/nsrnn/experiments/internal/figure"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

// fakePTBRun writes a run directory with the given validation
// perplexities by epoch and, when test > 0, eval-test.json and sg.json.
func fakePTBRun(t *testing.T, dir string, cfg nsrnn.Config, valid []float64, test, sg float64, finished bool) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := protocol.WriteJSON(filepath.Join(dir, protocol.RunFile), settings{Model: cfg, LR: 1, Clip: 1}); err != nil {
		t.Fatal(err)
	}
	var log strings.Builder
	for e, v := range valid {
		fmt.Fprintf(&log, `{"epoch":%d,"train_loss":6,"valid_cross_entropy":%v}`+"\n", e+1, math.Log(v))
	}
	if err := os.WriteFile(filepath.Join(dir, protocol.LogFile), []byte(log.String()), 0o666); err != nil {
		t.Fatal(err)
	}
	if finished {
		if err := protocol.WriteJSON(filepath.Join(dir, protocol.SummaryFile), summary{Model: cfg}); err != nil {
			t.Fatal(err)
		}
	}
	if test > 0 {
		if err := protocol.WriteJSON(filepath.Join(dir, "eval-test.json"), evalResult{Split: "test", Perplexity: test}); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "sg.json"), []byte(fmt.Sprintf(`{"level":"pair","sg_score":%v}`, sg)), 0o666); err != nil {
			t.Fatal(err)
		}
	}
}

func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestPlot(t *testing.T) {
	dir := t.TempDir()
	lstm := nsrnn.Config{Kind: nsrnn.LSTM, Hidden: 256}
	rns := nsrnn.Config{Kind: nsrnn.RNS, Hidden: 256, States: 1, Symbols: 2, Window: 35}
	// Two LSTM runs: the second is better and is the LSTM's curve; the
	// RNS run is unfinished and has no test evaluation.
	fakePTBRun(t, filepath.Join(dir, "a"), lstm, []float64{400, 300, 310}, 290, 0.45, true)
	fakePTBRun(t, filepath.Join(dir, "b"), lstm, []float64{380, 250, 240, 245}, 230, 0.48, true)
	fakePTBRun(t, filepath.Join(dir, "c"), rns, []float64{420, 260}, 0, 0, false)
	out := filepath.Join(dir, "fig")
	var stdout, stderr bytes.Buffer
	err := runPlot([]string{"--out", out, filepath.Join(dir, "c"), filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "a")}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("plot: %v (%s)", err, stderr.String())
	}
	want := [][]string{
		{"model", "run", "epoch", "valid_perplexity"},
		{"lstm-256", filepath.Join(dir, "b"), "1", "380.0000"},
		{"lstm-256", filepath.Join(dir, "b"), "2", "250.0000"},
		{"lstm-256", filepath.Join(dir, "b"), "3", "240.0000"},
		{"lstm-256", filepath.Join(dir, "b"), "4", "245.0000"},
		{"rns-1-2", filepath.Join(dir, "c"), "1", "420.0000"},
		{"rns-1-2", filepath.Join(dir, "c"), "2", "260.0000"},
	}
	if got := readCSV(t, filepath.Join(out, validFigName+".csv")); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("valid-perplexity.csv:\n got %v\nwant %v", got, want)
	}
	// The scatter holds both LSTM runs (every run of a model) and not the
	// unevaluated RNS run.
	want = [][]string{
		{"model", "run", "test_perplexity", "sg_score"},
		{"lstm-256", filepath.Join(dir, "a"), "290.0000", "0.450000"},
		{"lstm-256", filepath.Join(dir, "b"), "230.0000", "0.480000"},
	}
	if got := readCSV(t, filepath.Join(out, scatterFigName+".csv")); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("sg-vs-test-perplexity.csv:\n got %v\nwant %v", got, want)
	}
	for _, name := range []string{validFigName, scatterFigName} {
		f, err := os.Open(filepath.Join(out, name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil {
			t.Fatalf("%s.png: %v", name, err)
		}
		if cfg.Width < figure.MinPNGWidth {
			t.Errorf("%s.png is %d px wide, want at least %d", name, cfg.Width, figure.MinPNGWidth)
		}
		if fi, err := os.Stat(filepath.Join(out, name+".svg")); err != nil || fi.Size() == 0 {
			t.Errorf("%s.svg: %v", name, err)
		}
	}
	if n := strings.Count(stdout.String(), "\n"); n != 6 {
		t.Errorf("plot listed %d files, want 6:\n%s", n, stdout.String())
	}
	// The LSTM run it leaves out of the validation figure is named.
	if want := "lstm-256: " + filepath.Join(dir, "b") + " (validation perplexity 240.00), not " + filepath.Join(dir, "a"); !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr does not name the run left out (%q):\n%s", want, stderr.String())
	}
}

func TestPlotSweepAndErrors(t *testing.T) {
	dir := t.TempDir()
	sweep := filepath.Join(dir, "sweep")
	if err := protocol.WriteJSON(filepath.Join(sweep, "sweep.json"), sweepSettings{Runs: 1}); err == nil {
		// WriteJSON needs the directory.
		t.Fatal("expected an error writing into a missing directory")
	}
	if err := os.MkdirAll(sweep, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := protocol.WriteJSON(filepath.Join(sweep, "sweep.json"), sweepSettings{Runs: 1}); err != nil {
		t.Fatal(err)
	}
	jm := nsrnn.Config{Kind: nsrnn.JM, Hidden: 247, PushHiddenState: true, DepthLimit: 10}
	fakePTBRun(t, filepath.Join(sweep, "jm-hidden-247", "run-01"), jm, []float64{500, 400}, 0, 0, false)
	// A run that has not finished an epoch yet is read but draws nothing.
	fakePTBRun(t, filepath.Join(sweep, "jm-hidden-247", "run-02"), jm, nil, 0, 0, false)
	out := filepath.Join(dir, "fig")
	var stdout, stderr bytes.Buffer
	if err := runPlot([]string{"--sweep", sweep, "--out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("plot --sweep: %v", err)
	}
	rows := readCSV(t, filepath.Join(out, validFigName+".csv"))
	if len(rows) != 3 || rows[1][0] != "jm-hidden-247" || rows[2][3] != "400.0000" {
		t.Errorf("valid-perplexity.csv = %v", rows)
	}
	if _, err := os.Stat(filepath.Join(out, scatterFigName+".png")); !os.IsNotExist(err) {
		t.Errorf("scatter drawn without any evaluated run: %v", err)
	}

	bad := filepath.Join(dir, "bad")
	fakePTBRun(t, bad, jm, []float64{500}, 0, 0, false)
	if err := os.WriteFile(filepath.Join(bad, protocol.LogFile), []byte(`{"epoch":2,"valid_cross_entropy":6}`+"\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	fakePTBRun(t, empty, jm, nil, 0, 0, false)
	negative := filepath.Join(dir, "negative")
	fakePTBRun(t, negative, jm, []float64{500}, 0, 0, false)
	if err := os.WriteFile(filepath.Join(negative, protocol.LogFile), []byte(`{"epoch":1,"valid_cross_entropy":-1}`+"\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	// One epoch at perplexity 1 draws (gonum's widening of a one-value
	// range by ±1 would reach 0 on the log scale).
	one := filepath.Join(dir, "one")
	fakePTBRun(t, one, jm, []float64{1}, 0, 0, false)
	if err := runPlot([]string{"--out", filepath.Join(dir, "fig-one"), one}, &stdout, &stderr); err != nil {
		t.Errorf("plot of one epoch at perplexity 1: %v", err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--out", filepath.Join(dir, "fig-negative"), negative}, "log.jsonl:1: validation cross-entropy -1"},
		{[]string{"--out", filepath.Join(dir, "fig-empty"), empty}, "no run has finished an epoch"},
		{[]string{filepath.Join(dir, "x")}, "--out is required"},
		{[]string{"--out", out}, "no runs"},
		{[]string{"--out", out, filepath.Join(dir, "missing")}, "not a ptb run"},
		{[]string{"--out", out, "--sweep", dir}, "not a ptb sweep"},
		{[]string{"--out", out, sweep}, sweep + " is a sweep directory, not a run's: give it with --sweep"},
		{[]string{"--out", out, bad}, "log.jsonl:1: epoch 2 where 1 was expected"},
		{[]string{"--out", out, empty}, "no run has finished an epoch"},
	} {
		err := runPlot(tc.args, &stdout, &stderr)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want one containing %q", tc.args, err, tc.want)
		}
		if len(tc.args) < 2 {
			continue
		}
		if o := tc.args[1]; strings.HasPrefix(filepath.Base(o), "fig-") {
			if _, err := os.Stat(o); err == nil {
				t.Errorf("%v: refused, yet --out %s was made", tc.args, o)
			}
		}
	}
}

func TestPTBModelName(t *testing.T) {
	rns := protocol.KindStyle(nsrnn.RNS).Label
	for _, tc := range []struct {
		cfg         nsrnn.Config
		name, label string
	}{
		{nsrnn.Config{Kind: nsrnn.LSTM, Hidden: 256}, "lstm-256", "LSTM 256"},
		{nsrnn.Config{Kind: nsrnn.JM, Hidden: 247, PushHiddenState: true}, "jm-hidden-247", "JM hidden 247"},
		{nsrnn.Config{Kind: nsrnn.JM, Hidden: 256, StackEmbedding: 22}, "jm-learned-22", "JM learned 22"},
		{nsrnn.Config{Kind: nsrnn.NS, Hidden: 256, States: 3, Symbols: 4}, "ns-3-4", "NS 3-4"},
		{nsrnn.Config{Kind: nsrnn.RNS, Hidden: 256, States: 1, Symbols: 2}, "rns-1-2", rns + " 1-2"},
		// Another hidden size (ptb sweep --hidden 8): said where the
		// name does not say it.
		{nsrnn.Config{Kind: nsrnn.LSTM, Hidden: 8}, "lstm-8", "LSTM 8"},
		{nsrnn.Config{Kind: nsrnn.JM, Hidden: 8, PushHiddenState: true}, "jm-hidden-8", "JM hidden 8"},
		{nsrnn.Config{Kind: nsrnn.JM, Hidden: 8, StackEmbedding: 22}, "jm-learned-22 (hidden 8)", "JM learned 22 (hidden 8)"},
		{nsrnn.Config{Kind: nsrnn.NS, Hidden: 8, States: 3, Symbols: 4}, "ns-3-4 (hidden 8)", "NS 3-4 (hidden 8)"},
		{nsrnn.Config{Kind: nsrnn.RNS, Hidden: 8, States: 1, Symbols: 2}, "rns-1-2 (hidden 8)", rns + " 1-2 (hidden 8)"},
	} {
		name := ptbModelName(tc.cfg)
		if name != tc.name {
			t.Errorf("ptbModelName(%+v) = %q, want %q", tc.cfg, name, tc.name)
		}
		if got := ptbModelLabel(name, tc.cfg.Kind); got != tc.label {
			t.Errorf("ptbModelLabel(%q) = %q, want %q", name, got, tc.label)
		}
	}
}

// TestPlotOtherHidden: runs of a sweep with --hidden 8 are named with their
// hidden size in the CSV files and the legends where their names do not
// say it, apart from the paper's size of the same name.
func TestPlotOtherHidden(t *testing.T) {
	dir := t.TempDir()
	fakePTBRun(t, filepath.Join(dir, "a"), nsrnn.Config{Kind: nsrnn.RNS, Hidden: 8, States: 1, Symbols: 2, Window: 35}, []float64{420, 260}, 250, 0.5, true)
	fakePTBRun(t, filepath.Join(dir, "b"), nsrnn.Config{Kind: nsrnn.RNS, Hidden: 256, States: 1, Symbols: 2, Window: 35}, []float64{400, 240}, 230, 0.6, true)
	fakePTBRun(t, filepath.Join(dir, "c"), nsrnn.Config{Kind: nsrnn.LSTM, Hidden: 8}, []float64{500}, 450, 0.4, true)
	out := filepath.Join(dir, "fig")
	var stdout, stderr bytes.Buffer
	if err := runPlot([]string{"--out", out, filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")}, &stdout, &stderr); err != nil {
		t.Fatalf("plot: %v (%s)", err, stderr.String())
	}
	models := map[string]bool{}
	for _, name := range []string{validFigName, scatterFigName} {
		for _, row := range readCSV(t, filepath.Join(out, name+".csv"))[1:] {
			models[row[0]+" "+filepath.Base(row[1])] = true
		}
	}
	for _, want := range []string{"rns-1-2 (hidden 8) a", "rns-1-2 b", "lstm-8 c"} {
		if !models[want] {
			t.Errorf("the CSV files lack %q: %v", want, models)
		}
	}
	texts := strings.Join(svgTexts(t, filepath.Join(out, scatterFigName+".svg")), "\n")
	if !strings.Contains(texts, "1-2 (hidden 8)") || strings.Contains(texts, "LSTM 8 (hidden") {
		t.Errorf("the scatter's legend does not say the hidden size where the name does not:\n%s", texts)
	}
}

// svgTexts returns the text elements of an SVG file.
func svgTexts(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, m := range regexp.MustCompile(`<text[^>]*>([^<]*)</text>`).FindAllStringSubmatch(string(b), -1) {
		texts = append(texts, m[1])
	}
	return texts
}

// TestPlotOneEvaluatedRun checks the scatter of a single evaluated run:
// its axes carry distinct plain tick labels (not "6.2e+02" three times).
func TestPlotOneEvaluatedRun(t *testing.T) {
	for _, tc := range []struct {
		test, sg float64
	}{{620, 0.45}, {85.3, 0.7}, {1.5, 0}, {12000, 1}} {
		dir := t.TempDir()
		run := filepath.Join(dir, "run")
		fakePTBRun(t, run, nsrnn.Config{Kind: nsrnn.LSTM, Hidden: 256}, []float64{700, 650}, tc.test, tc.sg, true)
		out := filepath.Join(dir, "fig")
		var stdout, stderr bytes.Buffer
		if err := runPlot([]string{"--out", out, run}, &stdout, &stderr); err != nil {
			t.Fatal(err)
		}
		var labels []string
		seen := map[string]bool{}
		for _, s := range svgTexts(t, filepath.Join(out, scatterFigName+".svg")) {
			if _, err := strconv.ParseFloat(s, 64); err != nil {
				continue
			}
			if strings.ContainsAny(s, "eE") || seen[s] {
				t.Errorf("test perplexity %v, SG %v: tick label %q repeated or in exponent notation", tc.test, tc.sg, s)
			}
			seen[s] = true
			labels = append(labels, s)
		}
		if len(labels) < 4 {
			t.Errorf("test perplexity %v, SG %v: tick labels %q, want at least two on each axis", tc.test, tc.sg, labels)
		}
	}
}

// TestPlotNamesUnevaluatedRuns checks the line on stderr that names the
// runs left out of the SG figure, with the file each lacks and the
// commands that make them; and that it is silent when none is.
func TestPlotNamesUnevaluatedRuns(t *testing.T) {
	for _, tc := range []struct {
		name      string
		evaluated []bool // per run: eval-test.json and sg.json written
		noSG      int    // index of a run whose sg.json is removed, or -1
		want      []string
		none      bool // no line wanted
	}{
		{"none evaluated", []bool{false, false}, -1, []string{"no " + scatterFigName + " figure", "run0 lacks eval-test.json and sg.json", "run1 lacks eval-test.json and sg.json",
			"ptb eval --model RUN --split test --json > RUN/eval-test.json", "ptb sg --model RUN --suites DIR/syntaxgym --json > RUN/sg.json"}, false},
		{"one without sg.json", []bool{true, true}, 1, []string{"1 of 2 runs are left out of " + scatterFigName, "run1 lacks sg.json)", "ptb sg --model RUN"}, false},
		{"all evaluated", []bool{true, true}, -1, nil, true},
	} {
		dir := t.TempDir()
		var args []string
		for i, ev := range tc.evaluated {
			run := filepath.Join(dir, fmt.Sprintf("run%d", i))
			test := 0.0
			if ev {
				test = 300
			}
			// Two models (lstm-256, lstm-128), so that the validation
			// figure draws both runs.
			fakePTBRun(t, run, nsrnn.Config{Kind: nsrnn.LSTM, Hidden: 256 >> i}, []float64{400, 350}, test, 0.5, true)
			if i == tc.noSG {
				os.Remove(filepath.Join(run, "sg.json"))
			}
			args = append(args, run)
		}
		var stdout, stderr bytes.Buffer
		if err := runPlot(append([]string{"--out", filepath.Join(dir, "fig")}, args...), &stdout, &stderr); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		e := stderr.String()
		if tc.none {
			if e != "" {
				t.Errorf("%s: stderr %q, want none", tc.name, e)
			}
			continue
		}
		if strings.Count(e, "\n") != 1 {
			t.Errorf("%s: stderr is not one line:\n%s", tc.name, e)
		}
		for _, w := range tc.want {
			if !strings.Contains(e, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", tc.name, w, e)
			}
		}
		if strings.Contains(e, "ptb eval") != !tc.evaluated[0] {
			t.Errorf("%s: the eval command given or not as runs need:\n%s", tc.name, e)
		}
	}
}

// Runs with sg-released.json (ptb sg --convention released) also make the
// released convention's figure, with the paper's best run of each model
// plotted beside them; runs without it are left out of that figure only.
func TestPlotReleasedConvention(t *testing.T) {
	dir := t.TempDir()
	lstm := nsrnn.Config{Kind: nsrnn.LSTM, Hidden: 256}
	rns := nsrnn.Config{Kind: nsrnn.RNS, Hidden: 256, States: 3, Symbols: 4, Window: 35}
	fakePTBRun(t, filepath.Join(dir, "a"), lstm, []float64{400, 300}, 290, 0.45, true)
	fakePTBRun(t, filepath.Join(dir, "b"), rns, []float64{380, 250}, 230, 0.48, true)
	fakePTBRun(t, filepath.Join(dir, "c"), lstm, []float64{390, 260}, 250, 0.5, true)
	for run, sg := range map[string]string{"a": "0.41", "b": "0.39"} {
		if err := os.WriteFile(filepath.Join(dir, run, "sg-released.json"), []byte(`{"level":"pair","convention":"released","sg_score":`+sg+`}`), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "fig")
	var stdout, stderr bytes.Buffer
	if err := runPlot([]string{"--out", out, filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "c")}, &stdout, &stderr); err != nil {
		t.Fatalf("plot: %v (%s)", err, stderr.String())
	}
	want := [][]string{
		{"model", "run", "test_perplexity", "sg_score"},
		{"lstm-256", filepath.Join(dir, "a"), "290.0000", "0.410000"},
		{"rns-3-4", filepath.Join(dir, "b"), "230.0000", "0.390000"},
		{"lstm-256", "paper", "120.9500", "0.433000"},
		{"rns-3-4", "paper", "118.0900", "0.408000"},
	}
	if got := readCSV(t, filepath.Join(out, releasedScatterFigName+".csv")); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s.csv:\n got %v\nwant %v", releasedScatterFigName, got, want)
	}
	if got := readCSV(t, filepath.Join(out, scatterFigName+".csv")); len(got) != 4 {
		t.Errorf("%s.csv has %d rows, want the header and the three runs", scatterFigName, len(got))
	}
	if n := strings.Count(stdout.String(), "\n"); n != 9 {
		t.Errorf("plot listed %d files, want 9:\n%s", n, stdout.String())
	}
	// Without any sg-released.json there is no released figure.
	out2 := filepath.Join(dir, "fig2")
	stdout.Reset()
	if err := runPlot([]string{"--out", out2, filepath.Join(dir, "c")}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(out2, releasedScatterFigName+".png")); !os.IsNotExist(err) {
		t.Errorf("a released figure was drawn without sg-released.json: %v", err)
	}
}

// TestPlotRefusesItemLevelSG: the figures compare pair-level SG scores;
// an sg.json of item-level ones is refused, naming it.
func TestPlotRefusesItemLevelSG(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	fakePTBRun(t, run, nsrnn.Config{Kind: nsrnn.LSTM, Hidden: 256}, []float64{400, 300}, 290, 0.45, true)
	if err := os.WriteFile(filepath.Join(run, "sg.json"), []byte(`{"level":"item","sg_score":0.4}`), 0o666); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	err := runPlot([]string{"--out", filepath.Join(dir, "fig"), run}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(run, "sg.json")) || !strings.Contains(err.Error(), "item level") {
		t.Errorf("an item-level sg.json: %v", err)
	}
}
