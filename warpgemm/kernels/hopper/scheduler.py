"""Persistent tile schedulers: which output tile a program does next.

A persistent kernel launches at most one program per SM; program p takes tiles p, p + P, p + 2P, ... of the
order a scheduler defines. Every partition of the program builds its own copy of the scheduler from the same
arguments and so walks the same tiles. The interface the kernels rely on:

    sched = Scheduler.create(batches, M, N, BLOCK_M, BLOCK_N, GROUP_M)
    for i in range(sched.local_count()):
        batch, off_m, off_n = sched.tile(i)
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.language.core import _aggregate as aggregate


@aggregate
class GroupedTileScheduler:
    """Walks (batch, tile_m, tile_n) with tiles grouped GROUP_M rows at a time.

    Within a batch, consecutive tile ids cover a band of GROUP_M tile-rows column by column, so the P programs
    running at once share a few A row-panels and B column-panels in L2 instead of streaming all of B.
    """

    first: gl.tensor
    step: gl.tensor
    num_tiles: gl.tensor
    tiles_m: gl.tensor
    tiles_n: gl.tensor
    BLOCK_M: gl.constexpr
    BLOCK_N: gl.constexpr
    GROUP_M: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, first, step, num_tiles, tiles_m, tiles_n, BLOCK_M, BLOCK_N, GROUP_M):
        self.first = first
        self.step = step
        self.num_tiles = num_tiles
        self.tiles_m = tiles_m
        self.tiles_n = tiles_n
        self.BLOCK_M = gl.constexpr(BLOCK_M)
        self.BLOCK_N = gl.constexpr(BLOCK_N)
        self.GROUP_M = gl.constexpr(GROUP_M)

    @gluon.jit
    def create(batches, M, N, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, GROUP_M: gl.constexpr):
        tiles_m = gl.cdiv(M, BLOCK_M)
        tiles_n = gl.cdiv(N, BLOCK_N)
        num_tiles = batches * tiles_m * tiles_n
        return GroupedTileScheduler(gl.program_id(0), gl.num_programs(0), num_tiles, tiles_m, tiles_n, BLOCK_M,
                                    BLOCK_N, GROUP_M)

    @gluon.jit
    def local_count(self):
        return gl.cdiv(self.num_tiles - self.first, self.step)

    @gluon.jit
    def tile(self, i):
        t = self.first + i * self.step
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
        return batch, tile_m * self.BLOCK_M, tile_n * self.BLOCK_N
