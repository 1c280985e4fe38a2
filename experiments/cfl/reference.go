package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/plot/plotter"

	"github.com/nsrnn/nsrnn/internal/readlimit"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// referenceHeader is the header of a file of reference curves (plot
// --reference).
var referenceHeader = []string{"figure", "task", "model", "x", "y"}

// referenceKey names the panel a reference curve belongs to: the figure
// (fig1 or fig2) and the task.
type referenceKey struct{ figure, task string }

// maxReferenceBytes bounds a file of reference curves (a figure's points:
// the paper's are 42 KB).
const maxReferenceBytes = 64 << 20

// readReference reads a file of reference curves: CSV with the header
// figure,task,model,x,y and one point per row, figure fig1 (x an epoch,
// y a validation difference) or fig2 (x a length, y a test difference),
// task as the selection names it (the task's --task name), model a kind
// name, the points of a curve in order. It returns the curves by panel,
// one series per model, each marked as a reference. Errors name the file
// and line; a file over maxReferenceBytes is refused.
func readReference(path string) (map[referenceKey][]series, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("--reference: %w", err)
	}
	defer f.Close()
	r := csv.NewReader(readlimit.Reader(f, path, maxReferenceBytes))
	r.FieldsPerRecord = -1 // counted below, naming the line
	out := map[referenceKey][]series{}
	for first := true; ; first = false {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if errors.Is(err, readlimit.ErrTooLarge) {
			return nil, fmt.Errorf("--reference: %w", err) // it names the file
		}
		if err != nil {
			return nil, fmt.Errorf("--reference: %s: %w", path, err)
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(referenceHeader) {
			return nil, fmt.Errorf("--reference: %s:%d: %d fields, want %d (%s)", path, line, len(rec), len(referenceHeader), strings.Join(referenceHeader, ","))
		}
		if first {
			if !slices.Equal(rec, referenceHeader) {
				return nil, fmt.Errorf("--reference: %s:%d: header %q, want %q", path, line, rec, referenceHeader)
			}
			continue
		}
		fig, task, model := rec[0], rec[1], rec[2]
		switch {
		case fig != "fig1" && fig != "fig2":
			return nil, fmt.Errorf("--reference: %s:%d: figure %q: want fig1 or fig2", path, line, fig)
		case task == "":
			return nil, fmt.Errorf("--reference: %s:%d: no task", path, line)
		case !slices.Contains(nsrnn.KindNames(), model):
			return nil, fmt.Errorf("--reference: %s:%d: unknown model %q", path, line, model)
		}
		x, errX := strconv.ParseFloat(rec[3], 64)
		y, errY := strconv.ParseFloat(rec[4], 64)
		if err := errors.Join(errX, errY); err != nil || math.IsInf(x, 0) || math.IsNaN(x) || math.IsInf(y, 0) || math.IsNaN(y) {
			return nil, fmt.Errorf("--reference: %s:%d: x %q, y %q: want finite numbers", path, line, rec[3], rec[4])
		}
		k := referenceKey{fig, task}
		i := slices.IndexFunc(out[k], func(s series) bool { return s.kind == model })
		if i < 0 {
			out[k] = append(out[k], series{kind: model, reference: true})
			i = len(out[k]) - 1
		}
		out[k][i].xys = append(out[k][i].xys, plotter.XY{X: x, Y: y})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("--reference: %s: no curves", path)
	}
	return out, nil
}

// addReference adds to each panel of figure fig the reference curves of
// its task, after its own lines, and marks their key in used.
func addReference(panels []panel, fig string, ref map[referenceKey][]series, used map[referenceKey]bool) {
	for i := range panels {
		k := referenceKey{fig, panels[i].task}
		if ss, ok := ref[k]; ok {
			panels[i].lines = append(panels[i].lines, ss...)
			used[k] = true
		}
	}
}

// unusedReference lists, sorted, the reference curves' figures and tasks
// that no panel drew, as "fig2 dyck".
func unusedReference(ref map[referenceKey][]series, used map[referenceKey]bool) []string {
	var out []string
	for k := range ref {
		if !used[k] {
			out = append(out, k.figure+" "+k.task)
		}
	}
	slices.Sort(out)
	return out
}
