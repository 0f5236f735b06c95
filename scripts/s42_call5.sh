#!/usr/bin/env bash
# Session 42, call 5 (run twice; the first run had the offset rounded down, leaving columns unwritten): GPU tests after the shift was made to start at 16-element offsets (call 4: an unaligned TMA
# box start along C's columns was an illegal instruction).
set -u
export PYTHONPATH=$PWD
o=$OUT/c5; mkdir -p $o
run() { local name=$1 t=$2; shift 2; timeout $t python -m pytest -q "$@" > $o/$name.log 2>&1; echo "$name rc=$? $(tail -1 $o/$name.log)"; }
run shift 150 -x tests/test_gpu_edge_shift.py
run gemm 260 -x tests/test_gpu_gemm.py
run more 120 -x tests/test_gpu_swap_rows.py tests/test_gpu_few_tiles_split.py tests/test_gpu_wide.py
cd $OUT && tar czf c5.tgz c5 && rm -rf c5
