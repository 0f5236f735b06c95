"""Map a problem to a GemmConfig with no tuning cost.

The rules are few and each rests on `warpgemm bench sweep` runs (notes/perf.md, results/*/sweep_*.json):

- M <= 64 (decode): swap-AB, the weight's N rows on wgmma's 64-row side and x's few rows on its N side (16-64);
  whole 64-row tiles with long K steps stream the weight fastest. Except 33-47 rows (33-64 if N-major or batched)
  against a weight whose 128-row panels fill 3/4 of the SMs: plain 64x128 tiles.
- Fewer than half as many 128x128 tiles as SMs (e.g. M = 128-256 against a 4096-8192-wide weight), or M <= 128 and
  less than one wave of them (weight streaming: 128x14336x4096 0.95 -> 0.98x in three sweeps): 64x128
  tiles with an 8-deep ring. One SM streams operands at only ~100-125 GB/s, so small problems need many SMs
  busy, and deep rings keep each SM's bytes in flight. Where even 64x128 tiles would fill at most half the SMs
  (M = 128 against a 4096-wide weight), 64x64 tiles with 128-wide K steps (twice the SMs streaming); where those
  fill at most 70% of the SMs over K >= 4096 (65-512 rows), 128x128 tiles cut into 4 parts of K instead (half the
  bytes per FLOP, as many programs: few_tiles_split.py). 16-bit inputs.
- M >= 512 with enough 128x256 tiles to fill half the SMs: two warpgroups on one 128x256 tile (the most
  reuse per byte loaded; best or tied on every dense shape swept); when they make a single wave, with 4 stages
  and the output stored in 4 overlapped column chunks; with 16+ tile-rows per batch, walked in bands of 16
  tile-rows (fewer HBM bytes per wave: sustained GEMMs run at the power cap, where bytes cost clock).
- Where 128x256 tiles would leave a wave partly filled and 128x192 tiles need fewer tile-times (3072^3, 1536^3 and
  other sizes off the powers of two; none of the suites' LLM shapes): 128x192 tiles (`WIDE`, `wide_tile_time`), or
  128x160 ones where they need fewer still (1536^3, 1024x2304: `WIDE_160`; a weight read along K only); where
  128x128 tiles alone need no more tile-times than any of them, those (`medium_tile_time`; 16-bit outputs only).
- 129-511 rows (unbatched) with at least half a wave of 128x256 tiles: those tiles (4 stages, chunked stores) where
  they need fewer tile-times than 128x128 ones or the last tile-row is at most half full, else 128x128 tiles
  (`FEW_ROWS_LARGE_MIN_M`); either gives way to 128x192 tiles where those need fewer tile-times than both
  (`FEW_ROWS_WIDE`; K-major weights with rows on 32-byte sectors, shapes the swap-rows rule leaves alone).
- fp32 outputs: the same 128x256 tile stored in 4 column chunks (`LARGE_FP32_OUT`; a whole fp32 tile does not fit).
- 72-128 rows with a wave or more of 128x128 tiles (weight streaming: LM heads, 128x28672): 64x128 tiles where they
  make fewer tile-times, else 128x128 tiles with 128-deep K steps (`ONE_ROW_DEEP_K`).
- Otherwise one warpgroup on 128x128 tiles with a 6-deep ring (4 -> 6 stages: geomean 0.83 -> 0.92 on `mid`).
- One or two rows of x against a weight read along K (batch-1 or -2 decode, F.linear's layout): a CUDA-core GEMV
  (kernels/gemv.py, gemv_rows.py), thousands of short programs the hardware balances over the SMs (`gemv_reason`).
- A weight read along K whose rows start 16 bytes into a 32-byte sector (K = 8 mod 16): the 2-CTA cluster form of
  the chosen 128-row or 64x128 tile, which multicasts B (off_sector.py); with such rows in any operand, no 128x128
  tiles alone where 128x256 ones make a wave (`OFF_SECTOR_NO_MEDIUM`), nor the 129-511-row 128x192 rule
  (`FEW_ROWS_WIDE`). Unbatched products.
- 65-700 rows of x where 128- or 64-row tiles pad x's rows by 10% or more and a wave model favours them: swap-AB
  tiles as wide as x's rows need (80-192, two-part widths), x on wgmma's N side as cuBLAS puts it (swap_rows.py;
  applied in ops/gemm_impl.resolve_config, before the off-sector pairs). Unbatched 16-bit products. From 1000 to 4096
  rows a 160- or 192-wide one in place of the one-warpgroup 128x128 tile where its count fits the SMs in no more
  wave-times (swap_rows._wide_rows_config; x and weight read along K, rows on 32-byte sectors).
- Tiles that fit one wave with K steps that fit the ring (plain 64-row tiles: up to 16 K steps and K <= 2048): the
  chosen tile without warp specialization, its ring as deep as the K steps up to 4 slots, 64x64 tiles filling at most
  40% of the SMs as 64x32 ones (one_partition_rule.py; last in gemm_impl.resolve_config and scaled.plan). Dense.
- A last wave that fills few SMs: when the 128x256 tiles come to w full waves plus a small remainder, the
  rightmost columns can go to a second launch with 128x128 tiles (half the time per tile), so the tail wave ends
  sooner (`tail_split_columns`; the plan in ops/gemm_impl.py applies it). The second launch's cost grows at K <= 2048
  (`TAIL_COST_K`).

Each list is tried in order and the first config the validity predicate accepts for the dtypes wins (an fp32
output tile needs twice the shared memory, so some fall back to a shallower ring).
"""
from __future__ import annotations

import functools

import torch

from .config import GemmConfig, WIDE_BLOCK_N, cdiv, check_config
from .swap_rows import PLAIN_TILE_TIME, SWAP_ROWS, SWAP_ROWS_FP8, swap_rows_config
from .few_tiles_split import SPLIT_TILE, few_tiles_split
# The cluster pairs for rows off 32-byte sectors (off_sector.py), shipped configs here too.
from .off_sector import (CLUSTER_LARGE, CLUSTER_LARGE_FEW_ROWS, CLUSTER_MEDIUM, CLUSTER_SMALL, CLUSTER_WIDE,
                         CLUSTER_WIDE_160, FP8_CLUSTER_LARGE, FP8_CLUSTER_LARGE_FEW_ROWS,
                         FP8_CLUSTER_SMALL)

