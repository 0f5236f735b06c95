#!/bin/bash
# Session 40, call 12: after the review's mends (rule narrowed to a partial tile-row after a full one and no
# ping-pong; tests on batched weights, N-major cluster weights, stream-K and a column split's tail): the edge tests;
# and the review's question on cluster pairs with an odd tile-row count, whose phantom lower tile's A box lies wholly
# past the end (CLUSTER_MEDIUM forced at 384 rows: 3 tile-rows, no pieces; 389: pieces; 512: 4 full tile-rows).
export PYTHONPATH=$PWD
d=$OUT/s40c12; mkdir -p $d
timeout 150 python -m pytest -q tests/test_gpu_edge_pieces.py > $d/pytest_edge.log 2>&1; tail -1 $d/pytest_edge.log
timeout 80 python scripts/partial_rows_probe.py $d/phantom.json --m 256,259,384,389,512 --nk 4096x14336 --config 128x128x64_s6_w4_g8_cm2 2>&1 | tail -5
tar czf $OUT/s40c12.tgz -C $OUT s40c12 && rm -rf $d
