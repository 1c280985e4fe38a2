#!/bin/sh
# Prints, per string length, how deep the stack of a trained model's
# Viterbi runs goes: the median and range over 30 strings sampled at that
# length (released task definition, seed 9) of the largest stack height
# (pushes less pops) reached by the best run of each string.
#
# usage: sh results/cfl/viterbi-depth.sh CFL TASK RUN LENGTH...
#   CFL: the cfl program (go build -o /tmp/cfl ./experiments/cfl)
#   RUN: a finished train run directory (its run.json gives the task)
set -e
cfl=$1 task=$2 run=$3
shift 3
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for n in "$@"; do
  "$cfl" sample --task "$task" --grammar released --count 30 --lengths "$n:$n" --seed 9 > "$tmp"
  "$cfl" viterbi --model "$run" --in "$tmp" --json | python3 -c '
import json, statistics, sys
depths = []
for line in sys.stdin:
    d = top = 0
    for op in json.loads(line)["ops"]:
        d += 1 if op.startswith("push") else -1 if op.startswith("pop") else 0
        top = max(top, d)
    depths.append(top)
print(f"{sys.argv[1]} length {sys.argv[2]}: largest Viterbi stack height median {statistics.median(depths):g} (range {min(depths)}-{max(depths)})")
' "$task" "$n"
done
