#!/usr/bin/env bash
# Session 42, call 3: the class rule (EDGE_SHIFT on tiles of one consumer warpgroup) against off and against two-part
# widths too, alternating processes, 18 held-out shapes (seed 423: 10 of the rule's class, 8 two-part) + 6 from
# call 1; then tests/test_gpu_edge_shift.py.
set -u
export PYTHONPATH=$PWD
o=$OUT/c3; mkdir -p $o
G=warpgemm.kernels.hopper.gemm
AB_MODES="off:$G.EDGE_SHIFT=0 w4: tp:$G.EDGE_SHIFT_TWO_PART=True" \
AB_SHAPES="116x20720x10136,462x28920x2560,111x15760x3160,579x1336x11008,25x24472x10584,38x14632x11792,3810x2144x11008,55x25944x27648,179x3552x13824,508x1768x28672,544x14912x2048,185x10768x3072,202x12160x4864,417x12424x6144,209x20288x3376,685x12096x5632,1295x9320x3072,4644x4440x2048,1083x4096x4096,3832x2200x10784,2615x3272x1040,1818x3024x5632,812x6568x4592,4179x2488x2048" \
AB_TIMING=flush AB_REPS=2 AB_TIMEOUT=150 bash scripts/setting_ab.sh "$o" 2>&1 | tail -32
timeout 240 python -m pytest -q -x tests/test_gpu_edge_shift.py > $o/pytest.log 2>&1; tail -15 $o/pytest.log
cd $OUT && tar czf c3.tgz c3 && rm -rf c3
