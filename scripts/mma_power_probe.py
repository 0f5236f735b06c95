"""How fast can the tensor cores run at the 700 W cap when no operand moves through L2 or HBM? (issue 4's ceiling)

    python3 scripts/mma_power_probe.py OUT.json [MxNxK ...]

Sustained dense GEMMs on this H100 run at the power cap (notes/perf.md, 2026-11-22), so their time is energy / 700 W.
This probe measures the cheapest energy per FLOP any bf16 GEMM kernel can have here: every program loads a few
random 128x64 A and 256x64 B slots into shared memory once, then issues the same 128x256x64 wgmmas a GEMM mainloop
issues (two warpgroups, one wgmma in flight, cycling through the slots so the tensor cores see changing random
operands) for ~10 ms per launch, with no TMA, L2 or HBM traffic after the first loads. Its sustained TFLOP/s at the
cap, set against torch.matmul (cuBLAS) and warpgemm sustained on the same GPU in the same process, is the most any
kernel that issues these MMAs could gain over cuBLAS by moving fewer bytes. Each side runs back to back for a few
seconds while nvidia-smi samples clock and power (clock_probe.py); zero operands are measured too, as a check that
the probe sees data-dependent energy (notes 2026-11-24: zero rows run faster at the cap).
"""
import json
import os
import sys

import torch
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                              warpgroup_mma_wait)
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

sys.path.insert(0, os.path.dirname(__file__))
from clock_probe import sustained  # noqa: E402

import warpgemm  # noqa: E402
from warpgemm.bench.timing import warm_gpu  # noqa: E402

BM, BN, BK = 128, 256, 64


@gluon.jit
def mma_only_kernel(a_ptr, b_ptr, out_ptr, iters, STAGES: gl.constexpr, BM: gl.constexpr, BN: gl.constexpr,
                    BK: gl.constexpr, num_warps: gl.constexpr):
    pid = gl.program_id(0)
    ld: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [num_warps, 1], [1, 0])
    a_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], gl.bfloat16)
    b_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BN, BK], gl.bfloat16)
    a_s = gl.allocate_shared_memory(gl.bfloat16, [STAGES, BM, BK], a_layout)
    b_s = gl.allocate_shared_memory(gl.bfloat16, [STAGES, BN, BK], b_layout)
    cols = gl.arange(0, BK, layout=gl.SliceLayout(0, ld))
    a_rows = gl.arange(0, BM, layout=gl.SliceLayout(1, ld))
    b_rows = gl.arange(0, BN, layout=gl.SliceLayout(1, ld))
    for s in gl.static_range(STAGES):
        slot = pid * STAGES + s
        a = gl.load(a_ptr + slot * (BM * BK) + a_rows[:, None] * BK + cols[None, :])
        a_s.index(s).store(a)
        b = gl.load(b_ptr + slot * (BN * BK) + b_rows[:, None] * BK + cols[None, :])
        b_s.index(s).store(b)
    fence_async_shared()
    gl.thread_barrier()
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[num_warps, 1],
                                                         instr_shape=[16, BN, 16])
    acc = gl.zeros([BM, BN], gl.float32, acc_layout)
    for _ in range(iters):
        for s in gl.static_range(STAGES):
            acc = warpgroup_mma(a_s.index(s), b_s.index(s).permute((1, 0)), acc, is_async=True)
            acc = warpgroup_mma_wait(1, deps=(acc, ))
    acc = warpgroup_mma_wait(0, deps=(acc, ))
    out_rows = gl.arange(0, BM, layout=gl.SliceLayout(1, acc_layout))
    out_cols = gl.arange(0, BN, layout=gl.SliceLayout(0, acc_layout))
    gl.store(out_ptr + pid * (BM * BN) + out_rows[:, None] * BN + out_cols[None, :], acc)


