"""Persistent tile schedulers: which piece of work a program does next.

A persistent kernel launches at most one program per SM; program p takes work units p, p + P, p + 2P, ... of
the order a scheduler defines. A unit is an output tile, or with split-K one of the SPLIT_K parts of a tile's
K loop. Every partition of the program builds its own copy of the scheduler from the same arguments and so
walks the same units. The interface the kernels rely on:

    sched = Scheduler.create(p)   # p: partitions.GemmOperands
    for i in range(sched.local_count()):
        work = sched.work(i)      # a WorkItem
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.language.core import _aggregate as aggregate

from ..group_table import ENTRY, TABLE_HEADER

_TABLE_HEADER = gl.constexpr(TABLE_HEADER)
_ENTRY = gl.constexpr(ENTRY)


@aggregate
class WorkItem:
    """One unit: product tile (batch, off_m, off_n), its linear id, and the K steps [k_first, k_first + k_count)
    it covers as part `split` of the tile's SPLIT_K parts. Rows of C at or past `m_end` are not the tile's to
    write (another group's, in a grouped GEMM; under swap-AB C's rows are the product's columns)."""

    batch: gl.tensor
    off_m: gl.tensor
    off_n: gl.tensor
    tile: gl.tensor
    split: gl.tensor
    k_first: gl.tensor
    k_count: gl.tensor
    m_end: gl.tensor

    @gluon.constexpr_function
    def __init__(self, batch, off_m, off_n, tile, split, k_first, k_count, m_end):
        self.batch = batch
        self.off_m = off_m
        self.off_n = off_n
        self.tile = tile
        self.split = split
        self.k_first = k_first
        self.k_count = k_count
        self.m_end = m_end


@gluon.jit
def grouped_order(t, tiles_m, tiles_n, GROUP_M: gl.constexpr):
    """(tile_m, tile_n) of tile t when tiles go GROUP_M tile-rows at a time, column by column within a band:
    the programs running at once share a few row-panels of A and column-panels of B in L2."""
    per_group = GROUP_M * tiles_n
    group = t // per_group
    first_m = group * GROUP_M
    group_rows = gl.minimum(tiles_m - first_m, GROUP_M)
    within = t - group * per_group
    return first_m + within % group_rows, within // group_rows


@gluon.jit
def tile_item(tile, tiles_m, tiles_n, GROUP_M: gl.constexpr, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, split,
              k_first, k_count):
    """The WorkItem of linear tile `tile` (batches one after another, grouped order within a batch)."""
    per_batch = tiles_m * tiles_n
    batch = tile // per_batch
    tile_m, tile_n = grouped_order(tile - batch * per_batch, tiles_m, tiles_n, GROUP_M)
    return WorkItem(batch, tile_m * BLOCK_M, tile_n * BLOCK_N, tile, split, k_first, k_count, (tile_m + 1) * BLOCK_M)


@aggregate
class GroupedTileScheduler:
    """Walks (batch, tile_m, tile_n) with tiles grouped GROUP_M rows at a time, each cut into SPLIT_K parts.

    Within a batch, consecutive tile ids cover a band of GROUP_M tile-rows column by column, so the P programs
    running at once share a few A row-panels and B column-panels in L2 instead of streaming all of B. The parts
    of one tile are consecutive units: they run at the same time, so the last of them waits least for the others.
    """

    first: gl.tensor
    step: gl.tensor
    num_units: gl.tensor
    tiles_m: gl.tensor
    tiles_n: gl.tensor
    num_k: gl.tensor
    BLOCK_M: gl.constexpr
    BLOCK_N: gl.constexpr
    GROUP_M: gl.constexpr
    SPLIT_K: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, first, step, num_units, tiles_m, tiles_n, num_k, BLOCK_M, BLOCK_N, GROUP_M, SPLIT_K):
        self.first = first
        self.step = step
        self.num_units = num_units
        self.tiles_m = tiles_m
        self.tiles_n = tiles_n
        self.num_k = num_k
        self.BLOCK_M = gl.constexpr(BLOCK_M)
        self.BLOCK_N = gl.constexpr(BLOCK_N)
        self.GROUP_M = gl.constexpr(GROUP_M)
        self.SPLIT_K = gl.constexpr(SPLIT_K)

    @gluon.jit
    def create(p):
        return GroupedTileScheduler.make(p.c_desc.shape[0], p.gemm_m(), p.gemm_n(),
                                         p.num_k_steps(), p.block_m(), p.block_n(), p.GROUP_M, p.SPLIT_K)

    @gluon.jit
    def make(batches, M, N, num_k, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, GROUP_M: gl.constexpr,
             SPLIT_K: gl.constexpr):
        tiles_m = gl.cdiv(M, BLOCK_M)
        tiles_n = gl.cdiv(N, BLOCK_N)
        num_units = batches * tiles_m * tiles_n * SPLIT_K
        return GroupedTileScheduler(gl.program_id(0), gl.num_programs(0), num_units, tiles_m, tiles_n,
                                    gl.to_tensor(num_k),
                                    BLOCK_M, BLOCK_N, GROUP_M, SPLIT_K)

    @gluon.jit
    def local_count(self):
        return gl.cdiv(self.num_units - self.first, self.step)

    @gluon.jit
    def work(self, i):
        u = self.first + i * self.step
        if self.SPLIT_K == 1:
            t = u
            split = u * 0
            k_first = u * 0
            k_count = self.num_k
        else:
            t = u // self.SPLIT_K
            split = u - t * self.SPLIT_K
            # Parts differ by at most one K step; with fewer steps than parts some parts are empty.
            k_first = split * self.num_k // self.SPLIT_K
            k_count = (split + 1) * self.num_k // self.SPLIT_K - k_first
        return tile_item(t, self.tiles_m, self.tiles_n, self.GROUP_M, self.BLOCK_M, self.BLOCK_N, split, k_first,
                         k_count)

    # Where split-K parts keep their partial sums (epilogues that reduce parts call these; see StreamKScheduler).
    @gluon.constexpr_function
    def whole_units(self):
        """Whether a unit can cover a whole tile alone (its tile then needs no reduction)."""
        return self.SPLIT_K == 1

    @gluon.jit
    def partial_slot(self, work):
        return work.tile * self.SPLIT_K + work.split

    @gluon.jit
    def tile_parts(self, tile):
        first = tile * self.SPLIT_K
        return self.SPLIT_K, first, first, 1


