#!/bin/bash
# Session 43, call 2: where the heuristics trail cuBLAS now (after sessions 35-42): 64 random shapes (seed 430) and
# 32 odd token counts on LLM weights (seed 431), 2 alternating rounds each.
export PYTHONPATH=$PWD
mkdir -p $OUT/c2
t0=$SECONDS
timeout 330 python scripts/scan_probe.py $OUT/c2/scan430.json --count 64 --seed 430 --rounds 2 > $OUT/c2/scan430.log 2>&1
echo "scan430 rc=$? $((SECONDS - t0)) s"
t0=$SECONDS
timeout 200 python scripts/scan_probe.py $OUT/c2/llm431.json --count 32 --seed 431 --rounds 2 --llm > $OUT/c2/llm431.log 2>&1
echo "llm431 rc=$? $((SECONDS - t0)) s"
tail -14 $OUT/c2/scan430.log; tail -14 $OUT/c2/llm431.log
