"""GemmConfig validity and the heuristics (pure host logic)."""
import itertools

import pytest
import torch

from warpgemm.config import SMEM_LIMIT, GemmConfig, check_config, launch_warps, worker_consumer_regs
from warpgemm.heuristics import (DECODE, DECODE_WIDE, LARGE_ONE_WAVE, MEDIUM, NARROW, SHIPPED_CONFIGS, SMALL,
                                 choose_config, persistent_grid)

DTYPES = [(torch.bfloat16, torch.bfloat16), (torch.float16, torch.float16), (torch.bfloat16, torch.float32),
          (torch.float16, torch.float32)]


@pytest.mark.parametrize("cfg", SHIPPED_CONFIGS, ids=lambda c: c.name)
def test_shipped_configs_are_valid_for_16bit_outputs(cfg):
    for dt in (torch.bfloat16, torch.float16):
        assert check_config(cfg, dt, dt) is None
        assert cfg.smem_bytes(dt, dt) <= SMEM_LIMIT


@pytest.mark.parametrize("bad, reason", [
    (GemmConfig(block_m=96), "block_m must be"),
    (GemmConfig(block_n=100), "block_n must be"),
    # 192 columns only as whole plain tiles in three 64-column store chunks (two accumulators, 64-row B boxes).
    (GemmConfig(block_n=192), "block_n=192 runs whole plain"),
    (GemmConfig(block_n=192, store_chunks=3, split_k=2), "block_n=192 runs whole plain"),
    (GemmConfig(block_n=192, store_chunks=3, stream_k=True), "block_n=192 runs whole plain"),
    (GemmConfig(block_m=64, block_n=192, consumer_warps=4, store_chunks=3, consumers=2), "block_n=192"),
    (GemmConfig(block_m=64, block_n=192, consumer_warps=4, store_chunks=3, stages=5), "block_n=192"),
    (GemmConfig(block_n=144, store_chunks=9, cluster_m=2), "two-part pairs are 160 and 192"),
    (GemmConfig(block_n=96, block_m=128, store_chunks=3, cluster_m=2), "two-part pairs are 160 and 192"),
    (GemmConfig(block_n=128, store_chunks=3), "store_chunks must be"),
    (GemmConfig(block_n=192, store_chunks=3, consumer_warps=4), "block_n=192"),
    # Other two-part widths: chunks as wide as the rest (144 = 128 + 16: nine of 16 columns).
    (GemmConfig(block_n=144, stages=6, store_chunks=3), "stored in 9 16-column chunks"),
    (GemmConfig(block_n=160, stages=5, store_chunks=5, split_k=2), "block_n=160 runs whole plain"),
    (GemmConfig(block_n=112), "block_n must be one of"),
    (GemmConfig(block_k=16), "block_k must be"),
    (GemmConfig(consumer_warps=2), "consumer_warps"),
    (GemmConfig(block_m=64, consumer_warps=8), "too small"),
    (GemmConfig(block_m=256, block_n=256, consumer_warps=8, stages=2), "registers per thread"),
    (GemmConfig(stages=5), "shared memory"),
    (GemmConfig(stages=1), "stages"),
    (GemmConfig(producer_regs=30), "producer_regs"),
])
def test_invalid_configs_say_why(bad, reason):
    msg = check_config(bad, torch.bfloat16, torch.bfloat16)
    assert msg is not None and reason in msg


def test_32_row_tiles_need_a_k_contiguous_weight():
    """The one layout rule: it names the config and the layout; other configs take either layout."""
    from warpgemm.heuristics import DECODE_SHORT_K
    bf = torch.bfloat16
    msg = check_config(DECODE_SHORT_K, bf, bf, weight_k_contiguous=False)
    assert msg is not None and DECODE_SHORT_K.name in msg and "contiguous along K" in msg
    assert check_config(DECODE_SHORT_K, bf, bf, weight_k_contiguous=True) is None
    assert check_config(DECODE_SHORT_K, bf, bf) is None  # layout left out
    for cfg in SHIPPED_CONFIGS:
        # Two-part widths: test_192_column_tiles, test_two_part_widths.
        if cfg.block_m >= 64 and cfg.b_pieces_for(True) == 1:
            assert check_config(cfg, bf, bf, weight_k_contiguous=False) == check_config(cfg, bf, bf)


def test_192_column_tiles():
    """The first two-part width (128 + 64): three 64-wide B boxes (either weight layout), and shared memory counted
    for all 192 columns."""
    from warpgemm.kernels.hopper.gemm import operand_blocks
    bf = torch.bfloat16
    cfg = GemmConfig(128, 192, 64, 4, 8, store_chunks=3)
    assert check_config(cfg, bf, bf) is None and check_config(cfg, bf, torch.float32) is None
    assert check_config(cfg.replace(stages=5), bf, bf) is not None  # 5 x 40 KB ring + 32 KB of store buffers
    assert cfg.b_pieces_for(True) == cfg.b_pieces_for(False) == 3 and GemmConfig().b_pieces_for(True) == 1
    assert GemmConfig(cluster_m=2).b_pieces_for(True) == GemmConfig(cluster_m=2).b_pieces_for(False) == 2
    pair = cfg.replace(cluster_m=2)  # each CTA loads 3 of 6 32-row boxes
    assert pair.b_pieces_for(True) == 6 and check_config(pair, bf, bf) is None
    assert operand_blocks(pair, True, True) == ((1, 128, 64), (1, 32, 64), (1, 128, 64))
    assert "16-bit inputs only" in check_config(pair.replace(block_k=128), torch.float8_e4m3fn, bf)
    assert operand_blocks(cfg, True, True) == ((1, 128, 64), (1, 64, 64), (1, 128, 64))
    assert check_config(cfg, bf, bf, weight_k_contiguous=False) is None  # N-major: three 64-column boxes
    assert operand_blocks(cfg, True, False) == ((1, 128, 64), (1, 64, 64), (1, 128, 64))
    assert cfg.name == "128x192x64_s4_w8_g8_c3"


