"""The 2-CTA cluster pairs that replace the heuristics' tiles where a weight's rows start off 32-byte sectors (read
along K: 16-bit inputs with K = 8 mod 16, fp8 with K = 16 mod 32; read along N: 16-bit inputs with N = 8 mod 16):
which pair, where, and the measurements behind it. ops/gemm_impl.resolve_config and ops/scaled.plan apply
`off_sector_config` after the heuristics' choice; heuristics.OFF_SECTOR_NO_MEDIUM and FEW_ROWS_WIDE's exclusion of
such rows are the parts that live in choose_config."""
from __future__ import annotations

import torch

from .config import GemmConfig, cdiv, check_config, is_two_part

# A weight whose rows start 16 bytes into a 32-byte sector (16-bit inputs with K = 8 mod 16: 1000, 1704, 4104): TMA
# reads such rows at 1.25-1.7x the cost, most of it on B, the larger box
# (results/2026-11-26-off-sector/off_sector_clusters.json: padding only B's rows recovers most of it; cp.async copies
# were slower still: results/2026-11-26-cp-async/; and cuBLAS runs 2-CTA clusters there). A pair of CTAs that multicasts
# B reads each B box once for two tiles: the 128x256 pair ran 1.05-1.62x the heuristics' 128-row tiles on 7 such shapes,
# the 64x128 pair 1.15-1.18x SMALL on 2 (off_sector_config). Held out, 24 random shapes: from 512 rows the 128x256 pair
# 1.00-1.42x (geomean 1.14, 10 shapes), the 64x128 pair 1.04-1.19x; at 135-447 rows the 128x256 pair lost 4 of 7
# (0.86-0.91x: a pair of tile-rows half empty, or 128x256 plans already good), so it starts at OFF_SECTOR_LARGE_MIN_M
# rows (below them, the few-rows form further down: FEW_ROWS_PAIRS_K_MAJOR). A second 23 held out: it lost 0.76-0.85x
# to 128x128 tiles on the 4 shapes whose 128x256 tiles were under a wave (40-50 of them: half the SMs idle), so from
# narrower tiles it needs a wave (results/2026-11-26-off-sector/). The same
# rule for fp8 rows of 16 mod 32 bytes (K steps of 128 fp8 elements): on 7 such shapes 1.02-1.37x scaled_mm's previous
# plans (fp8_off_sector.json).
OFF_SECTOR_LARGE_MIN_M = 512
OFF_SECTOR_CLUSTERS = True
CLUSTER_LARGE = GemmConfig(block_m=128, block_n=256, block_k=64, stages=3, consumer_warps=8, group_m=16, cluster_m=2)
CLUSTER_SMALL = GemmConfig(block_m=64, block_n=128, block_k=64, stages=8, consumer_warps=4, group_m=8, cluster_m=2)
# 128x128 tiles that stay (under a wave of 128x256 tiles) take their own pair (16-bit inputs; see below):
# 1.06-1.17x on 10 of 11 such shapes, 0.97x on one (off_sector_rest.json; two tile-rows at least). Held out, 20
# random shapes: 1.118x, but 0.75x where the pairs' idle row made a second wave (356 rows: 3 tile-rows) -> not where
# it adds a wave. fp8: 1.061x with 3 of 12 behind (0.87-0.95, under a wave of tiles, no separating count) -> 16-bit
# inputs only (medium_pair_heldout.json, fp8_medium_pair_heldout.json). The rule so amended, 20 fresh shapes: 1.118x,
# 19 of 20, min 0.946 (medium_pair_heldout2.json).
OFF_SECTOR_MEDIUM_PAIR = True
# Under OFF_SECTOR_LARGE_MIN_M rows (two to four tile-rows) fitted_pair's pairs come too, the 128x256 one with the 4th
# stage and chunked stores of the plain tile there (heuristics.LARGE_ONE_WAVE), which ran 3-8% ahead of CLUSTER_LARGE's
# form at 200-460 rows. Found on 3 tile-rows against wide weights (329-384 x ~24000 x K), where the plan (128x128
# tiles: the pair's empty fourth row would add a wave) ran at 0.52x cuBLAS: the pair 0.72x (8 of 8 ahead). Held out
# (129-511 rows, shapes where the rule changes the plan): K-major seed 98 0.751 -> 0.854x after a flush (15 of 16);
# its one loss (322x10256x1864: one wave of the plain 128x256 tile against two of 128x160 pairs) gave the guard
# below; with it, seed 99 0.759 -> 0.878x after a flush (16 of 16), 0.761 -> 0.873x back to back (15 of 16, behind:
# 381x6496x7080 -4%); a guard against the pair's own tile unpaired instead lost 324x27976x2056's +25%. B read along N
# (N = 8 mod 16), seed 100: 0.837 -> 0.939x after a flush (11 of 12; behind: 248x11416x2944, 128x192 pair, -14%),
# 0.836 -> 0.928x back to back (10 of 12, the two behind by 0.5% and 3%)
# (results/2026-11-27-s38/).
FEW_ROWS_PAIRS_K_MAJOR = True
FEW_ROWS_PAIRS_N_MAJOR = True
# fp8 (K = 16 mod 32; B is always read along K) takes the 128x256 pair alone there, with fp8's 128-element K steps
# (FP8_CLUSTER_LARGE_FEW_ROWS; no two-part pairs, as from 512 rows). Forced on 7 such shapes (299-510 rows, plans
# 128x256 s4 c4 or 128x128 tiles; results/2026-11-27-s39/fp8few/): 1.00-1.83x the plan, 0.977 against 0.535x
# torch._scaled_mm at 494x30128x4720; the 3-stage pair (FP8_CLUSTER_LARGE's form) 2-8% behind the 4-stage one.
FEW_ROWS_PAIRS_FP8 = True
# From 512 rows, fp8's 128x256 pair takes that 4-stage chunked form too where it makes few waves (per-tensor scales),
# and for row-wise scales, which before took no pair there (FP8_CLUSTER_LARGE stores whole 128x256 tiles, which
# spills their scale vectors). Forced (results/2026-11-27-s39/large4/): per-tensor, 8 shapes where the plan was the
# 3-stage pair, 1.02-1.05x it at 1.3-3.4 waves of pairs, 0.98-0.99x at 11.5 and 21; row-wise, 8 shapes, 0.97-1.31x the
# plain 4-stage tile (7 of 8 ahead; behind 629x5040x1616, one wave either way).
FP8_PAIR_FOUR_STAGES = True
FP8_PAIR_FOUR_STAGES_MAX_WAVES = 4
# FP8_ROWWISE_PAIRS governs 512 rows and more, where the pair replaces only row-wise scales' plain 128x256 tile (what
# was measured); at 129-511 rows row-wise scales take it under FEW_ROWS_PAIRS_FP8, as per-tensor ones do.
FP8_ROWWISE_PAIRS = True
# Held out (seed 114, 10 row-wise shapes): 0.956 -> 1.054x, 9 of 10 ahead; behind 849x8896x1424 (-15%), where 3 waves
# of pairs replace 2 of tiles. Ahead at up to 1.33x the tiles' waves (584x18640x6608: 4 against 3, +5%), so refused
# above FP8_ROWWISE_PAIR_WAVE_RATIO times the replaced tile's waves. Checked (rwguard/, rw116/): on 8 shapes the
# guard refuses (seed 115) the pair ran 0.829x cuBLAS against the plain tile's 0.969, behind on all 8; between 1.2x and
# 1.4x a wash (seed 115: 6 shapes, 0.934 against 0.957; seed 116: 10 shapes where a 1.2 guard would refuse, 0.997
# against 0.972, 7 of 10 ahead), so 1.4 stays.
FP8_ROWWISE_PAIR_WAVE_RATIO: float | None = 1.4
FEW_ROWS_PAIR_MIN_M = 129
# Refused where its waves of pairs outnumber the waves of the tile it replaces. Waves, not tile-times: against 128x128
# tiles the guard never refuses (a wave of 128x256 pairs does the work of two of them at 2-4 tile-rows), which is
# what was measured (324x27976x2056: 4 waves of pairs against 5 of 128x128 tiles, +25%); it acts against the plain
# 128x256 tile (322x10256x1864: one wave of it against two of 128x160 pairs, -14% without the guard).
FEW_ROWS_PAIR_WAVE_GUARD = True
# From these rows (3-4 tile-rows) a weight read along K takes the few-rows 128x256 pair before swap_rows' tiles
# (ops/gemm_impl._heuristics_tile; only that pair: where fitted_pair picks a two-part one, the swap tile stays). Forced
# on 9 off-sector shapes whose plan was a swap tile, the 128x256 pair ran 1.06-1.40x it at 391-432 rows and 0.99-1.16x
# at 142-187 (swapoff.json). Held out (seed 103, 10 shapes of 257-511 rows where any pair would replace the swap tile;
# pos103/): the 6 that took the 128x256 pair +5% to +51% after a flush (400x21072x3176 0.59 -> 0.87x cuBLAS), the 4
# two-part pairs -10% to +9%. Seed 104 (8 fresh shapes where the rule so restricted changes the plan; pos104/,
# posb2b/): 0.723 -> 0.757x after a flush, 7 of 8 ahead, 0.685 -> 0.703x back to back, 7 of 8 (with 4 of seed 103's:
# 0.661 -> 0.735x, 11 of 12); behind in both: 291x7840x3224 (-9%, -14%; 62 pairs in one wave). results/2026-11-27-s38/.
PAIRS_OVER_SWAP_ROWS_MIN_M: int | None = 257
CLUSTER_LARGE_FEW_ROWS = GemmConfig(block_m=128, block_n=256, block_k=64, stages=4, consumer_warps=8, group_m=16,
                                    store_chunks=4, cluster_m=2)
