"""The batched GEMM every public op ends in: c3 = a3 @ b3 (+ bias), picking the path and the config.

a3 is (Ba, M, K), b3 (Bb, K, N), c3 (Bt, M, N) with Ba, Bb in {1, Bt}; any strides. Inputs are checked by the
public layer; this layer only plans and launches.
"""
from __future__ import annotations

import math
from typing import NamedTuple

import torch

from .. import _env
from ..config import GemmConfig, check_config, weight_layout_problem
from .. import heuristics, off_sector, one_partition_rule, swap_rows, tuning
from ..static_weights import is_static
from ..kernels.hopper import tma_operands as tma
from . import checks


class PathChoice(NamedTuple):
    path: str  # "hopper" | "portable"
    reason: str


def select_path(device: torch.device) -> PathChoice:
    if device.type == "meta":
        # Planning without a GPU (explain, shape inference): as on the GPU the library is built for.
        return PathChoice("hopper", "meta tensors: planned as on an sm_90 GPU")
    if device.type == "cpu":
        if _env.BACKEND == "hopper":  # as on a GPU without wgmma: the forced backend cannot run here
            raise RuntimeError("WARPGEMM_BACKEND=hopper needs an sm_90 GPU, got a CPU tensor")
        return PathChoice("portable", "CPU tensor under the Triton interpreter")
    if _env.BACKEND == "portable":
        return PathChoice("portable", "WARPGEMM_BACKEND=portable")
    cap = _env.capability(device.index)
    if cap == (9, 0):
        return PathChoice("hopper", "sm_90: persistent wgmma kernel (warp-specialized, or one partition: _flat)")
    if _env.BACKEND == "hopper":
        raise RuntimeError(f"WARPGEMM_BACKEND=hopper needs an sm_90 GPU, got sm_{cap[0]}{cap[1]} on {device}")
    return PathChoice("portable", f"sm_{cap[0]}{cap[1]} has no wgmma")


def resolve_config(config: GemmConfig | None, a3: torch.Tensor, c3: torch.Tensor,
                   b3: torch.Tensor | None = None) -> tuple[GemmConfig, str]:
    """The forced config, or the heuristics' choice; b3 (the operand the kernel reads as B) tells its layout, and
    tiles measured only on a B read along K (heuristics.WIDE_160) are left out for any other. The one place that
    names the heuristics' choice: plan_hopper and the tuner's guard (tuning.py) must agree on it."""
    if config is not None:
        checks.check_forced_config(config, a3.dtype, c3.dtype)
        return config, "forced by the caller"
    cfg, why = _heuristics_tile(a3, c3, b3)
    batches, M, N = c3.shape
    return one_partition_rule.applied(cfg, why, batches, M, N, a3.shape[2], _env.sms_for(c3.device), a3.dtype,
                                      c3.dtype)


