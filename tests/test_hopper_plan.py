"""Planning of Hopper launches (host logic only, on meta tensors): orientation, copies, staging, grid."""
from unittest import mock

import pytest
import torch

from warpgemm.config import GemmConfig
from warpgemm.heuristics import SMALL
from warpgemm.ops import gemm_impl

BF = torch.bfloat16


def meta(*shape, dtype=BF):
    return torch.empty(shape, dtype=dtype, device="meta")


def plan(a3, b3, c3, bias=None, config=None):
    return gemm_impl.plan_hopper(a3, b3, c3, bias, config)


def test_weight_layout_is_read_in_place():
    a = meta(1, 4096, 4096)
    w = meta(14336, 4096)
    p = plan(a, w.t().unsqueeze(0), meta(1, 4096, 14336))
    assert (p.a_copy, p.b_copy, p.c_staged) == (0, 0, False)
    assert p.a.contiguous_dim == 2 and p.b.contiguous_dim == 1  # both K-major
    assert p.launch.grid == 128 and p.config.block_n == 256  # 1792 tiles: 14 on each of 128 programs


def test_forced_pairs_read_an_n_major_weight_in_place():
    """A pair of power-of-two tiles splits B's columns between its CTAs in either layout; a two-part pair on a weight
    contiguous along N keeps its rest-wide boxes whole and the CTAs take them in turn (GemmConfig.b_pieces_for)."""
    from warpgemm.kernels.hopper.gemm import operand_blocks
    from warpgemm.off_sector import CLUSTER_LARGE, CLUSTER_MEDIUM, CLUSTER_WIDE, CLUSTER_WIDE_160

    a, b, c = meta(1, 1024, 2048), meta(1, 2048, 4096), meta(1, 1024, 4096)  # b row-major (K, N): N-major
    for cfg in (CLUSTER_LARGE, CLUSTER_MEDIUM, CLUSTER_WIDE, CLUSTER_WIDE_160):
        p = plan(a, b, c, config=cfg)
        assert p.b_copy == 0 and p.b.contiguous_dim == 2 and p.config == cfg, cfg.name
    assert operand_blocks(CLUSTER_WIDE, True, False)[1] == (1, 64, 64)  # three boxes: two loaded by rank 0
    assert operand_blocks(CLUSTER_WIDE, True, True)[1] == (1, 32, 64)  # K-major: six half boxes, three each
    assert operand_blocks(CLUSTER_WIDE_160, True, False)[1] == (1, 64, 32)


def test_all_layouts_in_place():
    for a in (meta(1, 512, 256), meta(1, 256, 512).transpose(1, 2)):
        for b in (meta(1, 256, 384), meta(1, 384, 256).transpose(1, 2)):
            p = plan(a, b, meta(1, 512, 384))
            assert (p.a_copy, p.b_copy, p.c_staged) == (0, 0, False)


def test_odd_pitch_is_copied_and_odd_n_is_staged():
    p = plan(meta(1, 100, 7), meta(1, 7, 9), meta(1, 100, 9))
    assert p.a_copy == 2 and p.b_copy == 2 and p.c_staged
    assert p.a.strides[1] == 16 and p.c.strides[1] == 16  # rows of whole 32-byte sectors


def test_forced_config_and_small_grid():
    p = plan(meta(1, 16, 64), meta(1, 64, 64), meta(1, 16, 64), config=SMALL)
    assert p.config == SMALL and p.config_reason == "forced by the caller" and p.launch.grid == 1


def test_broadcast_operand_reads_batch_zero():
    p = plan(meta(1, 256, 64), meta(4, 64, 64), meta(4, 256, 64))
    assert p.launch.constexprs["A_BATCHED"] is False and p.launch.constexprs["B_BATCHED"] is True
    # Swap-AB (decode-sized M): the kernel's A is the caller's B, read transposed.
    p = plan(meta(1, 16, 64), meta(4, 64, 64), meta(4, 16, 64))
    assert p.config.swap_ab
    assert p.launch.constexprs["A_BATCHED"] is True and p.launch.constexprs["B_BATCHED"] is False


def test_short_last_wave_goes_to_a_second_launch_of_smaller_tiles():
    """1024x14336: 448 128x256 tiles are 3.4 waves on 132 SMs; the last 1792 columns become 112 128x128 tiles."""
    from warpgemm.heuristics import LARGE, MEDIUM
    from warpgemm.kernels.hopper.gemm import ColumnSplitLaunch

    w = meta(14336, 4096)
    for b in (w.t().unsqueeze(0), meta(1, 4096, 14336)):  # weight layout (K-major) and row-major B
        p = plan(meta(1, 1024, 4096), b, meta(1, 1024, 14336))
        assert isinstance(p.launch, ColumnSplitLaunch) and "second launch" in p.config_reason
        main, tail = p.launch.main, p.launch.tail
        assert p.launch.n1 == 12544 and main.cfg == LARGE and tail.cfg == MEDIUM
        assert (main.tiles, main.grid, tail.tiles, tail.grid) == (392, 131, 112, 112)  # 3 waves of 131
        assert main.c.shape == (1, 1024, 12544) and tail.c.shape == (1, 1024, 1792) and p.launch.c_off == 12544
        kmajor = b.stride(1) == 1
        assert p.launch.b_off == (12544 * 4096 if kmajor else 12544)
        assert tail.b.shape == ((1, 1792, 4096) if kmajor else (1, 4096, 1792))
    # A forced config is taken as given; a full last wave (or a single one) is never split.
    assert not isinstance(plan(meta(1, 1024, 4096), w.t().unsqueeze(0), meta(1, 1024, 14336), config=LARGE).launch,
                          ColumnSplitLaunch)
    for m, n in ((4096, 4096), (1024, 8192), (16384, 8192)):
        assert not isinstance(plan(meta(1, m, 4096), meta(1, 4096, n), meta(1, m, n)).launch, ColumnSplitLaunch)


