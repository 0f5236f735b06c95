#!/usr/bin/env bash
# The K order of whole plain tiles (WARPGEMM_K_ORDER, _env.py: serpentine reverses every other unit of a program)
# against forward: DRAM bytes of 8192^3 under ncu, then sustained ours-vs-cuBLAS in alternating processes
# (l2_load_hint_probe.py with no hint: clock_probe.sustained, cuBLAS before and after ours).
#   bash scripts/k_serpentine_ab.sh "$OUT" [reps]
# (Session 26 ran this with a probe switch, WARPGEMM_K_SERPENTINE=0|1, before the order became a kernel constexpr;
# the result files keep those names: serp0 = forward, serp1 = serpentine, serp1h = serpentine + evict-first stores.)
source "$(dirname "$0")/gpu_env.sh" "$@"
shapes=${SERP_SHAPES:-8192x8192x8192 16384x8192x8192 4096x14336x4096 4096x8192x28672 4096x4096x14336}
modes=${SERP_MODES:-forward serpentine}
if command -v ncu >/dev/null && [ -z "${SERP_NO_NCU:-}" ]; then
    for v in $modes; do
        WARPGEMM_K_ORDER=$v TRITON_CACHE_DIR=$(mktemp -d) ncu --clock-control none \
            --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct \
            $py scripts/ncu_gemm_probe.py 8192x8192x8192 128x256x64_s3_w8_g16 > "$out/ncu_$v.txt" 2>&1
        grep -A9 -E "^  (gemm_kernel|nvjet)" "$out/ncu_$v.txt" | grep -E "^  (gemm|nvjet)|dram__bytes_read|duration"
    done
fi
for rep in $(seq "${2:-2}"); do
    for v in $modes; do
        WARPGEMM_K_ORDER=$v TRITON_CACHE_DIR=$(mktemp -d) SECONDS_EACH=${SECONDS_EACH:-1.5} HINT=none \
            $py scripts/l2_load_hint_probe.py "$out/sustained_${v}_run$rep.json" $shapes 2>&1 | sed "s/^none /$v /"
    done
done
