#!/bin/sh
# The rest of the PTB search, on one core, in order, each step resumable
# (run it again after an interruption: finished work is skipped,
# interrupted runs resume from their checkpoints):
#
#   1. RNS 3-4's draws 6-10, two epochs each (the sweep of search2);
#   2. RNS 3-4's draws within 15% of its best after two epochs, to
#      convergence (ptb train --resume --epochs 100);
#   3. LSTM-256's and RNS 1-2's draws 5-10 (the sweep of search, laid out
#      the same way from results/ptb/search), then their draws within 15%
#      of their best to convergence;
#   4. JM-247's draws that the screen left (above 1.15 times the best
#      after two epochs, up to 1.5 times it), to convergence, the nearest
#      first: the authors' protocol, which trains every draw to the end.
#
#   DATA=DIR PTB=BINARY sh results/ptb/chain.sh      # in the foreground
#
# Every draw keeps the rule of the search's first draws, ptb train
# --improvement cross-entropy (the sweeps made before the choice keep it by
# themselves; a draw trained again in a sweep of its own is told).
#
# DIR holds ptb/; BINARY is `go build -tags openblas -o BINARY
# ./experiments/ptb`. results/ptb/resume-runs.sh starts it in the
# background. A converged run is synced into results/ptb with sync.sh (by
# hand: it needs the SyntaxGym data too).
set -e
data=${DATA:?set DATA to the directory holding ptb/}
ptb=${PTB:?set PTB to the ptb binary}
repo=$(git rev-parse --show-toplevel)
export GOMAXPROCS=1 OPENBLAS_NUM_THREADS=1
# OpenBLAS's AVX-512 kernels where the CPU has them (this machine's
# environment pins the AVX2 ones, 1.5x slower here; see results/ptb/README.md).
grep -q avx512f /proc/cpuinfo 2>/dev/null && export OPENBLAS_CORETYPE=SkylakeX

# layout SRC OUT DRAW...: the committed draws of a sweep laid out again
# in OUT (their logs; a placeholder summary.json for the judged draws
# named, whose models and checkpoints are not committed), unless already
# there, its sweep.json extended to the paper's 10 draws per model (a
# draw's hyperparameters depend only on the seed, the model and its
# index, so the first draws keep theirs).
layout() {
	src=$1 out=$2
	shift 2
	mkdir -p "$out"
	cp -rn "$src/." "$out/"
	sed 's/"runs": [0-9]*/"runs": 10/' "$src/sweep.json" > "$out/sweep.json"
	for d in "$@"; do
		# Without its checkpoint (a new machine) the draw cannot go on:
		# the placeholder makes the sweep and converge pass it by.
		[ -f "$out/$d/checkpoint" ] || echo '{"placeholder":"judged before; its logs are in results/ptb"}' > "$out/$d/summary.json"
	done
}

