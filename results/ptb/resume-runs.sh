#!/bin/sh
# Resumes (or, on a machine where they are lost, starts again) the runs of
# the campaign that were training at the end of the latest session, one
# core each, in the background:
#
#   1. the CFL protocol runs on unmarked reversal
#      (results/cfl/protocol-runs.sh ur), then the CFL ablation's runs
#      left, two at a time on both cores (the second core's sweep of
#      them, below, is stopped and its run resumes here), then the rest
#      of the PTB search
#      (chain.sh): RNS 1-2's draws 6-10, two epochs each (draw 6 is in its
#      second epoch), those within 15% of the best to convergence,
#      LSTM-256's second candidate (run-02) to convergence, and JM-247's
#      three draws nearest to the best that the two-epoch screen left;
#   2. the converged PTB runs whose models were not kept, trained again
#      for their SG scores under the paper's convention (retrain.sh, into
#      /work/runs/ptb-again, synced into results/ptb/NAME-again as each
#      ends; all done, so it only checks that they are synced), then the
#      CFL ablation restarts (results/cfl/protocol-runs.sh ablation).
#
# The ablation gets both cores before the PTB search (which goes on as
# compute allows), since the comparisons of results/cfl-ablation rest on
# it: the protocol's two runs left take about four hours on one core, the
# ablation's eleven about thirty core-hours.
#
#   DATA=DIR PTB=PTB_BINARY CFL=CFL_BINARY sh results/ptb/resume-runs.sh
#
# DIR holds ptb/ and syntaxgym/; PTB_BINARY is `go build -tags openblas -o PTB_BINARY
# ./experiments/ptb`, CFL_BINARY `go build -o CFL_BINARY ./experiments/cfl`.
set -e
data=${DATA:?set DATA to the directory holding ptb/}
ptb=${PTB:?set PTB to the ptb binary}
cfl=${CFL:?set CFL to the cfl binary}
repo=$(git rev-parse --show-toplevel)
export GOMAXPROCS=1 OPENBLAS_NUM_THREADS=1
# OpenBLAS's AVX-512 kernels where the CPU has them (this machine's
# environment pins the AVX2 ones, 1.5x slower here; see results/ptb/README.md).
grep -q avx512f /proc/cpuinfo 2>/dev/null && export OPENBLAS_CORETYPE=SkylakeX
# On a new machine the CFL sweep directories are made again from the
# committed files (results/cfl/restore.sh: the finished runs; the
# unfinished ones start again and repeat their lost epochs exactly).
mkdir -p /work/runs
for d in cfl-ur-protocol cfl-ablation; do
	[ -e "/work/runs/$d" ] || sh "$repo/results/cfl/restore.sh" "$repo/results/$d" "/work/runs/$d"
done
(
	cd "$repo" && CFL=$cfl sh results/cfl/protocol-runs.sh ur >> /work/runs/cfl-protocol.log 2>&1
	# The protocol is done: the ablation takes both cores (its sweep on
	# the other core stops after its current batch, with a checkpoint,
	# and its runs resume two at a time), and the PTB search follows.
	pkill -INT -f "sweep .*--out /work/runs/cfl-ablation" || true
	while pgrep -f "sweep .*--out /work/runs/cfl-ablation" > /dev/null; do sleep 5; done
	cd "$repo" && JOBS=2 CFL=$cfl sh results/cfl/protocol-runs.sh ablation >> /work/runs/cfl-ablation.log 2>&1
	DATA=$data PTB=$ptb sh "$repo/results/ptb/chain.sh" >> /work/runs/ptb-chain.log 2>&1
) > /dev/null 2>&1 &
(
	cd "$repo" && DATA=$data PTB=$ptb sh results/ptb/retrain.sh >> /work/runs/ptb-again.log 2>&1
	cd "$repo" && CFL=$cfl sh results/cfl/protocol-runs.sh ablation >> /work/runs/cfl-ablation.log 2>&1
) > /dev/null 2>&1 &
echo "resumed in the background; logs: /work/runs/cfl-protocol.log, then /work/runs/ptb-chain.log (and the sweeps' ptb-search2.log, ptb-search.log); /work/runs/ptb-again.log, then /work/runs/cfl-ablation.log"