def _heuristics_tile(a3: torch.Tensor, c3: torch.Tensor, b3: torch.Tensor | None) -> tuple[GemmConfig, str]:
    batches, M, N = c3.shape
    sms = _env.sms_for(c3.device)
    # Operands read in place with rows that start 16 bytes into a 32-byte sector (off_sector.py; in choose_config
    # heuristics.OFF_SECTOR_NO_MEDIUM and FEW_ROWS_WIDE's exclusion).
    b_geom = tma.describe_any(b3, 1) if b3 is not None else None
    b_off = b_geom is not None and tma.off_sector(b_geom, b3.element_size())
    a_geom = tma.describe_any(a3, 2)
    off = b_off or (a_geom is not None and tma.off_sector(a_geom, a3.element_size()))
    k_major = b3 is None or b_read_along_k(b3)
    cfg, why = heuristics.choose_config(batches, M, N, a3.shape[2], a3.dtype, c3.dtype, sms, b_kmajor=k_major,
                                        rows_off_sector=off)
    if not k_major:  # say where the layout changed the choice (plans are cached: this runs once per plan)
        as_k_major = heuristics.choose_config(batches, M, N, a3.shape[2], a3.dtype, c3.dtype, sms, rows_off_sector=off)
        if as_k_major[0] != cfg:
            why += f"; B is N-major: {cfg.name}, not the {as_k_major[0].name} a K-major B would take"
    b_kmajor = b_geom is not None and b_geom.contiguous_dim == 1
    pair = None
    if b_off and (b_kmajor or off_sector.N_MAJOR_PAIRS_OVER_ONE_PARTITION or one_partition_rule.one_partition_config(
            cfg, batches, M, N, a3.shape[2], sms, a3.dtype, c3.dtype) is None):
        # A cluster pair can take it (not, on a weight read along N, a plan the one-partition rule runs: measured).
        pair = off_sector.off_sector_config(cfg, batches, M, N, sms, a3.dtype, c3.dtype, b_kmajor=b_kmajor)
    if (pair is not None and b_kmajor and pair[0] == off_sector.CLUSTER_LARGE_FEW_ROWS
            and off_sector.PAIRS_OVER_SWAP_ROWS_MIN_M is not None and M >= off_sector.PAIRS_OVER_SWAP_ROWS_MIN_M):
        # At 3-4 tile-rows the 128x256 pair's reads of such rows beat swap_rows' tiles (its comment in off_sector.py).
        return pair[0], f"{why}; {pair[1]}"
    if b_geom is not None:  # B read in place (a copied B keeps the heuristics' plan)
        fit = swap_rows.swap_rows_config(cfg, batches, M, N, sms, a3.dtype, c3.dtype, weight_k_major=b_kmajor,
                                         rows_off_sector=off,
                                         x_k_major=a_geom is not None and a_geom.contiguous_dim == 2)
        if fit is not None:
            return fit[0], f"{why}; {fit[1]}"
    if pair is not None:
        cfg, why = pair[0], f"{why}; {pair[1]}"
    return cfg, why


def b_read_along_k(b3: torch.Tensor) -> bool:
    """Whether the kernel reads the (batch, K, N) operand B along K: in place, or through the copy plan_hopper makes."""
    g = tma.describe_any(b3, 1)
    return g.contiguous_dim == 1 if g is not None else _orient_b_copy(b3) == 1


def k_major_weight_copy(b3: torch.Tensor):
    """The geometry and copy mode of a K-contiguous padded copy of the (batch, K, N) weight: how a forced config
    that reads only K-major weights (config.weight_layout_problem) still runs an N-major one, correctly."""
    return tma.padded_geometry(b3.shape, b3.element_size(), 1), 1


def _orient_b_copy(b3: torch.Tensor) -> int:
    # Keep the contiguity the caller had: a transposed weight stays K-major.
    return 1 if b3.stride(1) == 1 else 2


def _empty_or_k0(a3, c3, bias) -> bool:
    """Handle problems with nothing to multiply. Returns True when c3 is final."""
    if c3.numel() == 0:
        return True
    if a3.shape[2] == 0:
        if bias is None:
            c3.zero_()
        else:
            c3.copy_(bias.to(c3.dtype).expand(c3.shape))
        return True
    return False


def bmm_into(a3: torch.Tensor, b3: torch.Tensor, bias: torch.Tensor | None, c3: torch.Tensor,
             config: GemmConfig | None = None):
    """Write a3 @ b3 (+ bias) into c3, whatever c3's strides. Returns the HopperPlan it ran, if any."""
    nb = c3.shape[0]
    if (a3.shape[0] not in (1, nb) or b3.shape[0] not in (1, nb) or a3.shape[1] != c3.shape[1]
            or b3.shape[2] != c3.shape[2] or a3.shape[2] != b3.shape[1]):
        # The ops reach here with checked shapes; a direct torch.ops call may not. Never launch on a mismatch.
        raise ValueError(f"bmm shapes do not agree: a {tuple(a3.shape)}, b {tuple(b3.shape)}, out {tuple(c3.shape)}")
    if _empty_or_k0(a3, c3, bias):
        return None
    choice = select_path(c3.device)
    if bias is not None and bias.stride(0) != 1:
        bias = bias.contiguous()
    if choice.path == "portable":
        from ..kernels.portable.gemm import portable_gemm

        if _env.LOG_ENABLED:
            _env.log(f"gemm {tuple(c3.shape)} x K={a3.shape[2]}: portable path ({choice.reason})"
                     + ("; forced config ignored" if config is not None else ""))
        portable_gemm(a3, b3, c3, bias)
        return None
    return _hopper_bmm(a3, b3, bias, c3, config, choice)


