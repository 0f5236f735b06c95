#!/usr/bin/env bash
# The GPU check: the GPU test suite plus a short dense benchmark, the small-products one, a short fp8 one, the
# elementwise benchmark and the host-overhead measurement, on a Hopper GPU. Results (JUnit XML, JSON, logs) go into the folder given as $1,
# else $WARPGEMM_RESULTS, else results/latest. Runs from the source tree; no install needed.
#   bash scripts/gpu_check.sh "$OUT"            # tests + quick benchmark
#   FULL=1 bash scripts/gpu_check.sh "$OUT"     # tests + the full `dense` suite
source "$(dirname "$0")/gpu_env.sh" "$@"

timeout_args=()
if $py -c "import pytest_timeout" 2>/dev/null; then timeout_args=(--timeout=300); fi

$py -m warpgemm info | tee "$out/info.txt"
timeout 1200 $py -m pytest -m gpu tests -q -p no:cacheprovider -rfE "${timeout_args[@]}" \
    --junitxml="$out/gpu-tests.xml" 2>&1 | tee "$out/gpu-tests.log"
tests_rc=${PIPESTATUS[0]}

suite_args=(--quick)
if [ "${FULL:-0}" = "1" ]; then suite_args=(); fi
timeout 900 $py -m warpgemm bench dense "${suite_args[@]}" --json "$out/bench_dense.json" 2>&1 | tee "$out/bench_dense.log"
bench_rc=${PIPESTATUS[0]}
timeout 300 $py -m warpgemm bench small --rounds 3 --json "$out/bench_small.json" 2>&1 | tee "$out/bench_small.log"
timeout 300 $py -m warpgemm bench fp8 --suite quick --rounds 3 --json "$out/bench_fp8.json" 2>&1 | tee "$out/bench_fp8.log"
fp8_rc=${PIPESTATUS[0]}
timeout 300 $py -m warpgemm bench elementwise --json "$out/bench_elementwise.json" 2>&1 | tee "$out/bench_elementwise.log"
ew_rc=${PIPESTATUS[0]}
timeout 300 $py -m warpgemm bench overhead --json "$out/overhead.json" 2>&1 | tee "$out/overhead.log"

echo "gpu tests rc=$tests_rc, bench dense rc=$bench_rc, bench fp8 rc=$fp8_rc, bench elementwise rc=$ew_rc"
[ "$tests_rc" = 0 ] && [ "$bench_rc" = 0 ] && [ "$fp8_rc" = 0 ] && [ "$ew_rc" = 0 ]
