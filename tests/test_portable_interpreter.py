"""The public ops on the portable Triton kernel, run on CPU tensors under the Triton interpreter.

Every output is pre-filled with NaN where the API allows it; errors are measured against float64.
"""
import itertools

import pytest
import torch

import warpgemm
from warpgemm import _env
from warpgemm.testing import matmul_reference, rel_error, strided_operand, tolerance, torch_matmul_error

pytestmark = pytest.mark.skipif(not _env.INTERPRET, reason="interpreter suite: runs where TRITON_INTERPRET=1")

SIZES = [1, 7, 16, 33]
LAYOUTS = list(itertools.product([False, True], [False, True]))  # (A column-major, B column-major)


def check(out, a, b, bias=None, out_dtype=None):
    out_dtype = out_dtype or a.dtype
    ref = matmul_reference(a, b, bias)
    err = rel_error(out, ref)
    assert out.dtype == out_dtype
    assert err <= tolerance(torch_matmul_error(a, b, bias, ref, out_dtype), out_dtype), err


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
@pytest.mark.parametrize("a_col, b_col", LAYOUTS)
def test_ragged_shapes_all_layouts(dtype, a_col, b_col):
    g = torch.Generator().manual_seed(0)
    for m, n, k in itertools.product(SIZES, SIZES, SIZES):
        a = strided_operand(m, k, col_major=a_col, dtype=dtype, device="cpu", generator=g)
        b = strided_operand(k, n, col_major=b_col, dtype=dtype, device="cpu", generator=g)
        out = torch.full((m, n), float("nan"), dtype=dtype)
        warpgemm.matmul(a, b, out=out)
        check(out, a, b)


@pytest.mark.parametrize("a_col, b_col", LAYOUTS)
def test_batched_and_broadcast(a_col, b_col):
    g = torch.Generator().manual_seed(1)
    a = strided_operand(17, 24, col_major=a_col, dtype=torch.bfloat16, device="cpu", batch=3, generator=g)
    b = strided_operand(24, 9, col_major=b_col, dtype=torch.bfloat16, device="cpu", batch=3, generator=g)
    check(warpgemm.matmul(a, b), a, b)
    b2 = b[0]
    check(warpgemm.matmul(a, b2), a, b2)  # (B, M, K) @ (K, N): folded into one tall GEMM
    a2 = a[0]
    check(warpgemm.matmul(a2, b), a2, b)  # (M, K) @ (B, K, N): A shared by every batch
    a4 = strided_operand(5, 8, col_major=a_col, dtype=torch.bfloat16, device="cpu", batch=6, generator=g)
    a4 = a4.reshape(2, 3, 5, 8) if not a_col else a4.reshape(2, 3, 5, 8)
    b4 = torch.randn(3, 8, 4, generator=g).to(torch.bfloat16)
    check(warpgemm.matmul(a4, b4), a4, b4)  # 4-D with broadcast batch dims
    b5 = torch.randn(2, 1, 8, 4, generator=g).to(torch.bfloat16)
    check(warpgemm.matmul(a4, b5), a4, b5)  # partial broadcast


def test_vectors():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(13, generator=g).to(torch.float16)
    m = torch.randn(13, 6, generator=g).to(torch.float16)
    assert warpgemm.matmul(x, m).shape == (6, )
    check(warpgemm.matmul(x, m), x, m)
    check(warpgemm.matmul(m.t(), x), m.t(), x)
    d = warpgemm.matmul(x, x)
    assert d.shape == () and rel_error(d, matmul_reference(x, x)) < 1e-3


def test_bias_and_fp32_output():
    g = torch.Generator().manual_seed(3)
    a = torch.randn(2, 20, 30, generator=g).to(torch.bfloat16)
    b = torch.randn(30, 11, generator=g).to(torch.bfloat16)
    for bias_dtype in (torch.bfloat16, torch.float32):
        bias = torch.randn(11, generator=g).to(bias_dtype)
        check(warpgemm.matmul(a, b, bias=bias), a, b, bias)
        check(warpgemm.matmul(a, b, bias=bias, out_dtype=torch.float32), a, b, bias, torch.float32)


def test_strided_and_sliced_views():
    g = torch.Generator().manual_seed(4)
    big = torch.randn(80, 72, generator=g).to(torch.bfloat16)
    a = big[3:23, 1:34]  # misaligned base, gapped rows
    b = big[::2, 5:16][:33]  # every other row
    check(warpgemm.matmul(a, b), a, b)
    out_big = torch.full((30, 40), float("nan"), dtype=torch.bfloat16)
    out = out_big[5:25, 3:14]  # a strided out= view
    warpgemm.matmul(a, b, out=out)
    check(out, a, b)
    assert torch.isnan(out_big[:5]).all()  # nothing outside the view was written


