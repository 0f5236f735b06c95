"""Epilogues: what a consumer does with a finished fp32 accumulator.

The interface the GEMM consumer relies on:

    epi = Epilogue.create(p, sched)  # inside the consumer partition (p: GemmOperands, sched: its scheduler); may
                                     # allocate shared memory
    epi.store(acc, work)         # once per work unit (work: scheduler.WorkItem)
    epi.drain()                  # before the partition returns
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, tma
from triton.language.core import _aggregate as aggregate


@gluon.jit
def column_chunks(tile, CHUNK_N: gl.constexpr):
    """The tile's column chunks of CHUNK_N (1, 2, 4 or 8 of them), split in registers (no shared-memory round trip)."""
    M: gl.constexpr = tile.type.shape[0]
    CHUNKS: gl.constexpr = tile.type.shape[1] // CHUNK_N
    if CHUNKS == 1:
        chunks = (tile, )
    elif CHUNKS == 2:
        # Column halves: [M, 2, N/2] -> [M, N/2, 2] -> two [M, N/2].
        chunks = gl.split(tile.reshape([M, 2, CHUNK_N]).permute((0, 2, 1)))
    elif CHUNKS == 4:
        # Quarters: [M, 4, N/4] -> [M, N/4, 2 (j // 2), 2 (j % 2)]; each split peels the last index.
        even, odd = gl.split(tile.reshape([M, 4, CHUNK_N]).permute((0, 2, 1)).reshape([M, CHUNK_N, 2, 2]))
        c0, c2 = gl.split(even)
        c1, c3 = gl.split(odd)
        chunks = (c0, c1, c2, c3)
    else:
        gl.static_assert(CHUNKS == 8, "column_chunks splits a tile into 1, 2, 4 or 8 chunks")
        # Eighths (a 128x144 tile's 128-column part in 16-column chunks): j = 4 j2 + 2 j1 + j0, peeled j0, j1, j2.
        x0, x1 = gl.split(tile.reshape([M, 8, CHUNK_N]).permute((0, 2, 1)).reshape([M, CHUNK_N, 2, 2, 2]))
        x00, x01 = gl.split(x0)  # j0 = 0: j1 = 0, 1
        x10, x11 = gl.split(x1)  # j0 = 1
        c0, c4 = gl.split(x00)
        c2, c6 = gl.split(x01)
        c1, c5 = gl.split(x10)
        c3, c7 = gl.split(x11)
        chunks = (c0, c1, c2, c3, c4, c5, c6, c7)
    return chunks


# Pointer stores from the epilogues are 16-byte vectors only if the compiler can prove every vector aligned and
# wholly in or out of the mask. Descriptor strides and bounds arrive as plain integers, so without the two helpers
# below each element went out as its own store: a partial grouped tile issued 128 2-byte stores per thread instead
# of 16 16-byte ones, which made it cost ~15 us more than a TMA-stored tile (scripts/grouped_store_probe.py).


@gluon.jit
def aligned_stride(desc, dim: gl.constexpr):
    """desc.strides[dim], written so the compiler sees a multiple of 16 bytes (TMA requires it of every stride but
    the innermost)."""
    VEC: gl.constexpr = 128 // desc.dtype.primitive_bitwidth
    return desc.strides[dim] // VEC * VEC


@gluon.jit
def rows_end_on_vectors(desc):
    """Whether C's rows (desc.shape[2] elements) end on a 16-byte boundary. Callers branch on it and pass the answer
    on as a constexpr to `column_bound`."""
    VEC: gl.constexpr = 128 // desc.dtype.primitive_bitwidth
    return desc.shape[2] % VEC == 0


@gluon.jit
def column_bound(desc, WHOLE: gl.constexpr):
    """desc.shape[2]; under WHOLE (rows_end_on_vectors held) written as a multiple of 16 bytes, which the compiler
    can see splits no vector (it must be rounded where it is used: the fact does not cross a branch)."""
    VEC: gl.constexpr = 128 // desc.dtype.primitive_bitwidth
    if WHOLE:
        bound = desc.shape[2] // VEC * VEC
    else:
        bound = desc.shape[2]
    return bound


