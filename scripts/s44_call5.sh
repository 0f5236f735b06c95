#!/bin/bash
# Session 44, call 5: 256-row tiles with two-part widths (two warpgroups of 128 rows x 128 + 16/32/64 columns:
# 256x144, 256x160, 256x192), which the config checks refuse (scripts/tall_rows_probe.diff lifts them on the device
# copy only), forced against the plan on shapes where their tile count fits one wave of 132 SMs and the plan's
# 128x160 / 128x128 tiles spill into a second (cuBLAS runs 192x192 / 256x160 tiles there). scripts/few_wave_probe.py:
# after an L2 flush and back to back, 2 rounds, with each variant's error against fp32.
export PYTHONPATH=$PWD
mkdir -p $OUT/c5
git apply scripts/tall_rows_probe.diff || exit 1
timeout 500 python scripts/few_wave_probe.py $OUT/c5/tall_rows.json \
  1901x2408x2512,2147x1880x2536,2970x1544x3040,3416x1312x2176,994x5136x4416,1735x2904x2672,2276x2288x1872,\
1536x4096x4096,3072x3072x3072,3000x5000x2000,1280x6912x4096,2560x2560x2560 --rounds 2 \
  --configs 256x144x64_s3_w8_g8_c9,256x160x64_s3_w8_g8_c5,256x192x64_s3_w8_g8_c6 > $OUT/c5/tall_rows.log 2>&1
echo "rc=$?"; grep -v Warn $OUT/c5/tall_rows.log | tail -14
python - $OUT/c5/tall_rows.json <<'PY'
import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    print(r["shape"], {k: f"{v:.1e}" for k, v in r["rel_error_vs_fp32"].items()})
PY
git checkout warpgemm/config.py
