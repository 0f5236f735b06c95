"""Why are 2-CTA cluster tiles slower? Time against the grid size (programs = 2 x clusters), cluster and plain
variants of the same tile (issue 4 probe). Co-residency is not queried here: triton 3.6's driver utils have no
occupancy_max_active_clusters (the JSONs of 11-25 hold that AttributeError); cuOccupancyMaxActiveClusters called
through ctypes (a review, 11-26) gave 66 clusters for each of CLUSTER_CANDIDATES on the H100, so the 132-program
grid runs at once."""
import json
import sys

import torch

import warpgemm
from warpgemm import _env
from warpgemm.bench.timing import bench_ms, warm_gpu
from warpgemm.candidates import parse_config
from warpgemm.kernels.hopper.aot import compile_gemm
from warpgemm.ops import gemm_impl

out = {}
for name in ("128x256x64_s3_w8_g16_cm2", "128x256x64_s3_w8_g16"):
    cfg = parse_config(name)
    k = compile_gemm(cfg, a_batched=False)
    res = {"shared": k.metadata.shared}
    out[name] = res
    print(name, res, flush=True)

M = N = K = 8192
a = torch.randn(M, K, device="cuda").bfloat16()
b = torch.randn(N, K, device="cuda").bfloat16().t()
warm_gpu(2.0)
rows = []
for sms in (132, 128, 120, 112, 100, 88, 66):
    _env.num_sms = lambda i, s=sms: s
    gemm_impl.forget_plans()
    for name in ("128x256x64_s3_w8_g16", "128x256x64_s3_w8_g16_cm2"):
        cfg = parse_config(name)
        ms = bench_ms(lambda: warpgemm.matmul(a, b, config=cfg), 100)
        rows.append({"sms": sms, "config": name, "ms": ms, "tflops": 2 * M * N * K / ms / 1e9})
        print(f"grid<= {sms:4d} {name:>28} {ms:.3f} ms {2 * M * N * K / ms / 1e9:.0f} TF/s", flush=True)
out["grid"] = rows
json.dump(out, open(sys.argv[1], "w"), indent=1)
