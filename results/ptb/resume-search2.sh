#!/bin/sh
# Continues the JM-247 and RNS 3-4 search of results/ptb/search2 from its
# committed logs: draws 1-10 of each model (the paper's 10), two epochs
# each, one core, in the background.
#
#   DATA=DIR PTB=BINARY sh results/ptb/resume-search2.sh
#
# DIR holds ptb/; BINARY is `go build -tags openblas -o BINARY
# ./experiments/ptb`. The draws already judged are laid out in
# /work/runs/ptb-search2 from results/ptb/search2 (their models and
# checkpoints are not committed): the finished ones keep their
# summary.json, and the draws whose summary.json was never committed (JM
# draws 1-4, and RNS 3-4 draws 3 and 5, trained to the end as
# rns-3-4-lr30 and rns-3-4-lr10) get
# a placeholder one, so that the sweep counts them finished instead of
# training them again from nothing. A draw that was interrupted in
# /work/runs/ptb-search2 resumes from its checkpoint.
set -e
data=${DATA:?set DATA to the directory holding ptb/}
ptb=${PTB:?set PTB to the ptb binary}
repo=$(git rev-parse --show-toplevel)
out=/work/runs/ptb-search2
mkdir -p "$out"
cp -rn "$repo/results/ptb/search2/." "$out/"
cp "$repo/results/ptb/search2/sweep.json" "$out/sweep.json"
for d in jm-hidden-247/run-01 jm-hidden-247/run-02 jm-hidden-247/run-03 jm-hidden-247/run-04 rns-3-4/run-03 rns-3-4/run-05; do
	[ -f "$out/$d/summary.json" ] || echo '{"placeholder":"judged before; its logs are in results/ptb/search2"}' > "$out/$d/summary.json"
done
GOMAXPROCS=1 OPENBLAS_NUM_THREADS=1 nohup "$ptb" sweep --data "$data/ptb" --models jm-hidden-247,rns-3-4 \
	--runs 10 --epochs 2 --precision float32 --out "$out" --jobs 1 >> /work/runs/ptb-search2.log 2>&1 &
echo "sweep running in the background: tail -f /work/runs/ptb-search2.log"
