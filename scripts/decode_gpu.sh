#!/usr/bin/env bash
# Decode work on a Hopper GPU: the decode and variant tests, `bench decode` (the heuristic's choice), then a
# sweep of the decode candidates over M in $SWEEP_M. Output folder: $1 (default results/latest).
#   bash scripts/decode_gpu.sh "$OUT"
#   SKIP_TESTS=1 SWEEP_M=1,64 CONFIGS=128x16x128_s6_w4_g8_streamk_swap bash scripts/decode_gpu.sh "$OUT"
source "$(dirname "$0")/gpu_env.sh" "$@"
if [ "${SKIP_TESTS:-0}" != "1" ]; then
    timeout "${TEST_LIMIT:-300}" $py -m pytest ${TESTS:-tests/test_gpu_decode.py tests/test_gpu_variants.py} -q \
        -p no:cacheprovider -rfE 2>&1 | tail -30 | tee "$out/decode-tests.log"
fi
if [ "${SKIP_BENCH:-0}" != "1" ]; then
    timeout "${BENCH_LIMIT:-300}" $py -m warpgemm bench decode --rounds "${ROUNDS:-3}" --json "$out/bench_decode.json" \
        > "$out/bench_decode.log" 2>&1
    tail -40 "$out/bench_decode.log"
fi
if [ -n "${SWEEP_M:-}" ]; then
    cfg=${CONFIGS:-$($py -c "from warpgemm.candidates import DECODE_CANDIDATES as C; print(','.join(c.name for c in C))")}
    timeout "${SWEEP_LIMIT:-300}" $py -m warpgemm bench decode --rounds 1 --no-eager --m "$SWEEP_M" --configs "$cfg" \
        --json "$out/sweep_decode.json" > "$out/sweep_decode.log" 2>&1
    grep -v "^\s*$" "$out/sweep_decode.log" | head -200 | cut -c1-150
fi
