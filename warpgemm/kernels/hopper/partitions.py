"""The two partitions of the warp-specialized GEMM mainloop, written once for every GEMM kernel.

- `tma_producer`: one warp; walks the scheduler's tiles and, for each K step, waits for an empty ring slot and
  issues the TMA loads of the A and B tiles into it (the TMA engine signals the slot's ready barrier).
- `wgmma_consumer`: one or two warpgroups; waits for ready slots, issues async wgmma, frees each slot once the
  wgmma reading it has retired, and hands the finished accumulator to the epilogue. A kernel runs one consumer
  (the default partition) or two ("ping-pong": the second is a worker partition) that take alternate units.

Operands are described by 3-D TMA descriptors (batch, rows, cols). "K-major" means K is the contiguous
dimension: A (M, K) row-major and B given as W.T of an (N, K) weight are K-major. The other cases are read
with the transposed box and handed to wgmma as a permuted shared-memory view, so no layout needs a copy.
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                              warpgroup_mma_wait)
from triton.language.core import _aggregate as aggregate

from .pipeline import BarrierRing, RingPosition


@gluon.constexpr_function
def main_columns(block_n):
    """The largest power of two <= block_n: all of a tile but a two-part one's main part (128 of 192 or 144)."""
    main = 1
    while main * 2 <= block_n:
        main *= 2
    return main


