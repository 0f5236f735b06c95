"""GPU suite for two-part tile widths (config.TWO_PART_WIDTHS: 192 = 128 + 64, 160, 144, 96, 80 columns; skipped
without sm_90). Such a tile is two accumulators (a power-of-two main part and a smaller rest) fed from two B buffers
by rest-wide TMA boxes and stored in rest-wide chunks (128x144: nine boxes of 16 rows, nine 16-column chunks), so
the column edges are what can go wrong: N below, at and just past each piece boundary and the tile grid, a last tile
whose last boxes or second accumulator lie wholly past N, bias and scales on the second accumulator's columns.
Outputs are NaN-filled (warpgemm.testing.check_matmul)."""
import pytest
import torch

import warpgemm
from warpgemm.candidates import WIDE_CANDIDATES
from warpgemm.config import check_config, width_parts
from warpgemm.testing import assert_ok, check_matmul, check_repeatable, rand, strided_operand

pytestmark = pytest.mark.gpu
BF = torch.bfloat16
DEV = "cuda"




@pytest.mark.parametrize("cfg", WIDE_CANDIDATES, ids=lambda c: c.name)
def test_wide_tiles_at_column_edges(cfg):
    g = torch.Generator(device=DEV).manual_seed(51)
    bn = cfg.block_n
    main, rest = width_parts(bn)
    edges = {1, rest - 1, rest, rest + 1, main - 1, main, main + 1, bn - 1, bn, bn + 1, 2 * bn - 1, 2 * bn + rest,
             2 * bn + rest + 1, 3072}
    for n in sorted(edges):
        for m, k in ((130, 72), (1, 4096)):
            a, w = rand(m, k, g=g), rand(n, k, g=g)
            assert_ok(check_matmul(a, w.T, config=cfg), f"{cfg.name} M={m} N={n} K={k}")
        b = rand(72, n, g=g)  # a (K, N) row-major B: rest-wide column boxes (a padded copy where N % 8 != 0)
        assert_ok(check_matmul(rand(130, 72, g=g), b, config=cfg), f"{cfg.name} M=130 N={n} K=72 B N-major")
    # The last tile's second accumulator partly inside N (bias and stores clipped there): N = 550 leaves 38 of 192's
    # 64 rest columns, N = 430 14 of 144's 16.
    n = 2 * bn + main + rest // 2 + 6
    a, w, bias = rand(300, 520, g=g), rand(n, 520, g=g), rand(n, g=g)
    assert_ok(check_matmul(a, w.T, bias=bias, config=cfg), f"{cfg.name} bias")
    if check_config(cfg, BF, torch.float32) is None:
        assert_ok(check_matmul(a, w.T, bias=bias, out_dtype=torch.float32, config=cfg), f"{cfg.name} fp32 out")
    a16, w16 = rand(700, 520, g=g, dtype=torch.float16), rand(900, 520, g=g, dtype=torch.float16)
    assert_ok(check_matmul(a16, w16.T, config=cfg), f"{cfg.name} fp16")
    a, b = rand(3, 300, 250, g=g), rand(3, 330, 250, g=g).transpose(1, 2)
    assert_ok(check_matmul(a, b, config=cfg), f"{cfg.name} batched A and B")
    # Many tiles per program (3072^2 outputs: 384 tiles on at most 132 programs) with K over several ring wraps, and
    # with one K step, where a tile's stores follow the previous tile's at once (the chunk buffers' reuse).
    for k in (1000, 64, 8):
        a, w = rand(3072, k, g=g), rand(3072, k, g=g)
        assert_ok(check_matmul(a, w.T, config=cfg), f"{cfg.name} 3072x3072x{k}")
        check_repeatable(a, w.T, cfg)


@pytest.mark.parametrize("cfg", WIDE_CANDIDATES[1:], ids=lambda c: c.name)
def test_wide_tiles_read_every_layout_in_place(cfg):
    """A column-major A, and a weight contiguous along N (rest-wide column boxes into the two B buffers), are read
    in place (M = 256, K = 200, N = 520: pitches TMA can take, so no copy hides a layout)."""
    g = torch.Generator(device=DEV).manual_seed(52)
    for a_col, b_col in ((False, False), (True, True), (True, False), (False, True)):
        a = strided_operand(256, 200, col_major=a_col, dtype=BF, device=DEV, generator=g)
        b = strided_operand(200, 520, col_major=b_col, dtype=BF, device=DEV, generator=g)
        plan = warpgemm.explain(a, b, config=cfg)
        assert ("A MN-major, read in place" if a_col else "A K-major, read in place") in plan, plan
        assert ("B K-major, read in place" if b_col else "B MN-major, read in place") in plan, plan
        assert_ok(check_matmul(a, b, config=cfg), f"{cfg.name} layout {a_col, b_col}")


@pytest.mark.parametrize("cfg", WIDE_CANDIDATES[1:4], ids=lambda c: c.name)
def test_wide_tiles_are_bitwise_repeatable_on_two_streams_and_in_a_graph(cfg):
    g = torch.Generator(device=DEV).manual_seed(53)
    a, w = rand(1536, 2048, g=g), rand(4000, 2048, g=g)
    check_repeatable(a, w.T, cfg)


@pytest.mark.parametrize("cfg", WIDE_CANDIDATES[::3], ids=lambda c: c.name)
def test_grouped_forms_refuse_wide_tiles(cfg):
    g = torch.Generator(device=DEV).manual_seed(54)
    x, w = rand(256, 128, g=g), rand(4, 64, 128, g=g)
    offs = torch.tensor([64, 128, 192, 256], device=DEV, dtype=torch.int32)
    with pytest.raises(ValueError, match="block_n"):
        warpgemm.grouped_mm(x, w.transpose(1, 2), offs=offs, config=cfg)


def test_few_rows_plans_take_the_192_column_tile():
    """At 129-511 rows the heuristics take 128x192 tiles where the wave model favours them (heuristics.FEW_ROWS_WIDE;
    on 132-SM parts): the plan as chosen, on NaN-filled outputs, with the bias, a short and a long K and x's last
    tile-row part-filled (448 = 3.5 x 128 rows, 450)."""
    from warpgemm.heuristics import WIDE

    g = torch.Generator(device=DEV).manual_seed(55)
    for m, n, k in ((448, 11008, 256), (450, 11080, 1040), (480, 11008, 4096)):
        a, w, bias = rand(m, k, g=g), rand(n, k, g=g), rand(n, g=g)
        plan = warpgemm.explain(a, w.T)
        if torch.cuda.get_device_properties(0).multi_processor_count == 132:
            assert f"config={WIDE.name}" in plan, plan
        assert_ok(check_matmul(a, w.T, bias=bias), f"{m}x{n}x{k} plan")