FP8_CLUSTER_LARGE_FEW_ROWS = CLUSTER_LARGE_FEW_ROWS.replace(block_k=128)
CLUSTER_MEDIUM = GemmConfig(block_m=128, block_n=128, block_k=64, stages=6, consumer_warps=4, group_m=8, cluster_m=2)
# Two-part pairs (128 + 64 and 128 + 32 columns; on a weight read along K each CTA loads half of every rest-wide box of
# B, on one read along N every other whole box: GemmConfig.b_pieces_for). Where the 128x256 pairs leave their last wave
# part-filled, a narrower pair fits the waves, as the plain two-part tiles do on rows on sectors (heuristics.WIDE,
# WIDE_160): on 16 off-sector shapes whose 16-bit plan the 128x256 pair took (1-2.3 waves of it), the 128x192 pair ran
# 0.95-1.32x the 128x256 one, the 128x160 pair 0.87-1.32x; the pair wave model below, with the heuristics' own tile
# times (WIDE_TILE_TIME, WIDE_160_TILE_TIME: no new constant), picked the best pair or one within 2% on all 16: 1.142x
# geomean over the 128x256 pair (results/2026-11-27-s35/pairs_found.json).
OFF_SECTOR_TWO_PART_PAIRS = True
CLUSTER_WIDE = GemmConfig(block_m=128, block_n=192, block_k=64, stages=4, consumer_warps=8, group_m=16, store_chunks=3,
                          cluster_m=2)