def test_tail_split_rule_on_the_suites():
    from warpgemm.bench.suites import dense_suite, mid_suite
    from warpgemm.heuristics import LARGE, choose_config, tail_split_columns

    split = {}
    for c in dense_suite() + mid_suite():
        cfg, _ = choose_config(1, c.M, c.N, c.K, BF, BF, 132)
        n1 = tail_split_columns(1, c.M, c.N, c.K, cfg, 132)
        if n1:
            split[c.label] = n1
            assert n1 % LARGE.block_n == 0 and 0 < n1 < c.N
    assert split == {"1024x14336x4096": 12544, "512x28672x8192": 25344}
    assert tail_split_columns(1, 1024, 14336, 4096, LARGE.replace(stages=4), 132) == 0  # only the shipped LARGE tile


def test_column_split_launch_cost_grows_at_short_k():
    """The split's second launch costs a time of its own: at short K (short tiles) it outweighs the split's gain and
    128x128 tiles alone win (measured: results/2026-11-26-medium/short_k_rule.json); from K = 4096 on nothing moves."""
    from warpgemm.heuristics import LARGE, MEDIUM, choose_config, tail_split_columns

    for k in (512, 2048):
        cfg, why = choose_config(1, 1280, 7680, k, BF, BF, 132)
        assert cfg == MEDIUM, why  # the split's 2.55 + 2 x 0.1 wave-times tie MEDIUM's 2.75 at K = 2048
    for k in (3072, 4096, 8192):
        cfg, _ = choose_config(1, 1280, 7680, k, BF, BF, 132)
        assert cfg == LARGE and tail_split_columns(1, 1280, 7680, k, cfg, 132) == 6656
    # The plan that launches reads K off the operands.
    from warpgemm.kernels.hopper.gemm import ColumnSplitLaunch
    for k, split in ((2048, False), (4096, True)):
        p = plan(meta(1, 1280, k), meta(7680, k).t().unsqueeze(0), meta(1, 1280, 7680))
        assert isinstance(p.launch, ColumnSplitLaunch) == split, (k, p.config_reason)


def test_programmatic_dependent_launch_only_where_measured_to_help(monkeypatch):
    """Swap-AB (decode) launches and a column split's tail use PDL; plain whole-tile launches, dense or grouped, do
    not (they ran 2-16% slower back to back with it: notes/perf.md). WARPGEMM_PDL=0 / =all turn it off / on for
    every launch."""
    from warpgemm import _env
    from warpgemm.heuristics import GROUPED_LARGE, GROUPED_SWAP
    from warpgemm.kernels.hopper.gemm import launch_uses_pdl

    def pdl_of(p):
        launches = (p.launch.main, p.launch.tail) if hasattr(p.launch, "tail") else (p.launch, )
        return tuple(launch.kernel.pdl for launch in launches)

    monkeypatch.setattr(_env, "PDL", True)  # the default, whatever WARPGEMM_PDL this run was started with
    monkeypatch.setattr(_env, "PDL_EVERYWHERE", False)

    w = meta(14336, 4096).t().unsqueeze(0)
    decode, mid, split = (plan(meta(1, m, 4096), w, meta(1, m, 14336)) for m in (16, 256, 1024))
    assert decode.config.swap_ab and pdl_of(decode) == (True, )
    assert pdl_of(mid) == (False, )
    assert pdl_of(split) == (False, True)
    # explain() says so.
    assert gemm_impl._launch_order(decode.launch) == "launch starts under the kernel before it (PDL)"
    assert gemm_impl._launch_order(mid.launch) == "launch starts after the kernel before it"
    assert "tail launch starts under" in gemm_impl._launch_order(split.launch)
    assert launch_uses_pdl(GROUPED_SWAP) and not launch_uses_pdl(GROUPED_LARGE)
    monkeypatch.setattr(_env, "PDL_EVERYWHERE", True)
    assert launch_uses_pdl(GROUPED_LARGE)
    monkeypatch.setattr(_env, "PDL", False)
    assert not launch_uses_pdl(GROUPED_SWAP) and not launch_uses_pdl(decode.config)


def test_serpentine_k_order_only_on_whole_plain_tiles_of_dense_products(monkeypatch):
    """Odd units of a program read K last to first (gemm.k_serpentine) only where a wave's tiles share A panels with
    the next wave's: whole plain tiles of dense products. WARPGEMM_K_ORDER=forward turns it off."""
    from warpgemm import _env
    from warpgemm.heuristics import GROUPED_LARGE, LARGE
    from warpgemm.kernels.hopper.gemm import k_serpentine, kernel_constexprs

    monkeypatch.setattr(_env, "K_ORDER", "serpentine")
    assert k_serpentine(LARGE, grouped=False, ragged_k=False)
    assert kernel_constexprs(LARGE, True, True, False, False, False)["K_SERPENTINE"]
    for cfg in (LARGE.replace(split_k=2), LARGE.replace(stream_k=True), LARGE.replace(cluster_m=2),
                GemmConfig(64, 16, 256, 5, 4, swap_ab=True), SMALL.replace(warp_specialize=False, stages=4)):
        assert not k_serpentine(cfg, grouped=False, ragged_k=False), cfg.name
    assert not k_serpentine(GROUPED_LARGE, grouped=True, ragged_k=False)
    assert not k_serpentine(LARGE, grouped=False, ragged_k=True)
    monkeypatch.setattr(_env, "K_ORDER", "forward")
    assert not kernel_constexprs(LARGE, True, True, False, False, False)["K_SERPENTINE"]


