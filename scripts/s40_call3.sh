#!/bin/bash
# Session 40, call 3: A tiles in 32-row pieces where the last tile-row runs more than 32 rows past A's end
# (gemm.edge_pieces, partitions.load_a). (a) partial_rows_probe again: `rows` (now in pieces) against `pad0`;
# (b) the rule on against off (EDGE_MIN_EMPTY_ROWS huge) on the LLM scan's weak shapes and controls;
# (c) GPU correctness: gemm, fuzz, swap rows, clusters, fp8 shapes.
export PYTHONPATH=$PWD
d=$OUT/s40c3; mkdir -p $d
timeout 100 python scripts/partial_rows_probe.py $d/p128.json --m 259,320,389,448,512 --nk 4096x14336 2>&1 | tail -5
timeout 60 python scripts/partial_rows_probe.py $d/p64.json --m 65,67,96,128 --nk 4096x14336 --config 64x64x128_s6_w4_g8 2>&1 | tail -4
AB_MODES="pieces: off:warpgemm.kernels.hopper.gemm.EDGE_MIN_EMPTY_ROWS=100000" AB_TIMING=flush AB_REPS=2 AB_TIMEOUT=120 \
AB_SHAPES=389x4096x14336,139x5120x13824,67x4096x14336,385x14336x4096,421x8192x8192,130x8192x8192,259x4096x14336,332x13656x5736,189x19368x8120,650x24504x4400,777x4096x11008,952x5120x5120 \
  bash scripts/setting_ab.sh $d/ab > $d/ab_summary.txt 2>&1; tail -18 $d/ab_summary.txt
timeout 330 python -m pytest -q -x tests/test_gpu_gemm.py tests/test_gpu_fuzz.py tests/test_gpu_swap_rows.py tests/test_gpu_clusters.py tests/test_gpu_wide.py > $d/pytest.log 2>&1; tail -4 $d/pytest.log
tar czf $OUT/s40c3.tgz -C $OUT s40c3 && rm -rf $d
