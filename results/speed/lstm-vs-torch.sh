#!/bin/sh
# LSTM-256 against PyTorch with the threads of both set the same way
# (OPENBLAS_NUM_THREADS for PyTorch's BLAS too), interleaved rounds.
set -e
bin=$1 torch_lm=$2 train=$3
export OPENBLAS_CORETYPE=SkylakeX OMP_WAIT_POLICY=passive
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $(nproc) CPUs; OPENBLAS_CORETYPE=$OPENBLAS_CORETYPE; nsrnn $(git rev-parse --short HEAD)"
for r in 1 2 3; do
  echo "=== round $r"
  OPENBLAS_NUM_THREADS=1 "$bin" -test.run XXX -test.cpu 1 -test.benchtime 10x -test.bench 'Stream(Step|Eval)PTB/lstm-256-f32$' | grep Benchmark
  OPENBLAS_NUM_THREADS=2 "$bin" -test.run XXX -test.cpu 2 -test.benchtime 10x -test.bench 'StreamStepPTB/lstm-256-f32$' | grep Benchmark
  for t in 1 2; do
    for k in train eval; do
      THREADS=$t OPENBLAS_NUM_THREADS=$t /usr/bin/python3 "$torch_lm" $k "$train" 2>&1 | tail -n 1
    done
  done
done
