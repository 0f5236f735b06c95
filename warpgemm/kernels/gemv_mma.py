"""y = x @ W.T for a few rows of x (decode at batch 3-16): short programs like the CUDA-core GEMVs, with the
products on the tensor cores through mma.sync, fed straight from 16-byte global loads.

The CUDA-core GEMV of gemv_rows.py streams the weight at the copy rate at two rows but falls behind the swap-AB
wgmma kernel from four: its FMA and conversion work grows with the rows. mma.sync (m16n8k16) takes its operands
from registers, so the loads can stay the GEMV's: each lane loads 8 consecutive K of a weight row (16 bytes) and
the same 8 K of an x row. mma.sync wants lane (g, t) = (lane / 4, lane % 4) to hold K = 2t, 2t+1, 2t+8, 2t+9 of
each k16 block, not 8 consecutive K; but a dot product may take its K in any order as long as both operands take
the same one. So 32 consecutive K are read as two k16 blocks in a permuted order: the K that lane t holds at
logical position (block kb, half h, pair p) is 8t + 4kb + 2h + p. Weight rows g and g+8 (the m16 side) and x row
g (the n8 side; rows of x past M read as zero) then arrive in exactly the registers the instruction reads: no
shuffles, no shared memory, no layout conversion in the loop.

A program owns 16 weight rows; its warps split K between them and add their partial tiles once at the end, in a
fixed order (bitwise repeatable). Each warp keeps U independent accumulators (U chunks of 32 K per step), so
consecutive mma.sync do not wait on each other.
"""
from __future__ import annotations

import torch

from triton.experimental import gluon
from triton.experimental.gluon import language as gl

from .hopper.partitions import allow_dependents, wait_for_prior_grid

BLOCK_N = 16  # weight rows per program: the m16 side of one mma.sync
NUM_WARPS = 8
UNROLL = 4

# Two m16n8k16 products over 32 K: {$0..$3} = acc + A0 B0 + A1 B1. Arguments, 4 x 32 bits each: weight row g
# (8 K as 4 pairs), weight row g + 8, x row g, the accumulator (c0..c3 = rows g, g, g+8, g+8 x columns 2t, 2t+1).
_MMA2 = """{{
.reg .f32 t<4>;
mma.sync.aligned.m16n8k16.row.col.f32.{ty}.{ty}.f32 {{t0, t1, t2, t3}}, {{$4, $8, $5, $9}}, {{$12, $13}}, {{$16, $17, $18, $19}};
mma.sync.aligned.m16n8k16.row.col.f32.{ty}.{ty}.f32 {{$0, $1, $2, $3}}, {{$6, $10, $7, $11}}, {{$14, $15}}, {{t0, t1, t2, t3}};
}}"""
MMA2_BF16 = _MMA2.format(ty="bf16")
MMA2_F16 = _MMA2.format(ty="f16")
_CONSTRAINTS = gl.constexpr("=f,=f,=f,=f," + ",".join(["r"] * 12) + ",f,f,f,f")


@gluon.jit
def _mma2(w_lo, w_hi, x, acc, ASM: gl.constexpr):
    return gl.inline_asm_elementwise(ASM, _CONSTRAINTS, [w_lo, w_hi, x, acc], dtype=gl.float32, is_pure=True,
                                     pack=4)


