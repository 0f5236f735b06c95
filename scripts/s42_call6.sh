#!/usr/bin/env bash
# Session 42, call 6 (the landed tree): fresh held-out shapes of the rule's class (seed 424), EDGE_SHIFT 0 against
# the default, alternating processes; `bench round --rounds 2`; edge pieces + cluster GPU tests.
set -u
export PYTHONPATH=$PWD
o=$OUT/c6; mkdir -p $o
AB_MODES="off:warpgemm.kernels.hopper.gemm.EDGE_SHIFT=0 on:" \
AB_SHAPES="1308x1152x6912,1210x1224x14040,68x8288x13824,231x4848x15504,1950x7096x1536,60x13688x27648,322x26352x6912,86x24560x3072,243x4776x15888,72x18008x6144,2417x7248x2048,365x2704x15384" \
AB_TIMING=flush AB_REPS=2 AB_TIMEOUT=100 bash scripts/setting_ab.sh "$o" 2>&1 | tail -17
timeout 100 python -m warpgemm bench round --rounds 2 --json $o/bench_round.json > $o/bench_round.log 2>&1; tail -4 $o/bench_round.log
timeout 170 python -m pytest -q tests/test_gpu_edge_pieces.py tests/test_gpu_clusters.py > $o/pytest.log 2>&1; tail -1 $o/pytest.log
cd $OUT && tar czf c6.tgz c6 && rm -rf c6
