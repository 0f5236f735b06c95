#!/bin/bash
# Session 40, call 4: the piece size (32 against 16 rows, and the empty-row threshold with it) where the straddling
# piece still reads rows past the end (65-67 rows on 64x64 tiles: 56 us against 52 on rows of zeros); 64x128 tiles;
# then the GPU tests the last call's timeout cut off.
export PYTHONPATH=$PWD
d=$OUT/s40c4; mkdir -p $d
G=warpgemm.kernels.hopper.gemm
for p in 32 16; do
  echo "pieces of $p rows"
  timeout 70 python scripts/partial_rows_probe.py $d/p64_$p.json --m 65,67,80,96,100 --nk 4096x14336 --config 64x64x128_s6_w4_g8 \
    --set $G.EDGE_PIECE_ROWS=$p,$G.EDGE_MIN_EMPTY_ROWS=$p 2>&1 | tail -5
  timeout 70 python scripts/partial_rows_probe.py $d/p128_$p.json --m 259,280,300,400,420 --nk 4096x14336 \
    --set $G.EDGE_PIECE_ROWS=$p,$G.EDGE_MIN_EMPTY_ROWS=$p 2>&1 | tail -5
  timeout 60 python scripts/partial_rows_probe.py $d/p64x128_$p.json --m 197,210,230 --nk 4096x11008 --config 64x128x64_s8_w4_g8 \
    --set $G.EDGE_PIECE_ROWS=$p,$G.EDGE_MIN_EMPTY_ROWS=$p 2>&1 | tail -3
done
timeout 150 python -m pytest -q tests/test_gpu_swap_rows.py tests/test_gpu_clusters.py tests/test_gpu_wide.py tests/test_gpu_few_tiles_split.py tests/test_gpu_variants.py > $d/pytest_a.log 2>&1; tail -2 $d/pytest_a.log
timeout 200 python -m pytest -q tests/test_gpu_fuzz.py > $d/pytest_fuzz.log 2>&1; tail -2 $d/pytest_fuzz.log
tar czf $OUT/s40c4.tgz -C $OUT s40c4 && rm -rf $d
