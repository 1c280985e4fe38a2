#!/bin/sh
# Copies the small files of the §4 runs from the sweep directory (default
# runs/cfl-sweep) and any further sweep directories (more learning rates or
# restarts, selected together with cfl select --also) into results/cfl:
# sweep.json (a further sweep's as sweep-<its name>.json), the first
# sweep's selected.json and test/, and per run run.json, log.jsonl and
# summary.json. Models and checkpoints stay. DST=DIR copies into DIR
# instead (results/cfl-compare, say).
set -e
dst=${DST:-$(dirname "$0")}
[ $# -gt 0 ] || set -- runs/cfl-sweep
first=1
for src in "$@"; do
  if [ $first = 1 ]; then
    cp "$src/sweep.json" "$dst/"
    [ -f "$src/selected.json" ] && cp "$src/selected.json" "$dst/"
    [ -d "$src/test" ] && cp -r "$src/test" "$dst/"
  else
    cp "$src/sweep.json" "$dst/sweep-$(basename "$src").json"
  fi
  first=0
  for run in "$src"/*/*/lr*/seed*; do
    [ -d "$run" ] || continue
    rel=${run#"$src"/}
    mkdir -p "$dst/$rel"
    for f in run.json log.jsonl summary.json; do
      [ -f "$run/$f" ] && cp "$run/$f" "$dst/$rel/"
    done
  done
done
