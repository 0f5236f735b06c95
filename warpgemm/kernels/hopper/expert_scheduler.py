"""Tile schedulers of the grouped (MoE) GEMM: groups are row ranges of A (tokens sorted by expert), group g owning
rows [offs[g-1], offs[g]), and every group's rows are cut into row tiles of ROW_TILE rows.

Two ways to know where the row tiles are, with one walk over them (`expert_work`):
- ExpertTileScheduler (and its Streaming/Reused variants) reads the row-tile table that a small kernel wrote just
  before (kernels/group_table.py): any number of groups.
- OffsExpertScheduler counts the row tiles itself from offs, in registers, for at most OFFS_GROUPS_MAX groups: no
  table kernel, no table buffer, no kernel boundary on the call's critical path.

Both sanitize offs the same way (each end raised to the previous one and clamped to [0, rows]), so bad offsets can
never send a tile outside the output. The interface is scheduler.py's.
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.language.core import _aggregate as aggregate

from ..group_table import ENTRY, TABLE_HEADER
from .scheduler import WorkItem

_TABLE_HEADER = gl.constexpr(TABLE_HEADER)
_ENTRY = gl.constexpr(ENTRY)

# When an expert-tile GEMM runs (the WHEN of ExpertTileScheduler.make): grouped_mm may launch two GEMMs of different
# tiles on one table, of which exactly one does the work, chosen on the device from the table (no host sync).
RUN_ALWAYS = 0
RUN_IF_STREAMING = 1  # only if no group has a second row tile (every weight panel is read once: a weight stream)
RUN_IF_REUSED = 2  # only otherwise
_ALWAYS = gl.constexpr(RUN_ALWAYS)
_IF_STREAMING = gl.constexpr(RUN_IF_STREAMING)
_IF_REUSED = gl.constexpr(RUN_IF_REUSED)

# Groups an OffsExpertScheduler handles: two per lane of a warp, so every search is a few shuffles in one warp.
OFFS_GROUPS_MAX = 64
_OFFS_G = gl.constexpr(OFFS_GROUPS_MAX)


@gluon.jit
def expert_work(t, r, group, r_row, end, group_first, group_tiles, tiles_n, num_k, BLOCK_N: gl.constexpr,
                ROW_TILE: gl.constexpr, GROUP_M: gl.constexpr, SWAP_AB: gl.constexpr):
    """Unit t of the walk, given what the table says of row tile r = t // tiles_n: its group, first row and end row,
    and the group's first row tile and row-tile count.

    Bands of GROUP_M row tiles, walked column by column, as grouped_order, but cut at group boundaries: a band that
    held the last tiles of one group and the first of the next would have its programs read the column panels of
    two groups' B at once (measured: E128 T65536 skewed 3% faster, the rest within +-1.5%;
    results/2026-11-23-group-bands/). Every row tile owns tiles_n units, so the units before a band are its first
    row tile x tiles_n, and unit t lies in the band of row tile r. The band is in r's group, so r's entry gives the
    group, its end and (offset by whole row tiles) the tile's first row."""
    band_first = group_first + (r - group_first) // GROUP_M * GROUP_M
    band_rows = gl.minimum(group_tiles - (band_first - group_first), GROUP_M)
    within = t - band_first * tiles_n
    tile_m = band_first + within % band_rows
    tile_n = within // band_rows
    row = r_row + (tile_m - r) * ROW_TILE
    if SWAP_AB:
        # The product's rows are C's columns; its columns are the row tile's rows of A (and of C).
        off_m = tile_n * BLOCK_N
        off_n = row
    else:
        off_m = row
        off_n = tile_n * BLOCK_N
    return WorkItem(group, off_m, off_n, t, t * 0, t * 0, num_k, end, t * 0)