# Two consumer warpgroups share a 128x256 tile: each issues m64n256k16 wgmma, the widest there is.
LARGE = GemmConfig(block_m=128, block_n=256, block_k=64, stages=3, consumer_warps=8, group_m=8)
# The same tile when it makes a single wave (one tile per SM; also over several waves at 256-511 rows,
# FEW_ROWS_LARGE_MIN_M): nothing overlaps the epilogue, so the tile leaves in 4 column chunks whose stores overlap,
# and the freed shared memory buys a 4th stage (1024x4096x4096: 0.94-0.95 ->
# 0.995x cuBLAS, results/2026-11-22-tail-split/single_wave_probe.json; earlier sweeps 0.78-0.92 -> 0.98).
LARGE_ONE_WAVE = LARGE.replace(stages=4, store_chunks=4)
# The same tile walked in bands of 16 tile-rows when a batch has at least that many (M >= 2048; the gain was measured
# from M = 4096). A wave of 132 128x256 tiles then covers ~16 x 8 tiles instead of 8 x 16, which reads 21% fewer
# operand bytes from HBM per wave (16 x 128 + 8.25 x 256 rows of panels against 8 x 128 + 16.5 x 256). Sustained
# GEMMs run this H100 at its 700 W cap (~1.3 GHz SM clock), so bytes not moved buy clock: 1305 -> 1320-1335 MHz
# and +0.5-1.3% steady-state TFLOP/s; `bench sweep` on the 12 dense shapes with M >= 4096, geomean 1.010 -> 1.022x
# and 0.992 -> 1.024x cuBLAS in two runs (results/2026-11-22-power/).
LARGE_TALL_BANDS = LARGE.replace(group_m=16)
TALL_BAND_MIN_ROW_TILES = 16
# The same tile for fp32 outputs: a whole 128x256 fp32 output tile does not fit beside the ring, 4 column chunks
# through two buffers do. Until 2026-11-26 fp32 outputs fell back to 128x128 tiles; measured against them
# (results/2026-11-26-wide/fp32_out.json, bf16 inputs, 3 rounds): 4096^3 +13%, 1024x8192x8192 +10%, 4096x14336x4096
# +7%, 2048^3 +7%, 8192^3 +2%, 16384x4096x4096 0%.
LARGE_FP32_OUT = LARGE.replace(store_chunks=4)
# 128x192 tiles (two accumulators of 128 + 64 columns, kernels/hopper/partitions.py) where they fit the SMs in fewer
# tile-times than 128x256 ones (`wide_tile_time`): 3072^3 has 288 128x256 tiles (2.2 waves: 3 wave-times, 2.65 with
# the column split) and 384 of 128x192 (2.9 waves). Measured (results/2026-11-26-wide/wide_alone.json, H100): at
# equal waves a 128x192 tile takes 0.83-0.85 of a 128x256 one's time (3072^3: 85 vs 100 us; 1536^3, one wave each:
# 19.2 vs 23.1 us); the heuristics' plan 0.83 -> 0.93x cuBLAS at 3072^3, 0.71 -> 0.83x at 1536^3. Over many waves
# the wider tile's reuse wins: 6144^3 0.986 against 1.021.
WIDE = GemmConfig(block_m=128, block_n=WIDE_BLOCK_N, block_k=64, stages=4, consumer_warps=8, group_m=16,
                  store_chunks=3)
WIDE_TILE_TIME = 0.85  # of a 128x256 tile's
WIDE_MIN_GAIN = 0.97  # predicted time against the 128x256 plan's, at most
# 128x160 tiles (128 + 32 columns: config.TWO_PART_WIDTHS) where they fit the SMs in fewer tile-times than the 128x192
# and 128x128 tiles and at most WIDE_MIN_GAIN of the 128x256 plan's (fp32 outputs too: on 20 held-out and odd shapes
# with an fp32 output, 1.00-1.22x over the 128x192 tiles those took, geomean 1.095, fp32_160_heldout.json), for a
# weight read along K (B = W.T): with B row-major (K, N) its 32-column boxes lost on 2 of 6 shapes, by up to 11%
# (geomean 0.99, results/2026-11-26-parts/nn_160.json), so there the plan is taken without them
# (`choose_config(b_kmajor=False)`).
# Measured (results/2026-11-26-parts/parts.json, H100, every tile alone): at equal waves a 128x160 tile takes 0.78-0.82
# of a 128x256 one's time (a 128x144 tile 0.83-0.89: its 16-column wgmma reads all of A for little work, so 144 is
# not shipped); 1536^3 0.80 -> 0.86x cuBLAS (120 tiles, one wave, against 96 of 128x192), 1024x2304x4096 0.79 -> 0.87,
# 1536x1536x6144 0.78 -> 0.87.
WIDE_160 = GemmConfig(block_m=128, block_n=160, block_k=64, stages=5, consumer_warps=8, group_m=8, store_chunks=5)
WIDE_160_TILE_TIME = 0.80
# 256-511 rows with at least half a wave of 128x256 tiles: those tiles (LARGE_ONE_WAVE's 4 stages and chunked stores,
# whatever the wave count) where they make fewer wave-times than 128x128 ones by the tile-count model, or where the
# last tile-row is at most half full; else MEDIUM. Measured (results/2026-11-26-medium/, notes/perf.md): with M a
# multiple of 128 the model picked the faster tile on all 12 shapes (MEDIUM ahead by 1-13% where it says so); where
# the model says MEDIUM but the last tile-row is at most half full, 128x256 tiles won all 14 (by 12-51%:
# 288x16384x4096 0.56 -> 0.78x cuBLAS), with it fuller only 2 of 6. Held out, where the model favours 128x256 tiles:
# 1.24x geomean over MEDIUM on 16 shapes (0.99-1.62x); where the rule changes the plan by the last row alone, 7 of 8
# ahead (0.93-1.36x). Where it leaves MEDIUM for a fuller last row, 128x256 tiles won 3 of 4 held-out shapes (by 1-20%)
# and lost the fourth by 8%: the half-full cut is where the measured losses began, not a mechanism. Unbatched
# products only (nothing batched was measured). Since extended down to 129 rows (two tile-rows), where MEDIUM ran at
# 0.54-0.97x cuBLAS against wide weights (results/2026-11-26-parts/two_rows.json: 160x28672x8192 0.58 -> 0.88x, on 8
# shapes the rule's tile was the best or within 0.03 of it but at 176 rows, where 64x128 tiles led); fp8 keeps 256
# (FP8_FEW_ROWS_MIN_M, unmeasured below).
FEW_ROWS_LARGE_MIN_M = 129
# Also at 129-511 rows (unbatched, B read along K, rows on sectors, 16-bit outputs, where the swap-rows rule leaves
# the plan; fp16 inputs take it as bf16 ones, measured on bf16; fp32 outputs keep MEDIUM_FP32_OUT, unmeasured): 128x192
# tiles where the wave model has them at most WIDE_MIN_GAIN of the 128x256 and 128x128 tiles' times (128x128 priced
# at swap_rows' 0.65 of a 128x256 tile, as measured at these rows, not TAIL_TILE_TIME's 0.55). Measured
# (results/2026-11-27-hint-512/, bf16, against the plan without it, each over cuBLAS in its own process): 448x11008x4096
# 0.75 -> 0.89x cuBLAS; held out (random shapes the rule changes) seed 62 +5.5% (flush) / +6.3% (back to back), whose
# three off-sector cluster-pair shapes lost (now left to the pairs), seed 63 +7.0% / +4.2% whose swap-192 shapes lost
# (now left to swap_rows), and with both exclusions seed 64 +13.4% / +11.2%, 13 and 15 of 16 ahead, min 0.94. Rows off
# sectors are left out whether or not a cluster pair follows (the seed-62 losers all had one; the rest unmeasured).
# Not every shape gains: 480x11008x4096 0.87 -> 0.84x cuBLAS.
FEW_ROWS_WIDE = True
FP8_FEW_ROWS_MIN_M = 256
# The same tile (LARGE_ONE_WAVE) also at 512 rows to FEW_WAVES_MAX_ROW_TILES tile-rows where it makes one to
# FEW_WAVES_MAX waves and LARGE (which M >= 512 took past one wave) would not split off a short last wave
# (`_tail_split`). Measured (results/2026-11-27-few-waves/, do_bench / back to back over cold weights): 512x14336x4096
# 0.96 -> 1.01x cuBLAS (three runs) / tie, 640x12288x4096 +3%, held out 7 of 8 ahead by 0.8-4.5% / -0.9 to +3.5%;
# from 6 tile-rows no gain (768x11008x4096 0%, 1024x8192x8192 +1% / -0.7%, 1280x5120x8192 -2% / +0.4%).
FEW_WAVES_MAX_ROW_TILES = 5
FEW_WAVES_MAX = 2
# One warpgroup on 128x128 with the deepest ring that fits beside a 16-bit output tile.
MEDIUM = GemmConfig(block_m=128, block_n=128, block_k=64, stages=6, consumer_warps=4, group_m=8)
# The same tile for fp32 outputs (whose 64 KB output tile leaves room for 4 stages).
MEDIUM_FP32_OUT = MEDIUM.replace(stages=4)
# One warpgroup on 64-row tiles: tiny M, or too few 128-row tiles to occupy the SMs.
SMALL = GemmConfig(block_m=64, block_n=128, block_k=64, stages=8, consumer_warps=4, group_m=8)
# 72-128 rows (one tile-row) with at least a wave of 128x128 tiles: these stream the weight, each tile its own panel.
# 64x128 tiles where their count fits the SMs in fewer tile-times (0.55 of a 128x128 tile's each, TAIL_TILE_TIME),
# else 128x128 tiles with 128-deep K steps (ONE_ROW_DEEP_K: the same bytes in flight as MEDIUM's 6 x 64, in half the
# barrier round trips and 256-byte weight rows). Measured (results/2026-11-26-parts/one_row.json, 10 shapes, against
# MEDIUM): 64x128 tiles 1.10-1.16x where the model picks them (136-192 128x128 tiles: 128x17408x8192, 96x20480x4096),
# 0.98-1.02x elsewhere; 128-deep steps 1.03-1.04x at 224+ tiles (128x28672x8192 0.963 -> 0.995x cuBLAS, LM heads such as
# 128x128256x4096 and 128x32000x4096), 0.99-1.01x at 136-192.
ONE_ROW_DEEP_K = GemmConfig(block_m=128, block_n=128, block_k=128, stages=3, consumer_warps=4, group_m=8)
# Held out (one_row_heldout.json, 16 shapes drawn at random from those whose plan the rule changes, against the rule
# mocked off): 128-deep K steps 1.027x (8 of 8 ahead, 1.01-1.04x, 75-127 rows); 64x128 tiles 1.04-1.15x on the 6 shapes
# of 72-121 rows and 0.84 / 0.92x on the two of 67 rows, where the 128-deep tile lost too (0.95 / 0.98x,
# one_row_m67.json): the rule starts at 72 rows, the measured boundary (not a mechanism); 65-71 rows keep MEDIUM.
ONE_ROW_MIN_M, ONE_ROW_MAX_M = 72, 128  # unbatched products only (nothing batched was measured)
# Very few tiles: 64x64 tiles double the SMs that stream (results/2026-11-22-issue4-mid/: 128x4096x4096
# 0.84-0.89 -> 0.97x cuBLAS, 128x4096x14336 0.98 -> 1.06x).
NARROW = GemmConfig(block_m=64, block_n=64, block_k=128, stages=6, consumer_warps=4, group_m=8)

