#!/bin/bash
# Session 36, call 4: two-part cluster pairs on a weight read along N (GemmConfig.b_pieces_for: rest-wide boxes whole,
# taken by the CTAs in turn) and fitted_pair offering them there (off_sector.N_MAJOR_TWO_PART_PAIRS): the cluster GPU
# tests, then 16 fresh nn shapes (seed 90) where the flag changes the plan, new / N_MAJOR_TWO_PART_PAIRS=False, after
# a flush and back to back; `bench round --layout nn`.
export PYTHONPATH=$PWD
OUT=${1:-results/latest}
timeout 200 python -m pytest -q tests/test_gpu_clusters.py 2>&1 | tail -4
LAYOUT=nn AB_MODES="new: old:warpgemm.off_sector.N_MAJOR_TWO_PART_PAIRS=False" AB_TIMING="flush b2b" AB_REPS=1 AB_TIMEOUT=120 \
AB_SHAPES=852x9016x6352,1172x4808x5584,564x3656x3512,858x9400x4440,1466x6328x1256,569x3864x4928,862x2680x3256,578x4024x3104,1527x3128x4384,1975x2072x2824,1250x7416x1240,1634x3064x3984,2125x2600x7072,1603x2616x7496,3798x1448x6256,3664x2168x4736 \
  bash scripts/setting_ab.sh $OUT/nn_two_part90 > $OUT/nn_two_part90_summary.txt 2>&1; tail -40 $OUT/nn_two_part90_summary.txt
rm -f $OUT/nn_two_part90/*.log
timeout 120 python -m warpgemm bench round --layout nn --rounds 3 --json $OUT/bench_round_nn.json 2>&1 | tail -17
