#!/usr/bin/env bash
# Session 42, call 1: gemm.EDGE_SHIFT 0 / 1 / 3 (scripts/edge_shift_probe.py), forced and planned products.
set -u
export PYTHONPATH=$PWD
o=$OUT/c1; mkdir -p $o
nvidia-smi --query-gpu=name,power.limit --format=csv,noheader | tee $o/gpu.txt
F="256x3848x14336,256x4096x14336,1024x3848x14336,1024x1160x14336"
timeout 150 python scripts/edge_shift_probe.py $o/forced128.json --shapes $F --config 128x128x64_s6_w4_g8 2>&1 | tail -8
timeout 150 python scripts/edge_shift_probe.py $o/forced256.json --shapes $F --config 128x256x64_s3_w8_g8 2>&1 | tail -8
S="3000x3000x3000,5000x5000x5000,1000x5000x3000,6000x6000x6000,4000x4000x4000,777x4096x11008,1083x4096x4096,385x14336x4096,189x19368x8120"
timeout 200 python scripts/edge_shift_probe.py $o/suite.json --shapes $S 2>&1 | tail -12
H="3795x6472x4096,1562x7032x11008,1818x3024x5632,2537x2928x12264,3124x9016x832,5853x8104x2560,812x6568x4592,2262x20760x1640,819x22136x7512,1583x20752x1928,2615x3272x1040,3832x2200x10784"
timeout 200 python scripts/edge_shift_probe.py $o/held421.json --shapes $H 2>&1 | tail -15
