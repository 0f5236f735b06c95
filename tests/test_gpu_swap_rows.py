"""GPU suite for swap-AB tiles stored in chunks through TMA (swap_rows.py; skipped without sm_90): the kernel computes
C^T with 128 weight rows by 80-192 rows of x per tile, x arriving in rest-wide boxes into two B buffers, and writes
the transposed tile back in C's orientation, chunk by chunk of C's rows, through two alternating shared buffers. So
the row edges of C are what can go wrong: M below, at and just past each piece boundary and the tile grid, a last
tile whose last chunks lie wholly past M; and the columns, a weight whose rows end inside a tile (bias per C
column). Outputs are NaN-filled (warpgemm.testing.check_matmul)."""
import pytest
import torch

import warpgemm
from warpgemm.config import check_config, width_parts
from warpgemm.ops import gemm_impl
from warpgemm.swap_rows import SWAP_ROWS
from warpgemm.testing import assert_ok, check_matmul, check_repeatable, rand, strided_operand

pytestmark = pytest.mark.gpu
BF = torch.bfloat16
DEV = "cuda"
CONFIGS = tuple(SWAP_ROWS.values())




@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
def test_swap_rows_tiles_at_row_edges(cfg):
    g = torch.Generator(device=DEV).manual_seed(61)
    bn = cfg.block_n
    main, rest = width_parts(bn)
    chunk = bn // cfg.store_chunks
    edges = {1, chunk - 1, chunk + 1, main - 1, main, main + 1, bn - 1, bn, bn + 1, 2 * bn + chunk // 2,
             3 * bn + 1, 700}
    for m in sorted(edges):
        for n, k in ((300, 72), (1000, 1704)):  # K = 1704: rows off 32-byte sectors
            a, w = rand(m, k, g=g), rand(n, k, g=g)
            assert_ok(check_matmul(a, w.T, config=cfg), f"{cfg.name} M={m} N={n} K={k}")
    # Bias per C column, on a weight whose last 128-row tile is partly inside N; fp32 and fp16 outputs.
    a, w, bias = rand(2 * bn + 5, 520, g=g), rand(2 * 128 + 37, 520, g=g), rand(2 * 128 + 37, g=g)
    assert_ok(check_matmul(a, w.T, bias=bias, config=cfg), f"{cfg.name} bias")
    if check_config(cfg, BF, torch.float32) is None:
        assert_ok(check_matmul(a, w.T, bias=bias, out_dtype=torch.float32, config=cfg), f"{cfg.name} fp32 out")
    a16, w16 = rand(bn + 3, 520, g=g, dtype=torch.float16), rand(900, 520, g=g, dtype=torch.float16)
    assert_ok(check_matmul(a16, w16.T, config=cfg), f"{cfg.name} fp16")
    a, b = rand(3, bn + 7, 250, g=g), rand(3, 330, 250, g=g).transpose(1, 2)
    assert_ok(check_matmul(a, b, config=cfg), f"{cfg.name} batched A and B")
    # Many tiles per program with K over several ring wraps, and with one K step (a tile's chunk stores follow the
    # previous tile's at once: the buffers' reuse).
    for k in (1000, 64, 8):
        a, w = rand(3 * bn - 9, k, g=g), rand(9000, k, g=g)
        assert_ok(check_matmul(a, w.T, config=cfg), f"{cfg.name} {3 * bn - 9}x9000x{k}")


@pytest.mark.parametrize("cfg", CONFIGS[::2], ids=lambda c: c.name)
def test_swap_rows_tiles_read_every_layout(cfg):
    """A column-major x and a weight contiguous along N (the kernel's A read MN-major), in place or copied."""
    g = torch.Generator(device=DEV).manual_seed(62)
    for a_col, b_col in ((False, False), (True, True), (True, False), (False, True)):
        a = strided_operand(cfg.block_n + 11, 200, col_major=a_col, dtype=BF, device=DEV, generator=g)
        b = strided_operand(200, 520, col_major=b_col, dtype=BF, device=DEV, generator=g)
        assert_ok(check_matmul(a, b, config=cfg), f"{cfg.name} layout {a_col, b_col}")


