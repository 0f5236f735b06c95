#!/bin/bash
# Needs scripts/defer_store_probe.diff applied first (git apply; the product code was reverted after this call).
# Session 45, call 1: a whole tile's store deferred under the next tile's first wgmma (WARPGEMM_DEFER_STORE=1,
# gemm.defer_store). First the seeded fuzz and variant suites with it on (correctness: many tiles per program, bias,
# edge shifts, pairs), then the setting against the default, one process a setting, alternating, after an L2 flush, on
# dense shapes of many waves and short-K shapes of many tiles (where an exposed epilogue is the largest share).
export PYTHONPATH=$PWD
mkdir -p $OUT/c1
WARPGEMM_DEFER_STORE=1 timeout 170 python -m pytest -q -x -n 4 tests/test_gpu_fuzz.py tests/test_gpu_variants.py \
    > $OUT/c1/pytest.log 2>&1
echo "pytest rc=$?"; tail -3 $OUT/c1/pytest.log
AB_MODES="base: defer:warpgemm._env.DEFER_STORE=True" AB_TIMING=flush AB_REPS=2 AB_ROUNDS=3 AB_TIMEOUT=100 \
AB_SHAPES=8192x8192x8192,4096x4096x4096,4096x14336x4096,16384x4096x4096,1024x14336x4096,4096x28672x8192,\
2048x2048x2048,1067x29024x1440,823x17176x1432,2526x23368x1256,1184x29056x1048,4096x8192x1024,8192x8192x2048 \
bash scripts/setting_ab.sh $OUT/c1 2>&1 | tee $OUT/c1/table.txt
