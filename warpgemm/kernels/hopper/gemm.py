"""Host side of the Hopper GEMM: one GemmLaunch per call signature (config, operand orientation, TMA geometry,
grid, constexprs), launched through a CachedKernel so repeated calls skip Triton's binder."""
from __future__ import annotations

import functools

import torch
import triton

from ... import _env
from ...config import (TWO_PART_WIDTHS, GemmConfig, is_two_part, launch_warps, weight_layout_problem, wide_tile_problem,
                       worker_consumer_regs)
from ...heuristics import persistent_grid
from .epilogue import RowBoundStoreEpilogue, RowBoundTransposedEpilogue, TmaStoreEpilogue, TransposedStoreEpilogue
from .gemm_kernel import gemm_kernel
from .partial_sums import PartialSumEpilogue
from .ptx_hints import LOAD_PASS_VERSION, PASS_VERSION, store_hints
from .expert_scheduler import EXPERT_SCHEDULERS, OFFS_GROUPS_MAX, RUN_ALWAYS, OffsExpertScheduler
from .ragged_k import RaggedKScheduler
from .scheduler import GroupedTileScheduler, PairedTileScheduler, StreamKScheduler
from .launch import CachedKernel, LightDesc, full_desc, launch_hooks_active, nvmma_layout, parts_source_hash
from .scratch import split_k_scratch, unused_pointers
from .. import stream_k_plan
from .tma_operands import TmaGeometry


