"""linear's recorded backward (ops/linear_autograd.py) on the CPU, with the Hopper path's planning real and its
launches faked: from the second backward of a signature the recipe must run the very launches the general formula
ran (library.backward_3d), on the same operands, into the gradients it returns. The GPU suite
(test_gpu_linear_backward.py) checks the bits on the kernels."""
import pytest
import torch

import warpgemm
from warpgemm import _env
from warpgemm.kernels import gemv
from warpgemm.kernels.hopper import gemm as hopper_gemm
from warpgemm.ops import gemm_impl, linear_autograd

BF = torch.bfloat16


@pytest.fixture
def launches(monkeypatch):
    """Plans as on a 132-SM H100 for CPU tensors; each launch records (launch, a, b) by address and fills its output
    with a value of its own, so a gradient says which launch wrote it."""
    calls, ids = [], {}

    def fake(self, a, b, c, bias, group_table=None, scales=None):
        calls.append((ids.setdefault(id(self), len(ids) + 1), a.data_ptr(), b.data_ptr()))
        c.fill_(ids[id(self)])

    monkeypatch.setattr(_env, "INTERPRET", True)
    monkeypatch.setattr(_env, "sms_for", lambda device: 132)
    monkeypatch.setattr(gemm_impl, "select_path", lambda device: gemm_impl.PathChoice("hopper", "test"))
    monkeypatch.setattr(torch.cuda, "current_device", lambda: None)
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: None, raising=False)
    monkeypatch.setattr(hopper_gemm.GemmLaunch, "launch", fake)
    monkeypatch.setattr(gemv.GemvLaunch, "launch", fake)  # one-row products (a 1-D x)
    gemm_impl.forget_plans()
    yield calls
    gemm_impl.forget_plans()


# (x's shape, N, bias, x needs grad, weight needs grad)
CASES = [((2, 96, 1024), 768, True, True, True), ((333, 1024), 200, False, True, True),
         ((4, 64, 512), 384, True, False, True), ((128, 512), 256, True, True, False),
         ((512, ), 384, True, True, True), ((64, 256), 128, True, False, False)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{'x'.join(map(str, c[0]))}_n{c[1]}_{c[2]}{c[3]}{c[4]}")
def test_recipe_runs_the_general_formulas_launches(launches, monkeypatch, case):
    """Fresh tensors (the same values) every step: the recipe must launch on this step's addresses, not the first's."""
    shape, n, has_bias, x_grad, w_grad = case
    general_ran = []
    general = linear_autograd.library.backward_3d
    monkeypatch.setattr(linear_autograd.library, "backward_3d", lambda *a: general_ran.append(1) or general(*a))
    x0, w0 = torch.randn(*shape, dtype=BF), torch.randn(n, shape[-1], dtype=BF)
    b0, dy0 = torch.randn(n, dtype=BF), torch.randn(*shape[:-1], n, dtype=BF)
    steps = []
    for _ in range(3):
        x, w, dy = x0.clone().requires_grad_(x_grad), w0.clone().requires_grad_(w_grad), dy0.clone()
        b = b0.clone().requires_grad_() if has_bias else None
        y = warpgemm.linear(x, w, b)
        launches.clear()  # the forward's launch
        general_ran.clear()
        y.backward(dy)
        names = {dy.data_ptr(): "dy", x.data_ptr(): "x", w.data_ptr(): "w"}
        calls = sorted((i, names.get(pa, pa), names.get(pb, pb)) for i, pa, pb in launches)
        steps.append((calls, [None if t is None or t.grad is None else t.grad for t in (x, w, b)], bool(general_ran)))
    general_step, recorded = steps[0], steps[1:]
    assert general_step[2] and len(general_step[0]) == x_grad + w_grad
    assert all(isinstance(name, str) for _, pa, pb in general_step[0] for name in (pa, pb))
    for calls, grads, ran in recorded:
        assert not ran  # the recipe, not the general formula
        assert calls == general_step[0]  # the same plans' launches on the same operands (this step's addresses)
        for want, got in zip(general_step[1], grads):
            assert (want is None) == (got is None)
            if want is not None:
                # the same shape, strides and dtype, written whole by the same launch (the bias: the same sum)
                assert (got.shape, got.stride(), got.dtype) == (want.shape, want.stride(), want.dtype)
                assert torch.equal(got, want)


def test_no_recipe_under_create_graph_or_a_dispatch_mode(launches, monkeypatch):
    from torch.utils.flop_counter import FlopCounterMode

    ran = []
    general = linear_autograd.library.backward_3d
    monkeypatch.setattr(linear_autograd.library, "backward_3d", lambda *a: ran.append(1) or general(*a))
    x = torch.randn(64, 256, dtype=BF).requires_grad_()
    w = torch.randn(128, 256, dtype=BF).requires_grad_()
    dy = torch.randn(64, 128, dtype=BF)
    for _ in range(2):
        warpgemm.linear(x, w).backward(dy)
    ran.clear()
    warpgemm.linear(x, w).backward(dy)
    assert not ran  # the recipe
    with FlopCounterMode(display=False):
        warpgemm.linear(x, w).backward(dy)
    torch.autograd.grad(warpgemm.linear(x, w), (x, ), dy, create_graph=True)
    assert len(ran) == 2
