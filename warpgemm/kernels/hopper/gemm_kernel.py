"""The persistent warp-specialized Hopper GEMM: C[b] = A[b] @ B[b] (+ bias), fp32 accumulation.

One program per SM (at most). Shared memory holds an S-slot ring of (A, B) tiles and each consumer's epilogue
tile; a one-warp TMA producer fills the ring; one consumer (the default partition, one or two wgmma warpgroups
on a tile) or two ping-pong consumers (one warpgroup each, alternate units) drain it and store each finished
tile through the epilogue. The scheduler and epilogue are constexpr policy classes so the same body serves other
schedules and epilogues (split-K's and stream-K's partial-sum reduction, swap-AB's transposed store). With
WARP_SPECIALIZE off the same ring, scheduler and epilogue run in one partition (one_partition.py), for programs of
one short tile, where starting and ending partitions would cost more than a producer warp running ahead saves.
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier

from .one_partition import one_partition_mainloop
from .partitions import GemmOperands, allow_dependents, main_columns, tma_producer, wgmma_consumer
from .pipeline import BarrierRing

__all__ = ["gemm_kernel", "accumulator_layout"]


@gluon.constexpr_function
def accumulator_layout(block_m, block_n, num_warps, in_bitwidth=16):
    # Warps stack along M in 16-row slabs (a warpgroup covers 64 rows); one wgmma instruction spans the whole
    # tile width when block_n <= 256, which issues the fewest instructions. Its K is 32 bytes: 16 for 16-bit
    # inputs, 32 for fp8 (the lowering asserts on any other).
    return gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=[num_warps, 1],
                                     instr_shape=[16, block_n, 256 // in_bitwidth])


@gluon.constexpr_function
def a_slots_shape(stages, box, a_kmajor, pieces=1):
    # pieces: a K-major A tile in that many boxes of rows (partitions.load_a, gemm.edge_pieces).
    if not a_kmajor:
        if box[2] < 64 or pieces != 1:
            raise ValueError("tiles under 64 rows, and A tiles in pieces, need a K-major A (rows must be the slot's "
                             "outer dimension)")
        return [stages] + list(box)
    return [stages, 1, max(box[1] * pieces, 64), box[2]]


@gluon.constexpr_function
def b_slots_shape(stages, box, b_kmajor, pieces, rest=False):
    # A B tile may arrive in pieces along N: a cluster pair's halves, a two-part tile's rest-wide boxes (128x192: three
    # 64-wide ones; K-major: rows, N-major: contiguous columns), a two-part pair's halves of those (K-major B; an
    # N-major one keeps the boxes whole: GemmConfig.b_pieces_for). Each slot holds all of them, a two-part tile's in two
    # buffers (shared buffers need power-of-two sides): its main part, and `rest`.
    n_dim = 1 if b_kmajor else 2
    width = box[n_dim] * pieces
    main = main_columns(width)
    shape = [stages] + list(box)
    shape[1 + n_dim] = width - main if rest else main
    return shape


@gluon.constexpr_function
def has_rest(box, b_kmajor, pieces):
    width = box[1 if b_kmajor else 2] * pieces
    return main_columns(width) < width


@gluon.constexpr_function
def _check_hint_compile(l2_store_hint):
    # Imported here: Triton's dependency scan refuses a kernel whose callees name plain Python functions as globals.
    from .ptx_hints import check_hint_compile as check
    check(l2_store_hint)


@gluon.constexpr_function
def _check_cluster_compile(cluster_m):
    from .ptx_hints import check_cluster_compile as check
    check(cluster_m)


@gluon.constexpr_function
def _check_one_partition_compile(warp_specialize):
    from .ptx_hints import check_one_partition_compile as check
    check(warp_specialize)


@gluon.constexpr_function
def _check_weight_hint_compile(weight_hint, cluster_m):
    from .ptx_hints import check_weight_hint_compile as check
    check(weight_hint, cluster_m)


@gluon.jit
def gemm_kernel(a_desc, b_desc, c_desc, bias_ptr, partials_ptr, semaphores_ptr, out_ptr, group_table_ptr,  #
                scale_a_ptr, scale_b_ptr,  #
                A_KMAJOR: gl.constexpr, B_KMAJOR: gl.constexpr, A_BATCHED: gl.constexpr, B_BATCHED: gl.constexpr,
                HAS_BIAS: gl.constexpr, SCALE: gl.constexpr, GROUP_M: gl.constexpr, STAGES: gl.constexpr,
                SPLIT_K: gl.constexpr,
                CONSUMERS: gl.constexpr, SWAP_AB: gl.constexpr, RAGGED_K: gl.constexpr, L2_STORE_HINT: gl.constexpr,
                PRODUCER_REGS: gl.constexpr, CONSUMER_REGS: gl.constexpr, CLUSTER_M: gl.constexpr,
                B_PIECES: gl.constexpr, A_PIECES: gl.constexpr, A_PHANTOM: gl.constexpr, EDGE_SHIFT: gl.constexpr,
                WARP_SPECIALIZE: gl.constexpr,
                K_SERPENTINE: gl.constexpr, WEIGHT_HINT: gl.constexpr, EARLY_WEIGHT: gl.constexpr,
                SchedulerImpl: gl.constexpr, EpilogueImpl: gl.constexpr,
                PARTS_HASH: gl.constexpr, num_warps: gl.constexpr):
    # SCALE (fp8 inputs, epilogue.py): 0 none, 1 one fp32 scale per operand, 2 one per output row (scale_a) and one
    # per output column (scale_b), applied to the fp32 accumulator before the bias.
    # WARP_SPECIALIZE: False runs the mainloop in one partition (one_partition.py: no producer warp, no partition
    # start and end costs; one consumer, whole plain or swap-AB tiles).
    # K_SERPENTINE (gemm.k_serpentine): the producer reads the K steps of a program's odd units last to first.
    # WEIGHT_HINT (gemm.weight_evict_first): 0, or ptx_hints.LOAD_PASS_VERSION where the weight's TMA loads carry an
    # L2 evict-first policy (a PTX pass, as for L2_STORE_HINT; checked at trace time).
    # EARLY_WEIGHT (gemm.early_weight_fits): the producer loads the first unit's first ring-full of weight boxes before
    # it waits on the prior grid (swap-AB launches whose caller promised a weight no running kernel writes).
    # PARTS_HASH (launch.parts_source_hash): the Gluon parts' source, so that an edit to a method of a policy class
    # (reached through a constexpr, which Triton's cache key does not follow) cannot be served an old binary.
    # L2_STORE_HINT: the variant is compiled under ptx_hints.store_hints(), which marks its TMA stores evict-first
    # in the PTX; as a constexpr it keeps hinted and plain binaries apart in Triton's caches. Checked at trace time.
    _check_hint_compile(L2_STORE_HINT)
    _check_cluster_compile(CLUSTER_M)
    _check_one_partition_compile(WARP_SPECIALIZE)
    _check_weight_hint_compile(WEIGHT_HINT, CLUSTER_M)
    # A slots hold at least one warpgroup's 64 wgmma rows (partitions.GemmOperands.mma_m); a 32-row swap-AB box
    # fills the lower half of each (K-major A only: the rows must be the slot's outer dimension).
    a_bufs = gl.allocate_shared_memory(a_desc.dtype, a_slots_shape(STAGES, a_desc.block_type.shape, A_KMAJOR, A_PIECES),
                                       a_desc.layout)
    b_bufs = gl.allocate_shared_memory(b_desc.dtype,
                                       b_slots_shape(STAGES, b_desc.block_type.shape, B_KMAJOR, B_PIECES),
                                       b_desc.layout)
    if has_rest(b_desc.block_type.shape, B_KMAJOR, B_PIECES):  # a two-part tile (config.TWO_PART_WIDTHS): its rest
        b_rest = gl.allocate_shared_memory(b_desc.dtype,
                                           b_slots_shape(STAGES, b_desc.block_type.shape, B_KMAJOR, B_PIECES, True),
                                           b_desc.layout)
    else:
        b_rest = b_bufs  # unused
    # Each slot is consumed by exactly one consumer, so one arrive empties it; in a cluster pair, one from each CTA.
    # The one-partition kernel releases no slots through barriers (its own instruction order does).
    ring = BarrierRing.allocate(STAGES, CLUSTER_M if WARP_SPECIALIZE else 0)
    # Ping-pong hand-over: turns[c] is arrived on when consumer c may start its next unit (two consumers only:
    # each barrier initialised costs the prologue a CTA barrier, see pipeline.BarrierRing.allocate).
    turns = gl.allocate_shared_memory(gl.int64, [2, 1], mbarrier.MBarrierLayout())
    if CONSUMERS == 2:
        for c in gl.static_range(2):
            mbarrier.init(turns.index(c), count=1)
    p = GemmOperands(a_desc, b_desc, c_desc, bias_ptr, partials_ptr, semaphores_ptr, out_ptr, group_table_ptr,
                     scale_a_ptr, scale_b_ptr, a_bufs, b_bufs, b_rest, ring, turns,
                     A_KMAJOR, B_KMAJOR, A_BATCHED, B_BATCHED, HAS_BIAS, SCALE, GROUP_M, SPLIT_K, CONSUMERS, SWAP_AB,
                     RAGGED_K, CLUSTER_M, B_PIECES, A_PIECES, A_PHANTOM, EDGE_SHIFT, K_SERPENTINE, WEIGHT_HINT,
                     EARLY_WEIGHT)
    acc_layout: gl.constexpr = accumulator_layout(p.mma_m(), p.block_n_main(), num_warps,
                                                  a_desc.dtype.primitive_bitwidth)
    # A two-part tile's second accumulator (its rest columns); unused by other tiles.
    rest_layout: gl.constexpr = accumulator_layout(p.mma_m(), max(p.block_n_rest(), 8), num_warps,
                                                   a_desc.dtype.primitive_bitwidth)
    allow_dependents()
    if not WARP_SPECIALIZE:
        one_partition_mainloop(p, SchedulerImpl, EpilogueImpl, acc_layout)
    elif CONSUMERS == 1:
        # In a cluster every warp must reach the cluster barrier of partitions.cluster_sync, and Triton parks the
        # idle warps of a one-warp partition's warpgroup where they never would: the producer takes all four.
        gl.warp_specialize([
            (wgmma_consumer, (p, SchedulerImpl, EpilogueImpl, acc_layout, rest_layout, 0)),
            (tma_producer, (p, SchedulerImpl)),
        ], [4 if CLUSTER_M > 1 else 1], [PRODUCER_REGS])
    else:
        gl.warp_specialize([
            (wgmma_consumer, (p, SchedulerImpl, EpilogueImpl, acc_layout, rest_layout, 0)),
            (wgmma_consumer, (p, SchedulerImpl, EpilogueImpl, acc_layout, rest_layout, 1)),
            (tma_producer, (p, SchedulerImpl)),
        ], [num_warps, 1], [CONSUMER_REGS, PRODUCER_REGS])
    # No mbarrier.invalidate at the end: the barriers' memory is not reused before the program exits, and Triton puts
    # a CTA barrier between every two invalidations of one allocation: 0.3-0.4 us a call at 64^3-1024^3
    # (scripts/fixed_cost_probe.py, notes/perf.md session 22).
