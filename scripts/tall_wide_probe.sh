#!/usr/bin/env bash
# 256x192 tiles (two warpgroups, 128 + 64 accumulator columns, 192 registers a consumer thread) against the shipped
# 128x256 on dense shapes: correctness against fp32, `bench sweep --suite dense`, then sustained at the power cap.
# Apply scripts/tall_wide_probe.diff first (git apply; the device copy only): it lets 256-row two-part tiles and
# 192-register accumulators through the config checks, which the shipped checks refuse.
#   bash scripts/tall_wide_probe.sh "$OUT"
source "$(dirname "$0")/gpu_env.sh" "$@"
cfgs=${TW_CONFIGS:-128x256x64_s3_w8_g16,256x192x32_s5_w8_g8_c3,128x256x32_s6_w8_g16}
$py - "$cfgs" <<'PY'
import sys, torch, warpgemm
from warpgemm.candidates import parse_config
for c in sys.argv[1].split(","):
    cfg = parse_config(c)
    for M, N, K in ((777, 4096, 1104), (4096, 4096, 4096), (300, 500, 64), (2048, 1000, 3000), (8192, 8192, 8192)):
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        ref = a.float() @ w.float().T
        got = warpgemm.matmul(a, w.T, config=cfg).float()
        err = ((got - ref).norm() / ref.norm()).item()
        print(f"check {c} {M}x{N}x{K} rel {err:.2e} nan {got.isnan().any().item()}", flush=True)
PY
$py -m warpgemm bench sweep --suite dense --configs "$cfgs" --rounds 2 --json "$out/sweep_dense.json" 2>&1 | tail -30
$py scripts/clock_probe.py "$out/sustained.json" ${TW_SHAPES:-8192x8192x8192,16384x8192x8192,4096x14336x4096,4096x8192x28672} "$cfgs" ${TW_SECONDS:-1.2}
