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


@aggregate
class WorkItem:
    """One unit: output tile (batch, off_m, off_n), its linear id, and the K steps [k_first, k_first + k_count)
    it covers as part `split` of the tile's SPLIT_K parts. Rows at or past `m_end` are not the tile's to write
    (another group's, in a grouped GEMM)."""

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
        return GroupedTileScheduler.make(p.c_desc.shape[0], p.c_desc.shape[1], p.c_desc.shape[2],
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
        tile = t
        per_batch = self.tiles_m * self.tiles_n
        batch = t // per_batch
        tile_m, tile_n = grouped_order(t - batch * per_batch, self.tiles_m, self.tiles_n, self.GROUP_M)
        return WorkItem(batch, tile_m * self.BLOCK_M, tile_n * self.BLOCK_N, tile, split, k_first, k_count,
                        (tile_m + 1) * self.BLOCK_M)


@aggregate
class ExpertTileScheduler:
    """Tiles of a grouped GEMM whose groups are row ranges of A (the MoE forward: tokens sorted by expert).

    The rows of every group are cut into BLOCK_M-row tiles by a small kernel run just before (group_table.py),
    which writes, without any host synchronization, the number of row tiles R and for each row tile r its group,
    first row and end row: table = [R, (group, row, end) * R]. The GEMM walks the R x tiles_n tiles in the
    grouped order; each tile multiplies its rows of A by its group's B and writes only rows < end.
    """

    first: gl.tensor
    step: gl.tensor
    num_units: gl.tensor
    tiles_m: gl.tensor
    tiles_n: gl.tensor
    num_k: gl.tensor
    table_ptr: gl.tensor
    BLOCK_N: gl.constexpr
    GROUP_M: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, first, step, num_units, tiles_m, tiles_n, num_k, table_ptr, BLOCK_N, GROUP_M):
        self.first = first
        self.step = step
        self.num_units = num_units
        self.tiles_m = tiles_m
        self.tiles_n = tiles_n
        self.num_k = num_k
        self.table_ptr = table_ptr
        self.BLOCK_N = gl.constexpr(BLOCK_N)
        self.GROUP_M = gl.constexpr(GROUP_M)

    @gluon.jit
    def create(p):
        tiles_m = gl.load(p.group_table_ptr)
        tiles_n = gl.cdiv(p.c_desc.shape[2], p.block_n())
        return ExpertTileScheduler(gl.program_id(0), gl.num_programs(0), tiles_m * tiles_n, tiles_m, tiles_n,
                                   p.num_k_steps(), p.group_table_ptr, p.block_n(), p.GROUP_M)

    @gluon.jit
    def local_count(self):
        return gl.maximum(gl.cdiv(self.num_units - self.first, self.step), 0)

    @gluon.jit
    def work(self, i):
        t = self.first + i * self.step
        tile_m, tile_n = grouped_order(t, self.tiles_m, self.tiles_n, self.GROUP_M)
        entry = self.table_ptr + 1 + 3 * tile_m
        group = gl.load(entry)
        row = gl.load(entry + 1)
        end = gl.load(entry + 2)
        return WorkItem(group, row, tile_n * self.BLOCK_N, t, t * 0, t * 0, self.num_k, end)
