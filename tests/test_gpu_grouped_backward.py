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
    """Three steps on fresh copies of the same values: the first through the general formula, the next two through
    the recorded backward (ops/grouped_recorded.py), which must give the same bits."""
    T, K, N, ends = case
    g = torch.Generator(device=DEV).manual_seed(T)
    G = len(ends)
    a0 = rand(T, K, g=g)
    b0 = rand(G, N, K, g=g).transpose(1, 2) if stored_nk else rand(G, K, N, g=g)
    grad0 = rand(T, N, g=g)
    offs = torch.tensor(ends, device=DEV, dtype=torch.int32)
    zeroed, used = [], []
    kernel = grouped.zero_rows_past_end
    monkeypatch.setattr(grouped, "zero_rows_past_end", lambda *args: zeroed.append(1) or kernel(*args))
    recorded = grouped_recorded.backward
    monkeypatch.setattr(grouped_recorded, "backward", lambda *args: used.append(recorded(*args)) or used[-1])
    steps = []
    for step in range(3):
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
        assert zeroed, step  # the in-place kernel, not the masked_fill fallback
        assert (used[0] is not None) == (step > 0), step  # the recipe from the second step
        assert b.grad.stride() == b.stride()
        steps.append((a.grad, b.grad))
    da, db, owned = _reference(a0, b0, ends, grad0)
    assert rel_error(steps[0][0][:owned], da[:owned]) < 1e-2 and rel_error(steps[0][1], db) < 1e-2
    for ga, gb in steps:
        assert torch.equal(ga[owned:], torch.zeros_like(ga[owned:]))
        assert torch.equal(ga, steps[0][0]) and torch.equal(gb, steps[0][1])


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
