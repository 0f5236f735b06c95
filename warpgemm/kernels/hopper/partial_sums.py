"""The epilogue of kernels that cut a tile's K loop over several programs (split-K and stream-K).

Every unit that covers only part of a tile writes its fp32 partial to global scratch and counts itself in the
tile's semaphore; the unit that arrives last sums all the tile's partials in part order and stores the tile
through the kernel's output epilogue. The order of the sum never depends on arrival order, so results are bitwise
repeatable; nothing ever waits on another program, so no schedule can deadlock. The last unit also resets the
semaphore, leaving the scratch ready for the next launch on the stream.

Which parts a tile has, and where each keeps its partial, is the scheduler's business:

    sched.partial_slot(work)                      # the slot this unit writes
    parts, first, base, step = sched.tile_parts(tile)
    # part 0 lives in slot `first`, part j > 0 in slot base + j * step; parts == 1: the unit is the whole tile

Scratch: partials [slots, BLOCK_M, BLOCK_N] fp32 and one int32 semaphore per tile, owned by the host per
(device, stream) (scratch.py).
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.language.core import _aggregate as aggregate
from triton.language.core import base_value

from .epilogue import output_epilogue


@gluon.constexpr_function
def reduce_layout(block_n, num_warps):
    # Rows of 4-element (16-byte) vectors across a warp: coalesced partial reads.
    return gl.BlockedLayout([1, 4], [32 * 4 // min(block_n, 128), min(block_n, 128) // 4], [num_warps, 1], [1, 0])


@gluon.constexpr_function
def reduce_chunk(block_m, block_n):
    # Rows summed at a time: 4096 elements (32 registers a thread in one warpgroup) per part, so that all the
    # parts loaded at once fit beside the running sum. Small tiles (swap-AB decode) go in one piece.
    return min(block_m, 4096 // block_n)


# Partials loaded together per step of the reduction: straight-line loads of several parts are in flight at
# once (a loop of one load per part would wait out one L2 round trip each).
PARTS_IN_FLIGHT = gl.constexpr(4)


@aggregate
class PartialSumEpilogue:
    out: base_value  # the kernel's output epilogue (TmaStoreEpilogue or TransposedStoreEpilogue)
    sched: base_value  # the kernel's scheduler
    partials_ptr: gl.tensor
    semaphores_ptr: gl.tensor

    @gluon.constexpr_function
    def __init__(self, out, sched, partials_ptr, semaphores_ptr):
        self.out = out
        self.sched = sched
        self.partials_ptr = partials_ptr
        self.semaphores_ptr = semaphores_ptr

    @gluon.jit
    def create(p, sched):
        return PartialSumEpilogue(output_epilogue(p), sched, p.partials_ptr, p.semaphores_ptr)

    @gluon.jit
    def store(self, acc, work):
        parts, first, base, step = self.sched.tile_parts(work.tile)
        # A branch that is statically dead must not be emitted at all: triton 3.6 fails to lower a constant-false
        # branch holding the TMA store (split-K units never cover a whole tile).
        if self.sched.whole_units():
            if parts == 1:
                self.out.store_tile(acc, work.batch, work.off_m, work.off_n)
            else:
                self.store_part(acc, work, parts, first, base, step)
        else:
            self.store_part(acc, work, parts, first, base, step)

    @gluon.jit
    def store_part(self, acc, work, parts, first, base, step):
        if self.publish(acc, work, parts):
            self.reduce(parts, first, base, step, work, acc.type.shape[0], acc.type.shape[1])
            self.release(work)

    @gluon.jit
    def publish(self, acc, work, parts):
        """Write this unit's fp32 partial to its slot and count it in the tile's semaphore; True for the unit that
        arrives last (it then owns the tile's sum and must `release` the semaphore)."""
        BLOCK_M: gl.constexpr = acc.type.shape[0]
        BLOCK_N: gl.constexpr = acc.type.shape[1]
        layout: gl.constexpr = acc.type.layout
        rows = gl.arange(0, BLOCK_M, layout=gl.SliceLayout(1, layout))
        cols = gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, layout))
        offsets = gl.expand_dims(rows, 1) * BLOCK_N + gl.expand_dims(cols, 0)
        slot = self.sched.partial_slot(work)
        gl.store(self.partials_ptr + slot.to(gl.int64) * (BLOCK_M * BLOCK_N) + offsets, acc)
        # Every thread's partial is written before one thread publishes the count (release, GPU scope).
        gl.thread_barrier()
        arrived = gl.atomic_add(self.semaphores_ptr + work.tile, 1, sem="acq_rel", scope="gpu")
        return arrived == parts - 1

    @gluon.jit
    def release(self, work):
        """Zero the tile's semaphore again (the last unit, once its sum is out): scratch ready for the next launch."""
        gl.atomic_xchg(self.semaphores_ptr + work.tile, 0, sem="relaxed", scope="gpu")

    @gluon.jit
    def reduce(self, parts, first, base, step, work, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr):
        CHUNK: gl.constexpr = reduce_chunk(BLOCK_M, BLOCK_N)
        TILE: gl.constexpr = BLOCK_M * BLOCK_N
        layout: gl.constexpr = reduce_layout(BLOCK_N, gl.num_warps())
        rows = gl.arange(0, CHUNK, layout=gl.SliceLayout(1, layout))
        cols = gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, layout))
        offsets = gl.expand_dims(rows, 1) * BLOCK_N + gl.expand_dims(cols, 0)
        self.out.begin_rows()
        for r in gl.static_range(BLOCK_M // CHUNK):
            chunk = self.partials_ptr + r * CHUNK * BLOCK_N + offsets
            # .cg reads from L2, where the other SMs' partials are. Every step sums a fixed group of parts in part
            # order; parts past the last re-read the last one (a valid address) and add nothing.
            total = gl.load(chunk + first.to(gl.int64) * TILE, cache_modifier=".cg")
            for j0 in range(1, parts, PARTS_IN_FLIGHT):
                for dj in gl.static_range(PARTS_IN_FLIGHT):
                    j = j0 + dj
                    slot = (base + gl.minimum(j, parts - 1) * step).to(gl.int64)
                    part = gl.load(chunk + slot * TILE, cache_modifier=".cg")
                    total += gl.where(j < parts, part, 0.0)
            self.out.put_rows(total, r * CHUNK, work.batch, work.off_m, work.off_n)
        self.out.end_rows(work.batch, work.off_m, work.off_n)

    @gluon.jit
    def drain(self):
        self.out.drain()