def test_two_part_widths():
    """Widths of a power-of-two main part and a smaller power-of-two rest: B in rest-wide boxes, the output in
    rest-wide chunks, shared memory counted for the whole width."""
    from warpgemm.config import TWO_PART_WIDTHS, width_parts
    from warpgemm.kernels.hopper.gemm import operand_blocks
    bf = torch.bfloat16
    assert [width_parts(w) for w in TWO_PART_WIDTHS] == [(64, 16), (64, 32), (128, 16), (128, 32), (128, 64)]
    assert width_parts(256) == (256, 0) and width_parts(16) == (16, 0)
    cfg = GemmConfig(128, 144, 64, 6, 8, store_chunks=9)
    assert check_config(cfg, bf, bf) is None and check_config(cfg, bf, torch.float32) is None
    assert check_config(cfg.replace(stages=7), bf, bf) is not None  # 7 x 34 KB ring + 8 KB of chunk buffers
    assert cfg.b_pieces_for(True) == 9 and cfg.name == "128x144x64_s6_w8_g8_c9"
    assert operand_blocks(cfg, True, True) == ((1, 128, 64), (1, 16, 64), (1, 128, 16))
    assert operand_blocks(cfg, False, False) == ((1, 64, 128), (1, 64, 16), (1, 128, 16))
    assert GemmConfig(128, 160, 64, 5, 8, store_chunks=5).b_pieces_for(True) == 5
    assert GemmConfig(128, 80, 64, 7, 8, store_chunks=5).b_pieces_for(True) == 5
    assert GemmConfig(128, 96, 64, 7, 8, store_chunks=3).b_pieces_for(True) == 3


def test_fp32_output_rejects_the_large_tile():
    big = SHIPPED_CONFIGS[0]
    assert check_config(big, torch.bfloat16, torch.float32) is not None


@pytest.mark.parametrize("in_dt, out_dt", DTYPES)
def test_heuristics_always_return_a_valid_config(in_dt, out_dt):
    sizes = [1, 7, 64, 65, 128, 1000, 4096, 8192, 16384]
    for b, m, n, k in itertools.product([1, 4], sizes, sizes, [1, 4096]):
        cfg, why = choose_config(b, m, n, k, in_dt, out_dt, 132)
        assert check_config(cfg, in_dt, out_dt) is None, (b, m, n, k, cfg)
        assert why


def test_big_problems_use_the_widest_tile():
    cfg, _ = choose_config(1, 8192, 8192, 8192, torch.bfloat16, torch.bfloat16, 132)
    assert (cfg.block_m, cfg.block_n, cfg.consumer_warps) == (128, 256, 8)


def test_config_round_trips_through_the_op_boundary():
    for cfg in SHIPPED_CONFIGS:
        assert GemmConfig.from_list(cfg.to_list()) == cfg
    with pytest.raises(Exception):
        SHIPPED_CONFIGS[0].block_m = 64  # frozen


def test_launch_warps_fit_the_register_file():
    for cfg in SHIPPED_CONFIGS + (GemmConfig(128, 128, 64, 5, 4, consumers=2),):
        warps, maxnreg = launch_warps(cfg)
        assert warps == cfg.consumer_warps
        assert (cfg.consumers * warps + 4) * 32 * maxnreg <= 65536


def test_ping_pong_consumers_share_the_freed_registers():
    """setmaxnreg.inc waits until registers are free: the two consumers may not ask for more than exists."""
    cfg = GemmConfig(128, 128, 64, 5, 4, consumers=2)
    _, maxnreg = launch_warps(cfg)
    worker = worker_consumer_regs(cfg)
    # Triton gives the default consumer what the producer warpgroup and the worker consumer leave.
    default = 3 * maxnreg - worker - cfg.producer_regs
    assert worker >= 200 and default >= 200
    assert 4 * 32 * (worker + default + cfg.producer_regs) <= 65536