# Decode (M <= 64), by the rows of x a tile holds: swap-AB, 64 weight rows per tile (the fewest wgmma takes), whole
# tiles (no K split) and long K steps. Measured (results/2026-11-22-issue6-decode/sweep_*.json): 64-row tiles with
# 512-byte rows per stage stream 2.3-3.0 TB/s where 128-row tiles or 256-byte steps stream less, and stream-K and
# split-K lose 5-20% on every decode shape even though they keep all SMs busy (notes/perf.md).
DECODE = {
    16: GemmConfig(block_m=64, block_n=16, block_k=256, stages=5, consumer_warps=4, swap_ab=True),
    32: GemmConfig(block_m=64, block_n=32, block_k=256, stages=4, consumer_warps=4, swap_ab=True),
    64: GemmConfig(block_m=64, block_n=64, block_k=128, stages=6, consumer_warps=4, swap_ab=True),
}

# Up to 16 rows of x against a weight of at most 4096 K: 32 weight rows per swap-AB tile (64 wgmma rows, the upper
# 32 zero), twice the tiles of 64-row ones. A 64-row tile of such a weight is only 512 KB, so few programs are
# streaming at the start and end of the call (4096^2: 64 tiles for 132 SMs). K-major weights (plan_hopper falls back).
# Measured (results/2026-11-23-half-tiles/, CUDA graphs, cold weights, two runs): 4096^2 +2.3/+1.0% at M = 4/16,
# 14336x4096 +1.3-1.7/+2.3-2.6%; with longer K (4096x14336, 8192^2, 8192x28672) -1.6 to +0.6%, and at 17-32 rows
# (32x32 tiles) -1.9 to +0.7%, so those keep 64-row tiles where these fill the SMs (DECODE_HALF below).
DECODE_SHORT_K = GemmConfig(block_m=32, block_n=16, block_k=256, stages=5, consumer_warps=4, swap_ab=True)
DECODE_SHORT_K_MAX_K = 4096
# 17-64 rows against a weight whose 64-row tiles would fill at most DECODE_HALF_MAX_SHARE of the SMs: the same 32-row
# tiles, twice the programs (64-row ones keep twice the weight bytes in flight per slot, so they win where enough
# stream). Held out (results/2026-11-27-few-waves/half-heldout/, CUDA graphs, cold weights): N = 2048 / 3072 +1-4% /
# +6-21% at M = 24-64; N = 4096 (64 tiles for 132 SMs) -7 to +1.5% (48x4096x11008 -7.4%): 64-row tiles there.
DECODE_HALF_MAX_SHARE = 0.4
DECODE_HALF = {
    32: GemmConfig(block_m=32, block_n=32, block_k=256, stages=4, consumer_warps=4, swap_ab=True),
    64: GemmConfig(block_m=32, block_n=64, block_k=128, stages=6, consumer_warps=4, swap_ab=True),
}

