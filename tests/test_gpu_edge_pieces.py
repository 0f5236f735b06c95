"""GPU checks of A tiles loaded in row pieces where the last tile-row runs past A's end (gemm.edge_pieces,
partitions.load_a): the pieces past the end load other rows of A instead of zero-filled ones, so only rows past the
end may differ from a zero-padded product, and nothing may be written there. Every config the rule gives pieces,
forced, on ragged shapes, both B layouts, a bias, fp32 outputs, batches, repeats, and fp8 with per-row scales."""
import pytest
import torch

import warpgemm
from warpgemm.config import GemmConfig
from warpgemm.few_tiles_split import SPLIT_TILE
from warpgemm.heuristics import (FP8_CLUSTER_LARGE_FEW_ROWS, FP8_CLUSTER_SMALL, FP8_MEDIUM, FP8_NARROW, FP8_SMALL, MEDIUM,
                                 NARROW, SMALL)
from warpgemm.kernels.hopper import gemm
from warpgemm.kernels.hopper.gemm import EDGE_PIECES
from warpgemm.off_sector import (CLUSTER_LARGE, CLUSTER_LARGE_FEW_ROWS, CLUSTER_MEDIUM, CLUSTER_SMALL, CLUSTER_WIDE,
                                 CLUSTER_WIDE_160)
from warpgemm.ops import gemm_impl
from warpgemm.ops.scaled import plan, scale_mode
from warpgemm.testing import (assert_ok, check_matmul, check_repeatable, matmul_reference, rand, rel_error,
                              rowwise_fp8)

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True)
def _rows_not_shifted(monkeypatch):
    """Rows unshifted (gemm.edge_shift moves the last tile-row of these configs back inside A by default, which
    leaves the pieces nothing to do): the pieces still serve cluster pairs and launches without the shift."""
    monkeypatch.setattr(gemm, "EDGE_SHIFT", gemm.EDGE_SHIFT % 2)
    gemm_impl.forget_plans()
    yield
    gemm_impl.forget_plans()


BF = torch.bfloat16
DEV = "cuda"
STREAM_K = MEDIUM.replace(stream_k=True)
CONFIGS = [MEDIUM, SMALL, NARROW, CLUSTER_MEDIUM, CLUSTER_SMALL, SPLIT_TILE, STREAM_K]
ROWS = (67, 130, 259, 389)  # a last tile-row 3-125 rows full


def _pieces(a, b, cfg) -> list[int]:
    """A_PIECES of each launch warpgemm.matmul(a, b, config=cfg) plans (a column split: main, tail), on the operands
    as the call folds them (batching.to_batched)."""
    a3, b3 = (t.unsqueeze(0) if t.dim() == 2 else t for t in (a, b))
    if b3.shape[0] == 1 and a3.shape[0] > 1 and a3.is_contiguous():  # a broadcast weight: batches fold into rows
        a3 = a3.reshape(1, -1, a3.shape[-1])
    c = torch.empty(max(a3.shape[0], b3.shape[0]), a3.shape[1], b3.shape[-1], dtype=a.dtype, device=a.device)
    launch = gemm_impl.plan_hopper(a3, b3, c, None, cfg).launch
    return [k.constexprs["A_PIECES"] for k in gemm_impl._kernels(launch)]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
def test_pieces_are_right_and_write_nothing_past_the_end(cfg):
    g = torch.Generator(device=DEV).manual_seed(40)
    for M in ROWS:
        if M < cfg.block_m or -M % cfg.block_m <= cfg.block_m // EDGE_PIECES:
            continue
        N, K = 1000, 777  # ragged N and K too
        a, w = rand(M, K, g=g), rand(N, K, g=g)
        for b in (w.T, w.T.contiguous()):
            assert _pieces(a, b, cfg) == [EDGE_PIECES]
            assert_ok(check_matmul(a, b, config=cfg), f"{cfg.name} M={M}")
            # The output inside a NaN buffer with rows after it: none of them may be written.
            buf = torch.full((M + 70, N), float("nan"), dtype=BF, device=DEV)
            warpgemm.matmul(a, b, out=buf[:M], config=cfg)
            assert torch.isnan(buf[M:]).all(), f"{cfg.name} M={M}: rows past the output written"
            assert rel_error(buf[:M], matmul_reference(a, b)) < 1e-2
        bias = rand(N, g=g)
        assert_ok(check_matmul(a, w.T, bias=bias, config=cfg), f"{cfg.name} M={M} bias")
        if cfg.split_k == 1 and not cfg.stream_k:  # (whose fp32 output tiles fit beside a 4-stage ring)
            assert_ok(check_matmul(a, w.T, out_dtype=torch.float32, config=cfg.replace(stages=min(cfg.stages, 4))),
                      f"{cfg.name} M={M} fp32 out")


