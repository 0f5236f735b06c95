#!/bin/bash
# Session 44, call 2: swap-AB tiles past 1000 rows of x (swap_rows._wide_rows_config with SWAP_WIDE_ROWS_MIN_M=1000)
# held out: 14 fresh shapes (seed 440, M 1000-4096, N 1024-32768, K 1024-8192, at most 250 GFLOP) where the rule changes
# the plan; the rule off (base) against on, one process a setting, alternating, back to back (b2b: CUDA graphs over cold weight copies).
export PYTHONPATH=$PWD
mkdir -p $OUT/c2
AB_MODES="base: rule:warpgemm.swap_rows.SWAP_WIDE_ROWS_ENABLED=True,warpgemm.swap_rows.SWAP_WIDE_ROWS_MIN_M=1000" \
AB_TIMING=b2b AB_REPS=2 AB_ROUNDS=3 AB_TIMEOUT=170 \
AB_SHAPES=1247x11680x5536,1029x15128x1072,1727x6016x8000,1023x5376x6224,2085x17760x1600,1907x3296x7568,\
3780x1408x2000,1566x25912x5840,2251x7840x1408,3801x10104x3792,3501x5232x1984,3108x4520x1232,3101x1720x6144,\
2257x3608x7584 \
bash scripts/setting_ab.sh $OUT/c2 2>&1 | tee $OUT/c2/table.txt
