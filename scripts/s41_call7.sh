#!/bin/bash
# Session 41, call 7: the one-partition and grouped tests (call 6 ran out of time on them); whether the weight's last
# tile-column (its box partly past W's last row) pays the zero fill that A's last tile-row did.
export PYTHONPATH=$PWD
d=$OUT/s41c7; mkdir -p $d
run() { local name=$1 t=$2; shift 2; timeout $t python -m pytest -q "$@" > $d/$name.log 2>&1; echo "$name: $(tail -1 $d/$name.log)"; grep -E "^(FAILED|ERROR)" $d/$name.log | head -5; }
run other 330 tests/test_gpu_one_partition.py tests/test_gpu_grouped.py
timeout 80 python scripts/partial_cols_probe.py $d/cols128.json --m 256,1024 --n 1100,1280,3900,4096 --config 128x128x64_s6_w4_g8 2>&1 | tail -8
timeout 80 python scripts/partial_cols_probe.py $d/cols256.json --m 256,1024 --n 1100,1280,3900,4096 --config 128x256x64_s3_w8_g8 2>&1 | tail -8
tar czf $OUT/s41c7.tgz -C $OUT s41c7 && rm -rf $d