@aggregate
class GemmOperands:
    """What both partitions read: descriptors, the operand ring and the static shape of the problem."""

    a_desc: tma.tensor_descriptor
    b_desc: tma.tensor_descriptor
    c_desc: tma.tensor_descriptor
    bias_ptr: gl.tensor
    partials_ptr: gl.tensor
    semaphores_ptr: gl.tensor
    out_ptr: gl.tensor
    group_table_ptr: gl.tensor
    scale_a_ptr: gl.tensor
    scale_b_ptr: gl.tensor
    a_bufs: gl.shared_memory_descriptor
    b_bufs: gl.shared_memory_descriptor
    b_rest: gl.shared_memory_descriptor
    ring: BarrierRing
    turns: gl.shared_memory_descriptor
    A_KMAJOR: gl.constexpr
    B_KMAJOR: gl.constexpr
    A_BATCHED: gl.constexpr
    B_BATCHED: gl.constexpr
    HAS_BIAS: gl.constexpr
    SCALE: gl.constexpr
    GROUP_M: gl.constexpr
    SPLIT_K: gl.constexpr
    CONSUMERS: gl.constexpr
    SWAP_AB: gl.constexpr
    RAGGED_K: gl.constexpr
    CLUSTER_M: gl.constexpr
    B_PIECES: gl.constexpr
    A_PIECES: gl.constexpr
    A_PHANTOM: gl.constexpr
    EDGE_SHIFT: gl.constexpr
    K_SERPENTINE: gl.constexpr
    WEIGHT_HINT: gl.constexpr
    EARLY_WEIGHT: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, a_desc, b_desc, c_desc, bias_ptr, partials_ptr, semaphores_ptr, out_ptr, group_table_ptr,
                 scale_a_ptr, scale_b_ptr, a_bufs, b_bufs, b_rest, ring, turns,
                 A_KMAJOR, B_KMAJOR, A_BATCHED, B_BATCHED, HAS_BIAS, SCALE, GROUP_M, SPLIT_K, CONSUMERS, SWAP_AB,
                 RAGGED_K, CLUSTER_M, B_PIECES, A_PIECES, A_PHANTOM, EDGE_SHIFT, K_SERPENTINE, WEIGHT_HINT,
                 EARLY_WEIGHT):
        self.a_desc = a_desc
        self.b_desc = b_desc
        self.c_desc = c_desc
        self.bias_ptr = bias_ptr
        self.partials_ptr = partials_ptr
        self.semaphores_ptr = semaphores_ptr
        self.out_ptr = out_ptr
        self.group_table_ptr = group_table_ptr
        self.scale_a_ptr = scale_a_ptr
        self.scale_b_ptr = scale_b_ptr
        self.a_bufs = a_bufs
        self.b_bufs = b_bufs
        self.b_rest = b_rest
        self.ring = ring
        self.turns = turns
        self.A_KMAJOR = gl.constexpr(A_KMAJOR)
        self.B_KMAJOR = gl.constexpr(B_KMAJOR)
        self.A_BATCHED = gl.constexpr(A_BATCHED)
        self.B_BATCHED = gl.constexpr(B_BATCHED)
        self.HAS_BIAS = gl.constexpr(HAS_BIAS)
        self.SCALE = gl.constexpr(SCALE)
        self.GROUP_M = gl.constexpr(GROUP_M)
        self.SPLIT_K = gl.constexpr(SPLIT_K)
        self.CONSUMERS = gl.constexpr(CONSUMERS)
        self.SWAP_AB = gl.constexpr(SWAP_AB)
        self.RAGGED_K = gl.constexpr(RAGGED_K)
        self.CLUSTER_M = gl.constexpr(CLUSTER_M)
        self.B_PIECES = gl.constexpr(B_PIECES)
        self.A_PIECES = gl.constexpr(A_PIECES)
        self.A_PHANTOM = gl.constexpr(A_PHANTOM)
        self.EDGE_SHIFT = gl.constexpr(EDGE_SHIFT)
        self.K_SERPENTINE = gl.constexpr(K_SERPENTINE)
        self.WEIGHT_HINT = gl.constexpr(WEIGHT_HINT)
        self.EARLY_WEIGHT = gl.constexpr(EARLY_WEIGHT)

    # Static tile shape, read off the operand descriptors' boxes (with SWAP_AB the output descriptor is C's, not
    # the product's: A is the caller's B transposed and the tile is stored transposed).
    @gluon.constexpr_function
    def block_m(self):
        # A K-major A may come in A_PIECES boxes of rows (gemm.edge_pieces: tiles past A's last row).
        return self.a_desc.block_type.shape[1] * self.A_PIECES if self.A_KMAJOR else self.a_desc.block_type.shape[2]

    @gluon.constexpr_function
    def mma_m(self):
        """Rows of the wgmma tile and of each A slot: block_m, but at least the 64 rows of one warpgroup's wgmma.
        A 32-row swap-AB tile (twice the tiles over a weight) loads its 32 rows into the lower half of a 64-row
        slot whose upper half stays zero; the epilogue keeps the lower half of the accumulator."""
        return max(self.block_m(), 64)

    @gluon.constexpr_function
    def block_n(self):
        # From B's box: the output descriptor's box may be a column chunk of the tile. A B tile can arrive in
        # B_PIECES pieces along N (config.GemmConfig.b_pieces_for): in a cluster pair each CTA loads every other
        # piece and receives the rest from its peer; a two-part tile (TMA boxes must have power-of-two sides) comes in
        # boxes as wide as its rest (192 columns: three of 64; 144: nine of 16), a two-part pair's on a K-major B in
        # boxes half that wide (192: six of 32), on an N-major one in the rest-wide boxes (two and one a CTA).
        box = self.b_desc.block_type.shape
        return (box[1] if self.B_KMAJOR else box[2]) * self.B_PIECES

    @gluon.constexpr_function
    def block_n_main(self):
        """Columns of the tile's first accumulator: the tile, or the largest power of two below a two-part width.
        Triton's tensors and shared buffers have power-of-two shapes: such a tile is computed as a main and a rest
        accumulator (`block_n_rest`; 192 = 128 + 64, 144 = 128 + 16), each a wgmma of its own, on B slots of the
        main part's columns (b_bufs) and the rest's (b_rest)."""
        return main_columns(self.block_n())

    @gluon.constexpr_function
    def block_n_rest(self):
        return self.block_n() - self.block_n_main()

    @gluon.constexpr_function
    def block_k(self):
        return self.a_desc.block_type.shape[2] if self.A_KMAJOR else self.a_desc.block_type.shape[1]

    @gluon.constexpr_function
    def step_bytes(self):
        """Bytes a K step's loads bring into a ring slot: every piece of A and of B."""
        return self.A_PIECES * self.a_desc.block_type.nbytes + self.B_PIECES * self.b_desc.block_type.nbytes

    @gluon.jit
    def gemm_m(self):
        """Rows of the product the kernel computes (C's columns under SWAP_AB)."""
        return self.c_desc.shape[2] if self.SWAP_AB else self.c_desc.shape[1]

    @gluon.jit
    def gemm_n(self):
        return self.c_desc.shape[1] if self.SWAP_AB else self.c_desc.shape[2]

    @gluon.jit
    def num_k_steps(self):
        K = self.a_desc.shape[2] if self.A_KMAJOR else self.a_desc.shape[1]
        return gl.cdiv(K, self.block_k())

    @gluon.jit
    def scheduler(self, SchedulerImpl: gl.constexpr):
        return SchedulerImpl.create(self)

    @gluon.jit
    def a_tile(self, index):
        """The A slot as the [MMA_M, BLOCK_K] view wgmma reads."""
        BM: gl.constexpr = self.mma_m()
        BK: gl.constexpr = self.block_k()
        if self.A_KMAJOR:
            return self.a_bufs.index(index).reshape([BM, BK])
        else:
            return self.a_bufs.index(index).reshape([BK, BM]).permute((1, 0))

    @gluon.jit
    def a_slot(self, index):
        """Where the producer's TMA load of A lands: the slot, or the lower block_m rows of a taller one."""
        if self.mma_m() > self.block_m():
            slot = self.a_bufs.index(index).slice(0, self.block_m(), dim=1)
        else:
            slot = self.a_bufs.index(index)
        return slot

    @gluon.jit
    def zero_a_padding(self):
        """Zero the rows of every A slot that TMA never writes (mma_m > block_m), once, before the first wgmma."""
        if self.mma_m() > self.block_m():
            MMA_M: gl.constexpr = self.mma_m()
            BM: gl.constexpr = self.block_m()
            BK: gl.constexpr = self.block_k()
            SLOTS: gl.constexpr = self.a_bufs.shape[0]
            layout: gl.constexpr = gl.BlockedLayout([1, 8], [4, 8], [gl.num_warps(), 1], [1, 0])
            zeros = gl.zeros([MMA_M - BM, BK], self.a_bufs.dtype, layout)
            for s in gl.static_range(SLOTS):
                self.a_bufs.index(s).reshape([MMA_M, BK]).slice(BM, MMA_M - BM, dim=0).store(zeros)
            fence_async_shared()

    @gluon.jit
    def b_tile(self, index):
        """The B slot as the [BLOCK_K, BLOCK_N] view wgmma reads (a two-part tile: its main part's columns)."""
        BN: gl.constexpr = self.block_n_main()
        BK: gl.constexpr = self.block_k()
        if self.B_KMAJOR:
            return self.b_bufs.index(index).reshape([BN, BK]).permute((1, 0))
        else:
            return self.b_bufs.index(index).reshape([BK, BN])

    @gluon.jit
    def b_rest_tile(self, index):
        """A two-part tile's rest columns of B (the b_rest slot) as the [BLOCK_K, rest] view."""
        BN: gl.constexpr = self.block_n_rest()
        BK: gl.constexpr = self.block_k()
        if self.B_KMAJOR:
            return self.b_rest.index(index).reshape([BN, BK]).permute((1, 0))
        else:
            return self.b_rest.index(index).reshape([BK, BN])

    @gluon.jit
    def b_piece_slot(self, index, piece: gl.constexpr):
        """Where piece `piece` of a B tile in pieces lands: its columns of the tile (rows of a K-major box, the
        contiguous dimension of an N-major one) in the b_bufs slot, or in b_rest."""
        DIM: gl.constexpr = 1 if self.B_KMAJOR else 2
        WIDTH: gl.constexpr = self.b_desc.block_type.shape[DIM]
        MAIN: gl.constexpr = self.block_n_main()
        if piece * WIDTH < MAIN:
            slot = self.b_bufs.index(index).slice(piece * WIDTH, WIDTH, dim=DIM)
        else:
            slot = self.b_rest.index(index).slice(piece * WIDTH - MAIN, WIDTH, dim=DIM)
        return slot


