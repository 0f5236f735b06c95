#!/usr/bin/env bash
# Session 29: why swap-AB 64x64 decode tiles trail the plain 64x128 tile at 33-44 rows of x on 14336x4096 (5-9%) but
# not at 64 rows: both tiles at M = 33, 40, 48, 56, 64 on that weight (CUDA graphs, cold copies), with programmatic
# dependent launch as the rule has it (swap-AB launches only) and off (WARPGEMM_PDL=0). Results under $1.
source "$(dirname "$0")/gpu_env.sh" "$@"
for pdl in 1 0; do
  WARPGEMM_PDL=$pdl timeout 150 $py scripts/graph_mid_probe.py "$out/pdl$pdl.json" 33,40,48,56,64 \
    64x128x128_s4_w4_g8,64x64x128_s6_w4_g8_swap 14336x4096 > "$out/pdl$pdl.log" 2>&1; echo "pdl$pdl rc=$?"
done
$py "$(dirname "$0")/tbs_table.py" "$out" --us
