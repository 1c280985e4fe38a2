#!/bin/sh
# The CFL runs that put the paper's comparisons on its own footing
# (issue "the paper's tables like for like", item 4), one core each, in
# the background, resumable (run it again after an interruption: finished
# runs are skipped, interrupted ones resume from their checkpoints):
#
#   ur:       unmarked reversal to the paper's protocol: RNS, |Q| = 2,
#             |Γ| = 3, the released grammar, learning rates 0.01, 0.005,
#             0.001, 0.0005 × 5 restarts (20 runs);
#   ablation: the ablation on more than one run: NS, NS+S and NS+U on
#             unmarked reversal, padded reversal and the hardest CFL at lr
#             0.005 with the released grammar (the settings of their
#             committed first runs, results/cfl-compare), seeds 2 and 3,
#             each batch in two parts (--workers 2: on one core
#             about 1.25× faster than one part for these |Q| = 3 models;
#             results differ from one part's by rounding only);
#   all:      both, one after the other (the default).
#
#   CFL=BINARY sh results/cfl/protocol-runs.sh [ur|ablation|all] [--dry-run]
#
# JOBS=2 runs two runs of a part at once, one core each (default 1): for
# the ablation once the other core is free (stop its sweep with Ctrl-C or
# SIGINT first: a sweep directory takes one sweep at a time; its runs
# resume from their checkpoints).
#
# BINARY is `go build -o BINARY ./experiments/cfl`. The runs go to
# /work/runs/cfl-ur-protocol and /work/runs/cfl-ablation; select them with
# cfl select, as results/cfl/README.md does for the others.
set -e
cfl=${CFL:?set CFL to the cfl binary}
part=${1:-all}
dry=${2:-}
case $part in
ur | ablation | all) ;;
*)
	echo "protocol-runs.sh: part $part: want ur, ablation or all" >&2
	exit 2
	;;
esac
export GOMAXPROCS=1
run() {
	if [ "$dry" = --dry-run ]; then
		"$cfl" sweep "$@" --dry-run
	else
		"$cfl" sweep "$@"
	fi
}
if [ "$part" != ablation ]; then
	run --task unmarked-reversal --grammar released --models rns --lrs 0.01,0.005,0.001,0.0005 --restarts 5 \
		--out /work/runs/cfl-ur-protocol --jobs "${JOBS:-1}"
fi
if [ "$part" != ur ]; then
	run --task unmarked-reversal,padded-reversal,hardest-cfl --grammar released --models ns,ns+s,ns+u --lrs 0.005 \
		--first-seed 2 --restarts 2 --workers 2 --out /work/runs/cfl-ablation --jobs "${JOBS:-1}"
fi
