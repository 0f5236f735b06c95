#!/bin/bash
# Session 39, call 3: from 512 rows, does the 4-stage chunked-store 128x256 pair (off_sector.CLUSTER_LARGE_FEW_ROWS,
# FP8_CLUSTER_LARGE_FEW_ROWS) beat the 3-stage one the rule takes there (CLUSTER_LARGE, FP8_CLUSTER_LARGE)? And fp8 with
# row-wise scales, which takes no pair there (unchunked stores), against the chunked pair. Shapes drawn on the CPU
# (seeds 109-112) where the plan is the 3-stage pair (row-wise: the plain 4-stage tile).
export PYTHONPATH=$PWD
d=$OUT/large4; mkdir -p $d
timeout 170 python scripts/fp8_wide_probe.py $d/fp8rw111.json --rounds 3 --scaling rowwise \
  --configs 128x256x128_s4_w8_g16_c4_cm2 \
  --shapes 2859x2128x7280,2270x23376x2128,841x7344x2384,3131x14320x1296,629x5040x1616,839x27648x7248,3673x22256x4336,2285x1744x5072 \
  > $d/fp8rw111.log 2>&1; tail -16 $d/fp8rw111.log
timeout 170 python scripts/fp8_wide_probe.py $d/fp8tw110.json --rounds 3 --configs 128x256x128_s4_w8_g16_c4_cm2 \
  --shapes 3572x3920x5648,857x5440x1808,3413x1712x3824,1537x4464x3504,2024x2672x2192,1470x32032x7088,2576x4992x6768,3920x21872x1520 \
  > $d/fp8tw110.log 2>&1; tail -16 $d/fp8tw110.log
timeout 200 python scripts/few_wave_probe.py $d/bf16nt109.json \
  1649x6184x5288,1307x2656x5864,724x22320x6424,1600x6128x1176,734x14888x4664,1867x1648x4616,4005x21024x4088,1293x4440x1416,557x29304x2344,1149x5480x7912,3426x11184x5224,1528x9696x5352 --rounds 2 --configs 128x256x64_s4_w8_g16_c4_cm2 \
  > $d/bf16nt109.log 2>&1; tail -12 $d/bf16nt109.log
timeout 150 python scripts/few_wave_probe.py $d/bf16nn112.json \
  1392x10296x3712,2192x23352x4880,1152x28824x4656,1793x25176x1440,969x9640x6752,1716x24184x5424,1977x4616x3024,2036x26776x1600 --rounds 2 --nn --configs 128x256x64_s4_w8_g16_c4_cm2 \
  > $d/bf16nn112.log 2>&1; tail -8 $d/bf16nn112.log
tar czf $OUT/large4.tgz -C $OUT large4 && rm -rf $d
