"""L2 eviction hints on the GEMM's TMA traffic (probe; run each mode in its own process with its own cache).

    TRITON_CACHE_DIR=$(mktemp -d) python3 scripts/l2_hint_probe.py OUT.json MODE

ncu_wgrad*.txt: the MoE weight gradient's output (3.7 GB for E128 K7168 N2048) streams through the L2 and evicts
the input panels, which are then read from DRAM 2-3 times, and those reads mixed into the write stream cost the HBM
~12% of its rate. triton 3.6's Gluon TMA copies take no cache hint, so a PTX post-pass (as in
tensormap_prefetch_probe.py) adds `.L2::cache_hint` with a `createpolicy.fractional` policy to gemm_kernel's
bulk tensor copies. MODE: plain; store_ef (stores evict_first); store_ef_load_el (and loads evict_last); load_el.
Triton's cache key does not see the pass: a fresh TRITON_CACHE_DIR per mode. The product's own pass (ptx_hints.py,
which hints the ragged-K form since this probe) is turned off here, so MODE alone decides what is hinted. Each
case: ours against torch in the same process (3 alternating rounds, do_bench); compare the ratios across the modes'
processes.
"""
import json
import re
import sys

import torch
from triton import knobs

STORE = "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group"
LOAD = "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"


def hinted(ptx: str, op: str, policy: str) -> str:
    """Each `op [...], [...];` (optionally predicated) becomes the same copy with `.L2::cache_hint` and a policy
    made just before it, inside its own PTX scope."""
    pattern = re.compile(r"^(\t(?:@%p\d+ )?)" + re.escape(op) + r"( .*\]);$", re.M)

    def sub(m):
        return (f"\t{{ .reg .b64 %l2pol; createpolicy.fractional.L2::{policy}.b64 %l2pol, 1.0;\n"
                f"{m.group(1)}{op}.L2::cache_hint{m.group(2)}, %l2pol; }}")

    out, n = pattern.subn(sub, ptx)
    assert n > 0, f"no {op} in the PTX"
    return out


def make_hook(mode: str):
    def rewrite(ptx: str) -> str:
        if ".entry gemm_kernel" not in ptx:
            return ptx
        if mode in ("store_ef", "store_ef_load_el"):
            ptx = hinted(ptx, STORE, "evict_first")
        if mode in ("load_el", "store_ef_load_el"):
            ptx = hinted(ptx, LOAD, "evict_last")
        return ptx

    def hook(backend, stages, options, language, capability):
        make_ptx = stages["ptx"]
        stages["ptx"] = lambda src, metadata: rewrite(make_ptx(src, metadata))
    return hook


def main():
    out_path, mode = sys.argv[1], sys.argv[2]
    if mode != "plain":
        knobs.runtime.add_stages_inspection_hook = make_hook(mode)
    import warpgemm
    from warpgemm.kernels.hopper import gemm as hopper_gemm

    hopper_gemm.store_hint = lambda ragged_k: 0  # the product's pass off (see above)
    from warpgemm.bench.gemm_bench import environment
    from warpgemm.bench.moe_bench import routing
    from warpgemm.bench.timing import alternate, warm_gpu

    warm_gpu(2.0)
    bf = torch.bfloat16
    rows = []

    def run(label, ours, theirs, check):
        err = check()
        t = alternate(ours, theirs, rounds=3, rep_ms=60)
        rows.append(dict(case=label, mode=mode, ms=t.ms_a, ms_torch=t.ms_b, ratio=t.ms_b / t.ms_a,
                         rounds=t.rounds_a, rounds_torch=t.rounds_b, max_abs_diff=err))
        print(f"{mode:>16} {label:36s} {t.ms_a:8.3f} ms  torch {t.ms_b:8.3f}  ratio {t.ms_b / t.ms_a:.3f}  "
              f"diff {err:.1e}", flush=True)

    for E, T, K, N, kinds in [(128, 16384, 7168, 2048, ("c16", "c128", "skewed")), (256, 32768, 7168, 2048, ("skewed",)),
                              (8, 16384, 4096, 14336, ("skewed",))]:
        x = torch.randn(T, K, device="cuda", dtype=bf)
        dy = torch.randn(T, N, device="cuda", dtype=bf)
        for kind in kinds:
            counts = [int(kind[1:])] * E if kind.startswith("c") else routing(E, T, kind)
            offs = torch.tensor(counts, device="cuda").cumsum(0).to(torch.int32)
            run(f"wgrad E{E} K{K} N{N} {kind}", lambda: warpgemm.grouped_mm(x.t(), dy, offs),
                lambda: torch._grouped_mm(x.t(), dy, offs),
                lambda: (warpgemm.grouped_mm(x.t(), dy, offs).float()
                         - torch._grouped_mm(x.t(), dy, offs).float()).abs().max().item())
        x = dy = None
    for M, N, K in [(8192, 8192, 8192), (1024, 14336, 4096), (4096, 14336, 4096)]:
        a = torch.randn(M, K, device="cuda", dtype=bf)
        w = torch.randn(N, K, device="cuda", dtype=bf)
        run(f"dense {M}x{N}x{K}", lambda: warpgemm.matmul(a, w.T), lambda: torch.matmul(a, w.T),
            lambda: (warpgemm.matmul(a, w.T).float() - torch.matmul(a, w.T).float()).abs().max().item())
    with open(out_path, "w") as f:
        json.dump(dict(environment=environment(), mode=mode, rows=rows), f, indent=1)


if __name__ == "__main__":
    main()
