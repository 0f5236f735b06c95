#!/bin/bash
# Session 44, call 12: the weakest odd token counts on LLM weights of call 10 (787/815x11008x4096 on 128x256 tiles with
# a column split, 650x8192x8192 and 397x4096x14336 on 128x128, 334x8192x8192 on 128x192) and two neighbours without a
# split: our other tiles forced against the plan, after a flush and back to back (few_wave_probe.py, fixed), 2 rounds.
export PYTHONPATH=$PWD
mkdir -p $OUT/c12
timeout 520 python scripts/few_wave_probe.py $OUT/c12/llm_weak.json \
  787x11008x4096,815x11008x4096,650x8192x8192,397x4096x14336,334x8192x8192,760x11008x4096,900x11008x4096 --rounds 2 \
  --configs 128x256x64_s3_w8_g8,128x256x64_s4_w8_g8_c4,128x192x64_s4_w8_g16_c3,128x160x64_s5_w8_g8_c5,\
128x128x64_s6_w4_g8,128x192x64_s4_w8_g8_c3_swap,128x160x64_s5_w8_g8_c5_swap > $OUT/c12/llm_weak.log 2>&1
echo "rc=$?"; grep -v Warn $OUT/c12/llm_weak.log | tail -7
