"""GPU suite for 2-CTA cluster tiles (GemmConfig.cluster_m = 2: B shared through TMA multicast; skipped without
sm_90). The pair's CTAs walk tiles in lock step and release each other's ring slots, so shapes with an odd number of
tile-rows (a pair's lower tile past the output), one tile, batches, K below one step and many tiles per program are
what can hang or leave rows unwritten; outputs are NaN-filled (warpgemm.testing.check_matmul)."""
import pytest
import torch

import warpgemm
from warpgemm.candidates import CLUSTER_CANDIDATES
from warpgemm.config import check_config
from warpgemm.testing import assert_ok, check_matmul, check_repeatable, rand, strided_operand

pytestmark = pytest.mark.gpu
BF = torch.bfloat16
DEV = "cuda"




@pytest.mark.parametrize("cfg", CLUSTER_CANDIDATES, ids=lambda c: c.name)
def test_cluster_tiles_on_ragged_shapes(cfg):
    g = torch.Generator(device=DEV).manual_seed(41)
    # (M, N, K): one row; one pair; odd tile-rows; ragged everything; K under one step; several ring wraps.
    shapes = [(1, 1, 1), (1, 512, 256), (128, 256, 64), (640, 1024, 512), (1000, 1000, 1000), (136, 264, 24),
              (3000, 2500, 1024), (333, 77, 4097)]
    for m, n, k in shapes:
        a, w = rand(m, k, g=g), rand(n, k, g=g)
        assert_ok(check_matmul(a, w.T, config=cfg), f"{cfg.name} M={m} N={n} K={k}")
    a, w, bias = rand(3, 200, 300, g=g), rand(190, 300, g=g), rand(190, g=g)
    assert_ok(check_matmul(a, w.T, bias=bias, config=cfg), f"{cfg.name} batched A + bias")
    a, b = rand(3, 300, 250, g=g), rand(3, 190, 250, g=g).transpose(1, 2)
    assert_ok(check_matmul(a, b, config=cfg), f"{cfg.name} batched A and B")
    a16, w16 = rand(700, 520, g=g, dtype=torch.float16), rand(900, 520, g=g, dtype=torch.float16)
    assert_ok(check_matmul(a16, w16.T, config=cfg), f"{cfg.name} fp16")
    if check_config(cfg, BF, torch.float32) is None:
        assert_ok(check_matmul(a, b, out_dtype=torch.float32, config=cfg), f"{cfg.name} fp32 out")


@pytest.mark.parametrize("cfg", [CLUSTER_CANDIDATES[0], CLUSTER_CANDIDATES[3]], ids=lambda c: c.name)
def test_cluster_tiles_read_other_layouts(cfg):
    """A weight contiguous along N is read in place by every pair (a power-of-two tile's CTAs load half of B's
    columns each, a two-part tile's take its rest-wide boxes in turn). A column-major A is read in place (M = 256:
    its 512-byte column pitch is TMA-legal, so no copy hides it)."""
    g = torch.Generator(device=DEV).manual_seed(42)
    for a_col, b_col in ((False, False), (True, True), (True, False)):
        a = strided_operand(256, 200, col_major=a_col, dtype=BF, device=DEV, generator=g)
        b = strided_operand(200, 504, col_major=b_col, dtype=BF, device=DEV, generator=g)  # N-major rows TMA-legal
        plan = warpgemm.explain(a, b, config=cfg)
        assert ("A MN-major, read in place" if a_col else "A K-major, read in place") in plan, plan
        want_b = "B K-major, read in place" if b_col else "B MN-major, read in place"
        assert want_b in plan, plan
        assert_ok(check_matmul(a, b, config=cfg), f"{cfg.name} layout {a_col, b_col}")


