"""grouped_mm's 2-D x 2-D form on Hopper: groups along K (the MoE weight gradient), out[g] = a[:, k_g] @ b[k_g, :]
for the tokens k_g = [offs[g-1], offs[g]).

One persistent launch over every group's output tiles (kernels/hopper/ragged_k.py); offs stays on the device, so
the call is capturable in a CUDA graph and replays correctly after offs changes. Both operands are read with the
tokens as their outer dimension: a (M, T) M-contiguous and b (T, N) N-contiguous, which is what a backward hands
over (`x.t()`, `dy`). Any other layout, or a token pitch off 16 bytes, is copied into that layout first.
"""
from __future__ import annotations

from typing import NamedTuple

import torch

from .. import _env
from ..config import GemmConfig, check_config, is_two_part
from ..heuristics import (LARGE, LARGE_ONE_WAVE, LARGE_TALL_BANDS, MEDIUM, MEDIUM_FP32_OUT, RAGGED_K_ROWS,
                          SMALL)
from ..kernels.hopper.tma_operands import TmaGeometry, describe, output_buffer, padded_geometry


def forced_config_problem(cfg: GemmConfig) -> str | None:
    """Why a forced config cannot run the ragged-K form, or None."""
    if cfg.swap_ab or cfg.split_k > 1 or cfg.stream_k:
        return (f"the 2-D x 2-D form runs whole plain tiles of each group: swap_ab must be False, split_k 1 and "
                f"stream_k False (got swap_ab={cfg.swap_ab}, split_k={cfg.split_k}, stream_k={cfg.stream_k})")
    if cfg.block_m < 64:
        return f"the 2-D x 2-D form reads a M-contiguous: block_m must be >= 64, got {cfg.block_m}"
    if not cfg.warp_specialize:
        return "the 2-D x 2-D form runs the warp-specialized kernel only: warp_specialize must be True"
    if cfg.cluster_m > 1:
        return f"the 2-D x 2-D form runs programs alone: cluster_m must be 1, got {cfg.cluster_m}"
    if is_two_part(cfg.block_n):
        return (f"the 2-D x 2-D form runs tiles of at most 256 columns in powers of two: got block_n="
                f"{cfg.block_n}")
    return None


# Elements of one group's output from which RAGGED_K_ROWS walks it (K7168 N2048: 14.7M, 1.02-1.05x against
# 0.99-1.04x for bands of 8; K2048 N1408: 2.9M, bands of 8 within 1%: results/2026-11-25-wgrad/ragged_band.json).
ROWS_MIN_OUTPUT = 8 << 20


def ragged_k_config(M: int, N: int, tokens: int, groups: int, in_dtype: torch.dtype,
                    out_dtype: torch.dtype) -> tuple[GemmConfig, str]:
    """The tile from each group's output (M, N) and the mean tokens per group (no synchronization).

    Measured against torch._grouped_mm on `bench moe --wgrad`'s cases, every routing, 3 rounds
    (results/2026-11-24-ragged-k/ragged_k_sweep_5.json): with a few dozen tokens per group the call is a stream of
    output tiles and 64x128 tiles write it fastest (E32 T512: 1.12-1.19x against 1.05-1.11x for 128x256); up to 128
    tokens, 128x256 tiles stored in four overlapped column chunks with a 4th stage (E128/E256 K7168 N2048:
    0.98-1.04x against 0.93-1.04x for plain 128x256), walked one tile-row at a time where a group's output is
    large (ROWS_MIN_OUTPUT); past that, plain 128x256 tiles, in bands of 16 tile-rows
    where the output is wider than tall (E8 K4096 N14336: 1.04-1.09x against 1.02-1.05x), of 8 otherwise (E8
    K14336 N4096 and E128 K2048 N1536: bands of 16 lose 2-7%)."""
    mean = tokens / max(groups, 1)
    if M < 128 or N < 256:
        order, why = ((SMALL, MEDIUM_FP32_OUT) if M <= 64 else (MEDIUM, MEDIUM_FP32_OUT)), "a small output per group"
    elif mean <= 32:
        order, why = (SMALL, MEDIUM_FP32_OUT), f"{mean:.0f} tokens per group: 64x128 tiles write the output fastest"
    elif mean <= 128:
        # A group's output past ~16 MB evicts the inputs' panels from L2 before bands of 8 tile-rows return to
        # them: walk one tile-row at a time (heuristics.RAGGED_K_ROWS).
        first = RAGGED_K_ROWS if M * N >= ROWS_MIN_OUTPUT else LARGE_ONE_WAVE
        order, why = (first, MEDIUM, MEDIUM_FP32_OUT), \
            f"{mean:.0f} tokens per group: chunked, overlapped stores" + \
            ("; a large output per group: one tile-row at a time" if first is RAGGED_K_ROWS else "")
    elif N > M:
        order, why = (LARGE_TALL_BANDS, MEDIUM, MEDIUM_FP32_OUT), f"{mean:.0f} tokens per group, N > M: tall bands"
    else:
        order, why = (LARGE, MEDIUM, MEDIUM_FP32_OUT), f"{mean:.0f} tokens per group"
    for cfg in order:
        if check_config(cfg, in_dtype, out_dtype) is None:
            return cfg, why + ("" if cfg == order[0] else f"; {cfg.name} fits the {out_dtype} output")
    raise AssertionError("no ragged-K config is valid")