def test_batches_read_only_their_own_rows():
    """A batched A with a weight per batch (no folding into one row range): a piece past batch b's rows loads batch
    b's last rows (the descriptor bounds each batch)."""
    g = torch.Generator(device=DEV).manual_seed(41)
    for cfg, M in ((MEDIUM, 139), (NARROW, 67)):
        a, w = rand(3, M, 512, g=g), rand(3, 640, 512, g=g)
        assert _pieces(a, w.transpose(1, 2), cfg) == [EDGE_PIECES]
        assert_ok(check_matmul(a, w.transpose(1, 2), config=cfg), f"{cfg.name} batched")


def _phantoms(a, b, cfg) -> list[bool]:
    """A_PHANTOM of each launch warpgemm.matmul(a, b, config=cfg) plans."""
    a3, b3 = (t.unsqueeze(0) if t.dim() == 2 else t for t in (a, b))
    c = torch.empty(1, a3.shape[1], b3.shape[-1], dtype=a.dtype, device=a.device)
    plan = gemm_impl.plan_hopper(a3, b3, c, None, cfg)
    return [k.constexprs["A_PHANTOM"] for k in gemm_impl._kernels(plan.launch)]


def _in_place(a, b, c, cfg) -> bool:
    """Whether the plan writes c itself (a C whose rows TMA cannot address is staged and copied back by rows, which
    would make a check of the rows after it vacuous)."""
    a3, b3, c3 = (t.unsqueeze(0) for t in (a, b, c))
    return not gemm_impl.plan_hopper(a3, b3, c3, None, cfg).c_staged


# M: an odd tile-row count, the last partial or full (264 on 128-row tiles: pieces too); rows of M * 2 bytes a
# multiple of 16 where A is read along M in place. N = 10240: several tiles a CTA, so a phantom tile comes before real
# ones in the same CTA (its ring and barriers go on being used).
@pytest.mark.parametrize("cfg,M,N", [(CLUSTER_MEDIUM, 384, 904), (CLUSTER_MEDIUM, 264, 904), (CLUSTER_SMALL, 192, 904),
                                     (CLUSTER_LARGE, 384, 904), (CLUSTER_LARGE, 296, 904),
                                     (CLUSTER_LARGE_FEW_ROWS, 344, 904), (CLUSTER_WIDE, 328, 904),
                                     (CLUSTER_WIDE_160, 640, 904), (CLUSTER_WIDE_160, 296, 904),
                                     (CLUSTER_LARGE, 376, 10240), (CLUSTER_MEDIUM, 264, 10240),
                                     (CLUSTER_WIDE_160, 296, 8000)],
                         ids=lambda x: getattr(x, "name", str(x)))
def test_cluster_pairs_phantom_tile(cfg, M, N):
    """An odd number of tile-rows: the last pair's lower tile lies wholly past the end and loads no A
    (gemm.phantom_a; pieces too where the rule gives them); A read K-major and along M, both weight layouts."""
    g = torch.Generator(device=DEV).manual_seed(46)
    x, w = rand(M, 1000, g=g), rand(N, 1000, g=g)
    for a in (x, x.T.contiguous().T):
        for b in (w.T, w.T.contiguous()):
            assert _phantoms(a, b, cfg) == [True]
            buf = torch.full((M + 70, N), float("nan"), dtype=BF, device=DEV)
            assert _in_place(a, b, buf[:M], cfg)
            warpgemm.matmul(a, b, out=buf[:M], config=cfg)
            assert torch.isnan(buf[M:]).all(), f"{cfg.name} M={M}: rows past the output written"
            assert rel_error(buf[:M], matmul_reference(a, b)) < 1e-2
    assert_ok(check_matmul(x, w.T, bias=rand(N, g=g), config=cfg), f"{cfg.name} M={M} bias")
    # An even count has no such tile.
    assert _phantoms(rand(2 * cfg.block_m, 1000, g=g), w.T, cfg) == [False]


@pytest.mark.parametrize("cfg", [CLUSTER_LARGE, CLUSTER_MEDIUM, CLUSTER_WIDE_160], ids=lambda c: c.name)
def test_cluster_pairs_phantom_tile_copied_operands(cfg):
    """Rows whose strides TMA cannot read (K = 700: 1400-byte rows) are copied into padded buffers first; the pair's
    phantom tile then skips its A loads on the copy (M = 300: three tile-rows). N = 1104 leaves the last tile-column
    partly past the weight's end."""
    g = torch.Generator(device=DEV).manual_seed(49)
    M, N, K = 300, 1104, 700
    a, w = rand(M, K, g=g), rand(N, K, g=g)
    assert _phantoms(a, w.T, cfg) == [True]
    for b in (w.T, w.T.contiguous()):
        buf = torch.full((M + 40, N), float("nan"), dtype=BF, device=DEV)
        assert _in_place(a, b, buf[:M], cfg)
        warpgemm.matmul(a, b, out=buf[:M], config=cfg)
        torch.cuda.synchronize()
        assert torch.isnan(buf[M:]).all(), f"{cfg.name}: rows past the output written"
        assert rel_error(buf[:M], matmul_reference(a, b)) < 1e-2


