#!/bin/bash
# Session 41, call 6: every kernel gained the A_PHANTOM constexpr (a per-unit branch in the producer where on): the
# dense, fp8, one-partition and grouped GPU tests on the final tree.
export PYTHONPATH=$PWD
d=$OUT/s41c6; mkdir -p $d
run() { local name=$1 t=$2; shift 2; timeout $t python -m pytest -q "$@" > $d/$name.log 2>&1; echo "$name: $(tail -1 $d/$name.log)"; grep -E "^(FAILED|ERROR)" $d/$name.log | head -5; }
run gemm 300 tests/test_gpu_gemm.py
run fp8 120 tests/test_gpu_fp8.py -k "off_sectors or cm2 or shapes or bitwise"
run other 150 -x tests/test_gpu_one_partition.py tests/test_gpu_grouped.py
tar czf $OUT/s41c6.tgz -C $OUT s41c6 && rm -rf $d
