#!/bin/bash
# Session 39, call 2: the fp8 few-rows pair (off_sector.FEW_ROWS_PAIRS_FP8) held out, against the plan with the flag
# off in the same process (fp8_wide_probe --rule-off), per-tensor (seed 107) and row-wise scales (seed 108); then the
# fp8 GPU tests of the new config.
export PYTHONPATH=$PWD
mkdir -p $OUT/fp8held
timeout 200 python scripts/fp8_wide_probe.py $OUT/fp8held/tensorwise107.json --rounds 3 --configs none \
  --rule-off off_sector.FEW_ROWS_PAIRS_FP8 \
  --shapes 501x10000x2800,407x13984x1712,501x26592x1456,353x23664x5392,442x25456x1104,328x17168x1296,420x24896x6192,336x25680x2416,337x11760x5328,339x30352x4144,348x13488x1872,391x7504x6768 \
  > $OUT/fp8held/tensorwise107.log 2>&1; tail -24 $OUT/fp8held/tensorwise107.log
timeout 150 python scripts/fp8_wide_probe.py $OUT/fp8held/rowwise108.json --rounds 3 --configs none --scaling rowwise \
  --rule-off off_sector.FEW_ROWS_PAIRS_FP8 \
  --shapes 229x29520x1904,415x24576x1264,460x24224x4816,461x26848x1552,376x19632x1520,350x31776x2224,448x4592x7824,493x23248x3696 \
  > $OUT/fp8held/rowwise108.log 2>&1; tail -16 $OUT/fp8held/rowwise108.log
timeout 150 python -m pytest -q tests/test_gpu_fp8.py -k "c4_cm2 or cm2" 2>&1 | tail -3
tar czf $OUT/fp8held.tgz -C $OUT fp8held && rm -rf $OUT/fp8held
