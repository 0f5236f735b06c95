"""Two questions before a ragged-K (MoE weight-gradient) Gluon kernel is built.

1. Can one host TMA descriptor bound a K step at a group's end? The descriptor views a (T, X) row-major operand as
   (t, j, x) with element (t, j, x) = op[t + j, x]: the t and j dimensions share one stride and j has BK entries.
   A box loaded at (t = k, j = r - BK) then holds BK - r zero rows (j < 0 is out of bounds, so zero-filled)
   followed by rows [k, k + r) of the operand: a group's last, partial K step with nothing of the next group's
   rows. The probe loads such boxes and compares them with what they should hold.
2. How fast is torch._grouped_mm's 2-D x 2-D (groups along K) form on the weight gradients of `bench moe`'s cases,
   against one torch.mm over all tokens (the same FLOPs in one dense GEMM)?

JSON to argv[1].
"""
import json
import sys

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier, tma
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor


@gluon.jit
def box_kernel(desc, out_ptr, t0, j0, x0, BK: gl.constexpr, BX: gl.constexpr):
    smem = gl.allocate_shared_memory(desc.dtype, [1, BK, BX], desc.layout)
    bar = gl.allocate_shared_memory(gl.int64, [1], mbarrier.MBarrierLayout())
    mbarrier.init(bar, count=1)
    mbarrier.expect(bar, desc.block_type.nbytes)
    tma.async_copy_global_to_shared(desc, [t0, j0, x0], bar, smem)
    mbarrier.wait(bar, 0)
    mbarrier.invalidate(bar)
    layout: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
    vals = smem.reshape([BK, BX]).load(layout)
    rows = gl.arange(0, BK, layout=gl.SliceLayout(1, layout))
    cols = gl.arange(0, BX, layout=gl.SliceLayout(0, layout))
    gl.store(out_ptr + gl.expand_dims(rows, 1) * BX + gl.expand_dims(cols, 0), vals)


def tma_trick() -> dict:
    T, X, BK, BX = 1000, 256, 64, 64
    op = torch.randn(T, X, device="cuda", dtype=torch.bfloat16)
    layout = gl.NVMMASharedLayout.get_default_for([1, BK, BX], gl.bfloat16)
    desc = TensorDescriptor(op, [T, BK, X], [X, X, 1], [1, BK, BX], layout)
    cases, bad = [], 0
    for k, end, x0 in [(0, 64, 0), (0, 10, 0), (5, 40, 64), (130, 1000, 128), (960, 1000, 192), (999, 1000, 0),
                       (100, 117, 0), (0, 1, 64)]:
        r = min(BK, end - k)
        out = torch.full((BK, BX), float("nan"), device="cuda", dtype=torch.bfloat16)
        box_kernel[(1, )](desc, out, k, r - BK, x0, BK=BK, BX=BX, num_warps=4)
        want = torch.zeros(BK, BX, device="cuda", dtype=torch.bfloat16)
        want[BK - r:] = op[k:k + r, x0:x0 + BX]
        ok = torch.equal(out, want)
        bad += not ok
        cases.append(dict(k=k, end=end, x0=x0, ok=ok))
    return dict(cases=cases, all_ok=bad == 0)


def wgrad_speed() -> list:
    from warpgemm.bench.moe_bench import MOE_CASES, routing
    from triton.testing import do_bench

    rows = []
    for case in MOE_CASES:
        for kind in ("uniform", "skewed"):
            counts = routing(case.experts, case.tokens, kind)
            offs = torch.cumsum(torch.tensor(counts), 0).to(torch.int32).cuda()
            x = torch.randn(case.tokens, case.K, device="cuda", dtype=torch.bfloat16)
            dy = torch.randn(case.tokens, case.N, device="cuda", dtype=torch.bfloat16)
            t_gmm = do_bench(lambda: torch._grouped_mm(x.t(), dy, offs), warmup=50, rep=300)
            t_mm = do_bench(lambda: torch.mm(x.t(), dy), warmup=50, rep=300)
            flops = 2 * case.tokens * case.K * case.N
            out_bytes = case.experts * case.K * case.N * 2
            rows.append(dict(case=case.label, routing=kind, ms_grouped_mm=t_gmm, ms_dense_mm=t_mm,
                             tflops_grouped_mm=flops / t_gmm / 1e9, tflops_dense_mm=flops / t_mm / 1e9,
                             out_tb_s_grouped_mm=out_bytes / t_gmm / 1e9))
            print(f"{case.label:28s} {kind:8s} grouped_mm {t_gmm * 1e3:9.1f} us {flops / t_gmm / 1e9:6.0f} TF/s "
                  f"out {out_bytes / t_gmm / 1e9:5.2f} TB/s | one mm {t_mm * 1e3:9.1f} us", flush=True)
    return rows


def main():
    result = dict(device=torch.cuda.get_device_name(), tma_trick=tma_trick())
    print("tma trick:", result["tma_trick"], flush=True)
    result["wgrad"] = wgrad_speed()
    with open(sys.argv[1] if len(sys.argv) > 1 else "ragged_k_probe.json", "w") as f:
        json.dump(result, f, indent=1)


if __name__ == "__main__":
    main()
