"""Portable batched GEMM in plain Triton: any strides, masks for ragged edges, fp32 accumulation.

It runs on GPUs without wgmma and on CPU tensors under TRITON_INTERPRET=1. It is the correctness fallback,
not a fast path: no TMA, no warp specialization, a fixed tile.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from ... import _env


@triton.jit
def _round_to_bf16_grid(x):
    # triton 3.6's interpreter truncates fp32 -> bf16 casts; GPUs round to nearest even. Rounding the fp32 bits
    # here (add half an ulp, plus one when the kept lsb is odd) makes the truncating cast exact.
    bits = x.to(tl.uint32, bitcast=True)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.to(tl.float32, bitcast=True)


@triton.jit
def _portable_gemm_kernel(a_ptr, b_ptr, c_ptr, bias_ptr,  #
                          M, N, K,  #
                          sab, sam, sak,  #
                          sbb, sbk, sbn,  #
                          scb, scm, scn,  #
                          HAS_BIAS: tl.constexpr, INTERPRETED: tl.constexpr, BLOCK_M: tl.constexpr,
                          BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid = tl.program_id(0)
    batch = tl.program_id(1)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    rows = tl.minimum(tiles_m - first_m, GROUP_M)
    tile_m = first_m + (pid % per_group) % rows
    tile_n = (pid % per_group) // rows

    offs_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    # Strides may be 0 (an operand broadcast over the batch); offsets are 64-bit so large tensors index safely.
    a_rows = a_ptr + batch.to(tl.int64) * sab + offs_m[:, None].to(tl.int64) * sam
    b_cols = b_ptr + batch.to(tl.int64) * sbb + offs_n[None, :].to(tl.int64) * sbn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        a = tl.load(a_rows + ks[None, :].to(tl.int64) * sak, mask=(offs_m[:, None] < M) & (ks[None, :] < K),
                    other=0.0)
        b = tl.load(b_cols + ks[:, None].to(tl.int64) * sbk, mask=(ks[:, None] < K) & (offs_n[None, :] < N),
                    other=0.0)
        if INTERPRETED:
            # triton 3.6's interpreter misreads bf16 bits in tl.dot; a product of two 16-bit floats is exact in
            # fp32, so upcasting first gives the same sums.
            a = a.to(tl.float32)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, out_dtype=tl.float32)
    if HAS_BIAS:
        bias = tl.load(bias_ptr + offs_n, mask=offs_n < N, other=0.0)
        acc += bias[None, :].to(tl.float32)
    c = c_ptr + batch.to(tl.int64) * scb + offs_m[:, None].to(tl.int64) * scm + offs_n[None, :].to(tl.int64) * scn
    if INTERPRETED and c_ptr.dtype.element_ty == tl.bfloat16:
        acc = _round_to_bf16_grid(acc)
    tl.store(c, acc.to(c_ptr.dtype.element_ty), mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


MAX_GRID_Y = 65535  # CUDA's limit on a grid's second dimension


def portable_tile(device: torch.device) -> tuple[int, int, int]:
    # The interpreter runs a block as numpy arrays: larger blocks mean fewer Python-level programs.
    if device.type == "cpu":
        return 32, 32, 32
    return 64, 64, 32


def portable_gemm(a3: torch.Tensor, b3: torch.Tensor, c3: torch.Tensor, bias: torch.Tensor | None) -> None:
    """c3[b] = a3[b] @ b3[b] (+ bias). a3 (Ba, M, K), b3 (Bb, K, N), c3 (Bt, M, N); Ba, Bb in {1, Bt}."""
    batches, M, N = c3.shape
    K = a3.shape[2]
    bm, bn, bk = portable_tile(c3.device)
    sab = a3.stride(0) if a3.shape[0] > 1 else 0
    sbb = b3.stride(0) if b3.shape[0] > 1 else 0
    if _env.LOG_ENABLED:
        _env.log(f"portable kernel: tile {bm}x{bn}x{bk}, grid {(triton.cdiv(M, bm) * triton.cdiv(N, bn), batches)}")
    # Batches ride the grid's second axis, which CUDA caps at 65535: more run as several launches over slices.
    for first in range(0, batches, MAX_GRID_Y):
        last = min(first + MAX_GRID_Y, batches)
        a_part = a3[first:last] if a3.shape[0] > 1 else a3
        b_part = b3[first:last] if b3.shape[0] > 1 else b3
        _portable_gemm_kernel[(triton.cdiv(M, bm) * triton.cdiv(N, bn), last - first)](
            a_part, b_part, c3[first:last], bias if bias is not None else c3,  #
            M, N, K,  #
            sab, a3.stride(1), a3.stride(2),  #
            sbb, b3.stride(1), b3.stride(2),  #
            c3.stride(0), c3.stride(1), c3.stride(2),  #
            HAS_BIAS=bias is not None, INTERPRETED=c3.device.type == "cpu", BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk,
            GROUP_M=8, num_warps=4)
