#!/bin/bash
# Session 40, call 5: the final rule (gemm.edge_pieces: four pieces a tile, one-warpgroup plain tiles) held out
# against EDGE_PIECES=1 (one box), one process a setting: seed 123 odd token counts on LLM weights (B = W.T, after a
# flush and back to back), seed 124 the same with B row-major, seed 125 random shapes; fp8 forced tiles rows / pad0
# with pieces on and off; then the new GPU tests.
export PYTHONPATH=$PWD
d=$OUT/s40c5; mkdir -p $d
G=warpgemm.kernels.hopper.gemm
MODES="pieces: off:$G.EDGE_PIECES=1"
AB_MODES=$MODES AB_TIMING="flush b2b" AB_REPS=2 AB_TIMEOUT=150 \
AB_SHAPES=94x4096x4096,204x4096x4096,937x13824x5120,239x4096x4096,193x4096x11008,92x4096x4096,89x4096x14336,100x4096x4096,470x28672x8192,328x4096x4096,393x4096x11008,67x5120x13824 \
  bash scripts/setting_ab.sh $d/llm123 > $d/llm123_summary.txt 2>&1; tail -35 $d/llm123_summary.txt | grep -v "^ *[0-9]*x.*x" | tail -6
LAYOUT=nn AB_MODES=$MODES AB_TIMING=flush AB_REPS=2 AB_TIMEOUT=120 \
AB_SHAPES=66x4096x4096,72x4096x14336,1083x4096x4096,193x4096x14336,93x5120x5120,339x14336x4096,88x5120x5120,1030x4096x11008 \
  bash scripts/setting_ab.sh $d/llm124nn > $d/llm124nn_summary.txt 2>&1; tail -3 $d/llm124nn_summary.txt
AB_MODES=$MODES AB_TIMING=flush AB_REPS=2 AB_TIMEOUT=120 \
AB_SHAPES=179x5592x1504,352x1680x7008,924x1896x1424,87x5128x3024,1154x4488x3152,460x2312x3592,232x1448x2472,214x4400x7176,177x5968x3520,465x2600x4272 \
  bash scripts/setting_ab.sh $d/rand125 > $d/rand125_summary.txt 2>&1; tail -3 $d/rand125_summary.txt
for s in "" "--set $G.EDGE_PIECES=1"; do
  echo "fp8 ${s:-pieces}"
  timeout 60 python scripts/partial_rows_probe.py $d/fp8_m$([ -z "$s" ] && echo on || echo off).json --fp8 --m 259,389 --nk 4096x14336 --config 128x128x128_s6_w4_g8 $s 2>&1 | tail -2
  timeout 60 python scripts/partial_rows_probe.py $d/fp8_n$([ -z "$s" ] && echo on || echo off).json --fp8 --m 67,96 --nk 4096x14336 --config 64x64x256_s6_w4_g8 $s 2>&1 | tail -2
done
timeout 150 python -m pytest -q tests/test_gpu_edge_pieces.py > $d/pytest_edge.log 2>&1; tail -3 $d/pytest_edge.log
tar czf $OUT/s40c5.tgz -C $OUT s40c5 && rm -rf $d
