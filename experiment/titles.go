package experiment

import (
	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// taskTitles are the paper's names of the tasks.
var taskTitles = map[string]string{
	data.MarkedReversal:   "Marked reversal",
	data.UnmarkedReversal: "Unmarked reversal",
	data.PaddedReversal:   "Padded reversal",
	data.Dyck:             "Dyck",
	data.HardestCFL:       "Hardest CFL",
}

// TaskTitle is the task's name as the paper writes it, for figures and
// tables ("Marked reversal" for "marked-reversal"); a name it does not
// know is returned as it is.
func TaskTitle(task string) string {
	if t, ok := taskTitles[task]; ok {
		return t
	}
	return task
}

// PaperModels are the model kinds that the paper's formal-language
// experiment (§4) compares, in its order: the grid of a sweep and the
// curves of Figures 1 and 2. Kinds added to the library since (see
// nsrnn.AllKinds) are not in it.
var PaperModels = []string{nsrnn.LSTM, nsrnn.Gref, nsrnn.JM, nsrnn.NS, nsrnn.NSS, nsrnn.NSU, nsrnn.RNS}