class HopperPlan(NamedTuple):
    config: GemmConfig
    config_reason: str
    a: tma.TmaGeometry  # geometry of A as read: in place, or of its padded copy when a_copy
    b: tma.TmaGeometry
    c: tma.TmaGeometry  # geometry of C as written: in place, or of a padded staging buffer when c_staged
    a_copy: int  # 0: read in place; else the contiguous dim of the padded copy
    b_copy: int
    c_staged: bool
    launch: object  # kernels.hopper.gemm.GemmLaunch (or ColumnSplitLaunch), built on first use


class GemvPlan(NamedTuple):
    """A batch-1 product of one or two rows run by a CUDA-core GEMV (heuristics.gemv_reason): operands read in
    place."""

    config_reason: str
    launch: object  # kernels.gemv.GemvLaunch
    a_copy: int = 0
    b_copy: int = 0
    c_staged: bool = False


def forget_plans() -> None:
    """Drop every cached plan (and, through _FORGET_HOOKS, the eager recipes built on them): the next calls plan
    again. The tuner calls it when its cache or mode changes."""
    _PLANS.clear()
    for hook in _FORGET_HOOKS:
        hook()


_FORGET_HOOKS: list = []  # ops.api adds its recipe cache's clear, ops.scaled its plans'

# Plans are pure functions of the call signature (shapes, strides, dtypes, alignment, bias, forced config), so a
# repeated call skips all planning. Bounded: a workload with endless distinct shapes just re-plans.
_PLANS: dict[tuple, HopperPlan] = {}
_PLAN_CACHE_LIMIT = 4096


def _plan_key(a3, b3, c3, bias, config, static_b) -> tuple:
    return (a3.shape, a3.stride(), b3.shape, b3.stride(), c3.shape, c3.stride(), a3.dtype, c3.dtype,
            a3.data_ptr() % 16 == 0, b3.data_ptr() % 16 == 0, c3.data_ptr() % 16 == 0, c3.device.index,
            None if bias is None else (bias.dtype, bias.data_ptr() % 16 == 0), config, static_b)


def plan_hopper(a3, b3, c3, bias, config, *, may_tune: bool = True, static_b: bool = False):
    """Config and TMA geometry for a Hopper launch (a HopperPlan), or a GEMV's plan; copies are decided here, made per
    call by the caller. Without a forced config a winner in the tuning cache comes first (tuning.py; timed here on a
    miss in WARPGEMM_TUNE=1 mode when may_tune), then the heuristics. static_b: B is a static weight
    (static_weights.is_static), which a launch under its predecessor may start loading before the wait."""
    if config is None:
        gemv_why = heuristics.gemv_reason(c3.shape[0], c3.shape[1], b3.stride(1) == 1, a3.dtype)
        if gemv_why is not None:
            if static_b and _env.PDL:
                # A static weight skips the GEMVs where swap-AB tiles would load it ahead and fit one wave: there
                # they outran the GEMVs by 0.4-8% (4096^2: 2.60 -> 2.81 TB/s), while on the weights of 3.4 waves of
                # tiles the GEMVs' thousands of hardware-scheduled programs stayed 1-3% ahead (notes/perf.md, session
                # 30); a GEMV that loads ahead itself lost. Not where the tiles would copy an operand or stage the
                # output (the GEMV reads and writes them in place), nor run in one partition (no producer to issue
                # the loads).
                # Never tuned here (may_tune=False): a trial plan the GEMV may still win over, and tune() refuses
                # one- and two-row products.
                tiles = _tile_plan(a3, b3, c3, bias, None, False, static_b)
                if (any(k.constexprs.get("EARLY_WEIGHT") for k in _kernels(tiles.launch))
                        and not (tiles.a_copy or tiles.b_copy or tiles.c_staged)
                        and getattr(tiles.launch, "tiles", math.inf) <= _env.sms_for(c3.device)):
                    return tiles
            from ..kernels.gemv import GemvLaunch

            return GemvPlan(gemv_why, GemvLaunch(a3, b3, c3, bias is not None))
    return _tile_plan(a3, b3, c3, bias, config, may_tune, static_b)


