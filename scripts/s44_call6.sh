#!/bin/bash
# Session 44, call 6: the 128x160 class is bound by L2-to-SM traffic (call 4: our kernel moves 1.3-1.6x cuBLAS's L2
# bytes, which runs 1x2 / 2x1 clusters). Our cluster pairs (two CTAs on adjacent tile-rows share the weight tile by TMA
# multicast) forced against the plan: scripts/few_wave_probe.py, after an L2 flush and back to back, 2 rounds.
export PYTHONPATH=$PWD
mkdir -p $OUT/c6
timeout 500 python scripts/few_wave_probe.py $OUT/c6/pairs.json \
  545x4096x14336,573x4096x11008,542x8192x28672,583x8192x8192,795x5120x13824,1901x2408x2512,2970x1544x3040,\
3416x1312x2176,994x5136x4416,963x5232x2744 --rounds 2 \
  --configs 128x160x64_s5_w8_g8_c5,128x160x64_s5_w8_g8_c5_cm2,128x192x64_s4_w8_g8_c3_cm2,128x256x64_s3_w8_g8_cm2 \
  > $OUT/c6/pairs.log 2>&1
echo "rc=$?"; grep -v Warn $OUT/c6/pairs.log | tail -12
