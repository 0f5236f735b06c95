"""GPU suite for wave fill (GemmConfig(wave_fill=True); skipped without sm_90): the tiles of a last, partly filled
wave are cut at one K step, their tails computed by the programs the wave leaves idle and added by the main parts
(kernels/hopper/wave_fill_plan.py). What can go wrong: a tile whose tail is lost or added twice, a main part that
reads its tail's slot before it is written, a flag left raised for the next launch, a deadlock. Shapes put the
last wave's tile count below, at and past the SM count, with ragged edges and K of one to many steps; every output
is NaN-filled and checked element by element against an fp32 product."""
import pytest
import torch

import warpgemm
from warpgemm.candidates import FILL_CANDIDATES
from warpgemm.config import check_config
from warpgemm.kernels.hopper import scratch
from warpgemm.kernels.hopper import wave_fill_plan as wf
from warpgemm.testing import check_repeatable, strided_operand

pytestmark = pytest.mark.gpu
BF = torch.bfloat16
DEV = "cuda"

FILL_CONFIGS = list(FILL_CANDIDATES)
# (tile rows, tile columns): 112, 72, 1, 15, 132, 200 and 276 tiles (on 132 SMs: under one wave, exactly one, one
# and a half, two and a bit).
TILE_GRIDS = [(7, 16), (6, 12), (1, 1), (3, 5), (11, 12), (10, 20), (12, 23)]


def sms():
    return torch.cuda.get_device_properties(0).multi_processor_count


def rand(*shape, g, dtype=BF):
    return torch.randn(shape, device=DEV, generator=g).to(dtype)


def check_elementwise(a, b, cfg, *, bias=None, out_dtype=None, what=""):
    """Run into a NaN-filled output; the largest element error may be at most twice torch's own plus a sliver of
    the output's scale (a lost or doubled tail moves whole tiles by a sizeable fraction of it)."""
    out_dtype = out_dtype or a.dtype
    shape = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
    out = torch.full(shape, float("nan"), dtype=out_dtype, device=DEV)
    warpgemm.matmul(a, b, out=out, bias=bias, config=cfg)
    ref = torch.matmul(a.float(), b.float()) + (0 if bias is None else bias.float())
    mine = (out.float() - ref).abs().max().item() if out.numel() else 0.0
    theirs = ((torch.matmul(a, b) + (0 if bias is None else bias)).to(out_dtype).float() - ref).abs().max().item() \
        if out.numel() else 0.0
    scale = ref.abs().max().item() if out.numel() else 0.0
    assert mine == mine and mine <= 2 * theirs + 1e-3 * scale, \
        f"{cfg.name} {what}: max error {mine:.3e} (torch {theirs:.3e}, |ref| max {scale:.3e})"
    return out


@pytest.mark.parametrize("cfg", FILL_CONFIGS, ids=lambda c: c.name)
def test_wave_fill_at_every_last_wave_shape(cfg):
    g = torch.Generator(device=DEV).manual_seed(61)
    split_seen = False
    for tiles_m, tiles_n in TILE_GRIDS:
        M = max(tiles_m * cfg.block_m - 37, 1)
        N = max(tiles_n * cfg.block_n - 24, 8)
        for K in (4096, 1000, 200, 64):
            plan = wf.plan(tiles_m * tiles_n, -(-K // cfg.block_k), sms(), cfg.block_k)
            split_seen |= plan.tail_steps > 0
            a, w = rand(M, K, g=g), rand(N, K, g=g)
            check_elementwise(a, w.T, cfg, what=f"M={M} N={N} K={K} plan={plan}")
    assert split_seen, "no case cut a tile: the test would not exercise the tails"


def test_wave_fill_epilogue_variants_and_layouts():
    """Bias, fp32 and fp16 outputs, batched operands and every operand layout, on a split last wave."""
    g = torch.Generator(device=DEV).manual_seed(62)
    cfg = FILL_CONFIGS[0]
    M, N, K = 7 * 128 - 9, 16 * 256 - 40, 2048
    a, w, bias = rand(M, K, g=g), rand(N, K, g=g), rand(N, g=g)
    check_elementwise(a, w.T, cfg, bias=bias, what="bias")
    if check_config(cfg, BF, torch.float32) is None:
        check_elementwise(a, w.T, cfg, bias=bias, out_dtype=torch.float32, what="fp32 out")
    check_elementwise(a.half(), w.T.half(), cfg, what="fp16")
    for a_col, b_col in ((False, False), (True, True), (True, False)):
        aa = strided_operand(M, K, col_major=a_col, dtype=BF, device=DEV, generator=g)
        bb = strided_operand(K, N, col_major=b_col, dtype=BF, device=DEV, generator=g)
        check_elementwise(aa, bb, cfg, what=f"layout a_col={a_col} b_col={b_col}")
    # Batched: 3 x 4 x 8 = 96 tiles of 128x256 (the batch index runs through the plan's tile ids).
    ab, bb = rand(3, 4 * 128, 1000, g=g), rand(3, 1000, 8 * 256, g=g)
    check_elementwise(ab, bb, cfg, what="batched")
    wide = FILL_CONFIGS[-1]
    check_elementwise(a, w.T, wide, bias=bias, what="192 columns, bias")


@pytest.mark.parametrize("cfg", [FILL_CONFIGS[0], FILL_CONFIGS[-1]], ids=lambda c: c.name)
def test_wave_fill_is_bitwise_repeatable_and_leaves_its_flags_lowered(cfg):
    g = torch.Generator(device=DEV).manual_seed(63)
    a, w = rand(777, 4096, g=g), rand(4096, 4096, g=g)
    check_repeatable(a, w.T, cfg)
    # Back-to-back calls on one stream with different operands reuse the same slots and flags.
    for _ in range(3):
        a = rand(777, 4096, g=g)
        check_elementwise(a, w.T, cfg, what="back to back")
    torch.cuda.synchronize()
    for (_, _), (_, flags) in scratch._BY_STREAM.items():
        assert int(flags.abs().sum().item()) == 0, "a launch left a flag raised"


def test_grouped_forms_refuse_wave_fill():
    g = torch.Generator(device=DEV).manual_seed(64)
    x, w = rand(256, 128, g=g), rand(4, 64, 128, g=g)
    offs = torch.tensor([64, 128, 192, 256], device=DEV, dtype=torch.int32)
    with pytest.raises(ValueError, match="wave_fill"):
        warpgemm.grouped_mm(x, w.transpose(1, 2), offs=offs, config=FILL_CONFIGS[2])
