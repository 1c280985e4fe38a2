#!/bin/sh
# Resumes (or, on a machine where they are lost, starts again) the runs of
# the campaign that were training at the end of the 2026-11-28 session,
# one core each, in the background:
#
#   1. RNS 3-4 draw 5 (lr 10.45, clip 0.488, seed 5; 195.05 after two
#      epochs, within 15% of the best draw) to the end, then the search's
#      RNS 3-4 draws 6-10 (resume-search2.sh);
#   2. the CFL protocol runs (results/cfl/protocol-runs.sh).
#
# JM-247 draw 3 and the chunk-boundary run ended that session
# (jm-hidden-247-lr52, jm-hidden-247-lr16-next).
#
#   DATA=DIR PTB=PTB_BINARY CFL=CFL_BINARY sh results/ptb/resume-runs.sh
#
# DIR holds ptb/; PTB_BINARY is `go build -tags openblas -o PTB_BINARY
# ./experiments/ptb`, CFL_BINARY `go build -o CFL_BINARY ./experiments/cfl`.
set -e
data=${DATA:?set DATA to the directory holding ptb/}
ptb=${PTB:?set PTB to the ptb binary}
cfl=${CFL:?set CFL to the cfl binary}
repo=$(git rev-parse --show-toplevel)
export GOMAXPROCS=1 OPENBLAS_NUM_THREADS=1
(
	d=/work/runs/ptb-search2/rns-3-4/run-05
	if [ -f "$d/checkpoint" ]; then
		"$ptb" train --out "$d" --resume --epochs 100 --checkpoint-every 2m >> "$d-continue.log" 2>&1
	else
		# Its two epochs are in results/ptb/search2; where its checkpoint
		# is lost it trains again from the start.
		d=/work/runs/ptb-rns34-05/run
		mkdir -p "$(dirname "$d")"
		if [ -f "$d/checkpoint" ]; then
			"$ptb" train --out "$d" --resume --checkpoint-every 2m >> "$d.log" 2>&1
		else
			"$ptb" train --data "$data/ptb" --model rns --states 3 --symbols 4 --window 35 --batch 32 --bptt 35 \
				--lr 10.446957899966133 --clip 0.4877816498806026 --seed 5 --precision float32 --epochs 100 \
				--checkpoint-every 2m --out "$d" >> "$d.log" 2>&1
		fi
	fi
	DATA=$data PTB=$ptb sh "$repo/results/ptb/resume-search2.sh"
) > /dev/null 2>&1 &
(
	cd "$repo" && CFL=$cfl sh results/cfl/protocol-runs.sh >> /work/runs/cfl-protocol.log 2>&1
) > /dev/null 2>&1 &
echo "resumed in the background; logs: /work/runs/ptb-search2/rns-3-4/run-05-continue.log, /work/runs/cfl-protocol.log"
