"""GPU suite for scaled_mm (fp8 e4m3/e5m2 in, fp32 accumulation, scales applied in the epilogue; skipped without
sm_90): ragged shapes, both scale modes, bias, every output dtype, forced variants (split-K, stream-K, ping-pong,
swap-AB), operands torch._scaled_mm refuses (copied), bitwise repeats and CUDA-graph replay with new scales.

The error rule: relative error against the float32 dequantized product at most twice that of
torch._scaled_mm(use_fast_accum=True) on the same call, or where torch does not take the call, twice the error of
its fast accumulation on the same operands plus the output dtype's rounding. Outputs come from a poisoned
(NaN-filled) block of the caching allocator, checked to be reused, so an unwritten element fails the comparison.
"""
import pytest
import torch

import warpgemm
from warpgemm.config import GemmConfig
from warpgemm.heuristics import FP8_CONFIGS
from warpgemm.one_partition_rule import one_partition_variants
from warpgemm.ops.scaled import reference
from warpgemm.testing import rel_error

pytestmark = pytest.mark.gpu
DEV = "cuda"
E4, E5, BF, F16, F32 = torch.float8_e4m3fn, torch.float8_e5m2, torch.bfloat16, torch.float16, torch.float32
# Rounding of the output dtype: the floor of any tolerance.
ROUNDING = {BF: 4e-3, F16: 1e-3, F32: 1e-6}


def quantized(rows, cols, g, dtype=E4):
    # |x| up to ~10: a spread of fp8 exponents, while K = 8192 sums times scales of up to ~3 each stay inside fp16's
    # range (x8 overflowed fp16 outputs to inf with the wide scales below).
    x = torch.randn(rows, cols, device=DEV, generator=g)
    return (x * 2).to(dtype)


def scales_for(mode, M, N, g):
    """Scales far from 1 and unlike each other (a in [2, 3], b in [0.1, 0.3], rowwise spread over 0.1-3.1), so a
    dropped, doubled or swapped scale shows in the error."""
    if mode == "tensorwise":
        return torch.rand((), device=DEV, generator=g) + 2.0, torch.rand((), device=DEV, generator=g) * 0.2 + 0.1
    return (torch.rand(M, 1, device=DEV, generator=g) * 3 + 0.1, torch.rand(1, N, device=DEV, generator=g) * 3 + 0.1)


def poisoned_call(fn, shape, dtype):
    """fn() with its output allocation served from a NaN-filled block (asserted), so unwritten elements show."""
    torch.cuda.synchronize()
    poison = torch.full(shape, float("nan"), device=DEV, dtype=dtype)
    ptr = poison.data_ptr()
    del poison
    out = fn()
    torch.cuda.synchronize()
    assert out.data_ptr() == ptr or out.numel() == 0, "the output did not reuse the poisoned block"
    return out


def torch_error(a, b, sa, sb, bias, out_dtype, ref):
    """torch._scaled_mm's own error on this call, or 0 where torch does not take it."""
    M, K = a.shape
    N = b.shape[1]
    if (K % 16 or N % 16 or b.stride(0) != 1 or a.stride(1) != 1 or (bias is not None and out_dtype == F32)
            or sa.data_ptr() % 16 or sb.data_ptr() % 16):
        return 0.0
    got = torch._scaled_mm(a, b, sa, sb, bias=bias, out_dtype=out_dtype, use_fast_accum=True)
    return rel_error(got, ref)


