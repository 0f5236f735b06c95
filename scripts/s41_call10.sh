#!/bin/bash
# Session 41, call 10: after the review: the phantom tests with outputs written in place (N a multiple of 8), a
# phantom tile before real ones in the same CTA (wide N), A read along M in place on every pair.
export PYTHONPATH=$PWD
d=$OUT/s41c10; mkdir -p $d
timeout 240 python -m pytest -q tests/test_gpu_edge_pieces.py > $d/pytest.log 2>&1; tail -1 $d/pytest.log; grep -E "^(FAILED|ERROR)" $d/pytest.log | head
tar czf $OUT/s41c10.tgz -C $OUT s41c10 && rm -rf $d
