#!/bin/bash
# Session 35, call 2: the shipped two-part pairs (off_sector.fitted_pair) on the GPU: the per-config and cluster tests,
# the rule against OFF_SECTOR_TWO_PART_PAIRS=False on 16 fresh off-sector shapes where it changes the plan (seed 83),
# and `bench round`.
export PYTHONPATH=$PWD
timeout 170 python -m pytest -q tests/test_gpu_clusters.py tests/test_gpu_gemm.py -k "cm2 or cluster" 2>&1 | tail -3
AB_MODES="new: old:warpgemm.off_sector.OFF_SECTOR_TWO_PART_PAIRS=False" AB_TIMING="flush b2b" AB_REPS=1 AB_TIMEOUT=120 \
AB_SHAPES=2470x3432x3384,3480x1592x2200,863x21880x1800,1707x2864x5320,835x4528x4008,628x7824x1528,952x5520x6040,1292x5968x4056,2110x4160x4680,699x6112x1864,1458x3960x2232,1788x3176x1080,606x8304x6184,718x28816x1544,1578x5328x3576,590x11752x2968 \
  bash scripts/setting_ab.sh $OUT/heldout 2>&1 | tee $OUT/heldout_summary.txt | tail -45
timeout 120 python -m warpgemm bench round --rounds 3 --json $OUT/bench_round.json 2>&1 | tail -18
