"""y = x @ W.T for one row of x (batch-1 decode): a CUDA-core GEMV in plain Triton.

With one row the product is a weight stream: two FLOPs per weight element, far below what the tensor cores are
for. What decides the time is how evenly the weight is spread over the SMs while it streams.
Here every program takes BLOCK_N weight rows over the whole K (thousands of programs, handed out by the hardware
as SMs free up), where the persistent wgmma kernel gives each SM a fixed share of 64-row tiles and so finishes
with its slowest SM (measured: notes/perf.md, "read ceiling"). Each program reads its rows BLOCK_K at a time with
16-byte loads and keeps fp32 partial products per lane; one reduction at the end, in a fixed order, so results
are bitwise repeatable. The kernel takes up to M_ROWS rows (a power of two), but the plan sends it one: two rows
go to the Gluon GEMV of gemv_rows.py, whose accumulator does not grow with the K step (MAX_ROWS below).
"""
from __future__ import annotations

import torch
import triton
import triton.language as tl
from triton.language.extra.cuda import gdc_launch_dependents, gdc_wait

from .. import _env

# Measured at batch 1 on the six decode weights (results/2026-11-22-gemv/gemv_probe.json): 4 rows x 1024 columns
# per step with 4 warps was within 1% of the best of 7 variants on every weight; 2 rows per program gain < 1% on
# three weights and lose 2-6% on the other three; 8-16 rows or 256-512-column steps lose 2-20%.
BLOCK_N = 4
BLOCK_K = 1024
NUM_WARPS = 4
# Rows of x this kernel takes. At 2-4 rows it streams below the wgmma kernel (gemv_probe.json: 2-4% below it at 2
# rows, 22-26% at 4: its [rows, BLOCK_N, BLOCK_K] accumulator leaves room for few programs per SM).
TRITON_MAX_ROWS = 1
# Rows of x the GEMVs take in all (this kernel for one, gemv_rows for more).
MAX_ROWS = 2


@triton.jit
def gemv_kernel(x_ptr, w_ptr, y_ptr, bias_ptr, M, N, K,  #
                sxm, sxk, swn, sym, syn,  #
                M_ROWS: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, HAS_BIAS: tl.constexpr,
                EVEN_K: tl.constexpr, PDL: tl.constexpr = False, W_EVICT: tl.constexpr = ""):
    if PDL:
        # Programmatic dependent launch: let the next kernel's programs queue up now; wait for the previous
        # kernel (which may have written x or W) before reading anything.
        gdc_launch_dependents()
        gdc_wait()
    # W is (N, K) with unit stride along K (the nn.Linear layout); x is (M, K) with any strides, M <= M_ROWS (a
    # power of two: rows past M read as zeros and are not stored). W_EVICT: the weight's L2 eviction policy
    # ("evict_first" with WARPGEMM_WEIGHT_HINT, as the wgmma kernel's weight-streaming launches: it is read once).
    rows = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    live = rows < N
    rows = tl.where(live, rows, 0)  # clamped rows read row 0: in bounds, never stored
    ms = tl.arange(0, M_ROWS)
    m_live = ms[:, None] < M
    w_rows = w_ptr + rows[:, None].to(tl.int64) * swn
    x_rows = x_ptr + ms[:, None].to(tl.int64) * sxm
    acc = tl.zeros([M_ROWS, BLOCK_N, BLOCK_K], dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + tl.arange(0, BLOCK_K)
        if EVEN_K:
            w = tl.load(w_rows + ks[None, :], eviction_policy=W_EVICT)
            x = tl.load(x_rows + ks[None, :].to(tl.int64) * sxk, mask=m_live, other=0.0)
        else:
            w = tl.load(w_rows + ks[None, :], mask=ks[None, :] < K, other=0.0, eviction_policy=W_EVICT)
            x = tl.load(x_rows + ks[None, :].to(tl.int64) * sxk, mask=m_live & (ks[None, :] < K), other=0.0)
        acc += w.to(tl.float32)[None, :, :] * x.to(tl.float32)[:, None, :]
    y = tl.sum(acc, 2)  # [M_ROWS, BLOCK_N]
    if HAS_BIAS:
        y += tl.load(bias_ptr + rows, mask=live, other=0.0).to(tl.float32)[None, :]
    out = y_ptr + ms[:, None].to(tl.int64) * sym + rows[None, :].to(tl.int64) * syn
    tl.store(out, y.to(y_ptr.dtype.element_ty), mask=m_live & live[None, :])


def weight_eviction() -> str:
    """The GEMVs' L2 eviction policy for the weight: evict-first (each line is read once), unless
    WARPGEMM_WEIGHT_HINT=0."""
    return "evict_first" if _env.WEIGHT_HINT else ""


class GemvLaunch:
    """c3[0] = a3[0] @ b3[0] (+ bias) for a (1, M, K) x (1, K, N) product whose b3 has unit stride along K, M <=
    MAX_ROWS: this module's kernel for one row, gemv_rows.py's for more.

    Built from the plan's tensors and owned by a plan (or an eager-call recipe) whose key holds everything the
    launch depends on: shapes, strides, dtypes, the 16-byte alignment of every pointer, the bias. So one compiled
    kernel serves every launch, through the cached raw launcher, and `launch` reads only base addresses: it may be
    handed the caller's own tensors (x, weight) rather than the 3-D views the plan was made from.
    """

    __slots__ = ("grid", "kernel", "ints")

    def __init__(self, a3: torch.Tensor, b3: torch.Tensor, c3: torch.Tensor, has_bias: bool):
        from .hopper.launch import CachedKernel

        M, K, N = a3.shape[1], a3.shape[2], b3.shape[2]
        if not 1 <= M <= MAX_ROWS:
            raise ValueError(f"the GEMV takes 1 to {MAX_ROWS} rows of x, got M={M}")
        self.ints = (M, N, K, a3.stride(1), a3.stride(2), b3.stride(2), c3.stride(1), c3.stride(2))
        if M <= TRITON_MAX_ROWS:
            fn, block_n, block_k, warps, warps_param = gemv_kernel, BLOCK_N, BLOCK_K, NUM_WARPS, False
        else:
            from . import gemv_rows as g

            fn, block_n, block_k, warps, warps_param = g.gemv_rows_kernel, g.BLOCK_N, g.BLOCK_K, g.NUM_WARPS, True
        self.grid = triton.cdiv(N, block_n)
        constexprs = dict(M_ROWS=1 << (M - 1).bit_length(), BLOCK_N=block_n, BLOCK_K=block_k, HAS_BIAS=has_bias,
                          EVEN_K=K % block_k == 0, PDL=_env.PDL, W_EVICT=weight_eviction())
        self.kernel = CachedKernel(fn, constexprs, num_warps=warps, maxnreg=None, pdl=_env.PDL,
                                   num_warps_param=warps_param)

    def launch(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, bias: torch.Tensor | None) -> None:
        args = (a, b, c, c if bias is None else bias) + self.ints
        self.kernel.launch(self.grid, c.device.index, lambda: args, args)
