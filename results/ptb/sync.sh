#!/bin/sh
# Copies the small files of PTB runs into results/ptb/<run's base name>:
# run.json, log.jsonl and, once the run has finished, summary.json, with
# eval-valid.json, eval-test.json, sg.json and sg-released.json (the
# paper's SG convention) computed from its model
# (skipped when already there and newer than the model). Models,
# checkpoints and vocabularies stay where they are.
#
#   results/ptb/sync.sh PTB DATA RUN...
#
# A RUN given as NAME=DIR is copied into results/ptb/NAME (for runs whose
# base names collide, such as a sweep's run-01 of two models).
#
# PTB is the ptb program (go build -tags openblas -o PTB ./experiments/ptb),
# DATA the directory holding ptb/ and syntaxgym/.
set -e
[ $# -ge 3 ] || { echo "usage: $0 PTB DATA RUN..." >&2; exit 2; }
ptb=$1 data=$(cd "$2" && pwd) # absolute, as sg.json records it
shift 2
dst=$(dirname "$0")
for arg in "$@"; do
  case $arg in
    *=*) run=${arg#*=} out="$dst/${arg%%=*}" ;;
    *) run=$arg out="$dst/$(basename "$arg")" ;;
  esac
  mkdir -p "$out"
  for f in run.json log.jsonl summary.json; do
    [ -f "$run/$f" ] && cp "$run/$f" "$out/"
  done
  [ -f "$run/model" ] || { echo "$run: not finished; copied its log" >&2; continue; }
  for split in valid test; do
    f="$out/eval-$split.json"
    if [ ! -f "$f" ] || [ "$run/model" -nt "$f" ]; then
      "$ptb" eval --model "$run" --data "$data/ptb" --split "$split" --json > "$f.tmp" && mv "$f.tmp" "$f"
    fi
  done
  for conv in surprisal released; do
    f="$out/sg.json"
    [ $conv = released ] && f="$out/sg-released.json"
    if [ ! -f "$f" ] || [ "$run/model" -nt "$f" ]; then
      "$ptb" sg --model "$run" --suites "$data/syntaxgym" --circuits "$data/syntaxgym/circuits.json" --convention $conv --json > "$f.tmp" && mv "$f.tmp" "$f"
    fi
  done
done
