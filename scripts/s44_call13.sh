#!/bin/bash
# Session 44, call 13: the swap-AB rule from 1000 rows also takes x read along M (A column-major) with a weight read
# along K, a layout its held-out check (calls 1-2) did not time. Call 1's shapes with M rounded up to a multiple of 8
# (x's columns on 16 bytes) where the rule changes the plan for that layout: the plan (rule on) against the plain
# 128x128 tile the rule replaces, forced, and the swap-AB tiles, after a flush and back to back (few_wave_probe.py).
export PYTHONPATH=$PWD
mkdir -p $OUT/c13
timeout 400 python scripts/few_wave_probe.py $OUT/c13/x_m_major.json \
  1248x11680x5536,1728x6016x8000,1024x5376x6224,1568x25912x5840,2256x7840x1408,3808x10104x3792,3504x5232x1984,\
3104x1720x6144 --rounds 2 --x-m-major \
  --configs 128x128x64_s6_w4_g8,128x192x64_s4_w8_g8_c3_swap,128x160x64_s5_w8_g8_c5_swap > $OUT/c13/x_m_major.log 2>&1
echo "rc=$?"; grep -v Warn $OUT/c13/x_m_major.log | tail -8
