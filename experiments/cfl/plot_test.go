package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/color"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"

	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/experiments/internal/figure"
	"github.com/nsrnn/nsrnn/nsrnn"
	"github.com/nsrnn/nsrnn/protocol"
)

// writeFakeActions writes DIR/<model>/actions.jsonl for a marked-reversal
// string of length 9 over the given number of epochs.
func writeFakeActions(t *testing.T, dir string, models []string, epochs int) {
	t.Helper()
	for _, m := range models {
		var b []byte
		for e := 1; e <= epochs; e++ {
			ws := make([][3]float64, 8)
			for i := range ws {
				p := float64(e) / float64(epochs)
				ws[i] = [3]float64{p, 0, 1 - p}
			}
			line, _ := json.Marshal(actionRecord{Epoch: e, String: "0 1 1 0 # 0 1 1 0", Weights: ws})
			b = append(append(b, line...), '\n')
		}
		if err := os.MkdirAll(filepath.Join(dir, m), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, m, actionsFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestPlotActionsOnly(t *testing.T) {
	adir, out := t.TempDir(), t.TempDir()
	writeFakeActions(t, adir, []string{"rns"}, 3)
	var stdout bytes.Buffer
	if err := runPlot([]string{"--actions", adir, "--out", out}, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), fig3Name+".png") {
		t.Errorf("output %q does not list the figure", stdout.String())
	}
	if err := runPlot([]string{"--actions", t.TempDir(), "--out", out}, &stdout, &bytes.Buffer{}); err == nil {
		t.Error("no error for an empty --actions directory")
	}
	// The directory, or one of its models' directories, given as a run
	// directory: the error says to give it as --actions.
	for _, arg := range []string{adir, filepath.Join(adir, "rns")} {
		err := runPlot([]string{"--out", out, arg}, &stdout, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "give --actions "+adir) {
			t.Errorf("plot %s: error %v, want one that says to give --actions %s", arg, err, adir)
		}
	}
}

// TestPlotChecksBeforeWriting: a bad --actions, given with run
// directories whose Figure 1 could be drawn, is refused before --out is
// made or anything written.
func TestPlotChecksBeforeWriting(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	fakeRun(t, run, "dyck", "rns", 0.01, 1, 0.1, true, true)
	out := filepath.Join(dir, "figures")
	var stdout bytes.Buffer
	err := runPlot([]string{"--out", out, "--actions", t.TempDir(), run}, &stdout, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "--actions") {
		t.Errorf("error %v, want one naming --actions", err)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("--out was made")
	}
	if err := runPlot([]string{"--out", out, run}, &stdout, &bytes.Buffer{}); err != nil {
		t.Errorf("the same run without --actions: %v", err)
	}
}

func TestCorrectAction(t *testing.T) {
	// 0 1 # 1 0: updates t = 1 … 4; # is symbol 3.
	got := []int{correctAction(1, 3), correctAction(2, 3), correctAction(3, 3), correctAction(4, 3)}
	// Update 3 (on #) pops the 1 that predicted the symbol after #, so that
	// the 0 is on top for the prediction after that.
	want := []int{actPush, actPush, actPop, actPop}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("t=%d: %d, want %d", i+1, got[i], want[i])
		}
	}
}

