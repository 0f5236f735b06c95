#!/bin/bash
# Session 39, call 6: the row-wise fp8 pair's wave guard at 1.2 against 1.4: seed 116, 10 shapes where the two differ,
# the plan (at 1.4: the pair) against the plain 4-stage tile forced (what 1.2 runs). Then the fp8 GPU tests of the pairs.
export PYTHONPATH=$PWD
d=$OUT/rw116; mkdir -p $d
timeout 200 python scripts/fp8_wide_probe.py $d/rw116.json --rounds 3 --scaling rowwise --configs 128x256x128_s4_w8_g8_c4 \
  --shapes 805x18640x2224,625x18480x2800,1358x12144x2704,554x23760x2160,1046x10016x3056,1625x10208x1648,800x13872x3056,3167x5184x6096,843x14128x2576,893x17232x7568 \
  > $d/rw116.log 2>&1; tail -20 $d/rw116.log
timeout 200 python -m pytest -q tests/test_gpu_fp8.py -k "off_sectors or cm2 or shapes or bitwise" 2>&1 | tail -3
tar czf $OUT/rw116.tgz -C $OUT rw116 && rm -rf $d
