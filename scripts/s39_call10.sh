#!/bin/bash
# Session 39, call 10: few tiles over a long K taking split 128x128 tiles (few_tiles_split.FEW_TILES_SPLIT) held out
# against the flag off, one process each, after a flush and back to back: seed 119 (12 shapes, B = W.T) and seed 120
# (8 shapes, B row-major). Then the GPU tests of the split configs (now shipped).
export PYTHONPATH=$PWD
AB_MODES="new: old:warpgemm.few_tiles_split.FEW_TILES_SPLIT=False" AB_TIMING="flush b2b" AB_REPS=1 AB_TIMEOUT=120 \
AB_SHAPES=158x1200x6200,150x1736x6224,85x1048x14328,81x1672x15616,90x2016x6648,68x1784x14368,88x1304x6960,260x1096x6680,110x1400x4888,175x1064x8400,151x1488x7600,149x1176x6424 \
  bash scripts/setting_ab.sh $OUT/split119 2>&1 | tee $OUT/split119_summary.txt | tail -34
LAYOUT=nn AB_MODES="new: old:warpgemm.few_tiles_split.FEW_TILES_SPLIT=False" AB_TIMING="flush b2b" AB_REPS=1 AB_TIMEOUT=120 \
AB_SHAPES=188x1512x15120,109x1992x10520,84x1856x4336,69x2152x4896,137x1624x12224,67x2664x4448,108x1352x13912,145x1208x4824 \
  bash scripts/setting_ab.sh $OUT/split120nn 2>&1 | tee $OUT/split120nn_summary.txt | tail -24
timeout 150 python -m pytest -q tests/test_gpu_gemm.py -k "sk4" 2>&1 | tail -3; timeout 120 python -m pytest -q tests/test_gpu_few_tiles_split.py 2>&1 | tail -3
tar czf $OUT/split.tgz -C $OUT split119 split120nn && rm -rf $OUT/split119 $OUT/split120nn
