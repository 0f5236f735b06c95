"""Probe: host time of eager grouped_mm calls, with the table kernel launched through Triton's JIT path (as before)
and through the cached launch, against torch._grouped_mm; then a cProfile of the cached path.

    PYTHONPATH=. python3 scripts/grouped_host_probe.py [json]
Small problems, so the GPU never holds the loop back: host = time to issue, wall = until the GPU is done.
Since 2026-11-23 grouped_mm builds no table for <= 64 groups (the GEMM counts row tiles from offs), so only the
cases with more groups compare the two table launches; scripts/grouped_eager_host.py times the calls as they are.
"""
import json
import sys

import torch
import triton

import warpgemm
from warpgemm import _env
from warpgemm.bench.timing import eager_ms, print_host_profile
from warpgemm.kernels import group_table as gt

cached_build = gt.build_group_table


def jit_build(offs, rows, block_m):
    """The table launch as it was: Triton's JIT launcher on every call."""
    table = torch.empty(gt.table_slots(rows, offs.numel(), block_m), dtype=torch.int32, device=offs.device)
    block_g = min(1024, triton.next_power_of_2(max(offs.numel(), 16)))
    gt.group_row_tiles_kernel[(1, )](offs, offs.numel(), rows, table, BLOCK_M=block_m, BLOCK_G=block_g,
                                     PDL=_env.PDL, launch_pdl=_env.PDL)
    return table


rows = []
for experts, tokens, k, n in ((8, 256, 256, 256), (64, 512, 256, 256), (128, 4096, 512, 512)):
    a = torch.randn(tokens, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(experts, n, k, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
    cuts = torch.sort(torch.randint(0, tokens + 1, (experts - 1, ))).values
    offs = torch.cat([cuts, torch.tensor([tokens])]).to(torch.int32).cuda()
    want = torch._grouped_mm(a, b, offs)
    row = {"experts": experts, "tokens": tokens, "K": k, "N": n}
    for name, fn in (("torch._grouped_mm", lambda: torch._grouped_mm(a, b, offs)),
                     ("grouped_mm jit table", None), ("grouped_mm cached table", None)):
        if fn is None:
            gt.build_group_table = jit_build if "jit" in name else cached_build
            fn = lambda: warpgemm.grouped_mm(a, b, offs)  # noqa: E731
            got = fn()
            torch.cuda.synchronize()
            assert (got.float() - want.float()).abs().max().item() < 0.1, name
        for _ in range(100):
            fn()
        host, wall = eager_ms(fn, 2000)
        row[name] = {"host_us": host * 1e3, "wall_us": wall * 1e3}
        print(f"E{experts} T{tokens} K{k} N{n} {name:>24}: host {host * 1e3:6.1f} us, wall {wall * 1e3:6.1f} us")
    rows.append(row)
gt.build_group_table = cached_build
print_host_profile(lambda: warpgemm.grouped_mm(a, b, offs), 2000, rows=30, sort="cumulative")
if len(sys.argv) > 1:
    with open(sys.argv[1], "w") as f:
        json.dump({"device": torch.cuda.get_device_name(), "method": "eager_ms over 2000 back-to-back calls after "
                   "100 warm-up calls; host = time to issue, wall = until the GPU finished", "results": rows}, f,
                  indent=2)
