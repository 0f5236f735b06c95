#!/bin/bash
# Session 43, call 5: swap-AB two-part tiles (x's rows on wgmma's N side, 144/160/192 wide) against the plan on
# 512+-row shapes where x's rows fit those widths better than 128-row tiles do (few_wave_probe.py --configs).
export PYTHONPATH=$PWD
mkdir -p $OUT/c5
timeout 500 python scripts/few_wave_probe.py $OUT/c5/swapwide.json \
  1735x2904x2672,3416x1312x2176,573x4096x11008,545x4096x14336,1536x1536x1536,2560x2560x2560,542x8192x28672,\
1901x2408x2512,1024x2304x4096,2276x2288x1872,2970x1544x3040,994x5136x4416 --rounds 3 \
  --configs 128x144x64_s5_w8_g8_c9_swap,128x160x64_s5_w8_g8_c5_swap,128x192x64_s4_w8_g8_c3_swap 2>&1 | grep -v Warn | tee $OUT/c5/swapwide.log