CLUSTER_WIDE_160 = GemmConfig(block_m=128, block_n=160, block_k=64, stages=5, consumer_warps=8, group_m=8,
                              store_chunks=5, cluster_m=2)
# Two-part plans (128x192, 128x160) under a wave of 128x256 tiles take the fitted pair too (16-bit inputs; the fp8
# pairs were never measured under a wave): on the 4 such shapes of results/2026-11-27-s35/pairs_elsewhere.json
# (960-1729 rows) the fitted pair ran 1.12-1.26x the plain tile; held out (seed 86, 16 fresh shapes where it changes
# the plan, underwave86/): 0.801 -> 0.913x cuBLAS after a flush and back to back, 15 and 16 of 16 ahead (behind:
# 557x4384x2600, 128x256 pair, -6% after a flush, +3% back to back).
TWO_PART_PAIRS_UNDER_A_WAVE = True
# fp8: the same pairs with K steps of the same 128 bytes (128 fp8 elements).
FP8_CLUSTER_LARGE = CLUSTER_LARGE.replace(block_k=128)
FP8_CLUSTER_SMALL = CLUSTER_SMALL.replace(block_k=128)


# A weight read along N (B row-major (K, N)) whose rows start off sectors takes the pairs of power-of-two tiles too
# (each CTA loads half of B's columns; the two-part pairs under N_MAJOR_TWO_PART_PAIRS below). Forced, the 128x256 pair
# ran ahead of the plan on 6 of 8 such shapes by 8-26% (results/2026-11-27-s35/nn_pairs.json); held out (seed 87, 16 nn
# shapes) the rule took 0.729 -> 0.794x cuBLAS after a flush and 0.749 -> 0.811x back to back. Its one clear loss
# (636x31768x5792, -10%) was the pair's odd tile-row adding a wave (6 waves of pairs against 5 of tiles): session 36
# refused any extra wave, and so amended, on 14 fresh shapes (seed 88) the rule took 0.843 -> 0.972x after a flush,
# 0.839 -> 0.972x back to back, all 14 ahead (results/2026-11-27-s36/). But on many waves one more is a small share,
# and the pair's reads of such rows are worth more (on a weight read along K even 4 waves of pairs against 3 of tiles
# were worth it: pair_adds_a_wave's docstring): refusing only a pair that needs over N_MAJOR_PAIR_WAVE_RATIO times the
# unpaired tile's waves took 12 shapes where that changes the plan (seed 93) from 0.810 to 0.916x cuBLAS after a
# flush, 12 of 12 ahead, and 13 more (seed 95: 12 fresh, all ahead or even, and 636x31768x5792) from 0.838 to 0.938x;
# 636x31768x5792 0.866 -> 0.839 (results/2026-11-27-s37/nnratio93/, nnratio95/). Above 1.2 (seed 96, 12 shapes where
# dropping the guard changes the plan): 0.862 -> 0.898x after a flush, 9 of 12 ahead (behind: 1367x8808x6912 -7%,
# 583x19672x2576 -6%, 585x17064x2120 -1%; results/2026-11-27-s38/nnratio96/); back to back 0.891 -> 0.901x, 7 of 12
# ahead (583x19672x2576 -8%, 780x13096x7696 -6%). So no guard (None) since session 38: a small gain, not a clean one.
N_MAJOR_PAIRS = True
N_MAJOR_PAIR_WAVE_RATIO: float | None = None
# The 128x128 pair's own wave guard (pair_adds_a_wave): refused where its pairs need over this many times the
# unpaired tile's waves; 1.0 refuses any extra wave. 1.2 on 12 shapes of 3 tile-rows (seed 97) was a wash, 0.522 ->
# 0.529x cuBLAS, 5 of 12 behind (results/2026-11-27-s38/medratio97/); the few-rows pairs above now take those shapes.
MEDIUM_PAIR_WAVE_RATIO = 1.0
# Whether fitted_pair offers the two-part pairs on such a weight too (their rest-wide boxes whole, taken by the CTAs
# in turn: GemmConfig.b_pieces_for), on the K-major rule's wave model and tile times. Held out (seed 90, 16 nn shapes
# where it changes the plan): 0.742 -> 0.781x after a flush, 0.777 -> 0.802x back to back; 5 lost 3-6% one way.
N_MAJOR_TWO_PART_PAIRS = True
# Whether such a pair also replaces a plan that the one-partition rule would run (one wave of short-K tiles;
# ops/gemm_impl._heuristics_tile asks). Measured (nn_flat89/, 9 such shapes): the pair behind, 0.866 against 0.896x
# after a flush and 0.790 against 0.846x back to back.
N_MAJOR_PAIRS_OVER_ONE_PARTITION = False


