"""torch.autocast: matmul, linear and grouped_mm cast floating operands (and bias) to the region's dtype, as
torch.matmul / F.linear do, and gradients reach fp32 parameters through the casts. CPU tensors under the Triton
interpreter (the CPU region); tests/test_gpu_gemm.py has the CUDA region's test."""
import pytest
import torch

import warpgemm
from warpgemm.testing import rel_error


def test_matmul_and_linear_take_the_region_dtype_like_torch():
    torch.manual_seed(0)
    a, b = torch.randn(33, 40), torch.randn(40, 24)
    w = torch.randn(24, 40, requires_grad=True)
    bias = torch.randn(24, requires_grad=True)
    x = torch.randn(5, 33, 40, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got, want = warpgemm.matmul(a, b), torch.matmul(a, b)
        assert got.dtype == want.dtype == torch.bfloat16
        assert rel_error(got, a.double() @ b.double()) < 1e-2
        y, y_torch = warpgemm.linear(x, w, bias), torch.nn.functional.linear(x, w, bias)
        assert y.dtype == y_torch.dtype == torch.bfloat16
        assert rel_error(y, y_torch) < 1e-2
    grad = torch.randn(5, 33, 24)
    y.float().backward(grad)
    assert w.grad.dtype == bias.grad.dtype == x.grad.dtype == torch.float32
    assert rel_error(w.grad, torch.einsum("bmn,bmk->nk", grad.double(), x.detach().double())) < 1e-2
    assert rel_error(bias.grad, grad.double().sum((0, 1))) < 1e-2


def test_fp16_region_casts_bf16_operands_and_leaves_float64():
    a, b = torch.randn(9, 16), torch.randn(16, 8)
    with torch.autocast("cpu", dtype=torch.float16):
        assert warpgemm.matmul(a.bfloat16(), b).dtype == torch.float16
        with pytest.raises(TypeError, match="got torch.float64"):  # torch's autocast leaves float64 alone too
            warpgemm.matmul(a.double(), b.double())


def test_grouped_mm_and_explain_in_a_region():
    torch.manual_seed(1)
    a, b = torch.randn(33, 40), torch.randn(2, 40, 24)
    offs = torch.tensor([10, 33], dtype=torch.int32)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = warpgemm.grouped_mm(a, b, offs)
        assert "portable" in warpgemm.explain(a, b[0])
    assert out.dtype == torch.bfloat16
    want = torch.cat([a[:10].double() @ b[0].double(), a[10:].double() @ b[1].double()])
    assert rel_error(out, want) < 1e-2


def test_outside_a_region_fp32_is_refused():
    with pytest.raises(TypeError, match="a must be torch.bfloat16 or torch.float16, got torch.float32"):
        warpgemm.matmul(torch.randn(4, 4), torch.randn(4, 4))


def test_compiled_region_matches_eager():
    torch.manual_seed(2)
    w, x = torch.randn(24, 40), torch.randn(5, 40)

    def f(x, w):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            return warpgemm.linear(x, w) + warpgemm.matmul(x, w.t())

    got = torch.compile(f, fullgraph=True)(x, w)
    assert got.dtype == torch.bfloat16 and torch.equal(got, f(x, w))


def test_group_gemm_in_a_region():
    torch.manual_seed(3)
    pairs = [(torch.randn(5, 16), torch.randn(16, 8)), (torch.randn(3, 32), torch.randn(32, 4))]
    with torch.autocast("cpu", dtype=torch.bfloat16):
        outs = warpgemm.group_gemm([a for a, _ in pairs], [b for _, b in pairs])
    for out, (a, b) in zip(outs, pairs):
        assert out.dtype == torch.bfloat16 and rel_error(out, a.double() @ b.double()) < 1e-2


def test_out_variants_are_not_cast_as_in_torch():
    """torch does not autocast out= variants: fp32 operands with out= are refused as outside a region, and bf16 ones
    write the caller's fp32 out."""
    a, b = torch.randn(9, 16), torch.randn(16, 8)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        with pytest.raises(TypeError, match="got torch.float32"):
            warpgemm.matmul(a, b, out=torch.empty(9, 8))
        out = torch.full((9, 8), float("nan"))
        warpgemm.matmul(a.bfloat16(), b.bfloat16(), out=out)
        offs = torch.tensor([4, 9], dtype=torch.int32)
        with pytest.raises(TypeError, match="got torch.float32"):
            warpgemm.grouped_mm(a, torch.randn(2, 16, 8), offs, out=torch.empty(9, 8))
    assert rel_error(out, a.bfloat16().double() @ b.bfloat16().double()) < 1e-3


def test_scaled_mm_fallback_stays_float32_in_a_region():
    """scaled_mm is not autocast, and its fallback's float32 product must not run in an fp16 region (e4m3 rowwise
    operands with K = 1024 reached inf there)."""
    from warpgemm.testing import rowwise_fp8

    torch.manual_seed(4)
    a8, w8, sa, sb = rowwise_fp8(torch.randn(16, 1024) * 30, torch.randn(32, 1024) * 30)
    outside = warpgemm.scaled_mm(a8, w8.t(), sa, sb, out_dtype=torch.float32)
    with torch.autocast("cpu", dtype=torch.float16):
        inside = warpgemm.scaled_mm(a8, w8.t(), sa, sb, out_dtype=torch.float32)
    assert inside.dtype == torch.float32 and inside.isfinite().all()
    assert torch.equal(inside, outside)