@pytest.mark.parametrize("bad, reason", [
    (GemmConfig(128, 128, 64, 4, 8, consumers=2), "consumer_warps must be 4"),
    (GemmConfig(128, 128, 64, 4, 4, consumers=3), "consumers must be"),
    (GemmConfig(128, 128, 64, 4, 4, split_k=9), "split_k must be"),
    (GemmConfig(128, 128, 64, 4, 4, split_k=0), "split_k must be"),
    (GemmConfig(128, 128, 64, 4, 4, consumers=2, split_k=2), "not supported with ping-pong"),
    (GemmConfig(128, 128, 64, 6, 4, consumers=2), "shared memory"),
    (GemmConfig(128, 128, 64, 4, 4, split_k=2, stream_k=True), "choose one"),
    (GemmConfig(128, 128, 64, 4, 4, consumers=2, stream_k=True), "stream_k is not supported with ping-pong"),
    (GemmConfig(128, 128, 64, 4, 4, consumers=2, swap_ab=True), "swap_ab is not supported with ping-pong"),
    (GemmConfig(128, 128, 64, 4, 4, store_chunks=2, stream_k=True), "stream_k stores whole tiles"),
    (GemmConfig(32, 64, 128, 4, 4, store_chunks=2, swap_ab=True), "at least 64 rows through TMA"),
    (GemmConfig(128, 144, 64, 4, 4, store_chunks=9, swap_ab=True), "one warpgroup per 64"),
    (GemmConfig(128, 8, 64, 4, 4, swap_ab=True), "block_n must be"),
    (GemmConfig(128, 16, 128, 7, 4, swap_ab=True), "shared memory"),
    (GemmConfig(32, 16, 256, 5, 4), "block_m=32 runs only under swap_ab"),
    (GemmConfig(32, 16, 256, 5, 4, swap_ab=True, split_k=2), "block_m=32 runs only under swap_ab"),
    (GemmConfig(32, 16, 256, 5, 4, swap_ab=True, stream_k=True), "block_m=32 runs only under swap_ab"),
    (GemmConfig(48, 16, 256, 5, 4, swap_ab=True), "block_m must be 32 (swap_ab), 64"),
    (GemmConfig(32, 16, 256, 6, 4, swap_ab=True), "shared memory"),  # its slots hold 64 rows
    (GemmConfig(128, 128, 64, 4, 4, cluster_m=4), "cluster_m must be 1 or 2"),
    (GemmConfig(128, 128, 64, 4, 4, cluster_m=2, split_k=2), "cluster_m=2 runs whole plain tiles"),
    (GemmConfig(128, 128, 64, 4, 4, cluster_m=2, stream_k=True), "cluster_m=2 runs whole plain tiles"),
    (GemmConfig(128, 16, 128, 6, 4, cluster_m=2, swap_ab=True), "cluster_m=2 runs whole plain tiles"),
    (GemmConfig(128, 128, 64, 4, 4, cluster_m=2, consumers=2), "cluster_m=2 runs whole plain tiles"),
])
def test_invalid_variants_say_why(bad, reason):
    msg = check_config(bad, torch.bfloat16, torch.bfloat16)
    assert msg is not None and reason in msg, msg


def test_config_names_round_trip_through_the_sweep_parser():
    from warpgemm.candidates import CANDIDATES, parse_config

    for cfg in CANDIDATES + SHIPPED_CONFIGS:
        assert parse_config(cfg.name) == cfg


@pytest.fixture
def few_rows_wide_off(monkeypatch):
    """The heuristics without the 129-511-row 128x192 rule (heuristics.FEW_ROWS_WIDE), whose tile overrides the
    128x256 / 128x128 choice these tests pin down (choose_config is cached: cleared around the change)."""
    from warpgemm import heuristics

    choose_config.cache_clear()
    monkeypatch.setattr(heuristics, "FEW_ROWS_WIDE", False)
    yield
    choose_config.cache_clear()


def test_few_tiles_use_64_row_tiles_and_many_use_the_cooperative_tile(few_rows_wide_off):
    pick = lambda m, n: choose_config(1, m, n, 4096, torch.bfloat16, torch.bfloat16, 132)[0]  # noqa: E731
    assert pick(128, 4096) == NARROW           # 64 tiles of 64x128 for 132 SMs: 64x64 tiles
    assert pick(128, 8192) == SMALL            # 128 tiles of 64x128
    assert pick(256, 14336) == LARGE_ONE_WAVE  # 112 128x256 tiles, one wave, against 224 128x128 ones (two)
    assert pick(256, 20480) == MEDIUM          # 160 of them (two waves) against 320 (three, each 0.55)
    assert pick(288, 20480) == LARGE_ONE_WAVE  # a partial last tile-row: 128x256 tiles measured ahead anyway
    # 129-255 rows (two tile-rows) take the same rule (held out: 1.21x over MEDIUM on 16 shapes, 16 ahead).
    assert pick(160, 28672) == LARGE_ONE_WAVE and pick(129, 77616) == LARGE_ONE_WAVE
    assert pick(248, 24576) == MEDIUM          # 192 128x256 tiles (two waves) against 384 (three, each 0.55)
    assert choose_config(2, 160, 28672, 4096, torch.bfloat16, torch.bfloat16, 132)[0] == MEDIUM  # unbatched only
    fp32 = choose_config(1, 288, 20480, 4096, torch.bfloat16, torch.float32, 132)[0]
    assert fp32.block_n == 128  # fp32 outputs stay on 128x128 tiles there (LARGE_FP32_OUT not measured)
    assert pick(128, 14336) == SMALL           # 112 128x128 tiles, under one wave of weight streaming: 64x128
    assert pick(128, 28672).block_m == 128     # 224 of them: 128x128
    assert pick(512, 28672).block_n == 256
    assert pick(256, 4096).block_m == 64