# 33-47 rows of x against a weight of >= 0.75 x SMs panels of 128 rows (N > 12544 on 132 SMs): the plain kernel, x's
# rows on wgmma's M side, 128 weight rows per tile (two thirds of each stage weight; half under swap-AB). Against
# swap-AB 64x64x128 s6 (results/2026-11-27-ring-grain/, CUDA graphs, cold weights, weight hint on): at 33-44 rows plain
# leads 14336x4096 by 5-9% and ties 28672x8192, swap leads 22016x4096 by 5%, 40 rows mixed (0.95-1.11x, 6 weights);
# at 48-64 rows swap-AB leads on 13 of 16 weights (geomean 1.03x, 0.99-1.16x), so K-major ones take DECODE[64]. An
# N-major weight keeps the plain tile to 64 rows (nmajor/: swap-AB 4-6% behind at K = 8192, 7% ahead at 18944x3584),
# as do batched products (not measured).
DECODE_WIDE = GemmConfig(block_m=64, block_n=128, block_k=128, stages=4, consumer_warps=4)
DECODE_WIDE_MIN_ROWS, DECODE_WIDE_MAX_ROWS = 33, 47
DECODE_WIDE_MIN_WAVE = 0.75  # tiles of 128 weight rows, as a fraction of the SMs

# grouped_mm's tile for 64+ groups of >= 64 rows on average: bands of 4 tile-rows instead of 8
# (results/2026-11-22-issue4-mid/moe_probe*.json: faster on 11 of 12 fine-grained cases by 1-6%, slower with 8 experts).
GROUPED_LARGE = LARGE.replace(group_m=4)
# The same bands with 128-wide tiles and 128-deep K steps, for 64+ groups when N leaves the last 256-wide column of
# tiles mostly empty (N = 1408: 6 columns of 256 hold 1536; 11 of 128 hold it exactly). The 128-deep step reads 256
# contiguous bytes of each weight row per load, which streams weights better than 128 (E64 T8192 K2048 N1408:
# 0.99/1.01/1.03x -> 1.01/1.06/1.12x torch._grouped_mm for uniform/skewed/empty routing; 128x128x64 tiles were
# 0.89 where 128x256 made 1.07: results/2026-11-22-moe-swap/moe_bk128_probe*.json). Also for 64+ groups of 33-64
# rows on average, any N: 3-8% faster than the 64x128 tile there, uniform or skewed
# (results/2026-11-24-moe-sparse/moe_sparse_*.json).
GROUPED_NARROW_N = GemmConfig(block_m=128, block_n=128, block_k=128, stages=3, consumer_warps=4, group_m=4)
# grouped_mm with few rows per group (decode-time MoE, weight streaming): swap-AB with 32 of a group's rows per tile
# (results/2026-11-22-moe-swap/moe_swap_probe.json: 1.01-1.17x torch._grouped_mm on 15 cases of 1-16 mean rows per
# group, against 0.97-1.13x for the 64x128 tile; 16-row tiles lose where skewed groups need several of them). Past 16
# mean rows the skewed cases lose (moe_swap_probe_mean32_64.json: 0.50-0.94x at 32-64 rows), as every tile of a
# big group re-reads its weight panel.
GROUPED_SWAP = DECODE[32]
GROUPED_SWAP_MEAN_ROWS = 16
# grouped_mm when no group has a second row tile (decided on the device, from the row-tile table): every weight panel
# is read by one tile, so the call streams the experts' weights, and 128-deep K steps (256 contiguous bytes of each
# weight row per load) stream them better. Measured with one 128-row tile per expert (uniform routing,
# results/2026-11-22-moe-swap/moe_bk128_probe2.json): E128 T16384 K7168 N2048 0.936 -> 1.019x torch._grouped_mm,
# E256 T32768 1.003 (was 0.893); on routings where groups span several tiles the same tile loses 3-15%, hence the
# device-side choice between the two (grouped.py). In `bench moe` with it: 1.016x and 1.002x
# (results/2026-11-22-moe-stream-dispatch/).
GROUPED_STREAM = GemmConfig(block_m=128, block_n=256, block_k=128, stages=2, consumer_warps=8, group_m=4,
                            store_chunks=4)

# The MoE weight gradient (grouped_mm's ragged-K form) with up to 128 tokens a group and a large output per group:
# the same chunked-store tile, walking each group's tiles one tile-row at a time. Every group's output (29 MB at
# K7168 N2048) streams through the L2 while its tiles run; bands of 8 tile-rows come back to each of dy's column
# panels once per band, and the output stream has evicted them by then: E128 T16384 read 909 MB from DRAM for
# 302 MB of inputs, 633 MB with rows of one (ncu), and ran 2-3% faster against torch._grouped_mm on the K7168 cases
# (results/2026-11-25-wgrad/ragged_band.json).
RAGGED_K_ROWS = LARGE_ONE_WAVE.replace(group_m=1)

# Such rows make every byte dear, and 128x128 tiles read 1.33x the bytes per FLOP of 128x256 ones: with a wave of
# 128x256 tiles the medium-alone rule is skipped where any operand's rows are off sectors (choose_config; unbatched
# products, the ones measured). Where no pair can follow (B read along N), 128x256 tiles ran 1.19-1.26x the 128x128
# plan on 4 shapes and 0.97x on one under a wave (nn_copy_pair.json).
OFF_SECTOR_NO_MEDIUM = True

SHIPPED_CONFIGS: tuple[GemmConfig, ...] = ((LARGE, LARGE_TALL_BANDS, LARGE_ONE_WAVE, LARGE_FP32_OUT, RAGGED_K_ROWS,
                                            WIDE, WIDE_160, MEDIUM, MEDIUM_FP32_OUT, ONE_ROW_DEEP_K, SMALL, NARROW)
                                           + tuple(DECODE.values()) + tuple(DECODE_HALF.values())
                                           + (DECODE_SHORT_K, DECODE_WIDE, GROUPED_LARGE, GROUPED_NARROW_N,
                                              GROUPED_STREAM, CLUSTER_LARGE, CLUSTER_LARGE_FEW_ROWS, CLUSTER_MEDIUM,
                                              CLUSTER_SMALL, CLUSTER_WIDE, CLUSTER_WIDE_160)
                                           + tuple(SWAP_ROWS.values()) + (SPLIT_TILE,))


