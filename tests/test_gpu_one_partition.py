"""GPU suite for the one-partition GEMM kernel (GemmConfig.warp_specialize=False; skipped without an sm_90 GPU).

Every config the rule can make (one_partition_rule.one_partition_variants: each eligible shipped config with its own
ring and with two slots), forced, on shapes that give programs several tiles and K loops longer than the ring (the
refill path the rule never picks, which a forced config still runs), in every layout; the rule's own choices with
bias, fp16, fp32 outputs, batches and transposed views; bitwise repeats. Outputs NaN-filled, fp32 references.
"""
import pytest
import torch

import warpgemm
from warpgemm.heuristics import SHIPPED_CONFIGS
from warpgemm.one_partition_rule import one_partition_variants
from warpgemm.ops import gemm_impl
from warpgemm.testing import LAYOUTS, assert_ok, check_matmul, check_repeatable, rand, strided_operand

pytestmark = pytest.mark.gpu
BF, FP = torch.bfloat16, torch.float16
DEV = "cuda"
VARIANTS = one_partition_variants(SHIPPED_CONFIGS)
SHAPES = [(1, 1, 1), (7, 65, 127), (129, 257, 1000), (1000, 1000, 4097), (4097, 300, 200)]


@pytest.mark.parametrize("cfg", VARIANTS, ids=lambda c: c.name)
def test_every_variant_weight_layout(cfg):
    """B = W.T (the layout the rule fires on most): ragged edges, several tiles per program, K past the ring."""
    g = torch.Generator(device=DEV).manual_seed(11)
    for m, n, k in SHAPES:
        a = rand(m, k, g=g)
        w = rand(n, k, g=g)
        assert_ok(check_matmul(a, w.T, config=cfg), f"{cfg.name} M={m} N={n} K={k}")


@pytest.mark.parametrize("cfg", [c for c in VARIANTS if c.stages == 2], ids=lambda c: c.name)
@pytest.mark.parametrize("a_col, b_col", LAYOUTS)
def test_two_slot_variants_every_layout(cfg, a_col, b_col):
    g = torch.Generator(device=DEV).manual_seed(12)
    for m, n, k in SHAPES[1:4]:
        a = strided_operand(m, k, col_major=a_col, dtype=BF, device=DEV, generator=g)
        b = strided_operand(k, n, col_major=b_col, dtype=BF, device=DEV, generator=g)
        assert_ok(check_matmul(a, b, config=cfg), f"{cfg.name} M={m} N={n} K={k} a_col={a_col} b_col={b_col}")


def _chosen(a, b, out_dtype=None):
    a3 = a if a.dim() == 3 else a.unsqueeze(0)
    b3 = b if b.dim() == 3 else b.unsqueeze(0)
    c3 = torch.empty(max(a3.shape[0], b3.shape[0]), a3.shape[1], b3.shape[2], dtype=out_dtype or a.dtype,
                     device=DEV)
    return gemm_impl.resolve_config(None, a3, c3, b3)[0]


def test_the_rule_fires_and_is_correct_with_bias_dtypes_batches_and_views():
    g = torch.Generator(device=DEV).manual_seed(13)
    cases = []
    for m, n, k in [(256, 256, 256), (512, 512, 512), (64, 64, 64), (16, 1024, 512), (200, 72, 40), (776, 336, 504)]:
        cases.append(((rand(m, k, g=g), rand(n, k, g=g).T), {}))
        cases.append(((rand(m, k, g=g, dtype=FP), rand(n, k, g=g, dtype=FP).T), {}))
        cases.append(((rand(m, k, g=g), rand(n, k, g=g).T), {"bias": rand(n, g=g)}))
        cases.append(((rand(m, k, g=g), rand(k, n, g=g)), {"out_dtype": torch.float32}))
        cases.append(((rand(k, m, g=g).T, rand(k, n, g=g)), {}))
    cases.append(((rand(3, 128, 96, g=g), rand(3, 96, 200, g=g)), {}))
    cases.append(((rand(3, 128, 96, g=g), rand(96, 200, g=g)), {"bias": rand(200, g=g)}))
    # Past the tile's own ring (one_partition_rule.LONGER_K: 4 slots up to 16 K steps), every variant must fire.
    longer = []
    for m, n, k in [(512, 512, 1536), (640, 384, 1024)]:
        longer.append(((rand(m, k, g=g), rand(n, k, g=g).T), {"bias": rand(n, g=g)}))
        longer.append(((rand(m, k, g=g, dtype=FP), rand(n, k, g=g, dtype=FP).T), {}))
        longer.append(((rand(m, k, g=g), rand(k, n, g=g)), {"out_dtype": torch.float32}))
        longer.append(((rand(k, m, g=g).T, rand(k, n, g=g)), {}))
    longer.append(((rand(3, 128, 1024, g=g), rand(1024, 200, g=g)), {}))
    for (a, b), kw in longer:
        cfg = _chosen(a, b, kw.get("out_dtype"))
        assert not cfg.warp_specialize and cfg.stages == 4, (tuple(a.shape), tuple(b.shape), cfg.name)
    cases += longer
    fired = 0
    for (a, b), kw in cases:
        fired += not _chosen(a, b, kw.get("out_dtype")).warp_specialize
        assert_ok(check_matmul(a, b, **kw), f"{tuple(a.shape)} @ {tuple(b.shape)} {kw.keys()}")
    assert fired >= len(cases) - 6, f"the rule fired on {fired} of {len(cases)} cases"


def test_linear_and_empty_dims():
    g = torch.Generator(device=DEV).manual_seed(14)
    x, w, bias = rand(300, 200, g=g), rand(128, 200, g=g), rand(128, g=g)
    ref = torch.nn.functional.linear(x.float(), w.float(), bias.float())
    out = warpgemm.linear(x, w, bias)
    assert (out.float() - ref).norm() / ref.norm() < 1e-2
    assert warpgemm.matmul(rand(0, 64, g=g), rand(64, 64, g=g)).shape == (0, 64)


@pytest.mark.parametrize("shape", [(256, 256, 256), (16, 1024, 512), (512, 384, 1000)])
def test_bitwise_repeatable_on_two_streams_and_in_a_graph(shape):
    m, n, k = shape
    g = torch.Generator(device=DEV).manual_seed(15)
    a, w = rand(m, k, g=g), rand(n, k, g=g)
    check_repeatable(a, w.T)
    check_repeatable(a, w.T, config=VARIANTS[0])
