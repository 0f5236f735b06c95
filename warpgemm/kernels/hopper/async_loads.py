"""cp.async loads of an operand box: the producer's path for operands whose rows start off a 32-byte sector.

TMA reads a box row by row. When the rows start 16 bytes into a 32-byte sector (bf16 with K = 8 mod 16: each row
is then 16-byte aligned only), its reads of the same bytes cost 1.25-1.7x, and a GEMM that is otherwise fast runs
at 0.53-0.8x cuBLAS (results/2026-11-26-parts/align.json). The producer's warps then copy such an operand
themselves, 16 bytes per cp.async, into the same swizzled slot TMA would fill; each thread's
`cp.async.mbarrier.arrive.noinc` counts as one arrival on the slot's ready barrier once its copies have landed.

The box is given as TMA's: (batch, row, col) coordinates in the descriptor's (batch, outer, inner) geometry, inner
contiguous. Elements past the tensor's edges are zero-filled, as TMA fills them.
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.ampere import async_copy


@gluon.constexpr_function
def copy_layout(rows, cols, elem_bits, num_warps):
    """A layout of a [1, rows, cols] box in 16-byte pieces, a warp's threads along the contiguous columns first."""
    vec = 128 // elem_bits
    per_row = max(1, min(32, cols // vec))
    return gl.BlockedLayout([1, 1, vec], [1, 32 // per_row, per_row], [1, num_warps, 1], [2, 1, 0])


@gluon.jit
def box_offsets(desc, ROWS: gl.constexpr, COLS: gl.constexpr, layout: gl.constexpr):
    """Element offsets of a [1, ROWS, COLS] box from its first element, and the box's row and column indices.
    The row stride is known here to be a multiple of a 16-byte piece (TMA needs it too); saying so lets each
    thread's piece go out as one 16-byte copy. The host keeps ROWS * stride below 2**31 (kernels/hopper/gemm.py)."""
    VEC: gl.constexpr = 128 // desc.dtype.primitive_bitwidth
    # Opaque to the compiler, so that the copies' addresses are computed where they are used: hoisted out of the K
    # loop, 24 of them (64-bit) overflow the producer's 40 registers and spill.
    stride = gl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [(desc.strides[1] // VEC).to(gl.int32)],
                                       dtype=gl.int32, is_pure=False, pack=1) * VEC
    rows = gl.arange(0, ROWS, layout=gl.SliceLayout(1, gl.SliceLayout(0, layout)))
    cols = gl.arange(0, COLS, layout=gl.SliceLayout(0, gl.SliceLayout(0, layout)))
    offsets = gl.expand_dims(gl.expand_dims(rows, 1) * stride + gl.expand_dims(cols, 0), 0)
    return offsets, rows, cols


@gluon.jit
def cp_async_box(desc, base_ptr, batch, row, col, slot):
    """Copy desc's box at (batch, row, col) into `slot` (a [1, rows, cols] shared view) with cp.async."""
    ROWS: gl.constexpr = slot.shape[1]
    COLS: gl.constexpr = slot.shape[2]
    layout: gl.constexpr = copy_layout(ROWS, COLS, desc.dtype.primitive_bitwidth, gl.num_warps())
    VEC: gl.constexpr = 128 // desc.dtype.primitive_bitwidth
    offsets, rows, cols = box_offsets(desc, ROWS, COLS, layout)
    batch = gl.to_tensor(batch)
    row = gl.to_tensor(row)
    col = gl.to_tensor(col)
    start = (batch.to(gl.int64) * (desc.strides[0] // VEC) * VEC + row.to(gl.int64) * (desc.strides[1] // VEC) * VEC
             + col)
    in_rows = gl.expand_dims(row + rows < desc.shape[1], 1)
    # The host takes this path only for a contiguous extent that is a whole number of pieces: said so, the mask
    # is constant over each piece and the piece stays one copy.
    in_cols = gl.expand_dims(col + cols < (desc.shape[2] // VEC) * VEC, 0)
    mask = gl.expand_dims(in_rows & in_cols, 0)
    async_copy.async_copy_global_to_shared(slot, base_ptr + start + offsets, mask=mask)


@gluon.jit
def arrive_when_copied(bar):
    """This thread's arrival on `bar`, made when all its cp.async copies so far have landed (one of the
    barrier's counted arrivals: init it with one per producer thread)."""
    async_copy.mbarrier_arrive(bar, increment_count=False)
