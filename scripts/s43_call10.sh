#!/bin/bash
# Session 43, call 10: swap-AB tiles past 700 rows of x in place of 128x128 one-warpgroup
# tiles only, 160 or 192 wide (the narrowed rule) held out: 14 shapes drawn at
# random (seed 433, M 701-4096, N 1024-32768, K 1024-8192) where the rule changes the plan, plus the `odd` shape it
# changes; the rule off (base) against on, one process a setting, alternating, back to back (b2b timing: CUDA graphs over cold weight copies), the timing call 7 did not run.
mkdir -p $OUT/c10
AB_MODES="base:warpgemm.swap_rows.SWAP_WIDE_ROWS_MAX_M=700 rule:" AB_TIMING=b2b AB_REPS=2 AB_ROUNDS=3 AB_TIMEOUT=240 \
AB_SHAPES=713x12920x1264,2659x2296x1488,3135x3280x7568,872x6248x6128,3597x1648x2368,1092x8672x1360,\
2742x2072x1344,2183x2320x4192,814x6184x2640,1902x2976x1872,767x17768x1344,3547x1448x1648,1915x3264x1984,2699x6576x1264,\
1536x4096x4096 \
bash scripts/setting_ab.sh $OUT/c10 2>&1 | tee $OUT/c10/table.txt