@aggregate
class OutputScales:
    """fp8 dequantization of the fp32 accumulator, before any bias (torch._scaled_mm's order): SCALE 0 none, 1 one
    fp32 scale per operand (scale_a * scale_b), 2 one fp32 scale per output row (scale_a, C's M rows) and one per
    output column (scale_b, C's N columns). Pointers index C's rows and columns whatever the kernel's orientation,
    so the transposed (swap-AB) store passes its rows as columns."""

    scale_a_ptr: gl.tensor
    scale_b_ptr: gl.tensor
    SCALE: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, scale_a_ptr, scale_b_ptr, SCALE):
        self.scale_a_ptr = scale_a_ptr
        self.scale_b_ptr = scale_b_ptr
        self.SCALE = gl.constexpr(SCALE)

    @gluon.jit
    def create(p):
        return OutputScales(p.scale_a_ptr, p.scale_b_ptr, p.SCALE)

    @gluon.jit
    def apply(self, acc, row0, col0, c_desc):
        """acc: a [R, C] fp32 tile of C's rows row0.. and columns col0.."""
        return self.apply_cols(self.apply_rows(acc, row0, c_desc), col0, c_desc)

    @gluon.jit
    def apply_rows(self, acc, row0, c_desc):
        """The per-tensor product, or the row scales: what `apply` does before the column scales."""
        if self.SCALE == 1:
            acc = acc * (gl.load(self.scale_a_ptr) * gl.load(self.scale_b_ptr))
        elif self.SCALE == 2:
            acc = acc * along(self.scale_a_ptr, row0, c_desc.shape[1], acc, 0)
        return acc

    @gluon.jit
    def apply_cols(self, acc, col0, c_desc):
        """The column scales (SCALE 2). A wgmma tile's column vector costs a register per column it spans in a
        thread: applied per column chunk, a 128x256 tile's does not spill (whole: 160 bytes of stack)."""
        if self.SCALE == 2:
            acc = acc * along(self.scale_b_ptr, col0, c_desc.shape[2], acc, 1)
        return acc

    @gluon.jit
    def apply_transposed(self, acc, col0, row0, n_rows, n_cols):
        """The same on a transposed (swap-AB) tile: dim 0 runs over C's columns col0.., dim 1 over C's rows row0..."""
        if self.SCALE == 1:
            acc = acc * (gl.load(self.scale_a_ptr) * gl.load(self.scale_b_ptr))
        elif self.SCALE == 2:
            acc = acc * along(self.scale_b_ptr, col0, n_cols, acc, 0) * along(self.scale_a_ptr, row0, n_rows, acc, 1)
        return acc


@gluon.jit
def along(ptr, start, bound, tile, dim: gl.constexpr):
    """ptr[start + i] (0 past `bound`) for i along dimension `dim` of `tile`, broadcastable against it, in fp32."""
    layout: gl.constexpr = tile.type.layout
    idx = start + gl.arange(0, tile.type.shape[dim], layout=gl.SliceLayout(1 - dim, layout))
    return gl.expand_dims(gl.load(ptr + idx, mask=idx < bound, other=0.0), 1 - dim)


