"""L2 eviction hints on the GEMM's TMA loads: does keeping the A panels in L2 across waves save HBM energy at the cap?

    HINT=none|b_first|a_first TRITON_CACHE_DIR=$(mktemp -d) python3 scripts/l2_load_hint_probe.py OUT.json [MxNxK ...]

Reading (notes/perf.md, 2026-11-25 session 14): at the 700 W cap an H100 issues these wgmmas at ~850 TFLOP/s when no
operand moves (scripts/mma_power_probe.py), ~756 with a 128x256x64 mainloop's L2->SM traffic, and our 8192^3 GEMM at
~705: the last ~7% is HBM traffic and the rest of the kernel. ncu counted 1.36 GB of DRAM traffic for 8192^3 where
A, B and C are 384 MB: in the band order (16 tile-rows, 8.25 columns per wave of 132 tiles) each wave re-reads the
band's 16 A panels (32 MB at K = 8192) because the wave's B panels (33 MB) stream through the same 50 MB L2.
Marking B's loads evict-first (A's stay normal: nothing is pinned, no line outlives the kernel's need) should let
the A panels survive from wave to wave: ~0.4-0.7 GB less DRAM traffic on 8192^3, +1.5-3% at the cap.

The hint is added to gemm_kernel's PTX by a stages hook (this probe only: the first TMA load of the producer is A,
the second B; any other count is left plain, with a warning). Use a fresh TRITON_CACHE_DIR per setting: the hinted
binary has the plain one's cache key. Each side runs back to back for a few seconds while nvidia-smi samples
(clock_probe.py), cuBLAS before and after ours.
"""
import json
import os
import re
import sys
import warnings

import torch
from triton import knobs

sys.path.insert(0, os.path.dirname(__file__))
from clock_probe import sustained  # noqa: E402

import warpgemm  # noqa: E402
from warpgemm.bench.timing import warm_gpu  # noqa: E402

_LOAD = re.compile(r"^(\t(?:@!?%p\d+ )?)(cp\.async\.bulk\.tensor\.\dd\.shared::cluster\.global\.mbarrier::"
                   r"complete_tx::bytes)( \[.*\]);$", re.M)
# name -> (A's policy, B's policy); a policy is "primary[.L2::secondary]" or (that, fraction of the accesses).
POLICIES = {"none": (None, None), "b_first": (None, "evict_first"), "a_first": ("evict_first", None),
            "b_first_a_last": ("evict_last", "evict_first"), "a_last": ("evict_last", None),
            "a_last50": (("evict_last.L2::evict_unchanged", 0.5), None)}


def hint_loads(ptx: str, a_policy, b_policy):
    loads = list(_LOAD.finditer(ptx))
    if len(loads) != 2:
        warnings.warn(f"{len(loads)} TMA loads in gemm_kernel, expected 2: left plain")
        return ptx, 0
    out, last, n = [], 0, 0
    for m, policy in zip(loads, (a_policy, b_policy)):
        out.append(ptx[last:m.start()])
        if policy is None:
            out.append(m.group(0))
        else:
            policy, fraction = policy if isinstance(policy, tuple) else (policy, 1.0)
            out.append(f"\t{{ .reg .b64 %l2ld; createpolicy.fractional.L2::{policy}.b64 %l2ld, {fraction:.2f};\n"
                       f"{m.group(1)}{m.group(2)}.L2::cache_hint{m.group(3)}, %l2ld; }}")
            n += 1
        last = m.end()
    out.append(ptx[last:])
    return "".join(out), n


def set_persisting_l2(mb: float) -> int:
    """Set this context's L2 set-aside for evict-last (persisting) lines (CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 0 by
    default, when evict-last lines get no more room than others), trying smaller sizes until the driver takes one;
    returns the bytes it reports."""
    import ctypes
    torch.cuda.init()
    torch.zeros(1, device="cuda")  # the primary context current on this thread
    lib = ctypes.CDLL("libcuda.so.1")
    lib.cuCtxSetLimit.argtypes = [ctypes.c_int, ctypes.c_size_t]
    lib.cuCtxGetLimit.argtypes = [ctypes.POINTER(ctypes.c_size_t), ctypes.c_int]
    size = int(mb * 2**20)
    while size > 0 and lib.cuCtxSetLimit(6, size) != 0:
        size -= 2**20
    got = ctypes.c_size_t(0)
    lib.cuCtxGetLimit(ctypes.byref(got), 6)
    print(f"persisting L2 set-aside: asked {mb} MB, set {got.value / 2**20:.1f} MB", flush=True)
    return got.value


def install(a_policy, b_policy, counts):
    previous = knobs.runtime.add_stages_inspection_hook

    def hook(backend, stages, options, language, capability):
        if previous is not None:
            previous(backend, stages, options, language, capability)
        make_ptx = stages["ptx"]

        def ptx_stage(src, metadata):
            ptx = make_ptx(src, metadata)
            if ".entry gemm_kernel(" in ptx:
                ptx, n = hint_loads(ptx, a_policy, b_policy)
                counts.append(n)
            return ptx

        stages["ptx"] = ptx_stage

    knobs.runtime.add_stages_inspection_hook = hook


def main():
    out_path = sys.argv[1]
    shapes = sys.argv[2:] or ["8192x8192x8192", "16384x8192x8192", "4096x14336x4096", "4096x8192x28672"]
    hint = os.environ.get("HINT", "none")
    seconds = float(os.environ.get("SECONDS_EACH", "2.0"))
    counts = []
    persist = set_persisting_l2(float(os.environ["L2_PERSIST_MB"])) if os.environ.get("L2_PERSIST_MB") else 0
    if hint != "none":
        install(*POLICIES[hint], counts)
    rows = []
    warm_gpu(3.0)
    for shape in shapes:
        M, N, K = map(int, shape.split("x"))
        g = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn(M, K, device="cuda", generator=g).to(torch.bfloat16)
        w = torch.randn(N, K, device="cuda", generator=g).to(torch.bfloat16)
        ours, theirs = (lambda: warpgemm.linear(a, w)), (lambda: torch.nn.functional.linear(a, w))
        err = ((ours().float() - theirs().float()).norm() / theirs().float().norm()).item()
        got = {}
        for side, fn in (("cublas", theirs), ("warpgemm", ours), ("cublas", theirs)):
            row = sustained(fn, 2 * M * N * K, seconds)
            got.setdefault(side, []).append(row["tflops"])
            rows.append({"hint": hint, "shape": shape, "side": side, **row, "rel_diff_vs_cublas": err})
        ratio = got["warpgemm"][0] / (sum(got["cublas"]) / 2)
        print(f"{hint:<15} {shape:<18} ours {got['warpgemm'][0]:6.1f} cuBLAS {got['cublas'][0]:6.1f}/"
              f"{got['cublas'][1]:6.1f} TF/s  ratio {ratio:.3f}  diff {err:.1e}", flush=True)
    env = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    with open(out_path, "w") as f:
        json.dump({"probe": "l2_load_hint", "hint": hint, "persisting_l2_bytes": persist, "hinted_loads": counts,
                   "environment": env, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
