"""Pipeline state shared by the GEMM kernels (warp-specialized or in one partition) and the stream kernel: a ring of
shared-memory slots guarded by "ready" / "empty" mbarrier pairs.

A producer waits until a slot is empty, fills it (TMA, or ordinary stores followed by a fence) and marks it
ready; a consumer waits until it is ready, uses it and marks it empty. Each side walks the ring with its own
RingPosition (slot index and barrier parity). All partitions must walk the same number of slots.
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import mbarrier
from triton.language.core import _aggregate as aggregate


@aggregate
class RingPosition:
    """Slot index and mbarrier parity of one side's walk around a ring of `num_slots` slots."""

    index: gl.tensor
    phase: gl.tensor
    num_slots: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, index, phase, num_slots):
        self.index = index
        self.phase = phase
        self.num_slots = gl.constexpr(num_slots)

    @gluon.jit
    def start(num_slots: gl.constexpr):
        return RingPosition(gl.to_tensor(0), gl.to_tensor(0), num_slots)

    @gluon.jit
    def at(steps, num_slots: gl.constexpr):
        """The position after `steps` steps from the start (for a side that skips slots others consume)."""
        return RingPosition(steps % num_slots, (steps // num_slots) & 1, num_slots)

    @gluon.jit
    def previous_index(self):
        """Slot index one step behind this position (wrapping)."""
        return gl.where(self.index == 0, self.num_slots - 1, self.index - 1)

    @gluon.jit
    def lagging_index(self, steps: gl.constexpr):
        """Slot index `steps` (< num_slots) steps behind this position (wrapping)."""
        return (self.index + (self.num_slots - steps)) % self.num_slots

    @gluon.must_use_result
    @gluon.jit
    def next(self):
        index = self.index + 1
        wrap = index == self.num_slots
        return RingPosition(gl.where(wrap, 0, index), gl.where(wrap, self.phase ^ 1, self.phase), self.num_slots)


@aggregate
class BarrierRing:
    """The ready/empty mbarrier pairs of a ring of `num_slots` slots.

    `empty_count` is how many partitions release a slot (an arrive from a multi-warp partition counts once); 0 leaves
    the empty barriers uninitialised, for a kernel that orders slot reuse by itself (one_partition.py).
    """

    ready: gl.shared_memory_descriptor
    empty: gl.shared_memory_descriptor
    num_slots: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, ready, empty, num_slots):
        self.ready = ready
        self.empty = empty
        self.num_slots = gl.constexpr(num_slots)

    @gluon.jit
    def allocate(num_slots: gl.constexpr, empty_count: gl.constexpr = 1):
        ready = gl.allocate_shared_memory(gl.int64, [num_slots, 1], mbarrier.MBarrierLayout())
        empty = gl.allocate_shared_memory(gl.int64, [num_slots, 1], mbarrier.MBarrierLayout())
        # Triton 3.6's membar pass puts a CTA barrier between any two inits of one allocation (one per slot here);
        # dropping them gained the warp-specialized kernel 0.1 us a call on tiny products only (notes/perf.md,
        # session 22), so only the one-partition kernel's PTX pass does (ptx_hints.drop_issue_barriers).
        for i in gl.static_range(num_slots):
            mbarrier.init(ready.index(i), count=1)
            if empty_count > 0:  # 0: nothing releases slots through them (the one-partition kernel)
                mbarrier.init(empty.index(i), count=empty_count)
        return BarrierRing(ready, empty, num_slots)

    # Producer side -------------------------------------------------------------------------------------------
    @gluon.jit
    def wait_empty(self, pos: RingPosition):
        # A fresh barrier counts as having completed the phase before phase 0, so the producer's first pass
        # over the ring (parity 0 ^ 1) falls through.
        mbarrier.wait(self.empty.index(pos.index), pos.phase ^ 1)

    @gluon.jit
    def ready_barrier(self, pos: RingPosition):
        return self.ready.index(pos.index)

    @gluon.jit
    def mark_ready(self, pos: RingPosition):
        # For producers that fill a slot with ordinary stores: they must fence_async_shared() first.
        mbarrier.arrive(self.ready.index(pos.index), count=1)

    # Consumer side -------------------------------------------------------------------------------------------
    @gluon.jit
    def wait_ready(self, pos: RingPosition):
        mbarrier.wait(self.ready.index(pos.index), pos.phase)

    @gluon.jit
    def mark_empty(self, pos: RingPosition, pred=True):
        mbarrier.arrive(self.empty.index(pos.index), count=1, pred=pred)

    @gluon.jit
    def mark_previous_empty(self, pos: RingPosition, pred=True, CLUSTER: gl.constexpr = 1):
        """Release the slot one step behind `pos` (with CLUSTER = 2, in both CTAs of the pair: the peer's producer
        multicasts into this CTA's slot too, so its empty barrier counts this consumer's release as well).

        Consumers that keep one slot in use (async MMA) release the previous slot after advancing. They must
        derive it from the carried position: triton 3.6 does not loop-carry an aggregate assigned from another
        inside a loop (`prev = pos`), so a separate `prev` silently keeps its pre-loop value.
        """
        if CLUSTER > 1:
            # The PTX pass (ptx_hints.cluster_rewrite) makes the marked arrive arrive on the peer CTA's barrier too.
            gl.inline_asm_elementwise("// warpgemm:remote-arrive $0", "=r", [], dtype=gl.int32, is_pure=False,
                                      pack=1)
        mbarrier.arrive(self.empty.index(pos.previous_index()), count=1, pred=pred)

    @gluon.jit
    def mark_empty_index(self, index, pred=True):
        mbarrier.arrive(self.empty.index(index), count=1, pred=pred)
