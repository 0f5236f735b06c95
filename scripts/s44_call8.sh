#!/bin/bash
# Session 44, call 8: calls 5-7's back-to-back column again with few_wave_probe.py fixed (its weight copies now keep
# the weight's layout; before, copies 2..n were B row-major). The plan, its own config forced (a control: should read
# as the plan), 256-row two-part tiles (scripts/tall_rows_probe.diff on the device copy) and cluster pairs, 8 shapes,
# 2 rounds.
export PYTHONPATH=$PWD
mkdir -p $OUT/c8
git apply scripts/tall_rows_probe.diff || exit 1
timeout 500 python scripts/few_wave_probe.py $OUT/c8/fixed.json \
  1901x2408x2512,2970x1544x3040,3416x1312x2176,994x5136x4416,545x4096x14336,2276x2288x1872,1735x2904x2672,963x5232x2744 \
  --rounds 2 --configs \
  128x160x64_s5_w8_g8_c5,256x160x64_s3_w8_g8_c5,256x192x64_s3_w8_g8_c6,128x160x64_s5_w8_g8_c5_cm2,128x192x64_s4_w8_g8_c3_cm2 \
  > $OUT/c8/fixed.log 2>&1
echo "rc=$?"; grep -v Warn $OUT/c8/fixed.log | tail -8
git checkout warpgemm/config.py 2>/dev/null
