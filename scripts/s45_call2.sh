#!/bin/bash
# Session 45, call 2: cluster pairs (B multicast to two CTAs on adjacent tile-rows) on `mid`'s 256- and 512-row
# shapes, against the plan and the same tile unpaired, forced, after a flush and back to back. Session 16 timed pairs
# on `mid` as a whole (geomean, led by M = 128, where a pair leaves half its rows idle); the weight evict-first hint
# (session 33, up to 512 rows) cannot be combined with a pair, so each side keeps one of the two savings.
export PYTHONPATH=$PWD
mkdir -p $OUT/c2
timeout 280 python scripts/few_wave_probe.py $OUT/c2/pairs128.json 512x4096x4096,512x4096x14336,256x8192x8192,256x8192x28672 \
    --rounds 3 --configs 128x128x64_s6_w4_g8,128x128x64_s6_w4_g8_cm2 2>&1 | grep -v Warning
timeout 280 python scripts/few_wave_probe.py $OUT/c2/pairs256.json 256x28672x8192,512x14336x4096,256x14336x4096 \
    --rounds 3 --configs 128x256x64_s4_w8_g8_c4,128x256x64_s4_w8_g16_c4_cm2 2>&1 | grep -v Warning
