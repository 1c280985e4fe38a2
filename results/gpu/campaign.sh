#!/bin/sh
# The Penn Treebank search on the GPU machine: the draws of the paper's
# search (10 per model, judged after two epochs) that the CPU has not
# judged yet, then the new draws within 15% of their model's best to
# convergence, each converged run with its test perplexity and SG scores
# (both conventions). It runs after check.sh, from the folder that
# results/gpu/build.sh made, in what is left of the device's time:
#
#   CAMPAIGN_SECONDS=300 sh .gpucheck/campaign.sh OUT
#
# The draws are the sweep's of results/ptb (seed 1, learning rates
# log-uniform in [1, 100]): a draw's hyperparameters depend only on the
# seed, the model and its index, so the GPU's draws 6-10 are those the CPU
# would train. The draws the CPU judged (results/ptb/search, search2,
# copied by build.sh) get a placeholder summary.json and are not trained
# again. Models do not come back (they are large); OUT/search holds each
# run's run.json, log.jsonl, summary.json and, for the converged ones,
# eval-valid.json, eval-test.json, sg.json and sg-released.json, in the
# layout of results/ptb; OUT/campaign.log the programs' output. Every step
# is capped by what is left of CAMPAIGN_SECONDS (default 300), so that
# the campaign ends on time with what it finished.
#
# Then the converged runs of results/ptb whose models were not kept train
# again, for their SG scores under the released convention (OUT/retrain);
# the CPU's draws within 15% of their model's best that are not converged
# yet train to convergence (OUT/search-converged); and with what is left,
# the authors' protocol for the draws our screen left (SLOW_MODELS,
# default jm-hidden-247): each trained from the start to convergence,
# with its validation and test perplexity, into OUT/slow.
#
# MODELS (default rns-3-4,lstm-256,rns-1-2), DEVICE (default cuda) and
# EXTRA (flags given to every sweep run, as --hidden 8 for a trial on a
# CPU) are for trying the script elsewhere.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: sh campaign.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
deadline=$(( $(date +%s) + ${CAMPAIGN_SECONDS:-300} ))
models=${MODELS:-rns-3-4,lstm-256,rns-1-2}
device=${DEVICE:-cuda}
log="$out/campaign.log"
step() {
	lim=$1
	shift
	left=$(( deadline - $(date +%s) ))
	[ "$left" -lt "$lim" ] && lim=$left
	if [ "$lim" -le 3 ]; then
		echo "(skipped, the campaign's time is spent: $*)" >> "$log"
		return 124
	fi
	timeout -k 10 "$lim" "$@"
}
# evaluate DIR [sg]: the validation and test perplexity of the finished
# run in DIR (eval-valid.json, eval-test.json) and, with sg, its SG scores
# in both conventions (sg.json, sg-released.json); what fails or runs out
# of the budget is left out.
evaluate() {
	for split in valid test; do
		step 60 ./ptb eval --model "$1" --data ptb-data --split "$split" --device "$device" --json > "$1/eval-$split.json" 2>> "$log" ||
			rm -f "$1/eval-$split.json"
	done
	[ "${2:-}" = sg ] || return 0
	for conv in surprisal released; do
		f=$1/sg.json
		[ $conv = released ] && f=$1/sg-released.json
		step 120 ./ptb sg --model "$1" --suites syntaxgym --circuits syntaxgym/circuits.json --convention $conv \
			--device "$device" --json > "$f" 2>> "$log" || rm -f "$f"
	done
}
work=$(mktemp -d)
cd "$work"
gunzip -c "$here/ptb.gz" > ptb
chmod +x ptb
mkdir -p ptb-data syntaxgym
for f in "$here"/ptb-data/*.gz; do gunzip -c "$f" > "ptb-data/$(basename "$f" .gz)"; done
tar -xzf "$here/syntaxgym.tar.gz" -C syntaxgym
sw=$work/search

# The draws judged on the CPU: a placeholder summary.json (the sweep
# counts them finished) and their log, for the selection below.
for model in $(echo "$models" | tr , ' '); do
	for d in "$here"/ptb-search/*/"$model"/run-*; do
		[ -f "$d/log.jsonl" ] || continue
		[ "$(wc -l < "$d/log.jsonl")" -ge 2 ] || continue
		r=$sw/$model/$(basename "$d")
		mkdir -p "$r"
		cp "$d/log.jsonl" "$d/run.json" "$r/"
		echo '{"placeholder":"judged on the CPU; its logs are in results/ptb"}' > "$r/summary.json"
		touch "$r/cpu"
	done
done

