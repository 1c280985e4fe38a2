// Package protocol is the experimental protocol of DuSell & Chiang,
// "Learning Hierarchical Structures with Differentiable Nondeterministic
// Stacks" (ICLR 2022), as a library: the run directories that training
// writes, their settings, data, logs and summaries, evaluation by string
// length, and model selection over a sweep of runs. The programs
// experiments/cfl and examples/quickstart are built on it, and a notebook
// or another program can call the same functions and get values back:
//
//	sel, err := protocol.SelectBest("runs/sweep")           // best run per task and model
//	recs, err := protocol.ReadLog("runs/rns/log.jsonl")     // one record per epoch
//	rep, err := protocol.EvaluateByLength(m, task, strs, 40, 100, 10)
//
// (The package was named experiment until 2026-11-28, one letter from the
// programs' folder experiments; programs that imported it import
// github.com/nsrnn/nsrnn/protocol instead, with the same names, and the
// run directory's handling that the programs kept to themselves, OpenRunDir
// and RunState, is here now.)
//
// Only PrepareRun, PrepareDir, CheckWritable (a probe it removes),
// LockDir (a lock file), WriteJSON, Settings.SaveGrammarCopy (a run's
// copy of its grammar file), WritePanelsCSV (a figure's data) and
// UpdateRun (run.json) write files; errors are returned, never panics.
//
// # Run directories
//
// A training run lives in a directory holding RunFile (run.json, its
// settings), LogFile (log.jsonl, one nsrnn.EpochRecord per epoch),
// CheckpointFile (the training state after every epoch, and within one
// where the trainer asks for it, from which a killed run resumes exactly),
// ModelFile (the model with its best parameters) and, once finished,
// SummaryFile (summary.json, a Summary). PrepareRun creates
// a run directory, or checks that the run being resumed there was made with
// the same settings, listing the ones that differ (SettingsError), and that
// the directory is writable (CheckWritable), so that a run cannot fail for
// want of permission after its first epoch; PrepareDir does the same with
// another settings file, and CheckSettingsFile compares a settings file
// with settings (a sweep's, say) without writing anything. LockDir locks a
// run directory for one process (flock(2) on its LockFile), naming the
// holder to any other, and removes the temporary files of atomic writes
// that a killed process left there. Files are
// written atomically by WriteJSON, with mode 0666 less the umask.
//
// OpenRunDir is what a training command does with its directory, all of
// it: prepare it (PrepareDir), lock it, and at Close remove a new run that
// ended before its first checkpoint (with the ancestors made for it), so
// that the same directory can be used again; CheckResumable refuses a run
// that cannot be resumed (no checkpoint, not finished) before anything is
// written. RunState tells a new, interrupted or finished run apart, and
// RunProgress and RunStatus describe how far one has come from its log:
// what sweeps list and schedule.
//
// # Settings and seeds
//
// Settings are what determines a run of the formal-language protocol: the
// task, its parameters (data.Params, such as its number of symbol types;
// only those not at their defaults are saved, so a run.json written before
// tasks had parameters describes the same task) and its definition
// (data.Grammar; a run.json written before the definition could be chosen
// reads as "paper"), the model's configuration,
// the learning rate, the data sizes and lengths, and the schedule. One seed
// drives everything random, through DataSeed (the data), InitSeed (the
// initial parameters) and ShuffleSeed (the order of the batches), so that
// runs that differ only in their model see the same data. TrainConfig turns
// Settings into an nsrnn.TrainConfig.
//
// # Data
//
// SampleRun draws a run's training and validation batches (one length per
// batch, drawn uniformly from the task's valid lengths) and the validation
// set's lower bound: every program that trains on a task's data with the
// same seed gets the same strings. SampleTestSet draws a test set described
// by a TestSpec, a fixed number of strings of every valid length.
//
// # Logs and summaries
//
// ReadLog reads a training log, ReadSummary a finished run's summary,
// ReadSettings its settings, and NewSummary makes the summary of a
// training result. TaskTitle names a task as the paper does ("Marked
// reversal"), for figures and tables.
//
// # Evaluation by length
//
// EvaluateByLength scores a model on a set of strings and reports, for
// every length and overall, its cross-entropy, the true distribution's
// (the lower bound) and their difference, in nats per symbol: the paper's
// measure, 0 being perfect. Report.WriteCSV writes a report as CSV.
//
// The true distribution gives every valid length of the evaluated range
// the same probability (1/K, K the number of valid lengths in it), so a
// difference can fall slightly below 0 on a test set whose range is wider
// than the training range: at a length inside the training range, a model
// that has learned 1/K_train of the training lengths gains log(K/K_train)
// nats on every string (about 0.4 for the paper's test lengths 40–100
// against 40–80, 0.0065 per symbol at length 60), and it pays for the
// lengths it never saw. Averaged over the training range itself the
// difference is never negative in expectation.
//
// The paper's Figure 2 (and the authors' released code) measures each
// length instead against the strings' distribution given their length,
// −log p(w | n), whose bound is log K/(n+1) nats per symbol lower at
// length n, so its differences are that much higher (about 0.05 at the
// paper's lengths). LengthConditioned converts the test curves of a
// figure to that measure (cfl plot --length-conditioned), and
// LengthResult.DifferenceGivenLength a result (the last column of the
// CSV of Report.WriteCSV and cfl eval --csv; in its "all" row the
// symbol-weighted mean over the lengths). The paper's overall test
// differences and its validation differences are measured against
// p(w), with the 1/K, as Difference is.
//
// # Model selection
//
// FindRuns lists the runs under a directory, finished or not; SelectRuns
// picks, for every task, task definition and model kind, the finished run
// with the lowest validation cross-entropy difference, and SelectBest does
// both. Selection.Evaluate then evaluates the selected models on a common
// test set (each run's task under its own definition), one model at a
// time, releasing each (its compiled graphs included) before loading the
// next, so that memory stays bounded by one model however many are
// selected. ReadSelection reads the selection that cfl select saved, and
// TestResultPath names the file of a model's test report. Runs of the
// same protocol kept in several directories (a later sweep of more
// learning rates or restarts) are selected together by passing the runs
// FindRuns finds in each to one SelectRuns.
//
// A test report records the run it was made of and its test set
// (Report.Run, Report.Test), so a selection made again, after more runs
// have finished, evaluates only what is new: with TestOptions.Reuse,
// Evaluate takes a selected run's earlier report from the directories
// given when it is of the same run (by the run's own files, wherever its
// directory is now) and the same test set. The model file is then not
// needed, so the small files of a sweep copied elsewhere (run.json,
// log.jsonl, summary.json, selected.json and the test reports) are enough
// to select again over them and newer runs.
//
// # Figures
//
// The data of the paper's Figures 1 and 2 is found and read here, and
// drawn elsewhere (cfl plot): SelectionData gives, per task, a Panel of
// Curves, each a model's points: the validation difference by epoch (or
// by elapsed seconds) from a selected run's log, and the test difference
// by length from its test results; FindUnfinished adds, for a task and
// model without a finished run, its unfinished run closest to the bound
// so far; RunsData reads the curves of run directories without a
// selection. WritePanelsCSV writes a figure's points as CSV, one row per
// point, for other tools.
package protocol
