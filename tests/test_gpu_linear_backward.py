"""GPU suite for linear's recorded backward (ops/linear_autograd.py): from the second backward of a call signature the
two products launch from a recipe instead of the general formula (library.backward_3d). Its gradients must be the
general formula's own bits, and both within tolerance of float64; dispatch modes and create_graph still take the
general formula (skipped without an sm_90 GPU)."""
import pytest
import torch

import warpgemm
from warpgemm.ops import linear_autograd
from warpgemm.testing import rel_error

pytestmark = pytest.mark.gpu
BF, FP = torch.bfloat16, torch.float16
DEV = "cuda"

# (x's shape, x's row stride or None, N, dtype, bias dtype or None, x needs grad, weight needs grad, recipe expected:
# True, False or None for either)
CASES = [
    ((2, 96, 1024), None, 768, BF, BF, True, True, True),
    ((333, 1024), None, 200, BF, torch.float32, True, True, True),  # ragged rows, an fp32 bias
    ((300, 1024), 1536, 512, BF, BF, True, True, True),  # x a column slice of a wider tensor
    ((256, 512), None, 1024, FP, FP, True, True, True),
    ((4, 64, 512), None, 384, BF, None, False, True, True),  # an input that needs no gradient (a first layer)
    ((128, 512), None, 256, BF, BF, True, False, True),  # a frozen weight
    ((1, 1024), None, 512, BF, BF, True, True, None),  # one token: dW's contraction has one element
    ((200, 1000), None, 300, BF, None, True, True, None),  # rows off 16 bytes: the plans may copy
    ((1024, ), None, 768, BF, BF, True, True, True),  # a 1-D x: one-row products
    ((64, 256), None, 128, BF, BF, False, False, True),  # only the bias needs a gradient
]


def _layer(case, g):
    shape, row_stride, n, dtype, bias_dtype, x_grad, w_grad, _ = case
    k = shape[-1]
    if row_stride is None:
        x = torch.randn(*shape, device=DEV, generator=g).to(dtype)
    else:
        x = torch.randn(shape[0], row_stride, device=DEV, generator=g).to(dtype)[:, :k]
    w = (torch.randn(n, k, device=DEV, generator=g) / k ** 0.5).to(dtype)
    b = None if bias_dtype is None else torch.randn(n, device=DEV, generator=g).to(bias_dtype)
    x.requires_grad_(x_grad)
    w.requires_grad_(w_grad)
    if b is not None:
        b.requires_grad_()
    dy = torch.randn(*shape[:-1], n, device=DEV, generator=g).to(dtype)
    return x, w, b, dy


def _fresh(t):
    """A copy of t at a new address with t's strides (a column slice stays one)."""
    return torch.empty_strided(t.shape, t.stride(), dtype=t.dtype, device=t.device).copy_(t.detach())


def _grads(x, w, b, dy):
    """The gradients of one step on fresh copies of x, w, b and dy (new addresses, the same values and strides)."""
    x, w, dy = _fresh(x).requires_grad_(x.requires_grad), _fresh(w).requires_grad_(w.requires_grad), _fresh(dy)
    b = None if b is None else _fresh(b).requires_grad_()
    warpgemm.linear(x, w, b).backward(dy)
    return [None if t is None or t.grad is None else t.grad for t in (x, w, b)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{'x'.join(map(str, c[0]))}_n{c[2]}")
def test_recorded_backward_matches_the_general_formula(case, monkeypatch):
    g = torch.Generator(device=DEV).manual_seed(11)
    x, w, b, dy = _layer(case, g)
    linear_autograd._BACKWARDS.clear()
    general_ran = []
    general = linear_autograd.library.backward_3d
    monkeypatch.setattr(linear_autograd.library, "backward_3d", lambda *a: general_ran.append(1) or general(*a))
    first = _grads(x, w, b, dy)  # the general formula; the recipe is recorded
    recipes = [r for r in linear_autograd._BACKWARDS.values() if r is not False]
    if case[-1] is not None:
        assert bool(recipes) == case[-1], linear_autograd._BACKWARDS
    for call in range(2):
        general_ran.clear()
        again = _grads(x, w, b, dy)
        if case[-1]:
            assert not general_ran  # the recipe ran
        for name, want, got in zip("xwb", first, again):
            assert (want is None) == (got is None), name
            if want is not None:
                assert got.shape == want.shape and got.stride() == want.stride(), name
                assert torch.equal(got, want), (name, call)
    x64 = x.detach().double().requires_grad_(x.requires_grad)
    w64 = w.detach().double().requires_grad_(w.requires_grad)
    b64 = None if b is None else b.detach().double().requires_grad_()
    torch.nn.functional.linear(x64, w64, b64).backward(dy.double())
    for name, got, ours, ref in zip("xwb", first, (x, w, b), (x64, w64, b64)):
        if ref is not None and ref.grad is not None:
            assert got.dtype == ours.dtype, name
            assert rel_error(got, ref.grad) < 1e-2, name


def test_recorded_backward_steps_aside_for_modes_and_double_backward():
    """With a recipe recorded, FlopCounterMode still counts the backward's two products and create_graph still
    builds a differentiable graph (both take the general formula through the registered ops)."""
    from torch.utils.flop_counter import FlopCounterMode

    g = torch.Generator(device=DEV).manual_seed(5)
    m, n, k = 512, 384, 256
    x = torch.randn(m, k, device=DEV, generator=g).to(BF).requires_grad_()
    w = (torch.randn(n, k, device=DEV, generator=g) / 16).to(BF).requires_grad_()
    dy = torch.randn(m, n, device=DEV, generator=g).to(BF)
    linear_autograd._BACKWARDS.clear()
    for _ in range(2):
        _grads(x, w, None, dy)
    assert any(r is not False for r in linear_autograd._BACKWARDS.values())
    with FlopCounterMode(display=False) as counter:
        warpgemm.linear(x, w).backward(dy)
    assert counter.get_total_flops() == 3 * 2 * m * n * k
    gx, = torch.autograd.grad(warpgemm.linear(x, w), (x, ), dy, create_graph=True)
    gw, = torch.autograd.grad(gx.float().square().sum(), (w, ))
    x64, w64 = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    gx64, = torch.autograd.grad(torch.nn.functional.linear(x64, w64), (x64, ), dy.double(), create_graph=True)
    want, = torch.autograd.grad(gx64.square().sum(), (w64, ))
    assert rel_error(gw, want) < 2e-2
