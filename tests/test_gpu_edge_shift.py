"""GPU checks of shifted edge tiles (gemm.edge_shift, scheduler.shift_edges): a last tile-column or tile-row that would
run past the product's edge is moved back to end at it, so it overlaps the tiles before it and their outputs are
written twice. Both writes must carry the same bits: the result must equal, bit for bit, the unshifted launch's with
K read first to last (the shift turns the serpentine K order off in its launch), and nothing outside the output may
be written. Forced configs of every class the rule takes, ragged shapes, both operand layouts of A and B, a bias,
fp32 outputs, batches, split-K parts, a cluster pair's columns, swap-AB tiles, fp8 with row and column scales."""
import pytest
import torch

import warpgemm
from warpgemm import _env
from warpgemm.config import GemmConfig
from warpgemm.few_tiles_split import SPLIT_TILE
from warpgemm.heuristics import FP8_MEDIUM, FP8_NARROW, GROUPED_SWAP, MEDIUM, NARROW, SMALL
from warpgemm.kernels.hopper import gemm
from warpgemm.off_sector import CLUSTER_MEDIUM, CLUSTER_SMALL
from warpgemm.ops import gemm_impl
from warpgemm.ops.scaled import plan, scale_mode
from warpgemm.testing import (assert_ok, check_matmul, check_repeatable, matmul_reference, rand, rel_error,
                              rowwise_fp8)

pytestmark = pytest.mark.gpu
BF = torch.bfloat16
DEV = "cuda"
TWO_PART = GemmConfig(128, 192, 64, 4, 8, group_m=16, store_chunks=3)


def _shifts(a, b, cfg) -> list[int]:
    """EDGE_SHIFT of each launch warpgemm.matmul(a, b, config=cfg) plans (as the call folds a and b)."""
    a3, b3 = (t.unsqueeze(0) if t.dim() == 2 else t for t in (a, b))
    c = torch.empty(max(a3.shape[0], b3.shape[0]), a3.shape[1], b3.shape[-1], dtype=BF, device=a.device)
    return [k.constexprs["EDGE_SHIFT"] for k in gemm_impl._kernels(gemm_impl.plan_hopper(a3, b3, c, None, cfg).launch)]


def _unshifted_forward(a, b, out, cfg, monkeypatch, **kw):
    """The same product without the shift, every K step read first to last: the bits a shifted launch must give."""
    with monkeypatch.context() as m:
        m.setattr(gemm, "EDGE_SHIFT", 0)
        m.setattr(_env, "K_ORDER", "forward")
        gemm_impl.forget_plans()
        warpgemm.matmul(a, b, out=out, config=cfg, **kw)
    gemm_impl.forget_plans()
    return out


def _edge_start(size, block):
    """Where a shifted last tile starts (scheduler.edge_offset), or None where the dimension has one tile."""
    return (size - block + 15) // 16 * 16 if size > block else None


def _check_bitwise(a, b, cfg, monkeypatch, **kw):
    M, N = a.shape[-2], b.shape[-1]
    lead = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    dtype = kw.get("out_dtype") or BF
    # NaN rows and columns around the output (a pitch of N + 16 keeps its rows 16-byte aligned): none may be written.
    buf = torch.full(lead + (M + 40, N + 16), float("nan"), dtype=dtype, device=DEV)
    out = buf[..., :M, :N]
    warpgemm.matmul(a, b, out=out, config=cfg, **kw)
    torch.cuda.synchronize()
    assert torch.isnan(buf[..., M:, :]).all() and torch.isnan(buf[..., :, N:]).all(), f"{cfg.name}: written past C"
    want = _unshifted_forward(a, b, torch.empty_like(out), cfg, monkeypatch, **kw)
    assert torch.equal(out, want), f"{cfg.name} {M}x{N}: shifted and unshifted bits differ"
    assert rel_error(out, matmul_reference(a, b, bias=kw.get("bias"))) < 1e-2
    # The overlap has two writers, and whichever stores last wins: the comparison above would miss a shifted tile
    # whose bits differ if it stored first. So the shifted tile's region alone, as the first tile of a product over
    # those rows / columns only (unshifted, K forward), must carry the same bits too.
    cols, rows = (cfg.block_m, cfg.block_n) if cfg.swap_ab else (cfg.block_n, cfg.block_m)
    s = _edge_start(N, cols)
    if s is not None:
        sub = dict(kw, bias=None if kw.get("bias") is None else kw["bias"][s:])
        part = _unshifted_forward(a, b[..., :, s:], torch.empty_like(out[..., :, s:]), cfg, monkeypatch, **sub)
        assert torch.equal(out[..., :, s:], part), f"{cfg.name} {M}x{N}: the last tile-column's bits differ"
    s = _edge_start(M, rows)
    if s is not None:
        part = _unshifted_forward(a[..., s:, :], b, torch.empty_like(out[..., s:, :]), cfg, monkeypatch, **kw)
        assert torch.equal(out[..., s:, :], part), f"{cfg.name} {M}x{N}: the last tile-row's bits differ"


