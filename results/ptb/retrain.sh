#!/bin/sh
# Trains again, on one core, the converged runs of results/ptb whose
# models were not kept, for their SG scores under the paper's convention
# (ptb sg --convention released), which needs the model: each from its
# committed run.json (ptb train --like: the same settings and seed), into
# RUNS/NAME, then copied with its perplexities and SG scores in both
# conventions into results/ptb/NAME-again (sync.sh). Each model's best run
# comes first. Run it again after an interruption: a finished run is
# skipped, an interrupted one resumes from its checkpoint, and on a new
# machine a run already synced into results/ptb is skipped.
#
#   DATA=DIR PTB=BINARY sh results/ptb/retrain.sh      # in the foreground
#
# DIR holds ptb/ and syntaxgym/; BINARY is `go build -tags openblas -o
# BINARY ./experiments/ptb`; RUNS defaults to /work/runs/ptb-again. A run
# trained again is not bit for bit the original (another build rounds
# otherwise; one draw moved by half a point to a point when trained
# again), so the table lists it as a run of its own.
set -e
data=${DATA:?set DATA to the directory holding ptb/ and syntaxgym/}
ptb=${PTB:?set PTB to the ptb binary}
runs=${RUNS:-/work/runs/ptb-again}
repo=$(git rev-parse --show-toplevel)
export GOMAXPROCS=1 OPENBLAS_NUM_THREADS=1
# OpenBLAS's AVX-512 kernels where the CPU has them (this machine's
# environment pins the AVX2 ones, 1.5x slower here; see results/ptb/README.md).
grep -q avx512f /proc/cpuinfo 2>/dev/null && export OPENBLAS_CORETYPE=SkylakeX
mkdir -p "$runs"
for name in lstm-256-lr29 rns-1-2-lr24 rns-3-4-lr30 jm-hidden-247-lr57 rns-1-2-lr39 lstm-256 rns-1-2; do
	d=$runs/$name
	# Synced on an earlier machine (its models are not committed): done.
	if [ ! -d "$d" ] && [ -f "$repo/results/ptb/$name-again/sg-released.json" ]; then
		echo "== $name: synced before (results/ptb/$name-again)"
		continue
	fi
	if [ ! -f "$d/model" ]; then
		echo "== $(date -u +%FT%TZ) $name: ptb train --like results/ptb/$name --out $d"
		"$ptb" train --like "$repo/results/ptb/$name" --data "$data/ptb" --out "$d" --resume --checkpoint-every 10m
	fi
	sh "$repo/results/ptb/sync.sh" "$ptb" "$data" "$name-again=$d"
	echo "== $(date -u +%FT%TZ) $name: synced into results/ptb/$name-again"
done
