"""`grouped_mm`: torch._grouped_mm semantics on the persistent warp-specialized kernel.

Forms (G groups; `offs` an int32 tensor of cumulative END offsets, on the operands' device):
- 2-D x 3-D, the MoE forward: a (T, K) tokens sorted by group, b (G, K, N) (or (G, N, K).transpose(-2, -1)),
  rows [offs[g-1], offs[g]) of the (T, N) output use b[g]; tokens are read in place when row-major, else copied
  first (_plan says why). On Hopper, up to 64 groups and one GEMM: the GEMM cuts the groups into row tiles itself
  from offs (kernels/hopper/expert_scheduler.py); otherwise (past 64 groups, or the device-dispatched pair below)
  a small kernel first writes the row tiles to a table on the device (kernels/group_table.py), then the GEMM walks
  them (a swap-AB GEMM launches under the table kernel: programmatic dependent launch; a plain-tile one after it:
  gemm.launch_uses_pdl).
  With a few rows per group (decode-time MoE) the GEMM runs swap-AB: 64 of the expert's output columns on wgmma's
  wide side, 32 of the group's rows on its narrow side (`grouped_config`). With 64+ groups of at most 128 rows on
  average, two GEMMs are launched on the table and the device runs one: a weight-streaming tile if no group has a
  second row tile, else the usual one (`streaming_config`).
- 3-D x 2-D, groups along N: a (G, M, K), b (K, N), columns [offs[g-1], offs[g]) of the (M, N) output use a[g];
  computed as the 2-D x 3-D form of the transposed problem (b^T copied to row-major first), so the result is a
  transposed view (strides (1, M)); columns past offs[-1] are unspecified.
- 3-D x 3-D, no offs: a batched matmul (the regular kernel).
- 2-D x 2-D with groups along K (the weight gradient): a (M, T), b (T, N) -> (G, M, N), group g summing over
  k in [offs[g-1], offs[g]). On Hopper, one persistent GEMM over every group's output tiles, each K loop bounded
  to its group's tokens on the device (ops/grouped_ragged_k.py, kernels/hopper/ragged_k.py); an empty group's
  output is zeros.

Differences from torch._grouped_mm, all deliberate:
- Any number of groups (torch stops below 1024), any T, K, N (operands TMA cannot read are copied first).
- Bad offsets never read or write outside the operands and the output: in every form with offs each end is raised
  to the previous one and clamped to [0, T] on the device, so a decreasing offset makes an empty group and groups
  never overlap. WARPGEMM_CHECK_OFFS=1 checks offs on the host instead (a synchronization) and raises.
- out_dtype may also be torch.float32 (torch requires the input dtype).
- Inside torch.autocast a and b are cast to the region's dtype first, as for torch.mm, unless out= is given
  (ops/autocast.py).
- Rows past offs[-1] are left unwritten, as in torch: their contents are unspecified.
- Autograd covers every form called without out= (token form: dA with transposed experts, dB with the ragged-K
  form; ragged-K form: both gradients are token forms; 3-D x 3-D: warpgemm's bmm op); rows past offs[-1] get a
  zero gradient. The gradients use their forward's groups, also for decreasing offsets. Without out= every form
  is a registered op, so torch.compile(fullgraph=True) traces it.
- CPU tensors (under the Triton interpreter) and non-Hopper GPUs take a loop over groups, which reads offs on
  the host.
"""
from __future__ import annotations

import os
from typing import List, NamedTuple, Optional

import torch

from .. import _env
from ..config import GemmConfig, check_config, is_two_part, weight_layout_problem
from ..heuristics import (GROUPED_LARGE, GROUPED_NARROW_N, GROUPED_STREAM, GROUPED_SWAP, GROUPED_SWAP_MEAN_ROWS,
                          LARGE, LARGE_TALL_BANDS, MEDIUM, SMALL, TALL_BAND_MIN_ROW_TILES)
from . import autocast, checks, transforms
from .gemm_impl import bmm_into, k_major_weight_copy, select_path
from ..kernels.hopper import tma_operands as tma
from ..kernels.zero_rows import zero_rows_past_end
from .eager_autograd import EagerOp, plain_tensor
from .grouped_ragged_k import forced_config_problem, hopper_ragged_k
from .library import BMM, column_major, gradient_operand

