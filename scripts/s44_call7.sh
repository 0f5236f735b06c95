#!/bin/bash
# Session 44, call 7: in call 6 the plan's own config, forced, read 10-25% slower than the plan back to back (same
# kernel, same constexprs on the CPU) but not after a flush. Is it the probe's order of variants? few_wave_probe.py on
# two shapes with the forced copy alone, then with the forced copy among four variants in another order.
export PYTHONPATH=$PWD
mkdir -p $OUT/c7
S=1901x2408x2512,545x4096x14336
timeout 150 python scripts/few_wave_probe.py $OUT/c7/alone.json $S --rounds 2 --configs 128x160x64_s5_w8_g8_c5 \
  > $OUT/c7/alone.log 2>&1
grep -v Warn $OUT/c7/alone.log | tail -2
timeout 200 python scripts/few_wave_probe.py $OUT/c7/mixed.json $S --rounds 2 \
  --configs 128x192x64_s4_w8_g8_c3_cm2,128x160x64_s5_w8_g8_c5,128x256x64_s3_w8_g8_cm2 > $OUT/c7/mixed.log 2>&1
grep -v Warn $OUT/c7/mixed.log | tail -2
