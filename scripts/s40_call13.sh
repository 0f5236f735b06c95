#!/bin/bash
# Session 40, call 13: cluster pairs whose last lower tile lies wholly past the end (an odd tile-row count) now take
# pieces too (gemm.edge_pieces). Forced CLUSTER_MEDIUM / CLUSTER_SMALL against their padded rows; the edge and
# cluster tests.
export PYTHONPATH=$PWD
d=$OUT/s40c13; mkdir -p $d
timeout 80 python scripts/partial_rows_probe.py $d/phantom128.json --m 384,512,640 --nk 4096x14336 --config 128x128x64_s6_w4_g8_cm2 2>&1 | tail -3
timeout 60 python scripts/partial_rows_probe.py $d/phantom64.json --m 192,256 --nk 4096x8192 --config 64x128x64_s8_w4_g8_cm2 2>&1 | tail -2
timeout 200 python -m pytest -q tests/test_gpu_edge_pieces.py tests/test_gpu_clusters.py > $d/pytest.log 2>&1; tail -1 $d/pytest.log
tar czf $OUT/s40c13.tgz -C $OUT s40c13 && rm -rf $d
