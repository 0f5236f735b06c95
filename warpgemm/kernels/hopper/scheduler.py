"""Persistent tile schedulers: which piece of work a program does next.

A persistent kernel launches at most one program per SM; program p takes work units p, p + P, p + 2P, ... of
the order a scheduler defines. A unit is an output tile, or with split-K one of the SPLIT_K parts of a tile's
K loop. Every partition of the program builds its own copy of the scheduler from the same arguments and so
walks the same units. The interface the kernels rely on:

    sched = Scheduler.create(batches, M, N, num_k, BLOCK_M, BLOCK_N, GROUP_M, SPLIT_K)
    for i in range(sched.local_count()):
        work = sched.work(i)      # a WorkItem
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.language.core import _aggregate as aggregate


@aggregate
class WorkItem:
    """One unit: output tile (batch, off_m, off_n), its linear id, and the K steps [k_first, k_first + k_count)
    it covers as part `split` of the tile's SPLIT_K parts."""

    batch: gl.tensor
    off_m: gl.tensor
    off_n: gl.tensor
    tile: gl.tensor
    split: gl.tensor
    k_first: gl.tensor
    k_count: gl.tensor

    @gluon.constexpr_function
    def __init__(self, batch, off_m, off_n, tile, split, k_first, k_count):
        self.batch = batch
        self.off_m = off_m
        self.off_n = off_n
        self.tile = tile
        self.split = split
        self.k_first = k_first
        self.k_count = k_count


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
    def create(batches, M, N, num_k, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, GROUP_M: gl.constexpr,
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
        t = t - batch * per_batch
        per_group = self.GROUP_M * self.tiles_n
        group = t // per_group
        first_m = group * self.GROUP_M
        group_rows = gl.minimum(self.tiles_m - first_m, self.GROUP_M)
        within = t - group * per_group
        tile_m = first_m + within % group_rows
        tile_n = within // group_rows
        return WorkItem(batch, tile_m * self.BLOCK_M, tile_n * self.BLOCK_N, tile, split, k_first, k_count)
