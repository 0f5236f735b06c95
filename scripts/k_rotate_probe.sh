#!/usr/bin/env bash
# Does rotating each tile's K start (GemmConfig(k_rotate=True)) help weight-streaming shapes, where every tile reads
# the same activation slice at the same time? Correctness first, then `mid` and decode sweeps with and without it.
source "$(dirname "$0")/gpu_env.sh" "$@"
timeout 120 $py - <<'PY' 2>&1 | tee "$out/k_rotate_check.log"
import torch, warpgemm
from warpgemm.bench.sweep import parse_config
torch.manual_seed(0)
bad = 0
for name in ["64x128x64_s8_w4_g8_kr", "128x128x64_s6_w4_g8_kr", "64x64x128_s6_w4_g8_kr", "64x16x256_s5_w4_g8_swap_kr",
             "128x128x64_s6_w4_g8_sk2_kr", "64x128x64_s8_w4_g8_streamk_kr", "128x256x64_s3_w8_g8_kr"]:
    cfg = parse_config(name)
    for M, N, K in [(128, 4096, 4096), (7, 1000, 777), (300, 513, 4100), (16, 4096, 63), (1, 256, 1)]:
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16); w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        ref = a.double() @ w.double().T
        y1 = warpgemm.matmul(a, w.T, config=cfg); y2 = warpgemm.matmul(a, w.T, config=cfg)
        err = ((y1.double() - ref).norm() / ref.norm()).item()
        ok = err < 1e-2 and torch.equal(y1, y2) and not y1.isnan().any()
        bad += not ok
        if not ok: print("BAD", name, M, N, K, err)
print("k_rotate correctness: bad cases", bad)
PY
SKIP_TESTS=1 SUITES=mid ROUNDS=2 SWEEP_LIMIT=240 \
  CONFIGS=64x128x64_s8_w4_g8,64x128x64_s8_w4_g8_kr,128x128x64_s6_w4_g8,128x128x64_s6_w4_g8_kr,64x64x128_s6_w4_g8,64x64x128_s6_w4_g8_kr \
  bash scripts/sweep_gpu.sh "$out" > /dev/null
timeout 240 $py -m warpgemm bench decode --rounds 2 --no-eager --m 1,16,64 --json "$out/decode_k_rotate.json" \
  --configs 64x16x256_s5_w4_g8_swap,64x16x256_s5_w4_g8_swap_kr,64x64x128_s6_w4_g8_swap,64x64x128_s6_w4_g8_swap_kr \
  > "$out/decode_k_rotate.log" 2>&1; echo "decode rc=$?"
