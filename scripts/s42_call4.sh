#!/usr/bin/env bash
# Session 42, call 4: GPU tests on the tree with the edge shift on by default.
set -u
export PYTHONPATH=$PWD
o=$OUT/c4; mkdir -p $o
run() { local name=$1 t=$2; shift 2; timeout $t python -m pytest -q "$@" > $o/$name.log 2>&1; echo "$name rc=$? $(tail -1 $o/$name.log)"; }
run edge 200 tests/test_gpu_edge_shift.py tests/test_gpu_edge_pieces.py
run gemm 300 -x tests/test_gpu_gemm.py
run more 100 -x tests/test_gpu_swap_rows.py tests/test_gpu_few_tiles_split.py tests/test_gpu_wide.py
cd $OUT && tar czf c4.tgz c4 && rm -rf c4