# fp8 (scaled_mm): the bf16 tiles with K steps of the same 128 bytes (128 fp8 elements), so the ring holds the same
# bytes per stage. Measured against torch._scaled_mm(use_fast_accum=True) (results/2026-11-25-fp8/fp8_sweep.json,
# 3 alternating rounds): one 128x256 tile store with 3 stages is the fastest large tile (16384x4096x4096 1.044 against
# 0.990 for chunked stores and 4 stages, 2048^3 0.83 against 0.65-0.72). Row-wise scales need the chunked store: a
# scale vector over 256 columns spills a warpgroup's registers, per 64-column chunk it does not
# (epilogue.OutputScales.apply_cols), and the freed shared memory buys the 4th stage.
FP8_LARGE = GemmConfig(block_m=128, block_n=256, block_k=128, stages=3, consumer_warps=8, group_m=8)
FP8_LARGE_TALL_BANDS = FP8_LARGE.replace(group_m=16)
FP8_LARGE_ROWWISE = FP8_LARGE.replace(stages=4, store_chunks=4)
FP8_LARGE_ROWWISE_TALL_BANDS = FP8_LARGE_ROWWISE.replace(group_m=16)
FP8_MEDIUM = GemmConfig(block_m=128, block_n=128, block_k=128, stages=6, consumer_warps=4, group_m=8)
FP8_SMALL = GemmConfig(block_m=64, block_n=128, block_k=128, stages=8, consumer_warps=4, group_m=8)
# Few tiles (<= half the SMs' worth of 64x128 ones): 64x64 tiles with 256-byte K steps, twice the SMs streaming
# (128x4096x4096 0.86 -> 0.98x, 128x4096x14336 0.87 -> 0.97x: fp8_sweep.json).
FP8_NARROW = GemmConfig(block_m=64, block_n=64, block_k=256, stages=6, consumer_warps=4, group_m=8)
# Few rows (M <= 64): swap-AB, the weight on wgmma's 64-row side; 256-element (256-byte) K steps, deeper rings.
FP8_DECODE = {
    16: GemmConfig(block_m=64, block_n=16, block_k=256, stages=8, consumer_warps=4, swap_ab=True),
    32: GemmConfig(block_m=64, block_n=32, block_k=256, stages=8, consumer_warps=4, swap_ab=True),
    64: GemmConfig(block_m=64, block_n=64, block_k=256, stages=6, consumer_warps=4, swap_ab=True),
}
# 128x192 tiles where the same tile-count model as bf16's picks them (`wide_tile_time`), against the 128x256 plan or
# the 128x128 one of FP8_SHORT_TAIL (0.55 of a 128x256 tile-time each). Measured against scaled_mm's plan before
# (results/2026-11-26-wide/fp8_wide.json, per-tensor scales, 3 rounds): 1536^3 +14%, 1024x2304x4096 +15%,
# 1280x6912x4096 +10%, 6144x1536x4096 +9%, 3072^3 +5%, 3072^2 x 1024 +3%; 3 stages lose 0-17% to 4.
FP8_WIDE = GemmConfig(block_m=128, block_n=WIDE_BLOCK_N, block_k=128, stages=4, consumer_warps=8, group_m=16,
                      store_chunks=3)
# 128x160 tiles where bf16's WIDE_160 rule picks them (16-bit outputs; fp8 B is always read along K). Measured against
# the plan before and 4 stages (results/2026-11-26-parts/fp8_160.log, per-tensor scales, 3 rounds): 1536^3 0.86 ->
# 0.88x torch._scaled_mm (4 stages 0.92), 1024x2304x4096 0.81 -> 0.87 (4 stages 0.81), 1536x1536x6144 0.80 -> 0.88
# (0.82), 848x5920x6144 0.995 -> 1.036 (0.99). Held out (fp8_160_heldout.json, 12 shapes drawn at random from those
# whose plan the rule changes): 1.057x over the previous plan; the two behind (0.97-0.98x, both against 128x192 tiles)
# were the two at K = 1024, so the rule starts at FP8_WIDE_160_MIN_K (16 K steps of 128).
FP8_WIDE_160 = GemmConfig(block_m=128, block_n=160, block_k=128, stages=5, consumer_warps=8, group_m=8,
                          store_chunks=5)
FP8_WIDE_160_MIN_K = 2048
# The off-sector pairs (off_sector.FP8_CLUSTER_*) with fp8's 128-element K steps; the 3-stage 128x256 one for
# per-tensor scales only (its unchunked store, as FP8_LARGE's; scaled.plan), the 4-stage chunked one for either.
FP8_CONFIGS: tuple[GemmConfig, ...] = (FP8_LARGE, FP8_LARGE_TALL_BANDS, FP8_LARGE_ROWWISE, FP8_LARGE_ROWWISE_TALL_BANDS,
                                       FP8_MEDIUM, FP8_SMALL, FP8_NARROW, FP8_WIDE, FP8_WIDE_160, FP8_CLUSTER_LARGE,
                                       FP8_CLUSTER_LARGE_FEW_ROWS, FP8_CLUSTER_SMALL) \
    + tuple(FP8_DECODE.values()) + tuple(SWAP_ROWS_FP8.values())
# 128x256 tiles that make 1-4 waves with a last wave under half full take 128x128 tiles instead (1024x14336x4096:
# 3.4 waves, 0.90 -> 0.96x); the bf16 path splits such a tail off into a second launch instead.
FP8_SHORT_TAIL = 0.5