def _tile_plan(a3, b3, c3, bias, config, may_tune: bool, static_b: bool) -> HopperPlan:
    from ..kernels.hopper.gemm import ColumnSplitLaunch, GemmLaunch

    tuned = None
    a_geom, a_copy = tma.describe_any(a3, 2), 0
    if a_geom is None:
        a_copy = 2
        a_geom = tma.padded_geometry(a3.shape, a3.element_size(), a_copy)
    b_geom, b_copy = tma.describe_any(b3, 1), 0
    if b_geom is None:
        b_copy = _orient_b_copy(b3)
        b_geom = tma.padded_geometry(b3.shape, b3.element_size(), b_copy)
    c_geom = tma.describe(c3, 2)
    c_staged = c_geom is None
    if c_staged:
        c_geom = tma.padded_geometry(c3.shape, c3.element_size(), 2)
    sms = _env.sms_for(c3.device)
    cfg, why = resolve_config(config, a3, c3, b3)
    if config is None:
        tuned, tuned_why = tuning.config_for(a3, b3, c3, bias, cfg, may_tune=may_tune)
        if tuned is not None:
            cfg, why = tuned, tuned_why
    if weight_layout_problem(cfg, b_geom.contiguous_dim == 1) is not None:
        # 32-row swap-AB tiles read the weight K-major (kernels/hopper/gemm_kernel.py); this one is N-major.
        if config is None:
            cfg = cfg.replace(block_m=max(cfg.block_m, 64), cluster_m=1)
            why += f"; the weight is not K-contiguous: {cfg.name} instead"
        else:
            b_geom, b_copy = k_major_weight_copy(b3)
            why += f"; the forced {cfg.name} reads the weight K-major: a K-major copy is made per call"
    batched = (a3.shape[0] > 1, b3.shape[0] > 1, bias is not None)
    n1 = 0
    if config is None and tuned is None:
        n1 = heuristics.tail_split_columns(*c3.shape, a3.shape[2], cfg, sms)
    if n1 and check_config(heuristics.TAIL, a3.dtype, c3.dtype) is None:
        launch = ColumnSplitLaunch(cfg, heuristics.TAIL, n1, a_geom, b_geom, c_geom, *batched, sms)
        why += f"; columns >= {n1} in a second launch with {heuristics.TAIL.name} tiles (shorter last wave)"
    else:
        # A copy of B is written by this call's own copy kernel just before: never static.
        launch = GemmLaunch(cfg, a_geom, b_geom, c_geom, *batched, sms, early_weight=static_b and not b_copy)
    return HopperPlan(cfg, why, a_geom, b_geom, c_geom, a_copy, b_copy, c_staged, launch)


def cached_plan(a3, b3, c3, bias, config):
    """The plan a Hopper launch of these operands runs (planned on the first call of its signature)."""
    static_b = is_static(b3)
    key = _plan_key(a3, b3, c3, bias, config, static_b)
    plan = _PLANS.get(key)
    if plan is None:
        if len(_PLANS) >= _PLAN_CACHE_LIMIT:
            _PLANS.clear()
        plan = _PLANS[key] = plan_hopper(a3, b3, c3, bias, config, static_b=static_b)
    return plan


def _hopper_bmm(a3, b3, bias, c3, config, choice) -> None:
    plan = cached_plan(a3, b3, c3, bias, config)
    if _env.LOG_ENABLED:
        _env.log(describe_plan(c3, a3, choice, plan))
    a = tma.padded_copy(a3, plan.a_copy) if plan.a_copy else a3
    b = tma.padded_copy(b3, plan.b_copy) if plan.b_copy else b3
    c = tma.output_buffer(tuple(c3.shape), c3.dtype, c3.device) if plan.c_staged else c3
    idx = c3.device.index
    if torch.cuda.current_device() != idx:
        with torch.cuda.device(idx):
            plan.launch.launch(a, b, c, bias)
    else:
        plan.launch.launch(a, b, c, bias)
    if plan.c_staged:
        c3.copy_(c)
    return plan