def ragged_view(x: torch.Tensor, block_k: int, contiguous_dim: int) -> TmaGeometry:
    """The (t, j, x) descriptor geometry of a token-outer (T, X) operand: element (t, j, x) is x[t + j, x], the
    t and j dimensions sharing the token stride, j of block_k entries (kernels/hopper/ragged_k.py).
    contiguous_dim: which of the kernel operand's logical (batch, d1, d2) dimensions x's columns are: 1 for A
    (batch, M, K), 2 for B (batch, K, N)."""
    T, X = x.shape
    align = 16 // x.element_size()
    pitch = x.stride(0) if T > 1 else -(-X // align) * align  # one token: its stride is never stepped over
    return TmaGeometry((T, block_k, X), (pitch, pitch, 1), contiguous_dim)


def reads_token_outer(x: torch.Tensor) -> bool:
    """Whether TMA can read x (T, X) token by token in place (X contiguous, 16-byte pitch and base)."""
    return describe(x.unsqueeze(0), 2) is not None


def token_outer(x: torch.Tensor) -> torch.Tensor:
    """x (T, X) itself when TMA can read it token by token (reads_token_outer), else a copy whose rows are padded to
    whole 32-byte sectors (tma_operands.padded_geometry)."""
    if reads_token_outer(x):
        return x
    geom = padded_geometry((1, *x.shape), x.element_size(), 2)
    buf = torch.empty((x.shape[0], geom.strides[1]), dtype=x.dtype, device=x.device)[:, :x.shape[1]]
    buf.copy_(x)
    return buf


class _Plan(NamedTuple):
    config: GemmConfig
    why: str
    launch: object
    c_staged: bool


_PLANS: dict[tuple, _Plan] = {}


def plan_ragged(at: torch.Tensor, b: torch.Tensor, out: torch.Tensor, config: GemmConfig | None) -> _Plan:
    key = (at.shape, at.stride(), b.shape, b.stride(), out.shape, out.stride(), at.dtype, out.dtype,
           out.data_ptr() % 16 == 0, out.device.index, config)
    plan = _PLANS.get(key)
    if plan is not None:
        return plan
    from ..kernels.hopper.gemm import GemmLaunch  # (the kernel modules load on first use)

    G, M, N = out.shape
    cfg, why = (config, "forced") if config is not None else ragged_k_config(M, N, at.shape[0], G, at.dtype,
                                                                              out.dtype)
    c_geom = describe(out, 2)
    c_staged = c_geom is None
    if c_staged:
        c_geom = padded_geometry(tuple(out.shape), out.element_size(), 2)
    launch = GemmLaunch(cfg, ragged_view(at, cfg.block_k, 1), ragged_view(b, cfg.block_k, 2), c_geom, False, False,
                        False, _env.sms_for(out.device), ragged_k=True)
    if len(_PLANS) > 1024:
        _PLANS.clear()
    plan = _PLANS[key] = _Plan(cfg, why, launch, c_staged)
    return plan


def hopper_ragged_k(a: torch.Tensor, b: torch.Tensor, offs: torch.Tensor, out: torch.Tensor,
                    config: GemmConfig | None) -> None:
    """out (G, M, N) = per group g, a[:, tokens of g] @ b[tokens of g, :]; a (M, T), b (T, N), T > 0, out
    non-empty. Inputs are checked by grouped_mm."""
    a_t = a.t()
    at = token_outer(a_t)
    b_in = token_outer(b)
    plan = plan_ragged(at, b_in, out, config)
    if _env.LOG_ENABLED:
        _env.log(f"grouped_mm ragged K: M={out.shape[1]} N={out.shape[2]} T={a.shape[1]} groups={out.shape[0]}: "
                 f"hopper, config={plan.config.name} ({plan.why})"
                 + ("; a copied token-outer" if at is not a_t else "")
                 + ("; b copied token-outer" if b_in is not b else ""))
    c = output_buffer(tuple(out.shape), out.dtype, out.device) if plan.c_staged else out
    ragged_launch(plan, at, b_in, c, offs)
    if plan.c_staged:
        out.copy_(c)


def ragged_launch(plan: _Plan, at: torch.Tensor, b_in: torch.Tensor, out: torch.Tensor, offs: torch.Tensor) -> None:
    """Launch a ragged-K plan on token-outer operands it reads in place (at, b_in: the base addresses it was planned
    for) into out (G, M, N)."""
    from ..kernels.hopper.ragged_k import RAGGED_OFFS_GROUPS_MAX

    # The kernel reads offs element by element from its base (a launch is compiled for the pointer alignment of
    # its first call): a strided or misaligned view is copied on the device (no sync).
    if out.shape[0] > RAGGED_OFFS_GROUPS_MAX:
        # More groups than the kernel raises the ends of itself (ragged_k.py): the ends raised here (a new buffer).
        offs = torch.cummax(offs, 0).values
    elif offs.stride(0) != 1 or offs.data_ptr() % 16:
        offs = offs.contiguous() if offs.stride(0) != 1 else offs.clone()
    plan.launch.launch(at, b_in, out, None, offs)
