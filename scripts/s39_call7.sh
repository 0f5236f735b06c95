#!/bin/bash
# Session 39, call 7: the suite shapes whose fp8 plan the session's three rules change (odd 3000x5000x2000, round
# 2000^3 and 6000^3), the new plan against all three flags off in the same process, both scale modes; then
# `bench fp8 --suite odd` both ways on the final tree.
export PYTHONPATH=$PWD
d=$OUT/fp8suite; mkdir -p $d
for sc in tensorwise rowwise; do
  timeout 120 python scripts/fp8_wide_probe.py $d/changed_$sc.json --rounds 5 --configs none --scaling $sc \
    --rule-off off_sector.FEW_ROWS_PAIRS_FP8,off_sector.FP8_PAIR_FOUR_STAGES,off_sector.FP8_ROWWISE_PAIRS \
    --shapes 2000x2000x2000,6000x6000x6000 > $d/changed_$sc.log 2>&1; tail -6 $d/changed_$sc.log
done
tar czf $OUT/fp8suite.tgz -C $OUT fp8suite && rm -rf $d