@aggregate
class ExpertTileScheduler:
    """The grouped GEMM's tiles, from the row-tile table a small kernel wrote just before (group_table.py): the
    number of row tiles R, the number of groups with rows, and for each row tile r its group, first row, end row,
    and its group's first row tile and row-tile count. The GEMM walks the R x tiles_n tiles in the grouped order,
    with bands cut at group boundaries; each tile multiplies its rows of A by its group's B and writes only rows
    < end.

    Under swap-AB (few rows per group: the kernel computes C^T = B[g]^T A^T) the same walk holds, but a row tile
    is the product's column tile (BLOCK_N rows of A on wgmma's narrow side) and the tiles across are BLOCK_M of
    B's columns on wgmma's 64-row side. The row tiles of one group are adjacent in the table, so the programs
    running at once read each (group, column panel) of B from memory once and share it in L2.

    make(p, WHEN) (RUN_*): a GEMM whose condition the table does not meet has no units; its programs exit at once.
    """

    first: gl.tensor
    step: gl.tensor
    num_units: gl.tensor
    tiles_m: gl.tensor
    tiles_n: gl.tensor
    num_k: gl.tensor
    table_ptr: gl.tensor
    BLOCK_N: gl.constexpr  # columns of C per tile (B's columns: the product's M side under swap-AB)
    ROW_TILE: gl.constexpr  # rows of A per row tile of the table
    GROUP_M: gl.constexpr
    SWAP_AB: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, first, step, num_units, tiles_m, tiles_n, num_k, table_ptr, BLOCK_N, ROW_TILE, GROUP_M,
                 SWAP_AB):
        self.first = first
        self.step = step
        self.num_units = num_units
        self.tiles_m = tiles_m
        self.tiles_n = tiles_n
        self.num_k = num_k
        self.table_ptr = table_ptr
        self.BLOCK_N = gl.constexpr(BLOCK_N)
        self.ROW_TILE = gl.constexpr(ROW_TILE)
        self.GROUP_M = gl.constexpr(GROUP_M)
        self.SWAP_AB = gl.constexpr(SWAP_AB)

    @gluon.jit
    def create(p):
        return ExpertTileScheduler.make(p, _ALWAYS)

    @gluon.jit
    def make(p, WHEN: gl.constexpr):
        BLOCK_C: gl.constexpr = p.block_m() if p.SWAP_AB else p.block_n()
        ROW_TILE: gl.constexpr = p.block_n() if p.SWAP_AB else p.block_m()
        tiles_m = gl.load(p.group_table_ptr)
        if WHEN != _ALWAYS:
            streaming = tiles_m == gl.load(p.group_table_ptr + 1)
            if WHEN == _IF_STREAMING:
                tiles_m = gl.where(streaming, tiles_m, 0)
            else:
                tiles_m = gl.where(streaming, 0, tiles_m)
        tiles_n = gl.cdiv(p.c_desc.shape[2], BLOCK_C)
        return ExpertTileScheduler(gl.program_id(0), gl.num_programs(0), tiles_m * tiles_n, tiles_m, tiles_n,
                                   p.num_k_steps(), p.group_table_ptr, BLOCK_C, ROW_TILE, p.GROUP_M, p.SWAP_AB)

    @gluon.jit
    def local_count(self):
        return gl.maximum(gl.cdiv(self.num_units - self.first, self.step), 0)

    @gluon.jit
    def work(self, i):
        t = self.first + i * self.step
        r = t // self.tiles_n
        # One round of five independent loads per unit.
        entry = self.table_ptr + _TABLE_HEADER + _ENTRY * r
        group = gl.load(entry)
        r_row = gl.load(entry + 1)
        end = gl.load(entry + 2)
        group_first = gl.load(entry + 3)
        group_tiles = gl.load(entry + 4)
        return expert_work(t, r, group, r_row, end, group_first, group_tiles, self.tiles_n, self.num_k,
                           self.BLOCK_N, self.ROW_TILE, self.GROUP_M, self.SWAP_AB)


@aggregate
class StreamingExpertScheduler:
    """ExpertTileScheduler that runs only when no group has a second row tile (RUN_IF_STREAMING)."""

    unused: gl.constexpr

    @gluon.constexpr_function
    def __init__(self):
        self.unused = gl.constexpr(0)

    @gluon.jit
    def create(p):
        return ExpertTileScheduler.make(p, _IF_STREAMING)


@aggregate
class ReusedExpertScheduler:
    """ExpertTileScheduler that runs only when some group has several row tiles (RUN_IF_REUSED)."""

    unused: gl.constexpr

    @gluon.constexpr_function
    def __init__(self):
        self.unused = gl.constexpr(0)

    @gluon.jit
    def create(p):
        return ExpertTileScheduler.make(p, _IF_REUSED)


EXPERT_SCHEDULERS = {RUN_ALWAYS: ExpertTileScheduler, RUN_IF_STREAMING: StreamingExpertScheduler,
                     RUN_IF_REUSED: ReusedExpertScheduler}


@gluon.jit
def running_max(a, b):
    return gl.maximum(a, b)


@gluon.jit
def _running_sum(a, b):
    return a + b


@gluon.jit
def total(x):
    # gl.reduce with this module's combine function, not gl.sum: in the CPU test process (TRITON_INTERPRET=1) the
    # offline compile of this scheduler with gl.sum failed ("Unsupported function referenced: InterpretedFunction",
    # triton.language's combine function); this form compiles there and on the GPU alike.
    return gl.reduce(x, 0, _running_sum)


