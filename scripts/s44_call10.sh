#!/bin/bash
# Session 44, call 10: where the heuristics trail cuBLAS now (the swap-AB rule on from 1000 rows): 64 random shapes (seed 441) and
# 32 odd token counts on LLM weights (seed 442), 2 alternating rounds each.
export PYTHONPATH=$PWD
mkdir -p $OUT/c10
t0=$SECONDS
timeout 330 python scripts/scan_probe.py $OUT/c10/scan441.json --count 64 --seed 441 --rounds 2 > $OUT/c10/scan441.log 2>&1
echo "scan441 rc=$? $((SECONDS - t0)) s"
t0=$SECONDS
timeout 200 python scripts/scan_probe.py $OUT/c10/llm442.json --count 32 --seed 442 --rounds 2 --llm > $OUT/c10/llm442.log 2>&1
echo "llm442 rc=$? $((SECONDS - t0)) s"
tail -14 $OUT/c10/scan441.log; tail -14 $OUT/c10/llm442.log
