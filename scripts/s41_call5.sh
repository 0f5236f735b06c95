#!/bin/bash
# Session 41, call 5: the landed rule (gemm.PHANTOM_A on) against off on fresh held-out shapes whose plan is a pair
# over an odd tile-row count (B = W.T and B row-major), plus round's 10000x10000x1000 (the one bf16 suite shape it
# changes); `bench round`; the edge and cluster tests.
export PYTHONPATH=$PWD
d=$OUT/s41c5; mkdir -p $d
P=warpgemm.kernels.hopper.gemm.PHANTOM_A
timeout 200 python -m pytest -q tests/test_gpu_edge_pieces.py tests/test_gpu_clusters.py > $d/pytest.log 2>&1; tail -1 $d/pytest.log; grep -E "^(FAILED|ERROR)" $d/pytest.log | head
AB_MODES="off:$P=False on:" AB_TIMING=flush AB_REPS=2 AB_TIMEOUT=100 AB_ROUNDS=3 \
AB_SHAPES="1054x12360x2296,2417x2776x11352,1852x7296x2472,4920x3768x2440,634x16192x10504,361x7272x11304,2128x5792x8040,2062x3672x8936,3377x2136x8296,1358x5496x5752,591x10416x14856,2612x11864x6152,10000x10000x1000" \
  bash scripts/setting_ab.sh $d/nt 2>&1 | tail -17
LAYOUT=nn AB_MODES="off:$P=False on:" AB_TIMING=flush AB_REPS=2 AB_TIMEOUT=90 AB_ROUNDS=3 \
AB_SHAPES="858x10024x5544,543x2248x13216,4883x2424x6624,1591x13704x5088,4381x3144x6208,2904x13352x2008,2082x7768x7320,1797x16040x4624" \
  bash scripts/setting_ab.sh $d/nn 2>&1 | tail -11
timeout 120 python -m warpgemm bench round --rounds 3 --json $d/bench_round.json > $d/bench_round.log 2>&1; grep -i "geomean" $d/bench_round.log | tail -2
tar czf $OUT/s41c5.tgz -C $OUT s41c5 && rm -rf $d