def choose_fp8_config(M: int, N: int, K: int, out_dtype: torch.dtype, num_sms: int,
                      rowwise: bool = False) -> tuple[GemmConfig, str]:
    """The config for an fp8 (M, N, K) product, by tile-count rules like `choose_config`'s (of its 256-511-row rule
    only the partial-last-row half; not its 128x128-alone or short-K rules, measured on bf16 only); a config whose
    output tile does not fit beside its ring (fp32 outputs) gives up stages until it does. rowwise: per-row and
    per-column scales (the large tile then stores in column chunks)."""
    tiles_128 = cdiv(M, 128) * cdiv(N, 128)
    tiles_large = cdiv(M, 128) * cdiv(N, 256)
    tiles_small = cdiv(M, 64) * cdiv(N, 128)
    waves = tiles_large / num_sms
    if M <= 64:
        cfg = FP8_DECODE[16 if M <= 16 else 32 if M <= 32 else 64]
        why = f"M={M} <= 64: swap-AB, whole {cfg.block_m}-row weight tiles"
    elif tiles_small <= num_sms // 2:
        cfg, why = FP8_NARROW, f"{tiles_small} 64x128 tiles for {num_sms} SMs: 64x64 tiles"
    elif tiles_128 < num_sms // 2 or (M <= 128 and tiles_128 < num_sms):
        cfg, why = FP8_SMALL, f"{tiles_128} 128x128 tiles for {num_sms} SMs: 64x128 tiles"
    elif M >= 512 and 1 < waves < 4 and waves % 1 < FP8_SHORT_TAIL:
        cfg, why = FP8_MEDIUM, f"{tiles_large} 128x256 tiles make {waves:.2f} waves: 128x128 tiles (shorter last wave)"
    elif M >= 512 and tiles_large >= num_sms // 2:
        tall = cdiv(M, 128) >= TALL_BAND_MIN_ROW_TILES
        if rowwise:
            cfg = FP8_LARGE_ROWWISE_TALL_BANDS if tall else FP8_LARGE_ROWWISE
        else:
            cfg = FP8_LARGE_TALL_BANDS if tall else FP8_LARGE
        why = "enough 128x256 tiles to fill the SMs" + ("; bands of 16 tile-rows" if tall else "")
    elif (out_dtype.itemsize == 2 and M >= FP8_FEW_ROWS_MIN_M and tiles_large >= num_sms // 2
          and 0 < M % 128 <= 64):
        # choose_config's 256-511-row rule, its last-row half only: measured (results/2026-11-26-medium/
        # fp8_few_rows.json, per-tensor scales, against FP8_MEDIUM) 5 of 6 such shapes ahead by 8-33% (288x16384x4096
        # 0.69 -> 0.83x torch._scaled_mm), one behind by 2% (400x18432x2048). With M a multiple of 128 the two shapes
        # measured split (384x20480x4096 +4%, 256x28672x4096 -2.5%): those stay on FP8_MEDIUM.
        cfg, why = FP8_LARGE_ROWWISE, (f"M={M} < 512, {tiles_large} 128x256 tiles: 128x256 tiles, 4 stages, "
                                       "chunked stores")
    else:
        cfg, why = FP8_MEDIUM, "128x128 tiles"
    if M >= 512 and tiles_large >= num_sms // 2:
        # The plan's time in 128x256 wave-times, against 128x192 tiles' (as choose_config weighs them).
        plan = (cdiv(tiles_128, num_sms) * TAIL_TILE_TIME if cfg == FP8_MEDIUM
                else float(cdiv(tiles_large, num_sms)))
        wide = wide_tile_time(1, M, N, num_sms)
        wide_160 = (wide_tile_time(1, M, N, num_sms, FP8_WIDE_160, WIDE_160_TILE_TIME)
                    if out_dtype.itemsize == 2 and K >= FP8_WIDE_160_MIN_K else float("inf"))
        if wide_160 < wide and wide_160 <= WIDE_MIN_GAIN * plan:
            cfg, why = FP8_WIDE_160, (f"128x160 tiles: {wide_160:.2f} 128x256 wave-times against {plan:.2f} for "
                                      f"{cfg.name} and {wide:.2f} for 128x192 tiles")
        elif wide <= WIDE_MIN_GAIN * plan:
            cfg, why = FP8_WIDE, f"128x192 tiles: {wide:.2f} 128x256 wave-times against {plan:.2f} for {cfg.name}"
    first = cfg
    while check_config(cfg, torch.float8_e4m3fn, out_dtype) is not None and cfg.stages > 2:
        cfg = cfg.replace(stages=cfg.stages - 1)
    if cfg != first:
        why += f"; {first.name} does not fit a {out_dtype} output, {cfg.stages} stages do"
    return cfg, why


# Column split of the last wave (tail_split_columns): the tail's tile, its time per tile relative to LARGE's
# (half the area, a little less efficient), the cost of the second launch in LARGE tile-times at K = TAIL_COST_K, and
# the least gain worth a second launch. The launch's cost is a time of its own, so in tile-times it grows as K (the
# tiles) shortens: measured on 5 split shapes at K = 1024-2048 the 128x128 tiles alone beat the split by 1-13%,
# where at K = 4096-8192 the split mostly won (results/2026-11-26-medium/split_vs_medium.json). Grown only up to
# TAIL_SHORT_K.
TAIL = MEDIUM
TAIL_TILE_TIME = 0.55
TAIL_LAUNCH_COST = 0.1
TAIL_COST_K = 4096
TAIL_SHORT_K = 2048  # only measured there; at K = 3072 the one shape measured lost 2% (short_k_rule.json)
TAIL_MIN_GAIN = 0.93


def tail_split_columns(batches: int, M: int, N: int, K: int, cfg: GemmConfig, num_sms: int) -> int:
    """n1 > 0: compute columns [0, n1) with `cfg` and [n1, N) in a second launch with TAIL tiles; 0: one launch.

    Only for LARGE over 2+ waves: time is counted in waves of LARGE tiles (each program runs its tiles one after
    another), and a split is taken when it is predicted TAIL_MIN_GAIN or less of the one-launch time. Example:
    1024x14336 has 8 x 56 = 448 tiles = 3.4 waves on 132 SMs, 4 wave-times; columns [0, 12544) are 392 tiles
    (3 waves), the last 1792 columns 112 128x128 tiles (one short wave): 3.65 predicted at K >= 2048."""
    return _tail_split(batches, M, N, K, cfg, num_sms)[0]


def _tail_split(batches: int, M: int, N: int, K: int, cfg: GemmConfig, num_sms: int) -> tuple[int, float]:
    """(n1, predicted time in LARGE wave-times) of `cfg`'s plan: the column split, or n1 = 0 and one launch."""
    launch_cost = TAIL_LAUNCH_COST * (TAIL_COST_K / max(K, 1) if K <= TAIL_SHORT_K else 1.0)
    rows = batches * cdiv(M, cfg.block_m)
    tiles_n = cdiv(N, cfg.block_n)
    one_launch = cdiv(rows * tiles_n, num_sms)
    if cfg not in (LARGE, LARGE_TALL_BANDS) or one_launch < 2:
        return 0, float(one_launch)
    best, best_time = 0, one_launch * TAIL_MIN_GAIN
    for cols in range(tiles_n - 1, 0, -1):  # LARGE tile columns kept in the first launch
        n1 = cols * cfg.block_n
        tail_tiles = batches * cdiv(M, TAIL.block_m) * cdiv(N - n1, TAIL.block_n)
        t = cdiv(rows * cols, num_sms) + cdiv(tail_tiles, num_sms) * TAIL_TILE_TIME + launch_cost
        if t < best_time:
            best, best_time = n1, t
    return best, (best_time if best else float(one_launch))


def medium_tile_time(batches: int, M: int, N: int, num_sms: int, tile_time: float = TAIL_TILE_TIME) -> float:
    """Predicted time of MEDIUM (128x128) tiles alone, in 128x256 wave-times. Chosen where it is at most the 128x256
    plan's and the 128x192 tile's: measured on 19 shapes where the model has it ahead or tied (512-6912 x 768-5888,
    K = 4096; results/2026-11-26-medium/medium_alone.json) it beat the plan then shipped on every one, 1.00-1.33x
    (geomean 1.10x); at ties the column split's second launch costs more than TAIL_LAUNCH_COST says."""
    return cdiv(batches * cdiv(M, MEDIUM.block_m) * cdiv(N, MEDIUM.block_n), num_sms) * tile_time


def wide_tile_time(batches: int, M: int, N: int, num_sms: int, cfg: GemmConfig = WIDE,
                   tile_time: float = WIDE_TILE_TIME) -> float:
    """Predicted time of WIDE (or WIDE_160) tiles, in 128x256 wave-times (compare `_tail_split`'s)."""
    return cdiv(batches * cdiv(M, cfg.block_m) * cdiv(N, cfg.block_n), num_sms) * tile_time


