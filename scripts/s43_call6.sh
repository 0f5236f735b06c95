#!/bin/bash
# Session 43, call 6: swap-AB tiles past 700 rows of x (swap_rows.SWAP_WIDE_ROWS_MAX_M) held out: 16 shapes drawn at
# random (seed 432, M 701-4096, N 1024-32768, K 1024-8192) where the rule changes the plan, plus the three `odd` shapes
# it changes; the rule off (base) against on, one process a setting, alternating, after an L2 flush.
mkdir -p $OUT/c6
AB_MODES="base:warpgemm.swap_rows.SWAP_WIDE_ROWS_MAX_M=700 rule:" AB_TIMING=flush AB_REPS=2 AB_ROUNDS=3 AB_TIMEOUT=240 \
AB_SHAPES=2480x2256x4064,818x1376x2192,784x1904x2768,3142x1696x1344,2164x6648x1888,1707x2968x5344,862x1344x1264,\
910x17064x1904,1530x3936x2544,987x1960x1408,836x5568x3488,857x2312x2320,1623x2936x2400,4059x1040x3904,1644x2672x1760,\
1760x2448x5744,1536x4096x4096,1536x1536x1536,1024x2304x4096 \
bash scripts/setting_ab.sh $OUT/c6 2>&1 | tee $OUT/c6/table.txt
