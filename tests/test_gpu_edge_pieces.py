"""GPU checks of A tiles loaded in row pieces where the last tile-row runs past A's end (gemm.edge_pieces,
partitions.load_a): the pieces past the end load other rows of A instead of zero-filled ones, so only rows past the
end may differ from a zero-padded product, and nothing may be written there. Every config the rule gives pieces,
forced, on ragged shapes, both B layouts, a bias, fp32 outputs, batches, repeats, and fp8 with per-row scales."""
import pytest
import torch

import warpgemm
from warpgemm.config import GemmConfig
from warpgemm.few_tiles_split import SPLIT_TILE
from warpgemm.heuristics import FP8_MEDIUM, FP8_NARROW, FP8_SMALL, MEDIUM, NARROW, SMALL
from warpgemm.kernels.hopper import gemm
from warpgemm.kernels.hopper.gemm import EDGE_PIECES
from warpgemm.off_sector import CLUSTER_MEDIUM, CLUSTER_SMALL
from warpgemm.ops import gemm_impl
from warpgemm.ops.scaled import plan, scale_mode
from warpgemm.testing import assert_ok, check_matmul, check_repeatable, matmul_reference, rand, rel_error

pytestmark = pytest.mark.gpu
BF = torch.bfloat16
DEV = "cuda"
PING_PONG = MEDIUM.replace(stages=5, consumers=2)
CONFIGS = [MEDIUM, SMALL, NARROW, CLUSTER_MEDIUM, CLUSTER_SMALL, SPLIT_TILE, PING_PONG]
ROWS = (67, 130, 259, 389)  # a last tile-row 3-125 rows full


def _pieces(a, b, cfg) -> int:
    """A_PIECES of the launch warpgemm.matmul(a, b, config=cfg) plans (b 2-D)."""
    a3 = a.unsqueeze(0) if a.dim() == 2 else a
    c = torch.empty(a3.shape[0], a3.shape[1], b.shape[-1], dtype=a.dtype, device=a.device)
    return gemm_impl.plan_hopper(a3, b.unsqueeze(0), c, None, cfg).launch.constexprs["A_PIECES"]


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
def test_pieces_are_right_and_write_nothing_past_the_end(cfg):
    g = torch.Generator(device=DEV).manual_seed(40)
    for M in ROWS:
        if M % cfg.block_m == 0 or -M % cfg.block_m <= cfg.block_m // EDGE_PIECES:
            continue
        N, K = 1000, 777  # ragged N and K too
        a, w = rand(M, K, g=g), rand(N, K, g=g)
        for b in ((w.T, ) if cfg.cluster_m > 1 else (w.T, w.T.contiguous())):  # clusters: K-major weights only
            assert _pieces(a, b, cfg) == EDGE_PIECES
            assert_ok(check_matmul(a, b, config=cfg), f"{cfg.name} M={M}")
            # The output inside a NaN buffer with rows after it: none of them may be written.
            buf = torch.full((M + 70, N), float("nan"), dtype=BF, device=DEV)
            warpgemm.matmul(a, b, out=buf[:M], config=cfg)
            assert torch.isnan(buf[M:]).all(), f"{cfg.name} M={M}: rows past the output written"
            assert rel_error(buf[:M], matmul_reference(a, b)) < 1e-2
        bias = rand(N, g=g)
        assert_ok(check_matmul(a, w.T, bias=bias, config=cfg), f"{cfg.name} M={M} bias")
        if cfg.split_k == 1 and cfg.consumers == 1:  # (whose fp32 output tiles fit beside a 4-stage ring)
            assert_ok(check_matmul(a, w.T, out_dtype=torch.float32, config=cfg.replace(stages=min(cfg.stages, 4))),
                      f"{cfg.name} M={M} fp32 out")


def test_batches_read_only_their_own_rows():
    """A batched A: a piece past batch b's rows loads batch b's last rows (the descriptor bounds each batch)."""
    g = torch.Generator(device=DEV).manual_seed(41)
    for cfg in (MEDIUM, NARROW):
        a, w = rand(3, 67, 512, g=g), rand(640, 512, g=g)
        assert _pieces(a, w.T, cfg) == EDGE_PIECES
        assert_ok(check_matmul(a, w.T, config=cfg), f"{cfg.name} batched")


def test_heuristics_take_pieces_and_repeat_bitwise():
    g = torch.Generator(device=DEV).manual_seed(42)
    a, w = rand(389, 4096, g=g), rand(2048, 4096, g=g)
    assert _pieces(a, w.T, None) == EDGE_PIECES, warpgemm.explain(a, w.T)
    assert_ok(check_matmul(a, w.T), "389x2048x4096")
    check_repeatable(a, w.T)
    # A full last tile-row keeps one box.
    assert _pieces(rand(512, 4096, g=g), w.T, None) == 1


@pytest.mark.parametrize("cfg", [FP8_MEDIUM, FP8_SMALL, FP8_NARROW], ids=lambda c: c.name)
def test_fp8_pieces_with_row_scales(cfg):
    g = torch.Generator(device=DEV).manual_seed(43)
    M, N, K = 130, 1024, 768
    x, w = rand(M, K, g=g), rand(N, K, g=g)
    sa = x.float().abs().amax(1, keepdim=True) / 448
    sb = w.float().abs().amax(1, keepdim=True).T / 448
    a8, w8 = (x.float() / sa).to(torch.float8_e4m3fn), (w.float() / sb.T).to(torch.float8_e4m3fn)
    ref = (a8.float() * sa) @ (w8.float() * sb.T).T
    for scales in ((sa, sb), (torch.ones((), device=DEV), torch.ones((), device=DEV))):
        want = ref if scales[0].dim() else a8.float() @ w8.float().T
        mode = scale_mode(*scales, M, N)
        c = torch.empty(M, N, dtype=BF, device=DEV)
        assert plan(a8, w8.T, c, mode, False, cfg).launch.constexprs["A_PIECES"] == EDGE_PIECES
        y = warpgemm.scaled_mm(a8, w8.T, *scales, out_dtype=BF, config=cfg)
        assert rel_error(y, want) < 1e-2, cfg.name


@pytest.mark.parametrize("cfg", [GemmConfig(64, 64, 128, 4, 4, warp_specialize=False),
                                 GemmConfig(64, 32, 128, 4, 4, warp_specialize=False)], ids=lambda c: c.name)
def test_one_partition_pieces_are_right(cfg, monkeypatch):
    """The one-partition kernel issues the same loads (its rule is off by default: gemm.EDGE_PIECES_ONE_PARTITION)."""
    monkeypatch.setattr(gemm, "EDGE_PIECES_ONE_PARTITION", True)
    g = torch.Generator(device=DEV).manual_seed(44)
    for M in (67, 101):
        a, w = rand(M, 1000, g=g), rand(600, 1000, g=g)
        assert _pieces(a, w.T, cfg) == EDGE_PIECES
        buf = torch.full((M + 70, 600), float("nan"), dtype=BF, device=DEV)
        warpgemm.matmul(a, w.T, out=buf[:M], config=cfg)
        assert torch.isnan(buf[M:]).all(), f"{cfg.name} M={M}: rows past the output written"
        assert rel_error(buf[:M], matmul_reference(a, w.T)) < 1e-2, f"{cfg.name} M={M}"