// TestPlotFigures draws Figures 1–3 of a fake sweep of two tasks: one file
// per task and one figure with a panel per task for Figures 1 and 2, at
// least 1,200 pixels wide, titled with the tasks' names, Figure 1 against
// epochs unless --time asks for seconds.
func TestPlotFigures(t *testing.T) {
	root := t.TempDir()
	tasks := []string{data.MarkedReversal, data.Dyck}
	for _, task := range tasks {
		for i, kind := range []string{"lstm", "rns"} {
			fakeRun(t, filepath.Join(root, task, kind), task, kind, 0.01, 1, 0.1*float64(i+1), true, true)
		}
	}
	var stderr bytes.Buffer
	if err := runSelect([]string{"--sweep", root, "--test-lengths", "4:9", "--per-length", "1"}, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	writeFakeActions(t, filepath.Join(root, "actions"), []string{"ns+s", "rns"}, 30)
	figs := t.TempDir()
	var stdout bytes.Buffer
	if err := runPlot([]string{"--sweep", root, "--out", figs}, &stdout, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	names := []string{fig1AllName, fig2AllName, fig3Name}
	for _, task := range tasks {
		names = append(names, fig1Name(task), fig2Name(task))
	}
	for _, name := range names {
		for _, ext := range []string{".png", ".svg"} {
			if !strings.Contains(stdout.String(), filepath.Join(figs, name+ext)+"\n") {
				t.Errorf("output does not list %s%s", name, ext)
			}
		}
		f, err := os.Open(filepath.Join(figs, name+".png"))
		if err != nil {
			t.Error(err)
			continue
		}
		cfg, err := png.DecodeConfig(f)
		f.Close()
		if err != nil || cfg.Width < 1200 {
			t.Errorf("%s.png: %d pixels wide (%v), want at least 1200", name, cfg.Width, err)
		}
	}
	svg := func(name string) string {
		b, err := os.ReadFile(filepath.Join(figs, name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	all := svg(fig1AllName)
	for _, want := range []string{">Marked reversal<", ">Dyck<", ">epoch<", ">LSTM<", ">NS+S+U (RNS)<"} {
		if !strings.Contains(all, want) {
			t.Errorf("%s.svg lacks %q", fig1AllName, want)
		}
	}
	if one := svg(fig1Name(data.MarkedReversal)); !strings.Contains(one, ">Marked reversal: ") || strings.Contains(one, "marked-reversal") || strings.Contains(one, "training time") {
		t.Errorf("%s.svg: wrong title or axis", fig1Name(data.MarkedReversal))
	}
	// The numbers drawn, in the CSV files beside the figures: Figure 1's
	// from the runs' logs (fakeRun's epoch e at diff + 0.1/e), Figure 2's
	// from the test results that select wrote.
	rows := readCSVFile(t, filepath.Join(figs, fig1AllName+".csv"))
	want := [][]string{{"task", "model", "run", "label", "in_progress", "epoch", "valid_difference"}}
	for _, task := range tasks {
		for i, kind := range []string{"lstm", "rns"} {
			for e := 1; e <= 3; e++ {
				want = append(want, []string{task, kind, filepath.Join(root, task, kind), "", "false", strconv.Itoa(e),
					strconv.FormatFloat(0.1*float64(i+1)+0.1/float64(e), 'g', -1, 64)})
			}
		}
	}
	if !slices.EqualFunc(rows, want, slices.Equal[[]string]) {
		t.Errorf("%s.csv:\n got %q\nwant %q", fig1AllName, rows, want)
	}
	rows = readCSVFile(t, filepath.Join(figs, fig2AllName+".csv"))
	want = [][]string{{"task", "model", "run", "label", "in_progress", "length", "test_difference"}}
	for _, task := range tasks {
		for _, kind := range []string{"lstm", "rns"} {
			var rep protocol.Report
			b, err := os.ReadFile(protocol.TestResultPath(root, task, "", kind))
			if err != nil || json.Unmarshal(b, &rep) != nil || len(rep.ByLength) == 0 {
				t.Fatalf("test results of %s %s: %v", task, kind, err)
			}
			for _, r := range rep.ByLength {
				want = append(want, []string{task, kind, filepath.Join(root, task, kind), "", "false", strconv.Itoa(r.Length), strconv.FormatFloat(r.Difference, 'g', -1, 64)})
			}
		}
	}
	if !slices.EqualFunc(rows, want, slices.Equal[[]string]) {
		t.Errorf("%s.csv:\n got %q\nwant %q", fig2AllName, rows, want)
	}
	if err := runPlot([]string{"--sweep", root, "--out", figs, "--time"}, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatal(err)
	}
	if rows := readCSVFile(t, filepath.Join(figs, fig1AllName+".csv")); rows[0][5] != "seconds" || rows[1][5] != "1.5" {
		t.Errorf("--time: %s.csv starts %q, want seconds 1.5 (fakeRun's epoch 1)", fig1AllName, rows[:2])
	}
	if !strings.Contains(svg(fig1AllName), ">training time (s)<") {
		t.Error("--time does not plot against seconds")
	}
}

// TestPlotStyles checks that the figures take each kind's label, colour
// and dashes from its style (protocol.KindStyle).
func TestPlotStyles(t *testing.T) {
	for _, k := range nsrnn.AllKinds() {
		c, dashes := modelStyle(k.Name)
		st := protocol.KindStyle(k.Name)
		if modelLabel(k.Name) != st.Label || c != color.Color(st.Color) || (len(dashes) > 0) != st.Dashed {
			t.Errorf("%s: label %q, colour %v, dashes %v; the style says %q, %v, dashed %v", k.Name, modelLabel(k.Name), c, dashes, st.Label, st.Color, st.Dashed)
		}
	}
}

// TestEpochTicks checks that Figure 3's epoch axis labels every epoch up
// to 20, and every other one beyond.
func TestEpochTicks(t *testing.T) {
	labels := func(n int) int {
		c := 0
		for _, tk := range epochTicks(n).Ticks(1, float64(n)) {
			if tk.Label != "" {
				c++
			}
		}
		return c
	}
	if labels(12) != 12 || labels(30) != 15 {
		t.Errorf("%d labels of 12 epochs, %d of 30", labels(12), labels(30))
	}
}

// TestPlainTicks checks that the figures' tick labels are the default
// ticks' values without trailing zeros, over ranges whose default labels
// have them (a step of 25 is labelled 25.00, 75.00).
func TestPlainTicks(t *testing.T) {
	for _, r := range [][2]float64{{1, 138}, {0, 0.4}, {0, 0.15}, {40, 100}, {0, 1e-3}, {-0.5, 0.5}} {
		def := plot.DefaultTicks{}.Ticks(r[0], r[1])
		got := figure.PlainTicks{}.Ticks(r[0], r[1])
		if len(got) != len(def) {
			t.Fatalf("%v: %d ticks, want %d", r, len(got), len(def))
		}
		for i, tk := range got {
			if tk.Value != def[i].Value || (tk.Label == "") != (def[i].Label == "") {
				t.Errorf("%v: tick %d is %+v, default %+v", r, i, tk, def[i])
			}
			if tk.Label == "" {
				continue
			}
			if v, err := strconv.ParseFloat(tk.Label, 64); err != nil || math.Abs(v-tk.Value) > 1e-9*max(1, math.Abs(tk.Value)) {
				t.Errorf("%v: label %q of tick %v", r, tk.Label, tk.Value)
			}
			if strings.Contains(tk.Label, ".") && strings.HasSuffix(tk.Label, "0") || strings.HasSuffix(tk.Label, ".") {
				t.Errorf("%v: label %q has trailing zeros", r, tk.Label)
			}
		}
	}
	l := figure.PlainTicks{}.Ticks(1, 138)
	if !slices.ContainsFunc(l, func(tk plot.Tick) bool { return tk.Label == "25" }) {
		t.Errorf("ticks of [1, 138]: %+v, want one labelled 25", l)
	}
}

// TestPlotUnfinished: with --unfinished, Figure 1 shows a model whose only
// runs are unfinished (the one closest to the bound, labelled "in
// progress"), even on a task without any finished run; without it, it
// does not.
func TestPlotUnfinished(t *testing.T) {
	root := t.TempDir()
	fakeRun(t, filepath.Join(root, data.MarkedReversal, "lstm"), data.MarkedReversal, "lstm", 0.01, 1, 0.2, true, true)
	fakeRun(t, filepath.Join(root, data.MarkedReversal, "rns", "a"), data.MarkedReversal, "rns", 0.01, 1, 0.3, false, true)
	fakeRun(t, filepath.Join(root, data.MarkedReversal, "rns", "b"), data.MarkedReversal, "rns", 0.01, 2, 0.05, false, true)
	fakeRun(t, filepath.Join(root, data.Dyck, "rns"), data.Dyck, "rns", 0.01, 1, 0.01, false, true)
	var stderr bytes.Buffer
	if err := runSelect([]string{"--sweep", root, "--no-test"}, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	svg := func(dir, name string) string {
		b, err := os.ReadFile(filepath.Join(dir, name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	without, with := t.TempDir(), t.TempDir()
	if err := runPlot([]string{"--sweep", root, "--out", without}, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatal(err)
	}
	if s := svg(without, fig1Name(data.MarkedReversal)); strings.Contains(s, "in progress") || strings.Contains(s, ">NS+S+U (RNS)") {
		t.Error("without --unfinished, Figure 1 shows the unfinished RNS run")
	}
	if _, err := os.Stat(filepath.Join(without, fig1Name(data.Dyck)+".svg")); err == nil {
		t.Error("without --unfinished, Figure 1 has a Dyck panel, which has no finished run")
	}
	if err := runPlot([]string{"--sweep", root, "--out", with, "--unfinished"}, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatal(err)
	}
	s := svg(with, fig1Name(data.MarkedReversal))
	if !strings.Contains(s, ">NS+S+U (RNS) (in progress)<") || !strings.Contains(s, ">LSTM<") {
		t.Error("with --unfinished, the marked-reversal panel lacks the in-progress RNS curve or the LSTM")
	}
	if s := svg(with, fig1Name(data.Dyck)); !strings.Contains(s, "(in progress)") {
		t.Error("with --unfinished, there is no Dyck panel with its in-progress run")
	}
	runs, err := protocol.FindUnfinished(root, mustSelection(t, root))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, r := range runs {
		got[r.Settings.Task+"/"+r.Settings.Model.Kind] = r.Log[len(r.Log)-1].ValidDifference
	}
	// fakeRun's last epoch is at diff + 0.1/3: run b (0.05) beats run a.
	if len(runs) != 2 || math.Abs(got["marked-reversal/rns"]-(0.05+0.1/3)) > 1e-12 || got["dyck/rns"] == 0 {
		t.Errorf("unfinished runs %v: want marked-reversal's run b (closest to the bound) and Dyck's run", got)
	}
}

func mustSelection(t *testing.T, root string) *protocol.Selection {
	t.Helper()
	sel, err := protocol.ReadSelection(root)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

// pngSize is the width and height of a PNG file.
func pngSize(t *testing.T, path string) (int, int) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return cfg.Width, cfg.Height
}

// TestPlotRunDirectories plots Figure 1 of run directories named on the
// command line, one run or several, and of a directory of runs, without
// selected.json.
func TestPlotRunDirectories(t *testing.T) {
	root := t.TempDir()
	mr := data.MarkedReversal
	lstm := filepath.Join(root, "lstm")
	rns1 := filepath.Join(root, "rns", "seed1")
	rns2 := filepath.Join(root, "rns", "seed2")
	fakeRun(t, lstm, mr, "lstm", 0.01, 1, 0.2, true, true)
	fakeRun(t, rns1, mr, "rns", 0.01, 1, 0.1, false, true) // unfinished
	fakeRun(t, rns2, mr, "rns", 0.01, 2, 0.05, true, true)

	// One run.
	one := t.TempDir()
	var stdout, stderr bytes.Buffer
	if err := runPlot([]string{"--out", one, lstm}, &stdout, &stderr); err != nil {
		t.Fatalf("cfl plot --out F RUN: %v\n%s", err, stderr.String())
	}
	for _, name := range []string{fig1Name(mr), fig1AllName} {
		if !strings.Contains(stdout.String(), filepath.Join(one, name+".png")+"\n") {
			t.Errorf("output does not list %s.png:\n%s", name, stdout.String())
		}
	}
	b, err := os.ReadFile(filepath.Join(one, fig1Name(mr)+".svg"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), ">LSTM<") {
		t.Error("the figure of one LSTM run has no LSTM legend entry")
	}

	// A list of runs, and a directory of runs: runs of one kind are told
	// apart by their directories; the unfinished one is marked.
	for _, args := range [][]string{{lstm, rns1, rns2}, {root}} {
		out := t.TempDir()
		stdout.Reset()
		if err := runPlot(append([]string{"--out", out}, args...), &stdout, &stderr); err != nil {
			t.Fatalf("cfl plot %q: %v\n%s", args, err, stderr.String())
		}
		b, err := os.ReadFile(filepath.Join(out, fig1Name(mr)+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		s := string(b)
		for _, want := range []string{">LSTM<", ">NS+S+U (RNS) " + rns1 + " (in progress)<", ">NS+S+U (RNS) " + rns2 + "<"} {
			if !strings.Contains(s, want) {
				t.Errorf("cfl plot %q: figure lacks the legend entry %q", args, want)
			}
		}
		// The two RNS runs are drawn in two styles (the second dashed),
		// in the panel and in the legend.
		if n := strings.Count(s, "stroke-dasharray"); n != 2 {
			t.Errorf("cfl plot %q: %d dashed lines; want the second RNS run's and its legend entry's", args, n)
		}
	}

	// Errors: a directory without runs, and --sweep with run directories.
	if err := runPlot([]string{"--out", t.TempDir(), t.TempDir()}, &stdout, &stderr); err == nil || !strings.Contains(err.Error(), "no run.json") {
		t.Errorf("a directory without runs: error %v, want one saying it holds no run.json", err)
	}
	if err := runPlot([]string{"--out", t.TempDir(), "--sweep", root, lstm}, &stdout, &stderr); err == nil {
		t.Error("no error for --sweep with run directories")
	}
}

// TestPlotOneTaskCanvas checks that the figure of a single task is sized
// to its panel: no empty cell beside it for the legend.
func TestPlotOneTaskCanvas(t *testing.T) {
	for _, tc := range []struct{ n, rows, cols int }{{1, 1, 1}, {2, 1, 2}, {3, 1, 3}, {4, 2, 3}, {5, 2, 3}, {6, 2, 3}} {
		rows, cols, cell := panelGrid(tc.n)
		if rows != tc.rows || cols != tc.cols || cell != (tc.n%3 != 0 && tc.n > 3) {
			t.Errorf("panelGrid(%d) = %d, %d, %v; want %d rows, %d columns, legend cell %v", tc.n, rows, cols, cell, tc.rows, tc.cols, tc.n%3 != 0 && tc.n > 3)
		}
	}
	mr := data.MarkedReversal
	root := selectedSweep(t, "lstm", "rns")
	var stderr bytes.Buffer
	figs := t.TempDir()
	if err := runPlot([]string{"--sweep", root, "--out", figs}, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	// The composite figures have one panel of 4.5 × 3.5 inches (324 ×
	// 252 points), the per-task ones a plot of 6 × 4 inches (432 × 288):
	// the legend lies in a column right of it, covering no line.
	for _, f := range []struct {
		name   string
		plotW  float64 // points
		single bool
	}{{fig1AllName, 324, false}, {fig2AllName, 324, false}, {fig1Name(mr), 432, true}, {fig2Name(mr), 432, true}} {
		w, h := pngSize(t, filepath.Join(figs, f.name+".png"))
		// A legend cell as wide as a panel beside the composite's
		// one panel would make it 2.3:1 or wider; the legend's column
		// is less than half a panel.
		if r := float64(w) / float64(h); !f.single && r > 2 {
			t.Errorf("%s.png of one task is %d × %d pixels (%.2f:1): wider than its one panel and a legend column", f.name, w, h, r)
		}
		b, err := os.ReadFile(filepath.Join(figs, f.name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		for _, label := range []string{"LSTM", "NS+S+U (RNS)"} {
			m := regexp.MustCompile(`<text x="([0-9.]+)"[^>]*>` + regexp.QuoteMeta(label) + `</text>`).FindSubmatch(b)
			if m == nil {
				t.Errorf("%s.svg of one task lacks the legend entry %s", f.name, label)
				continue
			}
			if x, _ := strconv.ParseFloat(string(m[1]), 64); x <= f.plotW {
				t.Errorf("%s.svg: the legend entry %s is at x = %v points, within the plot (0 to %v)", f.name, label, x, f.plotW)
			}
		}
	}
}

// TestFitCaption checks that a caption wider than its figure is wrapped
// into lines that fit, and that one that fits keeps its one line.
func TestFitCaption(t *testing.T) {
	const caption = "Figure 1: cross-entropy difference on the validation set during training (best run of each model)"
	w := 4.5 * vg.Inch
	text, band := figure.FitCaption(caption, w)
	lines := strings.Split(text, "\n")
	if len(lines) < 2 || strings.Join(lines, " ") != caption {
		t.Errorf("caption wrapped into %q", lines)
	}
	for _, l := range lines {
		if lw := figure.CaptionStyle().Width(l); lw > w {
			t.Errorf("caption line %q is %v wide, more than the figure's %v", l, lw, w)
		}
	}
	one, oneBand := figure.FitCaption(caption, 20*vg.Inch)
	if one != caption || oneBand != vg.Points(24) || band <= oneBand {
		t.Errorf("figure.FitCaption: %q in %v on a wide figure, %v on a narrow one", one, oneBand, band)
	}
}

// readCSVFile reads a CSV file's rows.
func readCSVFile(t *testing.T, path string) [][]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return rows
}

// TestPlotActionsSeeds draws Figure 3 from two actions directories (one row
// each), checks the panels' titles (seed, and the first epoch within 0.05
// of the bound), and refuses directories with different models.
func TestPlotActionsSeeds(t *testing.T) {
	root, out := t.TempDir(), t.TempDir()
	diffs := map[string][]float64{"ns+s": {0.3, 0.04, 0.01}, "rns": {0.3, 0.2, 0.1}}
	for seed := 1; seed <= 2; seed++ {
		dir := filepath.Join(root, fmt.Sprintf("seed%d", seed))
		writeFakeActions(t, dir, []string{"ns+s", "rns"}, 3)
		for m, ds := range diffs {
			var as actionsSettings
			as.Run.Seed = uint64(seed)
			if err := protocol.WriteJSON(filepath.Join(dir, m, actionsSettingsFile), as); err != nil {
				t.Fatal(err)
			}
			var b []byte
			for i, d := range ds {
				line, _ := json.Marshal(nsrnn.EpochRecord{Epoch: i + 1, ValidDifference: d})
				b = append(append(b, line...), '\n')
			}
			if err := os.WriteFile(filepath.Join(dir, m, protocol.LogFile), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, c := range []struct {
		kind     string
		withSeed bool
		epochs   int
		want     string
	}{
		{"ns+s", true, 3, modelLabel("ns+s") + ", seed 2: within 0.05 at epoch 2"},
		{"ns+s", false, 1, modelLabel("ns+s") + ": not within 0.05 in 1 epochs"},
		{"rns", true, 3, modelLabel("rns") + ", seed 2: not within 0.05 in 3 epochs"},
	} {
		got, err := actionTitle(filepath.Join(root, "seed2", c.kind), c.kind, c.withSeed, c.epochs)
		if err != nil || got != c.want {
			t.Errorf("actionTitle(%s, seed %v, %d epochs) = %q, %v; want %q", c.kind, c.withSeed, c.epochs, got, err, c.want)
		}
	}
	var stdout bytes.Buffer
	dirs := filepath.Join(root, "seed1") + "," + filepath.Join(root, "seed2")
	if err := runPlot([]string{"--actions", dirs, "--out", out}, &stdout, &bytes.Buffer{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), fig3Name+".svg") {
		t.Errorf("output %q does not list the figure", stdout.String())
	}
	if err := runPlot([]string{"--actions", dirs + ",", "--out", out}, &stdout, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("a list ending in a comma: error %v, want one about an empty directory", err)
	}
	other := filepath.Join(root, "other")
	writeFakeActions(t, other, []string{"rns"}, 3)
	err := runPlot([]string{"--actions", dirs + "," + other, "--out", out}, &stdout, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), other) {
		t.Errorf("directories with other models: error %v, want one naming %s", err, other)
	}
}

// TestPlotLengthConditioned draws Figure 2 of one selection both ways: with
// --length-conditioned, each length's difference is the default one plus
// log K/(n+1), K the number of test lengths (5, 7 and 9 of marked reversal
// in 4–9), and the figure says so; the flag needs --sweep.
func TestPlotLengthConditioned(t *testing.T) {
	mr := data.MarkedReversal
	root := selectedSweep(t, "lstm", "rns")
	var stderr bytes.Buffer
	read := func(dir, col string) map[[2]string]float64 {
		t.Helper()
		rows := readCSVFile(t, filepath.Join(dir, fig2AllName+".csv"))
		if got := rows[0][len(rows[0])-1]; got != col {
			t.Fatalf("%s: last column %q, want %q", dir, got, col)
		}
		out := map[[2]string]float64{}
		for _, r := range rows[1:] {
			y, err := strconv.ParseFloat(r[6], 64)
			if err != nil {
				t.Fatal(err)
			}
			out[[2]string{r[1], r[5]}] = y
		}
		return out
	}
	plain, conditioned := t.TempDir(), t.TempDir()
	if err := runPlot([]string{"--sweep", root, "--out", plain}, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if err := runPlot([]string{"--sweep", root, "--out", conditioned, "--length-conditioned"}, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	p, c := read(plain, "test_difference"), read(conditioned, "test_difference_given_length")
	if len(p) != 6 || len(c) != 6 {
		t.Fatalf("%d and %d points, want 2 models × 3 lengths", len(p), len(c))
	}
	for k, y := range p {
		n, _ := strconv.Atoi(k[1])
		if want := y + math.Log(3)/float64(n+1); math.Abs(c[k]-want) > 1e-12 {
			t.Errorf("%s at length %d: %v, want %v + log 3/%d = %v", k[0], n, c[k], y, n+1, want)
		}
	}
	b, err := os.ReadFile(filepath.Join(conditioned, fig2AllName+".svg"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "given the length") {
		t.Error("the length-conditioned Figure 2 does not say so in its caption")
	}
	if err := runPlot([]string{"--out", t.TempDir(), "--length-conditioned", filepath.Join(root, mr, "lstm")}, &bytes.Buffer{}, &stderr); err == nil || !strings.Contains(err.Error(), "--length-conditioned") {
		t.Errorf("--length-conditioned with run directories: error %v, want one naming the flag", err)
	}
}

// TestPlotReference draws a selection's figures with reference curves:
// each is drawn dotted in its model's colour in the panel of its figure
// and task, named once in the legend, and left out of the figures' CSV
// files; bad files and flags are refused naming the file, line or flag.
func TestPlotReference(t *testing.T) {
	mr := data.MarkedReversal
	root := selectedSweep(t, "lstm")
	var stderr bytes.Buffer
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ref := write("ref.csv", "figure,task,model,x,y\nfig2,marked-reversal,rns,5,0.25\nfig2,marked-reversal,rns,7,0.125\nfig2,marked-reversal,rns,9,0.375\nfig1,dyck,lstm,1,0.5\n")
	figs := t.TempDir()
	stderr.Reset()
	if err := runPlot([]string{"--sweep", root, "--out", figs, "--reference", ref, "--reference-label", "the paper"}, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	// The selection has no Dyck panel: that curve is not drawn, and the
	// plot says so.
	if !strings.Contains(stderr.String(), "fig1 dyck") {
		t.Errorf("no warning for the reference's Dyck curve, which no panel draws:\n%s", stderr.String())
	}
	svg, err := os.ReadFile(filepath.Join(figs, fig2Name(mr)+".svg"))
	if err != nil {
		t.Fatal(err)
	}
	// The reference's one curve: its three points, dotted, in RNS's
	// colour; and the legend's one entry for the reference.
	rns, _ := modelStyle(nsrnn.RNS)
	r, g, b, _ := rns.RGBA()
	colour := fmt.Sprintf("stroke:#%02X%02X%02X", r>>8, g>>8, b>>8)
	dotted := regexp.MustCompile(`<path d="M[^"]*L[^"]*L[^"]*" style="fill:none;` + colour + `;stroke-width:1.75;stroke-dasharray:1.5,2`)
	if !dotted.Match(svg) {
		t.Errorf("%s.svg lacks the dotted reference curve in %s", fig2Name(mr), colour)
	}
	if n := strings.Count(string(svg), ">dotted: the paper<"); n != 1 {
		t.Errorf("%s.svg names the reference %d times in its legend, want once", fig2Name(mr), n)
	}
	// RNS has no run in the selection: the legend names its colour as
	// the reference's.
	if !strings.Contains(string(svg), ">NS+S+U (RNS) (the paper only)<") || !strings.Contains(string(svg), ">LSTM<") {
		t.Errorf("%s.svg does not name both colours, LSTM and the reference's RNS", fig2Name(mr))
	}
	csvText, err := os.ReadFile(filepath.Join(figs, fig2AllName+".csv"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(csvText), "rns") {
		t.Errorf("the reference's points are in %s.csv:\n%s", fig2AllName, csvText)
	}

	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--reference", write("header.csv", "figure,task,model,x\nfig2,dyck,lstm,5\n")}, "header.csv:1"},
		{[]string{"--reference", write("figure.csv", "figure,task,model,x,y\nfig3,dyck,lstm,5,1\n")}, "figure.csv:2"},
		{[]string{"--reference", write("model.csv", "figure,task,model,x,y\nfig2,dyck,lstm,5,1\nfig2,dyck,tree,5,1\n")}, "model.csv:3"},
		{[]string{"--reference", write("nan.csv", "figure,task,model,x,y\nfig2,dyck,lstm,5,NaN\n")}, "nan.csv:2"},
		{[]string{"--reference", write("empty.csv", "figure,task,model,x,y\n")}, "no curves"},
		{[]string{"--reference", filepath.Join(dir, "absent.csv")}, "absent.csv"},
		{[]string{"--reference", os.DevNull}, "no curves"},
		{[]string{"--reference", ref, "--time"}, "--time"},
		{[]string{"--reference-label", "x"}, "--reference"},
		{[]string{"--reference", ref, "--reference-label", " "}, "--reference-label"},
	} {
		err := runPlot(append([]string{"--sweep", root, "--out", t.TempDir()}, c.args...), &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("plot %q: error %v, want one naming %q", c.args, err, c.want)
		}
	}
	if err := runPlot([]string{"--out", t.TempDir(), "--reference", ref, filepath.Join(root, mr, "lstm")}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), "--sweep") {
		t.Errorf("--reference with run directories: error %v, want one naming --sweep", err)
	}
}

// selectedSweep makes a sweep of finished marked-reversal runs of the
// given kinds, with a model each, selects and tests them (lengths 4–9,
// one string per length), and returns its directory.
func selectedSweep(t *testing.T, kinds ...string) string {
	t.Helper()
	root := t.TempDir()
	mr := data.MarkedReversal
	for i, kind := range kinds {
		fakeRun(t, filepath.Join(root, mr, kind), mr, kind, 0.01, 1, 0.2-0.1*float64(i)/float64(len(kinds)), true, true)
	}
	var stderr bytes.Buffer
	if err := runSelect([]string{"--sweep", root, "--test-lengths", "4:9", "--per-length", "1"}, &bytes.Buffer{}, &stderr); err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	return root
}
