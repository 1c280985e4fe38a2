package protocol

import (
	"github.com/nsrnn/nsrnn/data"
	"github.com/nsrnn/nsrnn/nsrnn"
)

// TaskTitle is the task's name as the paper (or the 2023 release)
// writes it, for figures and tables ("Marked reversal" for
// "marked-reversal"): its data.TaskInfo.Title. A name that is not in the
// task table is returned as it is.
func TaskTitle(task string) string {
	if info, err := data.LookupTask(task); err == nil {
		return info.Title
	}
	return task
}

// PaperModels are the model kinds that the paper's formal-language
// experiment (§4) compares, in its order: the grid of a sweep and the
// curves of Figures 1 and 2. Kinds added to the library since (see
// nsrnn.AllKinds) are not in it.
var PaperModels = []string{nsrnn.LSTM, nsrnn.Gref, nsrnn.JM, nsrnn.NS, nsrnn.NSS, nsrnn.NSU, nsrnn.RNS}
