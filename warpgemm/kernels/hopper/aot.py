"""Ahead-of-time compiles of the Hopper kernels for sm_90a, with no GPU: what CI checks structurally.

`compile_gemm(cfg, ...)` builds PTX and a cubin for one variant; `inspect_compiled` reads off what matters:
wgmma / TMA / setmaxnreg present, spills (STACK/LOCAL) and shared memory.
"""
from __future__ import annotations

import os
import re
import subprocess
from typing import NamedTuple

import torch
import triton
from triton.backends.compiler import GPUTarget
from triton.experimental.gluon._runtime import GluonASTSource
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor
from triton.runtime.jit import mangle_type

from ...config import GemmConfig, StreamConfig, launch_warps, stream_launch_regs
from .elementwise_kernel import OPS, elementwise_kernel
from .gemm import compile_context, kernel_constexprs, operand_blocks
from .ptx_hints import store_counts
from .gemm_kernel import gemm_kernel
from .launch import nvmma_layout, parts_source_hash

SM90 = GPUTarget("cuda", 90, 32)
_ALIGNED_POINTERS = ("partials_ptr", "out_ptr")
_PTR_TYPES = {torch.bfloat16: "*bf16", torch.float16: "*fp16", torch.float32: "*fp32"}


class CompileReport(NamedTuple):
    name: str
    has_wgmma: bool
    has_tma_load: bool
    has_tma_store: bool
    has_setmaxnreg: bool
    shared_bytes: int
    registers: int
    stack_bytes: int
    local_bytes: int
    plain_stores: int  # TMA stores without / with an L2 cache hint (ptx_hints.py)
    hinted_stores: int


def _example_descriptor(block, dtype):
    # Shapes and strides are run-time values: a small dummy tensor describes the argument's type.
    t = torch.empty(64 * 64 * 4, dtype=dtype)
    return TensorDescriptor(t, [2, 64, 64], [64 * 64, 64, 1], list(block), nvmma_layout(tuple(block), dtype))


def compile_gemm(cfg: GemmConfig, *, in_dtype=torch.bfloat16, out_dtype=torch.bfloat16, a_kmajor=True,
                 b_kmajor=True, a_batched=True, b_batched=False, has_bias=False, grouped=False, when=0,
                 offs_table=False, ragged_k=False, scale=0, weight_hint=False, early_weight=False, a_pieces=1,
                 a_phantom=False, edge_shift=0):
    a_block, b_block, c_block = operand_blocks(cfg, a_kmajor, b_kmajor, a_pieces)
    descs = [_example_descriptor(a_block, in_dtype), _example_descriptor(b_block, in_dtype),
             _example_descriptor(c_block, out_dtype)]
    constexprs = kernel_constexprs(cfg, a_kmajor, b_kmajor, a_batched, b_batched, has_bias, grouped, when, offs_table,
                                   ragged_k, scale, weight_hint, early_weight, a_pieces, a_phantom,
                                   edge_shift)
    num_warps, maxnreg = launch_warps(cfg)
    signature = {name: mangle_type(d) for name, d in zip(("a_desc", "b_desc", "c_desc"), descs)}
    # A bias has the input dtype or fp32 (fp8 products: the output dtype or fp32).
    signature["bias_ptr"] = _PTR_TYPES[in_dtype if has_bias and in_dtype in _PTR_TYPES else out_dtype]
    signature["partials_ptr"] = "*fp32"
    signature["semaphores_ptr"] = "*i32"
    signature["out_ptr"] = _PTR_TYPES[out_dtype]
    signature["group_table_ptr"] = "*i32"
    signature["scale_a_ptr"] = "*fp32"
    signature["scale_b_ptr"] = "*fp32"
    signature.update({k: "constexpr" for k in constexprs})
    signature["num_warps"] = "constexpr"
    # As the JIT specializes them for 16-byte aligned tensors (the launches' partial and output buffers are).
    aligned = {(i, ): [["tt.divisibility", 16]] for i, name in enumerate(signature) if name in _ALIGNED_POINTERS}
    src = GluonASTSource(gemm_kernel, signature, constexprs={**constexprs, "num_warps": num_warps}, attrs=aligned)
    with compile_context(cfg, constexprs):
        return triton.compile(src, target=SM90, options={"num_warps": num_warps, "maxnreg": maxnreg,
                                                         "launch_pdl": True})


def compile_elementwise(cfg: StreamConfig, dtype=torch.float32, op: str = "add"):
    block = (cfg.block_x, cfg.block_y)
    t = torch.empty(256 * 256, dtype=dtype)
    desc = TensorDescriptor(t, [256, 256], [256, 1], list(block), nvmma_layout(block, dtype, swizzle=False))
    constexprs = dict(OP=OPS[op], LOAD_SLOTS=cfg.load_slots, STORE_SLOTS=cfg.store_slots, IO_REGS=cfg.io_regs,
                      PARTS_HASH=parts_source_hash())
    num_warps, maxnreg = stream_launch_regs(cfg)
    signature = {"a_desc": mangle_type(desc), "b_desc": mangle_type(desc), "c_desc": mangle_type(desc),
                 "alpha": "fp32", **{k: "constexpr" for k in constexprs}, "num_warps": "constexpr"}
    src = GluonASTSource(elementwise_kernel, signature, constexprs={**constexprs, "num_warps": num_warps})
    return triton.compile(src, target=SM90, options={"num_warps": num_warps, "maxnreg": maxnreg})


def _cuobjdump() -> str:
    return os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin", "cuobjdump")


