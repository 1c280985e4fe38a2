#!/bin/sh
# The CFL runs that put the paper's comparisons on its own footing
# (issue "the paper's tables like for like", item 4), one core, in the
# background, resumable (run it again after an interruption: finished runs
# are skipped, interrupted ones resume from their checkpoints):
#
#   1. unmarked reversal to the paper's protocol: RNS, |Q| = 2, |Γ| = 3,
#      the released grammar, learning rates 0.01, 0.005, 0.001, 0.0005 ×
#      5 restarts (20 runs);
#   2. the ablation on more than one run: NS, NS+S and NS+U on unmarked
#      reversal, padded reversal and the hardest CFL at lr 0.005 (the
#      setting of their committed first runs), seeds 2 and 3.
#
#   CFL=BINARY sh results/cfl/protocol-runs.sh [--dry-run]
#
# BINARY is `go build -o BINARY ./experiments/cfl`. The runs go to
# /work/runs/cfl-ur-protocol and /work/runs/cfl-ablation; select them with
# cfl select, as results/cfl/README.md does for the others.
set -e
cfl=${CFL:?set CFL to the cfl binary}
dry=${1:-}
export GOMAXPROCS=1
run() {
	if [ "$dry" = --dry-run ]; then
		"$cfl" sweep "$@" --dry-run
	else
		"$cfl" sweep "$@"
	fi
}
run --task unmarked-reversal --grammar released --models rns --lrs 0.01,0.005,0.001,0.0005 --restarts 5 \
	--out /work/runs/cfl-ur-protocol --jobs 1
run --task unmarked-reversal,padded-reversal,hardest-cfl --models ns,ns+s,ns+u --lrs 0.005 --first-seed 2 --restarts 2 \
	--out /work/runs/cfl-ablation --jobs 1