echo "== two-epoch draws ($models, 10 each; $device)" >> "$log"
# shellcheck disable=SC2086
# --improvement cross-entropy: the rule of the search's draws on the CPU.
step 100000 ./ptb sweep --data ptb-data --models "$models" --runs 10 --epochs 2 --precision float32 \
	--improvement cross-entropy --device "$device" --out "$sw" --jobs 1 ${EXTRA:-} >> "$log" 2>&1
echo "exit $?" >> "$log"

# The new draws within 15% of their model's best after two epochs (over
# the CPU's draws and these), best first.
python3 - "$sw" > candidates.txt <<'EOF'
import glob, json, math, os, sys
sw = sys.argv[1]
for model in sorted(os.listdir(sw)):
    if not os.path.isdir(os.path.join(sw, model)):
        continue
    two = {}
    for d in glob.glob(os.path.join(sw, model, 'run-*')):
        try:
            recs = [json.loads(l) for l in open(os.path.join(d, 'log.jsonl')) if l.strip()]
        except OSError:
            continue
        if len(recs) >= 2:
            two[d] = math.exp(recs[1]['valid_cross_entropy'])
    if not two:
        continue
    best = min(two.values())
    for d, p in sorted(two.items(), key=lambda kv: kv[1]):
        if p <= 1.15 * best and not os.path.exists(os.path.join(d, 'cpu')):
            print(d)
EOF
echo "== to convergence: $(wc -l < candidates.txt) draws within 15% of their model's best" >> "$log"
while read -r d; do
	echo "\$ ptb train --out $d --resume --epochs 100" >> "$log"
	step 100000 ./ptb train --out "$d" --resume --epochs 100 --device "$device" >> "$log" 2>&1
	rc=$?
	echo "exit $rc" >> "$log"
	# Only a run that converged is evaluated (one stopped by the budget
	# has a checkpoint, which its log.jsonl shows how far it came).
	[ $rc = 0 ] && [ -f "$d/model" ] || continue
	evaluate "$d" sg
done < candidates.txt

# SG like for like: the converged runs of results/ptb whose models were
# not kept (build.sh ships their run.json) have no SG score under the
# released convention. Each trains again from its run.json's settings (the
# same draw: seed, rates, rule; rounding may move it by a point), the best
# validation perplexity first, with its perplexities and SG scores in both
# conventions, into OUT/retrain.
python3 - "$here/retrain" > retrain.txt <<'EOF2'
import json, os, sys
root = sys.argv[1]
runs = []
for name in (os.listdir(root) if os.path.isdir(root) else []):
    try:
        r = json.load(open(os.path.join(root, name, 'run.json')))
        s = json.load(open(os.path.join(root, name, 'summary.json')))
    except (OSError, ValueError):
        continue
    m = r['model']
    a = ['--model', m['kind'], '--hidden', str(m['hidden'])]
    if m.get('layers', 1) > 1:
        a += ['--layers', str(m['layers'])]
    if m.get('states'):
        a += ['--states', str(m['states']), '--symbols', str(m['symbols'])]
    if m.get('window'):
        a += ['--window', str(m['window'])]
    if m.get('depth_limit'):
        a += ['--depth-limit', str(m['depth_limit'])]
    if m.get('push_hidden_state'):
        a += ['--push-hidden-state']
    if m.get('stack_embedding'):
        a += ['--stack-embedding', str(m['stack_embedding'])]
    a += ['--lr', repr(r['lr']), '--clip', repr(r['clip']), '--seed', str(r['seed']), '--batch', str(r['batch']),
          '--bptt', str(r['bptt']), '--early-stop', str(r['early_stop']), '--decay', repr(r['decay']),
          '--epochs', str(r['epochs']), '--precision', r.get('precision') or 'float64',
          '--improvement', r.get('improvement') or 'cross-entropy']
    if r.get('boundary'):
        a += ['--boundary', r['boundary']]
    runs.append((s.get('best_valid_perplexity', float('inf')), name, a))
for _, name, a in sorted(runs):
    print(name, ' '.join(a))
EOF2
echo "== SG like for like: $(wc -l < retrain.txt) converged runs trained again" >> "$log"
while read -r name args; do
	d=$work/retrain/$name
	echo "\$ ptb train $args --out $d" >> "$log"
	# shellcheck disable=SC2086
	step 100000 ./ptb train --data ptb-data $args --device "$device" --out "$d" --checkpoint-every 1m ${EXTRA:-} >> "$log" 2>&1
	echo "exit $?" >> "$log"
	[ -f "$d/model" ] || continue
	evaluate "$d" sg