def test_empty_dimensions():
    bf = torch.bfloat16
    assert warpgemm.matmul(torch.randn(0, 5).to(bf), torch.randn(5, 3).to(bf)).shape == (0, 3)
    assert warpgemm.matmul(torch.randn(4, 5).to(bf), torch.randn(5, 0).to(bf)).shape == (4, 0)
    assert warpgemm.matmul(torch.randn(0, 4, 5).to(bf), torch.randn(5, 3).to(bf)).shape == (0, 4, 3)
    z = warpgemm.matmul(torch.randn(4, 0).to(bf), torch.randn(0, 3).to(bf))
    assert z.shape == (4, 3) and torch.equal(z, torch.zeros(4, 3, dtype=bf))
    bias = torch.randn(3).to(bf)
    zb = warpgemm.matmul(torch.randn(4, 0).to(bf), torch.randn(0, 3).to(bf), bias=bias)
    assert torch.equal(zb, bias.expand(4, 3))


def test_batches_past_the_grid_limit_run_in_several_launches(monkeypatch):
    """The portable kernel puts batches on the grid's second axis (CUDA allows 65535): more go in slices."""
    from warpgemm.kernels.portable import gemm as portable

    monkeypatch.setattr(portable, "MAX_GRID_Y", 3)
    bf = torch.bfloat16
    for a_batches, b_batches in ((7, 7), (1, 7), (7, 1)):
        a, b = torch.randn(a_batches, 5, 6).to(bf), torch.randn(b_batches, 6, 4).to(bf)
        bias = torch.randn(4).to(bf)
        c = torch.full((7, 5, 4), float("nan"), dtype=bf)
        portable.portable_gemm(a, b, c, bias)
        want = a.double() @ b.double() + bias.double()
        assert rel_error(c, want) < 1e-2, (a_batches, b_batches)


def test_linear_any_leading_dims():
    g = torch.Generator().manual_seed(5)
    w = torch.randn(12, 24, generator=g).to(torch.bfloat16)
    bias = torch.randn(12, generator=g).to(torch.bfloat16)
    for shape in [(24, ), (5, 24), (2, 3, 24), (2, 1, 3, 24)]:
        x = torch.randn(shape, generator=g).to(torch.bfloat16)
        y = warpgemm.linear(x, w, bias)
        assert y.shape == shape[:-1] + (12, )
        check(y, x, w.t(), bias)


def _grads(fn, *xs):
    xs = [x.detach().clone().requires_grad_() for x in xs]
    y = fn(*xs)
    torch.manual_seed(0)
    y.backward(torch.randn_like(y))
    return [x.grad for x in xs]


@pytest.mark.parametrize("case", ["2d", "batched", "broadcast_b", "broadcast_a", "linear_bias"])
def test_backward_matches_float64(case):
    g = torch.Generator().manual_seed(6)
    bf = torch.bfloat16
    if case == "2d":
        xs = [torch.randn(9, 14, generator=g).to(bf), torch.randn(14, 6, generator=g).to(bf)]
        ours, ref = warpgemm.matmul, torch.matmul
    elif case == "batched":
        xs = [torch.randn(2, 9, 14, generator=g).to(bf), torch.randn(2, 14, 6, generator=g).to(bf)]
        ours, ref = warpgemm.matmul, torch.matmul
    elif case == "broadcast_b":
        xs = [torch.randn(3, 9, 14, generator=g).to(bf), torch.randn(14, 6, generator=g).to(bf)]
        ours, ref = warpgemm.matmul, torch.matmul
    elif case == "broadcast_a":
        xs = [torch.randn(9, 14, generator=g).to(bf), torch.randn(3, 14, 6, generator=g).to(bf)]
        ours, ref = warpgemm.matmul, torch.matmul
    else:
        xs = [torch.randn(2, 5, 14, generator=g).to(bf), torch.randn(6, 14, generator=g).to(bf),
              torch.randn(6, generator=g).to(bf)]
        ours, ref = warpgemm.linear, torch.nn.functional.linear
    got = _grads(ours, *xs)
    want = _grads(ref, *[x.double() for x in xs])
    emulated = _grads(ref, *[x.float() for x in xs])  # fp32 math rounded to bf16: torch's own error
    for g_ours, g_ref, g_emul in zip(got, want, emulated):
        assert g_ours.dtype == bf and g_ours.shape == g_ref.shape
        assert rel_error(g_ours, g_ref) <= tolerance(rel_error(g_emul.to(bf), g_ref), bf)


