#!/bin/bash
# Session 43, call 9: the last 15 tests of call 8's GPU run (cut off by its time limit), by node id.
export PYTHONPATH=$PWD
mkdir -p $OUT/c9
timeout 400 python -m pytest -q $(cat scripts/s43_rest_tests.txt) > $OUT/c9/pytest.log 2>&1
echo "pytest rc=$?"; tail -3 $OUT/c9/pytest.log
