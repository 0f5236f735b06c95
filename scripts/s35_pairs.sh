#!/bin/bash
# Session 35, call 1: the two-part cluster pairs (128x192 / 128x160 with cluster_m=2) on the GPU: correctness, then
# against the current off-sector plan (the 128x256 pair) on the off-sector shapes of session 34 (seed 81) and `round`.
export PYTHONPATH=$PWD
nvidia-smi --query-gpu=name,power.limit --format=csv,noheader
timeout 200 python -m pytest -q -x tests/test_gpu_clusters.py -k "192 or 160 or heuristics" 2>&1 | tail -4
SHAPES=1000x5000x3000,3000x3000x3000,4435x1304x2328,3361x2632x2360,2483x1608x5800,3380x1272x6664,2116x2616x1240,850x9512x1368,1876x2256x3032,2605x1920x6600,1917x2176x2952,3498x1056x2232,2453x1544x2632,965x8504x2776,613x7976x4664,1027x3600x3752
timeout 370 python scripts/few_wave_probe.py $OUT/pairs_found.json $SHAPES --rounds 2 \
  --configs 128x192x64_s4_w8_g16_c3_cm2,128x160x64_s5_w8_g8_c5_cm2 2>&1 | grep -v Warn
