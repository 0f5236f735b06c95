#!/usr/bin/env bash
# L2 priority of the A panels on dense tiles (l2_load_hint_probe.POLICIES): DRAM bytes of 8192^3 under ncu, then
# sustained ours-vs-cuBLAS (clock_probe.sustained, cuBLAS before and after ours) with each policy in its own process.
# L2_PERSIST_MB=n: each process first sets its L2 set-aside for evict-last lines (l2_load_hint_probe.set_persisting_l2).
#   bash scripts/a_panel_hint_ab.sh "$OUT" [reps]
source "$(dirname "$0")/gpu_env.sh" "$@"
shapes=${HINT_SHAPES:-8192x8192x8192 16384x8192x8192 4096x14336x4096 4096x8192x28672}
modes=${HINT_MODES:-none a_last a_last50 b_first_a_last}
ncu_modes=${HINT_NCU_MODES:-none a_last a_last50}
if command -v ncu >/dev/null && [ -n "$ncu_modes" ]; then
    for v in $ncu_modes; do
        HINT=$v TRITON_CACHE_DIR=$(mktemp -d) ncu --clock-control none \
            --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct \
            $py scripts/ncu_gemm_probe.py 8192x8192x8192 128x256x64_s3_w8_g16 > "$out/ncu_$v.txt" 2>&1
        echo "== ncu $v"
        grep -A9 -E "^  (gemm_kernel|nvjet)" "$out/ncu_$v.txt" | grep -E "^  (gemm|nvjet)|dram__bytes_read|duration"
    done
fi
for rep in $(seq "${2:-1}"); do
    for v in $modes; do
        HINT=$v TRITON_CACHE_DIR=$(mktemp -d) SECONDS_EACH=${SECONDS_EACH:-1.2} \
            $py scripts/l2_load_hint_probe.py "$out/sustained_${v}_run$rep.json" $shapes 2>&1 | grep -v Warning
    done
done
