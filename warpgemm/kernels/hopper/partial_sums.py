"""The epilogues of kernels that cut a tile's K loop over several programs: split-K's and stream-K's
(PartialSumEpilogue, below) and wave fill's (WaveFillEpilogue, at the end).

Split-K and stream-K: every unit that covers only part of a tile writes its fp32 partial to global scratch and counts itself in the
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
import os

from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.language.core import _aggregate as aggregate
from triton.language.core import base_value

from triton.experimental.gluon.language.nvidia.hopper import tma

from .epilogue import column_chunks, output_epilogue


@gluon.constexpr_function
def reduce_layout(block_n, num_warps):
    # Rows of 4-element (16-byte) vectors across a warp: coalesced partial reads.
    return gl.BlockedLayout([1, 4], [32 * 4 // min(block_n, 128), min(block_n, 128) // 4], [num_warps, 1], [1, 0])


@gluon.constexpr_function
def reduce_chunk(block_m, block_n):
    # Rows summed at a time: 4096 elements (32 registers a thread in one warpgroup) per part, so that all the
    # parts loaded at once fit beside the running sum. Small tiles (swap-AB decode) go in one piece.
    return min(block_m, 4096 // block_n)


@gluon.jit
def tile_offsets(tile):
    """Row-major element offsets of a 2-D tensor, in its own layout: where each thread's elements of a partial go."""
    layout: gl.constexpr = tile.type.layout
    rows = gl.arange(0, tile.type.shape[0], layout=gl.SliceLayout(1, layout))
    cols = gl.arange(0, tile.type.shape[1], layout=gl.SliceLayout(0, layout))
    return gl.expand_dims(rows, 1) * tile.type.shape[1] + gl.expand_dims(cols, 0)


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
        slot = self.sched.partial_slot(work)
        gl.store(self.partials_ptr + slot.to(gl.int64) * acc.numel + tile_offsets(acc), acc)
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


@gluon.constexpr_function
def stage_columns(buffer_bytes, rows, cols):
    """Columns of an fp32 [rows, cols] tile that fit a staging buffer: a power of two, at most all of them."""
    width = 8
    while width * 2 <= cols and rows * width * 2 * 4 <= buffer_bytes:
        width *= 2
    return width


# Measurement only (scripts/wave_fill_probe.py --diag, results wrong): 1 = tails skip their partial store, 2 = and main
# parts skip the read. Read once at import; a fresh Triton cache per setting (the value is not in the cache key).
FILL_DIAG = gl.constexpr(int(os.environ.get("WARPGEMM_FILL_DIAG", "0")))

# Staged through shared memory, 16-byte vectors XOR-swizzled by row: the accumulator's 8-byte pairs from 8 rows
# land in different banks, and the coalesced reads take whole rows.
STAGE_LAYOUT = gl.constexpr(gl.SwizzledSharedLayout(4, 1, 8, [1, 0]))


@aggregate
class WaveFillEpilogue:
    """The epilogue of wave fill (scheduler.WaveFillScheduler, wave_fill_plan.py). Whole tiles go straight to the
    output epilogue. A TAIL unit writes its fp32 partial to the tile's slot and raises the tile's flag; the MAIN
    unit waits for the flag, adds the partial (main + tail: one fixed order, bitwise repeatable), lowers the flag
    again for the next launch on the stream, and stores the tile. The waiting program always has the higher index,
    so the program it waits on has been started before it (wave_fill_plan.py)."""

    out: base_value  # the kernel's output epilogue
    sched: base_value  # WaveFillScheduler
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
        return WaveFillEpilogue(output_epilogue(p), sched, p.partials_ptr, p.semaphores_ptr)

    @gluon.jit
    def slot_base(self, work, tile_elems: gl.constexpr):
        return self.partials_ptr + self.sched.partial_slot(work).to(gl.int64) * tile_elems

    @gluon.jit
    def write_partial(self, tile, ptr):
        """An fp32 tile (the accumulator's layout) to ptr as row-major rows, column chunk by column chunk through the
        output epilogue's shared buffer, then in coalesced 16-byte stores. Stored straight from the accumulator's
        layout, each warp store scatters 8-byte pairs over 8 rows: a 128 x 256 partial measured 4-5 us that way
        (results/2026-11-26-wave-fill/)."""
        BM: gl.constexpr = tile.type.shape[0]
        BN: gl.constexpr = tile.type.shape[1]
        BUF: gl.constexpr = self.out.c_smem
        CW: gl.constexpr = stage_columns(BUF.numel * BUF.dtype.primitive_bitwidth // 8, BM, BN)
        stage = self.out.c_smem._reinterpret(gl.float32, [BM, CW], STAGE_LAYOUT)
        layout: gl.constexpr = reduce_layout(CW, gl.num_warps())
        rows = gl.arange(0, BM, layout=gl.SliceLayout(1, layout))
        cols = gl.arange(0, CW, layout=gl.SliceLayout(0, layout))
        offsets = gl.expand_dims(rows, 1) * BN + gl.expand_dims(cols, 0)
        chunks = column_chunks(tile, CW)
        tma.store_wait(0)  # the buffer's last TMA store (an earlier tile's output) must have read it
        for c in gl.static_range(len(chunks)):
            stage.store(chunks[c])
            gl.thread_barrier()
            gl.store(ptr + c * CW + offsets, stage.load(layout))
            gl.thread_barrier()  # every thread has read the chunk before the next one overwrites it

    @gluon.jit
    def raise_flag(self, work):
        # Every thread's partial is written before one thread raises the flag (release, GPU scope).
        gl.thread_barrier()
        gl.atomic_xchg(self.semaphores_ptr + self.sched.partial_slot(work), 1, sem="release", scope="gpu")

    @gluon.jit
    def wait_flag(self, work):
        flag = self.semaphores_ptr + self.sched.partial_slot(work)
        raised = gl.atomic_add(flag, 0, sem="acquire", scope="gpu")
        while raised == 0:
            raised = gl.atomic_add(flag, 0, sem="acquire", scope="gpu")

    @gluon.jit
    def lower_flag(self, work):
        gl.atomic_xchg(self.semaphores_ptr + self.sched.partial_slot(work), 0, sem="relaxed", scope="gpu")

    @gluon.jit
    def store(self, acc, work):
        base = self.slot_base(work, acc.numel)
        if work.split == 2:  # wave_fill_plan.TAIL
            if FILL_DIAG == 0:
                self.write_partial(acc, base)
            self.raise_flag(work)
        else:
            if work.split == 1:  # MAIN
                self.wait_flag(work)
                # .cg: the tail's partial is in L2, written by another SM.
                if FILL_DIAG < 2:
                    acc = acc + gl.load(base + tile_offsets(acc), cache_modifier=".cg")
                self.lower_flag(work)
            self.out.store(acc, work)

    @gluon.jit
    def store_wide(self, acc, rest, work):
        """A 192-column tile's two accumulators: the partial slot holds acc's columns, then rest's."""
        base = self.slot_base(work, acc.numel + rest.numel)
        if work.split == 2:
            self.write_partial(acc, base)
            self.write_partial(rest, base + acc.numel)
            self.raise_flag(work)
        else:
            if work.split == 1:
                self.wait_flag(work)
                acc = acc + gl.load(base + tile_offsets(acc), cache_modifier=".cg")
                rest = rest + gl.load(base + acc.numel + tile_offsets(rest), cache_modifier=".cg")
                self.lower_flag(work)
            self.out.store_wide(acc, rest, work)

    @gluon.jit
    def drain(self):
        self.out.drain()
