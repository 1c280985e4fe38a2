#!/bin/sh
# One interleaved speed run: the stack kernels, the PTB models and the CFL
# epoch at two commits of this repository (BASE and NEW, default HEAD), and
# the PyTorch reference for PTB, round after round on one machine.
#
#   DATA=DIR TORCH_LM=FILE sh results/speed/run.sh BASE [NEW] > results/speed/run.txt 2>&1
#
# DIR holds the PTB corpus (DIR/ptb/ptb.train.txt); FILE is the PyTorch
# reference script (torch_lm.py, the LSTM-256 language model in PyTorch's
# nn.LSTM). Needs libopenblas-dev and Debian's python3-torch. Pause other
# work on the machine first: the figures are ratios within one round.
set -e
base=$1 new=${2:-HEAD}
[ -n "$base" ] || { echo "usage: $0 BASE [NEW]" >&2; exit 2; }
repo=$(git rev-parse --show-toplevel)
data=${DATA:?set DATA to the directory holding ptb/}
torch_lm=${TORCH_LM:?set TORCH_LM to the PyTorch reference script}
rounds=${ROUNDS:-3}
work=$(mktemp -d)
trap 'rm -rf "$work"; git -C "$repo" worktree prune' EXIT
export OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-SkylakeX}
for v in base new; do
  eval c=\$$v
  git -C "$repo" worktree add -f --detach "$work/$v" "$c" >/dev/null 2>&1
  # The kernel benchmarks of NEW run at both commits where they compile
  # there (they use the package's API and its test helpers), BASE's own
  # otherwise.
  cp "$repo/stacks/internal/nskernel/bench_test.go" "$work/$v/stacks/internal/nskernel/"
  if ! (cd "$work/$v" && go vet ./stacks/internal/nskernel >/dev/null 2>&1); then
    git -C "$work/$v" checkout -- stacks/internal/nskernel/bench_test.go
    echo "$v: its own nskernel benchmarks (NEW's do not compile there)"
  fi
  (cd "$work/$v" && go test -c -o "$work/$v-nskernel.test" ./stacks/internal/nskernel &&
    go test -tags openblas -c -o "$work/$v-nsrnn.test" ./nsrnn &&
    go build -o "$work/$v-cfl" ./experiments/cfl)
  echo "$v: $(git -C "$work/$v" rev-parse HEAD)"
done
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) CPUs; OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE"
for r in $(seq "$rounds"); do
  echo "=== round $r"
  for v in base new; do
    echo "--- $v nskernel (one thread)"
    "$work/$v-nskernel.test" -test.run XXX -test.cpu 1 -test.benchtime 2s \
      -test.bench 'ForwardBackward$|LimitedStream/tokens1000$|LimitedStreamPTB' | grep Benchmark
    echo "--- $v PTB models (float32, OpenBLAS, one thread)"
    OPENBLAS_NUM_THREADS=1 "$work/$v-nsrnn.test" -test.run XXX -test.cpu 1 -test.benchtime 10x \
      -test.bench 'Stream(Step|Eval)PTB/(lstm-256|rns-1-2|rns-3-4)-f32$' | grep Benchmark
    echo "--- $v PTB models (float32, OpenBLAS, two threads)"
    OPENBLAS_NUM_THREADS=2 "$work/$v-nsrnn.test" -test.run XXX -test.cpu 2 -test.benchtime 10x \
      -test.bench 'StreamStepPTB/(lstm-256|rns-1-2|rns-3-4)-f32$' | grep Benchmark
    echo "--- $v two one-thread LSTM-256 training benchmarks at once"
    for i in 1 2; do
      OPENBLAS_NUM_THREADS=1 "$work/$v-nsrnn.test" -test.run XXX -test.cpu 1 -test.benchtime 10x \
        -test.bench 'StreamStepPTB/lstm-256-f32$' > "$work/pair$i" 2>&1 &
    done
    wait
    cat "$work/pair1" "$work/pair2" | grep Benchmark
    for q in 2 3; do
      echo "--- $v CFL epoch: rns |Q| = $q, 200 + 50 strings, two workers"
      rm -rf "$work/cfl"
      "$work/$v-cfl" train --task marked-reversal --model rns --states $q --symbols 3 --lr 0.005 \
        --train-size 200 --valid-size 50 --epochs 3 --quiet --out "$work/cfl" 2>&1 | grep -o 'epoch [0-9] of.*elapsed' || true
      grep -o '"epoch_seconds":[0-9.]*' "$work/cfl/log.jsonl" | tr '\n' ' '; echo
    done
  done
  echo "--- PyTorch reference (two threads, then one)"
  for t in 2 1; do
    for k in train eval; do
      # torch.set_num_threads (THREADS) does not reach Debian's PyTorch's
      # BLAS, OpenBLAS through libblas.so.3: OPENBLAS_NUM_THREADS does.
      OMP_WAIT_POLICY=passive THREADS=$t OPENBLAS_NUM_THREADS=$t /usr/bin/python3 "$torch_lm" $k "$data/ptb/ptb.train.txt" 2>&1 | tail -n 1
    done
  done
done
