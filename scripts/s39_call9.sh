#!/bin/bash
# Session 39, call 9: few output tiles (18-60 64x128 ones) with long K, the scans' weakest class (0.60-0.78x cuBLAS on
# 64x64x128 tiles): split-K forced (2-4 parts over 64x64, 64x128, 128x128) against the plan.
export PYTHONPATH=$PWD
d=$OUT/fewtiles; mkdir -p $d
C=64x64x128_s6_w4_g8_sk2,64x64x128_s6_w4_g8_sk3,64x64x128_s6_w4_g8_sk4,64x128x64_s8_w4_g8_sk2,64x128x64_s8_w4_g8_sk4,128x128x64_s6_w4_g8_sk4
timeout 250 python scripts/few_wave_probe.py $d/nt.json 104x2832x7816,175x1808x2344,312x1520x2584,88x3488x4152,353x2528x1936,128x4096x14336 \
  --rounds 2 --configs $C > $d/nt.log 2>&1; tail -6 $d/nt.log
timeout 200 python scripts/few_wave_probe.py $d/nn.json 90x1048x6664,204x1352x6224,160x1904x5192 --nn \
  --rounds 2 --configs $C > $d/nn.log 2>&1; tail -3 $d/nn.log
tar czf $OUT/fewtiles.tgz -C $OUT fewtiles && rm -rf $d