# Programs of a whole-tile launch whose product has at least this many rows and columns (compute-bound enough that
# concurrent tiles slow each other down): cdiv(tiles, waves), so every program runs the same number of tiles
# instead of a last wave on a few SMs after a first wave that ran every SM. Same makespan in tiles, fewer tiles
# contending in the full waves (results/2026-11-22-grid-balance/grid_balance_probe.json: 256x14336x4096 0.914 ->
# 0.947x cuBLAS, 256x28672x8192 0.941 -> 1.000x). Weight-streaming shapes (M = 1-128) keep every SM: there the
# balanced grid was 0-4% slower. Many-wave launches too (None: no limit on waves): sustained at the power cap, 128
# programs instead of 132 ran five of six dense shapes 0.2-0.8% faster, one 0.1% slower (session 32, notes/perf.md).
BALANCED_GRID_MIN_DIM = 256
BALANCED_GRID_MAX_WAVES: int | None = None


def persistent_grid(tiles: int, num_sms: int, rows: int, cols: int) -> int:
    """The number of programs of a plain persistent launch of `tiles` whole tiles over a rows x cols product."""
    grid = min(num_sms, tiles)
    if (rows >= BALANCED_GRID_MIN_DIM and cols >= BALANCED_GRID_MIN_DIM and 0 < tiles
            and (BALANCED_GRID_MAX_WAVES is None or cdiv(tiles, grid) <= BALANCED_GRID_MAX_WAVES)):
        grid = cdiv(tiles, cdiv(tiles, grid))
    return grid


def gemv_reason(batches: int, M: int, b_k_contiguous: bool, in_dtype: torch.dtype) -> str | None:
    """Why a product goes to the CUDA-core GEMV instead of the wgmma kernel, or None if it does not.

    Measured on the six decode weights: one row (results/2026-11-22-gemv/) 2.51-3.08 TB/s against 2.44-2.99 for
    the persistent swap-AB kernel (+0.3% to +5.6%), since its short programs keep every SM streaming to the end;
    two rows (kernels/gemv_rows.py, results/2026-11-23-gemv-rows/) 2.61-3.09 against 2.44-3.03. At four rows it
    is at or below the swap-AB kernel and at eight 20-28% below; three rows (padded to four) stay on the wgmma
    kernel too (kernels/gemv.py MAX_ROWS). A weight not contiguous along K defeats its loads.
    """
    from .kernels import gemv

    if batches == 1 and M <= gemv.MAX_ROWS and b_k_contiguous and in_dtype in (torch.bfloat16, torch.float16):
        if M <= gemv.TRITON_MAX_ROWS:
            kernel, rows = "kernels/gemv.py", gemv.BLOCK_N
        else:
            from .kernels import gemv_rows

            kernel, rows = "Gluon, kernels/gemv_rows.py", gemv_rows.BLOCK_N
        return (f"M={M}: CUDA-core GEMV ({kernel}), {rows} weight rows per program over all of K (short programs "
                f"balance the weight stream over the SMs)")
    return None


def decode_config(M: int, K: int, weight_tiles: int, num_sms: int) -> GemmConfig:
    """The swap-AB tile for M <= 64 rows; weight_tiles: the 64-row tiles of the weight (all batches')."""
    if M <= 16 and K <= DECODE_SHORT_K_MAX_K:
        return DECODE_SHORT_K
    if M > 16 and weight_tiles <= DECODE_HALF_MAX_SHARE * num_sms:
        return DECODE_HALF[32 if M <= 32 else 64]
    return DECODE[16 if M <= 16 else 32 if M <= 32 else 64]


@functools.lru_cache(maxsize=4096)
def choose_config(batches: int, M: int, N: int, K: int, in_dtype: torch.dtype, out_dtype: torch.dtype,
                  num_sms: int, b_kmajor: bool = True, rows_off_sector: bool = False) -> tuple[GemmConfig, str]:
    """The config for a (batches, M, N, K) problem and a short reason (for WARPGEMM_LOG / explain). b_kmajor: B is
    read along K (an nn.Linear weight's W.T); False leaves out what was measured only on such a B (WIDE_160; swap-AB
    at 48-64 rows against a wide weight). rows_off_sector: an operand's rows start off 32-byte sectors
    (OFF_SECTOR_NO_MEDIUM); the cluster pairs for such rows (off_sector.off_sector_config) come after, in
    ops/gemm_impl.py."""
    order, why = _large_or_other(batches, M, N, K, num_sms, b_kmajor)
    if order[0] == NARROW:  # few tiles: over a long K, 128x128 tiles cut along K (few_tiles_split.py)
        split = few_tiles_split(batches, M, N, K, num_sms, in_dtype)
        # Checked here so that outputs it does not fit (fp32) keep NARROW's reason, not a "does not fit" one.
        if split is not None and check_config(split[0], in_dtype, out_dtype) is None:
            order, why = (split[0],) + order, f"{why}; {split[1]}"
    # FEW_ROWS_WIDE consults swap_rows_config (and so its settings): its cached answers follow them too, and a probe
    # that changes a swap_rows setting clears choose_config's cache.
    if (FEW_ROWS_WIDE and batches == 1 and b_kmajor and not rows_off_sector and FEW_ROWS_LARGE_MIN_M <= M < 512
            and out_dtype.itemsize == 2 and order[0] in (LARGE_ONE_WAVE, MEDIUM)
            and check_config(WIDE, in_dtype, out_dtype) is None
            and swap_rows_config(order[0], 1, M, N, num_sms, in_dtype, out_dtype) is None):
        wide, large = wide_tile_time(1, M, N, num_sms), float(cdiv(cdiv(M, 128) * cdiv(N, 256), num_sms))
        medium = medium_tile_time(1, M, N, num_sms, PLAIN_TILE_TIME[(128, 128)])
        if wide <= WIDE_MIN_GAIN * min(large, medium):
            why = (f"M={M} < 512: 128x192 tiles, {wide:.2f} 128x256 wave-times against {large:.2f} for 128x256 "
                   f"and {medium:.2f} for 128x128 tiles")
            order = (WIDE,) + order
    elif M >= 512 and order[0] in (LARGE, LARGE_ONE_WAVE, LARGE_TALL_BANDS):
        # Weighed against the 128x256 config that fits these dtypes (fp32 outputs: LARGE_FP32_OUT, never split).
        plan = next((c for c in order if c.block_n == 256 and check_config(c, in_dtype, out_dtype) is None), None)
        if plan is not None:
            n1, large = _tail_split(batches, M, N, K, plan, num_sms)
            wide = wide_tile_time(batches, M, N, num_sms)
            wide_160 = (wide_tile_time(batches, M, N, num_sms, WIDE_160, WIDE_160_TILE_TIME)
                        if b_kmajor and check_config(WIDE_160, in_dtype, out_dtype) is None else float("inf"))
            medium = medium_tile_time(batches, M, N, num_sms)
            split = " with its column split" if n1 else ""
            dear_bytes = (rows_off_sector and OFF_SECTOR_NO_MEDIUM and batches == 1
                          and cdiv(M, 128) * cdiv(N, 256) >= num_sms)
            if (medium <= min(large, wide, wide_160) and check_config(MEDIUM, in_dtype, out_dtype) is None
                    and not dear_bytes):
                why = (f"128x128 tiles: {medium:.2f} 128x256 wave-times against {large:.2f} for {plan.name}{split}"
                       f" and {min(wide, wide_160):.2f} for 128x{192 if wide <= wide_160 else 160} tiles")
                order = (MEDIUM,) + order
            elif wide_160 < wide and wide_160 <= WIDE_MIN_GAIN * large:
                why = (f"128x160 tiles: {wide_160:.2f} 128x256 wave-times against {large:.2f} for {plan.name}{split}"
                       f" and {wide:.2f} for 128x192 tiles")
                order = (WIDE_160,) + order
            elif wide <= WIDE_MIN_GAIN * large:
                why = f"128x192 tiles: {wide:.2f} 128x256 wave-times against {large:.2f} for {plan.name}{split}"
                order = (WIDE,) + order
    for cfg in order:
        if check_config(cfg, in_dtype, out_dtype) is None:
            if cfg != order[0]:
                why += f"; {order[0].name} does not fit {in_dtype}->{out_dtype}, {cfg.name} is the next that does"
            return cfg, why
    for cfg in SHIPPED_CONFIGS:
        if check_config(cfg, in_dtype, out_dtype) is None:
            return cfg, "fallback: first shipped config valid for the dtypes"
    raise AssertionError("no shipped config is valid")  # the test suite keeps this unreachable