done < retrain.txt
for d in "$work"/retrain/*; do
	[ -f "$d/log.jsonl" ] || continue
	r=$out/retrain/$(basename "$d")
	mkdir -p "$r"
	for f in run.json log.jsonl summary.json eval-valid.json eval-test.json sg.json sg-released.json; do
		[ -f "$d/$f" ] && cp "$d/$f" "$r/"
	done
done

# The draws the CPU judged that are still to train to the end: those
# within 15% of their model's best after two epochs without a converged
# copy in results/ptb (build.sh ships the converged runs' learning rates),
# and, by the authors' protocol, which trains every draw to convergence
# where ours judges them after two epochs, the draws of SLOW_MODELS
# (default jm-hidden-247, the model furthest from the paper) that the
# screen left (above 1.15 times the best). Each trains from the start to
# convergence, the open candidates first and then the nearest to the best,
# in a sweep of its model's own (the same seed, so the same
# hyperparameters), one draw at a time, as far as the budget goes.
python3 - "$here/ptb-search" "$here/converged-lrs.txt" "${SLOW_MODELS:-jm-hidden-247}" > draws.txt <<'EOF2'
import glob, json, math, os, sys
root, done_file, slow_models = sys.argv[1], sys.argv[2], sys.argv[3].split(',')
try:
    done = {float(l) for l in open(done_file) if l.strip()}
except OSError:
    done = set()
open_draws, slow_draws = [], []
for model in ('lstm-256', 'rns-1-2', 'jm-hidden-247', 'rns-3-4'):
    two, lrs = {}, {}
    for d in glob.glob(os.path.join(root, '*', model, 'run-*')):
        try:
            recs = [json.loads(l) for l in open(os.path.join(d, 'log.jsonl')) if l.strip()]
            lrs[os.path.basename(d)] = json.load(open(os.path.join(d, 'run.json')))['lr']
        except (OSError, ValueError, KeyError):
            continue
        if len(recs) >= 2:
            two[os.path.basename(d)] = math.exp(recs[1]['valid_cross_entropy'])
    if not two:
        continue
    best = min(two.values())
    for name, p in sorted(two.items(), key=lambda kv: kv[1]):
        if p <= 1.15 * best:
            if lrs[name] not in done:
                open_draws.append((model, name, 'open'))
        elif model in slow_models:
            slow_draws.append((model, name, 'slow'))
for model, name, kind in open_draws + slow_draws:
    print(model, name, kind)
EOF2
echo "== to convergence: $(grep -c ' open' draws.txt) open candidates judged on the CPU, $(grep -c ' slow' draws.txt) draws the screen left (the authors' protocol)" >> "$log"
while read -r model name kind; do
	sd=$work/draws-$model
	# One draw at a time: every other run of the sweep has a
	# summary.json (a placeholder while it waits), so that the sweep
	# trains this one alone.
	for i in 01 02 03 04 05 06 07 08 09 10; do
		r=$sd/$model/run-$i
		mkdir -p "$r"
		[ "run-$i" = "$name" ] && continue
		[ -f "$r/summary.json" ] || echo '{"placeholder":"waits"}' > "$r/summary.json"
	done
	# shellcheck disable=SC2086
	step 100000 ./ptb sweep --data ptb-data --models "$model" --runs 10 --epochs 100 --precision float32 \
		--improvement cross-entropy --device "$device" --out "$sd" --jobs 1 ${EXTRA:-} >> "$log" 2>&1
	echo "exit $? ($model $name, $kind)" >> "$log"
	d=$sd/$model/$name
	if [ -f "$d/model" ]; then
		if [ "$kind" = open ]; then
			evaluate "$d" sg
		else
			evaluate "$d"
		fi
	fi
	for r in "$sd/$model"/run-*; do
		grep -q '"waits"' "$r/summary.json" 2>/dev/null && rm -f "$r/summary.json"
	done
	# The small files of the draw, in OUT/slow (the authors' protocol)
	# or OUT/search-converged (the open candidates).
	[ -f "$d/log.jsonl" ] || continue
	case $kind in
	open) r=$out/search-converged/$model/$name ;;
	*) r=$out/slow/$model/$name ;;
	esac
	mkdir -p "$r"
	for f in run.json log.jsonl summary.json eval-valid.json eval-test.json sg.json sg-released.json; do
		[ -f "$d/$f" ] && cp "$d/$f" "$r/"
	done
done < draws.txt

# The small files of every run trained here.
for d in "$sw"/*/run-*; do
	[ -d "$d" ] || continue
	[ -f "$d/cpu" ] && continue
	r=$out/search/$(basename "$(dirname "$d")")/$(basename "$d")
	mkdir -p "$r"
	for f in run.json log.jsonl summary.json eval-valid.json eval-test.json sg.json sg-released.json; do
		[ -f "$d/$f" ] && cp "$d/$f" "$r/"
	done
done
cp "$sw/sweep.json" "$out/search/" 2>/dev/null
echo "campaign finished with $(( deadline - $(date +%s) )) s of its budget left" >> "$log"
tail -3 "$log"
rm -rf "$work"
