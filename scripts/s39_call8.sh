#!/bin/bash
# Session 39, call 8: random shapes on the session's tree (bf16; 65-4096 rows): where do we trail cuBLAS now?
export PYTHONPATH=$PWD
d=$OUT/scan; mkdir -p $d
timeout 280 python scripts/scan_probe.py $d/scan117.json --count 32 --seed 117 --rounds 2 > $d/scan117.log 2>&1
tail -13 $d/scan117.log
timeout 260 python scripts/scan_probe.py $d/scan118nn.json --count 24 --seed 118 --rounds 2 --nn > $d/scan118nn.log 2>&1
tail -13 $d/scan118nn.log
tar czf $OUT/scan.tgz -C $OUT scan && rm -rf $d
