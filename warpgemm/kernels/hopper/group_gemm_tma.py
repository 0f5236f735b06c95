"""`group_gemm` on Hopper: many independent GEMMs of different shapes in one persistent launch, operands read
through TMA descriptors built on the device, one per problem and tile.

The host writes one row per problem (pointers, sizes, row pitches) and the running count of output tiles into a
small device table. A fixed grid of programs (a few per SM) walks the concatenated tile list with a stride; for
each tile a program finds its problem by comparing the tile index with the cumulative tile counts (held in
registers when there are at most MAX_RESIDENT problems), builds the A and B descriptors for that problem and runs
a TMA + wgmma mainloop that Triton software-pipelines. Several programs per SM hide one program's per-tile
start-up (table read, descriptor build, pipeline fill) under another's mainloop.

Why descriptors are rebuilt per tile and are safe to overwrite: a descriptor lives in the program's slice of
global scratch and is rewritten at the next tile, but by then every TMA load issued through it has been
consumed by the dot of the previous tile's K loop, which the software pipeline drains at the loop's end. The
output goes out through ordinary masked stores (no asynchronous store reads the old descriptor).

Written in plain Triton, not Gluon: Triton 3.6's pipeliner already gives this loop its TMA ring, and the
per-tile descriptor build needs no partition hand-off. The Gluon persistent kernel serves `grouped_mm`, whose
groups share one weight tensor and so one descriptor.
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.runtime import _allocation

from .launch import launch_hooks_active
from .scratch import split_k_scratch

# Table row: A and B addresses, C offset (elements, from the output base), M, N, K, A pitch, B pitch as row-major
# (K, N), C pitch, B pitch as (N, K) (the host fills both B pitches; the kernel's B_KMAJOR picks one).
FIELDS = 10
MAX_RESIDENT = 1024  # at most this many problems: cumulative tile counts stay in registers


@triton.jit(do_not_specialize=["G", "total_tiles"])  # the raw launcher passes any values: no int specialization
def group_gemm_tma_kernel(table_ptr, tile_ends_ptr, c_base, G, total_tiles,  #
                          DTYPE: tl.constexpr, B_KMAJOR: tl.constexpr, C_ALIGNED: tl.constexpr,  #
                          BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, STAGES: tl.constexpr,
                          BLOCK_G: tl.constexpr, RESIDENT: tl.constexpr):
    """C_g = A_g @ B_g for every problem g; A_g (M, K) row-major, B_g (K, N) row-major, or (N, K) row-major read
    as its transpose when B_KMAJOR; C_g (M, N) row-major. A and B: bases and pitches multiples of 16 bytes
    (host-checked: a device-built descriptor does not check them)."""
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    if RESIDENT:
        idx = tl.arange(0, BLOCK_G)
        ends = tl.load(tile_ends_ptr + idx, mask=idx < G, other=2147483647)
    else:
        ends = 0
    for tile in range(pid, total_tiles, nprog):
        # The tile's problem: how many problems' tiles end at or before it.
        if RESIDENT:
            g = tl.sum((ends <= tile).to(tl.int32), 0)
        else:
            g = 0
            for g0 in range(0, G, BLOCK_G):
                chunk_idx = g0 + tl.arange(0, BLOCK_G)
                chunk = tl.load(tile_ends_ptr + chunk_idx, mask=chunk_idx < G, other=2147483647)
                g += tl.sum((chunk <= tile).to(tl.int32), 0)
        first = tl.load(tile_ends_ptr + g - 1, mask=g > 0, other=0).to(tl.int32)
        row = table_ptr + g.to(tl.int64) * 10  # FIELDS
        a_ptr = tl.load(row).to(tl.pointer_type(DTYPE))
        b_ptr = tl.load(row + 1).to(tl.pointer_type(DTYPE))
        c_ptr = c_base + tl.load(row + 2)
        M = tl.load(row + 3).to(tl.int32)
        N = tl.load(row + 4).to(tl.int32)
        K = tl.load(row + 5).to(tl.int32)
        lda = tl.load(row + 6)
        if B_KMAJOR:
            ldb = tl.load(row + 9)
        else:
            ldb = tl.load(row + 7)
        ldc = tl.load(row + 8)
        local = tile - first
        tiles_n = tl.cdiv(N, BLOCK_N)
        off_m = (local // tiles_n) * BLOCK_M
        off_n = (local % tiles_n) * BLOCK_N
        a_desc = tl.make_tensor_descriptor(a_ptr, shape=[M, K], strides=[lda, 1], block_shape=[BLOCK_M, BLOCK_K])
        if B_KMAJOR:
            b_desc = tl.make_tensor_descriptor(b_ptr, shape=[N, K], strides=[ldb, 1], block_shape=[BLOCK_N, BLOCK_K])
        else:
            b_desc = tl.make_tensor_descriptor(b_ptr, shape=[K, N], strides=[ldb, 1], block_shape=[BLOCK_K, BLOCK_N])
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for kk in tl.range(0, tl.cdiv(K, BLOCK_K), num_stages=STAGES):
            k = kk * BLOCK_K
            a = a_desc.load([off_m, k])
            if B_KMAJOR:
                b = b_desc.load([off_n, k]).T
            else:
                b = b_desc.load([k, off_n])
            acc = tl.dot(a, b, acc)
        offs_m = off_m + tl.arange(0, BLOCK_M)
        offs_n = off_n + tl.arange(0, BLOCK_N)
        if C_ALIGNED:  # every output's base and pitch are multiples of 16 bytes: 16-byte stores
            c_ptr = tl.multiple_of(c_ptr, 16)
            ldc = tl.multiple_of(ldc, 8)
        tl.store(c_ptr + offs_m[:, None].to(tl.int64) * ldc + offs_n[None, :], acc.to(DTYPE),
                 mask=(offs_m[:, None] < M) & (offs_n[None, :] < N))


_TL = {torch.bfloat16: tl.bfloat16, torch.float16: tl.float16}

# (BLOCK_M, BLOCK_N, BLOCK_K, STAGES, num_warps, programs per SM); chosen per call by tile_config_for.
TILE_CONFIGS = {
    "large": (128, 128, 64, 4, 8, 1),
    "medium": (128, 128, 64, 3, 8, 2),
    "small": (64, 128, 64, 4, 4, 2),
}


def tile_config_for(ms, ns) -> str:
    """A TILE_CONFIGS key for the typical problem: its median rows and columns (ms, ns: per problem)."""
    m, n = sorted(ms)[len(ms) // 2], sorted(ns)[len(ns) // 2]
    if m <= 64:
        return "small"
    return "large" if m * n >= 1024 * 1024 else "medium"


class _Variant:
    """One compiled specialization and the raw C launcher behind it (Triton's Python launcher re-binds every
    argument and calls the scratch allocator on each launch; here only the stream and table change)."""

    __slots__ = ("compiled", "fn", "tail", "scratch_bytes")

    def __init__(self, compiled, constexprs: dict):
        self.compiled = compiled
        self.fn = compiled.run.launch
        self.tail = tuple(constexprs.values())
        self.scratch_bytes = compiled.metadata.global_scratch_size


_VARIANTS: dict[tuple, _Variant] = {}


def launch_group_gemm_tma(table: torch.Tensor, table_ptr: int, ends_ptr: int, out: torch.Tensor, groups: int,
                          total_tiles: int, b_kmajor: bool, c_aligned: bool, config: str, num_sms: int) -> None:
    """Launch on the current stream. table: the device table, (groups, FIELDS) int64 rows then the cumulative
    tile counts (int64) at ends_ptr; table_ptr: its address; out: the allocation the C offsets point into."""
    dtype = out.dtype
    bm, bn, bk, stages, warps, per_sm = TILE_CONFIGS[config]
    grid = min(total_tiles, per_sm * num_sms)
    resident = groups <= MAX_RESIDENT
    block_g = 64 if groups <= 64 else MAX_RESIDENT
    device = table.device.index
    key = (device, dtype, b_kmajor, c_aligned, config, block_g, resident)
    stream = torch._C._cuda_getCurrentRawStream(device)
    v = _VARIANTS.get(key)
    if v is None or launch_hooks_active():
        constexprs = dict(DTYPE=_TL[dtype], B_KMAJOR=b_kmajor, C_ALIGNED=c_aligned, BLOCK_M=bm, BLOCK_N=bn,
                          BLOCK_K=bk, STAGES=stages, BLOCK_G=block_g, RESIDENT=resident)
        # Device-built descriptors live in global scratch that Triton asks an allocator for. Set ours only for
        # this launch: the process-wide allocator belongs to the user.
        token = _allocation._allocator.set(
            lambda size, align, _stream: split_k_scratch(device, stream, -(-size // 4), 1)[0])
        try:
            compiled = group_gemm_tma_kernel[(grid, )](table, table[groups * FIELDS:], out, groups, total_tiles,
                                                       **constexprs, num_warps=warps)
        finally:
            _allocation._allocator.reset(token)
        if v is None:
            _VARIANTS[key] = _Variant(compiled, constexprs)
        return
    scratch = split_k_scratch(device, stream, -(-grid * v.scratch_bytes // 4), 1)[0]
    c = v.compiled
    v.fn(grid, 1, 1, stream, c.function, False, False, scratch.data_ptr(), None, c.packed_metadata, None, None,
         None, table_ptr, ends_ptr, out.data_ptr(), groups, total_tiles, *v.tail)
