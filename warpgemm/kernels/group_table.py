"""The row-tile table of a grouped GEMM, built on the device from `offs` (no host synchronization).

Groups are consecutive row ranges of A: group g owns rows [offs[g-1], offs[g]) (offs[-1] taken as 0). Every
group's rows are cut into BLOCK_M-row tiles; the table lists them all:

    table[0]            R, the number of row tiles
    table[1]            the number of groups with at least one row
    table[2 + 5r : +5]  (group, first row, end row, the group's first row tile, its number of row tiles) of
                        row tile r (the last two let the GEMM cut its tile order into bands that stay in one group)

Used for more than 64 groups (expert_scheduler.OFFS_GROUPS_MAX): with fewer the GEMM counts its row tiles from offs
itself. R == table[1] means no group has a second row tile: no weight panel is read by two tiles, and the GEMM is a
stream of the experts' weights (the Hopper GEMM may then pick a streaming tile on the device: scheduler.py).

Offsets are sanitized on the way, so bad ones can never send a tile outside the output: each end is raised to
the previous end (a decreasing offset makes an empty group), clamped to [0, rows]. Correct offsets pass unchanged.
The table needs TABLE_HEADER + ENTRY * (cdiv(rows, BLOCK_M) + groups) int32 slots at most.

A plain Triton kernel (one program, groups in chunks): it also runs under the interpreter on CPU. On the GPU it
is launched with programmatic dependent launch: it lets a GEMM that reads the table with it (swap-AB ones:
kernels/hopper/gemm.launch_uses_pdl) launch at once (the GEMM's launch and prologue then run under this kernel, and
the GEMM waits for the table before reading it), and it waits for the kernel before it (which may have written
offs) before reading offs.
"""
import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait

from .. import _env
from .hopper.launch import CachedKernel


TABLE_HEADER = 2  # int32 slots before the first row tile's entry
ENTRY = 5  # int32 slots per row tile
_HEADER = tl.constexpr(TABLE_HEADER)
_ENTRY = tl.constexpr(ENTRY)


@triton.jit
def _max(a, b):
    return tl.maximum(a, b)


# The counts are not specialized on (Triton would compile again for a count of 1 or a multiple of 16), so one
# binary per (BLOCK_M, BLOCK_G, PDL) serves every call and the cached launch below may reuse it.
@triton.jit(do_not_specialize=["num_groups", "rows"])
def group_row_tiles_kernel(offs_ptr, num_groups, rows, table_ptr, BLOCK_M: tl.constexpr, BLOCK_G: tl.constexpr,
                           PDL: tl.constexpr = False):
    if PDL:
        gdc_launch_dependents()
        gdc_wait()
    carry_end = tl.zeros([], dtype=tl.int32)  # sanitized end of the last group of the previous chunks
    carry_tiles = tl.zeros([], dtype=tl.int32)
    nonempty = tl.zeros([], dtype=tl.int32)
    for g0 in range(0, num_groups, BLOCK_G):
        idx = g0 + tl.arange(0, BLOCK_G)
        live = idx < num_groups
        ends = tl.load(offs_ptr + idx, mask=live, other=0)
        starts = tl.load(offs_ptr + idx - 1, mask=live & (idx > 0), other=0)
        # Running maxima make the ends non-decreasing; the carry continues them across chunks.
        ends = tl.minimum(tl.maximum(tl.associative_scan(ends, 0, _max), carry_end), rows)
        starts = tl.minimum(tl.maximum(tl.associative_scan(starts, 0, _max), carry_end), rows)
        tiles = tl.where(live, (ends - starts + BLOCK_M - 1) // BLOCK_M, 0)
        last = tl.cumsum(tiles, 0) + carry_tiles
        first = last - tiles
        for j in range(tl.max(tiles, 0)):
            has = j < tiles
            entry = table_ptr + _HEADER + _ENTRY * (first + j)
            tl.store(entry, idx, mask=has)
            tl.store(entry + 1, starts + j * BLOCK_M, mask=has)
            tl.store(entry + 2, ends, mask=has)
            tl.store(entry + 3, first, mask=has)
            tl.store(entry + 4, tiles, mask=has)
        carry_end = tl.max(tl.where(live, ends, 0), 0)
        carry_tiles = tl.max(tl.where(live, last, 0), 0)
        nonempty += tl.sum((tiles > 0).to(tl.int32), 0)
    tl.store(table_ptr, carry_tiles)
    tl.store(table_ptr + 1, nonempty)


def table_slots(rows: int, num_groups: int, block_m: int) -> int:
    # Plain integer arithmetic: triton.cdiv is a constexpr function, several us of host time per call.
    return TABLE_HEADER + ENTRY * (-(-rows // block_m) + num_groups)


# (device, BLOCK_M, BLOCK_G, PDL, offs 16-byte aligned) -> CachedKernel: after the first call the launch skips
# Triton's Python binder, which cost several tens of us of host time per eager grouped_mm call.
_LAUNCHES: dict[tuple, object] = {}


def build_group_table(offs, rows: int, block_m: int):
    """Launch the table kernel on offs' device and stream; returns the int32 table tensor."""
    table = torch.empty(table_slots(rows, offs.numel(), block_m), dtype=torch.int32, device=offs.device)
    # Lanes sized to the groups: every lane of a chunk stores on every pass of the row-tile loop, so 1024 lanes for
    # 128 groups cost 8x the instructions (measured 0.35 us a pass; a skewed group of 17 row tiles takes 17 passes).
    block_g = min(1024, 1 << (max(offs.numel(), 16) - 1).bit_length())  # next power of two, at least 16
    args = (offs, offs.numel(), rows, table)
    if offs.is_cuda:
        # Programmatic dependent launch only where the Hopper GEMM reads the table (it needs sm_90).
        pdl = _env.PDL
        key = (offs.device.index, block_m, block_g, pdl, offs.data_ptr() % 16 == 0)
        launch = _LAUNCHES.get(key)
        if launch is None:
            launch = _LAUNCHES[key] = CachedKernel(group_row_tiles_kernel, dict(BLOCK_M=block_m, BLOCK_G=block_g,
                                                                                PDL=pdl),
                                                   num_warps=4, maxnreg=None, pdl=pdl, num_warps_param=False)
        launch.launch(1, offs.device.index, lambda: args, args)
    else:
        group_row_tiles_kernel[(1, )](*args, BLOCK_M=block_m, BLOCK_G=block_g)
    return table
