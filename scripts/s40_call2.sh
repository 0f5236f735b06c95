#!/bin/bash
# Session 40, call 2: odd token counts on long-K LLM weights ran 0.61-0.73x cuBLAS (call 1: 139x5120x13824,
# 389x4096x14336, 67x4096x14336), where 373 or 512 rows on the same tile and K run at 1.0-1.04x. Their last tile-row
# holds 3-11 rows. Reading: that tile-row's A loads are almost all zero-fill, so its tiles run ahead of the others on
# the same weight panel, and with the weight's evict-first hint the full tile-rows behind it miss in L2.
# (a) the hint off (WARPGEMM_WEIGHT_HINT=0) against on, nearly empty last tile-rows and controls;
# (b) forced tiles / splits on three of them, hint on and off.
export PYTHONPATH=$PWD
d=$OUT/s40c2; mkdir -p $d
AB_MODES="base: nohint:warpgemm._env.WEIGHT_HINT=False" AB_TIMING=flush AB_REPS=2 AB_TIMEOUT=120 \
AB_SHAPES=389x4096x14336,139x5120x13824,67x4096x14336,385x14336x4096,421x8192x8192,512x4096x14336,373x5120x13824,120x4096x14336,130x8192x8192,259x4096x14336,133x14336x4096,197x4096x11008 \
  bash scripts/setting_ab.sh $d/hint > $d/hint_summary.txt 2>&1; tail -25 $d/hint_summary.txt
C=128x256x64_s3_w8_g8_sk2,128x128x64_s6_w4_g8_sk2,128x128x64_s6_w4_g8_sk4,64x128x64_s8_w4_g8
for h in 1 0; do
WARPGEMM_WEIGHT_HINT=$h timeout 150 python scripts/few_wave_probe.py $d/forced_h$h.json 389x4096x14336,139x5120x13824,67x4096x14336 \
  --rounds 2 --configs $C > $d/forced_h$h.log 2>&1; echo "hint=$h"; tail -3 $d/forced_h$h.log
done
tar czf $OUT/s40c2.tgz -C $OUT s40c2 && rm -rf $d
