#!/bin/bash
# Session 43, call 3: TMA's zero fill past A's last row on the tiles the edge shift leaves alone (row_fill_probe.py),
# on the weakest shapes of call 2's scans.
export PYTHONPATH=$PWD
mkdir -p $OUT/c3
timeout 400 python scripts/row_fill_probe.py $OUT/c3/fill.json --rounds 3 --shapes \
545x4096x14336,542x8192x28672,573x4096x11008,795x5120x13824,583x8192x8192,2997x4096x4096,874x4096x4096,\
282x28672x8192,335x14336x4096,390x5120x5120,345x14336x4096,876x8192x8192,2377x5120x5120,2147x1880x2536,\
1735x2904x2672,1901x2408x2512,963x5232x2744 2>&1 | tee $OUT/c3/fill.log | grep -v Warn
