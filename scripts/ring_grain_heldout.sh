#!/usr/bin/env bash
# Session 29 held-out runs (scripts/graph_mid_probe.py: CUDA graphs over cold weight copies, 2 rounds, F.linear in the
# same process) for two decode-tile readings drawn on `bench decode`'s six weights (results/2026-11-27-ring-grain/):
#  a: 17-32 rows, K >= 8192 (and two K = 5120 shapes): the swap-AB 64x32 tile with 8 slots of 128-deep K steps
#     against the shipped 4 slots of 256
#  b: 33-64 rows, K <= 4096 (and one K = 5120), more 64-row tiles than SMs: the swap-AB 64x64 tile with 3 slots of
#     256-deep K steps against the shipped plan (plain 64x128x128 s4 from 12672 weight rows, else swap 64x64x128 s6)
#  c: 33-64 rows where the plan takes the plain 64x128x128 s4 tile (DECODE_WIDE: 128-row weight panels >= 3/4 of the
#     SMs), on weights none of a/b/`bench decode` used: it against the swap-AB 64x64x128 s6
#  d: 48-64 rows, K <= 2048, 99-132 panels of 128 weight rows, where the plain tile ran in one partition before the
#     48-row boundary (64x128x128 s4 _flat) and swap-AB 64x64x128 s6 runs now
#   bash scripts/ring_grain_heldout.sh "$OUT/work"; STEPS="a" selects steps
source "$(dirname "$0")/gpu_env.sh" "$@"
for s in ${STEPS:-a b}; do
  case $s in
    a) timeout 280 $py scripts/graph_mid_probe.py "$out/a.json" 24,32 64x32x256_s4_w4_g8_swap,64x32x128_s8_w4_g8_swap \
         4096x11008,5120x13824,10240x8192,57344x8192,13824x5120,5120x5120 > "$out/a.log" 2>&1; echo "a rc=$?" ;;
    b) timeout 280 $py scripts/graph_mid_probe.py "$out/b.json" 48,64 \
         64x128x128_s4_w4_g8,64x64x128_s6_w4_g8_swap,64x64x256_s3_w4_g8_swap \
         11008x4096,12288x4096,16384x4096,18944x3584,14336x3072,27648x5120 > "$out/b.log" 2>&1; echo "b rc=$?" ;;
    c) timeout 400 $py scripts/graph_mid_probe.py "$out/c.json" 40,64 64x128x128_s4_w4_g8,64x64x128_s6_w4_g8_swap \
         32000x4096,128256x4096,57344x8192,28672x4096,22016x4096,13824x5120 33x14336x4096 > "$out/c.log" 2>&1
       echo "c rc=$?" ;;
    d) timeout 200 $py scripts/graph_mid_probe.py "$out/d.json" 48,64 64x128x128_s4_w4_g8_flat,64x64x128_s6_w4_g8_swap \
         14336x2048,16384x1024,12800x2048,16896x2048 > "$out/d.log" 2>&1; echo "d rc=$?" ;;
  esac
done
$py "$(dirname "$0")/tbs_table.py" "$out"