def test_decode_shapes_swap_ab_with_stream_k():
    for m in (1, 4, 16, 17, 32, 64):
        cfg, why = choose_config(1, m, 4096, 4096, torch.bfloat16, torch.bfloat16, 132)
        assert cfg.swap_ab and "swap-AB" in why
        assert cfg.block_n >= m and (cfg.block_n == 16 or cfg.block_n // 2 < m)
    assert not choose_config(1, 65, 4096, 4096, torch.bfloat16, torch.bfloat16, 132)[0].swap_ab


def test_17_to_64_rows_take_32_row_tiles_where_64_row_ones_leave_most_sms_idle():
    from warpgemm.heuristics import DECODE, DECODE_HALF, DECODE_SHORT_K

    pick = lambda m, n, k, batches=1, sms=132: choose_config(batches, m, n, k, torch.bfloat16,  # noqa: E731
                                                              torch.bfloat16, sms)[0]
    for k in (2048, 8192, 14336):
        assert pick(32, 3072, k) == DECODE_HALF[32] and pick(17, 2048, k) == DECODE_HALF[32]
        assert pick(64, 3072, k) == DECODE_HALF[64] and pick(33, 3072, k) == DECODE_HALF[64]
        assert pick(32, 4096, k) == DECODE[32] and pick(64, 4096, k) == DECODE[64]  # 64 tiles: measured a tie or worse
    assert pick(16, 3072, 4096) == DECODE_SHORT_K and pick(16, 3072, 14336) == DECODE[16]  # to 16 rows: K decides
    assert pick(32, 52 * 64, 4096) == DECODE_HALF[32] and pick(32, 52 * 64 + 1, 4096) == DECODE[32]  # 0.4 x 132
    assert pick(32, 3072, 4096, batches=2) == DECODE[32]  # two weights' 96 tiles
    assert pick(32, 3072, 4096, sms=78) == DECODE[32]  # fewer SMs: 48 tiles are most of them
    for cfg in DECODE_HALF.values():
        assert cfg.block_m == 32 and cfg.swap_ab and check_config(cfg, torch.bfloat16, torch.bfloat16) is None


def test_512_to_640_rows_keep_the_one_wave_tile_over_two_waves():
    from warpgemm.heuristics import LARGE

    pick = lambda m, n, k=4096, batches=1: choose_config(batches, m, n, k, torch.bfloat16,  # noqa: E731
                                                          torch.bfloat16, 132)[0]
    assert pick(512, 14336) == LARGE_ONE_WAVE and pick(640, 12288) == LARGE_ONE_WAVE  # 224 / 240 128x256 tiles
    assert pick(512, 8192) == LARGE_ONE_WAVE  # 128 tiles: one wave, as before
    assert pick(768, 11008) == LARGE  # six tile-rows: measured no gain
    assert pick(512, 28672, 8192) == LARGE  # 448 tiles: more than two waves (its tail split stays)
    assert pick(512, 7168, batches=2) == LARGE  # batched (2 x 112 tiles): not measured
    assert pick(512, 12288, 8192) == MEDIUM  # the 128x128 tiles' model still weighs first
    assert pick(512, 16896) == LARGE_ONE_WAVE and pick(512, 16897) != LARGE_ONE_WAVE  # 264 tiles: two waves of 132
    assert pick(640, 12288) == LARGE_ONE_WAVE and pick(641, 12288) != LARGE_ONE_WAVE  # six tile-rows
    # Where LARGE would split off its short last wave the rule stands aside: that plan, priced with its split, is what
    # the 128x128 and 128x192 tiles are weighed against (here with 128x128 tiles barred: rows off 32-byte sectors).
    from warpgemm.heuristics import tail_split_columns
    assert tail_split_columns(1, 512, 10624, 4104, LARGE, 132) == 8448
    off = choose_config(1, 512, 10624, 4104, torch.bfloat16, torch.bfloat16, 132, rows_off_sector=True)[0]
    assert off == LARGE


def test_33_to_47_rows_against_a_wide_weight_use_plain_128_row_weight_panels():
    pick = lambda m, n: choose_config(1, m, n, 4096, torch.bfloat16, torch.bfloat16, 132)[0]  # noqa: E731
    for n in (14336, 28672):
        assert pick(47, n) == DECODE_WIDE and pick(33, n) == DECODE_WIDE
        assert pick(32, n).swap_ab and pick(1, n).swap_ab
        # 48-64 rows: swap-AB's 64-row tiles (measured ahead on 13 of 16 K-major weights)
        assert pick(48, n) == DECODE[64] and pick(64, n) == DECODE[64]
    assert pick(40, 8192).swap_ab  # 64 panels of 128 rows: half the SMs, swap-AB's 64-row tiles stay ahead
    # The rule counts SMs: on a part with fewer of them the same weight fills the wave sooner.
    assert choose_config(1, 40, 8192, 4096, torch.bfloat16, torch.bfloat16, 78)[0] == DECODE_WIDE


def test_48_to_64_rows_against_an_n_major_wide_weight_keep_the_plain_tile():
    """Swap-AB at 48-64 rows was measured ahead on unbatched K-major weights only (N-major: 4-6% behind at K = 8192),
    so a B stored (K, N) row-major keeps the plain 64x128 tile there; the plan that runs says so."""
    from warpgemm.ops import gemm_impl

    def meta(*shape):
        return torch.empty(shape, dtype=torch.bfloat16, device="meta")

    for m, n, k in ((48, 14336, 4096), (64, 28672, 8192)):
        a3, c3 = meta(1, m, k), meta(1, m, n)
        k_major, n_major = meta(n, k).t().unsqueeze(0), meta(1, k, n)
        assert gemm_impl.resolve_config(None, a3, c3, k_major)[0] == DECODE[64]
        cfg, why = gemm_impl.resolve_config(None, a3, c3, n_major)
        assert cfg == DECODE_WIDE and "N-major" in why, why
        assert gemm_impl.plan_hopper(a3, n_major, c3, None, None).config == DECODE_WIDE
    # Batched products (not measured) keep the plain tile too, either layout.
    assert choose_config(2, 64, 8192, 4096, torch.bfloat16, torch.bfloat16, 132)[0] == DECODE_WIDE  # 128 panels
    # Narrow weights and fewer rows are unaffected by the layout.
    for m, n in ((64, 8192), (32, 14336)):
        a3, c3 = meta(1, m, 4096), meta(1, m, n)
        assert gemm_impl.resolve_config(None, a3, c3, meta(1, 4096, n))[0].swap_ab


def test_persistent_grid_balances_compute_bound_launches_only():
    assert persistent_grid(224, 132, 256, 14336) == 112   # 1.7 waves -> two tiles on each of 112 programs
    assert persistent_grid(448, 132, 1024, 14336) == 112   # 3.4 waves -> 4 tiles each
    assert persistent_grid(1792, 132, 4096, 14336) == 128  # 13.6 waves -> 14 tiles on each of 128 programs
    assert persistent_grid(14336, 132, 16384, 28672) == 132  # 108.6 waves: 109 x 132 is the fewest that fit
    assert persistent_grid(224, 132, 128, 14336) == 132   # weight streaming (M = 128): every SM
    assert persistent_grid(448, 132, 14336, 64) == 132    # swap-AB decode: the product has 64 columns
    assert persistent_grid(100, 132, 1024, 1024) == 100 and persistent_grid(0, 132, 512, 512) == 0
    for tiles in [*range(1, 600), *range(600, 20000, 37)]:
        grid = persistent_grid(tiles, 132, 512, 512)
        assert grid <= 132 and -(-tiles // grid) == -(-tiles // min(132, tiles))  # never more waves


def test_cluster_tiles_read_either_weight_layout():
    """A pair of power-of-two tiles splits B's columns between its CTAs in either layout; a two-part pair splits each
    rest-wide box by rows on a K-contiguous weight and takes the boxes in turn on an N-contiguous one (halved, its
    64 columns would be 64-byte rows in a 128-byte swizzle)."""
    from warpgemm.config import weight_layout_problem
    from warpgemm.kernels.hopper.gemm import operand_blocks

    cfg = GemmConfig(128, 256, 64, 3, 8, cluster_m=2)
    assert check_config(cfg, torch.bfloat16, torch.bfloat16) is None
    assert weight_layout_problem(cfg, True) is None and weight_layout_problem(cfg, False) is None
    assert operand_blocks(cfg, True, False)[1] == (1, 64, 128)  # N-major: each CTA loads 128 of the 256 columns
    assert cfg.name.endswith("_cm2") and cfg.b_pieces_for(False) == cfg.b_pieces_for(True) == 2
    wide = GemmConfig(128, 192, 64, 4, 8, store_chunks=3, cluster_m=2)
    assert weight_layout_problem(wide, True) is None and weight_layout_problem(wide, False) is None
    assert check_config(wide, torch.bfloat16, torch.bfloat16, weight_k_contiguous=False) is None
    assert wide.b_pieces_for(True) == 6 and wide.b_pieces_for(False) == 3
    assert operand_blocks(wide, True, False)[1] == (1, 64, 64)


def test_129_to_511_rows_take_192_column_tiles_where_they_need_fewer_tile_times(few_rows_wide_off):
    """heuristics.FEW_ROWS_WIDE: at 129-511 rows 128x192 tiles replace the 128x256 or 128x128 choice where the wave
    model has them ahead of both (128x128 at 0.65 of a 128x256 tile), for unbatched products of a K-major weight whose
    rows sit on 32-byte sectors and 16-bit outputs, unless the swap-rows rule takes the shape; no suite shape
    changes."""
    from warpgemm import heuristics
    from warpgemm.bench.suites import dense_suite, mid_suite, odd_suite
    from warpgemm.heuristics import WIDE

    bf = torch.bfloat16
    assert choose_config(1, 448, 11008, 4096, bf, bf, 132)[0] == LARGE_ONE_WAVE  # the fixture turned the rule off
    choose_config.cache_clear()
    heuristics.FEW_ROWS_WIDE = True  # as shipped (the fixture restores and clears the cache after)
    pick = lambda m, n, k=4096, **kw: choose_config(1, m, n, k, bf, bf, 132, **kw)  # noqa: E731
    # 448 rows against 11008: 172 128x256 tiles (2 waves), 344 128x128 (3 x 0.65), 232 128x192 (2 x 0.85).
    cfg, why = pick(448, 11008)
    assert cfg == WIDE and "128x192 tiles, 1.70 128x256 wave-times" in why, why
    assert pick(480, 11008)[0] == WIDE and pick(256, 20480)[0] == WIDE  # over 128x128 plans too
    assert pick(450, 11080, 7920)[0] == WIDE and pick(504, 18752, 6576)[0] == WIDE  # held out (seed 63)
    assert pick(256, 14336)[0] == LARGE_ONE_WAVE  # one wave of 128x256 tiles: 1.0 against 2 x 0.85
    assert pick(288, 20480)[0] == LARGE_ONE_WAVE  # 2 waves against 3 x 0.85
    assert pick(448, 11008, b_kmajor=False)[0] != WIDE  # measured on K-major weights only
    assert pick(448, 11008, rows_off_sector=True)[0] != WIDE  # rows off sectors: unmeasured but for cluster pairs
    assert choose_config(1, 448, 11008, 4096, bf, torch.float32, 132)[0] != WIDE  # 16-bit outputs only (measured)
    assert choose_config(1, 448, 11008, 4096, torch.float16, torch.float16, 132)[0] == WIDE
    assert choose_config(2, 448, 11008, 4096, bf, bf, 132)[0] != WIDE  # unbatched only
    # 162 rows: one 192-row swap tile (swap_rows) pads x less; the rule leaves the shape to it.
    from warpgemm.swap_rows import swap_rows_config
    plan = pick(162, 12184, 7136)[0]
    assert plan != WIDE and swap_rows_config(plan, 1, 162, 12184, 132, bf, bf) is not None
    for case in dense_suite() + mid_suite() + odd_suite():
        got = choose_config(1, case.M, case.N, case.K, bf, bf, 132)[0]
        assert got != WIDE or case.M >= 512, case


def test_wide_tiles_where_they_fit_the_sms_better():
    """128x192 tiles replace 128x256 ones only where the tile-count model predicts fewer wave-times; the suites'
    shapes (powers of two) keep their tiles."""
    from warpgemm.bench.suites import dense_suite, mid_suite
    from warpgemm.heuristics import WIDE

    bf = torch.bfloat16
    for m, n in ((3072, 3072), (4096, 768)):
        cfg, why = choose_config(1, m, n, 4096, bf, bf, 132)
        assert cfg == WIDE and "128x192 tiles" in why, (m, n, why)
    assert choose_config(1, 3072, 3072, 4096, bf, torch.float32, 132)[0] == WIDE  # fits an fp32 output too
    for case in dense_suite() + mid_suite():
        assert choose_config(1, case.M, case.N, case.K, bf, bf, 132)[0] != WIDE, case
    for m, n in ((6144, 6144), (1024, 4096), (2560, 2560), (3000, 5000), (777, 4096)):
        assert choose_config(1, m, n, 4096, bf, bf, 132)[0] != WIDE, (m, n)


def test_160_column_tiles_where_they_fit_the_sms_best():
    """128x160 tiles where the tile-count model has them below the 128x192 and 128x128 tiles and the 128x256 plan
    (held out: 1.09x over the previous plan on 16 shapes; with fp32 outputs 1.095x on 20); of the suites' shapes, only
    the two odd ones it was built for."""
    from warpgemm.bench.suites import dense_suite, mid_suite, odd_suite
    from warpgemm.heuristics import WIDE_160

    bf = torch.bfloat16
    for m, n, k in ((1536, 1536, 1536), (1024, 2304, 4096), (1536, 1536, 6144), (848, 5920, 6144),
                    (5176, 776, 6144), (2472, 832, 1024)):
        cfg, why = choose_config(1, m, n, k, bf, bf, 132)
        assert cfg == WIDE_160 and why.startswith("128x160 tiles:"), (m, n, why)
        assert choose_config(1, m, n, k, bf, torch.float32, 132)[0] == WIDE_160
    changed = [c.label for c in dense_suite() + mid_suite() + odd_suite()
               if choose_config(1, c.M, c.N, c.K, bf, bf, 132)[0] == WIDE_160]
    assert changed == ["1536x1536x1536", "1024x2304x4096"], changed
    for m, n in ((8192, 8192), (4096, 4096), (3072, 3072), (2560, 2560), (1536, 4096), (777, 4096)):
        assert choose_config(1, m, n, 4096, bf, bf, 132)[0] != WIDE_160, (m, n)


def test_medium_tiles_alone_where_they_fit_the_sms_best():
    """128x128 tiles alone where the tile-count model has them at or below both the 128x256 plan and the 128x192
    tile (measured ahead of the plan then shipped on 19 such shapes); not on the suites' shapes but 1536x4096x4096,
    and not for fp32 outputs (MEDIUM does not fit them; not measured with MEDIUM_FP32_OUT)."""
    from warpgemm.bench.suites import dense_suite, mid_suite, odd_suite
    from warpgemm.heuristics import MEDIUM

    bf = torch.bfloat16
    for m, n in ((2304, 2816), (2816, 768), (5888, 1024), (1536, 4096), (6912, 768), (3584, 5376)):
        cfg, why = choose_config(1, m, n, 4096, bf, bf, 132)
        assert cfg == MEDIUM and why.startswith("128x128 tiles:"), (m, n, why)
        assert choose_config(1, m, n, 4096, bf, torch.float32, 132)[0].block_n != 128  # no 128x128 alone for fp32
    changed = [c.label for c in dense_suite() + mid_suite() + odd_suite()
               if choose_config(1, c.M, c.N, c.K, bf, bf, 132)[1].startswith("128x128 tiles:")]
    assert changed == ["1536x4096x4096"], changed
    for m, n in ((8192, 8192), (4096, 4096), (3072, 3072), (1536, 1536), (4096, 768)):
        assert choose_config(1, m, n, 4096, bf, bf, 132)[0] != MEDIUM, (m, n)


def test_kernel_constexprs_follow_the_kernel_signature():
    """The raw launcher passes constexprs by position (kernels/hopper/launch.py): the dict must list them in the order
    gemm_kernel declares them."""
    from warpgemm.heuristics import WIDE
    from warpgemm.kernels.hopper.gemm import kernel_constexprs
    from warpgemm.kernels.hopper.gemm_kernel import gemm_kernel

    names = list(kernel_constexprs(WIDE, True, True, False, False, False))
    params = [p for p in gemm_kernel.arg_names if p != "num_warps"]
    assert params[-len(names):] == names


def test_wide_tiles_outside_the_plain_path_are_refused_before_compiling():
    from warpgemm.kernels.hopper.gemm import kernel_constexprs

    bad = GemmConfig(128, 192, 64, 4, 8, store_chunks=3, split_k=2)
    with pytest.raises(ValueError, match="block_n=192"):
        kernel_constexprs(bad, True, True, False, False, False)


def test_fp8_wide_tiles_follow_the_same_model():
    from warpgemm.bench.suites import dense_suite, mid_suite
    from warpgemm.heuristics import FP8_WIDE, choose_fp8_config

    bf = torch.bfloat16
    for m, n in ((3072, 3072), (6144, 1536)):
        for rowwise in (False, True):
            cfg, why = choose_fp8_config(m, n, 4096, bf, 132, rowwise=rowwise)
            assert cfg == FP8_WIDE and "128x192 tiles" in why, (m, n, why)
    assert choose_fp8_config(3072, 3072, 4096, torch.float32, 132)[0] == FP8_WIDE  # fits an fp32 output
    assert choose_fp8_config(1536, 1536, 4096, torch.float32, 132)[0] == FP8_WIDE  # no 128x160 for fp32 outputs
    for case in dense_suite() + mid_suite():
        for rowwise in (False, True):
            assert choose_fp8_config(case.M, case.N, case.K, bf, 132, rowwise=rowwise)[0] != FP8_WIDE, case
    assert choose_fp8_config(4096, 4096, 4096, bf, 132)[0] != FP8_WIDE
    assert choose_fp8_config(2560, 2560, 2560, bf, 132)[0] != FP8_WIDE


def test_fp8_160_column_tiles_from_k_2048():
    """bf16's 128x160 rule in choose_fp8_config, from K = 2048 (the two held-out shapes at K = 1024 lost 2-3%), 16-bit
    outputs only; no suite shape changes."""
    from warpgemm.bench.suites import dense_suite, mid_suite
    from warpgemm.heuristics import FP8_WIDE, FP8_WIDE_160, choose_fp8_config

    bf = torch.bfloat16
    for m, n, k in ((1536, 1536, 4096), (1024, 2304, 4096), (3984, 1248, 6144), (608, 8144, 8192)):
        for rowwise in (False, True):
            cfg, why = choose_fp8_config(m, n, k, bf, 132, rowwise=rowwise)
            assert cfg == FP8_WIDE_160 and "128x160 tiles" in why, (m, n, why)
    assert choose_fp8_config(1024, 2304, 1024, bf, 132)[0] == FP8_WIDE
    for case in dense_suite() + mid_suite():
        assert choose_fp8_config(case.M, case.N, case.K, bf, 132)[0] != FP8_WIDE_160, case


def test_160_column_tiles_only_for_a_weight_read_along_k():
    """With B row-major (K, N) the 32-column boxes lost on 2 of 6 shapes (geomean 0.99): the plan falls back to the
    heuristics without 128x160 tiles (and says why); a weight read along K keeps them; a forced 128x160 config runs
    either."""
    from warpgemm.heuristics import WIDE, WIDE_160
    from warpgemm.ops import gemm_impl

    def meta(*shape):
        return torch.empty(shape, dtype=torch.bfloat16, device="meta")

    w = meta(2304, 4096)
    p = gemm_impl.plan_hopper(meta(1, 1024, 4096), w.t().unsqueeze(0), meta(1, 1024, 2304), None, None)
    assert p.config == WIDE_160, p.config_reason
    p = gemm_impl.plan_hopper(meta(1, 1024, 4096), meta(1, 4096, 2304), meta(1, 1024, 2304), None, None)
    assert p.config == WIDE and "B is N-major" in p.config_reason, p.config_reason
    p = gemm_impl.plan_hopper(meta(1, 1024, 4096), meta(1, 4096, 2304), meta(1, 1024, 2304), None, WIDE_160)
    assert p.config == WIDE_160


def test_no_160_column_tiles_for_an_n_major_weight():
    """choose_config(b_kmajor=False) never returns WIDE_160, over a grid of shapes where the K-major choice does."""
    from warpgemm.heuristics import WIDE_160

    bf = torch.bfloat16
    hits = 0
    for m in range(512, 6145, 392):
        for n in range(768, 8193, 328):
            for k in (1024, 4096):
                hits += choose_config(1, m, n, k, bf, bf, 132)[0] == WIDE_160
                assert choose_config(1, m, n, k, bf, bf, 132, b_kmajor=False)[0] != WIDE_160, (m, n, k)
    assert hits > 10, hits


def test_tuner_names_the_plan_that_runs():
    """The tuner's guard compares a cache entry's heuristic config with what plan_hopper runs: both come from
    resolve_config, which sees B's layout (an N-major B does not take WIDE_160)."""
    from warpgemm.heuristics import WIDE, WIDE_160
    from warpgemm.ops import gemm_impl

    def meta(*shape):
        return torch.empty(shape, dtype=torch.bfloat16, device="meta")

    a3, c3 = meta(1, 1024, 4096), meta(1, 1024, 2304)
    for b3, want in ((meta(2304, 4096).t().unsqueeze(0), WIDE_160), (meta(1, 4096, 2304), WIDE)):
        assert gemm_impl.resolve_config(None, a3, c3, b3)[0] == want
        assert gemm_impl.plan_hopper(a3, b3, c3, None, None).config == want


def test_one_tile_row_of_72_to_128_rows():
    """72-128 rows with a wave or more of 128x128 tiles (weight streaming: LM heads, 128x28672): 64x128 tiles where
    their count makes fewer tile-times, else 128-deep K steps; 65-71 rows, batched products and fp32 outputs keep
    what they had; of the suites' shapes only mid's 128x28672x8192 changes."""
    from warpgemm.bench.suites import dense_suite, mid_suite, odd_suite
    from warpgemm.heuristics import MEDIUM_FP32_OUT, ONE_ROW_DEEP_K

    bf = torch.bfloat16
    for m, n, k in ((128, 28672, 8192), (128, 128256, 4096), (80, 65536, 4096), (75, 119160, 3072)):
        cfg, why = choose_config(1, m, n, k, bf, bf, 132)
        assert cfg == ONE_ROW_DEEP_K and "128-deep K steps" in why, (m, n, why)
        assert choose_config(1, m, n, k, bf, torch.float32, 132)[0] == MEDIUM_FP32_OUT
        assert choose_config(2, m, n, k, bf, bf, 132)[0] == MEDIUM
    for m, n, k in ((128, 17408, 8192), (96, 20480, 4096), (72, 36952, 5120), (121, 20064, 4096)):
        cfg, why = choose_config(1, m, n, k, bf, bf, 132)
        assert cfg == SMALL and "fewer tile-times" in why, (m, n, why)
    for m in (65, 67, 71):
        assert choose_config(1, m, 53416, 4096, bf, bf, 132)[0] == MEDIUM, m
    changed = [c.label for c in dense_suite() + mid_suite() + odd_suite()
               if "one tile-row" in choose_config(1, c.M, c.N, c.K, bf, bf, 132)[1]]
    assert changed == ["128x28672x8192"], changed


def test_wide_tiles_are_weighed_against_the_plan_that_runs():
    """fp32 outputs run LARGE_FP32_OUT, which is never column-split: the 128x192 tile is weighed against it."""
    from warpgemm.heuristics import LARGE_FP32_OUT, WIDE

    bf = torch.bfloat16
    assert choose_config(1, 1024, 6144, 4096, bf, bf, 132)[0] != WIDE  # against the bf16 plan's column split
    cfg, why = choose_config(1, 1024, 6144, 4096, bf, torch.float32, 132)
    assert cfg == WIDE and LARGE_FP32_OUT.name in why and "column split" not in why, why


def test_fp8_few_rows_take_the_large_tile_like_bf16():
    """The partial-last-row half of choose_config's 256-511-row rule in choose_fp8_config: 16-bit outputs only, and
    no suite shape changes (their M are multiples of 128)."""
    from warpgemm.bench.suites import dense_suite, mid_suite
    from warpgemm.heuristics import FP8_LARGE_ROWWISE, FP8_MEDIUM, choose_fp8_config

    bf = torch.bfloat16
    assert choose_fp8_config(288, 16384, 4096, bf, 132)[0] == FP8_LARGE_ROWWISE  # last tile-row a quarter full
    assert choose_fp8_config(256, 28672, 4096, bf, 132)[0] == FP8_MEDIUM  # a multiple of 128 rows
    assert choose_fp8_config(160, 28672, 4096, bf, 132)[0] == FP8_MEDIUM  # bf16's extension to 129 rows: not fp8
    assert choose_fp8_config(288, 16384, 4096, torch.float32, 132)[0].block_n == 128
    changed = [c.label for c in dense_suite() + mid_suite() if "< 512" in choose_fp8_config(c.M, c.N, c.K, bf, 132)[1]]
    assert changed == [], changed


def test_config_names_read_back():
    from warpgemm.candidates import CANDIDATES, parse_config
    from warpgemm.heuristics import FP8_CONFIGS

    for cfg in CANDIDATES + SHIPPED_CONFIGS + FP8_CONFIGS:
        assert parse_config(cfg.name) == cfg
    for bad in ("128x256x64_", "128x256x64__s3", "bogus", "128x256x64_q3"):
        with pytest.raises(ValueError, match="cannot read config"):
            parse_config(bad)


def test_config_lists_read_back_in_order():
    """--configs of the CLI and the probes: names to configs, in the order given; a bad name is an error."""
    from warpgemm.candidates import WIDE_CANDIDATES, parse_config_list

    names = [c.name for c in WIDE_CANDIDATES]
    got = parse_config_list(",".join(names))
    assert list(got) == names and list(got.values()) == list(WIDE_CANDIDATES)
    with pytest.raises(ValueError, match="cannot read config"):
        parse_config_list("128x160x64_s5_w8_g8_c5,bogus")
