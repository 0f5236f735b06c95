#!/bin/bash
# Session 35, call 7: cluster pairs on a weight contiguous along N (B row-major (K, N)): tests, then the 128x256 and
# 128x128 pairs forced against the plan on nn shapes whose rows start off 32-byte sectors.
export PYTHONPATH=$PWD
timeout 150 python -m pytest -q tests/test_gpu_clusters.py -k "along_n or other_layouts" 2>&1 | tail -3
timeout 200 python scripts/few_wave_probe.py $OUT/nn_pairs.json 3000x3000x3000,5000x5000x5000,1000x5000x3000,1099x8568x1704,2483x1608x5800,4096x4104x4096,1500x7000x4096,640x14344x4096 \
  --nn --rounds 2 --configs 128x256x64_s3_w8_g16_cm2,128x128x64_s6_w4_g8_cm2 2>&1 | grep -v Warn
