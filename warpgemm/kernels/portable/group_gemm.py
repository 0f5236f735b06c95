"""`group_gemm`: many independent GEMMs of different shapes in one launch (plain Triton, any GPU or the
interpreter).

The host writes one row per problem into a device table (pointers, sizes, strides) and the cumulative count of
output tiles; each program finds its problem by counting the problems whose tiles end at or before its own
tile (vectorized, in chunks), then runs an ordinary masked tile loop. One launch replaces a Python loop of
matmul calls, whose per-call host cost dominates small problems.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from ... import _env
from .gemm import _round_to_bf16_grid

FIELDS = 12  # a, b, c pointers; M, N, K; a strides (m, k); b strides (k, n); c strides (m, n)


@triton.jit
def _group_gemm_kernel(table_ptr, tile_ends_ptr, G, DTYPE: tl.constexpr, INTERPRETED: tl.constexpr,
                       ROW_MAJOR: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, BLOCK_G: tl.constexpr):
    pid = tl.program_id(0)
    g = 0
    for g0 in range(0, G, BLOCK_G):
        idx = g0 + tl.arange(0, BLOCK_G)
        ends = tl.load(tile_ends_ptr + idx, mask=idx < G, other=2147483647)
        g += tl.sum((ends <= pid).to(tl.int32), 0)
    first = tl.load(tile_ends_ptr + g - 1, mask=g > 0, other=0)
    row = table_ptr + g.to(tl.int64) * 12
    a_ptr = tl.load(row).to(tl.pointer_type(DTYPE))
    b_ptr = tl.load(row + 1).to(tl.pointer_type(DTYPE))
    c_ptr = tl.load(row + 2).to(tl.pointer_type(DTYPE))
    M = tl.load(row + 3)
    N = tl.load(row + 4)
    K = tl.load(row + 5)
    sam = tl.load(row + 6)
    sak = tl.load(row + 7)
    sbk = tl.load(row + 8)
    sbn = tl.load(row + 9)
    scm = tl.load(row + 10)
    scn = tl.load(row + 11)
    if ROW_MAJOR:
        # The host checked: unit inner strides, 16-byte aligned bases and row pitches. Saying so lets the loads
        # vectorize; pointers and strides read from memory are otherwise of unknown alignment.
        a_ptr = tl.multiple_of(a_ptr, 16)
        b_ptr = tl.multiple_of(b_ptr, 16)
        c_ptr = tl.multiple_of(c_ptr, 16)
        sam = tl.multiple_of(sam, 8)
        sbk = tl.multiple_of(sbk, 8)
        scm = tl.multiple_of(scm, 8)
        sak = 1
        sbn = 1
        scn = 1
    local = pid - first
    tiles_n = tl.cdiv(N, BLOCK_N)
    tile_m = local // tiles_n
    tile_n = local % tiles_n
    offs_m = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + offs_k
        a = tl.load(a_ptr + offs_m[:, None] * sam + ks[None, :] * sak, mask=(offs_m[:, None] < M) & (ks[None, :] < K),
                    other=0.0)
        b = tl.load(b_ptr + ks[:, None] * sbk + offs_n[None, :] * sbn, mask=(ks[:, None] < K) & (offs_n[None, :] < N),
                    other=0.0)
        if INTERPRETED:
            a = a.to(tl.float32)  # the interpreter misreads bf16 in tl.dot (see gemm.py)
            b = b.to(tl.float32)
        acc = tl.dot(a, b, acc, out_dtype=tl.float32)
    if INTERPRETED and DTYPE == tl.bfloat16:
        acc = _round_to_bf16_grid(acc)
    tl.store(c_ptr + offs_m[:, None] * scm + offs_n[None, :] * scn, acc.to(DTYPE),
             mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


_TL = {torch.bfloat16: tl.bfloat16, torch.float16: tl.float16}


def group_tile(device: torch.device, problems) -> tuple[int, int, int, int]:
    """(BLOCK_M, BLOCK_N, BLOCK_K, num_warps): one tile for all problems, sized to the typical one."""
    if device.type == "cpu":
        return 32, 32, 32, 4
    big = sorted(m * n for m, n, _ in problems)[len(problems) // 2] >= 512 * 512
    return (128, 128, 64, 8) if big else (64, 64, 64, 4)


def launch_group_gemm(problems, outs) -> None:
    """problems: [(a (M,K), b (K,N))] on one device; outs: matching (M,N) tensors, written in place."""
    device = outs[0].device
    bm, bn, bk, warps = group_tile(device, [(a.shape[0], b.shape[1], a.shape[1]) for a, b in problems])
    rows, ends, total = [], [], 0
    for (a, b), c in zip(problems, outs):
        M, K = a.shape
        N = b.shape[1]
        rows.append([a.data_ptr(), b.data_ptr(), c.data_ptr(), M, N, K, a.stride(0), a.stride(1), b.stride(0),
                     b.stride(1), c.stride(0), c.stride(1)])
        total += triton.cdiv(M, bm) * triton.cdiv(N, bn)
        ends.append(total)
    if total == 0:
        return
    align = 16 // outs[0].element_size()

    def row_major(t):
        return (t.stride(1) == 1 or t.shape[1] <= 1) and t.data_ptr() % 16 == 0 and (t.stride(0) % align == 0
                                                                                   or t.shape[0] <= 1)
    aligned = all(row_major(a) and row_major(b) for a, b in problems) and all(row_major(c) for c in outs)
    # One host-to-device copy of the table (pinned, asynchronous on the current stream).
    host = torch.tensor([v for r in rows for v in r] + ends, dtype=torch.int64).pin_memory() \
        if device.type == "cuda" else torch.tensor([v for r in rows for v in r] + ends, dtype=torch.int64)
    table = host.to(device, non_blocking=True)
    tile_ends = table[len(rows) * FIELDS:]
    if _env.LOG_ENABLED:
        _env.log(f"group_gemm: {len(rows)} problems, {total} tiles of {bm}x{bn}x{bk}")
    _group_gemm_kernel[(total, )](table, tile_ends, len(rows), DTYPE=_TL[outs[0].dtype],
                                  INTERPRETED=device.type == "cpu", ROW_MAJOR=aligned, BLOCK_M=bm, BLOCK_N=bn,
                                  BLOCK_K=bk,
                                  BLOCK_G=min(1024, triton.next_power_of_2(len(rows))), num_warps=warps,
                                  num_stages=3)
