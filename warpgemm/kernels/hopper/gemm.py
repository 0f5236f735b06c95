"""Host side of the Hopper GEMM: launch plans, descriptors, and a launch path that skips Triton's binder.

A GemmLaunch holds everything about a launch that depends only on geometry (config, operand orientation, TMA
shapes and strides, grid, constexprs). Its first launch goes through `gemm_kernel[grid](...)`, which compiles
(or finds in Triton's cache) and launches; the CompiledKernel is kept on the plan, so later launches go
straight to its launcher with three small descriptor records. Triton's argument binding and specialization
(most of the host cost of a small GEMM) then happen once per call signature, not once per call.
"""
from __future__ import annotations

import functools

import torch
import triton
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

from ...config import GemmConfig, launch_warps
from .gemm_kernel import GroupedTileScheduler, TmaStoreEpilogue, gemm_kernel
from .tma_operands import TmaGeometry

_GL_DTYPES = {torch.bfloat16: gl.bfloat16, torch.float16: gl.float16, torch.float32: gl.float32}


@functools.lru_cache(maxsize=None)
def smem_layout(block: tuple[int, ...], dtype: torch.dtype):
    return gl.NVMMASharedLayout.get_default_for(list(block), _GL_DTYPES[dtype])


def operand_blocks(cfg: GemmConfig, a_kmajor: bool, b_kmajor: bool):
    bm, bn, bk = cfg.block_m, cfg.block_n, cfg.block_k
    a_block = (1, bm, bk) if a_kmajor else (1, bk, bm)
    b_block = (1, bn, bk) if b_kmajor else (1, bk, bn)
    return a_block, b_block, (1, bm, bn)


def kernel_constexprs(cfg: GemmConfig, a_kmajor: bool, b_kmajor: bool, a_batched: bool, b_batched: bool,
                      has_bias: bool) -> dict:
    """The constexpr arguments of `gemm_kernel` for one variant (shared with the offline compile checks)."""
    return dict(A_KMAJOR=a_kmajor, B_KMAJOR=b_kmajor, A_BATCHED=a_batched, B_BATCHED=b_batched, HAS_BIAS=has_bias,
                GROUP_M=cfg.group_m, STAGES=cfg.stages, PRODUCER_REGS=cfg.producer_regs,
                SchedulerImpl=GroupedTileScheduler, EpilogueImpl=TmaStoreEpilogue)


class _LaunchDesc:
    """What Triton's launcher reads off a host tensor descriptor once the kernel is compiled."""

    __slots__ = ("base", "shape", "strides", "padding")

    def __init__(self, base, geom: TmaGeometry):
        self.base = base
        self.shape = geom.shape
        self.strides = geom.strides
        self.padding = "zero"


def _launch_hooks_active() -> bool:
    # Profilers (proton) register launch hooks; then launches go through Triton's own path, which calls them.
    # In triton 3.6 the hook is a HookChain that is never None: it is active when it holds calls.
    hook = triton.knobs.runtime.launch_enter_hook
    return hook is not None and bool(getattr(hook, "calls", True))


class GemmLaunch:
    """One Hopper GEMM call signature: c = a @ b (+ bias) with fixed geometry, launched many times."""

    __slots__ = ("cfg", "a", "b", "c", "grid", "constexprs", "num_warps", "maxnreg", "kernel", "args_tail")

    def __init__(self, cfg: GemmConfig, a: TmaGeometry, b: TmaGeometry, c: TmaGeometry, a_batched: bool,
                 b_batched: bool, has_bias: bool, num_sms: int):
        self.cfg, self.a, self.b, self.c = cfg, a, b, c
        batches, M, N = c.shape
        tiles = batches * triton.cdiv(M, cfg.block_m) * triton.cdiv(N, cfg.block_n)
        self.grid = min(num_sms, tiles)
        self.constexprs = kernel_constexprs(cfg, a.contiguous_dim == 2, b.contiguous_dim == 1, a_batched,
                                            b_batched, has_bias)
        self.num_warps, self.maxnreg = launch_warps(cfg)
        self.kernel = None
        self.args_tail = (*self.constexprs.values(), self.num_warps)

    def launch(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, bias: torch.Tensor | None) -> None:
        """Launch on the current device and stream. `bias`, when given, is a contiguous (N,) float tensor."""
        bias_arg = bias if bias is not None else c
        kernel = self.kernel
        if kernel is not None and not _launch_hooks_active():
            dev = c.device.index
            kernel.run(self.grid, 1, 1, torch._C._cuda_getCurrentRawStream(dev), kernel.function,
                       kernel.packed_metadata, None, None, None,  #
                       _LaunchDesc(a, self.a), _LaunchDesc(b, self.b), _LaunchDesc(c, self.c), bias_arg,
                       *self.args_tail)
            return
        a_block, b_block, c_block = operand_blocks(self.cfg, self.a.contiguous_dim == 2, self.b.contiguous_dim == 1)
        descs = [
            TensorDescriptor(t, list(g.shape), list(g.strides), list(block), smem_layout(block, t.dtype))
            for t, g, block in ((a, self.a, a_block), (b, self.b, b_block), (c, self.c, c_block))
        ]
        self.kernel = gemm_kernel[(self.grid, )](*descs, bias_arg, **self.constexprs, num_warps=self.num_warps,
                                                 maxnreg=self.maxnreg)
