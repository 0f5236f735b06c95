#!/bin/bash
# Session 40, call 1: (a) odd token counts on LLM weights (scan_probe --llm: M any integer in 65-4096, (N, K) of
# common LLM projections), the products users' layers make; (b) products just over one wave (1.0-1.25 waves of the
# plan's tiles, K >= 2048; the s39 scan's worst, 189x19368x8120 at 0.635x), forced tiles and splits against the plan.
export PYTHONPATH=$PWD
d=$OUT/s40c1; mkdir -p $d
timeout 300 python scripts/scan_probe.py $d/llm121.json --count 32 --seed 121 --rounds 2 --llm > $d/llm121.log 2>&1
tail -14 $d/llm121.log
C=64x128x64_s8_w4_g8,128x128x64_s6_w4_g8,128x128x64_s6_w4_g8_sk2,64x128x64_s8_w4_g8_sk2,64x192x64_s6_w4_g8_c3_swap,64x256x64_s4_w4_g8_sk2_swap
timeout 260 python scripts/few_wave_probe.py $d/overwave.json \
  189x19368x8120,181x19256x2128,165x20712x8112,136x18784x3344,66x19104x4816,332x13656x5736,128x9160x8040,102x8768x5504 \
  --rounds 2 --configs $C > $d/overwave.log 2>&1; tail -12 $d/overwave.log
tar czf $OUT/s40c1.tgz -C $OUT s40c1 && rm -rf $d
