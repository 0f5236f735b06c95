#!/usr/bin/env bash
# Kernel-variant work on a Hopper GPU: the variant tests, then `bench sweep` over the suites named in $SUITES
# (default "mid dense"), every candidate config against cuBLAS. Output folder: $1 (default results/latest).
#   bash scripts/sweep_gpu.sh "$OUT"
#   SUITES=dense CONFIGS=128x256x64_s3_w8_g8,128x128x64_s5_w4_g8_pp bash scripts/sweep_gpu.sh "$OUT"
source "$(dirname "$0")/gpu_env.sh" "$@"
if [ "${SKIP_TESTS:-0}" != "1" ]; then
    timeout "${TEST_LIMIT:-240}" $py -m pytest tests/test_gpu_variants.py -x -v -p no:cacheprovider -rfE 2>&1 \
        | tail -40 | tee "$out/variant-tests.log"
fi
for suite in ${SUITES:-mid dense}; do
    cfg_args=()
    if [ -n "${CONFIGS:-}" ]; then cfg_args=(--configs "$CONFIGS"); fi
    timeout "${SWEEP_LIMIT:-300}" $py -m warpgemm bench sweep --suite "$suite" --rounds "${ROUNDS:-1}" "${cfg_args[@]}" \
        --json "$out/sweep_$suite.json" > "$out/sweep_$suite.log" 2>&1
    tail -25 "$out/sweep_$suite.log"
done
