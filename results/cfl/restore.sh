#!/bin/sh
# The reverse of sync.sh: makes a sweep directory from the small files
# committed here, so that a sweep continues on a machine without the
# original one. Usage: sh results/cfl/restore.sh SRC DST, where SRC is a
# results directory (results/cfl-compare, say) and DST the sweep directory
# to make (/work/runs/cfl-compare). It copies SRC's sweep.json,
# selected.json and test/, and run.json, log.jsonl and summary.json of each
# finished run (one with a summary.json); an unfinished run is left out,
# since its checkpoint is not committed, so the sweep starts it again.
# Runs are deterministic, so a run started again repeats the lost epochs
# exactly (up to rounding under another BLAS). DST must not exist yet.
set -e
[ $# -eq 2 ] || { echo "usage: $0 SRC DST" >&2; exit 2; }
src=$1 dst=$2
[ -f "$src/sweep.json" ] || { echo "$0: $src/sweep.json: no such file" >&2; exit 1; }
[ ! -e "$dst" ] || { echo "$0: $dst exists; give a new directory" >&2; exit 1; }
mkdir -p "$dst"
cp "$src/sweep.json" "$dst/"
[ -f "$src/selected.json" ] && cp "$src/selected.json" "$dst/"
[ -d "$src/test" ] && cp -r "$src/test" "$dst/"
n=0 skipped=0
for run in "$src"/*/*/lr*/seed*; do
  [ -d "$run" ] || continue
  if [ ! -f "$run/summary.json" ]; then
    skipped=$((skipped + 1))
    continue
  fi
  rel=${run#"$src"/}
  mkdir -p "$dst/$rel"
  cp "$run/run.json" "$run/log.jsonl" "$run/summary.json" "$dst/$rel/"
  n=$((n + 1))
done
echo "$dst: $n finished runs restored, $skipped unfinished left to start again"
