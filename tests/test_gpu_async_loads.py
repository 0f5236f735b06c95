"""GPU suite for operands read with cp.async (kernels/hopper/async_loads.py; skipped without sm_90): rows that start
off 32-byte sectors (bf16 with a row of 8 mod 16 elements, fp8 with 16 mod 32) are copied by the producer warpgroup
in 16-byte pieces instead of TMA boxes. What can go wrong: the zero fill past M, N and K (TMA's for free), the
swizzled slot addresses of every box shape, the barrier counts (one TMA operand and one cp.async operand, or two),
a two-part tile's second B buffer, batches, and the proxy fence before wgmma. Outputs are NaN-filled."""
import pytest
import torch

import warpgemm
from warpgemm import heuristics as h
from warpgemm.config import GemmConfig, check_config
from warpgemm.testing import check_matmul, check_repeatable, strided_operand

pytestmark = pytest.mark.gpu
BF = torch.bfloat16
DEV = "cuda"
CP = "with cp.async"

# Every tile shape the heuristics can choose for bf16, and the forced variants that load differently (split-K,
# stream-K, ping-pong).
CONFIGS = [h.LARGE, h.WIDE, h.WIDE_160, h.MEDIUM, h.ONE_ROW_DEEP_K, h.SMALL, h.NARROW, h.DECODE_WIDE,
           h.DECODE_SHORT_K, *sorted(set(h.DECODE.values()), key=lambda c: c.name),
           GemmConfig(block_m=128, block_n=128, block_k=64, stages=4, consumer_warps=4, split_k=3),
           GemmConfig(block_m=128, block_n=256, block_k=64, stages=3, consumer_warps=8, stream_k=True),
           GemmConfig(block_m=128, block_n=128, block_k=64, stages=4, consumer_warps=4, consumers=2)]


def _ok(r, what):
    assert r["ok"], f"{what}: error {r['err']:.3e} > tolerance {r['tol']:.3e} (torch {r['torch_err']:.3e})"


def rand(*shape, g, dtype=BF):
    return torch.randn(shape, device=DEV, generator=g).to(dtype)


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: c.name)
def test_off_sector_rows_at_tile_edges(cfg):
    """K = 8 mod 16 with M, N and K each below, at and past the tile and K step edges; K below one K step."""
    g = torch.Generator(device=DEV).manual_seed(61)
    bm, bn, bk = (cfg.block_n, cfg.block_m, cfg.block_k) if cfg.swap_ab else (cfg.block_m, cfg.block_n, cfg.block_k)
    for m, n, k in ((bm + 1, bn - 1, bk + 8), (1, 2 * bn + 3, 8), (3 * bm - 5, bn + 1, 3 * bk - 40), (300, 520, 1000),
                    (bm, bn, 24)):
        a, w = rand(m, k, g=g), rand(n, k, g=g)
        plan = warpgemm.explain(a, w.T, config=cfg)
        if m > 1:
            assert f"A K-major, read in place {CP}" in plan, plan
        assert f"B K-major, read in place {CP}" in plan, plan
        _ok(check_matmul(a, w.T, config=cfg), f"{cfg.name} M={m} N={n} K={k}")


@pytest.mark.parametrize("cfg", [h.LARGE, h.MEDIUM, h.SMALL, h.WIDE_160, h.DECODE[64]], ids=lambda c: c.name)
def test_one_operand_by_cp_async_the_other_by_tma(cfg):
    """Only one operand's rows off sectors: its slot is ready after TMA's bytes and 128 thread arrivals. A column-major
    A of M = 8 mod 16 rows; a (K, N) row-major B of N = 8 mod 16 columns."""
    g = torch.Generator(device=DEV).manual_seed(62)
    m, n, k = 1000, 1016, 512
    a = strided_operand(m, k, col_major=True, dtype=BF, device=DEV, generator=g)
    w = rand(n, k, g=g)
    plan = warpgemm.explain(a, w.T, config=cfg)
    assert f"A MN-major, read in place {CP}" in plan and "B K-major, read in place;" in plan, plan
    _ok(check_matmul(a, w.T, config=cfg), f"{cfg.name} A column-major")
    a, b = rand(m + 16, k, g=g), rand(k, 1000, g=g)
    plan = warpgemm.explain(a, b, config=cfg)
    if cfg.block_n % 64 == 0:  # 128x160 tiles are chosen for K-major weights only, but run either when forced
        assert "A K-major, read in place;" in plan and f"B MN-major, read in place {CP}" in plan, plan
    _ok(check_matmul(a, b, config=cfg), f"{cfg.name} B row-major")


