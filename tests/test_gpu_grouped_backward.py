"""GPU suite for the token form's backward in a training step's layouts: experts stored (G, N, K) and read as
(G, K, N) get their gradient in that same layout (no AccumulateGrad copy), the rows of dX past the last group's end
are zeros, written in place by kernels/zero_rows.py, and the recorded backward (ops/grouped_recorded.py) gives the
general formula's bits (skipped without an sm_90 GPU)."""
import pytest
import torch

import warpgemm
from warpgemm.ops import grouped, grouped_recorded
from warpgemm.testing import rand, rel_error

pytestmark = pytest.mark.gpu
DEV = "cuda"


def _reference(a, b, ends, grad):
    """dA, dB in float64 with each end raised to the one before it and clamped to [0, T]."""
    T = a.shape[0]
    da = torch.zeros(T, a.shape[1], device=DEV, dtype=torch.float64)
    db = torch.zeros(b.shape, device=DEV, dtype=torch.float64)
    start = 0
    for i, e in enumerate(ends):
        end = min(max(e, start), T)
        da[start:end] = grad[start:end].double() @ b[i].double().t()
        db[i] = a[start:end].double().t() @ grad[start:end].double()
        start = end
    return da, db, start


# (T, K, N, offs): an end short of T, a decreasing end, an end past T, 1500 groups (the kernel's chunk loop), all rows
# owned.
CASES = [(777, 256, 192, [100, 0, 300, 640]), (960, 128, 256, [300, 120, 700, 650, 900]),
         (512, 128, 128, [200, 9000]), (4096, 64, 64, list(range(2, 3001, 2))), (1024, 256, 128, [256, 768, 1024])]


@pytest.mark.parametrize("stored_nk", [True, False], ids=["experts_GNK", "experts_GKN"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: f"T{c[0]}_G{len(c[3])}")
def test_expert_gradient_layout_and_rows_past_the_end(case, stored_nk, monkeypatch):
    """Steps on new values, every step's tensors kept alive (new addresses): the first through the general formula,
    the next through the recorded backward (ops/grouped_recorded.py), each compared bit for bit with the general
    formula on the same inputs, and the first with float64."""
    T, K, N, ends = case
    g = torch.Generator(device=DEV).manual_seed(T)
    G = len(ends)
    offs = torch.tensor(ends, device=DEV, dtype=torch.int32)
    monkeypatch.setattr(grouped_recorded, "_RECIPES", {})
    zeroed, used = [], []
    kernel = grouped.zero_rows_past_end
    monkeypatch.setattr(grouped, "zero_rows_past_end", lambda *args: zeroed.append(1) or kernel(*args))
    recorded = grouped_recorded.backward
    allow = [True]
    def spy(*args):  # (keeps no reference to the gradients: autograd would copy one still held elsewhere)
        r = recorded(*args) if allow[0] else None
        used.append(r is not None)
        return r

    monkeypatch.setattr(grouped_recorded, "backward", spy)
    alive = []

    def step(a0, b0, grad0):
        a = a0.clone().requires_grad_()
        b = torch.empty_strided(b0.shape, b0.stride(), device=DEV, dtype=b0.dtype).copy_(b0).requires_grad_()
        grad = grad0.clone()
        out = warpgemm.grouped_mm(a, b, offs)
        # Leave NaN where the caching allocator will hand out dX (freed just before the backward): unwritten rows
        # show.
        nan = torch.full((T, K), float("nan"), device=DEV, dtype=a.dtype)
        del nan
        zeroed.clear()
        used.clear()
        out.backward(grad)
        alive.append((a, b, grad))
        assert zeroed  # the in-place kernel, not the masked_fill fallback
        assert b.grad.stride() == b.stride()
        return a.grad, b.grad, used[0]

    for n in range(3):
        a0 = rand(T, K, g=g)
        b0 = rand(G, N, K, g=g).transpose(1, 2) if stored_nk else rand(G, K, N, g=g)
        grad0 = rand(T, N, g=g)
        ga, gb, from_recipe = step(a0, b0, grad0)
        assert from_recipe == (n > 0), n  # recorded on the first backward, replayed from the second
        allow[0] = False
        want_a, want_b, _ = step(a0, b0, grad0)  # the general formula on the same inputs
        allow[0] = True
        assert torch.equal(ga, want_a) and torch.equal(gb, want_b), n
        da, db, owned = _reference(a0, b0, ends, grad0)
        assert rel_error(ga[:owned], da[:owned]) < 1e-2 and rel_error(gb, db) < 1e-2, n
        assert torch.equal(ga[owned:], torch.zeros_like(ga[owned:])), n


def test_rows_past_the_end_under_create_graph():
    """With create_graph the product is recorded, so its rows past the end are zeroed by torch ops (differentiably)."""
    g = torch.Generator(device=DEV).manual_seed(3)
    a, b = rand(300, 64, g=g).requires_grad_(), rand(2, 64, 32, g=g).requires_grad_()
    offs = torch.tensor([100, 250], device=DEV, dtype=torch.int32)
    grad = rand(300, 32, g=g).requires_grad_()
    ga, = torch.autograd.grad(warpgemm.grouped_mm(a, b, offs), (a, ), grad, create_graph=True)
    assert torch.equal(ga[250:], torch.zeros_like(ga[250:]))
    gg, = torch.autograd.grad(ga.float().sum(), (grad, ))
    assert torch.equal(gg[250:], torch.zeros_like(gg[250:]))


@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
def test_recorded_forward_matches_the_checked_call(grad, monkeypatch):
    """grouped_mm of a recorded signature (ops/grouped_recorded.py: no checks, the plan launched directly without
    gradients) gives the checked call's bits, and with gradients the same gradients, on new values and addresses
    each call."""
    monkeypatch.setattr(grouped_recorded, "_FORWARDS", {})
    checked = []
    real_check = grouped.checks.check_tensor
    monkeypatch.setattr(grouped.checks, "check_tensor", lambda *a: checked.append(1) or real_check(*a))
    g = torch.Generator(device=DEV).manual_seed(21)
    offs = torch.tensor([100, 0, 300, 640], device=DEV, dtype=torch.int32)
    alive = []
    for n in range(3):
        x, w = rand(777, 256, g=g).requires_grad_(grad), rand(4, 256, 192, g=g)
        dy = rand(777, 192, g=g)
        checked.clear()
        y = warpgemm.grouped_mm(x, w, offs)
        assert bool(checked) == (n == 0), n  # checked on the first call only
        xc = x.detach().clone().requires_grad_(grad)
        with monkeypatch.context() as m:
            m.setattr(grouped_recorded, "_FORWARDS", {})  # the checked call on the same inputs
            want = warpgemm.grouped_mm(xc, w, offs)
        assert torch.equal(y[:640], want[:640]) and y.requires_grad == grad, n
        if grad:
            y.backward(dy)
            want.backward(dy)
            assert torch.equal(x.grad, xc.grad), n
        alive.append((x, w, y, xc, want))
