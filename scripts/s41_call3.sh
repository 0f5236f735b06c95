#!/bin/bash
# Session 41, call 3: the 128x160 pair lost 6-21% with no A loads for its phantom tile (call 2) while every other pair
# gained: forced 128x160 pairs in the three modes, off and on sectors; the phantom tests over every pair.
export PYTHONPATH=$PWD
d=$OUT/s41c3; mkdir -p $d
P=warpgemm.kernels.hopper.gemm.PHANTOM_A
timeout 150 python -m pytest -q tests/test_gpu_edge_pieces.py > $d/pytest.log 2>&1; tail -1 $d/pytest.log; grep -E "^(FAILED|ERROR)" $d/pytest.log | head
for s in 0 1 2 0 1 2; do
  timeout 60 python scripts/partial_rows_probe.py $d/w160_$s.json --m 1125,1152 --nk 3488x5816,3488x5824 --config 128x160x64_s5_w8_g8_c5_cm2 --set "$P=$s" --rounds 3 2>&1 | tail -4 | sed "s/^/$s /"
done
for s in 0 2; do
  timeout 60 python scripts/partial_rows_probe.py $d/w192_$s.json --m 1125,1152 --nk 3488x5816 --config 128x192x64_s4_w8_g16_c3_cm2 --set "$P=$s" --rounds 3 2>&1 | tail -2 | sed "s/^/$s /"
done
tar czf $OUT/s41c3.tgz -C $OUT s41c3 && rm -rf $d
