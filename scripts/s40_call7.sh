#!/bin/bash
# Session 40, call 7: test_gpu_gemm on the final tree (call 6's timeout cut it off), `bench round` (its 1000^3 is the
# one suite shape the rule changes), and the one-partition and grouped tests (their kernels gained A_PIECES = 1).
export PYTHONPATH=$PWD
d=$OUT/s40c7; mkdir -p $d
run() { local name=$1 t=$2; shift 2; timeout $t python -m pytest -q "$@" > $d/$name.log 2>&1; echo "$name: $(tail -1 $d/$name.log)"; }
run gemm 320 tests/test_gpu_gemm.py
timeout 120 python -m warpgemm bench round --rounds 3 --json $d/bench_round.json > $d/bench_round.log 2>&1; grep -i "geomean" $d/bench_round.log | tail -2
run other 100 -x tests/test_gpu_one_partition.py tests/test_gpu_grouped.py
tar czf $OUT/s40c7.tgz -C $OUT s40c7 && rm -rf $d