def accumulation_error(a, b):
    """The error of fp8 fast accumulation itself on these operands: torch._scaled_mm(use_fast_accum=True) into fp32,
    unit scales, on copies zero-padded to the multiples of 16 it needs (zeros change no sum). fp8 wgmma adds into
    its accumulator with fewer mantissa bits than fp32 (~2e-3 relative at K = 8192, measured), for torch as for us."""
    M, K = a.shape
    N = b.shape[1]
    Kp, Np = -(-K // 16) * 16, -(-N // 16) * 16
    ap = torch.zeros(M, Kp, device=DEV, dtype=a.dtype)
    ap[:, :K] = a
    bp = torch.zeros(Np, Kp, device=DEV, dtype=b.dtype)
    bp[:N, :K] = b.T
    one = torch.ones((), device=DEV)
    got = torch._scaled_mm(ap, bp.T, one, one, out_dtype=F32, use_fast_accum=True)
    return rel_error(got, torch.matmul(ap.float(), bp.float().T))


def check(a, b, sa, sb, bias=None, out_dtype=BF, config=None, what=""):
    out = poisoned_call(lambda: warpgemm.scaled_mm(a, b, sa, sb, bias, out_dtype=out_dtype, config=config),
                        (a.shape[0], b.shape[1]), out_dtype)
    ref = reference(a, b, sa, sb, bias, F32)
    err = rel_error(out, ref)
    tol = max(2 * torch_error(a, b, sa, sb, bias, out_dtype, ref), 2 * accumulation_error(a, b) + ROUNDING[out_dtype])
    assert out.dtype == out_dtype and out.shape == (a.shape[0], b.shape[1])
    assert err <= tol, f"{what}: error {err:.3e} > {tol:.3e}"
    return out


SHAPES = [(1, 4096, 4096), (1, 7, 16), (3, 70, 64), (16, 1000, 112), (33, 4096, 8192), (64, 129, 4096),
          (65, 2000, 512), (128, 4096, 4096), (300, 1000, 2048), (512, 8192, 1024), (1000, 4112, 1024),
          (4096, 4096, 4096)]


@pytest.mark.parametrize("mode", ["tensorwise", "rowwise"])
@pytest.mark.parametrize("out_dtype", [BF, F32, F16], ids=["bf16", "fp32", "fp16"])
def test_shapes(mode, out_dtype):
    g = torch.Generator(device=DEV).manual_seed(7)
    for i, (M, N, K) in enumerate(SHAPES):
        a, w = quantized(M, K, g), quantized(N, K, g)
        sa, sb = scales_for(mode, M, N, g)
        bias = torch.randn(N, device=DEV, generator=g).to(out_dtype) if i % 2 else None
        check(a, w.T, sa, sb, bias, out_dtype, what=f"{M}x{N}x{K} {mode}")


VARIANTS = FP8_CONFIGS + (
    GemmConfig(128, 128, 128, 4, 4, split_k=2), GemmConfig(128, 128, 128, 4, 4, stream_k=True),
    GemmConfig(128, 128, 128, 3, 4, consumers=2), GemmConfig(64, 16, 256, 6, 4, swap_ab=True, stream_k=True),
    GemmConfig(128, 16, 128, 6, 4, split_k=4, swap_ab=True), GemmConfig(128, 256, 128, 3, 8, store_chunks=2),
    # Swap-AB split-K whose reduction runs in several row chunks (r0 > 0 in the transposed store), and 32-row
    # swap-AB tiles (the weight in the lower half of a 64-row slot).
    GemmConfig(128, 64, 128, 4, 4, split_k=2, swap_ab=True), GemmConfig(32, 16, 256, 8, 4, swap_ab=True),
    GemmConfig(32, 64, 128, 6, 4, swap_ab=True),
    # 2-CTA clusters with B multicast (opt-in): the scales and the epilogue see the same tiles as without.
    GemmConfig(128, 256, 128, 3, 8, cluster_m=2), GemmConfig(64, 128, 128, 6, 4, cluster_m=2),
    # Two-part widths (192 = 128 + 64, 144 = 128 + 16): two accumulators, each with its own column scales and bias
    # columns.
    GemmConfig(128, 192, 128, 3, 8, store_chunks=3), GemmConfig(128, 144, 128, 5, 8, store_chunks=9))
# (FP8_CONFIGS holds the swap-AB tiles stored in chunks, swap_rows.SWAP_ROWS_FP8: row scales along the transposed
# chunks' columns.)


@pytest.mark.parametrize("cfg", VARIANTS, ids=lambda c: c.name)
def test_forced_configs(cfg):
    """Every shipped fp8 config and the variants a user can force, rowwise scales and a bias, ragged sizes."""
    g = torch.Generator(device=DEV).manual_seed(11)
    # N = 1110: a 192-column tile's second accumulator partly inside N (1110 = 5 x 192 + 150), a 144-column one's
    # wholly past it (7 x 144 + 102).
    for M, N, K in ((1, 300, 4096), (70, 1110, 2000), (257, 4096, 1024), (1024, 2048, 8192)):
        a, w = quantized(M, K, g), quantized(N, K, g)
        sa, sb = scales_for("rowwise", M, N, g)
        check(a, w.T, sa, sb, torch.randn(N, device=DEV, generator=g).to(BF), BF, cfg, f"{cfg.name} {M}x{N}x{K}")


ONE_PARTITION = one_partition_variants(FP8_CONFIGS, E4)


@pytest.mark.parametrize("cfg", ONE_PARTITION, ids=lambda c: c.name)
def test_one_partition_variants_forced(cfg):
    """What the one-partition rule can make of the fp8 configs (one_partition_rule.py), forced past what the rule
    gives it (several tiles per program, K past the ring), both scale modes where the tile takes them, a bias."""
    g = torch.Generator(device=DEV).manual_seed(37)
    modes = ("tensorwise",) if cfg.block_n == 256 and cfg.store_chunks == 1 else ("tensorwise", "rowwise")
    for mode in modes:
        for M, N, K in ((1, 300, 512), (70, 1110, 2000), (257, 1000, 640), (1024, 2048, 1024)):
            a, w = quantized(M, K, g), quantized(N, K, g)
            sa, sb = scales_for(mode, M, N, g)
            check(a, w.T, sa, sb, torch.randn(N, device=DEV, generator=g).to(BF), BF, cfg,
                  f"{cfg.name} {mode} {M}x{N}x{K}")


def test_one_partition_rule_choices():
    """The rule's own choices for small fp8 products (scaled.plan): both scale modes, bias, every output dtype."""
    from warpgemm.ops.scaled import ROWWISE, TENSORWISE, plan

    g = torch.Generator(device=DEV).manual_seed(41)
    fired = total = 0
    for M, N, K in ((256, 256, 256), (512, 512, 512), (1024, 1024, 512), (16, 1024, 1024), (64, 64, 64),
                    (200, 72, 48), (384, 640, 768)):
        for mode in ("tensorwise", "rowwise"):
            for i, out_dtype in enumerate((BF, F32, F16)):
                a, w = quantized(M, K, g), quantized(N, K, g)
                sa, sb = scales_for(mode, M, N, g)
                bias = torch.randn(N, device=DEV, generator=g).to(out_dtype) if i != 1 else None
                c = torch.empty(M, N, device=DEV, dtype=out_dtype)
                cfg = plan(a, w.T, c, ROWWISE if mode == "rowwise" else TENSORWISE, bias is not None, None).config
                fired += not cfg.warp_specialize
                total += 1
                check(a, w.T, sa, sb, bias, out_dtype, what=f"{M}x{N}x{K} {mode} {out_dtype} {cfg.name}")
    assert fired >= total - 6, f"the rule fired on {fired} of {total} cases"


def test_one_partition_bitwise_repeatable():
    g = torch.Generator(device=DEV).manual_seed(43)
    a, w = quantized(256, 512, g), quantized(1024, 512, g)
    sa, sb = scales_for("rowwise", 256, 1024, g)
    for cfg in (None, ONE_PARTITION[-1]):
        first = warpgemm.scaled_mm(a, w.T, sa, sb, out_dtype=BF, config=cfg)
        for _ in range(3):
            assert torch.equal(first, warpgemm.scaled_mm(a, w.T, sa, sb, out_dtype=BF, config=cfg))


def test_layouts_torch_refuses_are_copied():
    """a column-major, b row-major (K, N), K and N not multiples of 16, offset views: correct through copies."""
    g = torch.Generator(device=DEV).manual_seed(13)
    M, N, K = 100, 300, 1000
    a_cm = quantized(K, M, g).T
    b_rm = quantized(K, N, g)
    sa, sb = scales_for("tensorwise", M, N, g)
    check(a_cm, b_rm, sa, sb, what="column-major a, row-major b")
    big = quantized(M + 1, K + 3, g)
    check(big[1:, 3:], quantized(N, K, g).T, sa, sb, what="offset view of a")


def test_e5m2_weight():
    g = torch.Generator(device=DEV).manual_seed(17)
    a, w = quantized(200, 4096, g), quantized(1024, 4096, g, E5)
    sa, sb = scales_for("tensorwise", 200, 1024, g)
    check(a, w.T, sa, sb, what="e4m3 x e5m2")


def test_bitwise_repeatable():
    g = torch.Generator(device=DEV).manual_seed(19)
    for M in (16, 512):
        a, w = quantized(M, 4096, g), quantized(8192, 4096, g)
        sa, sb = scales_for("rowwise", M, 8192, g)
        first = warpgemm.scaled_mm(a, w.T, sa, sb, out_dtype=BF)
        for _ in range(3):
            assert torch.equal(first, warpgemm.scaled_mm(a, w.T, sa, sb, out_dtype=BF))


def test_graph_replay_reads_new_scales():
    """Scales are read on the device at every launch: a captured call follows the contents of scale tensors."""
    g = torch.Generator(device=DEV).manual_seed(23)
    a, w = quantized(256, 2048, g), quantized(4096, 2048, g)
    sa, sb = scales_for("tensorwise", 256, 4096, g)
    warpgemm.scaled_mm(a, w.T, sa, sb, out_dtype=BF)  # compile outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = warpgemm.scaled_mm(a, w.T, sa, sb, out_dtype=BF)
    for value in (0.5, 3.0):
        sa.fill_(value)
        graph.replay()
        torch.cuda.synchronize()
        ref = reference(a, w.T, sa, sb, None, F32)
        assert rel_error(out, ref) < 2 * accumulation_error(a, w.T) + ROUNDING[BF]


def test_repeated_calls_with_new_tensors_and_misaligned_scales():
    """The eager fast path (a recorded call signature) with other tensors of the same shapes, then scale tensors at
    4-byte offsets (a kernel compiled for 16-byte aligned pointers must not be reused for them)."""
    g = torch.Generator(device=DEV).manual_seed(31)
    M, N, K = 96, 2048, 1024
    for _ in range(3):
        a, w = quantized(M, K, g), quantized(N, K, g)
        sa, sb = scales_for("rowwise", M, N, g)
        check(a, w.T, sa, sb, what="repeated call, new tensors")
    big_a = torch.rand(M + 1, 1, device=DEV, generator=g) + 0.25
    big_b = torch.rand(1, N + 1, device=DEV, generator=g) + 0.25
    check(a, w.T, big_a[1:], big_b[:, 1:], what="scales at a 4-byte offset")
    check(a, w.T, sa, sb, what="aligned again")


def test_weight_rows_off_sectors_take_cluster_pairs():
    """fp8 rows of 16 mod 32 bytes: the heuristics take the cluster pairs (off_sector.off_sector_config), with both
    scale modes and a bias, on ragged tile-rows: the 3-stage 128x256 pair on many waves (per-tensor scales), the
    4-stage chunked-store one on few waves, for row-wise scales and at 129-511 rows, the 64x128 pair."""
    from warpgemm.heuristics import FP8_CLUSTER_LARGE, FP8_CLUSTER_LARGE_FEW_ROWS as FOUR, FP8_CLUSTER_SMALL
    from warpgemm.ops.scaled import plan, scale_mode

    g = torch.Generator(device=DEV).manual_seed(19)
    # None: no pair (row-wise scales from 512 rows replace only their plain 128x256 tile; here the plan is 128x128).
    for (M, N, K), pairs in (((4096, 4096, 4112), (FOUR, FOUR)), ((1099, 8576, 1712), (FOUR, None)),
                             ((1000, 1008, 1008), (FP8_CLUSTER_SMALL, FP8_CLUSTER_SMALL)),
                             ((2050, 16384, 1040), (FP8_CLUSTER_LARGE, FOUR)), ((333, 14000, 2064), (FOUR, FOUR))):
        a, w = quantized(M, K, g), quantized(N, K, g)
        bias = torch.randn(N, device=DEV, generator=g).to(BF)
        for mode, pair in zip(("tensorwise", "rowwise"), pairs):
            sa, sb = scales_for(mode, M, N, g)
            p = plan(a, w.T, torch.empty(M, N, device=DEV, dtype=BF), scale_mode(sa, sb, M, N), True, None)
            assert p.config == pair if pair is not None else p.config.cluster_m == 1, (M, N, K, mode, p.reason)
            check(a, w.T, sa, sb, bias, BF, None, f"{M}x{N}x{K} {mode}")
            if pair == FOUR and mode == "rowwise":  # the chunked pair with row-wise scales stores fp16 too
                check(a, w.T, sa, sb, bias.half(), F16, None, f"{M}x{N}x{K} {mode} fp16 out")
            if pair is not None and pair.block_n < 256:  # the 64x128 pair is also taken for fp32 outputs
                check(a, w.T, sa, sb, None, F32, None, f"{M}x{N}x{K} {mode} fp32 out")