def test_weight_loads_are_evict_first_only_for_dense_products_of_few_rows(monkeypatch):
    """gemm.weight_evict_first: the weight streams once where at most 512 rows of x read it (all batches' rows when
    one weight serves them), and where several tiles read each weight panel only up to K = 16384; never grouped,
    ragged-K or cluster launches; WARPGEMM_WEIGHT_HINT=0 turns it off. The launch counts x's rows per weight whichever
    operand the kernel reads the weight as."""
    from warpgemm import _env
    from warpgemm.heuristics import LARGE, SMALL
    from warpgemm.kernels.hopper.gemm import (WEIGHT_HINT_MAX_ROWS, WEIGHT_HINT_MAX_SHARED_K, kernel_constexprs,
                                              weight_evict_first)
    from warpgemm.kernels.hopper.ptx_hints import LOAD_PASS_VERSION

    monkeypatch.setattr(_env, "WEIGHT_HINT", True)
    swap = GemmConfig(64, 16, 256, 5, 4, swap_ab=True)
    long_k = WEIGHT_HINT_MAX_SHARED_K + 64
    for cfg in (SMALL, LARGE, swap, swap.replace(stream_k=True), SMALL.replace(warp_specialize=False, stages=4)):
        assert weight_evict_first(cfg, 1, WEIGHT_HINT_MAX_ROWS, 4096), cfg.name
        assert not weight_evict_first(cfg, 1, WEIGHT_HINT_MAX_ROWS + 1, 4096), cfg.name
        assert not weight_evict_first(cfg, 3, WEIGHT_HINT_MAX_ROWS // 2, 4096), cfg.name  # 3 batches share it
    # One tile reads each weight panel: any K. Two or more (x's rows over two tile-rows, x-columns, or batches that
    # share the weight, each with its own tiles): K <= 16384.
    assert weight_evict_first(SMALL, 1, SMALL.block_m, long_k)
    assert weight_evict_first(swap, 1, 16, long_k)
    assert not weight_evict_first(SMALL, 1, SMALL.block_m + 1, long_k)
    assert not weight_evict_first(swap, 1, 17, long_k)
    assert not weight_evict_first(swap, 4, 8, long_k)
    assert weight_evict_first(swap, 4, 8, WEIGHT_HINT_MAX_SHARED_K)
    assert weight_evict_first(SMALL, 1, SMALL.block_m + 1, WEIGHT_HINT_MAX_SHARED_K)
    assert not weight_evict_first(LARGE.replace(cluster_m=2), 1, 128, 4096)
    assert not weight_evict_first(SMALL, 1, 128, 4096, grouped=True)
    assert not weight_evict_first(SMALL, 1, 128, 4096, ragged_k=True)
    assert kernel_constexprs(SMALL, True, True, False, False, False, weight_hint=True)["WEIGHT_HINT"] == \
        LOAD_PASS_VERSION
    assert kernel_constexprs(SMALL, True, True, False, False, False)["WEIGHT_HINT"] == 0
    with pytest.raises(ValueError, match="weight_hint is for dense products"):
        kernel_constexprs(SMALL, True, True, False, False, False, grouped=True, weight_hint=True)

    def hinted(x, w_t, c, config=None):
        return plan(x, w_t, c, config=config).launch.constexprs["WEIGHT_HINT"] != 0

    w_t = meta(14336, 4096).t().unsqueeze(0)
    assert hinted(meta(1, 128, 4096), w_t, meta(1, 128, 14336))
    assert hinted(meta(1, 16, 4096), w_t, meta(1, 16, 14336))  # swap-AB: the weight is the kernel's A
    assert hinted(meta(1, 512, 4096), w_t, meta(1, 512, 14336))
    assert not hinted(meta(1, 513, 4096), w_t, meta(1, 513, 14336))
    # Five batches of 128 rows against one weight: 640 rows read it. With a weight per batch: 128 each.
    assert not hinted(meta(5, 128, 4096), w_t, meta(5, 128, 14336))
    assert hinted(meta(5, 128, 4096), meta(5, 14336, 4096).transpose(1, 2), meta(5, 128, 14336))
    # K = 28672 with x's 128 rows over two 64-row tile-rows: not hinted; a one-row decode tile is.
    assert not hinted(meta(1, 128, 28672), meta(8192, 28672).t().unsqueeze(0), meta(1, 128, 8192))
    assert hinted(meta(1, 16, 28672), meta(8192, 28672).t().unsqueeze(0), meta(1, 16, 8192))
    import warpgemm

    x = torch.empty(128, 4096, dtype=BF, device="meta")
    gemm_impl.forget_plans()
    assert "B's loads evict-first in L2" in warpgemm.explain(x, meta(14336, 4096).t())
    monkeypatch.setattr(_env, "WEIGHT_HINT", False)
    assert not weight_evict_first(SMALL, 1, 128, 4096)
    gemm_impl.forget_plans()
    assert "evict-first" not in warpgemm.explain(x, meta(14336, 4096).t())
    gemm_impl.forget_plans()


def test_few_rows_and_short_k_take_32_row_swap_tiles_of_a_k_major_weight():
    import pytest

    from warpgemm.heuristics import DECODE, DECODE_SHORT_K
    from warpgemm.kernels.hopper.gemm import GemmLaunch

    w = meta(14336, 4096)
    p = plan(meta(1, 4, 4096), w.t().unsqueeze(0), meta(1, 4, 14336))
    assert p.config == DECODE_SHORT_K and p.launch.tiles == 14336 // 32
    assert plan(meta(1, 4, 8192), meta(14336, 8192).t().unsqueeze(0), meta(1, 4, 14336)).config == DECODE[16]
    assert plan(meta(1, 32, 4096), w.t().unsqueeze(0), meta(1, 32, 14336)).config == DECODE[32]
    # A weight contiguous along N (x @ W with W (K, N) row-major) cannot feed the 32-row slots: 64-row tiles.
    p = plan(meta(1, 4, 4096), meta(1, 4096, 14336), meta(1, 4, 14336))
    assert p.config == DECODE[16] and "not K-contiguous" in p.config_reason
    # So do 17-64 rows against a weight of 3072 rows (heuristics.DECODE_HALF): 64-row tiles then, as before.
    for m in (32, 64):
        assert plan(meta(1, m, 4096), meta(3072, 4096).t().unsqueeze(0), meta(1, m, 3072)).config.block_m == 32
        p = plan(meta(1, m, 4096), meta(1, 4096, 3072), meta(1, m, 3072))
        assert p.config == DECODE[m] and "not K-contiguous" in p.config_reason
    # Forced on such a weight, the tile runs on a K-major copy (b_copy 1) and says so.
    p = plan(meta(1, 4, 4096), meta(1, 4096, 14336), meta(1, 4, 14336), config=DECODE_SHORT_K)
    assert p.config == DECODE_SHORT_K and p.b_copy == 1 and p.b.contiguous_dim == 1
    assert "K-major copy" in p.config_reason
    # The launch itself still refuses an N-major geometry by name (no public call reaches it).
    with pytest.raises(ValueError, match="contiguous along K"):
        GemmLaunch(DECODE_SHORT_K, p.a, p.b._replace(contiguous_dim=2), p.c, False, False, False, 132)


def test_descriptor_encoding_binds_the_thread_context_once_and_retries(monkeypatch):
    """A backward thread with no current CUDA context: the first encode fails, the context is bound with a runtime
    call, the encode is retried; any other error propagates."""
    from warpgemm.kernels.hopper import launch

    queried, calls = [], []

    class _Stream:
        def query(self):
            queried.append(1)
            return True

    monkeypatch.setattr(launch.torch.cuda, "current_stream", lambda: _Stream())

    def encode(x):
        calls.append(x)
        if len(calls) == 1:
            raise RuntimeError("Triton Error [CUDA]: Failed to create tensor map descriptor: invalid device context")
        return x * 2

    assert launch.with_cuda_context(encode, 21) == 42 and len(queried) == 1 and calls == [21, 21]

    def broken():
        raise RuntimeError("something else")

    with pytest.raises(RuntimeError, match="something else"):
        launch.with_cuda_context(broken)
    assert len(queried) == 1


def test_weight_rows_off_sectors_take_the_cluster_pair_of_the_chosen_tile():
    """A weight read along K whose rows start 16 bytes into a 32-byte sector (K = 8 mod 16, bf16) gets the 2-CTA
    cluster form of the heuristics' 128-row or 64x128 tile (off_sector.off_sector_config); aligned rows (a weight read
    along N whose rows, N long, start on sectors), swap-AB decode tiles and 64-row decode tiles keep theirs."""
    from warpgemm.heuristics import CLUSTER_LARGE, CLUSTER_SMALL, SMALL

    def chosen(M, N, K, b=None, out=BF):
        b3 = b if b is not None else meta(N, K).t().unsqueeze(0)
        return plan(meta(1, M, K), b3, meta(1, M, N, dtype=out))

    p = chosen(4096, 4096, 4104)
    assert p.config == CLUSTER_LARGE and "start off 32-byte sectors" in p.config_reason, p.config_reason
    assert chosen(1099, 8568, 1704).config == CLUSTER_LARGE  # MEDIUM's pair would be the slower one (measured)
    assert chosen(1000, 1000, 1000).config == CLUSTER_SMALL
    assert chosen(4096, 4096, 4096).config.cluster_m == 1  # rows on sectors
    assert chosen(4096, 4096, 4104, b=meta(1, 4104, 4096)).config.cluster_m == 1  # B read along N
    assert chosen(16, 4096, 4104).config.swap_ab
    assert chosen(64, 14336, 4104).config.cluster_m == 1
    assert chosen(100, 28672, 1000).config.cluster_m == 1  # one tile-row: 128-deep K steps, no pair
    # fp32 outputs: the 128x256 pair does not fit its shared memory; the 64x128 one does.
    assert chosen(4096, 4096, 4104, out=torch.float32).config.cluster_m == 1
    assert chosen(1000, 1000, 1000, out=torch.float32).config == CLUSTER_SMALL
    # B read along N with rows N = 8 mod 16 long: the pair of power-of-two tiles (off_sector.N_MAJOR_PAIRS) ...
    assert chosen(2460, 18584, 2976, b=meta(1, 2976, 18584)).config == CLUSTER_LARGE
    assert chosen(606, 1128, 1824, b=meta(1, 1824, 1128)).config == CLUSTER_SMALL
    # ... even where the pair's odd tile-row adds a wave (9 rows x 40 columns: 3 waves of tiles, 4 of pairs; no guard
    # since session 38, off_sector.N_MAJOR_PAIR_WAVE_RATIO None); with the session-37 guard (1.2) it kept its tiles ...
    from warpgemm import off_sector

    assert chosen(1100, 10008, 2048, b=meta(1, 2048, 10008)).config == CLUSTER_LARGE
    with mock.patch.object(off_sector, "N_MAJOR_PAIR_WAVE_RATIO", 1.2):
        p = chosen(1100, 10008, 2048, b=meta(1, 2048, 10008))
        assert p.config.cluster_m == 1 and p.config.block_n == 256, p.config_reason
        assert chosen(636, 31768, 5792, b=meta(1, 5792, 31768)).config == CLUSTER_LARGE  # 6 waves against 5 pass
    # ... or the one-partition rule runs the plan: one wave of 16-K-step 64-row tiles, its 4-slot SMALL.
    assert chosen(1000, 1000, 1000, b=meta(1, 1000, 1000)).config == SMALL.replace(warp_specialize=False, stages=4)
    # 128x128 tiles that stay take their own pair, unless its idle tile-row (odd row count) adds a wave.
    from warpgemm.heuristics import CLUSTER_MEDIUM, MEDIUM

    assert chosen(1208, 1048, 2632).config == CLUSTER_MEDIUM  # 50 128x256 tiles: under a wave
    assert chosen(449, 3808, 2008).config == CLUSTER_MEDIUM
    assert chosen(356, 4864, 7656).config == MEDIUM  # 114 tiles in one wave; 152 paired CTAs in two
    # Batched products (a weight per batch): no pair, no rule change (none was measured there).
    p = plan(meta(2, 344, 1000), meta(2, 2816, 1000).transpose(1, 2), meta(2, 344, 2816))
    assert p.config.cluster_m == 1, p.config_reason


def test_off_sector_pairs_at_two_to_four_tile_rows():
    """Under OFF_SECTOR_LARGE_MIN_M rows (129-511) a weight whose rows start off sectors takes the fitted pair too,
    with the 128x256 pair's 4-stage, chunked-store form (off_sector.CLUSTER_LARGE_FEW_ROWS), on either layout;
    refused where its waves of pairs would outnumber the waves of the tile it replaces; never for one tile-row (fp8:
    the next test)."""
    from warpgemm import off_sector
    from warpgemm.heuristics import LARGE_ONE_WAVE, MEDIUM
    from warpgemm.off_sector import CLUSTER_LARGE_FEW_ROWS, CLUSTER_WIDE, CLUSTER_WIDE_160

    def chosen(M, N, K, nn=False, dtype=BF):
        b = meta(1, K, N, dtype=dtype) if nn else meta(N, K, dtype=dtype).t().unsqueeze(0)
        return plan(meta(1, M, K, dtype=dtype), b, meta(1, M, N)).config

    assert CLUSTER_LARGE_FEW_ROWS == LARGE_ONE_WAVE.replace(cluster_m=2, group_m=16)
    assert chosen(352, 25216, 7832) == CLUSTER_LARGE_FEW_ROWS  # 3 tile-rows: was 128x128 tiles (measured 0.50x)
    assert chosen(474, 23992, 4520) == CLUSTER_LARGE_FEW_ROWS  # was the plain 128x256 s4 tile
    assert chosen(202, 31640, 4280) == CLUSTER_LARGE_FEW_ROWS  # 2 tile-rows
    assert chosen(483, 11344, 5208) == CLUSTER_WIDE  # fitted_pair's two-part pairs come too
    assert chosen(208, 17432, 1320) == CLUSTER_WIDE_160
    assert chosen(446, 29384, 3632, nn=True) == CLUSTER_LARGE_FEW_ROWS  # N = 8 mod 16, B read along N
    # One wave of plain 128x256 tiles (3 x 41) against two of 128x160 pairs: the plan keeps its tile.
    assert chosen(322, 10256, 1864) == LARGE_ONE_WAVE
    assert chosen(352, 25216, 7840).cluster_m == 1  # rows on sectors
    from warpgemm.off_sector import CLUSTER_LARGE, CLUSTER_SMALL, off_sector_config

    assert chosen(120, 25216, 7832) == CLUSTER_SMALL  # one tile-row: the 64-row tiles' own pair
    assert off_sector_config(LARGE_ONE_WAVE, 1, 128, 33000, 132, BF, BF) is None  # under FEW_ROWS_PAIR_MIN_M
    assert off_sector_config(LARGE_ONE_WAVE, 1, 129, 33000, 132, BF, BF)[0] == CLUSTER_LARGE_FEW_ROWS
    assert off_sector_config(LARGE_ONE_WAVE, 1, 511, 33000, 132, BF, BF)[0] == CLUSTER_LARGE_FEW_ROWS
    assert off_sector_config(LARGE_ONE_WAVE, 1, 512, 25216, 132, BF, BF)[0] == CLUSTER_LARGE  # the 3-stage pair
    with mock.patch.object(off_sector, "FEW_ROWS_PAIRS_K_MAJOR", False):
        assert chosen(352, 25216, 7832) == MEDIUM
        assert chosen(446, 29384, 3632, nn=True) == CLUSTER_LARGE_FEW_ROWS  # the other layout's own flag
    with mock.patch.object(off_sector, "FEW_ROWS_PAIRS_N_MAJOR", False):
        assert chosen(446, 29384, 3632, nn=True).cluster_m == 1
    # The guard on a weight read along N: one wave of plain 128x256 tiles against two of pairs.
    assert off_sector_config(LARGE_ONE_WAVE, 1, 322, 10256, 132, BF, BF, b_kmajor=False) is None


def test_fp8_off_sector_pair_at_two_to_four_tile_rows():
    """fp8 rows of 16 mod 32 bytes at 129-511 rows take the 128x256 pair alone (FP8_CLUSTER_LARGE_FEW_ROWS: 4 stages,
    chunked stores, so row-wise scales take it too), under the same wave guard; no two-part pairs; the flag turns it
    off; a swap tile stays. From 512 rows the same pair where it makes at most FP8_PAIR_FOUR_STAGES_MAX_WAVES waves,
    and for row-wise scales in place of their plain 128x256 tile under a wave guard; the 3-stage one otherwise."""
    from warpgemm import off_sector
    from warpgemm.heuristics import FP8_LARGE, FP8_LARGE_ROWWISE, FP8_MEDIUM
    from warpgemm.off_sector import FP8_CLUSTER_LARGE, FP8_CLUSTER_LARGE_FEW_ROWS, off_sector_config
    from warpgemm.ops.scaled import ROWWISE, TENSORWISE
    from warpgemm.ops.scaled import plan as fp8_plan

    e4 = torch.float8_e4m3fn

    def chosen(M, N, K, mode=TENSORWISE):
        return fp8_plan(meta(M, K, dtype=e4), meta(N, K, dtype=e4).t(), meta(M, N), mode, False, None).config

    assert FP8_CLUSTER_LARGE_FEW_ROWS == FP8_LARGE_ROWWISE.replace(cluster_m=2, group_m=16)
    assert off_sector_config(FP8_LARGE, 1, 352, 25216, 132, e4, BF)[0] == FP8_CLUSTER_LARGE_FEW_ROWS
    assert off_sector_config(FP8_LARGE, 1, 128, 25216, 132, e4, BF) is None  # one tile-row
    # From 512 rows: the 3-stage pair on many waves of per-tensor scales, the 4-stage one on few or row-wise scales
    # (row-wise: only in place of their plain 128x256 tile, and under FP8_ROWWISE_PAIR_WAVE_RATIO).
    assert chosen(1280, 15360, 4112) == FP8_CLUSTER_LARGE  # 5 x 60 pairs: 5 waves
    assert chosen(1280, 15360, 4112, ROWWISE) == FP8_CLUSTER_LARGE_FEW_ROWS  # 5 waves of pairs, 5 of tiles
    assert chosen(584, 18640, 6608, ROWWISE) == FP8_CLUSTER_LARGE_FEW_ROWS  # 4 waves of pairs against 3: kept
    assert chosen(849, 8896, 1424, ROWWISE).cluster_m == 1  # 3 against 2: over 1.4x
    assert off_sector_config(FP8_MEDIUM, 1, 3505, 1440, 132, e4, BF, rowwise=True) is None  # not their 128x128 tile
    assert off_sector_config(FP8_LARGE, 1, 512, 25216, 132, e4, BF)[0] == FP8_CLUSTER_LARGE_FEW_ROWS  # 198 pairs: 3 waves
    assert off_sector_config(FP8_LARGE, 1, 1024, 25216, 132, e4, BF)[0] == FP8_CLUSTER_LARGE  # 396 pairs: 6 waves
    assert off_sector_config(FP8_LARGE, 1, 1470, 32032, 132, e4, BF)[0] == FP8_CLUSTER_LARGE  # 12 waves
    assert off_sector_config(FP8_LARGE, 1, 1470, 32032, 132, e4, BF, rowwise=True)[0] == FP8_CLUSTER_LARGE_FEW_ROWS
    assert chosen(857, 5440, 1808) == FP8_CLUSTER_LARGE_FEW_ROWS  # 88 pairs: 2 waves
    assert chosen(3673, 22256, 4336, ROWWISE) == FP8_CLUSTER_LARGE_FEW_ROWS  # no pair before (whole-tile stores)
    with mock.patch.object(off_sector, "FP8_ROWWISE_PAIRS", False):
        assert chosen(3673, 22256, 4336, ROWWISE).cluster_m == 1
    with mock.patch.object(off_sector, "FP8_PAIR_FOUR_STAGES", False):
        assert chosen(857, 5440, 1808) == FP8_CLUSTER_LARGE
    assert chosen(494, 30128, 4720) == FP8_CLUSTER_LARGE_FEW_ROWS  # 128x128 tiles before (measured 0.535 -> 0.977x)
    assert chosen(420, 24896, 6192) == FP8_CLUSTER_LARGE_FEW_ROWS  # the plain 128x256 s4 c4 tile before
    assert chosen(460, 24224, 4816, ROWWISE) == FP8_CLUSTER_LARGE_FEW_ROWS  # chunked stores: row-wise scales too
    assert chosen(494, 30128, 4736).cluster_m == 1  # rows on sectors
    # The wave guard: 3 x 112 plain 128x256 tiles make 3 waves, 2 x 112 pairs 4 (66 pairs a wave).
    assert chosen(299, 28496, 5584) == FP8_LARGE_ROWWISE
    assert chosen(162, 20592, 2064).swap_ab  # swap_rows' tile stays
    with mock.patch.object(off_sector, "FEW_ROWS_PAIRS_FP8", False):
        assert chosen(494, 30128, 4720) == FP8_MEDIUM


def test_off_sector_128x256_pair_goes_before_swap_rows_tiles_at_three_tile_rows():
    """From off_sector.PAIRS_OVER_SWAP_ROWS_MIN_M rows a weight read along K whose rows start off sectors takes the
    few-rows 128x256 pair where swap_rows would run a swap tile; not a two-part pair, not under those rows, not on a
    weight read along N, and never on rows on sectors."""
    from warpgemm import off_sector
    from warpgemm.off_sector import CLUSTER_LARGE_FEW_ROWS

    def chosen(M, N, K, nn=False):
        b = meta(1, K, N) if nn else meta(N, K).t().unsqueeze(0)
        return plan(meta(1, M, K), b, meta(1, M, N)).config

    assert chosen(400, 21072, 3176) == CLUSTER_LARGE_FEW_ROWS  # a 128x144 swap tile before (0.59 -> 0.87x)
    assert chosen(257, 14360, 2616) == CLUSTER_LARGE_FEW_ROWS
    assert chosen(280, 6280, 1496).swap_ab  # fitted_pair would pick the 128x192 pair here: the swap tile stays
    assert chosen(400, 21072, 3184).swap_ab  # rows on sectors
    assert chosen(187, 23392, 6360).swap_ab  # two tile-rows: not measured to pay
    with mock.patch.object(off_sector, "PAIRS_OVER_SWAP_ROWS_MIN_M", None):
        assert chosen(400, 21072, 3176).swap_ab


def test_off_sector_pairs_fit_the_waves_with_two_part_tiles():
    """Where the 128x256 pairs leave a wave part-filled, the 128x192 or 128x160 pair that runs in fewer tile-times
    (waves of pairs over 256-row bands, the heuristics' tile times) takes the product (off_sector.fitted_pair), if
    it beats the 128x256 pair by WIDE_MIN_GAIN; 16-bit outputs only, and not for fp8."""
    from warpgemm import off_sector
    from warpgemm.off_sector import CLUSTER_LARGE, CLUSTER_WIDE, CLUSTER_WIDE_160, fitted_pair

    def chosen(M, N, K, out=BF, dtype=BF):
        return plan(meta(1, M, K, dtype=dtype), meta(N, K, dtype=dtype).t().unsqueeze(0),
                    meta(1, M, N, dtype=out)).config

    assert chosen(3000, 3000, 3000) == CLUSTER_WIDE  # 144 128x256 pairs: 2.2 waves; 192 of 128x192: 2.9
    assert chosen(1000, 5000, 3000) == CLUSTER_WIDE_160  # 80 pairs: 1.2 waves; 128x160: 128 pairs, 1.9
    assert chosen(1000, 5000, 3000, dtype=torch.float16) == CLUSTER_WIDE_160
    assert chosen(5000, 5000, 5000) == CLUSTER_LARGE  # 6.1 waves against 8.2 and 9.7
    assert chosen(850, 9512, 1368) == CLUSTER_LARGE  # the 128x192 pairs would make 4 wave-times of 3.03 waves
    assert chosen(863, 21880, 1800) == CLUSTER_LARGE  # 6 against 7 x 0.85 = 5.95: inside WIDE_MIN_GAIN
    assert chosen(3000, 3000, 3000, out=torch.float32).cluster_m == 1  # no pair fits an fp32 output here
    # Two-part plans under a wave of 128x256 tiles (off_sector.TWO_PART_PAIRS_UNDER_A_WAVE) take the fitted pair.
    assert chosen(1729, 1344, 5096) == CLUSTER_WIDE_160  # 84 128x256 tiles; plain 128x160
    assert chosen(1237, 2328, 5048) == CLUSTER_WIDE  # 100 128x256 tiles; plain 128x192; 75 128x160 pairs: 2 waves
    assert chosen(1368, 2120, 4648) == CLUSTER_LARGE  # 54 pairs in one wave; the 128x192 ones would make two
    from warpgemm.heuristics import FP8_WIDE, WIDE
    from warpgemm.off_sector import off_sector_config

    fp8 = torch.float8_e4m3fn
    assert off_sector_config(WIDE, 1, 1729, 1344, 132, BF, BF)[0] == CLUSTER_WIDE_160
    assert off_sector_config(FP8_WIDE, 1, 1729, 1344, 132, fp8, BF) is None  # fp8 pairs: from a wave only
    assert fitted_pair(3000, 3000, 132, BF, torch.float32) == CLUSTER_LARGE  # measured on 16-bit outputs only
    assert fitted_pair(3000, 3000, 132, BF, BF) == CLUSTER_WIDE
    # The SM count sets the waves: on 114 SMs (57 pairs a wave) 1000x5000x3000's 128 128x160 pairs make 3 wave-times
    # (2.4 tile-times) and its 108 128x192 ones 2 (1.7).
    assert fitted_pair(1000, 5000, 114, BF, BF) == CLUSTER_WIDE
    saved = off_sector.OFF_SECTOR_TWO_PART_PAIRS
    try:
        off_sector.OFF_SECTOR_TWO_PART_PAIRS = False
        assert fitted_pair(3000, 3000, 132, BF, BF) == CLUSTER_LARGE
    finally:
        off_sector.OFF_SECTOR_TWO_PART_PAIRS = saved
    # A weight read along N (rows N = 8 mod 16 long) takes them too (off_sector.N_MAJOR_TWO_PART_PAIRS).
    nn = lambda M, N, K: plan(meta(1, M, K), meta(1, K, N), meta(1, M, N)).config  # noqa: E731
    assert nn(3000, 3000, 3000) == CLUSTER_WIDE and nn(1000, 5000, 3000) == CLUSTER_WIDE_160
    assert fitted_pair(3000, 3000, 132, BF, BF, b_kmajor=False) == CLUSTER_WIDE
    saved = off_sector.N_MAJOR_TWO_PART_PAIRS
    try:
        off_sector.N_MAJOR_TWO_PART_PAIRS = False
        assert fitted_pair(3000, 3000, 132, BF, BF, b_kmajor=False) == CLUSTER_LARGE
        assert fitted_pair(3000, 3000, 132, BF, BF) == CLUSTER_WIDE
    finally:
        off_sector.N_MAJOR_TWO_PART_PAIRS = saved


def test_rows_off_sectors_skip_128x128_tiles_alone_with_a_wave_of_128x256_ones():
    """Operands whose rows start off 32-byte sectors make bytes dear: with a wave of 128x256 tiles the medium-alone
    rule is skipped (heuristics.OFF_SECTOR_NO_MEDIUM), also where no cluster pair can follow (B read along N, its
    rows on sectors; off them, the pair of the chosen tile follows: off_sector.N_MAJOR_PAIRS)."""
    from warpgemm.heuristics import CLUSTER_MEDIUM, MEDIUM

    nn = lambda M, N, K: plan(meta(1, M, K), meta(1, K, N), meta(1, M, N))  # noqa: E731
    assert nn(1099, 8576, 1712).config == MEDIUM  # rows on sectors: the tile-count model's choice
    p = nn(1099, 8576, 1704)  # A's rows (K = 8 mod 16) off sectors
    assert p.config.block_n == 256 and p.config.cluster_m == 1, p.config_reason
    p = nn(1099, 8568, 1704)  # and the weight's rows (N = 8 mod 16) too
    assert p.config.block_n == 256 and p.config.cluster_m == 2, p.config_reason
    assert nn(512, 4104, 4104).config == CLUSTER_MEDIUM  # 68 128x256 tiles: under a wave


def test_few_tiles_over_long_k_take_split_128x128_tiles():
    """Where the heuristics would take 64x64 tiles filling at most FEW_TILES_SPLIT_MAX_FILL of the SMs over K >=
    FEW_TILES_SPLIT_MIN_K, 128x128 tiles cut into 4 parts of K; not where the 64x64 tiles fill the SMs (`mid`'s
    128x4096x14336), at short K, batched, for fp8, or with the flag off."""
    from warpgemm import few_tiles_split as fts
    from warpgemm.few_tiles_split import SPLIT_TILE, few_tiles_split
    from warpgemm.heuristics import NARROW, choose_config

    def chosen(M, N, K, nn=False, batches=1):
        b = meta(batches, K, N) if nn else meta(batches, N, K).transpose(1, 2)
        return plan(meta(batches, M, K), b, meta(batches, M, N)).config

    assert chosen(104, 2832, 7816) == SPLIT_TILE  # 90 64x64 tiles; 23 128x128 tiles x 4 parts
    assert chosen(90, 1048, 6664, nn=True) == SPLIT_TILE
    assert chosen(250, 1200, 4096) == SPLIT_TILE  # 76 64x64 tiles; 2 x 10 tiles x 4 = 80 units
    assert chosen(250, 1200, 4088) == NARROW  # K under FEW_TILES_SPLIT_MIN_K
    assert chosen(300, 1200, 8192) == NARROW  # 95 64x64 tiles: over 70% of the SMs
    assert chosen(128, 4096, 14336) == NARROW  # 128 64x64 tiles: the SMs are full
    assert chosen(65, 1100, 12289) == SPLIT_TILE
    assert chosen(65, 700, 12289, batches=2) == NARROW  # batched: not measured (72 64x64 tiles: it would qualify)
    assert chosen(2307, 64, 7936) == NARROW  # an output 64 wide: outside the measured shapes
    assert plan(meta(1, 104, 7816), meta(1, 2832, 7816).transpose(1, 2), meta(1, 104, 2832, dtype=torch.float32)
                ).config == NARROW  # the split tile's fp32 output tile does not fit beside its ring
    assert few_tiles_split(1, 104, 2832, 7816, 132, torch.float8_e4m3fn) is None
    assert few_tiles_split(1, 104, 2832, 7816, 92, BF) is None  # 23 tiles x 4 parts over 92 SMs
    with mock.patch.object(fts, "FEW_TILES_SPLIT", False):
        choose_config.cache_clear()
        assert chosen(104, 2832, 7816) == NARROW
    choose_config.cache_clear()


def test_swap_rows_past_1000_rows_only_in_place_of_one_warpgroup_128x128_tiles():
    """From swap_rows.SWAP_WIDE_ROWS_MIN_M (1000) rows of x a 160- or 192-wide swap-AB tile replaces the one-warpgroup
    128x128 plan where its tiles fit the SMs in no more wave-times (swap_rows.SWAP_WIDE_TILE_TIME); not at 701-999
    rows (lost back to back), not other plans, not past SWAP_WIDE_ROWS_MAX_M, not on rows off 32-byte sectors, a
    weight read along N, batches or fp8; none with SWAP_WIDE_ROWS_ENABLED off."""
    from warpgemm import swap_rows
    from warpgemm.swap_rows import SWAP_ROWS, swap_rows_config

    def chosen(M, N, K, nn=False, batches=1):
        b = meta(batches, K, N) if nn else meta(batches, N, K).transpose(1, 2)
        gemm_impl.forget_plans()
        return plan(meta(batches, M, K), b, meta(batches, M, N)).config

    medium = GemmConfig(128, 128, 64, 6, 4)
    assert chosen(2659, 2296, 1488) == SWAP_ROWS[192]  # 14 x 18 tiles: 1.73 wave-times against 1.95
    assert chosen(1092, 8672, 1360) == SWAP_ROWS[160]
    assert chosen(1735, 2904, 2672) == SWAP_ROWS[160]  # 11 x 23 = 253 tiles (cuBLAS: 132 256x160 ones)
    assert not chosen(1735, 2904, 2664).swap_ab  # rows off sectors (K = 8 mod 16): a cluster pair
    assert chosen(2659, 2304, 1488) == SWAP_ROWS[192]
    assert chosen(2659, 2304, 1488, nn=True) == medium  # a weight read along N
    assert not chosen(2659, 2304, 1488, batches=2).swap_ab
    assert chosen(1901, 2408, 2512).block_n == 160 and not chosen(1901, 2408, 2512).swap_ab  # 128x160 stays
    assert chosen(1247, 11680, 5536) == SWAP_ROWS[192]  # held out: +15% after a flush, +2.5% back to back
    # 713 rows against a wide weight: the model's choice, but 5-14% behind both ways; below 1000 rows the plan stays
    assert swap_rows_config(medium, 1, 713, 12920, 132, BF, BF) is None
    assert chosen(713, 12920, 1264) == medium and chosen(999, 12920, 1264) == medium
    assert chosen(1000, 12920, 1264) == SWAP_ROWS[192]
    assert swap_rows_config(medium, 1, 4097, 2904, 132, BF, BF) is None  # past SWAP_WIDE_ROWS_MAX_M
    assert swap_rows_config(medium, 1, 4096, 2904, 132, BF, BF) is not None
    assert swap_rows_config(medium, 1, 1735, 2904, 132, BF, BF, rows_off_sector=True) is None
    assert swap_rows_config(medium, 1, 1735, 2904, 132, BF, BF, x_k_major=False) is None
    # x read along M (A column-major), measured -2% / -1% with these tiles (160 wide: -20% on two shapes): plain tiles
    assert chosen(3808, 10104, 3792) == SWAP_ROWS[192]
    gemm_impl.forget_plans()
    x_m_major = meta(1, 3792, 3808).transpose(1, 2)
    assert plan(x_m_major, meta(1, 10104, 3792).transpose(1, 2), meta(1, 3808, 10104)).config == medium
    assert swap_rows_config(GemmConfig(128, 128, 64, 5, 8), 1, 1735, 2904, 132, BF, BF) is None  # two warpgroups
    assert swap_rows_config(medium, 1, 1735, 2904, 132, BF, BF)[0] == SWAP_ROWS[160]
    assert swap_rows_config(medium, 1, 1735, 2904, 132, torch.float8_e4m3fn, BF) is None
    with mock.patch.object(swap_rows, "SWAP_WIDE_ROWS_MIN_M", 701):
        assert swap_rows_config(medium, 1, 713, 12920, 132, BF, BF) is not None  # the rows the limit keeps out
    with mock.patch.object(swap_rows, "SWAP_WIDE_ROWS_ENABLED", False):
        assert chosen(2659, 2296, 1488) == medium
    gemm_impl.forget_plans()


def test_explain_reads_the_layout_of_out():
    """explain(out=...) plans C as matmul(out=...) writes it: a transposed or gapped out is staged, one that does not
    fold to (batch, M, N) is computed aside and copied (it once described a fresh contiguous C whatever out was)."""
    import warpgemm

    a, w = meta(256, 512), meta(1024, 512)
    assert "C written in place" in warpgemm.explain(a, w.T, out=meta(256, 1024))
    assert "C staged through a padded buffer" in warpgemm.explain(a, w.T, out=meta(1024, 256).T)
    assert "C staged through a padded buffer" in warpgemm.explain(a, w.T, out=meta(256, 2048)[:, ::2])
    text = warpgemm.explain(meta(2, 256, 512), w.T, out=meta(256, 2, 1024).transpose(0, 1))
    assert text.startswith("out's strides do not fold to (batch, M, N): computed into a temporary")
