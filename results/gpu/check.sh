#!/bin/sh
# The GPU device check: runs on the GPU machine, from the folder that
# results/gpu/build.sh made (no Go toolchain, no network needed there):
#
#   sh .gpucheck/check.sh OUT
#
# 1. every GPU correctness test (internal/cuda's, and nsrnn's GPU against
#    CPU suite: loss and every gradient, log-probabilities, streams,
#    200 training steps, determinism);
# 2. the speed of Penn Treebank training and evaluation
#    (BenchmarkGPUTrainPTB, BenchmarkGPUEvalPTB; LSTM-256 and JM-247 at
#    B = 32 and 256, RNS 1-2 and 3-4 at B = 32; T = 35) beside PyTorch's
#    fused nn.LSTM on the same card (torch_lm.py, DEVICE=cuda),
#    interleaved, evaluation both chunk by chunk (Stream.Loss) and queued
#    as Stream.CrossEntropy runs it (model+queued: the losses summed on
#    the device, read once, as PyTorch's loop reads none); the CFL
#    training step on the GPU and on two CPU cores;
# 3. the programs end to end: one PTB epoch of ptb train --device cuda,
#    ptb eval of it on the GPU, two CFL epochs of cfl train --device cuda;
# 4. where the time goes: every kernel, product and copy of the PTB
#    benchmarks (LSTM-256, JM-247, RNS 1-2, RNS 3-4) and of the CFL step,
#    timed on the device's clock (profile.txt);
# 5. summary.json (summarize.py): the card and driver, every check passed
#    or failed, each speed figure and its PyTorch reference, each profile's
#    device time per token.
#
# The LSTM-256 and JM-247 rates are measured with the fused LSTM steps
# (NSRNN_CUDA_LSTM_STEP=fused, fused2, fused8; for LSTM-256 also the
# persistent kernels, persistent and persistent8) as well, in the same rounds,
# as model+VARIANT, their training with the backward steps fused too
# (NSRNN_CUDA_LSTM_BACK=fused) as model+fused-both, and JM-247 and RNS 1-2
# with every product in cuBLAS
# (NSRNN_CUDA_SMALL_PRODUCTS=0) as model+cublas, and LSTM-256, JM-247,
# RNS 1-2 and RNS 3-4 with the output layer after the recurrence on one
# stream (NSRNN_CUDA_PIPELINE=0) as model+serial.
#
# Every step has a time limit, capped by what is left of the check's
# budget (CHECK_SECONDS, default 420 s), so that the whole ends on time. Logs: env.txt, tests.log, bench.log, torch.log,
# bench-nographs.log, profile.txt, profile-fused.txt, profile-persistent.txt, e2e.log,
# summary.json.
set -u
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: sh check.sh OUTDIR}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# Every step runs under a time limit capped by what is left of the whole
# check's budget (CHECK_SECONDS, default 420): the check ends on time with
# its logs and summary.json written, whatever hangs. The steps run in
# order of what has least been shown on a card before.
deadline=$(( $(date +%s) + ${CHECK_SECONDS:-420} ))
step() {
	lim=$1
	shift
	left=$(( deadline - $(date +%s) ))
	[ "$left" -lt "$lim" ] && lim=$left
	if [ "$lim" -le 3 ]; then
		echo "(skipped, the check's time is spent: $*)"
		return 124
	fi
	timeout -k 10 "$lim" "$@"
}
summarize() { python3 "$here/summarize.py" "$out" > /dev/null 2>&1; }
work=$(mktemp -d)
cd "$work"
for f in "$here"/*.gz; do gunzip -c "$f" > "$(basename "$f" .gz)"; done
chmod +x nsrnn.test cuda.test ptb cfl
mkdir -p ptb-data
for f in "$here"/ptb-data/*.gz; do gunzip -c "$f" > "ptb-data/$(basename "$f" .gz)"; done
{
	echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "commit: $(cat "$here/commit" | tr '\n' ' ')"
	echo "gpu: $(timeout -k 5 30 nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
	echo "cuda: $(timeout -k 5 30 nvidia-smi 2>/dev/null | grep -o 'CUDA Version: [0-9.]*' | head -1)"
	echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs"
	echo "python: $(timeout -k 5 60 python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' 2>&1 | tail -1)"
	timeout -k 5 30 ./ptb devices 2>&1 | sed 's/^/devices: /'
} > "$out/env.txt" 2>&1
cat "$out/env.txt"

echo "== correctness" >&2
step 60 env NSRNN_TEST_REQUIRE_GPU=1 ./cuda.test -test.v -test.count 1 > "$out/tests.log" 2>&1
echo "exit $?" >> "$out/tests.log"
step 150 env NSRNN_TEST_REQUIRE_GPU=1 ./nsrnn.test -test.v -test.count 1 -test.run 'GPU|CUDA|Device' \
	-test.skip 'TestGPUPersistentLSTM' >> "$out/tests.log" 2>&1
echo "exit $?" >> "$out/tests.log"
# The persistent LSTM kernels' grid barrier, first crossed on a card here,
# under a limit of its own: a hang would not cost the tests above.
step 40 env NSRNN_TEST_REQUIRE_GPU=1 ./nsrnn.test -test.v -test.count 1 -test.run 'TestGPUPersistentLSTM' >> "$out/tests.log" 2>&1
echo "exit $?" >> "$out/tests.log"
# Their speed is measured below only if they passed.
persistent=""
grep -q -- '^--- PASS: TestGPUPersistentLSTMMatchesCPU' "$out/tests.log" && persistent="persistent persistent8"
# And the output layer on a second stream (the default) only if the two
# streams' tests passed: a join that stalls on the card would hold every
# benchmark to its time limit. Otherwise everything runs on one stream.
if ! grep -q -- '^--- PASS: TestSideStream' "$out/tests.log" || ! grep -q -- '^--- PASS: TestGPUPipelinedOutput' "$out/tests.log"; then
	export NSRNN_CUDA_PIPELINE=0
	echo "pipeline: off (TestSideStream or TestGPUPipelinedOutput did not pass)" >> "$out/env.txt"
fi
grep -E '^(--- |ok|FAIL|PASS|exit)' "$out/tests.log" | grep -v -- '--- PASS' | head -40 >&2
summarize

echo "== speed: the nondeterministic stacks and the CFL step" >&2
: > "$out/bench.log"
: > "$out/torch.log"
# RNS 1-2 and RNS 3-4 on PTB (their state crosses between host and device
# at every chunk, in log space).
step 90 ./nsrnn.test -test.run XXX -test.benchtime 30x \
	-test.bench 'GPU(Train|Eval)PTB/rns-(1-2|3-4)(-f32)?/B32' >> "$out/bench.log" 2>&1
# The same with the output layer after the recurrence on one stream
# (NSRNN_CUDA_PIPELINE=0), named model+serial: the stack kernels fill more
# of the card than the LSTM's steps, so the second stream may gain less.
step 60 env NSRNN_CUDA_PIPELINE=0 ./nsrnn.test -test.run XXX -test.benchtime 30x \
	-test.bench 'GPU(Train|Eval)PTB/rns-(1-2|3-4)/B32' 2>&1 |
	sed -E "s#^(BenchmarkGPU(Train|Eval)PTB/[^/]+)/#\\1+serial/#" >> "$out/bench.log"
# The CFL step (sentence mode, batch 10, length 60) on the GPU and on two
# of this machine's cores.
step 40 ./nsrnn.test -test.run XXX -test.benchtime 50x -test.bench 'GPUTrainStepCFL' >> "$out/bench.log" 2>&1
step 40 env GOMAXPROCS=2 taskset -c 0,1 ./nsrnn.test -test.run XXX -test.benchtime 20x \
	-test.bench '^BenchmarkTrainStep$/^(lstm|rns|rns-Q3)$' >> "$out/bench.log" 2>&1
grep -E 'Benchmark' "$out/bench.log" >&2
summarize

echo "== programs" >&2
{
	# The CFL epoch of the speed goal: RNS |Q| = 2, |Γ| = 3, 200 + 50
	# strings of marked reversal, on the GPU and on two of this machine's
	# cores.
	for dev in cuda cpu; do
		echo "\$ cfl train --device $dev (rns 2-3, marked reversal, three epochs of 200 + 50 strings)"
		pin=""
		[ $dev = cpu ] && pin="taskset -c 0,1"
		step 50 $pin ./cfl train --task marked-reversal --model rns --states 2 --symbols 3 --lr 0.005 \
			--train-size 200 --valid-size 50 --epochs 3 --device $dev --out runs/cfl-rns-$dev 2>&1 | tail -2
		grep -o '"epoch_seconds":[0-9.]*' runs/cfl-rns-$dev/log.jsonl
	done
	echo "\$ ptb train --device cuda (lstm-256, one epoch, float32)"
	{
		step 60 ./ptb train --data ptb-data --model lstm --hidden 256 --lr 20 --clip 0.25 --epochs 1 \
			--precision float32 --device cuda --out runs/ptb-lstm 2>&1
		echo $? > rc
	} | tail -5
	echo "exit $(cat rc)"
	echo "\$ run.json"; cat runs/ptb-lstm/run.json
	echo "\$ ptb eval --device cuda"
	step 30 ./ptb eval --model runs/ptb-lstm --split test --device cuda 2>&1 | tail -3
	echo "\$ ptb eval --device cpu (the same run on the CPU)"
	step 40 ./ptb eval --model runs/ptb-lstm --split test --device cpu 2>&1 | tail -3
	echo "\$ cfl train --device cuda (lstm, marked reversal, two epochs of 200 + 50 strings)"
	{
		step 30 ./cfl train --task marked-reversal --model lstm --hidden 20 --lr 0.005 --train-size 200 --valid-size 50 \
			--epochs 2 --device cuda --out runs/cfl-lstm 2>&1
		echo $? > rc
	} | tail -4
	echo "exit $(cat rc)"
	grep -o '"epoch_seconds":[0-9.]*' runs/cfl-lstm/log.jsonl
} > "$out/e2e.log" 2>&1
cat "$out/e2e.log" >&2
summarize

echo "== profiles" >&2
# Where the time goes: every kernel, product and copy of the same
# benchmarks timed on the device's clock (NSRNN_CUDA_PROFILE=1), launched
# one by one; profile.txt has a table per benchmark (the last one of each
# name is the timed run's).
# (-test.bench splits its pattern at slashes, one part per level: the CFL
# step is a run of its own.)
step 90 env NSRNN_CUDA_PROFILE=1 NSRNN_CUDA_PROFILE_OUT="$out/profile.txt" ./nsrnn.test -test.run XXX -test.benchtime 10x \
	-test.bench 'GPU(Train|Eval)PTB/(lstm-256|jm-247|rns-1-2|rns-3-4)(-f32)?/B32$' > /dev/null 2>&1
step 30 env NSRNN_CUDA_PROFILE=1 NSRNN_CUDA_PROFILE_OUT="$out/profile.txt" ./nsrnn.test -test.run XXX -test.benchtime 10x \
	-test.bench 'GPUTrainStepCFL' > /dev/null 2>&1
# The fused LSTM step's profile, apart (the tables are keyed by name).
step 30 env NSRNN_CUDA_LSTM_STEP=fused NSRNN_CUDA_PROFILE=1 NSRNN_CUDA_PROFILE_OUT="$out/profile-fused.txt" ./nsrnn.test -test.run XXX \
	-test.benchtime 10x -test.bench 'GPU(Train|Eval)PTB/lstm-256(-f32)?/B32$' > /dev/null 2>&1
# And the persistent kernel's (a chunk of a layer in one launch).
[ -n "$persistent" ] && step 30 env NSRNN_CUDA_LSTM_STEP=persistent NSRNN_CUDA_PROFILE=1 NSRNN_CUDA_PROFILE_OUT="$out/profile-persistent.txt" ./nsrnn.test -test.run XXX \
	-test.benchtime 10x -test.bench 'GPU(Train|Eval)PTB/lstm-256(-f32)?/B32$' > /dev/null 2>&1
grep -E '^(==|total|per token)' "$out/profile.txt" >&2
summarize

echo "== speed: LSTM-256 and JM-247 beside PyTorch" >&2
# Each round puts first what the goals need: the default engine, PyTorch
# at B = 32, the second stream against one, the persistent and fused
# steps; the other variants and B = 256 come after, the rarer ones in the
# first round only, so that a check that runs short loses the least.
# torch B: PyTorch's training and evaluation at batch B, into torch.log.
torch() {
	for kind in train eval; do
		echo "round $round $kind B$1: $(step 30 env DEVICE=cuda BATCH=$1 python3 "$here/torch_lm.py" "$kind" ptb-data/ptb.train.txt 2>&1 | tail -1)" >> "$out/torch.log"
	done
}
# variant NAME LIMIT N PATTERN VAR=VALUE…: the benchmarks of PATTERN, N
# times each, with the environment given, named model+NAME in bench.log.
variant() {
	name=$1 lim=$2 n=$3 pattern=$4
	shift 4
	step "$lim" env "$@" ./nsrnn.test -test.run XXX -test.benchtime "$n" -test.bench "$pattern" 2>&1 |
		sed -E "s#^(BenchmarkGPU(Train|Eval)PTB/[^/]+)/#\\1+$name/#" >> "$out/bench.log"
}
for round in 1 2; do
	echo "round $round" >> "$out/bench.log"
	step 60 ./nsrnn.test -test.run XXX -test.benchtime 100x \
		-test.bench 'GPU(Train|Eval)PTB/(lstm-256|jm-247)' >> "$out/bench.log" 2>&1
	torch 32
	# The output layer on one stream after the recurrence
	# (NSRNN_CUDA_PIPELINE=0), against the default that runs it beside
	# the recurrence on a second stream.
	variant serial 30 100x "GPU(Train|Eval)PTB/(lstm-256|jm-247)(-f32)?/B32" NSRNN_CUDA_PIPELINE=0
	# The fused LSTM steps (NSRNN_CUDA_LSTM_STEP=fused, fused2, fused8: 4,
	# 2 and 8 batch rows per warp; persistent, persistent8: a chunk's
	# steps in one launch, LSTM-256 only) in the same round; JM-247 with
	# the first only; fused2, fused8 and persistent8 in the first round
	# only.
	variants="${persistent%% *} fused"
	[ $round = 1 ] && variants="$persistent fused fused2 fused8"
	for v in $variants; do
		models='lstm-256|jm-247'
		[ $v = fused ] || models='lstm-256'
		variant $v 30 100x "GPU(Train|Eval)PTB/($models)(-f32)?/B32" NSRNN_CUDA_LSTM_STEP=$v
	done
	# Training with the fused steps in both directions (NSRNN_CUDA_LSTM_BACK
	# too).
	variant fused-both 30 100x "GPUTrainPTB/(lstm-256|jm-247)(-f32)?/B32" NSRNN_CUDA_LSTM_STEP=fused NSRNN_CUDA_LSTM_BACK=fused
	torch 256
	# Every product in cuBLAS (NSRNN_CUDA_SMALL_PRODUCTS=0), for comparison
	# with the engine's kernels for the narrow ones.
	variant cublas 40 50x 'GPU(Train|Eval)PTB/(jm-247|rns-1-2)/B32' NSRNN_CUDA_SMALL_PRODUCTS=0
	[ $round = 1 ] && step 40 env NSRNN_CUDA_GRAPHS=0 ./nsrnn.test -test.run XXX -test.benchtime 100x \
		-test.bench 'GPU(Train|Eval)PTB/(lstm-256|jm-247)/B32' > "$out/bench-nographs.log" 2>&1
done
cat "$out/bench.log" "$out/torch.log" "$out/bench-nographs.log" | grep -E 'tokens/s|Benchmark' >&2

python3 "$here/summarize.py" "$out" >&2
echo "check finished with $(( deadline - $(date +%s) )) s of its budget left" >&2
rm -rf "$work"