def test_fp16_backward_of_an_fp32_output_does_not_overflow():
    """fp16 inputs with out_dtype=torch.float32: the fp32 gradient is scaled into fp16's range for the backward
    GEMMs (a plain cast made 1e5 * 4 gradient entries inf and the products NaN), and fp16 gradients that fit come
    out finite and right."""
    g = torch.Generator().manual_seed(7)
    a0 = (torch.randn(2, 5, 16, generator=g) * 1e-2).half()
    b0 = (torch.randn(16, 8, generator=g) * 1e-3).half()
    grad = torch.randn(2, 5, 8, generator=g) * 1e5
    a, b = a0.clone().requires_grad_(), b0.clone().requires_grad_()
    warpgemm.matmul(a, b, out_dtype=torch.float32).backward(grad)
    ra, rb = a0.double().requires_grad_(), b0.double().requires_grad_()
    (ra @ rb).backward(grad.double())
    for got, want in ((a.grad, ra.grad), (b.grad, rb.grad)):
        assert got.dtype == torch.float16 and got.isfinite().all()
        assert rel_error(got, want) <= 2e-3
    a = torch.randn(4, 16).half().requires_grad_()  # an all-zero gradient: zeros, not 0 / 0
    warpgemm.matmul(a, torch.randn(16, 8).half(), out_dtype=torch.float32).backward(torch.zeros(4, 8))
    assert torch.equal(a.grad, torch.zeros_like(a))
    # One large entry (within fp16's range) must not cost the other rows their precision: a scale to the largest
    # magnitude made them 3x less precise than the plain cast; a power of two that keeps fp16's range does not.
    a0, b0 = torch.randn(16, 32, generator=g).half(), torch.randn(32, 24, generator=g).half()
    grad = torch.randn(16, 24, generator=g)
    grad[0, 0] = 5e4
    a = a0.clone().requires_grad_()
    warpgemm.matmul(a, b0, out_dtype=torch.float32).backward(grad)
    want = grad.double() @ b0.double().t()
    assert rel_error(a.grad[1:], want[1:]) <= 4e-4
    grad[0, 0] = float("inf")  # an inf stays in its own row (it once made every row NaN)
    a = a0.clone().requires_grad_()
    warpgemm.matmul(a, b0, out_dtype=torch.float32).backward(grad)
    assert a.grad[1:].isfinite().all() and not a.grad[0].isfinite().all()


def test_custom_ops_pass_opcheck():
    bf = torch.bfloat16
    a, b = torch.randn(2, 8, 16).to(bf), torch.randn(1, 16, 8).to(bf)
    torch.library.opcheck(torch.ops.warpgemm.bmm, (a, b, None, None, None))
    torch.library.opcheck(torch.ops.warpgemm.bmm, (a, b, torch.randn(8).to(bf), torch.float32, None))
    torch.library.opcheck(torch.ops.warpgemm.bmm_out, (a, b, None, torch.empty(2, 8, 8, dtype=bf), None))


def test_torch_compile_fullgraph():
    bf = torch.bfloat16
    w = torch.randn(10, 16).to(bf).requires_grad_()
    x = torch.randn(3, 4, 16).to(bf).requires_grad_()

    @torch.compile(fullgraph=True, backend="aot_eager")
    def f(x, w):
        return warpgemm.linear(x, w).relu().sum()

    f(x, w).backward()
    xr, wr = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    torch.nn.functional.linear(xr, wr).relu().sum().backward()
    assert rel_error(x.grad, xr.grad) < 2e-2 and rel_error(w.grad, wr.grad) < 2e-2


def test_explain_says_path():
    a, b = torch.randn(4, 8).to(torch.bfloat16), torch.randn(8, 4).to(torch.bfloat16)
    assert "portable path" in warpgemm.explain(a, b)


def test_empty_batch_with_out_and_broadcast():
    bf = torch.bfloat16
    a, b = torch.randn(0, 4, 5).to(bf), torch.randn(5, 3).to(bf)
    out = torch.empty(0, 4, 3, dtype=bf)
    assert warpgemm.matmul(a, b, out=out) is out
    assert warpgemm.matmul(torch.randn(4, 5).to(bf), torch.randn(0, 5, 3).to(bf)).shape == (0, 4, 3)
    assert "empty output" in warpgemm.explain(a, b)


def test_direct_op_call_with_mismatched_batches_is_refused():
    bf = torch.bfloat16
    with pytest.raises(ValueError, match="bmm shapes do not agree"):
        torch.ops.warpgemm.bmm_out(torch.randn(3, 4, 5).to(bf), torch.randn(2, 5, 6).to(bf), None,
                                   torch.empty(3, 4, 6, dtype=bf), None)


@pytest.mark.parametrize("cfg", [warpgemm.GemmConfig(64, 16, 256, 5, 4, swap_ab=True),
                                 warpgemm.GemmConfig(64, 16, 256, 5, 4, swap_ab=True, stream_k=True),
                                 warpgemm.GemmConfig(128, 128, 64, 6, 4, split_k=3)], ids=lambda c: c.name)
def test_decode_shapes_with_forced_split_configs(cfg):
    """Decode-sized products (M = 1, ragged K) with a forced swap-AB / stream-K / split-K config: off Hopper the
    config is a Hopper kernel choice and the portable kernel computes the same product."""
    g = torch.Generator().manual_seed(7)
    for m, n, k in [(1, 40, 300), (3, 17, 1), (16, 33, 129)]:
        x = torch.randn(m, k, generator=g).to(torch.bfloat16)
        w = torch.randn(n, k, generator=g).to(torch.bfloat16)
        b = torch.randn(n, generator=g).to(torch.bfloat16)
        check(warpgemm.linear(x, w, b, config=cfg), x, w.T, bias=b)