def inspect_compiled(kernel, name: str, tmpdir: str) -> CompileReport:
    ptx = kernel.asm["ptx"]
    path = os.path.join(tmpdir, f"{name}.cubin")
    with open(path, "wb") as f:
        f.write(kernel.asm["cubin"])
    usage = subprocess.run([_cuobjdump(), "--dump-resource-usage", path], capture_output=True, text=True,
                           check=True).stdout

    def field(key):
        m = re.search(rf"\b{key}:(\d+)", usage)
        return int(m.group(1)) if m else -1

    plain_stores, hinted_stores = store_counts(ptx)
    return CompileReport(
        name=name,
        has_wgmma="wgmma.mma_async" in ptx,
        has_tma_load=bool(re.search(r"cp\.async\.bulk\.tensor\.\dd\.shared::cluster\.global", ptx)),
        has_tma_store=bool(re.search(r"cp\.async\.bulk\.tensor\.\dd\.global\.shared::cta", ptx)),
        has_setmaxnreg="setmaxnreg" in ptx,
        shared_bytes=kernel.metadata.shared,
        registers=field("REG"),
        stack_bytes=field("STACK"),
        local_bytes=field("LOCAL"),
        plain_stores=plain_stores,
        hinted_stores=hinted_stores,
    )


def compile_group_gemm(tile: str, *, dtype=torch.bfloat16, b_kmajor=False, c_aligned=True, block_g=64,
                       resident=True):
    """The plain-Triton group_gemm kernel (device-built TMA descriptors) for one TILE_CONFIGS entry."""
    from triton.compiler import ASTSource
    from triton.runtime.jit import JITFunction

    from .group_gemm_tma import _TL, TILE_CONFIGS, group_gemm_tma_kernel

    bm, bn, bk, stages, warps, _ = TILE_CONFIGS[tile]
    constexprs = dict(DTYPE=_TL[dtype], B_KMAJOR=b_kmajor, C_ALIGNED=c_aligned, BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
                      STAGES=stages, BLOCK_G=block_g, RESIDENT=resident)
    signature = {"table_ptr": "*i64", "tile_ends_ptr": "*i64", "c_base": _PTR_TYPES[dtype], "G": "i32",
                 "total_tiles": "i32", **{k: "constexpr" for k in constexprs}}
    if not isinstance(group_gemm_tma_kernel, JITFunction):
        # Under TRITON_INTERPRET the kernel and triton.language's own jit helpers (tl.sum's combine function,
        # tl.cdiv) were decorated as interpreted functions: a compile must run in a process without it.
        raise RuntimeError("compile_group_gemm needs a process without TRITON_INTERPRET=1")
    src = ASTSource(group_gemm_tma_kernel, signature, constexprs=constexprs)
    return triton.compile(src, target=SM90, options={"num_warps": warps})


def _compile_gemv(fn, source_cls, block_n, block_k, warps, rows, dtype, out_dtype, K, has_bias, warps_param):
    """One of the GEMVs as the launches (kernels/gemv.GemvLaunch) specialize it for the nn.Linear layout: x and W
    rows contiguous along K, 16-byte aligned pointers, K and the row strides multiples of 16."""
    from ..gemv import weight_eviction

    constexprs = dict(M_ROWS=rows, BLOCK_N=block_n, BLOCK_K=block_k, HAS_BIAS=has_bias, EVEN_K=K % block_k == 0,
                      PDL=True, W_EVICT=weight_eviction())
    if warps_param:
        constexprs["num_warps"] = warps
    signature = {"x_ptr": _PTR_TYPES[dtype], "w_ptr": _PTR_TYPES[dtype], "y_ptr": _PTR_TYPES[out_dtype],
                 "bias_ptr": _PTR_TYPES[dtype if has_bias else out_dtype], "M": "i32", "N": "i32", "K": "i32",
                 "sxm": "i32", "sxk": "constexpr", "swn": "i32", "sym": "i32", "syn": "constexpr",
                 **{k: "constexpr" for k in constexprs}}
    aligned = {(i, ): [["tt.divisibility", 16]] for i, name in enumerate(signature)
               if name in ("x_ptr", "w_ptr", "y_ptr", "bias_ptr", "K", "swn", "sxm")}
    src = source_cls(fn, signature, constexprs={**constexprs, "sxk": 1, "syn": 1}, attrs=aligned)
    return triton.compile(src, target=SM90, options={"num_warps": warps, "launch_pdl": True})


def compile_gemv(*, dtype=torch.bfloat16, out_dtype=torch.bfloat16, K: int = 4096, has_bias=False):
    """The plain-Triton one-row GEMV (kernels/gemv.py)."""
    from triton.compiler import ASTSource
    from triton.runtime.jit import JITFunction

    from .. import gemv

    if not isinstance(gemv.gemv_kernel, JITFunction):
        raise RuntimeError("compile_gemv needs a process without TRITON_INTERPRET=1")
    return _compile_gemv(gemv.gemv_kernel, ASTSource, gemv.BLOCK_N, gemv.BLOCK_K, gemv.NUM_WARPS, 1, dtype,
                         out_dtype, K, has_bias, warps_param=False)


def compile_gemv_rows(*, dtype=torch.bfloat16, out_dtype=torch.bfloat16, K: int = 4096, has_bias=False,
                      rows: int = 2):
    """The Gluon few-row GEMV (kernels/gemv_rows.py)."""
    from .. import gemv_rows as g

    return _compile_gemv(g.gemv_rows_kernel, GluonASTSource, g.BLOCK_N, g.BLOCK_K, g.NUM_WARPS, rows, dtype,
                         out_dtype, K, has_bias, warps_param=True)
