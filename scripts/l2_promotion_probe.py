"""Does the TMA descriptors' L2 promotion decide what rows off 32-byte sectors cost? Triton encodes every tensor map
with CU_TENSOR_MAP_L2_PROMOTION_L2_128B; cuBLAS's TMA kernels read K = 8 mod 16 operands at full speed. Each plan's
cached operand maps (launch.BoundLaunch.maps) are re-encoded in place with another promotion (ctypes, the driver's
cuTensorMapEncodeTiled; the bytes of a same-promotion re-encode are checked against Triton's first) and timed against
torch.matmul in alternating rounds, for the operands as allocated and as views into rows padded to 128 bytes.

    python scripts/l2_promotion_probe.py OUT.json [--shapes MxNxK,...] [--rounds R]
"""
from __future__ import annotations

import argparse
import ctypes
import torch

from warpgemm.bench.gemm_bench import environment
from warpgemm.bench.timing import rounds_ms, warm_gpu
from warpgemm.ops import gemm_impl
from warpgemm.testing import add_probe_rows, padded_rows, probe_operands, rel_error, write_probe_result

PROMOTIONS = {"none": 0, "64B": 1, "128B": 2, "256B": 3}
_CUDA = ctypes.CDLL("libcuda.so.1")
_ENCODE = _CUDA.cuTensorMapEncodeTiled
_ENCODE.restype = ctypes.c_int


def encode_into(tmap, ptr, shape, strides, meta, promotion):
    """Re-encode the tensor map held by Triton's PyCUtensorMap `tmap` (its CUtensorMap sits 128 bytes into the
    object) as fill_tma_descriptor does, with L2 promotion `promotion`."""
    from triton.backends.nvidia.driver import TMA_DTYPE_DEVICE_TO_HOST

    rank = len(shape)
    size = meta["elem_size"]
    dims = (ctypes.c_uint64 * rank)(*reversed(shape))
    pitches = (ctypes.c_uint64 * rank)(*[size * s for s in reversed(strides[:-1])], 0)
    box = (ctypes.c_uint32 * rank)(*reversed(meta["block_size"]))
    ones = (ctypes.c_uint32 * rank)(*([1] * rank))
    res = _ENCODE(ctypes.c_void_p(id(tmap) + 128), TMA_DTYPE_DEVICE_TO_HOST[meta["elem_type"]], rank,
                  ctypes.c_void_p(ptr), dims, pitches, box, ones, 0, meta["swizzle"], promotion, 0)
    if res != 0:
        raise RuntimeError(f"cuTensorMapEncodeTiled failed: {res}")


def promote(launches, promotion):
    """Re-encode every map the bound launches hold (keyed by base address) with `promotion`."""
    for launch in launches:
        for maps, (shape, strides, meta) in zip(launch.bound.maps, launch.bound.metas):
            for ptr, tmap in maps.items():
                encode_into(tmap, ptr, shape, strides, meta, promotion)


def all_maps(launches):
    return [map_bytes(t) for launch in launches for maps in launch.bound.maps for t in maps.values()]


def map_bytes(tmap):
    return ctypes.string_at(id(tmap) + 128, 128)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("json")
    ap.add_argument("--shapes", default="4096x4096x4104,1099x8568x1704,512x14336x4104,1000x1000x1000,4096x4096x4096")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    result = {"environment": environment(), "rows": []}
    warm_gpu(2.0)
    for shape in args.shapes.split(","):
        M, N, K = (int(x) for x in shape.split("x"))
        a, w, ref = probe_operands(M, N, K)
        fns, errs, cfgs = {"cublas": lambda: torch.matmul(a, w.t())}, {}, {}
        for layout, x, y in (("as allocated", a, w), ("rows padded", padded_rows(a), padded_rows(w))):
            for pname, promotion in PROMOTIONS.items():
                name = f"{layout}, L2 {pname}"
                c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
                a3, b3, c3 = x.unsqueeze(0), y.t().unsqueeze(0), c.unsqueeze(0)
                gemm_impl._PLANS.clear()
                p = gemm_impl.plan_hopper(a3, b3, c3, None, None, may_tune=False)
                launches = [p.launch.main, p.launch.tail] if hasattr(p.launch, "tail") else [p.launch]
                p.launch.launch(a3, b3, c3, None)  # compiles; binds the eager launch and its maps
                p.launch.launch(a3, b3, c3, None)
                if any(launch.bound is None for launch in launches):
                    raise SystemExit("no bound launch to re-encode")
                before = all_maps(launches)
                promote(launches, promotion)
                if promotion == 2:
                    assert all_maps(launches) == before, "a same-promotion re-encode differs from Triton's map"
                c.fill_(float("nan"))
                p.launch.launch(a3, b3, c3, None)
                errs[name] = rel_error(c, ref)
                cfgs[name] = p.config.name
                fns[name] = (lambda p, a3, b3, c3: (lambda: p.launch.launch(a3, b3, c3, None)))(p, a3, b3, c3)
        add_probe_rows(result, shape, rounds_ms(fns, args.rounds, 60), errs, cfgs)
    write_probe_result(args.json, result)


if __name__ == "__main__":
    main()
