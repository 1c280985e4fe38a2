#!/bin/sh
# Resumes (or, on a machine where they are lost, starts again) the PTB runs
# of the campaign that were training at the end of the 2026-11-28 session,
# two at a time, one core each, in the background:
#
#   1. JM-247 draw 3 (lr 51.80, clip 0.802, seed 3), trained again to the
#      end (its first training's checkpoint was lost): /work/runs/ptb-jm03/run
#   2. JM-247 draw 8 (lr 16.15, clip 0.172, seed 8) with --boundary
#      next-chunk, beside its in-chunk twin jm-hidden-247-lr16:
#      /work/runs/ptb-boundary/jm-lr16-next
#   then, when 1 ends,
#   3. RNS 3-4 draw 5 (195.05 after two epochs) to the end, then the
#      search's RNS 3-4 draws 6-10 (resume-search2.sh).
#
#   DATA=DIR PTB=BINARY sh results/ptb/resume-runs.sh
#
# DIR holds ptb/; BINARY is `go build -tags openblas -o BINARY ./experiments/ptb`.
set -e
data=${DATA:?set DATA to the directory holding ptb/}
ptb=${PTB:?set PTB to the ptb binary}
repo=$(git rev-parse --show-toplevel)
export GOMAXPROCS=1 OPENBLAS_NUM_THREADS=1
jm="--data $data/ptb --model jm --hidden 247 --push-hidden-state --depth-limit 10 --batch 32 --bptt 35 --precision float32 --epochs 100 --checkpoint-every 2m"
# run DIR FLAGS...: resume DIR where it has a checkpoint, else start it.
run() {
	dir=$1
	shift
	mkdir -p "$(dirname "$dir")"
	if [ -f "$dir/checkpoint" ]; then
		"$ptb" train --out "$dir" --resume --checkpoint-every 2m >> "$dir.log" 2>&1
	else
		rm -rf "$dir"
		"$ptb" train "$@" --out "$dir" >> "$dir.log" 2>&1
	fi
}
(
	run /work/runs/ptb-jm03/run $jm --lr 51.796448636428345 --clip 0.8024987326088158 --seed 3
	# RNS 3-4 draw 5: its two epochs are in results/ptb/search2; where its
	# checkpoint is lost it trains again from the start.
	d=/work/runs/ptb-search2/rns-3-4/run-05
	if [ -f "$d/checkpoint" ]; then
		"$ptb" train --out "$d" --resume --epochs 100 --checkpoint-every 2m >> "$d-continue.log" 2>&1
	else
		run /work/runs/ptb-rns34-05/run --data "$data/ptb" --model rns --states 3 --symbols 4 --window 35 --batch 32 --bptt 35 \
			--lr 10.446957899966133 --clip 0.4877816498806026 --seed 5 --precision float32 --epochs 100 --checkpoint-every 2m
	fi
	DATA=$data PTB=$ptb sh "$repo/results/ptb/resume-search2.sh"
) > /dev/null 2>&1 &
(
	run /work/runs/ptb-boundary/jm-lr16-next $jm --lr 16.15229897511432 --clip 0.17148467555523428 --seed 8 --boundary next-chunk
) > /dev/null 2>&1 &
echo "resumed in the background; logs: /work/runs/ptb-jm03/run.log, /work/runs/ptb-boundary/jm-lr16-next.log"