def _large_or_other(batches: int, M: int, N: int, K: int, num_sms: int,
                    b_kmajor: bool = True) -> tuple[tuple[GemmConfig, ...], str]:
    """The configs to try in order, and why, before the two-part-width tiles and 128x128 tiles alone are weighed."""
    tiles_128 = batches * cdiv(M, 128) * cdiv(N, 128)
    tiles_large = batches * cdiv(M, 128) * cdiv(N, 256)
    tiles_small = batches * cdiv(M, 64) * cdiv(N, 128)
    panels, wide_max = batches * cdiv(N, 128), DECODE_WIDE_MAX_ROWS if b_kmajor and batches == 1 else 64
    if DECODE_WIDE_MIN_ROWS <= M <= wide_max and panels >= DECODE_WIDE_MIN_WAVE * num_sms:
        order, why = (DECODE_WIDE, SMALL, MEDIUM_FP32_OUT), \
            f"M={M} in 33-{wide_max} and {panels} 128-row weight panels for {num_sms} SMs: plain 64x128 tiles"
    elif M <= 64:
        weight_tiles = batches * cdiv(N, 64)
        cfg = decode_config(M, K, weight_tiles, num_sms)
        half = (f"; K={K} <= {DECODE_SHORT_K_MAX_K}: short 64-row tiles" if M <= 16 else
                f"; {weight_tiles} 64-row tiles would fill few of {num_sms} SMs")
        order, why = (cfg, SMALL, MEDIUM_FP32_OUT), \
            (f"M={M} <= 64: swap-AB (weight rows on wgmma's M side), whole {cfg.block_m}-row tiles "
             "(stream-K and split-K measured slower)" + (half + ", so twice as many of 32 rows"
                                                          if cfg.block_m < 64 else ""))
    elif tiles_small <= num_sms // 2:
        order, why = (NARROW, SMALL, MEDIUM_FP32_OUT), f"{tiles_small} 64x128 tiles for {num_sms} SMs: 64x64 tiles"
    elif tiles_128 < num_sms // 2 or (M <= 128 and tiles_128 < num_sms):
        order, why = (SMALL, MEDIUM_FP32_OUT), f"{tiles_128} 128x128 tiles for {num_sms} SMs: 64x128 tiles"
    elif batches == 1 and ONE_ROW_MIN_M <= M <= ONE_ROW_MAX_M:
        # One tile-row (72-128 rows) and at least a wave of 128x128 tiles (ONE_ROW_DEEP_K's comment).
        if cdiv(tiles_small, num_sms) * TAIL_TILE_TIME < cdiv(tiles_128, num_sms):
            order, why = (SMALL, MEDIUM_FP32_OUT), \
                (f"M={M}: {tiles_small} 64x128 tiles make fewer tile-times than {tiles_128} 128x128 ones "
                 "(weight streaming, one tile-row): 64x128 tiles")
        else:
            order, why = (ONE_ROW_DEEP_K, MEDIUM, MEDIUM_FP32_OUT), \
                f"M={M}, {tiles_128} 128x128 tiles (one tile-row, weight streaming): 128-deep K steps, 3 stages"
    elif M >= 512 and num_sms // 2 <= tiles_large <= num_sms:
        order, why = (LARGE_ONE_WAVE, LARGE, LARGE_FP32_OUT, MEDIUM, MEDIUM_FP32_OUT), \
            f"{tiles_large} 128x256 tiles: one wave, chunked stores and a 4th stage"
    elif (M >= 512 and batches == 1 and cdiv(M, 128) <= FEW_WAVES_MAX_ROW_TILES
          and num_sms < tiles_large <= FEW_WAVES_MAX * num_sms and not _tail_split(1, M, N, K, LARGE, num_sms)[0]):
        order, why = (LARGE_ONE_WAVE, LARGE, LARGE_FP32_OUT, MEDIUM, MEDIUM_FP32_OUT), \
            (f"M={M} ({cdiv(M, 128)} tile-rows), {tiles_large} 128x256 tiles: at most {FEW_WAVES_MAX} waves, "
             "chunked stores and a 4th stage")
    elif M >= 512 and tiles_large >= num_sms // 2 and cdiv(M, 128) >= TALL_BAND_MIN_ROW_TILES:
        order, why = (LARGE_TALL_BANDS, LARGE, LARGE_FP32_OUT, MEDIUM, MEDIUM_FP32_OUT), \
            f"enough 128x256 tiles to fill the SMs; {cdiv(M, 128)} tile-rows: bands of 16 (fewer HBM bytes per wave)"
    elif M >= 512 and tiles_large >= num_sms // 2:
        order, why = (LARGE, LARGE_FP32_OUT, MEDIUM, MEDIUM_FP32_OUT), "enough 128x256 tiles to fill the SMs"
    elif batches == 1 and M >= FEW_ROWS_LARGE_MIN_M and tiles_large >= num_sms // 2 and (
            0 < M % 128 <= 64 or cdiv(tiles_large, num_sms) < cdiv(tiles_128, num_sms) * TAIL_TILE_TIME):
        # fp32 outputs stay on MEDIUM_FP32_OUT (LARGE_FP32_OUT was not measured at these rows).
        order, why = (LARGE_ONE_WAVE, MEDIUM, MEDIUM_FP32_OUT), \
            (f"M={M} < 512, {tiles_large} 128x256 tiles: "
             + ("the last tile-row at most half full" if 0 < M % 128 <= 64 else
                f"fewer wave-times than {tiles_128} 128x128 tiles")
             + ": 128x256 tiles, chunked stores and a 4th stage")
    else:
        order, why = (MEDIUM, MEDIUM_FP32_OUT), "128x128 tiles, 6-stage ring"
    return order, why
