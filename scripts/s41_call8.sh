#!/bin/bash
# Session 41, call 8: B's pieces past the weight's last row clamped to its last rows (gemm.B_EDGE_CLAMP) against the
# zero fill: 14 held-out shapes whose plan takes it and the 5 suite shapes it changes (odd, round), alternating
# processes; the edge tests (with the B clamp's).
export PYTHONPATH=$PWD
d=$OUT/s41c8; mkdir -p $d
P=warpgemm.kernels.hopper.gemm.B_EDGE_CLAMP
timeout 150 python -m pytest -q tests/test_gpu_edge_pieces.py > $d/pytest.log 2>&1; tail -1 $d/pytest.log; grep -E "^(FAILED|ERROR)" $d/pytest.log | head
AB_MODES="off: on:$P=True" AB_TIMING=flush AB_REPS=2 AB_TIMEOUT=100 AB_ROUNDS=3 \
AB_SHAPES="397x12584x7360,638x3544x4824,3941x5160x6424,3131x2144x9976,5494x15408x1288,1187x6752x15368,409x7688x9384,911x9136x11696,362x8320x13080,1243x4288x12488,599x10816x16056,887x10536x13656,1757x1656x9296,1361x16232x6600,1536x1536x1536,1024x2304x4096,3000x3000x3000,10000x10000x1000,1000x5000x3000" \
  bash scripts/setting_ab.sh $d 2>&1 | tail -23
tar czf $OUT/s41c8.tgz -C $OUT s41c8 && rm -rf $d
