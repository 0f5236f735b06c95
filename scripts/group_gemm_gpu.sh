#!/usr/bin/env bash
# group_gemm on the GPU: its tests, then `bench groups` with the per-call tile and with each tile forced.
#   bash scripts/group_gemm_gpu.sh "$OUT"     (SKIP_TESTS=1, TILES="small medium", ROUNDS=5)
source "$(dirname "$0")/gpu_env.sh" "$@"
if [ "${SKIP_TESTS:-0}" != 1 ]; then
    timeout 400 $py -m pytest -q -p no:cacheprovider -rfE tests/test_gpu_group_gemm.py \
        "tests/test_gpu_grouped.py::test_group_gemm_mixed_shapes_and_views" 2>&1 | tail -25 | tee "$out/group-tests.log"
fi
timeout 300 $py -m warpgemm bench groups --rounds "${ROUNDS:-5}" --json "$out/bench_groups.json" 2>&1 \
    | tee "$out/bench_groups.log"
for t in ${TILES:-}; do
    timeout 200 $py -m warpgemm bench groups --rounds 3 --tile "$t" --json "$out/bench_groups_$t.json" 2>&1 \
        | grep -E "problems|geomean" | tee "$out/bench_groups_$t.log"
done