def operand_blocks(cfg: GemmConfig, a_kmajor: bool, b_kmajor: bool, a_pieces: int = 1):
    """TMA boxes of the kernel's A and B operands (the caller's B and A when swapped) and of C. a_pieces: A's tile
    in that many boxes of rows (edge_pieces; K-major A only)."""
    bm, bn, bk = cfg.block_m, cfg.block_n, cfg.block_k
    if a_pieces > 1 and not a_kmajor:
        raise ValueError(f"A tiles in pieces need a K-major A; got a_pieces={a_pieces} with A read along M")
    a_block = (1, bm // a_pieces, bk) if a_kmajor else (1, bk, bm)
    # A B tile may come in pieces along N (GemmConfig.b_pieces_for): a cluster pair's halves (each CTA loads one), a
    # two-part tile's rest-wide boxes, a two-part pair's halves of those (K-major B) or the boxes themselves.
    pieces = cfg.b_pieces_for(b_kmajor)
    b_block = (1, bn // pieces, bk) if b_kmajor else (1, bk, bn // pieces)
    # Under swap-AB C's box is the transposed tile (x's rows by the weight's), whole or in row chunks.
    c_block = (1, bn // cfg.store_chunks, bm) if cfg.swap_ab else (1, bm, bn // cfg.store_chunks)
    return a_block, b_block, c_block


def swapped(g: TmaGeometry) -> TmaGeometry:
    """The same memory read as the transposed operand: (batch, d1, d2) -> (batch, d2, d1)."""
    return TmaGeometry(g.shape, g.strides, 3 - g.contiguous_dim)


def d2_slice(g: TmaGeometry, lo: int, hi: int) -> tuple[TmaGeometry, int]:
    """Columns [lo, hi) of the logical (batch, d1, d2) tensor `g` describes: their geometry, and the offset of
    their first element from the tensor's base, in elements."""
    nb, outer, inner = g.shape
    if g.contiguous_dim == 2:  # d2 is the descriptor's inner dimension
        return TmaGeometry((nb, outer, hi - lo), g.strides, 2), lo
    return TmaGeometry((nb, hi - lo, inner), g.strides, 1), lo * g.strides[1]


def _at(t: torch.Tensor, elems: int) -> torch.Tensor:
    # A launch reads only base addresses (and dtypes) off its tensors: a one-element view at the offset will do.
    return t.as_strided((1, ), (1, ), t.storage_offset() + elems)


def store_hint(ragged_k: bool) -> int:
    """ptx_hints.PASS_VERSION where the kernel's TMA stores are marked evict-first in L2, else 0: the ragged-K form,
    whose (G, M, N) output is many times its inputs (E128 K7168 N2048 weight gradients 5-8% faster, E8 and dense shapes
    within noise: results/2026-11-25-wgrad/l2_hint_*.json)."""
    return PASS_VERSION if ragged_k else 0


def k_serpentine(cfg: GemmConfig, grouped: bool, ragged_k: bool) -> bool:
    """Whether a program reverses the K order of its odd units (partitions.tma_producer): whole plain tiles of a
    dense product. Wave w + 1 then starts on the K end that wave w read last, and the A panels it shares with wave w
    (same band of tile-rows) are partly still in L2: ncu counts 9% fewer DRAM bytes on 8192^3 (1.23 -> 1.11 GB),
    worth +0-1% at the power cap (notes/perf.md, session 26). Not for split-K or stream-K parts, swap-AB tiles
    (weight streams: no operand shared across waves), cluster pairs (both CTAs must load the same K step),
    grouped or ragged-K products, nor the one-partition kernel (it has no producer, and runs programs of one tile)."""
    return (_env.K_ORDER == "serpentine" and not (grouped or ragged_k or cfg.swap_ab or cfg.stream_k)
            and cfg.split_k == 1 and cfg.cluster_m == 1 and cfg.warp_specialize)


# Rows of x (per weight: all batches' rows where one weight serves every batch) up to which the weight's loads are
# marked evict-first (weight_evict_first), and the longest K at which they are where several tiles read each weight
# panel. Measured on `mid` (M = 128-512), notes/perf.md sessions 27 and 33: up to 512 rows (four 128-row tile-rows
# reading each panel in step) the hint gained 1-16% after an L2 flush and lost nothing over cold weights; at 1024
# and 2048 rows it moved -1.3 to +1.7%.
WEIGHT_HINT_MAX_ROWS = 512
WEIGHT_HINT_MAX_SHARED_K = 16384


def weight_evict_first(cfg: GemmConfig, batches: int, rows: int, k: int, grouped: bool = False,
                       ragged_k: bool = False) -> bool:
    """Whether the weight's TMA loads (B, or A under swap-AB) carry an L2 evict-first policy: dense products whose
    weight is read by at most WEIGHT_HINT_MAX_ROWS rows of x (`batches` batches of `rows` rows share it), which stream
    it from HBM. Its lines then replace each other instead of the rest of the L2 (the activations, and dirty lines
    whose write-back would share the HBM with the stream). Where more than one tile reads each weight panel (tile-rows
    of x in each batch, or x-columns of swap-AB tiles), they read it at nearly the same time, but over a long K they
    drift apart and the later one misses: so only up to WEIGHT_HINT_MAX_SHARED_K there (at K = 28672 two readers
    lost 1-4%). Not for grouped or ragged-K products (not measured), nor cluster pairs (the multicast pass owns
    their loads)."""
    readers = batches * -(-rows // (cfg.block_n if cfg.swap_ab else cfg.block_m))
    return (_env.WEIGHT_HINT and not (grouped or ragged_k) and cfg.cluster_m == 1
            and 0 < batches * rows <= WEIGHT_HINT_MAX_ROWS and (readers == 1 or k <= WEIGHT_HINT_MAX_SHARED_K))


# A tile-row that runs past A's last row loads its A tile in EDGE_PIECES boxes of rows where more than a piece's rows
# of it are past the end (partitions.load_a): TMA's zero fill of a box's rows past the end is slow. Forced 128x128
# tiles at K = 14336 (results/2026-11-27-s40/, scripts/partial_rows_probe.py): 389 rows 132 us against 82 over the
# same tiles on rows of zeros in memory; 320 and 448 rows (64 rows past the end) 92-95 against 80-83; 500 rows (12
# past the end) even; 64x64 tiles at 65-67 rows 82 against 52, at 96 rows 60 against 52. In pieces: 389 rows 83 us;
# 65-100 rows 52-53 in 16-row pieces (56-61 in 32-row ones, whose straddling piece still reads 29 rows past the end,
# or which 96 rows did not take), while 128-row tiles ran 2-3% faster in 32-row pieces than in 16-row ones: four
# pieces a tile. Plans of one consumer warpgroup only (128x128, 64x128, 64x64 tiles): against the plan without
# pieces, 389x4096x14336 0.66 -> 1.04x cuBLAS, 139x5120x13824 0.61 -> 0.96, 130x8192x8192 0.63 -> 0.98; tiles of
# two warpgroups, whose longer K steps hide the fill, gained nothing (128x256: 385x14336x4096 and 777x4096x11008 -1%,
# a 128x256 pair 332x13656x5736 -1%, a swap-AB 128x192 on a weight of 19368 rows 0%) or lost (128x160 at 952 rows
# -4%). Since session 42 such a last tile-row is shifted back inside A instead (edge_shift, below: faster still), so
# pieces remain for cluster pairs (which the shift leaves their rows) and launches with EDGE_SHIFT off.
EDGE_PIECES = 4


# The one-partition kernel (one_partition.py) issues the same loads (partitions.load_step) and runs right with pieces
# (tests/test_gpu_edge_pieces.py), but its products (K <= 2048, a ring-full of K steps) showed no fill cost to win
# back: forced 64x64 / 64x32 one-partition tiles at 65-100 rows ran as fast as over padded rows without pieces, and
# 0.2-0.9 us slower with them (results/2026-11-27-s40/c11_one_partition/). Off.
EDGE_PIECES_ONE_PARTITION = False
# A cluster pair over an odd number of tile-rows runs a last lower tile wholly past the end (scheduler.
# PairedTileScheduler), whose A box is all zero fill, and its peer waits on it for their shared B: CLUSTER_MEDIUM
# forced at 384 rows (three tile-rows) took 124 us against 93 at 512 rows (results/2026-11-27-s40/c12_phantom/). Such a
# tile loads no A (phantom_a, the A_PHANTOM constexpr: partitions.tma_producer): 384 rows then 88 us, as cuBLAS.
# Held out on 22 shapes whose plan is a pair over an odd tile-row count (off-sector rows, where pairs are planned),
# in alternating processes: 0.823 -> 0.864x cuBLAS, 370x2968x15864 +22%, 347x14680x6280 +18%, 557x6560x13032 +15%,
# the worst 4431x1072x14888 -3% (results/2026-11-27-s41/). Its A boxes clamped to A's last rows instead gained half
# as much (0.831); no A by a predicate on each K step's loads (not a branch per unit) cost the 128x160 pair 18%.
PHANTOM_A = True


def edge_pieces_fit(cfg: GemmConfig, a_kmajor: bool, grouped: bool = False, ragged_k: bool = False,
                    pieces: int = EDGE_PIECES) -> bool:
    """Whether a variant can load its A tile in `pieces` row pieces: K-major A (rows are the box's outer dimension),
    plain tiles of at least 64 rows (not swap-AB: never compiled so) cut into pieces of a whole number of 8-row
    swizzle atoms, dense products (a grouped GEMM's rows past a group's end are the next group's, in bounds)."""
    return (a_kmajor and cfg.block_m >= 64 and not (grouped or ragged_k or cfg.swap_ab)
            and cfg.block_m % pieces == 0 and (cfg.block_m // pieces) % 8 == 0)


def edge_pieces(cfg: GemmConfig, rows: int, a_kmajor: bool, grouped: bool = False, ragged_k: bool = False) -> int:
    """Boxes of rows A's tile is loaded in for a product whose A has `rows` rows (the kernel's A: the weight under
    swap-AB): EDGE_PIECES where the last tile-row has more than a piece's rows past the end and follows a full one,
    on the plain tiles of one consumer warpgroup without ping-pong (the class measured to gain: 65-1154 rows), else
    one box."""
    empty = -rows % cfg.block_m
    if (empty <= cfg.block_m // EDGE_PIECES or rows < cfg.block_m
            or cfg.consumer_warps != 4 or cfg.consumers != 1
            or cfg.swap_ab or not (cfg.warp_specialize or EDGE_PIECES_ONE_PARTITION)
            or not edge_pieces_fit(cfg, a_kmajor, grouped, ragged_k, EDGE_PIECES)):
        return 1
    return EDGE_PIECES


def phantom_a(cfg: GemmConfig, rows: int, grouped: bool = False, ragged_k: bool = False) -> bool:
    """Whether a cluster pair's tile wholly past A's last row (of `rows`) skips its A loads: a dense pair over an odd
    number of tile-rows, whose last lower tile is such a tile (with PHANTOM_A). (A grouped GEMM's rows past a group's
    end are the next group's, in bounds; clusters run dense products only.)"""
    return (PHANTOM_A and cfg.cluster_m == 2 and not (grouped or ragged_k or cfg.swap_ab)
            and -(-rows // cfg.block_m) % 2 == 1)


# A last tile-column (bit 1) or tile-row (bit 2) that would run past the product's edge is moved back to end at it
# (scheduler.shift_edges): it overlaps the tiles before it, whose outputs it writes again with the same bits, and its
# boxes reach at most 15 elements past the operands' ends (its start is rounded up to 16 elements for TMA:
# scheduler.edge_offset) instead of up to a tile's less one, which TMA zero-fills slowly (edge_pieces above; 12 rows
# past the end cost nothing there). Measured first with the start unrounded (results/2026-11-27-s42/ c1-c3): forced
# 128x128 tiles at 1024x3848x14336 198.9 -> 167.5 us, as fast as over a weight padded with zero rows (167.3); on tiles
# of one consumer warpgroup 0.884 -> 0.909x cuBLAS over 24 shapes in alternating processes (18 held out, 6 from the
# first probe; 579x1336x11008 +31%, 4179x2488x2048 +13%, 1818x3024x5632 +9%: rows shifted beat rows in pieces). The
# landed form against no shift on 12 fresh shapes (c6): 0.934 -> 0.946x. Not taken: 128x256 tiles, whose longer K
# steps hide the fill (columns -0.5%, rows -1.5%), and two-part widths (EDGE_SHIFT_TWO_PART; against this rule -0.7%
# over 4 shapes and +1.0% over 9). The serpentine K order is off in a shifted launch (kernel_constexprs): the two
# tiles that write an output must add the same K steps in the same order.
EDGE_SHIFT = 3
EDGE_SHIFT_TWO_PART = False


def edge_shift(cfg: GemmConfig, rows: int, cols: int, grouped: bool = False, ragged_k: bool = False) -> int:
    """shift_edges' bits for a product of `rows` x `cols` (the kernel's: swapped under swap-AB): a last tile-column
    (bit 1) or tile-row (bit 2, not for cluster pairs, whose rows gemm.phantom_a and edge_pieces handle) that runs
    past the product's edge and follows a full one. Warp-specialized tiles of one consumer warpgroup without ping-pong
    (the class measured to gain; two-part widths only with EDGE_SHIFT_TWO_PART): dense whole tiles, split-K parts and
    cluster pairs, not stream-K, grouped or ragged-K products (whose tiles have no fixed neighbour to overlap). A
    shifted tile-row loads A in one box: at most 15 of its rows are past the end, so edge_pieces has nothing to do."""
    if (grouped or ragged_k or cfg.stream_k or not cfg.warp_specialize or cfg.consumers != 1
            or not (is_two_part(cfg.block_n) and EDGE_SHIFT_TWO_PART
                    or cfg.consumer_warps == 4 and not is_two_part(cfg.block_n))):
        return 0
    bits = 0
    if EDGE_SHIFT % 2 == 1 and cols > cfg.block_n and cols % cfg.block_n:
        bits |= 1
    if EDGE_SHIFT // 2 == 1 and cfg.cluster_m == 1 and rows > cfg.block_m and rows % cfg.block_m:
        bits |= 2
    return bits


def early_weight_fits(cfg: GemmConfig, grouped: bool = False, ragged_k: bool = False) -> bool:
    """Whether a variant can load its weight before the wait on the prior grid (partitions.tma_producer): dense
    swap-AB products (A is the weight; a grouped GEMM reads its tile table first), warp-specialized (a producer to
    issue them), without clusters (the pair syncs first) or chunked stores (launched without PDL)."""
    return (cfg.swap_ab and cfg.warp_specialize and cfg.cluster_m == 1 and cfg.store_chunks == 1
            and not (grouped or ragged_k))


def kernel_constexprs(cfg: GemmConfig, a_kmajor: bool, b_kmajor: bool, a_batched: bool, b_batched: bool,
                      has_bias: bool, grouped: bool = False, when: int = RUN_ALWAYS,
                      offs_table: bool = False, ragged_k: bool = False, scale: int = 0,
                      weight_hint: bool = False, early_weight: bool = False, a_pieces: int = 1,
                      a_phantom: bool = False, edge_shift: int = 0) -> dict:
    """The constexpr arguments of `gemm_kernel` for one variant (shared with the offline compile checks).

    grouped: the MoE form, A's rows in groups by a device table, B batched by group, row-bounded stores.
    when: the grouped GEMM's run condition on the table (expert_scheduler.RUN_*). offs_table: the kernel reads offs
    itself instead of a table (expert_scheduler.OffsExpertScheduler: at most OFFS_GROUPS_MAX groups, RUN_ALWAYS).
    ragged_k: the weight-gradient form, groups along K read through (t, j, x) operand views (ragged_k.py).
    scale: fp8 dequantization in the epilogue (epilogue.OutputScales): 0 none, 1 per tensor, 2 per row and column;
    dense products only. weight_hint: the weight's loads evict-first in L2 (weight_evict_first decides).
    early_weight: the producer loads a ring-full of the weight before it waits on the prior grid (GemmLaunch
    decides: a static weight, PDL and early_weight_fits). a_pieces: A's tile in that many boxes of rows
    (edge_pieces decides). a_phantom: a tile wholly past A's end loads no A (phantom_a decides). edge_shift:
    scheduler.shift_edges' bits (edge_shift decides)."""
    if a_pieces > 1 and not edge_pieces_fit(cfg, a_kmajor, grouped, ragged_k, a_pieces):
        raise ValueError(f"A tiles in pieces are for dense plain products of a K-major A, tiles of at least 64 rows "
                         f"in pieces of 8k rows; got {cfg.name} in {a_pieces}, a_kmajor={a_kmajor}, "
                         f"grouped={grouped}, ragged_k={ragged_k}")
    if a_phantom and (grouped or ragged_k or cfg.swap_ab or cfg.cluster_m != 2):
        raise ValueError(f"a_phantom is for dense cluster pairs; got {cfg.name}, grouped={grouped}, "
                         f"ragged_k={ragged_k}")
    if edge_shift and (grouped or ragged_k or cfg.stream_k or (edge_shift > 1 and cfg.cluster_m > 1)
                       or not 0 <= edge_shift <= 3):
        raise ValueError(f"edge_shift is for dense whole tiles or split-K parts (columns only for cluster pairs); "
                         f"got {edge_shift} on {cfg.name}, grouped={grouped}, ragged_k={ragged_k}")
    if early_weight and not early_weight_fits(cfg, grouped, ragged_k):
        raise ValueError(f"early_weight is for dense swap-AB products in a warp-specialized kernel without clusters; "
                         f"got {cfg.name}, grouped={grouped}, ragged_k={ragged_k}")
    if weight_hint and (grouped or ragged_k or cfg.cluster_m > 1):
        raise ValueError(f"weight_hint is for dense products without clusters; got {cfg.name}, grouped={grouped}, "
                         f"ragged_k={ragged_k}")
    if scale and (grouped or ragged_k):
        raise ValueError(f"scaled (fp8) outputs are for dense products only; got grouped={grouped}, "
                         f"ragged_k={ragged_k}")
    wide = wide_tile_problem(cfg)
    if wide is not None:
        raise ValueError(wide)  # the kernel's two-accumulator path would hang or misstore
    if (cfg.cluster_m > 1 or is_two_part(cfg.block_n)) and (grouped or ragged_k):
        raise ValueError(f"config {cfg.name}: clusters (cluster_m > 1) and two-part widths (block_n in "
                         f"{TWO_PART_WIDTHS}) run dense products only; got "
                         f"grouped={grouped}, ragged_k={ragged_k}")
    if not cfg.warp_specialize and (grouped or ragged_k):
        raise ValueError(f"config {cfg.name}: the one-partition kernel (warp_specialize=False) runs dense products "
                         f"only; got grouped={grouped}, ragged_k={ragged_k}")
    if cfg.swap_ab and cfg.store_chunks > 1 and (grouped or ragged_k):
        raise ValueError(f"config {cfg.name}: swap-AB tiles stored in chunks run dense products only; got "
                         f"grouped={grouped}, ragged_k={ragged_k}")
    if ragged_k:
        if grouped or cfg.swap_ab or cfg.split_k > 1 or cfg.stream_k or a_kmajor or b_kmajor:
            raise ValueError("a ragged-K GEMM runs whole plain tiles on token-outer operands (A M-contiguous, "
                             f"B N-contiguous); got {cfg.name}, a_kmajor={a_kmajor}, b_kmajor={b_kmajor}, "
                             f"grouped={grouped}")
        scheduler, epilogue = RaggedKScheduler, TmaStoreEpilogue
    elif grouped:
        if offs_table and when != RUN_ALWAYS:
            raise ValueError("a grouped GEMM that counts its row tiles from offs runs always (when=RUN_ALWAYS)")
        scheduler = OffsExpertScheduler if offs_table else EXPERT_SCHEDULERS[when]
        epilogue = RowBoundTransposedEpilogue if cfg.swap_ab else RowBoundStoreEpilogue
    else:
        scheduler = (StreamKScheduler if cfg.stream_k else PairedTileScheduler if cfg.cluster_m > 1
                     else GroupedTileScheduler)
        if cfg.stream_k or cfg.split_k > 1:
            epilogue = PartialSumEpilogue
        else:
            # Swap-AB tiles stored in chunks go out through TMA too (TmaStoreEpilogue's TRANSPOSED form).
            epilogue = TransposedStoreEpilogue if cfg.swap_ab and cfg.store_chunks == 1 else TmaStoreEpilogue
    return dict(A_KMAJOR=a_kmajor, B_KMAJOR=b_kmajor, A_BATCHED=a_batched, B_BATCHED=b_batched, HAS_BIAS=has_bias,
                SCALE=scale, GROUP_M=cfg.group_m, STAGES=cfg.stages, SPLIT_K=cfg.split_k, CONSUMERS=cfg.consumers,
                SWAP_AB=cfg.swap_ab, RAGGED_K=ragged_k, L2_STORE_HINT=store_hint(ragged_k),
                PRODUCER_REGS=cfg.producer_regs, CONSUMER_REGS=worker_consumer_regs(cfg), CLUSTER_M=cfg.cluster_m,
                B_PIECES=cfg.b_pieces_for(b_kmajor), A_PIECES=a_pieces, A_PHANTOM=a_phantom, EDGE_SHIFT=edge_shift,
                WARP_SPECIALIZE=cfg.warp_specialize,
                # Shifted tiles overlap their neighbours, which must add the same K steps in the same order.
                K_SERPENTINE=k_serpentine(cfg, grouped, ragged_k) and not edge_shift,
                WEIGHT_HINT=LOAD_PASS_VERSION if weight_hint else 0, EARLY_WEIGHT=early_weight,
                SchedulerImpl=scheduler, EpilogueImpl=epilogue, PARTS_HASH=parts_source_hash())


def compile_context(cfg: GemmConfig, constexprs: dict):
    """The context a variant compiles in: ptx_hints.store_hints() (its PTX hook) for the variants a PTX pass
    rewrites (hinted stores or weight loads, cluster pairs, the one-partition kernel's issue barriers), else a
    no-op one."""
    return store_hints(bool(constexprs["L2_STORE_HINT"]) or bool(constexprs["WEIGHT_HINT"]) or cfg.cluster_m > 1
                       or not cfg.warp_specialize)


def launch_uses_pdl(cfg: GemmConfig) -> bool:
    """Programmatic dependent launch for swap-AB launches (dense or grouped) and a column split's tail
    (ColumnSplitLaunch), not for plain whole-tile launches, nor for wide swap-AB tiles stored through TMA
    (swap_rows.py: as big as plain ones, and measured without it).

    Measured back to back in CUDA graphs (results/2026-11-22-pdl/, notes/perf.md): with it, swap-AB decode gains
    up to 7% (4096^2 at M = 16: 2.33 -> 2.50 TB/s; 32 experts x 512 tokens 2.75 -> 2.79), but the plain kernel
    loses 2-16% over the whole call (128x8192x28672: 2.81 -> 2.43 TB/s, 256x8192x28672: 2.41 -> 2.12; grouped with
    8 experts 0.3-2.6%), also when it releases the next kernel only after its last load. A plain grouped GEMM then
    starts after its row-tile table kernel has finished instead of under it (~2 us). Without a predecessor that
    releases it early (do_bench's L2 flush) nothing changes."""
    return _env.PDL and (_env.PDL_EVERYWHERE or (cfg.swap_ab and cfg.store_chunks == 1))


class GemmLaunch:
    """One Hopper GEMM call signature: c = a @ b (+ bias) with fixed geometry, launched many times."""

    __slots__ = ("cfg", "a", "b", "c", "blocks", "grid", "kernel", "tiles", "partial_elems", "swap", "bound")

    def __init__(self, cfg: GemmConfig, a: TmaGeometry, b: TmaGeometry, c: TmaGeometry, a_batched: bool,
                 b_batched: bool, has_bias: bool, num_sms: int, groups: int = 0, when: int = RUN_ALWAYS,
                 pdl: bool | None = None, offs_table: bool = False, ragged_k: bool = False, scale: int = 0,
                 early_weight: bool = False):
        """a, b, c: the caller's operands (c = a @ b). groups > 0: the grouped (MoE) form over that many groups;
        tiles are counted on the device, so the grid is sized for the most there can be. when: the grouped form's
        run condition on the device table (expert_scheduler.RUN_*). offs_table: the grouped kernel is handed offs
        as its table and counts the row tiles itself. ragged_k: the weight-gradient form (ragged_k.py): a and b
        are the (t, j, x) views of ragged_view, c is (G, M, N), and offs is the table. pdl: programmatic dependent
        launch (default: launch_uses_pdl). scale: fp8 dequantization (kernel_constexprs); launch() then takes the
        fp32 scale tensors. early_weight: the caller's weight (its B) is one no kernel still running when this one
        starts can write, so a PDL swap-AB launch may load part of it before the wait (early_weight_fits)."""
        if offs_table and not 0 < groups <= OFFS_GROUPS_MAX:
            # The kernel holds at most OFFS_GROUPS_MAX groups' offsets: later groups' rows would never be written.
            raise ValueError(f"offs_table needs 1 to {OFFS_GROUPS_MAX} groups, got {groups}")
        self.swap = cfg.swap_ab
        self.bound = None  # the prepared eager launch (launch.BoundLaunch), after the first launch
        # Batches of x that read each weight (the caller's B): all of them where one weight serves them all.
        weight_batches = 1 if b_batched else c.shape[0]
        if self.swap:
            # The kernel computes c^T = b^T @ a^T: its A is the caller's B read transposed, and so on.
            a, b, a_batched, b_batched = swapped(b), swapped(a), b_batched, a_batched
        self.cfg, self.a, self.b, self.c = cfg, a, b, c
        a_kmajor, b_kmajor = a.contiguous_dim == 2, b.contiguous_dim == 1
        # The weight is the caller's B: the kernel's A under swap-AB, its B otherwise (clusters never swap).
        layout = weight_layout_problem(cfg, a_kmajor if self.swap else b_kmajor)
        if layout is not None:
            raise ValueError(layout)
        batches, M, N = c.shape
        if self.swap:
            M, N = N, M
        a_pieces = edge_pieces(cfg, M, a_kmajor, groups > 0, ragged_k)
        a_phantom = phantom_a(cfg, M, groups > 0, ragged_k)
        shift = edge_shift(cfg, M, N, groups > 0, ragged_k)
        if shift // 2:
            a_pieces = 1  # the last tile-row is moved back inside A
        self.blocks = operand_blocks(cfg, a_kmajor, b_kmajor, a_pieces)
        if groups:
            # Each group adds at most one partial row tile (under swap-AB the rows of A are the product's columns).
            batches = 1
            if self.swap:
                N = N + groups * cfg.block_n
            else:
                M = M + groups * cfg.block_m
        self.tiles = batches * triton.cdiv(M, cfg.block_m) * triton.cdiv(N, cfg.block_n)
        tile_elems = cfg.block_m * cfg.block_n
        if cfg.stream_k:
            num_k = triton.cdiv(a.shape[2] if a_kmajor else a.shape[1], cfg.block_k)
            self.grid = stream_k_plan.grid(self.tiles, num_k, num_sms)
            self.partial_elems = 2 * self.grid * tile_elems  # two slots per program (scheduler.StreamKScheduler)
        elif cfg.split_k > 1 or groups or ragged_k:
            # Grouped: the grid is sized for the most tiles there can be, so it is not balanced against them.
            # Ragged K: units differ in length with their groups, so every SM takes a share.
            self.grid = min(num_sms, self.tiles * cfg.split_k)
            self.partial_elems = self.tiles * cfg.split_k * tile_elems if cfg.split_k > 1 else 0
        elif cfg.cluster_m > 1:
            # Whole clusters: one per pair of tiles at most (scheduler.PairedTileScheduler).
            pairs = batches * triton.cdiv(triton.cdiv(M, cfg.block_m), 2) * triton.cdiv(N, cfg.block_n)
            self.grid = 2 * persistent_grid(pairs, max(1, num_sms // 2), M, N)
            self.partial_elems = 0
        else:
            self.grid = persistent_grid(self.tiles, num_sms, M, N)
            self.partial_elems = 0
        num_warps, maxnreg = launch_warps(cfg)
        pdl = launch_uses_pdl(cfg) if pdl is None else pdl and _env.PDL
        # Loading the weight before the wait pays only where the launch may start under its predecessor (PDL).
        early = early_weight and pdl and early_weight_fits(cfg, groups > 0, ragged_k)
        constexprs = kernel_constexprs(cfg, a_kmajor, b_kmajor, a_batched, b_batched, has_bias, grouped=groups > 0,
                                       when=when, offs_table=offs_table, ragged_k=ragged_k, scale=scale,
                                       weight_hint=weight_evict_first(cfg, weight_batches, c.shape[1],
                                                                      a.shape[2] if a_kmajor else a.shape[1],
                                                                      groups > 0, ragged_k),
                                       early_weight=early, a_pieces=a_pieces, a_phantom=a_phantom,
                                       edge_shift=shift)
        self.kernel = CachedKernel(gemm_kernel, constexprs, num_warps, maxnreg, pdl=pdl,
                                   compile_context=functools.partial(compile_context, cfg, constexprs))

    @property
    def constexprs(self) -> dict:
        return self.kernel.constexprs

    def launch(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, bias: torch.Tensor | None,
               group_table: torch.Tensor | None = None, scales: tuple | None = None) -> None:
        """Launch on the current device and stream. `bias`, when given, is a contiguous (N,) float tensor;
        `group_table` (grouped form only) comes from kernels.group_table, or is offs itself (offs_table);
        `scales` (scaled launches only): contiguous fp32 (scale_a, scale_b), indexed by C's rows and columns."""
        bias_arg = bias if bias is not None else c
        if self.swap:
            a, b = b, a
        device = c.device.index
        stream = torch._C._cuda_getCurrentRawStream(device)
        if self.partial_elems:
            partials, semaphores = split_k_scratch(device, stream, self.partial_elems, self.tiles)
        else:
            partials, semaphores = unused_pointers(device)
        table = group_table if group_table is not None else semaphores
        # Unscaled variants never read the scale pointers: any fp32 pointer fills the slots.
        scale_a, scale_b = scales if scales is not None else (partials, partials)
        if self.bound is not None and not launch_hooks_active():
            # The hot path: only the stream, the bases and the pointer arguments change between calls.
            self.bound(stream, (a, b, c), (bias_arg, partials, semaphores, c, table, scale_a, scale_b))
            return
        ga, gb, gc = self.a, self.b, self.c

        def full_args():
            return [full_desc(t, g.shape, g.strides, blk, nvmma_layout(blk, t.dtype))
                    for t, g, blk in ((a, ga, self.blocks[0]), (b, gb, self.blocks[1]), (c, gc, self.blocks[2]))
                    ] + [bias_arg, partials, semaphores, c, table, scale_a, scale_b]

        light = (LightDesc(a, ga.shape, ga.strides), LightDesc(b, gb.shape, gb.strides),
                 LightDesc(c, gc.shape, gc.strides), bias_arg, partials, semaphores, c, table, scale_a, scale_b)
        self.kernel.launch(self.grid, device, full_args, light)
        if self.bound is None:
            self.bound = self.kernel.bind(self.grid, light)


class ColumnSplitLaunch:
    """c = a @ b in two launches over column ranges: [0, n1) with one config, [n1, N) with another (the last wave
    of big tiles recut into smaller ones: heuristics.tail_split_columns). Same interface as GemmLaunch; the second
    launch waits for the first (programmatic dependent launch), which writes other columns of c."""

    __slots__ = ("main", "tail", "n1", "b_off", "c_off")

    def __init__(self, main_cfg: GemmConfig, tail_cfg: GemmConfig, n1: int, a: TmaGeometry, b: TmaGeometry,
                 c: TmaGeometry, a_batched: bool, b_batched: bool, has_bias: bool, num_sms: int):
        N = c.shape[2]
        b_main, _ = d2_slice(b, 0, n1)
        c_main, _ = d2_slice(c, 0, n1)
        b_tail, self.b_off = d2_slice(b, n1, N)
        c_tail, self.c_off = d2_slice(c, n1, N)
        self.n1 = n1
        self.main = GemmLaunch(main_cfg, a, b_main, c_main, a_batched, b_batched, has_bias, num_sms)
        # The tail may start under the main launch's last tiles (measured with it: notes/perf.md, "wave quantization").
        self.tail = GemmLaunch(tail_cfg, a, b_tail, c_tail, a_batched, b_batched, has_bias, num_sms, pdl=True)

    def launch(self, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, bias: torch.Tensor | None) -> None:
        self.main.launch(a, b, c, bias)
        self.tail.launch(a, _at(b, self.b_off), _at(c, self.c_off), None if bias is None else _at(bias, self.n1))
