#!/bin/bash
# Session 36, call 2: the N-major pair rule as committed (off_sector.N_MAJOR_PAIRS with N_MAJOR_PAIR_NO_EXTRA_WAVE,
# since replaced by N_MAJOR_PAIR_WAVE_RATIO),
# held out on 14 fresh nn shapes (seed 88) where it changes the plan, against N_MAJOR_PAIRS=False; whether the pair
# should also replace the one-partition rule's plans (N_MAJOR_PAIRS_OVER_ONE_PARTITION, 9 short-K shapes, seed 89 and
# 1000^3); the cluster GPU tests.
export PYTHONPATH=$PWD
OUT=${1:-results/latest}
timeout 150 python -m pytest -q tests/test_gpu_clusters.py 2>&1 | tail -3
LAYOUT=nn AB_MODES="new: old:warpgemm.off_sector.N_MAJOR_PAIRS=False" AB_TIMING="flush b2b" AB_REPS=1 AB_TIMEOUT=120 \
AB_SHAPES=2140x7240x3744,1269x21528x1136,3321x16232x2128,1429x32216x2024,3331x5624x5952,1221x15496x4384,1837x22968x4592,1002x16248x7776,4040x12072x1512,1410x6808x1144,1475x32104x6328,2658x32216x4736,3722x18312x1224,2060x17800x4176 \
  bash scripts/setting_ab.sh $OUT/nn_heldout88 > $OUT/nn_heldout88_summary.txt 2>&1; tail -36 $OUT/nn_heldout88_summary.txt
rm -f $OUT/nn_heldout88/*.log
LAYOUT=nn AB_MODES="pair:warpgemm.off_sector.N_MAJOR_PAIRS_OVER_ONE_PARTITION=True flat:" AB_TIMING="flush b2b" AB_REPS=1 \
AB_TIMEOUT=90 AB_SHAPES=1000x1000x1000,658x824x960,237x2536x912,221x2104x528,386x1224x888,254x2072x696,370x1960x264,209x3016x920,229x3304x680 \
  bash scripts/setting_ab.sh $OUT/nn_flat89 > $OUT/nn_flat89_summary.txt 2>&1; tail -24 $OUT/nn_flat89_summary.txt
rm -f $OUT/nn_flat89/*.log
# Eight files come back from a call: the second A/B's JSONs travel as one archive.
tar -C $OUT -czf $OUT/nn_flat89.tgz nn_flat89 && rm -rf $OUT/nn_flat89
