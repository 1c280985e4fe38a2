#!/bin/sh
# Builds the GPU device check on a development machine (no GPU, no CUDA
# toolkit needed): the test binaries and the two programs, pure Go
# (CGO_ENABLED=0), compressed, with the Penn Treebank files and the PyTorch
# reference, into one folder that travels to the GPU machine.
#
#   DATA=DIR TORCH_LM=FILE sh results/gpu/build.sh [OUTDIR]
#
# DIR holds the PTB corpus (DIR/ptb/ptb.train.txt) and the SyntaxGym
# suites (DIR/syntaxgym); FILE is the PyTorch
# reference script (torch_lm.py). OUTDIR defaults to .gpucheck in the
# repository root (ignored by git). Then, on the GPU machine, in the
# repository root:
#
#   sh .gpucheck/check.sh OUT
#
# runs every GPU test and benchmark (under 8 minutes) and writes its logs
# and summary.json into OUT; then, with the device's time that is left,
#
#   CAMPAIGN_SECONDS=300 sh .gpucheck/campaign.sh OUT
#
# trains the draws of the Penn Treebank search still to judge (see
# campaign.sh).
#
# Before it builds, it runs the kernels here under the GPU emulator's
# SIMT emulation (every CUDA thread on its own, warps and blocks
# cooperating as on a card), so that a fault of a warp's lanes or of a
# grid barrier is found before the card's time is spent: SIMT=quick (the
# default: TestGPUKernelsSIMT and TestGPUPersistentBarrierTimeout, about
# 20 s), SIMT=full (every GPU test, about 6 minutes on two cores) or
# SIMT=0 (none). Where there is no C++ compiler the tests skip.
set -e
repo=$(git rev-parse --show-toplevel)
out=${1:-$repo/.gpucheck}
data=${DATA:?set DATA to the directory holding ptb/}
torch_lm=${TORCH_LM:?set TORCH_LM to the PyTorch reference script}
cd "$repo"
case ${SIMT:-quick} in
0) ;;
quick) go test -count=1 -run 'TestGPUKernelsSIMT|TestGPUPersistentBarrierTimeout' ./nsrnn ;;
full) NSRNN_GPU_EMULATOR=simt go test -count=1 -timeout 60m -run 'TestGPU' ./nsrnn ;;
*)
	echo "build.sh: SIMT=$SIMT: want quick, full or 0" >&2
	exit 2
	;;
esac
rm -rf "$out"
mkdir -p "$out/ptb-data"
export CGO_ENABLED=0
go test -c -trimpath -ldflags='-s -w' -o "$out/nsrnn.test" ./nsrnn
go test -c -trimpath -ldflags='-s -w' -o "$out/cuda.test" ./internal/cuda
go build -trimpath -ldflags='-s -w' -o "$out/ptb" ./experiments/ptb
go build -trimpath -ldflags='-s -w' -o "$out/cfl" ./experiments/cfl
cp "$data"/ptb/ptb.train.txt "$data"/ptb/ptb.valid.txt "$data"/ptb/ptb.test.txt "$out/ptb-data/"
cp "$torch_lm" "$out/torch_lm.py"
cp results/gpu/check.sh results/gpu/summarize.py results/gpu/campaign.sh "$out/"
# For campaign.sh: the SyntaxGym suites and the PTB search's logs so far.
tar -czf "$out/syntaxgym.tar.gz" -C "$data/syntaxgym" .
mkdir -p "$out/ptb-search"
cp -r results/ptb/search results/ptb/search2 "$out/ptb-search/"
# The converged runs whose models were not kept (no released-convention SG
# score), unless the CPU trained them again (NAME-again, by
# results/ptb/retrain.sh): their run.json and summary.json, for
# campaign.sh to train again.
for d in results/ptb/*/; do
	n=$(basename "$d")
	[ -f "$d/run.json" ] && [ -f "$d/summary.json" ] && [ -f "$d/eval-test.json" ] && [ ! -f "$d/sg-released.json" ] || continue
	[ -f "results/ptb/$n-again/sg-released.json" ] && continue
	mkdir -p "$out/retrain/$n"
	cp "$d/run.json" "$d/summary.json" "$out/retrain/$n/"
done
# The learning rates of the converged runs, so that campaign.sh trains to
# the end only the draws within 15% of the best that are not yet.
for d in results/ptb/*/; do
	[ -f "$d/eval-test.json" ] && python3 -c 'import json, sys; print(repr(json.load(open(sys.argv[1]))["lr"]))' "$d/run.json"
done > "$out/converged-lrs.txt"
git rev-parse HEAD > "$out/commit"
git status --porcelain | grep -q . && echo "(with uncommitted changes)" >> "$out/commit"
gzip -9 "$out/nsrnn.test" "$out/cuda.test" "$out/ptb" "$out/cfl" "$out"/ptb-data/*.txt
du -sh "$out"
