#!/bin/bash
# Session 45, call 3: issue 4's suites on today's tree (the last full runs were sessions 32-33): `dense` and `mid` with
# the default 5 alternating rounds, `dense --layout nn` and `dense --dtype fp16` with 3.
export PYTHONPATH=$PWD
mkdir -p $OUT/c3
for s in "dense" "mid" "dense --layout nn --rounds 3" "dense --dtype fp16 --rounds 3"; do
    f=$(echo "$s" | sed 's/ --rounds 3//; s/ --layout /_/; s/ --dtype /_/; s/ /_/g')
    timeout 280 python -m warpgemm bench $s --json $OUT/c3/bench_$f.json > $OUT/c3/bench_$f.log 2>&1
    echo "$s rc=$?: $(grep -h geomean $OUT/c3/bench_$f.log | tail -1)"
done
