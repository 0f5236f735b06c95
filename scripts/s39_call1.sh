#!/bin/bash
# Session 39, call 1: the three experiments session 38 prepared (notes/perf.md, end of its section).
export PYTHONPATH=$PWD
mkdir -p $OUT/fp8few $OUT/under
# 1. fp8 at 129-511 rows with rows off sectors (K = 16 mod 32): the cluster pairs forced, against the plan.
timeout 170 python scripts/fp8_wide_probe.py $OUT/fp8few/fp8few.json --rounds 2 \
  --configs 128x256x128_s4_w8_g16_c4_cm2,128x256x128_s3_w8_g16_cm2 \
  --shapes 299x28496x5584,510x8912x1296,400x14512x6384,494x30128x4720,383x25808x4368,288x19584x4016,385x24752x2864,162x20592x2064 \
  > $OUT/fp8few/fp8few.log 2>&1; tail -14 $OUT/fp8few/fp8few.log
# 2. The few-rows pair before swap_rows' tiles from 129 rows (against 257), seed 106.
AB_MODES="base: p129:warpgemm.off_sector.PAIRS_OVER_SWAP_ROWS_MIN_M=129" AB_TIMING="flush" AB_REPS=2 AB_TIMEOUT=100 \
AB_SHAPES=156x15064x7480,133x31776x7720,139x12720x1816,136x14408x4264,173x31400x5336,134x15576x2024,136x30104x1208,129x25400x2760 \
  bash scripts/setting_ab.sh $OUT/swap129 2>&1 | tee $OUT/swap129_summary.txt | tail -14
# 3. Off-sector shapes under a wave at 3 tile-rows (and one at 2), forced tiles.
timeout 150 python scripts/few_wave_probe.py $OUT/under/under.json 351x3600x3976,372x3640x2728,269x3384x1064,134x3392x7320 \
  --rounds 2 --configs 128x128x64_s6_w4_g8_cm2,64x128x64_s8_w4_g8_cm2,128x128x64_s6_w4_g8,128x256x64_s4_w8_g16_c4_cm2,64x256x64_s4_w4_g8_cm2 \
  > $OUT/under/under.log 2>&1; tail -30 $OUT/under/under.log