@aggregate
class TmaStoreEpilogue:
    """Adds an optional bias row, casts to the output dtype and stores the tile through shared memory with TMA
    bulk stores left in flight: the wait for a buffer sits just before it is next written, so copies to global
    memory run under the following work. TMA clips the parts of the box outside the output.

    The output descriptor's box is the tile (one buffer) or a column chunk of it (two chunk buffers that
    alternate: a chunk's store overlaps the next chunk's conversion, in a quarter of the shared memory).

    TRANSPOSED (swap-AB tiles stored in chunks, swap_rows.py: 65-700 and 1000-4096 rows of x on wgmma's N side): the
    tile is one of C^T (rows = C's columns off_m.., columns = C's rows off_n..); each chunk of C's rows is written
    transposed into its buffer, so it leaves in C's orientation (C's box is (1, chunk, block_m)). Pointer stores of so
    wide a tile would write 16-byte pieces of many rows at once (TransposedStoreEpilogue does that for decode's narrow
    tiles).
    """

    c_desc: tma.tensor_descriptor
    c_smem: gl.shared_memory_descriptor
    bias_ptr: gl.tensor
    HAS_BIAS: gl.constexpr
    scales: OutputScales
    TRANSPOSED: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, c_desc, c_smem, bias_ptr, HAS_BIAS, scales, TRANSPOSED):
        self.c_desc = c_desc
        self.c_smem = c_smem
        self.bias_ptr = bias_ptr
        self.HAS_BIAS = gl.constexpr(HAS_BIAS)
        self.scales = scales
        self.TRANSPOSED = gl.constexpr(TRANSPOSED)

    @gluon.jit
    def create(p, sched):
        CHUNKS: gl.constexpr = p.block_n() // p.c_desc.block_type.shape[1 if p.SWAP_AB else 2]
        BUFFERS: gl.constexpr = 2 if CHUNKS > 1 else 1
        c_smem = gl.allocate_shared_memory(p.c_desc.dtype, [BUFFERS] + p.c_desc.block_type.shape, p.c_desc.layout)
        return TmaStoreEpilogue(p.c_desc, c_smem, p.bias_ptr, p.HAS_BIAS, OutputScales.create(p), p.SWAP_AB)

    @gluon.constexpr_function
    def chunk_n(self):
        """Columns of the tile per stored chunk (C's rows when TRANSPOSED)."""
        return self.c_desc.block_type.shape[1 if self.TRANSPOSED else 2]

    @gluon.jit
    def store(self, acc, work):
        self.store_tile(acc, work.batch, work.off_m, work.off_n)

    @gluon.jit
    def bias_row(self, off_n, BLOCK_N: gl.constexpr, layout: gl.constexpr):
        """The bias (any float dtype) of output columns off_n.. as a [1, BLOCK_N] fp32 row in `layout`."""
        cols = off_n + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, layout))
        bias = gl.load(self.bias_ptr + cols, mask=cols < self.c_desc.shape[2], other=0.0)
        return gl.expand_dims(bias.to(gl.float32), 0)

    @gluon.jit
    def add_bias(self, acc, off_n):
        BLOCK_N: gl.constexpr = acc.type.shape[1]
        layout: gl.constexpr = acc.type.layout
        if self.HAS_BIAS:
            acc = acc + self.bias_row(off_n, BLOCK_N, layout)
        return acc

    @gluon.jit
    def store_wide(self, acc, rest, work):
        """A two-part tile: its main and rest accumulators, in rest-wide chunks through the two chunk buffers taken in
        turn (128x192: three 64-column chunks, buffers 0, 1, 0; 128x144: nine 16-column chunks)."""
        MAIN_N: gl.constexpr = acc.type.shape[1]
        CHUNK_N: gl.constexpr = self.chunk_n()
        # The previous tile's last chunk left from buffer 0, which this tile's first chunk fills: store_chunk's wait
        # (all but the newest store done reading) would not cover it. After a whole mainloop it has long finished.
        tma.store_wait(0)
        self.store_tile(acc, work.batch, work.off_m, work.off_n)
        self.store_tile(rest, work.batch, work.off_m, work.off_n + MAIN_N, MAIN_N // CHUNK_N)

    @gluon.jit
    def store_tile(self, acc, batch, off_m, off_n, FIRST_CHUNK: gl.constexpr = 0):
        """FIRST_CHUNK: chunks of this tile already stored (they decide which buffer comes next)."""
        CHUNK_N: gl.constexpr = self.chunk_n()
        if self.TRANSPOSED:
            chunks = column_chunks(acc, CHUNK_N)
            for c in gl.static_range(len(chunks)):
                row0 = off_n + c * CHUNK_N
                # fp8 dequantization, then the bias (torch._scaled_mm's order): a bias value per C column, i.e. per
                # row of the transposed chunk.
                chunk = self.scales.apply_transposed(chunks[c], off_m, row0, self.c_desc.shape[1],
                                                     self.c_desc.shape[2])
                if self.HAS_BIAS:
                    chunk = chunk + along(self.bias_ptr, off_m, self.c_desc.shape[2], chunk, 0)
                self.store_chunk(chunk.to(self.c_desc.dtype), (FIRST_CHUNK + c) % 2, batch, off_m, row0)
        elif self.scales.SCALE == 0:
            acc = self.add_bias(acc, off_n)
            chunks = column_chunks(acc.to(self.c_desc.dtype), CHUNK_N)
            for c in gl.static_range(len(chunks)):
                self.store_chunk(chunks[c], (FIRST_CHUNK + c) % 2, batch, off_m, off_n + c * CHUNK_N)
        else:
            # Scaled: column scales and bias chunk by chunk, on the fp32 chunks (OutputScales.apply_cols).
            chunks = column_chunks(self.scales.apply_rows(acc, off_m, self.c_desc), CHUNK_N)
            for c in gl.static_range(len(chunks)):
                col0 = off_n + c * CHUNK_N
                chunk = self.add_bias(self.scales.apply_cols(chunks[c], col0, self.c_desc), col0)
                self.store_chunk(chunk.to(self.c_desc.dtype), (FIRST_CHUNK + c) % 2, batch, off_m, col0)

    @gluon.jit
    def store_chunk(self, chunk, buffer: gl.constexpr, batch, off_m, off_n):
        BUFFERS: gl.constexpr = self.c_smem.type.shape[0]
        # Stores complete in issue order: leaving BUFFERS - 1 in flight frees the one this buffer last sent, when
        # buffers alternate (store_wide's three chunks, 0 1 0, wait for all before a tile's first).
        tma.store_wait(BUFFERS - 1)
        dst = self.c_smem.index(buffer)
        if self.TRANSPOSED:
            CHUNK_ROWS: gl.constexpr = self.c_desc.block_type.shape[1]
            BLOCK_M: gl.constexpr = self.c_desc.block_type.shape[2]
            dst.reshape([CHUNK_ROWS, BLOCK_M]).permute((1, 0)).store(chunk)
            fence_async_shared()
            tma.async_copy_shared_to_global(self.c_desc, [batch, off_n, off_m], dst)
        else:
            BLOCK_M: gl.constexpr = self.c_desc.block_type.shape[1]
            CHUNK_N: gl.constexpr = self.c_desc.block_type.shape[2]
            dst.reshape([BLOCK_M, CHUNK_N]).store(chunk)
            fence_async_shared()
            tma.async_copy_shared_to_global(self.c_desc, [batch, off_m, off_n], dst)

    # Row staging, for epilogues that assemble a tile in pieces (the split-K and stream-K reductions):
    # begin_rows(); put_rows(rows, r0, ...) for each [R, BLOCK_N] fp32 slab; end_rows(...) stores the tile.
    @gluon.jit
    def begin_rows(self):
        # The previous tile's bulk store must have finished reading the buffer.
        tma.store_wait(0)

    @gluon.jit
    def put_rows(self, vals, r0, batch, off_m, off_n):
        ROWS: gl.constexpr = vals.type.shape[0]
        BLOCK_M: gl.constexpr = self.c_desc.block_type.shape[1]
        BLOCK_N: gl.constexpr = self.c_desc.block_type.shape[2]
        vals = self.add_bias(self.scales.apply(vals, off_m + r0, off_n, self.c_desc), off_n)
        self.c_smem.index(0).reshape([BLOCK_M, BLOCK_N]).slice(r0, ROWS, dim=0).store(vals.to(self.c_desc.dtype))

    @gluon.jit
    def end_rows(self, batch, off_m, off_n):
        fence_async_shared()
        tma.async_copy_shared_to_global(self.c_desc, [batch, off_m, off_n], self.c_smem.index(0))

    @gluon.jit
    def drain(self):
        tma.store_wait(0)


@gluon.constexpr_function
def column_store_layout(block_m, block_n, bitwidth, num_warps):
    # A transposed tile: its rows are C's columns, so dim 0 is the contiguous one in memory. 16 bytes per thread
    # down dim 0, a warp down as much of it as it spans, warps across dim 1.
    vec = 128 // bitwidth
    down = max(1, min(32, block_m // vec))
    return gl.BlockedLayout([vec, 1], [down, 32 // down], [1, num_warps], [0, 1])


@aggregate
class TransposedStoreEpilogue:
    """Swap-AB: the kernel computed a tile of C^T (rows = C's columns off_m.., columns = C's rows off_n..). It is
    written to C with ordinary masked stores, 16 bytes per thread along C's rows. Swap-AB is chosen when C has few
    rows, so the tile is small and a register-to-global store costs less than staging it for TMA.

    A 32-row tile (block_m = 32) is computed as 64 wgmma rows whose upper 32 are zero padding: only the first
    ROWS_KEPT rows of the transposed tile are the tile's own (the next ones belong to the next tile)."""

    c_desc: tma.tensor_descriptor
    out_ptr: gl.tensor
    bias_ptr: gl.tensor
    HAS_BIAS: gl.constexpr
    ROWS_KEPT: gl.constexpr
    scales: OutputScales

    @gluon.constexpr_function
    def __init__(self, c_desc, out_ptr, bias_ptr, HAS_BIAS, ROWS_KEPT, scales):
        self.c_desc = c_desc
        self.out_ptr = out_ptr
        self.bias_ptr = bias_ptr
        self.HAS_BIAS = gl.constexpr(HAS_BIAS)
        self.ROWS_KEPT = gl.constexpr(ROWS_KEPT)
        self.scales = scales

    @gluon.jit
    def create(p, sched):
        return TransposedStoreEpilogue(p.c_desc, p.out_ptr, p.bias_ptr, p.HAS_BIAS, p.block_m(), OutputScales.create(p))

    @gluon.jit
    def store(self, acc, work):
        self.store_tile(acc, work.batch, work.off_m, work.off_n)

    @gluon.jit
    def store_tile(self, acc, batch, off_m, off_n):
        self.put_rows(acc, 0, batch, off_m, off_n)

    @gluon.jit
    def begin_rows(self):
        pass

    @gluon.jit
    def put_rows(self, vals, r0, batch, off_m, off_n):
        self.store_rows(vals, r0, batch, off_m, off_n, self.c_desc.shape[1])

    @gluon.jit
    def store_rows(self, vals, r0, batch, off_m, off_n, row_end):
        """Rows r0.. of the transposed tile (C's columns off_m + r0..) into C's rows off_n.. below row_end."""
        if rows_end_on_vectors(self.c_desc):
            self.store_rows_below(vals, r0, batch, off_m, off_n, row_end, True)
        else:
            self.store_rows_below(vals, r0, batch, off_m, off_n, row_end, False)

    @gluon.jit
    def store_rows_below(self, vals, r0, batch, off_m, off_n, row_end, WHOLE: gl.constexpr):
        ROWS: gl.constexpr = vals.type.shape[0]
        COLS: gl.constexpr = vals.type.shape[1]
        layout: gl.constexpr = column_store_layout(ROWS, COLS, self.c_desc.dtype.primitive_bitwidth, gl.num_warps())
        vals = gl.convert_layout(vals, layout)
        c_cols = off_m + r0 + gl.arange(0, ROWS, layout=gl.SliceLayout(1, layout))
        c_rows = off_n + gl.arange(0, COLS, layout=gl.SliceLayout(0, layout))
        n_cols = column_bound(self.c_desc, WHOLE)
        vals = self.scales.apply_transposed(vals, off_m + r0, off_n, self.c_desc.shape[1], n_cols)
        if self.HAS_BIAS:
            bias = gl.load(self.bias_ptr + c_cols, mask=c_cols < n_cols, other=0.0)
            vals = vals + gl.expand_dims(bias.to(gl.float32), 1)
        offsets = (batch.to(gl.int64) * aligned_stride(self.c_desc, 0) + gl.expand_dims(c_rows.to(gl.int64), 0)
                   * aligned_stride(self.c_desc, 1) + gl.expand_dims(c_cols, 1))
        col_ok = c_cols < n_cols
        if r0 + ROWS > self.ROWS_KEPT:  # a 32-row tile's padding rows (decided at compile time: r0 is constant)
            col_ok = col_ok & (c_cols < off_m + self.ROWS_KEPT)
        mask = gl.expand_dims(col_ok, 1) & gl.expand_dims(c_rows < row_end, 0)
        gl.store(self.out_ptr + offsets, vals.to(self.c_desc.dtype), mask=mask)

    @gluon.jit
    def end_rows(self, batch, off_m, off_n):
        pass

    @gluon.jit
    def drain(self):
        pass


@gluon.jit
def output_epilogue(p):
    """The epilogue that writes whole finished tiles of this kernel's output."""
    if p.SWAP_AB:
        out = TransposedStoreEpilogue.create(p, 0)
    else:
        out = TmaStoreEpilogue.create(p, 0)
    return out


@gluon.constexpr_function
def row_store_layout(block_n, bitwidth, num_warps):
    # 16 bytes per thread along a row, a warp across as much of the row as it spans: coalesced row stores.
    vec = 128 // bitwidth
    across = min(32, block_n // vec)
    return gl.BlockedLayout([1, vec], [32 // across, across], [num_warps, 1], [1, 0])


@aggregate
class RowBoundStoreEpilogue:
    """Grouped GEMM: a tile's rows can run past its group's last row into the next group's. A tile wholly inside
    its group (most of them, for groups of many rows) goes out through the TMA epilogue; a group's last, partial
    tile is stored with ordinary masked stores (rows < work.m_end, columns < N) straight from the accumulator's
    registers, since a TMA box clips only at the tensor's edge. The output is row-major, unit column stride."""

    out: TmaStoreEpilogue
    out_ptr: gl.tensor

    @gluon.constexpr_function
    def __init__(self, out, out_ptr):
        self.out = out
        self.out_ptr = out_ptr

    @gluon.jit
    def create(p, sched):
        return RowBoundStoreEpilogue(TmaStoreEpilogue.create(p, sched), p.out_ptr)

    @gluon.jit
    def store(self, acc, work):
        BLOCK_M: gl.constexpr = acc.type.shape[0]
        if work.off_m + BLOCK_M <= work.m_end:
            # The output descriptor is (1, rows, N): every group lives at batch 0.
            self.out.store_tile(acc, 0, work.off_m, work.off_n)
        else:
            self.store_masked(acc, work)

    @gluon.jit
    def store_masked(self, acc, work):
        # Through the same shared buffer(s) as the TMA path, read back in row slabs with 16-byte vectors per thread:
        # stores straight from the wgmma layout write 4-byte pieces of 8 rows per instruction, which measured 15%
        # slower over a whole GEMM (scripts/grouped_overhead_probe.py). With chunked stores, chunk by chunk.
        CHUNK_N: gl.constexpr = self.out.c_desc.block_type.shape[2]
        acc = self.out.add_bias(acc, work.off_n)
        chunks = column_chunks(acc.to(self.out.c_desc.dtype), CHUNK_N)
        tma.store_wait(0)
        for c in gl.static_range(len(chunks)):
            self.store_masked_chunk(chunks[c], c % 2, work, work.off_n + c * CHUNK_N)

    @gluon.jit
    def store_masked_chunk(self, chunk, buffer: gl.constexpr, work, off_n):
        BLOCK_M: gl.constexpr = chunk.type.shape[0]
        CHUNK_N: gl.constexpr = chunk.type.shape[1]
        c_desc = self.out.c_desc
        tile = self.out.c_smem.index(buffer).reshape([BLOCK_M, CHUNK_N])
        tile.store(chunk)
        if rows_end_on_vectors(c_desc):
            self.write_rows(tile, work, off_n, True)
        else:
            self.write_rows(tile, work, off_n, False)

    @gluon.jit
    def write_rows(self, tile, work, off_n, WHOLE: gl.constexpr):
        """A staged [BLOCK_M, CHUNK_N] tile's rows below work.m_end and columns below N to C, 32 rows at a time."""
        BLOCK_M: gl.constexpr = tile.type.shape[0]
        CHUNK_N: gl.constexpr = tile.type.shape[1]
        SLAB: gl.constexpr = 32
        c_desc = self.out.c_desc
        N = column_bound(c_desc, WHOLE)
        layout: gl.constexpr = row_store_layout(CHUNK_N, c_desc.dtype.primitive_bitwidth, gl.num_warps())
        cols = off_n + gl.arange(0, CHUNK_N, layout=gl.SliceLayout(0, layout))
        for r in gl.static_range(BLOCK_M // SLAB):
            rows = work.off_m + r * SLAB + gl.arange(0, SLAB, layout=gl.SliceLayout(1, layout))
            vals = tile.slice(r * SLAB, SLAB, dim=0).load(layout)
            offsets = gl.expand_dims(rows.to(gl.int64) * aligned_stride(c_desc, 1), 1) + gl.expand_dims(cols, 0)
            mask = gl.expand_dims(rows < work.m_end, 1) & gl.expand_dims(cols < N, 0)
            gl.store(self.out_ptr + offsets, vals, mask=mask)

    @gluon.jit
    def drain(self):
        self.out.drain()


@aggregate
class RowBoundTransposedEpilogue:
    """Grouped GEMM under swap-AB: the transposed tile's columns are rows of A that can run past the group's last
    row into the next group's; only C's rows below work.m_end are written (C is (1, rows, N): batch 0)."""

    out: TransposedStoreEpilogue

    @gluon.constexpr_function
    def __init__(self, out):
        self.out = out

    @gluon.jit
    def create(p, sched):
        return RowBoundTransposedEpilogue(TransposedStoreEpilogue.create(p, sched))

    @gluon.jit
    def store(self, acc, work):
        self.out.store_rows(acc, 0, gl.to_tensor(0), work.off_m, work.off_n, work.m_end)

    @gluon.jit
    def drain(self):
        pass