@gluon.jit
def gemv_mma_kernel(x_ptr, w_ptr, y_ptr, bias_ptr, M, N, K, sxm2, swn2, sym, syn,  #
                    M_ROWS: gl.constexpr, UNROLL: gl.constexpr, HAS_BIAS: gl.constexpr, EVEN_K: gl.constexpr,
                    ASM: gl.constexpr, PDL: gl.constexpr, ROW_LOADS: gl.constexpr, num_warps: gl.constexpr):
    # x (M, K) and W (N, K), both with unit stride along K, K a multiple of 8, every row 16-byte aligned; sxm2 and
    # swn2 are their row strides in 32-bit words. M <= 16: rows 0-7 and 8-15 of x are two n8 products.
    gl.static_assert(M_ROWS == 8 or M_ROWS == 16, "one or two n8 blocks of x rows")
    # [warp, chunk, g, t, 32-bit word]: lane (g, t) of warp w holds words 4t .. 4t+3 (K 8t .. 8t+7) of chunk u of
    # the warp's share of the step.
    L: gl.constexpr = gl.BlockedLayout(size_per_thread=[1, UNROLL, 1, 1, 4], threads_per_warp=[1, 1, 8, 4, 1],
                                       warps_per_cta=[num_warps, 1, 1, 1, 1], order=[4, 3, 2, 1, 0])
    GL: gl.constexpr = 32 // (4 * UNROLL)
    LR: gl.constexpr = gl.BlockedLayout(size_per_thread=[1, 1, 8 // GL, 1, 4], threads_per_warp=[1, UNROLL, GL, 4, 1],
                                        warps_per_cta=[num_warps, 1, 1, 1, 1], order=[4, 3, 1, 2, 0])
    STEP: gl.constexpr = num_warps * UNROLL * 16  # 32-bit words of K per program step (two K each)
    if PDL:
        # Let the next kernel queue up now; wait for the previous one (which may have written x or W) first.
        allow_dependents()
        wait_for_prior_grid()
    wi = gl.arange(0, num_warps, layout=gl.SliceLayout(1, gl.SliceLayout(2, gl.SliceLayout(3, gl.SliceLayout(4, L)))))
    ui = gl.arange(0, UNROLL, layout=gl.SliceLayout(0, gl.SliceLayout(2, gl.SliceLayout(3, gl.SliceLayout(4, L)))))
    gi = gl.arange(0, 8, layout=gl.SliceLayout(0, gl.SliceLayout(1, gl.SliceLayout(3, gl.SliceLayout(4, L)))))
    ti = gl.arange(0, 4, layout=gl.SliceLayout(0, gl.SliceLayout(1, gl.SliceLayout(2, gl.SliceLayout(4, L)))))
    ji = gl.arange(0, 4, layout=gl.SliceLayout(0, gl.SliceLayout(1, gl.SliceLayout(2, gl.SliceLayout(3, L)))))
    # K word of each element within a step, and the row index g broadcast to the full shape.
    kw = (gl.expand_dims(gl.expand_dims(gl.expand_dims(gl.expand_dims(wi * (UNROLL * 16), 1) + gl.expand_dims(ui * 16, 0), 2), 3), 4)
          + gl.expand_dims(gl.expand_dims(gl.expand_dims(gl.expand_dims(ti * 4, 0), 1), 2), 4)
          + gl.expand_dims(gl.expand_dims(gl.expand_dims(gl.expand_dims(ji, 0), 1), 2), 3))
    g = gl.expand_dims(gl.expand_dims(gl.expand_dims(gl.expand_dims(gi, 0), 1), 3), 4)
    first = gl.program_id(0) * 16
    w_lo = first + g
    w_hi = w_lo + 8
    # Rows past N read row 0 (in bounds, never stored).
    w32 = w_ptr.to(gl.pointer_type(gl.int32), bitcast=True)
    x32 = x_ptr.to(gl.pointer_type(gl.int32), bitcast=True)
    lo_off = gl.where(w_lo < N, w_lo, 0).to(gl.int64) * swn2 + kw
    hi_off = gl.where(w_hi < N, w_hi, 0).to(gl.int64) * swn2 + kw
    x0_off = g.to(gl.int64) * sxm2 + kw
    x0_live = g < M
    x1_off = (g + 8).to(gl.int64) * sxm2 + kw
    x1_live = g + 8 < M
    if ROW_LOADS:
        lo_r = gl.convert_layout(lo_off, LR)
        hi_r = gl.convert_layout(hi_off, LR)
    acc0 = gl.zeros([num_warps, UNROLL, 8, 4, 4], gl.float32, L)
    acc1 = gl.zeros([num_warps, UNROLL, 8, 4, 4], gl.float32, L)
    K2 = K // 2
    for k0 in range(0, K2, STEP):
        if ROW_LOADS:
            # Probe: each warp-wide load covers 512 contiguous bytes of one row, shuffled into place after.
            lo = gl.convert_layout(gl.load(w32 + lo_r + k0), L)
            hi = gl.convert_layout(gl.load(w32 + hi_r + k0), L)
            xa = gl.load(x32 + x0_off + k0, mask=x0_live, other=0)
        elif EVEN_K:
            lo = gl.load(w32 + lo_off + k0)
            hi = gl.load(w32 + hi_off + k0)
            xa = gl.load(x32 + x0_off + k0, mask=x0_live, other=0)
        else:
            k_live = kw < K2 - k0
            lo = gl.load(w32 + lo_off + k0, mask=k_live, other=0)
            hi = gl.load(w32 + hi_off + k0, mask=k_live, other=0)
            xa = gl.load(x32 + x0_off + k0, mask=x0_live & k_live, other=0)
        acc0 = _mma2(lo, hi, xa, acc0, ASM)
        if M_ROWS == 16:
            if EVEN_K:
                xb = gl.load(x32 + x1_off + k0, mask=x1_live, other=0)
            else:
                xb = gl.load(x32 + x1_off + k0, mask=x1_live & (kw < K2 - k0), other=0)
            acc1 = _mma2(lo, hi, xb, acc1, ASM)
    # c_j of lane (g, t): weight row g + 8 * (j >= 2), x row 2t + j % 2 (+ 8 for the second n8 block).
    _store_block(gl.sum(gl.sum(acc0, axis=1), axis=0), y_ptr, bias_ptr, first, 0, M, N, sym, syn, HAS_BIAS)
    if M_ROWS == 16:
        _store_block(gl.sum(gl.sum(acc1, axis=1), axis=0), y_ptr, bias_ptr, first, 8, M, N, sym, syn, HAS_BIAS)


@gluon.jit
def _store_block(y, y_ptr, bias_ptr, first, x_first, M, N, sym, syn, HAS_BIAS: gl.constexpr):
    LY: gl.constexpr = y.type.layout
    gi = gl.arange(0, 8, layout=gl.SliceLayout(1, gl.SliceLayout(2, LY)))
    ti = gl.arange(0, 4, layout=gl.SliceLayout(0, gl.SliceLayout(2, LY)))
    ji = gl.arange(0, 4, layout=gl.SliceLayout(0, gl.SliceLayout(1, LY)))
    wrow = first + gl.expand_dims(gl.expand_dims(gi, 1), 2) + 8 * gl.expand_dims(gl.expand_dims(ji // 2, 0), 1)
    xrow = x_first + 2 * gl.expand_dims(gl.expand_dims(ti, 0), 2) + gl.expand_dims(gl.expand_dims(ji % 2, 0), 1)
    live = (wrow < N) & (xrow < M)
    if HAS_BIAS:
        y += gl.load(bias_ptr + wrow, mask=wrow < N, other=0.0).to(gl.float32)
    gl.store(y_ptr + xrow.to(gl.int64) * sym + wrow.to(gl.int64) * syn, y.to(y_ptr.dtype.element_ty), mask=live)


def eligible(a3, b3) -> bool:
    """Whether x (a3[0], M x K) and W^T (b3[0], K x N) can be read as this kernel reads them: both contiguous along
    K, K a multiple of 8, rows 16-byte aligned."""
    K = a3.shape[2]
    return (a3.dtype in (torch.bfloat16, torch.float16) and a3.stride(2) == 1 and b3.stride(1) == 1 and K % 8 == 0
            and a3.stride(1) % 8 == 0 and b3.stride(2) % 8 == 0 and a3.data_ptr() % 16 == 0
            and b3.data_ptr() % 16 == 0)


class GemvMmaLaunch:
    """c3[0] = a3[0] @ b3[0] (+ bias) for M <= 16 rows of x, `eligible` operands. Built once per plan; `launch`
    reads only base addresses (as kernels.gemv.GemvLaunch)."""

    __slots__ = ("grid", "kernel", "ints")

    def __init__(self, a3, b3, c3, has_bias: bool, num_warps: int = NUM_WARPS, unroll: int = UNROLL,
                 row_loads: bool = False):
        import triton

        from .. import _env
        from .hopper.launch import CachedKernel

        M, K, N = a3.shape[1], a3.shape[2], b3.shape[2]
        if not 1 <= M <= 16 or not eligible(a3, b3):
            raise ValueError(f"the mma GEMV takes 1 to 16 rows of x contiguous along K (K % 8 == 0, rows 16-byte "
                             f"aligned), got M={M}, K={K}, x strides {a3.stride()[1:]}, W^T strides {b3.stride()[1:]}")
        self.ints = (M, N, K, a3.stride(1) // 2, b3.stride(2) // 2, c3.stride(1), c3.stride(2))
        self.grid = triton.cdiv(N, BLOCK_N)
        step = num_warps * unroll * 32
        constexprs = dict(M_ROWS=8 if M <= 8 else 16, UNROLL=unroll, HAS_BIAS=has_bias, EVEN_K=K % step == 0,
                          ASM=MMA2_BF16 if a3.dtype == torch.bfloat16 else MMA2_F16, PDL=_env.PDL, ROW_LOADS=row_loads)
        self.kernel = CachedKernel(gemv_mma_kernel, constexprs, num_warps=num_warps, maxnreg=None, pdl=_env.PDL,
                                   num_warps_param=True)

    def launch(self, a, b, c, bias) -> None:
        args = (a, b, c, c if bias is None else bias) + self.ints
        self.kernel.launch(self.grid, c.device.index, lambda: args, args)