_CHECK_OFFS = os.environ.get("WARPGEMM_CHECK_OFFS", "0").lower() in {"1", "true", "yes", "on"}


def _check_offs(offs, groups: int | None, bound: int, what: str, device) -> None:
    """groups: the number of groups the operands fix (the 2-D x 3-D form), or None where offs alone says it."""
    count = "one per group" if groups is None else str(groups)
    if offs is None:
        raise ValueError(f"offs is required for the {what} form: a 1-D int32 tensor of cumulative end offsets "
                         f"({count})")
    checks.check_tensor("offs", offs)
    if offs.dtype != torch.int32:
        raise TypeError(f"offs must be torch.int32, got {offs.dtype}")
    if offs.dim() != 1 or (groups is not None and offs.shape[0] != groups):
        want = "(G,) for G groups" if groups is None else f"({groups},) (one end offset per group)"
        raise ValueError(f"offs must have shape {want}, got {tuple(offs.shape)}")
    groups = offs.shape[0]
    if offs.device != device:
        raise ValueError(f"offs must be on the operands' device ({device}), got {offs.device}")
    if _CHECK_OFFS and groups:
        host = offs.tolist()
        prev = 0
        for g, o in enumerate(host):
            if o < prev or o > bound:
                raise ValueError(f"offs[{g}] = {o}: offsets must be non-decreasing and within [0, {bound}] "
                                 f"(WARPGEMM_CHECK_OFFS=1); offs = {host[:8]}{'...' if groups > 8 else ''}")
            prev = o


def _sanitized_bounds(offs: torch.Tensor, bound: int) -> list[tuple[int, int]]:
    """Host copy of the device-side sanitization (loop paths only): [(start, end)] per group, each end raised to
    the one before it and clamped to [0, bound] (expert_scheduler and ragged_k do the same on the device)."""
    out, prev = [], 0
    for o in offs.tolist():
        end = min(max(o, prev), bound)
        out.append((prev, end))
        prev = end
    return out