# (config, M, N, bits): rows and columns past the tiles (last tile-row / -column 3-125 rows full), N mostly a
# multiple of 8 so that C is written in place; M a multiple of 8 where A is also read along M (392: a shifted start
# along A's contiguous dimension). Cluster pairs and two-part widths shift columns only / where the rule allows.
CASES = [(MEDIUM, 389, 1000, 3), (MEDIUM, 130, 1160, 3), (MEDIUM, 1083, 3848, 3), (MEDIUM, 392, 1000, 3),
         (MEDIUM, 512, 1160, 1),
         (MEDIUM, 389, 1024, 2), (SMALL, 197, 904, 3), (NARROW, 67, 1000, 3), (SPLIT_TILE, 389, 1000, 3),
         (CLUSTER_MEDIUM, 389, 1000, 1), (CLUSTER_SMALL, 130, 1160, 1), (GROUPED_SWAP, 90, 1000, 3),
         (GROUPED_SWAP, 96, 1000, 2),  # swap-AB: the kernel's rows are the weight's (N), its columns x's (M)
         # N - block_n not a multiple of 8 (C staged, an N-major B copied): the shifted start is a multiple of 16, as
         # TMA's boxes along C's columns (and B's, N-major) must start 16-byte aligned.
         (MEDIUM, 130, 1100, 3), (NARROW, 65, 127, 3), (GROUPED_SWAP, 90, 1100, 3), (SPLIT_TILE, 65, 1100, 1)]


@pytest.mark.parametrize("cfg,M,N,bits", CASES, ids=lambda x: getattr(x, "name", str(x)))
def test_shifted_edges_match_unshifted_bits(cfg, M, N, bits, monkeypatch):
    g = torch.Generator(device=DEV).manual_seed(50)
    K = 777  # ragged K too
    x, w = rand(M, K, g=g), rand(N, K, g=g)
    assert _shifts(x, w.T, cfg) == [bits], warpgemm.explain(x, w.T, config=cfg)
    for a in (x, x.T.contiguous().T) if M % 8 == 0 else (x,):
        for b in (w.T, w.T.contiguous()):
            _check_bitwise(a, b, cfg, monkeypatch)
    _check_bitwise(x, w.T, cfg, monkeypatch, bias=rand(N, g=g))
    if cfg.split_k == 1:
        _check_bitwise(x, w.T, cfg.replace(stages=min(cfg.stages, 4)), monkeypatch, out_dtype=torch.float32)


def test_two_part_widths_when_allowed(monkeypatch):
    monkeypatch.setattr(gemm, "EDGE_SHIFT_TWO_PART", True)
    gemm_impl.forget_plans()
    g = torch.Generator(device=DEV).manual_seed(51)
    x, w = rand(389, 640, g=g), rand(1000, 640, g=g)
    assert _shifts(x, w.T, TWO_PART) == [3]
    for b in (w.T, w.T.contiguous()):
        _check_bitwise(x, b, TWO_PART, monkeypatch)
    gemm_impl.forget_plans()


def test_batches_shift_within_their_own_rows(monkeypatch):
    """A weight per batch: each batch's last tile-row is shifted inside that batch (the descriptor bounds it)."""
    g = torch.Generator(device=DEV).manual_seed(52)
    a, w = rand(3, 139, 512, g=g), rand(3, 1000, 512, g=g)
    assert _shifts(a, w.transpose(1, 2), MEDIUM) == [3]
    _check_bitwise(a, w.transpose(1, 2), MEDIUM, monkeypatch)


def test_no_shift_inside_one_tile_or_on_whole_tiles():
    g = torch.Generator(device=DEV).manual_seed(53)
    w = rand(1024, 256, g=g)
    assert _shifts(rand(100, 256, g=g), w.T, MEDIUM) == [0]  # one tile-row only: nothing to overlap
    assert _shifts(rand(512, 256, g=g), rand(96, 256, g=g).T, MEDIUM) == [0]  # one tile-column
    assert _shifts(rand(512, 256, g=g), w.T, MEDIUM) == [0]
    assert _shifts(rand(389, 256, g=g), w.T, GemmConfig(128, 256, 64, 3, 8)) == [0]  # not the rule's tiles


def test_heuristics_shift_and_repeat_bitwise():
    g = torch.Generator(device=DEV).manual_seed(54)
    a, w = rand(1818, 5632, g=g), rand(3024, 5632, g=g)  # 128x128 tiles on the plan
    assert 0 not in _shifts(a, w.T, None), warpgemm.explain(a, w.T)
    assert_ok(check_matmul(a, w.T), "1818x3024x5632")
    check_repeatable(a, w.T)


@pytest.mark.parametrize("cfg", [FP8_MEDIUM, FP8_NARROW], ids=lambda c: c.name)
def test_fp8_shifted_with_row_and_column_scales(cfg, monkeypatch):
    g = torch.Generator(device=DEV).manual_seed(55)
    M, N, K = 389, 1000, 768
    x, w = rand(M, K, g=g), rand(N, K, g=g)
    a8, w8, sa, sb = rowwise_fp8(x, w)
    c = torch.empty(M, N, dtype=BF, device=DEV)
    assert plan(a8, w8.T, c, scale_mode(sa, sb, M, N), False, cfg).launch.constexprs["EDGE_SHIFT"] == 3
    y = warpgemm.scaled_mm(a8, w8.T, sa, sb, out_dtype=BF, config=cfg)
    assert rel_error(y, (a8.float() * sa) @ (w8.float() * sb.T).T) < 1e-2, cfg.name
    with monkeypatch.context() as m:
        m.setattr(gemm, "EDGE_SHIFT", 0)
        m.setattr(_env, "K_ORDER", "forward")
        gemm_impl.forget_plans()
        want = warpgemm.scaled_mm(a8, w8.T, sa, sb, out_dtype=BF, config=cfg)
    gemm_impl.forget_plans()
    assert torch.equal(y, want), f"{cfg.name}: shifted and unshifted bits differ"