@pytest.mark.parametrize("cfg", CLUSTER_CANDIDATES, ids=lambda c: c.name)
def test_cluster_tiles_on_a_weight_contiguous_along_n(cfg):
    """Pairs on B row-major (K, N): a power-of-two tile's CTAs load half of B's columns each (a box wider than its
    swizzle, which Triton issues as 64-column messages from two producer warps, each multicast); a two-part tile's
    take its rest-wide boxes in turn (128x192: two and one). Ragged edges, N off 32-byte sectors, batches, fp32 out
    where it fits."""
    g = torch.Generator(device=DEV).manual_seed(45)
    for m, n, k in ((1, 8, 1), (128, 256, 64), (640, 1000, 520), (1000, 3000, 1000), (333, 77, 4097),
                    (3000, 2504, 1024)):
        a, b = rand(m, k, g=g), rand(k, n, g=g)
        if n % 8 == 0:  # rows of whole 16 bytes: read in place (else a padded copy, as for any tile)
            assert "B MN-major, read in place" in warpgemm.explain(a, b, config=cfg)
        assert_ok(check_matmul(a, b, config=cfg), f"{cfg.name} nn M={m} N={n} K={k}")
    a, b, bias = rand(2, 300, 264, g=g), rand(2, 264, 392, g=g), rand(392, g=g)
    assert_ok(check_matmul(a, b, bias=bias, config=cfg), f"{cfg.name} nn batched + bias")
    if check_config(cfg, BF, torch.float32) is None:
        assert_ok(check_matmul(a, b, out_dtype=torch.float32, config=cfg), f"{cfg.name} nn fp32 out")


def test_cluster_tiles_are_bitwise_repeatable_on_two_streams_and_in_a_graph():
    g = torch.Generator(device=DEV).manual_seed(43)
    a, w = rand(2000, 2048, g=g), rand(3000, 2048, g=g)
    check_repeatable(a, w.T, CLUSTER_CANDIDATES[0])


def test_grouped_forms_refuse_cluster_tiles():
    g = torch.Generator(device=DEV).manual_seed(44)
    x, w = rand(256, 128, g=g), rand(4, 64, 128, g=g)
    offs = torch.tensor([64, 128, 192, 256], device=DEV, dtype=torch.int32)
    with pytest.raises(ValueError, match="cluster_m"):
        warpgemm.grouped_mm(x, w.transpose(1, 2), offs=offs, config=CLUSTER_CANDIDATES[1])


def test_heuristics_take_cluster_pairs_for_weight_rows_off_sectors():
    """A weight read along K whose rows start 16 bytes into a 32-byte sector (K = 8 mod 16) takes the pair of the
    chosen tile (off_sector.off_sector_config): the scan's slowest shapes, both pairs, ragged tile-rows and columns,
    batched with bias, fp16, fp32 out, and a graph replay and two streams bitwise equal to the first call."""
    from warpgemm.heuristics import CLUSTER_LARGE, CLUSTER_MEDIUM, CLUSTER_SMALL, CLUSTER_WIDE, CLUSTER_WIDE_160

    g = torch.Generator(device=DEV).manual_seed(44)
    for (m, n, k), pair in (((1099, 8568, 1704), CLUSTER_LARGE), ((1682, 10688, 1752), CLUSTER_LARGE),
                            ((4096, 4096, 4104), CLUSTER_LARGE), ((1000, 1000, 1000), CLUSTER_SMALL),
                            ((119, 20968, 5512), CLUSTER_SMALL), ((3102, 1184, 1368), CLUSTER_LARGE),
                            ((1208, 1048, 2632), CLUSTER_MEDIUM), ((147, 6288, 4888), CLUSTER_MEDIUM),
                            ((3000, 3000, 3000), CLUSTER_WIDE), ((1000, 5000, 3000), CLUSTER_WIDE_160),
                            ((835, 4528, 4008), CLUSTER_WIDE_160), ((1729, 1344, 5096), CLUSTER_WIDE_160),
                            ((1237, 2328, 5048), CLUSTER_WIDE)):
        a, w = rand(m, k, g=g), rand(n, k, g=g)
        plan = warpgemm.explain(a, w.T)
        assert f"config={pair.name}" in plan and "off 32-byte sectors" in plan, plan
        assert_ok(check_matmul(a, w.T), f"{m}x{n}x{k}")
    a, w, bias = rand(2, 1500, 1000, g=g), rand(3000, 1000, g=g), rand(3000, g=g)
    assert "_cm2" in warpgemm.explain(a, w.T)
    assert_ok(check_matmul(a, w.T, bias=bias), "batched + bias")
    assert_ok(check_matmul(a.half(), w.half().T, bias=bias.half()), "fp16")
    a, w = rand(900, 1000, g=g), rand(1000, 1000, g=g)
    assert_ok(check_matmul(a, w.T, out_dtype=torch.float32), "fp32 out")
    a, w, bias = rand(1000, 3000, g=g).half(), rand(5000, 3000, g=g).half(), rand(5000, g=g).half()
    assert "128x160x64_s5_w8_g8_c5_cm2" in warpgemm.explain(a, w.T)
    assert_ok(check_matmul(a, w.T, bias=bias), "fp16 two-part pair + bias")
    check_repeatable(rand(1536, 1704, g=g), rand(3000, 1704, g=g).T)
    check_repeatable(rand(3000, 3000, g=g), rand(3000, 3000, g=g).T)  # the 128x192 pair