def _column_padding(n: int, block_n: int) -> float:
    """The fraction of the computed columns that lie past N."""
    return -(-n // block_n) * block_n / max(n, 1) - 1


def grouped_config(rows: int, groups: int, in_dtype, out_dtype, n: int = 0) -> GemmConfig:
    """Tile from the mean rows per group (no synchronization: the real sizes live on the device).

    Measured (scripts/moe_config_probe.py, notes/perf.md): with >= 128 rows per group on average the 128x256
    cooperative tile beats 128x128 by 6-25% even where many groups are small; 64-row tiles only pay off when
    the groups are a few dozen rows. With 64 or more groups, bands of 4 tile-rows instead of 8 (faster on 11 of 12
    fine-grained cases by 1-6%; slower on 8 of 9 eight-expert cases: results/2026-11-22-issue4-mid/moe_probe*.json);
    with fewer groups and 16+ tile-rows in all, bands of 16 as in dense matmul (8-expert cases 1.023 -> 1.040x
    torch._grouped_mm, geomean of 9: results/2026-11-22-power/moe_e8_group_m.json).
    With a few rows per group (decode-time MoE) the call streams the experts' weights: swap-AB puts 64 weight
    columns on wgmma's wide side and 32 rows of a group on its narrow side (GROUPED_SWAP). With 64+ groups and an
    N that leaves 5% or more of the 256-wide tiles' columns empty (but not of 128-wide ones), GROUPED_NARROW_N; also
    with 64+ groups of 33-64 rows on average."""
    mean = rows / max(groups, 1)
    if groups >= 64:
        large = GROUPED_LARGE
    elif rows >= TALL_BAND_MIN_ROW_TILES * LARGE.block_m:
        large = LARGE_TALL_BANDS
    else:
        large = LARGE
    if groups >= 64 and n and _column_padding(n, 256) - _column_padding(n, 128) >= 0.05:
        large = GROUPED_NARROW_N
    if mean <= GROUPED_SWAP_MEAN_ROWS:
        order = (GROUPED_SWAP, SMALL, MEDIUM)
    elif mean <= 64 and groups >= 64 and mean > 32:
        # Many experts with 33-64 rows each on average (most of them one row tile): the weight stream is the work,
        # and 128x128 tiles with 128-deep K steps read it 3-8% faster than 64x128 ones, skewed or not
        # (results/2026-11-24-moe-sparse/moe_sparse_*.json); at 17-32 rows the two are within +-3%.
        order = (GROUPED_NARROW_N, SMALL, MEDIUM)
    elif mean <= 64:
        order = (SMALL, MEDIUM)
    else:
        order = (large, MEDIUM, SMALL)
    for cfg in order:
        if check_config(cfg, in_dtype, out_dtype) is None:
            return cfg
    raise AssertionError("no grouped config is valid")


def streaming_config(cfg: GemmConfig, rows: int, groups: int, in_dtype, out_dtype) -> GemmConfig | None:
    """The second tile grouped_mm launches beside `cfg` when the groups may turn out, on the device, to fit one row
    tile each (then every weight panel is read once and GROUPED_STREAM streams the weights better; heuristics.py).
    Only for GROUPED_LARGE with at most one tile of rows per group on average: past that, some group must have a
    second tile. Both GEMMs read one row-tile table, so their tiles must hold the same rows."""
    stream = GROUPED_STREAM
    if (cfg != GROUPED_LARGE or rows > groups * cfg.block_m or stream.block_m != cfg.block_m
            or check_config(stream, in_dtype, out_dtype) is not None):
        return None
    return stream


def planned_config(a: torch.Tensor, b: torch.Tensor, out_dtype: torch.dtype | None = None) -> GemmConfig:
    """The config grouped_mm runs, unforced, for tokens a (T, K) and experts b (G, K, N) on Hopper (what the
    bench reports; the plan below asks the same question)."""
    return grouped_config(a.shape[0], b.shape[0], a.dtype, out_dtype or a.dtype, b.shape[-1])


def planned_name(a: torch.Tensor, b: torch.Tensor, out_dtype: torch.dtype | None = None) -> str:
    """planned_config's name, with the streaming tile the device may pick instead after a '|'."""
    cfg = planned_config(a, b, out_dtype)
    stream = streaming_config(cfg, a.shape[0], b.shape[0], a.dtype, out_dtype or a.dtype)
    return cfg.name + (f"|{stream.name}" if stream else "")


class _DispatchedLaunch:
    """Two grouped GEMMs on one row-tile table, of which exactly one does the work: the first runs only when no
    group has a second row tile, the second only otherwise (kernels/hopper/expert_scheduler.py, RUN_*). The choice is
    made on the device, so nothing synchronizes and a CUDA graph replays correctly whatever offs holds; the GEMM
    that has nothing to do costs one near-empty launch (its programs read two table entries and exit)."""

    __slots__ = ("launches", )

    def __init__(self, *launches):
        self.launches = launches

    def launch(self, a, b, c, bias, group_table) -> None:
        for launch in self.launches:
            launch.launch(a, b, c, bias, group_table)


class _GroupedPlan(NamedTuple):
    config: GemmConfig
    a_copy: int
    b_copy: int
    c_staged: bool
    launch: object
    offs_table: bool  # the launch reads offs as its table (no table kernel)


_PLANS: dict[tuple, _GroupedPlan] = {}


def _plan(a3, b, c3, config) -> _GroupedPlan:
    key = (a3.shape, a3.stride(), b.shape, b.stride(), c3.shape, c3.stride(), a3.dtype, c3.dtype,
           a3.data_ptr() % 16 == 0, b.data_ptr() % 16 == 0, c3.data_ptr() % 16 == 0, c3.device.index, config)
    plan = _PLANS.get(key)
    if plan is not None:
        return plan
    # The kernel modules load on first use (an import of a loaded module still costs ~1 us a call: not on a hit).
    from ..kernels.hopper.gemm import GemmLaunch
    from ..kernels.hopper.expert_scheduler import OFFS_GROUPS_MAX, RUN_IF_REUSED, RUN_IF_STREAMING

    cfg = config or planned_config(a3[0], b, c3.dtype)
    # Tokens are read in place only row-major (K contiguous); any other layout is copied into a padded row-major
    # buffer. Read column-major, a group's first row is the TMA box's coordinate along the contiguous dimension,
    # and a group starting off a 16-byte boundary (8 bf16 rows) made the kernel fault with an illegal
    # instruction on the H100 (scripts: results/2026-11-22-fuzz/). Row-major, rows are the outer coordinate.
    a_geom, a_copy = tma.describe(a3, 2), 0
    if a_geom is None:
        a_copy = 2
        a_geom = tma.padded_geometry(a3.shape, a3.element_size(), 2)
    b_geom, b_copy = tma.describe_any(b, 1), 0
    if b_geom is None:
        b_copy = 1 if b.stride(1) == 1 else 2
        b_geom = tma.padded_geometry(b.shape, b.element_size(), b_copy)
    if config is not None and weight_layout_problem(config, b_geom.contiguous_dim == 1) is not None:
        b_geom, b_copy = k_major_weight_copy(b)
    # Stores are row-masked pointer stores (no TMA), but the descriptor still carries N and the row pitch.
    c_geom = tma.describe(c3, 2)
    c_staged = c_geom is None
    if c_staged:
        c_geom = tma.padded_geometry(c3.shape, c3.element_size(), 2)
    num_sms, groups = _env.sms_for(c3.device), b.shape[0]
    stream = None if config else streaming_config(cfg, a3.shape[1], groups, a3.dtype, c3.dtype)
    offs_table = False
    if stream is None:
        # Few groups: the GEMM counts the row tiles from offs itself, so no table kernel runs before it (one kernel
        # and one buffer less per call, and the GEMM waits only on the kernel that wrote offs).
        offs_table = groups <= OFFS_GROUPS_MAX
        launch = GemmLaunch(cfg, a_geom, b_geom, c_geom, False, True, False, num_sms, groups=groups,
                            offs_table=offs_table)
    else:
        launch = _DispatchedLaunch(
            GemmLaunch(stream, a_geom, b_geom, c_geom, False, True, False, num_sms, groups=groups,
                       when=RUN_IF_STREAMING),
            GemmLaunch(cfg, a_geom, b_geom, c_geom, False, True, False, num_sms, groups=groups, when=RUN_IF_REUSED))
    if len(_PLANS) > 1024:
        _PLANS.clear()
    plan = _PLANS[key] = _GroupedPlan(cfg, a_copy, b_copy, c_staged, launch, offs_table)
    return plan


def _hopper_tokens_by_group(a, b, offs, out, config, keep_rows: bool) -> None:
    """keep_rows: out is the caller's, so its rows past offs[-1] must keep their contents."""
    a3, c3 = a.unsqueeze(0), out.unsqueeze(0)
    plan = _plan(a3, b, c3, config)
    if _env.LOG_ENABLED:
        stream = isinstance(plan.launch, _DispatchedLaunch)
        _env.log(f"grouped_mm T={a.shape[0]} K={a.shape[1]} N={b.shape[2]} groups={b.shape[0]}: hopper, "
                 f"config={plan.config.name}" + (" (forced)" if config else " (mean rows per group)")
                 + (f"; {plan.launch.launches[0].cfg.name} instead if no group has a second row tile (decided on "
                    "the device)" if stream else ""))
    a_in = tma.padded_copy(a3, plan.a_copy) if plan.a_copy else a3
    b_in = tma.padded_copy(b, plan.b_copy) if plan.b_copy else b
    c = c3
    if plan.c_staged:
        c = tma.output_buffer(tuple(c3.shape), c3.dtype, c3.device)
        if keep_rows:
            # Where the rows past offs[-1] start is known only on the device: the staging buffer starts as a copy
            # of out, so the copy back writes what was there.
            c.copy_(c3)
    tokens_launch(plan, a_in, b_in, c, offs, a.shape[0])
    if plan.c_staged:
        c3.copy_(c)


def kernel_offs(offs: torch.Tensor) -> torch.Tensor:
    """offs as the kernels take it. They read it element by element from its base, and a launch is compiled for the
    pointer alignment of its first call: a strided or misaligned view (offs_all[::2], cumsum[1:]) is copied (on the
    device, no sync)."""
    if offs.stride(0) != 1 or offs.data_ptr() % 16:
        return offs.contiguous() if offs.stride(0) != 1 else offs.clone()
    return offs


def tokens_launch(plan: _GroupedPlan, a_in, b_in, c, offs: torch.Tensor, rows: int) -> None:
    """Launch a token-form plan on operands it reads in place (a_in, b_in: the base addresses it was planned for),
    after its row-tile table where the GEMM does not count its row tiles from offs itself."""
    offs = kernel_offs(offs)
    if plan.offs_table:
        table = offs
    else:
        from ..kernels.group_table import build_group_table

        # Row tiles hold block_m rows of A, or block_n under swap-AB (A's rows on the product's column side).
        table = build_group_table(offs, rows, plan.config.block_n if plan.config.swap_ab else plan.config.block_m)
    plan.launch.launch(a_in, b_in, c, None, table)


def _loop_tokens_by_group(a, b, offs, out) -> None:
    for g, (start, end) in enumerate(_sanitized_bounds(offs, a.shape[0])):
        if end > start:
            bmm_into(a[start:end].unsqueeze(0), b[g].unsqueeze(0), None, out[start:end].unsqueeze(0))


def grouped_config_problem(cfg: GemmConfig) -> str | None:
    """Why grouped_mm cannot run a forced config (any form), or None. Its kernels store row-bounded whole tiles from
    one accumulator (kernels/hopper/epilogue.py), of one program each."""
    if cfg.split_k > 1 or cfg.stream_k:
        return (f"grouped_mm runs whole tiles of each group; split_k must be 1 and stream_k False (got "
                f"split_k={cfg.split_k}, stream_k={cfg.stream_k})")
    if cfg.cluster_m > 1:
        return f"grouped_mm's tiles run alone; cluster_m must be 1 (got {cfg.cluster_m})"
    if is_two_part(cfg.block_n):
        return f"grouped_mm's tiles are at most 256 columns wide in powers of two; got block_n={cfg.block_n}"
    if not cfg.warp_specialize:
        return "grouped_mm runs the warp-specialized kernel only: warp_specialize must be True"
    if cfg.swap_ab and cfg.store_chunks > 1:
        return f"grouped_mm's swap-AB tiles are stored whole; store_chunks must be 1 (got {cfg.store_chunks})"
    return None


def grouped_mm(a: torch.Tensor, b: torch.Tensor, offs: torch.Tensor | None = None, *,
               out: torch.Tensor | None = None, out_dtype: torch.dtype | None = None,
               config: GemmConfig | None = None) -> torch.Tensor:
    """torch._grouped_mm(a, b, offs) on warpgemm's kernels; see the module docstring for forms and differences."""
    if out is None and config is None and offs is not None:
        recorded = grouped_recorded.forward(a, b, offs, out_dtype)  # a signature whose checks passed before
        if recorded is not None:
            return recorded
    if not checks.plain_context():  # one query for the common case (no transform, region or dual level)
        transforms.refuse("grouped_mm", a, b)
        if out is None:  # torch does not autocast out= variants
            a, b = autocast.cast(a, b)
    checks.check_tensor("a", a)
    checks.check_tensor("b", b)
    checks.check_gemm_dtypes(a, b)
    out_dtype_arg = out_dtype  # (the recipes' key: the argument as given)
    out_dtype = checks.resolve_out_dtype(a.dtype, out_dtype, out)
    device = checks.check_devices(a=a, b=b, out=out)
    if config is not None and not isinstance(config, GemmConfig):
        raise TypeError(f"config must be a warpgemm.GemmConfig or None, got {type(config).__name__}")
    if config is not None:
        checks.check_forced_config(config, a.dtype, out_dtype)
    problem = grouped_config_problem(config) if config is not None else None
    if problem is not None:
        raise ValueError(f"config {config.name}: {problem}")
    if a.dim() == 3 and b.dim() == 2:
        # Groups along N: out[:, cols of g] = a[g] @ b[:, cols of g], i.e. out^T = (b^T tokens) x (a^T experts),
        # the 2-D x 3-D form on transposed views (the columns of b are its tokens). Same checks, same kernels
        # (b^T, not row-major, is copied first); the result is that product's transpose, a (M, N) view with
        # strides (1, M).
        G, M, K = a.shape
        if b.shape[0] != K:
            raise ValueError(f"b must have shape ({K}, N) to match a's K = {K}, got {tuple(b.shape)}")
        _check_offs(offs, G, b.shape[1], "3-D x 2-D (groups along N)", device)
        if out is not None and tuple(out.shape) != (M, b.shape[1]):
            raise ValueError(f"out must have shape {(M, b.shape[1])}, got {tuple(out.shape)}")
        inner = grouped_mm(b.t(), a.transpose(1, 2), offs, out=None if out is None else out.t(),
                           out_dtype=out_dtype, config=config)
        return out if out is not None else inner.t()
    if a.dim() == 2 and b.dim() == 3:
        T, K = a.shape
        G, Kb, N = b.shape
        if Kb != K:
            raise ValueError(f"b must have shape (groups, {K}, N) to match a's K = {K}, got {tuple(b.shape)}")
        _check_offs(offs, G, T, "2-D x 3-D (tokens x experts)", device)
        shape = (T, N)
        if out is None and config is None:
            grouped_recorded.record_forward(a, b, offs, out_dtype_arg, out_dtype)
    elif a.dim() == 3 and b.dim() == 3:
        if offs is not None:
            raise ValueError("offs must be None for the 3-D x 3-D (batched) form")
        if a.shape[0] != b.shape[0] or a.shape[2] != b.shape[1]:
            raise ValueError(f"a (G, M, K) and b (G, K, N) must agree, got {tuple(a.shape)} and {tuple(b.shape)}")
        shape = (a.shape[0], a.shape[1], b.shape[2])
    elif a.dim() == 2 and b.dim() == 2:
        if a.shape[1] != b.shape[0]:
            raise ValueError(f"a (M, T) and b (T, N) must share T, got {tuple(a.shape)} and {tuple(b.shape)}")
        _check_offs(offs, None, a.shape[1], "2-D x 2-D (groups along K)", device)
        G = offs.shape[0]
        if config is not None:
            problem = forced_config_problem(config)
            if problem is not None:
                raise ValueError(f"config {config.name}: {problem}")
        shape = (G, a.shape[0], b.shape[1])
    else:
        raise ValueError(f"grouped_mm takes 2-D x 3-D, 3-D x 2-D or 2-D x 2-D (with offs), or 3-D x 3-D operands, "
                         f"got {a.dim()}-D and {b.dim()}-D")
    if out is None:
        # Meta tensors (shape inference, planning without a GPU) take the ops' fake implementations too.
        if (torch.compiler.is_compiling() or device.type == "meta" or checks.under_dispatch_mode()
                or (torch.is_grad_enabled() and (a.requires_grad or b.requires_grad))):
            # Through registered ops (fake implementations, autograd formulas): torch.compile(fullgraph=True) traces
            # them, and backward runs on these kernels. Plain eager calls skip the op dispatch (host time per
            # call), as matmul does; plain eager training calls run the ops' implementations and autograd formulas
            # without it (eager_autograd.py).
            cfg = None if config is None else config.to_list()
            if a.dim() == 3:
                return BMM(a, b, None, out_dtype, cfg)
            if b.dim() == 3:
                return TOKENS(a, b, offs, out_dtype, cfg)
            return RAGGED_K(a, b, offs, out_dtype, cfg)
        out = torch.empty(shape, dtype=out_dtype, device=device)
        _run(a, b, offs, out, config, keep_rows=False)
        return out
    if tuple(out.shape) != shape:
        raise ValueError(f"out must have shape {shape}, got {tuple(out.shape)}")
    if torch.is_grad_enabled() and (a.requires_grad or b.requires_grad):
        raise RuntimeError("grouped_mm(): functions with out=... arguments don't support automatic differentiation, "
                           f"but {'a' if a.requires_grad else 'b'} requires grad")
    checks.check_out_writable(out)
    if torch.compiler.is_compiling():
        raise RuntimeError("grouped_mm(out=...) cannot be traced by torch.compile; call it without out= there")
    checks.check_out_not_aliasing(out, a=a, b=b)
    if device.type != "meta":  # nothing to compute on meta tensors: the shape was checked
        _run(a, b, offs, out, config, keep_rows=True)
        checks.mark_written(out)
    return out


def _run(a, b, offs, out, config, keep_rows: bool) -> None:
    """Every form into a checked `out`. keep_rows: out is the caller's, so the token form's rows past offs[-1] keep
    their contents."""
    if out.numel() == 0:
        return
    if a.dim() == 3:
        bmm_into(a, b, None, out, config)
        return
    if a.dim() == 2 and b.dim() == 2:
        _ragged_k(a, b, offs, out, config)
        return
    if b.shape[0] == 0:
        return  # no groups: every row is past the last group's end (unwritten, as documented above)
    if a.shape[1] == 0:
        # K = 0: every group's rows are an empty sum. A caller's rows past the last end keep their contents, decided
        # on the device (offs is never read on the host). The last end, as the other paths read offs: each end
        # raised to the one before it, so the largest.
        if keep_rows:
            out.masked_fill_(torch.arange(out.shape[0], device=out.device).unsqueeze(1) < offs.max(), 0)
        else:
            out.zero_()
        return
    if select_path(a.device).path == "hopper":
        # The kernel writes row-major rows. Only a caller's out can be otherwise; a copy of it keeps its rows past
        # offs[-1].
        target = out if out.stride(1) == 1 else out.contiguous()
        _hopper_tokens_by_group(a, b, offs, target, config, keep_rows=keep_rows)
        if target is not out:
            out.copy_(target)
    else:
        _loop_tokens_by_group(a, b, offs, out)


def _ragged_k(a, b, offs, out, config) -> None:
    if a.shape[1] == 0:
        out.zero_()  # no tokens: every group sums nothing
        return
    if select_path(a.device).path == "hopper":
        hopper_ragged_k(a, b, offs, out, config)
        return
    for g, (start, end) in enumerate(_sanitized_bounds(offs, a.shape[1])):
        if end > start:
            bmm_into(a[:, start:end].unsqueeze(0), b[start:end].unsqueeze(0), None, out[g].unsqueeze(0))
        else:
            out[g].zero_()


# ---- registered ops and their autograd ----------------------------------------------------------------------
# The token form: dA = dY @ B[g]^T per group (the token form with transposed experts; rows past the last group's
# end get zeros), dB[g] = A_g^T @ dY_g (the ragged-K form). The ragged-K form: dA[:, tokens of g] = dC[g] @
# B[tokens of g]^T and dB[tokens of g] = A[:, tokens of g]^T @ dC[g], both token forms (tokens past the last
# group's end get zeros). Each backward runs on these kernels, and traces under torch.compile.

def _config(values: Optional[List[int]]) -> GemmConfig | None:
    return None if values is None else GemmConfig.from_list(values)


def _tokens(a, b, offs, out_dtype, config) -> torch.Tensor:
    out = torch.empty((a.shape[0], b.shape[2]), dtype=out_dtype, device=a.device)
    _run(a, b, offs, out, _config(config), keep_rows=False)
    return out


def _ragged_k_groups(a, b, offs, out_dtype, config) -> torch.Tensor:
    out = torch.empty((offs.shape[0], a.shape[0], b.shape[1]), dtype=out_dtype, device=a.device)
    _run(a, b, offs, out, _config(config), keep_rows=False)
    return out


@torch.library.custom_op("warpgemm::grouped_mm_tokens", mutates_args=())
def grouped_mm_tokens(a: torch.Tensor, b: torch.Tensor, offs: torch.Tensor, out_dtype: torch.dtype,
                      config: Optional[List[int]]) -> torch.Tensor:
    transforms.refuse_tangents("grouped_mm_tokens", a, b)
    return _tokens(a, b, offs, out_dtype, config)


@grouped_mm_tokens.register_fake
def _grouped_mm_tokens_fake(a, b, offs, out_dtype, config):
    return a.new_empty((a.shape[0], b.shape[2]), dtype=out_dtype)


@torch.library.custom_op("warpgemm::grouped_mm_ragged_k", mutates_args=())
def grouped_mm_ragged_k(a: torch.Tensor, b: torch.Tensor, offs: torch.Tensor, out_dtype: torch.dtype,
                        config: Optional[List[int]]) -> torch.Tensor:
    transforms.refuse_tangents("grouped_mm_ragged_k", a, b)
    return _ragged_k_groups(a, b, offs, out_dtype, config)


@grouped_mm_ragged_k.register_fake
def _grouped_mm_ragged_k_fake(a, b, offs, out_dtype, config):
    return a.new_empty((offs.shape[0], a.shape[0], b.shape[1]), dtype=out_dtype)


def _setup(ctx, inputs, output):
    a, b, offs, _, _ = inputs
    # dA needs only b and dB only a (frozen experts keep no activation alive); a and b share one dtype.
    ctx.save_for_backward(a if ctx.needs_input_grad[1] else None, b if ctx.needs_input_grad[0] else None, offs)
    ctx.dtype = a.dtype
    # The token form's experts (G, K, N) stored as (G, N, K) (nn.Linear-style weights, transposed): their gradient
    # is made the same way, as torch's is. A gradient of other strides than its leaf is copied by AccumulateGrad
    # into the leaf's layout: 0.97 ms a step for 64 experts of 2048 x 1024 (results/2026-11-28-s48/).
    ctx.b_columns = b.dim() == 3 and column_major(b)


def _zero_past_end(x: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:
    """x (T, ...) with the rows at or past the last group's end zeroed, on the device (no sync)."""
    if offs.shape[0] == 0:
        return torch.zeros_like(x)
    if (x.is_cuda and x.dim() == 2 and x.numel() and not (x.requires_grad and torch.is_grad_enabled())
            and checks.plain_context() and plain_tensor(x) and plain_tensor(offs)):
        # In place on the fresh product, writing only those rows (kernels/zero_rows.py). Not where autograd records
        # the product (create_graph), nor under tracing, modes or transforms, nor for a subclass (no storage of its
        # own to write): there, the torch ops below.
        zero_rows_past_end(x, offs)
        return x
    end = offs.max().clamp(0, x.shape[0])
    past = torch.arange(x.shape[0], device=x.device) >= end
    return x.masked_fill(past.view(-1, *([1] * (x.dim() - 1))), 0)


def _unscaled(x: torch.Tensor, scale, dtype) -> torch.Tensor:
    """A backward product computed on a scaled gradient (library.gradient_operand), in `dtype`."""
    return x if scale is None else (x * scale).to(dtype)


def _tokens_backward(ctx, grad):
    a, b, offs = ctx.saved_tensors
    recorded = grouped_recorded.backward(ctx, grad, a, b, offs)
    if recorded is not None:
        return recorded
    g, scale = gradient_operand(grad, ctx.dtype)
    wide = torch.float32 if scale is not None else None  # products of a scaled gradient stay fp32 until unscaled
    da = db = None
    if ctx.needs_input_grad[0]:
        da = TOKENS(g, b.transpose(1, 2), offs, wide or ctx.dtype, None)
        da = _zero_past_end(_unscaled(da, scale, ctx.dtype), offs)
    if ctx.needs_input_grad[1]:
        # The ragged-K form's groups are the forward's (each end raised to the one before it), also for bad offs.
        if ctx.b_columns:
            db = RAGGED_K(g.t(), a, offs, wide or ctx.dtype, None).transpose(1, 2)  # dB[g]^T = dY_g^T A_g
        else:
            db = RAGGED_K(a.t(), g, offs, wide or ctx.dtype, None)
        db = _unscaled(db, scale, ctx.dtype)
    return da, db, None, None, None


def _ragged_k_backward(ctx, grad):
    a, b, offs = ctx.saved_tensors
    g, scale = gradient_operand(grad, ctx.dtype)
    wide = torch.float32 if scale is not None else None
    da = db = None
    if ctx.needs_input_grad[0]:
        da = TOKENS(b, g.transpose(1, 2), offs, wide or ctx.dtype, None)
        da = _zero_past_end(_unscaled(da, scale, ctx.dtype), offs).t()
    if ctx.needs_input_grad[1]:
        db = TOKENS(a.t(), g, offs, wide or ctx.dtype, None)
        db = _zero_past_end(_unscaled(db, scale, ctx.dtype), offs)
    return da, db, None, None, None


grouped_mm_tokens.register_autograd(_tokens_backward, setup_context=_setup)
grouped_mm_ragged_k.register_autograd(_ragged_k_backward, setup_context=_setup)
# What grouped_mm and the backward call: the registered ops, or in plain eager calls their implementations.
TOKENS = EagerOp(torch.ops.warpgemm.grouped_mm_tokens, _tokens, _setup, _tokens_backward)
RAGGED_K = EagerOp(torch.ops.warpgemm.grouped_mm_ragged_k, _ragged_k_groups, _setup, _ragged_k_backward)

from . import grouped_recorded  # noqa: E402 (it reads this module's plans and launches at call time)
