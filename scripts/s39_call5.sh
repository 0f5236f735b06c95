#!/bin/bash
# Session 39, call 5: the row-wise fp8 pair's wave guard (off_sector.FP8_ROWWISE_PAIR_WAVE_RATIO = 1.4). Seed 115:
# 8 shapes the guard refuses (pairs over 1.4x the plain tile's waves) and 6 it keeps at 1.15-1.4x; each timed with its
# plan, the pair forced and the plain 4-stage tile forced. Then the fp8 GPU tests.
export PYTHONPATH=$PWD
d=$OUT/rwguard; mkdir -p $d
timeout 240 python scripts/fp8_wide_probe.py $d/rw115.json --rounds 3 --scaling rowwise \
  --configs 128x256x128_s4_w8_g16_c4_cm2,128x256x128_s4_w8_g8_c4 \
  --shapes 524x13312x7344,822x9392x7440,621x6064x2192,2103x3792x2672,1664x4672x1296,808x4112x1296,1306x2864x1328,1116x6976x2224,2934x4240x2224,607x18976x2576,2838x4192x1680,1637x9840x1040,617x17616x1136,2170x7808x3024 \
  > $d/rw115.log 2>&1; cat $d/rw115.log | tail -44
timeout 200 python -m pytest -q tests/test_gpu_fp8.py 2>&1 | tail -3
tar czf $OUT/rwguard.tgz -C $OUT rwguard && rm -rf $d
