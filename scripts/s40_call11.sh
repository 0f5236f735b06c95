#!/bin/bash
# Session 40, call 11: the one-partition kernel with edge pieces (gemm.EDGE_PIECES_ONE_PARTITION), forced flat tiles,
# off / on; then its correctness test.
export PYTHONPATH=$PWD
d=$OUT/s40c11; mkdir -p $d
G=warpgemm.kernels.hopper.gemm
for on in False True; do
  echo "one-partition pieces $on"
  timeout 60 python scripts/partial_rows_probe.py $d/flat64_$on.json --m 65,71,96,100,128 --nk 2048x2048 --config 64x64x128_s4_w4_g8_flat --set $G.EDGE_PIECES_ONE_PARTITION=$on 2>&1 | tail -5
  timeout 60 python scripts/partial_rows_probe.py $d/flat32_$on.json --m 65,71,100 --nk 1024x1536 --config 64x32x128_s4_w4_g8_flat --set $G.EDGE_PIECES_ONE_PARTITION=$on 2>&1 | tail -3
done
timeout 100 python -m pytest -q tests/test_gpu_edge_pieces.py > $d/pytest_edge.log 2>&1; tail -1 $d/pytest_edge.log
tar czf $OUT/s40c11.tgz -C $OUT s40c11 && rm -rf $d
