#!/bin/bash
# Session 40, call 6: the GPU tests on the final tree (every kernel's signature gained A_PIECES), then call 1's LLM
# scan (seed 121) again on the same shapes.
export PYTHONPATH=$PWD
d=$OUT/s40c6; mkdir -p $d
run() { local name=$1 t=$2; shift 2; timeout $t python -m pytest -q "$@" > $d/$name.log 2>&1; echo "$name: $(tail -1 $d/$name.log)"; }
run gemm 170 tests/test_gpu_gemm.py
run more 200 tests/test_gpu_swap_rows.py tests/test_gpu_clusters.py tests/test_gpu_wide.py tests/test_gpu_few_tiles_split.py tests/test_gpu_edge_pieces.py
run fp8 90 tests/test_gpu_fp8.py -k "shapes or off_sectors or cm2 or bitwise"
timeout 110 python scripts/scan_probe.py $d/llm121.json --count 32 --seed 121 --rounds 2 --llm > $d/llm121.log 2>&1; grep geomean $d/llm121.log
tar czf $OUT/s40c6.tgz -C $OUT s40c6 && rm -rf $d