@aggregate
class OffsExpertScheduler:
    """ExpertTileScheduler's walk over the same tiles, with the row-tile table computed by every partition itself
    from offs (passed as the kernel's group_table_ptr) for at most OFFS_GROUPS_MAX groups.

    Each partition loads offs once into a [OFFS_GROUPS_MAX] vector held by every warp (two groups per lane, so a
    reduction over groups is shuffles within a warp, with no shared memory or barrier), sanitizes it as the table
    kernel does, and keeps each group's start, end and running row-tile count. A unit's row tile r lies in the one
    group with first <= r < last (empty groups have first == last), so its entry is five independent reductions.
    """

    first: gl.tensor
    step: gl.tensor
    num_units: gl.tensor
    tiles_n: gl.tensor
    num_k: gl.tensor
    idx: gl.tensor  # group numbers 0 .. OFFS_GROUPS_MAX - 1
    starts: gl.tensor  # sanitized first row of each group
    ends: gl.tensor  # sanitized end row
    tiles: gl.tensor  # row tiles of each group
    last: gl.tensor  # row tiles of groups 0..g (so group g's tiles are last - tiles .. last - 1)
    BLOCK_N: gl.constexpr
    ROW_TILE: gl.constexpr
    GROUP_M: gl.constexpr
    SWAP_AB: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, first, step, num_units, tiles_n, num_k, idx, starts, ends, tiles, last, BLOCK_N, ROW_TILE,
                 GROUP_M, SWAP_AB):
        self.first = first
        self.step = step
        self.num_units = num_units
        self.tiles_n = tiles_n
        self.num_k = num_k
        self.idx = idx
        self.starts = starts
        self.ends = ends
        self.tiles = tiles
        self.last = last
        self.BLOCK_N = gl.constexpr(BLOCK_N)
        self.ROW_TILE = gl.constexpr(ROW_TILE)
        self.GROUP_M = gl.constexpr(GROUP_M)
        self.SWAP_AB = gl.constexpr(SWAP_AB)

    @gluon.jit
    def create(p):
        BLOCK_C: gl.constexpr = p.block_m() if p.SWAP_AB else p.block_n()
        ROW_TILE: gl.constexpr = p.block_n() if p.SWAP_AB else p.block_m()
        # Every warp holds the whole vector (a warp covers it, the other warps repeat it).
        layout: gl.constexpr = gl.BlockedLayout([_OFFS_G // 32], [32], [gl.num_warps()], [0])
        idx = gl.arange(0, _OFFS_G, layout=layout)
        # The experts are the product's A under swap-AB (its B otherwise): their batch count is the group count.
        groups = p.a_desc.shape[0] if p.SWAP_AB else p.b_desc.shape[0]
        rows = p.c_desc.shape[1]
        live = idx < groups
        ends = gl.load(p.group_table_ptr + idx, mask=live, other=0)
        prev = gl.load(p.group_table_ptr + idx - 1, mask=live & (idx > 0), other=0)
        # Running maxima make the ends non-decreasing (a decreasing offset gives an empty group); then clamp.
        ends = gl.minimum(gl.maximum(gl.associative_scan(ends, 0, running_max), 0), rows)
        starts = gl.minimum(gl.maximum(gl.associative_scan(prev, 0, running_max), 0), rows)
        tiles = gl.where(live, (ends - starts + ROW_TILE - 1) // ROW_TILE, 0)
        last = gl.associative_scan(tiles, 0, _running_sum)
        tiles_m = total(tiles)
        tiles_n = gl.cdiv(p.c_desc.shape[2], BLOCK_C)
        return OffsExpertScheduler(gl.program_id(0), gl.num_programs(0), tiles_m * tiles_n, tiles_n,
                                   p.num_k_steps(), idx, starts, ends, tiles, last, BLOCK_C, ROW_TILE, p.GROUP_M,
                                   p.SWAP_AB)

    @gluon.jit
    def local_count(self):
        return gl.maximum(gl.cdiv(self.num_units - self.first, self.step), 0)

    @gluon.jit
    def work(self, i):
        t = self.first + i * self.step
        r = t // self.tiles_n
        group_first_v = self.last - self.tiles
        own = (group_first_v <= r) & (r < self.last)  # exactly one group: r < R and empty groups own nothing
        group = total(gl.where(own, self.idx, 0))
        group_first = total(gl.where(own, group_first_v, 0))
        group_tiles = total(gl.where(own, self.tiles, 0))
        start = total(gl.where(own, self.starts, 0))
        end = total(gl.where(own, self.ends, 0))
        r_row = start + (r - group_first) * self.ROW_TILE
        return expert_work(t, r, group, r_row, end, group_first, group_tiles, self.tiles_n, self.num_k,
                           self.BLOCK_N, self.ROW_TILE, self.GROUP_M, self.SWAP_AB)