@gluon.jit
def mma_l2_kernel(a_desc, b_desc, out_ptr, steps, BLOCKS: gl.constexpr, STAGES: gl.constexpr, num_warps: gl.constexpr):
    """The same wgmmas, each K step's operands brought into a ring of shared-memory slots by TMA from BLOCKS
    distinct blocks small enough to stay in L2: the L2->SM and shared-memory traffic of a 128x256x64 mainloop
    without its HBM reads. One partition, one wgmma in flight; a slot is refilled once both warpgroups retired it."""
    BM: gl.constexpr = a_desc.block_type.shape[0]
    BK: gl.constexpr = a_desc.block_type.shape[1]
    BN: gl.constexpr = b_desc.block_type.shape[0]
    pid = gl.program_id(0)
    a_s = gl.allocate_shared_memory(a_desc.dtype, [STAGES, BM, BK], a_desc.layout)
    b_s = gl.allocate_shared_memory(b_desc.dtype, [STAGES, BN, BK], b_desc.layout)
    ready = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for s in gl.static_range(STAGES):
        mbarrier.init(ready.index(s), count=1)
    fence_async_shared()
    nbytes: gl.constexpr = (BM + BN) * BK * 2
    for s in gl.static_range(STAGES):
        blk = (pid * 7 + s) % BLOCKS
        mbarrier.expect(ready.index(s), nbytes)
        tma.async_copy_global_to_shared(a_desc, [blk * BM, 0], ready.index(s), a_s.index(s))
        tma.async_copy_global_to_shared(b_desc, [blk * BN, 0], ready.index(s), b_s.index(s))
    acc_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[num_warps, 1],
                                                         instr_shape=[16, BN, 16])
    acc = gl.zeros([BM, BN], gl.float32, acc_layout)
    for i in range(steps):
        slot = i % STAGES
        mbarrier.wait(ready.index(slot), (i // STAGES) & 1)
        acc = warpgroup_mma(a_s.index(slot), b_s.index(slot).permute((1, 0)), acc, is_async=True)
        acc = warpgroup_mma_wait(1, deps=(acc, ))
        gl.thread_barrier()
        refill = i - 1 + STAGES
        if (i > 0) & (refill < steps):
            r = (i - 1) % STAGES
            blk = (pid * 7 + refill) % BLOCKS
            mbarrier.expect(ready.index(r), nbytes)
            tma.async_copy_global_to_shared(a_desc, [blk * BM, 0], ready.index(r), a_s.index(r))
            tma.async_copy_global_to_shared(b_desc, [blk * BN, 0], ready.index(r), b_s.index(r))
    acc = warpgroup_mma_wait(0, deps=(acc, ))
    for t in gl.static_range(STAGES):
        mbarrier.invalidate(ready.index(t))
    out_rows = gl.arange(0, BM, layout=gl.SliceLayout(1, acc_layout))
    out_cols = gl.arange(0, BN, layout=gl.SliceLayout(0, acc_layout))
    gl.store(out_ptr + pid * (BM * BN) + out_rows[:, None] * BN + out_cols[None, :], acc)


def mma_l2(stages: int, steps: int, blocks: int = 64):
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    g = torch.Generator(device="cuda").manual_seed(2)
    a = torch.randn(blocks * BM, BK, device="cuda", generator=g).to(torch.bfloat16)
    b = torch.randn(blocks * BN, BK, device="cuda", generator=g).to(torch.bfloat16)
    a_desc = TensorDescriptor.from_tensor(a, [BM, BK], gl.NVMMASharedLayout.get_default_for([BM, BK], gl.bfloat16))
    b_desc = TensorDescriptor.from_tensor(b, [BN, BK], gl.NVMMASharedLayout.get_default_for([BN, BK], gl.bfloat16))
    out = torch.empty(sms * BM * BN, device="cuda", dtype=torch.float32)

    def run():
        mma_l2_kernel[(sms, )](a_desc, b_desc, out, steps, BLOCKS=blocks, STAGES=stages, num_warps=8)

    run()
    torch.cuda.synchronize()
    counts = torch.bincount(torch.tensor([(7 * 0 + i) % blocks for i in range(steps)]), minlength=blocks)
    a3 = a.view(blocks, BM, BK).float()
    b3 = b.view(blocks, BN, BK).float()
    ref = torch.einsum("j,jmk,jnk->mn", counts.to(a3), a3, b3)
    err = ((out.view(sms, BM, BN)[0] - ref).norm() / ref.norm()).item()
    return run, 2 * BM * BN * BK * steps * sms, err


def mma_only(stages: int, iters: int, zero: bool):
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    g = torch.Generator(device="cuda").manual_seed(1)
    a = torch.randn(sms * stages * BM * BK, device="cuda", generator=g).to(torch.bfloat16)
    b = torch.randn(sms * stages * BN * BK, device="cuda", generator=g).to(torch.bfloat16)
    if zero:
        a.zero_()
    out = torch.empty(sms * BM * BN, device="cuda", dtype=torch.float32)

    def run():
        mma_only_kernel[(sms, )](a, b, out, iters, STAGES=stages, BM=BM, BN=BN, BK=BK, num_warps=8)

    run()
    torch.cuda.synchronize()
    # Check the probe computes what it claims: slot s of program p, iters times, summed.
    ref = torch.zeros(BM, BN, device="cuda", dtype=torch.float32)
    a3 = a.view(sms, stages, BM, BK).float()
    b3 = b.view(sms, stages, BN, BK).float()
    for s in range(stages):
        ref += a3[0, s] @ b3[0, s].T
    ref *= iters
    err = ((out.view(sms, BM, BN)[0] - ref).norm() / ref.norm().clamp_min(1e-30)).item()
    flops = 2 * BM * BN * BK * stages * iters * sms
    return run, flops, err


def record(rows, label, side, fn, flops_per_call, seconds):
    row = {"case": label, "side": side, **sustained(fn, flops_per_call, seconds)}
    rows.append(row)
    print(f"{label:<22} {side:<18} {row['tflops']:7.1f} TF/s  {row['sm_clock_mhz']} MHz  {row['power_w']} W  "
          f"{row['throttle']}", flush=True)
    return row


def main():
    out_path = sys.argv[1]
    shapes = sys.argv[2:] or ["8192x8192x8192", "4096x14336x4096", "16384x8192x8192"]
    seconds = float(os.environ.get("SECONDS_EACH", "2.5"))
    rows, checks = [], []
    warm_gpu(3.0)
    for stages in (4, 2):
        for zero in (False, True):
            run, flops, err = mma_only(stages, 2000, zero)
            checks.append({"stages": stages, "zero_a": zero, "rel_err": err})
            print(f"mma_only stages={stages} zero={zero} rel_err={err:.2e}", flush=True)
            label = f"mma_only_s{stages}" + ("_zeroA" if zero else "")
            record(rows, label, "mma_only", run, flops, seconds)
    for stages in (3, 4):
        run, flops, err = mma_l2(stages, 8000)
        checks.append({"variant": f"l2_s{stages}", "rel_err": err})
        print(f"mma_l2 stages={stages} rel_err={err:.2e}", flush=True)
        record(rows, f"mma_l2_s{stages}", "mma_l2", run, flops, seconds)
    for shape in shapes:
        M, N, K = map(int, shape.split("x"))
        g = torch.Generator(device="cuda").manual_seed(0)
        a = torch.randn(M, K, device="cuda", generator=g).to(torch.bfloat16)
        w = torch.randn(N, K, device="cuda", generator=g).to(torch.bfloat16)
        ours, theirs = (lambda: warpgemm.linear(a, w)), (lambda: torch.nn.functional.linear(a, w))
        for side, fn in (("cublas", theirs), ("warpgemm", ours), ("cublas", theirs)):
            record(rows, shape, side, fn, 2 * M * N * K, seconds)
    # The MMA-only rate again at the end: the cap and temperature are the same as the GEMMs saw.
    run, flops, err = mma_only(4, 2000, False)
    record(rows, "mma_only_s4", "mma_only_after", run, flops, seconds)
    env = {"device": torch.cuda.get_device_name(), "torch": torch.__version__}
    with open(out_path, "w") as f:
        json.dump({"probe": "mma_power", "environment": env, "checks": checks, "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