@gluon.jit
def wait_for_prior_grid():
    """Programmatic dependent launch: block until the kernel launched before this one on the stream has finished
    and its writes are visible (a no-op when the launch did not overlap). Every partition calls it before its
    first global access, so nothing is read before a producer wrote it or written while a predecessor reads it."""
    gl.inline_asm_elementwise("griddepcontrol.wait; // dummy $0", "=r", [], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def allow_dependents():
    """Let the next kernel on the stream be scheduled now: its programs start as SMs free up and wait (above)."""
    gl.inline_asm_elementwise("griddepcontrol.launch_dependents; // dummy $0", "=r", [], dtype=gl.int32,
                              is_pure=False, pack=1)


@gluon.jit
def cluster_rank():
    """This CTA's rank in its cluster (0 outside clusters)."""
    return gl.inline_asm_elementwise("mov.u32 $0, %cluster_ctarank;", "=r", [], dtype=gl.int32, is_pure=True, pack=1)


@gluon.jit
def cluster_sync(CLUSTER: gl.constexpr):
    """In a cluster, every warp of both CTAs meets here once, at the start of its partition: no CTA may multicast
    into its peer's ring or arrive on its peer's barriers before the peer has initialized them (the default
    partition's warps did, before the partitions started; their fence makes the inits visible cluster-wide)."""
    if CLUSTER > 1:
        gl.inline_asm_elementwise("fence.mbarrier_init.release.cluster; barrier.cluster.arrive.release.aligned; "
                                  "barrier.cluster.wait.acquire.aligned; // $0", "=r", [], dtype=gl.int32,
                                  is_pure=False, pack=1)


@gluon.jit
def multicast_begin():
    """Marks the start of TMA loads that the PTX pass (ptx_hints.cluster_rewrite) turns into multicasts to both
    CTAs of the cluster."""
    gl.inline_asm_elementwise("// warpgemm:multicast-begin $0", "=r", [], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def multicast_end():
    gl.inline_asm_elementwise("// warpgemm:multicast-end $0", "=r", [], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def evict_first_begin():
    """Marks the start of TMA loads that the PTX pass (ptx_hints.hint_marked_loads) gives an L2 evict-first policy."""
    gl.inline_asm_elementwise("// warpgemm:evict-first-begin $0", "=r", [], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def evict_first_end():
    gl.inline_asm_elementwise("// warpgemm:evict-first-end $0", "=r", [], dtype=gl.int32, is_pure=False, pack=1)


@gluon.jit
def load_step(p: GemmOperands, work, kk, index, bar, pred=True):
    """Issue the TMA loads of K step kk of `work` into ring slot `index`, counted by `bar` (the slot's ready
    barrier), if `pred`: the producer partition's work per step, and the one-partition kernel's (one_partition.py)."""
    # The ready barrier counts every piece of B (with CLUSTER_M = 2: its own pieces and its peer's multicasts).
    mbarrier.expect(bar, p.step_bytes(), pred=pred)
    at = step_coords(p, work, kk)
    load_a(p, work, at, index, bar, pred)
    load_b(p, work, at, index, bar, pred)


@gluon.jit
def step_coords(p: GemmOperands, work, kk):
    """(A's outer coordinate, B's outer coordinate, K coordinate) of K step kk of `work`."""
    BK: gl.constexpr = p.block_k()
    if p.RAGGED_K:
        # Tokens [t, t + r) of the unit's group, through both operands' (t, j, x) views: the box at
        # j = r - BK holds BK - r zero rows, then those tokens (ragged_k.py).
        t = work.k_first + kk * BK
        a_outer = t
        b_outer = t
        k = gl.minimum(work.k_end - t, BK) - BK
    else:
        # An operand shared by every batch (a broadcast 2-D operand) is read at batch 0.
        a_outer = work.batch if p.A_BATCHED else 0
        b_outer = work.batch if p.B_BATCHED else 0
        k = (work.k_first + kk) * BK
    return a_outer, b_outer, k


@gluon.jit
def load_a(p: GemmOperands, work, at, index, bar, pred=True):
    """A's TMA load of the K step at `at` (step_coords) into slot `index` (the ready barrier's expect is the
    caller's)."""
    a_outer, b_outer, k = at
    # WEIGHT_HINT (gemm.weight_evict_first): the weight's loads (A under swap-AB, else B) are marked for an L2
    # evict-first policy, so a weight streamed once replaces its own lines instead of the rest of the L2's.
    if p.WEIGHT_HINT and p.SWAP_AB:
        evict_first_begin()
    if p.A_PIECES > 1:
        # A_PIECES boxes of rows (gemm.edge_pieces, K-major A only). TMA fills a box's rows past A's last one with
        # zeros, but slowly: a tile whose box is mostly past the end ran 1.5x as long as the same tile over rows of
        # zeros in memory (389 rows on 128-row tiles; notes/perf.md, session 40), and its tile-row holds up the
        # wave. So a piece that would start past the last row loads the last in-bounds rows instead (from L2: they
        # were just read). Its rows of the slot then hold real values of other rows, which make only accumulator
        # rows past the end: no row of A mixes into another's output, and the epilogue never stores those rows.
        # The byte count is the whole tile's either way.
        PR: gl.constexpr = p.a_desc.block_type.shape[1]
        rows = p.a_desc.shape[1]
        last = gl.maximum(rows - PR, 0)
        for r in gl.static_range(p.A_PIECES):
            row = work.off_m + r * PR
            row = gl.where(row < rows, row, last)
            tma.async_copy_global_to_shared(p.a_desc, [a_outer, row, k], bar,
                                            p.a_slot(index).slice(r * PR, PR, dim=1), pred=pred)
    elif p.A_KMAJOR:
        tma.async_copy_global_to_shared(p.a_desc, [a_outer, work.off_m, k], bar, p.a_slot(index), pred=pred)
    else:
        tma.async_copy_global_to_shared(p.a_desc, [a_outer, k, work.off_m], bar, p.a_slot(index), pred=pred)
    if p.WEIGHT_HINT and p.SWAP_AB:
        evict_first_end()


@gluon.jit
def load_b(p: GemmOperands, work, at, index, bar, pred=True):
    """B's TMA load(s) of the K step at `at` (step_coords) into slot `index` (the ready barrier's expect is the
    caller's)."""
    a_outer, b_outer, k = at
    off_n = work.off_n
    if p.WEIGHT_HINT and not p.SWAP_AB:
        evict_first_begin()
    if p.B_PIECES > 1:
        # The tile in pieces along N (GemmConfig.b_pieces_for): a two-part tile's rest-wide boxes, a cluster pair's
        # halves (of the tile, or of each rest-wide box of a K-major B). In a pair rank r loads pieces r, r + 2, ...
        # into both CTAs' slots (multicast): half of the tile's columns each, or with an odd count (a two-part pair's
        # whole boxes on an N-major B) one piece more for rank 0.
        DIM: gl.constexpr = 1 if p.B_KMAJOR else 2
        WIDTH: gl.constexpr = p.b_desc.block_type.shape[DIM]
        if p.CLUSTER_M == 2:
            rank = cluster_rank()
        for r in gl.static_range(p.B_PIECES):
            mine = pred
            if p.CLUSTER_M == 2:
                mine = (rank == r % 2) & pred
                multicast_begin()
            if p.B_KMAJOR:
                tma.async_copy_global_to_shared(p.b_desc, [b_outer, off_n + r * WIDTH, k], bar,
                                                p.b_piece_slot(index, r), pred=mine)
            else:
                tma.async_copy_global_to_shared(p.b_desc, [b_outer, k, off_n + r * WIDTH], bar,
                                                p.b_piece_slot(index, r), pred=mine)
            if p.CLUSTER_M == 2:
                multicast_end()
    elif p.B_KMAJOR:
        tma.async_copy_global_to_shared(p.b_desc, [b_outer, off_n, k], bar, p.b_bufs.index(index), pred=pred)
    else:
        tma.async_copy_global_to_shared(p.b_desc, [b_outer, k, off_n], bar, p.b_bufs.index(index), pred=pred)
    if p.WEIGHT_HINT and not p.SWAP_AB:
        evict_first_end()


@gluon.jit
def produce_unit(p: GemmOperands, work, kk0, flip, pos, A_LOADS: gl.constexpr):
    """The producer's K steps kk0.. of one unit from ring position `pos` (returns the position after them); without
    A_LOADS only B's loads, counted as such (a cluster pair's phantom tile, A_PHANTOM)."""
    for kk in range(kk0, work.k_count):
        p.ring.wait_empty(pos)
        if A_LOADS:
            load_step(p, work, kk + flip * (work.k_count - 1 - 2 * kk), pos.index, p.ring.ready_barrier(pos))
        else:
            bar = p.ring.ready_barrier(pos)
            mbarrier.expect(bar, p.step_bytes() - p.A_PIECES * p.a_desc.block_type.nbytes)
            load_b(p, work, step_coords(p, work, kk + flip * (work.k_count - 1 - 2 * kk)), pos.index, bar)
        pos = pos.next()
    return pos


@gluon.jit
def tma_producer(p: GemmOperands, SchedulerImpl: gl.constexpr):
    cluster_sync(p.CLUSTER_M)
    if not p.EARLY_WEIGHT:
        wait_for_prior_grid()  # before the scheduler: a grouped GEMM's reads its tile table from global memory
    sched = p.scheduler(SchedulerImpl)
    pos = RingPosition.start(p.ring.num_slots)
    # EARLY_WEIGHT (gemm.early_weight_fits; swap-AB, so A is the weight): the first unit's first ring-full of weight
    # boxes goes out before the wait on the prior grid, which may still be draining, and lands in shared memory
    # (not in L2, where the predecessor's own stream would evict it); x's boxes, which the predecessor may be
    # writing, follow the wait into the same slots and barriers. Only for weights no earlier kernel still running
    # can write: the caller's promise (warpgemm.static_weights).
    early = 0
    if p.EARLY_WEIGHT:
        first = sched.work(sched.local_count() * 0)  # a tensor index: work() compares it
        early = gl.where(sched.local_count() > 0, gl.minimum(first.k_count, p.ring.num_slots), 0)
        for kk in range(early):
            mbarrier.expect(p.ring.ready_barrier(pos), p.step_bytes())
            load_a(p, first, step_coords(p, first, kk), pos.index, p.ring.ready_barrier(pos))
            pos = pos.next()
        wait_for_prior_grid()
        pos = RingPosition.start(p.ring.num_slots)
        for kk in range(early):
            load_b(p, first, step_coords(p, first, kk), pos.index, p.ring.ready_barrier(pos))
            pos = pos.next()
    # Units in order, whichever consumer takes them: the ring is a FIFO both consumers read from.
    for i in range(sched.local_count()):
        work = sched.work(i)
        # K_SERPENTINE: odd units read their K steps last to first, so each wave of tiles starts where the one
        # before it ended (gemm.k_serpentine). The consumer adds the slots in ring order, whatever their K.
        flip = i % 2 if p.K_SERPENTINE else i * 0
        if p.EARLY_WEIGHT:
            kk0 = gl.where(i == 0, early, 0)  # the first unit's early steps are in the ring already
        else:
            kk0 = 0
        if p.A_PHANTOM:
            # A cluster pair's tile wholly past A's end (gemm.phantom_a) loads no A: its accumulator rows are all past
            # the end, never stored, so whatever its A slot holds is harmless; it only takes its share of B. Branched
            # once per unit: a predicate on each K step's loads instead cost a 128x160 pair 18% on every tile.
            if work.off_m < (p.a_desc.shape[1] if p.A_KMAJOR else p.a_desc.shape[2]):
                pos = produce_unit(p, work, kk0, flip, pos, True)
            else:
                pos = produce_unit(p, work, kk0, flip, pos, False)
        else:
            pos = produce_unit(p, work, kk0, flip, pos, True)
    if p.CLUSTER_M > 1:
        # The peer's consumers release this CTA's slots remotely until their last K step: wait for every slot's
        # last release, so that this CTA (its barriers, its shared memory) outlives all of them.
        for s in gl.static_range(p.ring.num_slots):
            p.ring.wait_empty(pos)
            pos = pos.next()


@gluon.jit
def wgmma_consumer(p: GemmOperands, SchedulerImpl: gl.constexpr, EpilogueImpl: gl.constexpr,
                   acc_layout: gl.constexpr, rest_layout: gl.constexpr, CONSUMER: gl.constexpr):
    """Consumer number CONSUMER of p.CONSUMERS: takes local units CONSUMER, CONSUMER + CONSUMERS, ...

    With two consumers the producer fills the ring unit after unit, so they alternate on the tensor cores, each
    one's epilogue running under the other's mainloop. A consumer skips the other's slots by position
    arithmetic; since an mbarrier wait only checks phase parity, it must not start waiting on a unit until the
    producer is within one ring pass of it: the `turns` barriers hand the turn over once the other consumer has
    waited on every slot of the unit before (so those slots, and all earlier ones, have been filled).

    A two-part tile (block_n_rest > 0: one consumer, whole tiles) keeps two accumulators, acc_layout's main columns
    and rest_layout's rest (128 + 64 for 192 columns, 128 + 16 for 144), and hands both to the epilogue's store_wide.
    """
    BM: gl.constexpr = p.mma_m()
    BN: gl.constexpr = p.block_n_main()
    BN_REST: gl.constexpr = p.block_n_rest()
    p.zero_a_padding()
    cluster_sync(p.CLUSTER_M)
    wait_for_prior_grid()
    sched = p.scheduler(SchedulerImpl)
    epi = EpilogueImpl.create(p, sched)
    steps = 0  # ring steps taken by all units before unit i (this consumer's and the other's)
    for i in range(sched.local_count()):
        work = sched.work(i)
        if i % p.CONSUMERS == CONSUMER:
            if p.CONSUMERS > 1:
                own = i // p.CONSUMERS  # this consumer's own unit count so far
                if CONSUMER == 0:
                    mbarrier.wait(p.turns.index(0), (own + 1) & 1, pred=own > 0)
                else:
                    mbarrier.wait(p.turns.index(1), own & 1)
            pos = RingPosition.at(steps, p.ring.num_slots)
            if BN_REST == 0:
                acc = gl.zeros([BM, BN], gl.float32, acc_layout)
                for kk in range(work.k_count):
                    p.ring.wait_ready(pos)
                    acc = warpgroup_mma(p.a_tile(pos.index), p.b_tile(pos.index), acc, use_acc=kk > 0, is_async=True)
                    # Keep one wgmma in flight. Once it is the only one left, the one before it has retired and
                    # only THAT slot may be refilled: the current slot is still being read.
                    acc = warpgroup_mma_wait(1, deps=(acc, ))
                    p.ring.mark_previous_empty(pos, pred=kk > 0, CLUSTER=p.CLUSTER_M)
                    pos = pos.next()
                if p.CONSUMERS > 1:
                    mbarrier.arrive(p.turns.index(1 - CONSUMER), count=1)
                # pos is one past the unit's last slot: retire its wgmma and release it (a split-K part can be
                # empty).
                acc = warpgroup_mma_wait(0, deps=(acc, ))
                p.ring.mark_previous_empty(pos, pred=work.k_count > 0, CLUSTER=p.CLUSTER_M)
                epi.store(acc, work)
            else:
                acc = gl.zeros([BM, BN], gl.float32, acc_layout)
                rest = gl.zeros([BM, BN_REST], gl.float32, rest_layout)
                for kk in range(work.k_count):
                    p.ring.wait_ready(pos)
                    a = p.a_tile(pos.index)
                    acc = warpgroup_mma(a, p.b_tile(pos.index), acc, use_acc=kk > 0, is_async=True)
                    rest = warpgroup_mma(a, p.b_rest_tile(pos.index), rest, use_acc=kk > 0, is_async=True)
                    # Each wgmma is a group of its own: two left in flight are this step's, so the previous
                    # step's slot may be refilled.
                    acc, rest = warpgroup_mma_wait(2, deps=(acc, rest))
                    p.ring.mark_previous_empty(pos, pred=kk > 0, CLUSTER=p.CLUSTER_M)
                    pos = pos.next()
                acc, rest = warpgroup_mma_wait(0, deps=(acc, rest))
                p.ring.mark_previous_empty(pos, pred=work.k_count > 0, CLUSTER=p.CLUSTER_M)
                epi.store_wide(acc, rest, work)
        steps += work.k_count
    epi.drain()
