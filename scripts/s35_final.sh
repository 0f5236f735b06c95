#!/bin/bash
# Session 35, call 3: the final rule (off_sector.fitted_pair with WIDE_MIN_GAIN) held out on 16 fresh off-sector shapes
# where it changes the plan (seed 84), against OFF_SECTOR_TWO_PART_PAIRS=False; the cluster tests; `bench round`.
export PYTHONPATH=$PWD
timeout 170 python -m pytest -q tests/test_gpu_clusters.py tests/test_gpu_gemm.py -k "cm2 or cluster" 2>&1 | tail -3
AB_MODES="new: old:warpgemm.off_sector.OFF_SECTOR_TWO_PART_PAIRS=False" AB_TIMING="flush b2b" AB_REPS=1 AB_TIMEOUT=120 \
AB_SHAPES=770x5760x3224,2763x1712x2888,779x4424x1880,1587x5128x1096,678x6848x3688,691x6360x6504,879x5776x2376,936x4936x7448,1248x3360x1112,1606x2696x6680,1318x3224x5320,1537x2968x2072,613x11592x3912,1403x6096x3208,708x7240x1880,795x5064x3608 \
  bash scripts/setting_ab.sh $OUT/heldout84 > $OUT/heldout84_summary.txt 2>&1; tail -42 $OUT/heldout84_summary.txt
rm -f $OUT/heldout84/*.log
timeout 120 python -m warpgemm bench round --rounds 3 --json $OUT/bench_round.json 2>&1 | tail -17
