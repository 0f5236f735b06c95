#!/usr/bin/env bash
# Session 29: forced tiles at M = 32 and 64 on `bench decode`'s six weights (CUDA graphs, cold weight copies), each M
# in its own process, results under $1. REPEAT=2 runs each twice (r1, r2) to show the run-to-run band; MS picks the
# M values (default 32 64; 16 takes C16); C16 / C32 / C64 replace the candidate lists.
#  M = 32: the shipped swap-AB 64x32x256 s4, the plain 64x128x128 s4 (x padded to 64 rows), 64x32x128 s8, 32x32x256 s4
#  M = 64: the plain 64x128x128 s4, the swap-AB 64x64x128 s6, 64x64x256 s3, 32x64x128 s6
#   bash scripts/decode_rows_sweep.sh "$OUT/work"
source "$(dirname "$0")/gpu_env.sh" "$@"
c32=${C32:-64x32x256_s4_w4_g8_swap,64x128x128_s4_w4_g8,64x32x128_s8_w4_g8_swap,32x32x256_s4_w4_g8_swap}
c64=${C64:-64x128x128_s4_w4_g8,64x64x128_s6_w4_g8_swap,64x64x256_s3_w4_g8_swap,32x64x128_s6_w4_g8_swap}
c16=${C16:-64x16x256_s5_w4_g8_swap,64x16x128_s10_w4_g8_swap}
for r in $(seq 1 "${REPEAT:-1}"); do
  for m in ${MS:-32 64}; do
    cfgs=$c32; [ "$m" = 64 ] && cfgs=$c64; [ "$m" = 16 ] && cfgs=$c16
    timeout "${LIMIT:-250}" $py -m warpgemm bench decode --m $m --rounds 2 --no-eager --configs "$cfgs" \
      --json "$out/m${m}_r$r.json" > "$out/m${m}_r$r.log" 2>&1
    echo "m$m r$r rc=$?"
  done
done
$py "$(dirname "$0")/tbs_table.py" "$out"