def off_sector_config(cfg: GemmConfig, batches: int, M: int, N: int, num_sms: int, in_dtype: torch.dtype,
                      out_dtype: torch.dtype, b_kmajor: bool = True,
                      rowwise: bool = False) -> tuple[GemmConfig, str] | None:
    """The cluster pair that replaces the heuristics' `cfg` for a weight whose rows start off 32-byte sectors
    (OFF_SECTOR_CLUSTERS' comment; `b_kmajor` False: read along N, N_MAJOR_PAIRS' comment), with the reason; None to
    keep `cfg` (swap-AB decode tiles, which stream the weight once and lose 2-7% there; 64-row decode tiles; shapes
    and dtypes a pair cannot take; batched products, on which no rule was measured). ops/gemm_impl.resolve_config
    and ops/scaled.plan apply it after choose_config; `rowwise`: fp8 with row-wise scales, whose 128x256 tiles
    must store in chunks."""
    # The pairs' K steps are 128 bytes (64 bf16 / fp16 elements, 128 fp8), as are those of the tiles they replace.
    fp8 = in_dtype.itemsize == 1
    if not b_kmajor and (not N_MAJOR_PAIRS or fp8):
        return None
    if (not OFF_SECTOR_CLUSTERS or batches != 1 or cfg.swap_ab or cfg.split_k > 1 or cfg.stream_k
            or cfg.consumers > 1 or cfg.block_k != 128 // in_dtype.itemsize):
        return None
    rows = cdiv(M, 128)
    few_rows = (FEW_ROWS_PAIR_MIN_M <= M < OFF_SECTOR_LARGE_MIN_M
                and (FEW_ROWS_PAIRS_FP8 if fp8 else FEW_ROWS_PAIRS_K_MAJOR if b_kmajor else FEW_ROWS_PAIRS_N_MAJOR))
    large = (cfg.block_m == 128 and (M >= OFF_SECTOR_LARGE_MIN_M or few_rows)
             and (cfg.block_n == 256 or rows * cdiv(N, 256) >= num_sms
                  or (OFF_SECTOR_TWO_PART_PAIRS and TWO_PART_PAIRS_UNDER_A_WAVE and not fp8
                      and is_two_part(cfg.block_n))))
    if not large:
        fitted = None
    elif fp8:
        four = few_rows or fp8_four_stages(M, N, num_sms, rowwise)
        fitted = FP8_CLUSTER_LARGE_FEW_ROWS if four else FP8_CLUSTER_LARGE
        if rowwise and (fitted.store_chunks == 1 or (not few_rows and cfg.block_n != 256)):
            # Row-wise scales need chunked 128x256 stores (heuristics.FP8_LARGE_ROWWISE's comment); from 512 rows the
            # pair was measured only against their plain 128x256 tile (not the 128x128 / two-part plans).
            fitted, large = None, False
    else:
        fitted = fitted_pair(M, N, num_sms, in_dtype, out_dtype, b_kmajor, few_rows)
    if fitted is not None and few_rows and FEW_ROWS_PAIR_WAVE_GUARD:
        large = not more_waves(fitted, cfg, M, N, num_sms)
    if cfg.block_m == 64 and cfg.block_n == 128:  # SMALL, FP8_SMALL
        pair = FP8_CLUSTER_SMALL if fp8 else CLUSTER_SMALL
    elif large:
        pair = fitted
    elif (OFF_SECTOR_MEDIUM_PAIR and not fp8 and cfg.block_m == 128 and cfg.block_n == 128 and rows > 1
          and not pair_adds_a_wave(CLUSTER_MEDIUM, M, N, num_sms)):
        # A pair covers two tile-rows: an odd count adds a row of idle CTAs, which must not add a wave.
        pair = CLUSTER_MEDIUM
    else:
        return None
    if check_config(pair, in_dtype, out_dtype, weight_k_contiguous=b_kmajor) is not None:
        return None
    if (fp8 and rowwise and not few_rows and pair.block_n == 256 and FP8_ROWWISE_PAIR_WAVE_RATIO
            and more_waves(pair, cfg, M, N, num_sms, FP8_ROWWISE_PAIR_WAVE_RATIO)):
        return None
    if not b_kmajor and N_MAJOR_PAIR_WAVE_RATIO is not None and more_waves(pair, pair, M, N, num_sms,
                                                                           N_MAJOR_PAIR_WAVE_RATIO):
        return None
    return pair, (f"the weight's rows start off 32-byte sectors: {pair.name} (CTA pairs multicast each B box, which "
                  f"such rows make slow to read) instead of {cfg.name}")


def fp8_four_stages(M: int, N: int, num_sms: int, rowwise: bool) -> bool:
    """From 512 rows, whether fp8's 128x256 pair takes the 4-stage chunked-store form (FP8_PAIR_FOUR_STAGES'
    comment); row-wise scales take no other (FP8_ROWWISE_PAIRS off: no 128x256 pair for them)."""
    if rowwise:
        return FP8_ROWWISE_PAIRS
    return (FP8_PAIR_FOUR_STAGES
            and pair_waves(FP8_CLUSTER_LARGE_FEW_ROWS, M, N, num_sms) <= FP8_PAIR_FOUR_STAGES_MAX_WAVES)


def pair_adds_a_wave(pair: GemmConfig, M: int, N: int, num_sms: int) -> bool:
    """Whether `pair` needs over MEDIUM_PAIR_WAVE_RATIO times the waves of its tile unpaired: a pair takes two
    tile-rows, so an odd count of rows leaves half of the last band's CTAs idle. The 128x128 pair's condition on
    either layout (the 128x256, two-part and 64x128 pairs on a weight read along N have none since session 38:
    N_MAJOR_PAIR_WAVE_RATIO; at 129-511 rows the fitted pairs have FEW_ROWS_PAIR_WAVE_GUARD, fp8's row-wise pair from
    512 rows FP8_ROWWISE_PAIR_WAVE_RATIO). From 512 rows the 128x256 pair on a weight read along K has none: a guard
    refusing it only where it needs over 1.2x the unpaired tile's waves (5 against 4, 4 against 3) was tried, and 16
    held-out shapes ran 4% slower with it, 14 of them behind (results/2026-11-27-s37/guard92/): the pair's faster
    reads of such rows outweigh the wave."""
    return more_waves(pair, pair, M, N, num_sms, MEDIUM_PAIR_WAVE_RATIO)


def more_waves(pair: GemmConfig, tile: GemmConfig, M: int, N: int, num_sms: int, ratio: float = 1.0) -> bool:
    """Whether `pair` needs over `ratio` times the waves of `tile` unpaired (the tile it replaces, or its own)."""
    return pair_waves(pair, M, N, num_sms) > ratio * tile_waves(tile, M, N, num_sms)


def tile_waves(cfg: GemmConfig, M: int, N: int, num_sms: int) -> int:
    """Waves of `cfg`'s tiles, unpaired, over all the SMs."""
    return cdiv(cdiv(M, cfg.block_m) * cdiv(N, cfg.block_n), num_sms)


def pair_waves(pair: GemmConfig, M: int, N: int, num_sms: int) -> int:
    """Waves of `pair`'s CTA pairs, each wave half the SMs (a pair takes two tile-rows)."""
    return cdiv(cdiv(M, 2 * pair.block_m) * cdiv(N, pair.block_n), max(num_sms // 2, 1))


def fitted_pair(M: int, N: int, num_sms: int, in_dtype: torch.dtype, out_dtype: torch.dtype,
                b_kmajor: bool = True, few_rows: bool = False) -> GemmConfig:
    """The 128-row pair (128x256, or the two-part 128x192 / 128x160 for 16-bit outputs) that runs the product in the
    fewest tile-times: each pair takes two tile-rows, so waves count pairs (half the SMs each) over 256-row bands;
    a wave costs its tile's time against a 128x256 tile's. A two-part pair must beat the 128x256 pair by the plain
    two-part tiles' margin (WIDE_MIN_GAIN): held out (seed 83), the two it lost by 5-6% were near-ties in the model
    (0.99: many waves, where the wider tile's reuse wins, as for the plain tiles). few_rows: under
    OFF_SECTOR_LARGE_MIN_M rows, where the 128x256 pair is CLUSTER_LARGE_FEW_ROWS (4 stages, chunked stores)."""
    from .heuristics import WIDE_160_TILE_TIME, WIDE_MIN_GAIN, WIDE_TILE_TIME  # heuristics imports this module

    large = CLUSTER_LARGE_FEW_ROWS if few_rows else CLUSTER_LARGE
    options = [(large, 1.0)]
    if (OFF_SECTOR_TWO_PART_PAIRS and out_dtype.itemsize == 2  # measured on 16-bit outputs only
            and (b_kmajor or N_MAJOR_TWO_PART_PAIRS)):
        options += [(CLUSTER_WIDE, WIDE_TILE_TIME), (CLUSTER_WIDE_160, WIDE_160_TILE_TIME)]
    best, best_time = large, None
    for pair, tile_time in options:
        if check_config(pair, in_dtype, out_dtype) is not None:
            continue
        t = pair_waves(pair, M, N, num_sms) * tile_time
        if pair is not large and best_time is not None:
            t /= WIDE_MIN_GAIN  # priced against the 128x256 pair (always first, always valid where any pair is)
        if best_time is None or t < best_time:
            best, best_time = pair, t
    return best
