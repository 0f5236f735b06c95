"""Persistent tile schedulers: which piece of work a program does next.

A persistent kernel launches at most one program per SM; program p takes work units p, p + P, p + 2P, ... of
the order a scheduler defines. A unit is an output tile, or with split-K one of the SPLIT_K parts of a tile's
K loop. Every partition of the program builds its own copy of the scheduler from the same arguments and so
walks the same units. The interface the kernels rely on:

    sched = Scheduler.create(p)   # p: partitions.GemmOperands
    for i in range(sched.local_count()):
        work = sched.work(i)      # a WorkItem

The grouped (MoE) GEMM's schedulers are in expert_scheduler.py.
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.language.core import _aggregate as aggregate


@aggregate
class WorkItem:
    """One unit: product tile (batch, off_m, off_n), its linear id, and the K steps [k_first, k_first + k_count)
    it covers as part `split` of the tile's SPLIT_K parts. Rows of C at or past `m_end` are not the tile's to
    write (another group's, in a grouped GEMM; under swap-AB C's rows are the product's columns). `k_end` is for
    the ragged-K form only (ragged_k.py), where k_first and k_end are token indices and the last K step stops at
    k_end; the other schedulers pass 0."""

    batch: gl.tensor
    off_m: gl.tensor
    off_n: gl.tensor
    tile: gl.tensor
    split: gl.tensor
    k_first: gl.tensor
    k_count: gl.tensor
    m_end: gl.tensor
    k_end: gl.tensor

    @gluon.constexpr_function
    def __init__(self, batch, off_m, off_n, tile, split, k_first, k_count, m_end, k_end):
        self.batch = batch
        self.off_m = off_m
        self.off_n = off_n
        self.tile = tile
        self.split = split
        self.k_first = k_first
        self.k_count = k_count
        self.m_end = m_end
        self.k_end = k_end


@gluon.jit
def grouped_order(t, tiles_m, tiles_n, GROUP_M: gl.constexpr):
    """(tile_m, tile_n) of tile t when tiles go GROUP_M tile-rows at a time, column by column within a band:
    the programs running at once share a few row-panels of A and column-panels of B in L2."""
    per_group = GROUP_M * tiles_n
    # Integer division is a ~20-instruction sequence on the critical path to a program's first load: skipped for the
    # first band (one-band products: every tile; session 23 measured ~0.05 us a division on 256^3-512^3).
    if t < per_group:
        group = t * 0
    else:
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
    if tile < per_batch:  # the first batch (every tile of an unbatched product) without the division
        batch = tile * 0
    else:
        batch = tile // per_batch
    tile_m, tile_n = grouped_order(tile - batch * per_batch, tiles_m, tiles_n, GROUP_M)
    return WorkItem(batch, tile_m * BLOCK_M, tile_n * BLOCK_N, tile, split, k_first, k_count, (tile_m + 1) * BLOCK_M,
                    tile * 0)


@gluon.jit
def shift_edges(work, last_m, last_n, EDGE_SHIFT: gl.constexpr):
    """`work` with its tile moved back to end at the product's last column (EDGE_SHIFT bit 1) or row (bit 2) where
    it would run past it: the last tile-column / tile-row then overlaps the one before it instead of reading boxes
    past the operands' ends, which TMA zero-fills slowly (gemm.edge_shift). last_m / last_n: where a shifted tile
    starts (edge_offset). The overlapped outputs are written twice with the same values (gemm.edge_shift: the same
    K order in both tiles)."""
    off_m = work.off_m
    off_n = work.off_n
    if EDGE_SHIFT % 2 == 1:
        off_n = gl.minimum(off_n, last_n)
    if EDGE_SHIFT // 2 == 1:
        off_m = gl.minimum(off_m, last_m)
    return WorkItem(work.batch, off_m, off_n, work.tile, work.split, work.k_first, work.k_count, work.m_end,
                    work.k_end)


@gluon.jit
def edge_offset(size, BLOCK: gl.constexpr):
    """Where shift_edges starts a last tile of BLOCK along a dimension of `size`: size - BLOCK rounded up to 16
    elements (the tile still reaches the end, and starts no later than the unshifted last tile, a multiple of BLOCK),
    since a TMA box along a contiguous dimension must start 16-byte aligned (an unaligned start is an illegal
    instruction; A read along M, an N-major B and C's columns are such dimensions), and 16 elements are 16 bytes or
    more at every element size. At most 15 elements of the tile stay past the edge."""
    return (gl.maximum(size - BLOCK, 0) + 15) // 16 * 16


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
    last_m: gl.tensor
    last_n: gl.tensor
    BLOCK_M: gl.constexpr
    BLOCK_N: gl.constexpr
    GROUP_M: gl.constexpr
    SPLIT_K: gl.constexpr
    EDGE_SHIFT: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, first, step, num_units, tiles_m, tiles_n, num_k, last_m, last_n, BLOCK_M, BLOCK_N, GROUP_M,
                 SPLIT_K, EDGE_SHIFT):
        self.first = first
        self.step = step
        self.num_units = num_units
        self.tiles_m = tiles_m
        self.tiles_n = tiles_n
        self.num_k = num_k
        self.last_m = last_m
        self.last_n = last_n
        self.BLOCK_M = gl.constexpr(BLOCK_M)
        self.BLOCK_N = gl.constexpr(BLOCK_N)
        self.GROUP_M = gl.constexpr(GROUP_M)
        self.SPLIT_K = gl.constexpr(SPLIT_K)
        self.EDGE_SHIFT = gl.constexpr(EDGE_SHIFT)

    @gluon.jit
    def create(p):
        return GroupedTileScheduler.make(p.c_desc.shape[0], p.gemm_m(), p.gemm_n(),
                                         p.num_k_steps(), p.block_m(), p.block_n(), p.GROUP_M, p.SPLIT_K, p.EDGE_SHIFT)

    @gluon.jit
    def make(batches, M, N, num_k, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, GROUP_M: gl.constexpr,
             SPLIT_K: gl.constexpr, EDGE_SHIFT: gl.constexpr = 0):
        return GroupedTileScheduler.walk(gl.program_id(0), gl.num_programs(0), batches, M, N, num_k, BLOCK_M,
                                         BLOCK_N, GROUP_M, SPLIT_K, EDGE_SHIFT)

    @gluon.jit
    def walk(first, step, batches, M, N, num_k, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr, GROUP_M: gl.constexpr,
             SPLIT_K: gl.constexpr, EDGE_SHIFT: gl.constexpr = 0):
        """Units first, first + step, ... (a program's share when `step` walkers split the units); EDGE_SHIFT:
        shift_edges' bits."""
        tiles_m = gl.cdiv(M, BLOCK_M)
        tiles_n = gl.cdiv(N, BLOCK_N)
        num_units = batches * tiles_m * tiles_n * SPLIT_K
        return GroupedTileScheduler(first, step, num_units, tiles_m, tiles_n, gl.to_tensor(num_k),
                                    edge_offset(M, BLOCK_M), edge_offset(N, BLOCK_N), BLOCK_M, BLOCK_N, GROUP_M,
                                    SPLIT_K, EDGE_SHIFT)

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
        work = tile_item(t, self.tiles_m, self.tiles_n, self.GROUP_M, self.BLOCK_M, self.BLOCK_N, split, k_first,
                         k_count)
        if self.EDGE_SHIFT != 0:
            work = shift_edges(work, self.last_m, self.last_n, self.EDGE_SHIFT)
        return work

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


@aggregate
class PairedTileScheduler:
    """Whole tiles for 2-CTA clusters (GemmConfig.cluster_m = 2): the CTAs of a cluster (programs 2q and 2q + 1)
    take the two tiles of a 2 x 1 pair, rows 2m and 2m + 1 of one tile column, which read the same B tile (each CTA
    loads half of it and multicasts it to both). The pairs are GroupedTileScheduler's tiles of 2 * BLOCK_M rows,
    walked by the clusters, in bands of max(GROUP_M // 2, 1) pair-rows (GROUP_M tile-rows when GROUP_M is even).
    Both CTAs of a cluster walk the same pairs with the same K steps, as their shared ring needs; with an odd number
    of tile-rows the last pair's lower tile lies past the output (it loads no A where gemm.phantom_a gives the
    launch A_PHANTOM, else zero fill; its store is clipped whole)."""

    pairs: GroupedTileScheduler
    rank: gl.tensor
    tiles_m: gl.tensor
    BLOCK_M: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, pairs, rank, tiles_m, BLOCK_M):
        self.pairs = pairs
        self.rank = rank
        self.tiles_m = tiles_m
        self.BLOCK_M = gl.constexpr(BLOCK_M)

    @gluon.jit
    def create(p):
        # Cluster dims are (2, 1, 1): a cluster is two consecutive programs, its rank the program's parity.
        program = gl.program_id(0)
        pairs = GroupedTileScheduler.walk(program // 2, gl.num_programs(0) // 2, p.c_desc.shape[0], p.gemm_m(),
                                          p.gemm_n(), p.num_k_steps(), 2 * p.block_m(), p.block_n(),
                                          max(p.GROUP_M // 2, 1), 1, p.EDGE_SHIFT % 2)  # columns only
        return PairedTileScheduler(pairs, program % 2, gl.cdiv(p.gemm_m(), p.block_m()), p.block_m())

    @gluon.jit
    def local_count(self):
        return self.pairs.local_count()

    @gluon.jit
    def work(self, i):
        pair = self.pairs.work(i)
        tile_m = pair.off_m // self.BLOCK_M + self.rank
        off_m = tile_m * self.BLOCK_M
        # With an odd tiles_m the last pair's lower tile (tile_m == tiles_m) lies past the output and its id is that
        # of the next batch's first-row tile: harmless, since only PartialSumEpilogue reads ids and clusters never
        # split K (config.check_config). So is a shifted last pair-column's (EDGE_SHIFT: off_n no longer a multiple of
        # BLOCK_N), which gets the id of the column before it.
        tile = (pair.batch * self.tiles_m + tile_m) * self.pairs.tiles_n + pair.off_n // self.pairs.BLOCK_N
        return WorkItem(pair.batch, off_m, pair.off_n, tile, pair.split, pair.k_first, pair.k_count,
                        off_m + self.BLOCK_M, pair.k_end)

    @gluon.constexpr_function
    def whole_units(self):
        return True