# When an expert-tile GEMM runs (the WHEN of ExpertTileScheduler.make): grouped_mm may launch two GEMMs of different
# tiles on one table, of which exactly one does the work, chosen on the device from the table (no host sync).
RUN_ALWAYS = 0
RUN_IF_STREAMING = 1  # only if no group has a second row tile (every weight panel is read once: a weight stream)
RUN_IF_REUSED = 2  # only otherwise
_ALWAYS = gl.constexpr(RUN_ALWAYS)
_IF_STREAMING = gl.constexpr(RUN_IF_STREAMING)
_IF_REUSED = gl.constexpr(RUN_IF_REUSED)


@aggregate
class ExpertTileScheduler:
    """Tiles of a grouped GEMM whose groups are row ranges of A (the MoE forward: tokens sorted by expert).

    The rows of every group are cut into BLOCK_M-row tiles by a small kernel run just before (group_table.py),
    which writes, without any host synchronization, the number of row tiles R, the number of groups with rows, and
    for each row tile r its group, first row and end row. The GEMM walks the R x tiles_n tiles in the grouped
    order, with bands cut at group boundaries; each tile multiplies its rows of A by its group's B and writes only
    rows < end.

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
        # Bands of GROUP_M row tiles, walked column by column, as grouped_order, but cut at group boundaries: a band
        # that held the last tiles of one group and the first of the next would have its programs read the column
        # panels of two groups' B at once (measured: E128 T65536 skewed 3% faster, the rest within +-1.5%;
        # results/2026-11-23-group-bands/). Every row tile owns tiles_n units, so the units before a band are its
        # first row tile x tiles_n, and unit t lies in the band of row tile t // tiles_n. The band is in r's group,
        # so r's entry gives the group, its end and (offset by whole row tiles) the tile's first row: one round of
        # independent loads per unit.
        r = t // self.tiles_n
        entry = self.table_ptr + _TABLE_HEADER + _ENTRY * r
        group = gl.load(entry)
        r_row = gl.load(entry + 1)
        end = gl.load(entry + 2)
        group_first = gl.load(entry + 3)
        group_tiles = gl.load(entry + 4)
        band_first = group_first + (r - group_first) // self.GROUP_M * self.GROUP_M
        band_rows = gl.minimum(group_tiles - (band_first - group_first), self.GROUP_M)
        within = t - band_first * self.tiles_n
        tile_m = band_first + within % band_rows
        tile_n = within // band_rows
        row = r_row + (tile_m - r) * self.ROW_TILE
        if self.SWAP_AB:
            # The product's rows are C's columns; its columns are the row tile's rows of A (and of C).
            off_m = tile_n * self.BLOCK_N
            off_n = row
        else:
            off_m = row
            off_n = tile_n * self.BLOCK_N
        return WorkItem(group, off_m, off_n, t, t * 0, t * 0, self.num_k, end)


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
def stream_k_start(program, programs, total):
    """First K step (in the tiles' K steps laid end to end) of `program`'s even share of `total` steps."""
    return program.to(gl.int64) * total // programs


@gluon.jit
def stream_k_owner(step, programs, total):
    """The program whose share holds K step `step`: the largest q with stream_k_start(q) <= step."""
    return (((step.to(gl.int64) + 1) * programs + total - 1) // total - 1).to(gl.int32)


@aggregate
class StreamKScheduler:
    """Stream-K: the K steps of all tiles, laid end to end (tile by tile in the grouped order), are cut into one
    contiguous, even share per program. A program's share starts part-way into a tile, covers whole tiles, and ends
    part-way into another, so each unit is one tile's run of K steps within the share; only the first and the last
    unit of a share can be partial. Every program does the same number of K steps (+-1) whatever the tile count,
    which is what removes the idle tail of a last, partly filled wave of tiles.

    The grid must not exceed the total number of K steps (every share non-empty). A unit's `split` is the scratch
    slot its partial goes to: 2 * program for the share's first unit, 2 * program + 1 for its last.
    """

    first_tile: gl.tensor
    start: gl.tensor
    end: gl.tensor
    program: gl.tensor
    programs: gl.tensor
    total: gl.tensor
    tiles_m: gl.tensor
    tiles_n: gl.tensor
    num_k: gl.tensor
    BLOCK_M: gl.constexpr
    BLOCK_N: gl.constexpr
    GROUP_M: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, first_tile, start, end, program, programs, total, tiles_m, tiles_n, num_k, BLOCK_M, BLOCK_N,
                 GROUP_M):
        self.first_tile = first_tile
        self.start = start
        self.end = end
        self.program = program
        self.programs = programs
        self.total = total
        self.tiles_m = tiles_m
        self.tiles_n = tiles_n
        self.num_k = num_k
        self.BLOCK_M = gl.constexpr(BLOCK_M)
        self.BLOCK_N = gl.constexpr(BLOCK_N)
        self.GROUP_M = gl.constexpr(GROUP_M)

    @gluon.jit
    def create(p):
        tiles_m = gl.cdiv(p.gemm_m(), p.block_m())
        tiles_n = gl.cdiv(p.gemm_n(), p.block_n())
        num_k = p.num_k_steps()
        total = p.c_desc.shape[0].to(gl.int64) * tiles_m * tiles_n * num_k
        program = gl.program_id(0)
        programs = gl.num_programs(0)
        start = stream_k_start(program, programs, total)
        end = stream_k_start(program + 1, programs, total)
        return StreamKScheduler(start // num_k, start, end, program, programs, total, tiles_m, tiles_n,
                                gl.to_tensor(num_k), p.block_m(), p.block_n(), p.GROUP_M)

    @gluon.jit
    def local_count(self):
        return ((self.end - 1) // self.num_k - self.first_tile + 1).to(gl.int32)

    @gluon.jit
    def work(self, i):
        t = self.first_tile + i
        tile_start = t * self.num_k
        k_first = (gl.maximum(self.start - tile_start, 0)).to(gl.int32)
        k_count = (gl.minimum(self.end - tile_start, self.num_k)).to(gl.int32) - k_first
        split = 2 * self.program + (i > 0).to(gl.int32)
        return tile_item(t.to(gl.int32), self.tiles_m, self.tiles_n, self.GROUP_M, self.BLOCK_M, self.BLOCK_N, split,
                         k_first, k_count)

    @gluon.constexpr_function
    def whole_units(self):
        return True

    @gluon.jit
    def partial_slot(self, work):
        return work.split

    @gluon.jit
    def tile_parts(self, tile):
        """(parts, first slot, base, step) of a tile: the programs p_lo..p_hi whose shares hold its K steps, in
        program order; part j > 0 is program p_lo + j's first unit (slot base + j * step); part 0 is p_lo's first
        unit, or its last when p_lo's share began in an earlier tile."""
        tile_start = tile.to(gl.int64) * self.num_k
        lo = stream_k_owner(tile_start, self.programs, self.total)
        hi = stream_k_owner(tile_start + self.num_k - 1, self.programs, self.total)
        began_before = (stream_k_start(lo, self.programs, self.total) < tile_start).to(gl.int32)
        return hi - lo + 1, 2 * lo + began_before, 2 * lo, 2