def test_batched_bias_and_output_dtypes():
    g = torch.Generator(device=DEV).manual_seed(63)
    a, b = rand(3, 300, 1000, g=g), rand(3, 400, 1000, g=g).transpose(1, 2)
    _ok(check_matmul(a, b), "batched")
    a2 = rand(1, 300, 1000, g=g)  # one A broadcast over B's batches
    _ok(check_matmul(a2, b), "broadcast A")
    w, bias = rand(1000, 1704, g=g), rand(1000, g=g)
    x = rand(777, 1704, g=g)
    for cfg in (None, h.LARGE, h.MEDIUM):
        _ok(check_matmul(x, w.T, bias=bias, config=cfg), f"bias {cfg}")
        if cfg is None or check_config(cfg, BF, torch.float32) is None:
            _ok(check_matmul(x, w.T, bias=bias, out_dtype=torch.float32, config=cfg), f"fp32 out {cfg}")
    x16, w16 = x.half(), w.half()
    _ok(check_matmul(x16, w16.T), "fp16")


def test_heuristics_take_cp_async_and_not_for_ragged_pieces():
    """The shapes of the random scan that ran slowest (K = 1704, 1752, 7512), with the heuristics' own configs; and a
    view whose contiguous extent (997) is not whole 16-byte pieces stays on TMA (a copy would straddle the edge)."""
    g = torch.Generator(device=DEV).manual_seed(64)
    for m, n, k in ((1099, 8568, 1704), (1682, 10688, 1752), (688, 7880, 7512), (16, 4096, 4104), (100, 28672, 1000)):
        a, w = rand(m, k, g=g), rand(n, k, g=g)
        plan = warpgemm.explain(a, w.T)
        assert CP in plan or "path=gemv" in plan, plan
        _ok(check_matmul(a, w.T), f"{m}x{n}x{k}")
    base = rand(500, 1000, g=g)
    a = base[:, :997]
    w = rand(700, 1000, g=g)[:, :997]
    plan = warpgemm.explain(a, w.T)
    assert CP not in plan, plan
    _ok(check_matmul(a, w.T), "997 of 1000")


@pytest.mark.parametrize("cfg", [h.LARGE, h.SMALL, h.DECODE[16]], ids=lambda c: c.name)
def test_cp_async_is_bitwise_repeatable_on_two_streams_and_in_a_graph(cfg):
    g = torch.Generator(device=DEV).manual_seed(65)
    a, w = rand(1536 if not cfg.swap_ab else 16, 1000, g=g), rand(3000, 1000, g=g)
    check_repeatable(a, w.T, cfg)


def test_fp8_rows_of_16_mod_32_bytes():
    """scaled_mm: fp8 rows of K = 16 mod 32 bytes take cp.async too (one byte per element: 16-element pieces)."""
    from warpgemm.ops.scaled import reference
    from warpgemm.testing import rel_error

    g = torch.Generator(device=DEV).manual_seed(66)
    for m, n, k in ((1000, 4112, 1040), (64, 2000, 4112), (300, 528, 48)):
        a = (torch.randn(m, k, device=DEV, generator=g) * 2).to(torch.float8_e4m3fn)
        w = (torch.randn(n, k, device=DEV, generator=g) * 2).to(torch.float8_e4m3fn)
        sa, sb = torch.rand((), device=DEV, generator=g) + 2, torch.rand((), device=DEV, generator=g) * 0.2 + 0.1
        out = warpgemm.scaled_mm(a, w.T, sa, sb, out_dtype=BF)
        ref = reference(a, w.T, sa, sb, None, torch.float32)
        torch_out = torch._scaled_mm(a, w.T, sa, sb, out_dtype=BF, use_fast_accum=True)
        assert rel_error(out, ref) <= max(2 * rel_error(torch_out, ref), 8e-3), f"fp8 {m}x{n}x{k}"