def test_heuristics_take_cluster_pairs_for_n_major_weight_rows_off_sectors():
    """A weight read along N (B row-major (K, N)) whose rows start off 32-byte sectors (N = 8 mod 16) takes the pair of
    the chosen tile (off_sector.N_MAJOR_PAIRS; the two-part pairs by fitted_pair: N_MAJOR_TWO_PART_PAIRS). All five
    pairs, odd tile-rows, ragged columns, fp16 with bias (a 128x160 pair), fp32 out (the 64x128 pair: the 128x256 one
    does not fit it), batched A, and a graph replay and two streams bitwise equal to the first call."""
    from warpgemm.heuristics import CLUSTER_LARGE, CLUSTER_MEDIUM, CLUSTER_SMALL, CLUSTER_WIDE, CLUSTER_WIDE_160

    g = torch.Generator(device=DEV).manual_seed(46)
    for (m, n, k), pair in (((1099, 8568, 1704), CLUSTER_LARGE), ((1500, 3000, 1000), CLUSTER_WIDE_160),
                            ((2000, 3000, 1000), CLUSTER_WIDE),
                            ((606, 1128, 1824), CLUSTER_SMALL), ((512, 4104, 4104), CLUSTER_MEDIUM),
                            ((693, 1976, 5856), CLUSTER_MEDIUM)):
        a, b = rand(m, k, g=g), rand(k, n, g=g)
        plan = warpgemm.explain(a, b)
        assert f"config={pair.name}" in plan and "B MN-major, read in place" in plan, plan
        assert_ok(check_matmul(a, b), f"nn {m}x{n}x{k}")
    a, b, bias = rand(1500, 1000, g=g).half(), rand(1000, 3000, g=g).half(), rand(3000, g=g).half()
    assert f"config={CLUSTER_WIDE_160.name}" in warpgemm.explain(a, b, bias=bias)
    assert_ok(check_matmul(a, b, bias=bias), "nn fp16 + bias")
    a, b = rand(606, 1824, g=g), rand(1824, 1128, g=g)
    assert "_cm2" in warpgemm.explain(a, b, out_dtype=torch.float32)
    assert_ok(check_matmul(a, b, out_dtype=torch.float32), "nn fp32 out")
    a = rand(2, 800, 1704, g=g)
    assert "_cm2" in warpgemm.explain(a, rand(1704, 8568, g=g))
    assert_ok(check_matmul(a, rand(1704, 8568, g=g)), "nn batched A")
    check_repeatable(rand(1099, 1704, g=g), rand(1704, 8568, g=g))