def describe_plan(c3, a3, choice: PathChoice, plan) -> str:
    head = f"gemm batches={c3.shape[0]} M={c3.shape[1]} N={c3.shape[2]} K={a3.shape[2]} {a3.dtype}->{c3.dtype}"
    if isinstance(plan, GemvPlan):
        hint = "; W's loads evict-first in L2" if plan.launch.kernel.constexprs.get("W_EVICT") else ""
        return f"{head}; path=gemv ({plan.config_reason}); operands read and C written in place{hint}"
    def orient(copied, geom, name, kmajor_dim):
        if copied:
            return f"{name} copied into a padded buffer (strides not TMA-legal)"
        return f"{name} {'K-major' if geom.contiguous_dim == kmajor_dim else 'MN-major'}, read in place"

    parts = [
        head,
        f"path=hopper ({choice.reason})",
        f"config={plan.config.name} ({plan.config_reason})",
        orient(plan.a_copy, plan.a, "A", 2),
        orient(plan.b_copy, plan.b, "B", 1),
        "C staged through a padded buffer" if plan.c_staged else "C written in place",
        _launch_order(plan.launch),
    ]
    if any(k.constexprs.get("WEIGHT_HINT") for k in _kernels(plan.launch)):
        parts.append("B's loads evict-first in L2 (few rows stream it once)")
    if any(k.constexprs.get("A_PIECES", 1) > 1 for k in _kernels(plan.launch)):
        parts.append("A in row pieces (its last tile-row runs past A's end: gemm.edge_pieces)")
    shift = 0
    for k in _kernels(plan.launch):  # a column split's main and tail may shift different edges
        shift |= k.constexprs.get("EDGE_SHIFT", 0)
    if shift:
        edges = {1: "tile-column", 2: "tile-row", 3: "tile-column and tile-row"}[shift]
        parts.append(f"the last {edges} moved back to end at the output's edge (gemm.edge_shift)")
    if any(k.constexprs.get("A_PHANTOM") for k in _kernels(plan.launch)):
        parts.append("a cluster pair's last lower tile lies past A's end and loads no A (gemm.phantom_a)")
    if any(k.constexprs.get("EARLY_WEIGHT") for k in _kernels(plan.launch)):
        parts.append("B is a static weight: its first ring-full loads before the wait on the kernel before")
    return "; ".join(parts)


def _kernels(launch) -> list:
    return [launch.main.kernel, launch.tail.kernel] if hasattr(launch, "tail") else [launch.kernel]


def _launch_order(launch) -> str:
    """Whether the launch(es) start under the kernel before them (programmatic dependent launch) or after it."""
    modes = ["starts under the kernel before it (PDL)" if k.pdl else "starts after the kernel before it"
             for k in _kernels(launch)]
    return f"launch {modes[0]}" if len(modes) == 1 else f"main launch {modes[0]}, tail launch {modes[1]}"


def explain_bmm(a3: torch.Tensor, b3: torch.Tensor, c3: torch.Tensor, config: GemmConfig | None = None) -> str:
    """The plan `bmm_into` would follow, as text, without launching anything. c3 may be a meta tensor."""
    if c3.numel() == 0:
        return f"empty output {tuple(c3.shape)}: nothing to launch"
    if a3.shape[2] == 0:
        return "K=0: output filled with zeros (plus bias)"
    choice = select_path(a3.device)
    if choice.path == "portable":
        return (f"gemm {tuple(c3.shape)} x K={a3.shape[2]}: portable path ({choice.reason})"
                + ("; the forced config is ignored there (it configures the sm_90 kernels)" if config is not None
                   else ""))
    return describe_plan(c3, a3, choice, plan_hopper(a3, b3, c3, None, config, may_tune=False,
                                                     static_b=is_static(b3)))
