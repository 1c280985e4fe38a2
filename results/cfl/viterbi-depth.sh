#!/bin/sh
# Prints, per string length, how deep the stack of a trained model's
# Viterbi runs goes, over 30 strings sampled at that length (released task
# definition, seed 9): the median and range of the largest stack height
# (pushes less pops) reached by the best run of each string; and, for the
# palindrome tasks, the median height where the string turns (unmarked
# reversal: after its first n/2 symbols; padded reversal: before the
# middle run of equal symbols, which holds the padding), against the
# median number of symbols read before that point, which a run that
# reverses the string must hold on its stack there.
#
# usage: sh results/cfl/viterbi-depth.sh CFL TASK RUN LENGTH...
#   CFL: the cfl program (go build -o /tmp/cfl ./experiments/cfl)
#   RUN: a finished train run directory (its run.json gives the task), or
#        the checkpoint file of one in progress (its best model so far)
set -e
cfl=$1 task=$2 run=$3
shift 3
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
for n in "$@"; do
  "$cfl" sample --task "$task" --grammar released --count 30 --lengths "$n:$n" --seed 9 > "$tmp"
  "$cfl" viterbi --model "$run" --in "$tmp" --json | python3 -c '
import json, statistics, sys
task, n = sys.argv[1], sys.argv[2]
tops, turns, needs = [], [], []
for line in sys.stdin:
    r = json.loads(line)
    w, depths = r["string"].split(), r["depths"]  # depths[t-1]: after reading w_t
    tops.append(max(depths))
    if task == "unmarked-reversal":
        k = len(w) // 2
    elif task == "padded-reversal":
        c = len(w) // 2
        k = c
        while k > 0 and w[k - 1] == w[c]:
            k -= 1
    else:
        continue
    turns.append(depths[k - 1] if k > 0 else 0)
    needs.append(k)
out = f"{task} length {n}: largest Viterbi stack height median {statistics.median(tops):g} (range {min(tops)}-{max(tops)})"
if turns:
    out += f"; height where the string turns median {statistics.median(turns):g}, symbols read by then median {statistics.median(needs):g}"
print(out)
' "$task" "$n"
done