def test_a_column_split_tail_takes_pieces():
    """The heuristics' column split (128x256 tiles, then 128x128 ones over the last columns): the tail takes pieces."""
    g = torch.Generator(device=DEV).manual_seed(45)
    a, w = rand(537, 4096, g=g), rand(28672, 4096, g=g)
    assert _pieces(a, w.T, None) == [1, EDGE_PIECES], warpgemm.explain(a, w.T)
    assert_ok(check_matmul(a, w.T), "537x28672x4096")


def test_heuristics_take_pieces_and_repeat_bitwise():
    g = torch.Generator(device=DEV).manual_seed(42)
    a, w = rand(389, 4096, g=g), rand(2048, 4096, g=g)
    assert _pieces(a, w.T, None) == [EDGE_PIECES], warpgemm.explain(a, w.T)
    assert_ok(check_matmul(a, w.T), "389x2048x4096")
    check_repeatable(a, w.T)
    # A full last tile-row keeps one box.
    assert _pieces(rand(512, 4096, g=g), w.T, None) == [1]


@pytest.mark.parametrize("cfg", [FP8_MEDIUM, FP8_SMALL, FP8_NARROW], ids=lambda c: c.name)
def test_fp8_pieces_with_row_scales(cfg):
    g = torch.Generator(device=DEV).manual_seed(43)
    M, N, K = 130, 1024, 768
    x, w = rand(M, K, g=g), rand(N, K, g=g)
    a8, w8, sa, sb = rowwise_fp8(x, w)
    ref = (a8.float() * sa) @ (w8.float() * sb.T).T
    for scales in ((sa, sb), (torch.ones((), device=DEV), torch.ones((), device=DEV))):
        want = ref if scales[0].dim() else a8.float() @ w8.float().T
        mode = scale_mode(*scales, M, N)
        c = torch.empty(M, N, dtype=BF, device=DEV)
        assert plan(a8, w8.T, c, mode, False, cfg).launch.constexprs["A_PIECES"] == EDGE_PIECES
        y = warpgemm.scaled_mm(a8, w8.T, *scales, out_dtype=BF, config=cfg)
        assert rel_error(y, want) < 1e-2, cfg.name


@pytest.mark.parametrize("cfg,M", [(FP8_CLUSTER_LARGE_FEW_ROWS, 347), (FP8_CLUSTER_SMALL, 130)],
                         ids=lambda x: getattr(x, "name", str(x)))
def test_fp8_pairs_phantom_tile(cfg, M):
    g = torch.Generator(device=DEV).manual_seed(47)
    N, K = 1024, 768
    x, w = rand(M, K, g=g), rand(N, K, g=g)
    a8, w8, sa, sb = rowwise_fp8(x, w)
    c = torch.empty(M, N, dtype=BF, device=DEV)
    assert plan(a8, w8.T, c, scale_mode(sa, sb, M, N), False, cfg).launch.constexprs["A_PHANTOM"]
    y = warpgemm.scaled_mm(a8, w8.T, sa, sb, out_dtype=BF, config=cfg)
    assert rel_error(y, (a8.float() * sa) @ (w8.float() * sb.T).T) < 1e-2, cfg.name


@pytest.mark.parametrize("cfg", [GemmConfig(64, 64, 128, 4, 4, warp_specialize=False),
                                 GemmConfig(64, 32, 128, 4, 4, warp_specialize=False)], ids=lambda c: c.name)
def test_one_partition_pieces_are_right(cfg, monkeypatch):
    """The one-partition kernel issues the same loads (its rule is off by default: gemm.EDGE_PIECES_ONE_PARTITION)."""
    monkeypatch.setattr(gemm, "EDGE_PIECES_ONE_PARTITION", True)
    g = torch.Generator(device=DEV).manual_seed(44)
    for M in (67, 101):
        a, w = rand(M, 1000, g=g), rand(600, 1000, g=g)
        assert _pieces(a, w.T, cfg) == [EDGE_PIECES]
        buf = torch.full((M + 70, 600), float("nan"), dtype=BF, device=DEV)
        warpgemm.matmul(a, w.T, out=buf[:M], config=cfg)
        assert torch.isnan(buf[M:]).all(), f"{cfg.name} M={M}: rows past the output written"
        assert rel_error(buf[:M], matmul_reference(a, w.T)) < 1e-2, f"{cfg.name} M={M}"