# converge SWEEPDIR MODEL [slow]: the draws of MODEL within 15% of its
# best validation perplexity after two epochs, trained to the end unless
# they were (past two epochs here, or a converged copy in results/ptb with
# the same learning rate); with "slow", the draws the screen left instead
# (above 1.15 times the best, up to SLOW_MAX times it, default 1.5: those
# further out barely learn at their rates and clips, and would take the
# 100 epochs), the nearest to the best first, as the authors' protocol
# trains every draw to convergence. A draw judged on another machine (a
# placeholder, without its checkpoint) trains again from the start, to
# the end, in a sweep of its own (SWEEPDIR-MODEL-run-NN) whose other draws
# are placeholders: the same hyperparameters and seed.
converge() {
	for d in $(python3 - "$1/$2" "$repo/results/ptb" "${3:-}" "${SLOW_MAX:-1.5}" <<'EOF'
import glob, json, math, os, sys
slow, slow_max = sys.argv[3] == 'slow', float(sys.argv[4])
done = set()
for f in glob.glob(os.path.join(sys.argv[2], '*', 'eval-test.json')):
    try:
        done.add(json.load(open(os.path.join(os.path.dirname(f), 'run.json')))['lr'])
    except (OSError, ValueError, KeyError):
        pass
two = {}
for d in glob.glob(os.path.join(sys.argv[1], 'run-*')):
    if not os.path.isdir(d):
        continue
    try:
        recs = [json.loads(l) for l in open(os.path.join(d, 'log.jsonl')) if l.strip()]
    except OSError:
        continue
    if len(recs) >= 2:
        two[d] = math.exp(recs[1]['valid_cross_entropy'])
best = min(two.values()) if two else 0
for d, p in sorted(two.items(), key=lambda kv: kv[1]):
    if (p > 1.15 * best) != slow or slow and p > slow_max * best:
        continue
    try:
        s = json.load(open(os.path.join(d, 'summary.json')))
    except (OSError, ValueError):
        s = {}
    try:
        lr = json.load(open(os.path.join(d, 'run.json')))['lr']
    except (OSError, ValueError, KeyError):
        lr = None
    # Already past its two epochs, or converged elsewhere.
    if s.get('epochs', 0) > 2 or lr in done:
        continue
    print(d)
EOF
	); do
		if [ -f "$d/checkpoint" ]; then
			echo "chain: $d to convergence"
			nice -n 10 "$ptb" train --out "$d" --resume --epochs 100 --checkpoint-every 2m >> "$d-continue.log" 2>&1 ||
				echo "chain: $d failed (see $d-continue.log)"
			continue
		fi
		# Judged elsewhere: again from the start, to the end.
		n=${d##*run-}
		out="$1-$2-run-$n"
		echo "chain: $d from the start to convergence, in $out"
		for i in 01 02 03 04 05 06 07 08 09 10; do
			[ "$i" = "$n" ] && continue
			mkdir -p "$out/$2/run-$i"
			[ -f "$out/$2/run-$i/summary.json" ] || echo '{"placeholder":"another draw of the sweep"}' > "$out/$2/run-$i/summary.json"
		done
		nice -n 10 "$ptb" sweep --data "$data/ptb" --models "$2" --runs 10 --epochs 100 --precision float32 \
			--improvement cross-entropy --out "$out" --jobs 1 >> "$out.log" 2>&1 || echo "chain: $out failed (see $out.log)"
	done
}

s2=/work/runs/ptb-search2
layout "$repo/results/ptb/search2" "$s2" jm-hidden-247/run-01 jm-hidden-247/run-02 jm-hidden-247/run-03 jm-hidden-247/run-04 \
	rns-3-4/run-03 rns-3-4/run-05
echo "chain: RNS 3-4 draws 6-10"
nice -n 10 "$ptb" sweep --data "$data/ptb" --models jm-hidden-247,rns-3-4 --runs 10 --epochs 2 --precision float32 \
	--out "$s2" --jobs 1 >> /work/runs/ptb-search2.log 2>&1
converge "$s2" rns-3-4

s1=/work/runs/ptb-search
layout "$repo/results/ptb/search" "$s1" lstm-256/run-01 lstm-256/run-02 lstm-256/run-03 lstm-256/run-04 \
	rns-1-2/run-01 rns-1-2/run-02 rns-1-2/run-03 rns-1-2/run-04
echo "chain: LSTM-256 and RNS 1-2 draws 5-10"
nice -n 10 "$ptb" sweep --data "$data/ptb" --models lstm-256,rns-1-2 --runs 10 --epochs 2 --precision float32 \
	--out "$s1" --jobs 1 >> /work/runs/ptb-search.log 2>&1
converge "$s1" lstm-256
converge "$s1" rns-1-2
# The authors' protocol for JM-247, the model furthest from the paper:
# its draws that our two-epoch screen left, to convergence, to see whether
# a slow starter ends ahead of the best.
echo "chain: JM-247's draws the screen left"
converge "$s2" jm-hidden-247 slow
echo "chain: done"
