#!/bin/sh
# Copies the small files of the §4 runs from the sweep directory (default
# runs/cfl-sweep) into results/cfl: sweep.json, selected.json, test/, and
# per run run.json, log.jsonl and summary.json. Models and checkpoints stay.
set -e
src=${1:-runs/cfl-sweep}
dst=$(dirname "$0")
cp "$src/sweep.json" "$dst/"
[ -f "$src/selected.json" ] && cp "$src/selected.json" "$dst/"
[ -d "$src/test" ] && cp -r "$src/test" "$dst/"
for run in "$src"/*/*/lr*/seed*; do
  [ -d "$run" ] || continue
  rel=${run#"$src"/}
  mkdir -p "$dst/$rel"
  for f in run.json log.jsonl summary.json; do
    [ -f "$run/$f" ] && cp "$run/$f" "$dst/$rel/"
  done
done