@pytest.mark.parametrize("cfg", CONFIGS[1::2], ids=lambda c: c.name)
def test_swap_rows_tiles_are_bitwise_repeatable_on_two_streams_and_in_a_graph(cfg):
    g = torch.Generator(device=DEV).manual_seed(63)
    a, w = rand(2 * cfg.block_n - 3, 2048, g=g), rand(6000, 2048, g=g)
    check_repeatable(a, w.T, cfg)


def test_heuristics_choose_swap_rows_tiles_where_they_fit_x():
    """An nn.Linear call with 283 rows of x takes two 144-wide swap-AB tiles per 128 weight rows (swap_rows.py: 132
    tiles, one wave, against 99 128x256 tiles padding x to 384 rows), and is right with a bias; 256 rows (no padding
    saved) keep a plain tile."""
    g = torch.Generator(device=DEV).manual_seed(64)
    a, w, bias = rand(283, 1488, g=g), rand(8424, 1488, g=g), rand(8424, g=g)
    plan = warpgemm.explain(a, w.T)
    assert "_swap" in plan and "2 swap-AB tile(s) of 144 rows" in plan, plan
    assert_ok(check_matmul(a, w.T, bias=bias), "283x8424x1488 heuristics")
    b = w.T.contiguous()  # B row-major (K, N): the weight read MN-major by the same tiles
    assert "2 swap-AB tile(s) of 144 rows" in warpgemm.explain(a, b)
    assert_ok(check_matmul(a, b, bias=bias), "283x8424x1488 heuristics, B row-major")
    assert "_swap" not in warpgemm.explain(rand(256, 1488, g=g), w.T)


@pytest.mark.parametrize("cfg", CONFIGS[::3] + (SWAP_ROWS[128], ), ids=lambda c: c.name)
def test_grouped_forms_refuse_chunked_swap_tiles(cfg):
    g = torch.Generator(device=DEV).manual_seed(65)
    x, w = rand(256, 128, g=g), rand(4, 64, 128, g=g)
    offs = torch.tensor([64, 128, 192, 256], device=DEV, dtype=torch.int32)
    with pytest.raises(ValueError, match="in powers of two" if cfg.block_n != 128 else "stored whole"):
        warpgemm.grouped_mm(x, w.transpose(1, 2), offs=offs, config=cfg)


@pytest.mark.parametrize("width", (160, 192))
def test_swap_rows_tiles_past_700_rows(width):
    """Past 700 rows x fills many swap-AB tiles (the tuner's candidates from 701 rows; the heuristics' from 1000,
    swap_rows._wide_rows_config): row edges at and around whole tiles up to 4096 rows, a weight whose last 128-row
    tile is partly inside N, with a bias."""
    g = torch.Generator(device=DEV).manual_seed(65)
    cfg = SWAP_ROWS[width]
    for m in (701, 11 * width - 1, 11 * width + 1, 4096):
        a, w = rand(m, 1040, g=g), rand(1000, 1040, g=g)
        assert_ok(check_matmul(a, w.T, config=cfg), f"{cfg.name} M={m}")
    M, N, K = (1735, 2904, 2672) if width == 160 else (2659, 2304, 1488)
    a, w, bias = rand(M, K, g=g), rand(N, K, g=g), rand(N, g=g)
    assert_ok(check_matmul(a, w.T, bias=bias, config=cfg), f"{M}x{N}x{K} with a bias")
    # The heuristics' own choice at these rows (this tile on 132 SMs), with the bias
    c3 = torch.empty(1, M, N, device=DEV, dtype=a.dtype)
    plan = gemm_impl.plan_hopper(a.unsqueeze(0), w.T.unsqueeze(0), c3, bias, None, may_tune=False)
    assert plan.config == cfg or torch.cuda.get_device_properties(DEV).multi_processor_count != 132, plan.config
    assert_ok(check_matmul(a, w.T, bias=bias), f"{M}x{N}x{K}, the heuristics' {plan.config.name}")
