"""y = x @ W.T for two rows of x (batch-2 decode): a CUDA-core GEMV in Gluon, with layouts chosen by hand.

The batch-1 GEMV (gemv.py) keeps one fp32 partial product per weight element of its K step, which is cheap for
one row but grows with every row of x: at two rows its accumulator alone takes 64 registers and it streams below
the swap-AB wgmma kernel. Here every thread owns 8 consecutive K of each of the program's weight rows and x rows
(one 16-byte load per row per step), and the product folds along those 8 inside the thread every step, so the
accumulator is M_ROWS x BLOCK_N registers whatever the K step. Plain Triton picks a layout for that fold that
spreads the 8 over threads (shuffles every step); Gluon lets the kernel say where each element lives.

Measured on the six decode weights at two rows (results/2026-11-23-gemv-rows/bench_decode_m2*.json, H100):
2.61-3.09 TB/s against 2.44-3.03 for the swap-AB kernel. At four rows and more the FMA and conversion work per
weight byte wins over the short programs' balance and it falls behind (gemv.MAX_ROWS); a cp.async ring (bytes in
flight out of the registers) was slower still, so what limits it there is the CUDA cores, not the loads in flight.
"""
from __future__ import annotations

from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from .hopper.partitions import allow_dependents, wait_for_prior_grid

BLOCK_N = 4
BLOCK_K = 1024
NUM_WARPS = 4  # BLOCK_K / 8 = 128 threads: one 16-byte piece of each row per thread per step


@gluon.jit
def _row_offsets(rows, row_stride, k_stride, CH: gl.constexpr, VEC: gl.constexpr, layout: gl.constexpr):
    """In `layout`: the [len(rows), CH, VEC] element offsets of K = 0 .. CH * VEC - 1 of each row, and the
    [1, CH, VEC] K index of each piece (for the masks of a ragged last step)."""
    ch = gl.arange(0, CH, layout=gl.SliceLayout(0, gl.SliceLayout(2, layout)))
    v = gl.arange(0, VEC, layout=gl.SliceLayout(0, gl.SliceLayout(1, layout)))
    k = gl.expand_dims(gl.expand_dims(ch * VEC, 0), 2) + gl.expand_dims(gl.expand_dims(v, 0), 1)
    base = gl.expand_dims(gl.expand_dims(rows.to(gl.int64) * row_stride, 1), 2)
    return base + k.to(gl.int64) * k_stride, k


@gluon.jit
def gemv_rows_kernel(x_ptr, w_ptr, y_ptr, bias_ptr, M, N, K, sxm, sxk, swn, sym, syn,  #
                     M_ROWS: gl.constexpr, BLOCK_N: gl.constexpr, BLOCK_K: gl.constexpr, HAS_BIAS: gl.constexpr,
                     EVEN_K: gl.constexpr, PDL: gl.constexpr, W_EVICT: gl.constexpr, num_warps: gl.constexpr):
    # x (M, K) with any strides (M <= M_ROWS, a power of two); W (N, K) with unit stride along K; y (M, N).
    # W_EVICT: the weight's L2 eviction policy (gemv.weight_eviction).
    VEC: gl.constexpr = 8  # K elements per thread per step: 16 bytes of bf16/fp16
    CH: gl.constexpr = BLOCK_K // VEC
    gl.static_assert(CH == 32 * num_warps, "one 8-element piece of each row per thread per step")
    L4: gl.constexpr = gl.BlockedLayout(size_per_thread=[M_ROWS, BLOCK_N, 1, VEC], threads_per_warp=[1, 1, 32, 1],
                                        warps_per_cta=[1, 1, num_warps, 1], order=[3, 2, 1, 0])
    LW: gl.constexpr = gl.SliceLayout(0, L4)  # weight pieces [BLOCK_N, CH, VEC]
    LX: gl.constexpr = gl.SliceLayout(1, L4)  # x pieces [M_ROWS, CH, VEC]
    LA: gl.constexpr = gl.SliceLayout(3, L4)  # partial sums [M_ROWS, BLOCK_N, CH]
    LY: gl.constexpr = gl.SliceLayout(2, LA)  # outputs [M_ROWS, BLOCK_N]
    if PDL:
        # Let the next kernel queue up now; wait for the previous one (which may have written x or W) first.
        allow_dependents()
        wait_for_prior_grid()
    first = gl.program_id(0) * BLOCK_N
    rows = first + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(1, gl.SliceLayout(2, LW)))
    rows = gl.where(rows < N, rows, 0)  # clamped rows read row 0: in bounds, never stored
    w_off, w_k = _row_offsets(rows, swn, 1, CH, VEC, LW)
    xm = gl.arange(0, M_ROWS, layout=gl.SliceLayout(1, gl.SliceLayout(2, LX)))
    x_off, x_k = _row_offsets(xm, sxm, sxk, CH, VEC, LX)
    x_live = gl.expand_dims(gl.expand_dims(xm < M, 1), 2)
    acc = gl.zeros([M_ROWS, BLOCK_N, CH], gl.float32, LA)
    for k0 in range(0, K, BLOCK_K):
        if EVEN_K:
            w = gl.load(w_ptr + w_off + k0, eviction_policy=W_EVICT)
            x = gl.load(x_ptr + x_off + k0.to(gl.int64) * sxk, mask=x_live, other=0.0)
        else:
            w = gl.load(w_ptr + w_off + k0, mask=w_k < K - k0, other=0.0, eviction_policy=W_EVICT)
            x = gl.load(x_ptr + x_off + k0.to(gl.int64) * sxk, mask=x_live & (x_k < K - k0), other=0.0)
        # The fold over the thread's 8 K: adds inside the thread, in a fixed order (bitwise repeatable).
        acc += gl.sum(gl.expand_dims(w.to(gl.float32), 0) * gl.expand_dims(x.to(gl.float32), 1), axis=3)
    y = gl.sum(acc, axis=2)
    ym = gl.arange(0, M_ROWS, layout=gl.SliceLayout(1, LY))
    yn = first + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, LY))
    if HAS_BIAS:
        y += gl.expand_dims(gl.load(bias_ptr + yn, mask=yn < N, other=0.0).to(gl.float32), 0)
    y_off = gl.expand_dims(ym.to(gl.int64) * sym, 1) + gl.expand_dims(yn.to(gl.int64) * syn, 0)
    gl.store(y_ptr + y_off, y.to(y_ptr.dtype.element_ty), mask=gl.expand_dims(ym < M, 1) & gl.expand_dims(yn < N, 0))
