"""The token form's recorded calls (ops/grouped_recorded.py) on the CPU, with the Hopper path's planning real and its
launches faked. From the second backward of a signature the recipe must run the very launches the general formula ran
(grouped._tokens_backward), on the same operands, into gradients of the same layout; from the second call of a
signature grouped_mm skips its checks and launches the same plan. The GPU suite (test_gpu_grouped_backward.py)
checks the values on the kernels."""
import pytest
import torch

import warpgemm
from warpgemm import _env
from warpgemm.kernels.hopper import gemm as hopper_gemm
from warpgemm.ops import gemm_impl, grouped, grouped_recorded

BF = torch.bfloat16


@pytest.fixture
def launches(monkeypatch):
    """Plans as on a 132-SM H100 for CPU tensors; each launch records (launch, a, b) by address and fills its output
    with a value of its own."""
    calls, ids = [], {}

    def fake(self, a, b, c, bias, group_table=None, scales=None):
        table = None if group_table is None else group_table.tolist()  # offs itself, or the row-tile table
        if table is not None and 0 <= 2 + 5 * table[0] <= len(table):
            table = table[:2 + 5 * table[0]]  # the table's written part (a header and 5 slots a row tile)
        table = None if table is None else tuple(table)
        calls.append((ids.setdefault(id(self), len(ids) + 1), a.data_ptr(), b.data_ptr(), c.data_ptr(), table))
        c.fill_(ids[id(self)])

    hopper = lambda device: gemm_impl.PathChoice("hopper", "test")  # noqa: E731
    monkeypatch.setattr(_env, "INTERPRET", True)
    monkeypatch.setattr(_env, "sms_for", lambda device: 132)
    monkeypatch.setattr(gemm_impl, "select_path", hopper)
    monkeypatch.setattr(grouped, "select_path", hopper)
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: None, raising=False)
    monkeypatch.setattr(torch._C, "_cuda_getCurrentRawStream", lambda device: 0, raising=False)
    monkeypatch.setattr(hopper_gemm.GemmLaunch, "launch", fake)

    def zero_past_end(x, offs):  # in place, as kernels/zero_rows.py does on the GPU (the CPU path copies)
        x.masked_fill_((torch.arange(x.shape[0]) >= offs.max().clamp(0, x.shape[0])).unsqueeze(1), 0)
        return x

    monkeypatch.setattr(grouped, "_zero_past_end", zero_past_end)
    gemm_impl.forget_plans()
    yield calls
    gemm_impl.forget_plans()


def _spy(real, used):
    """grouped_recorded.backward, noting whether the recipe ran (holding no reference to the gradients: autograd
    copies a gradient someone else still holds instead of taking it)."""
    def backward(*args):
        r = real(*args)
        used.append(r is not None)
        return r
    return backward


# (groups, tokens, K, N, experts stored (G, N, K), x needs grad, experts need grad, owned tokens)
CASES = [(8, 512, 256, 128, True, True, True, 512), (8, 512, 256, 128, False, True, True, 400),
         (4, 256, 128, 256, True, False, True, 256), (4, 256, 128, 256, True, True, False, 200),
         (100, 1024, 64, 128, True, True, True, 1000)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"G{c[0]}_T{c[1]}_{'GNK' if c[4] else 'GKN'}_{c[5]}{c[6]}")
def test_recipe_runs_the_general_formulas_launches(launches, monkeypatch, case):
    G, T, K, N, stored_nk, x_grad, w_grad, owned = case
    used = []
    real = grouped_recorded.backward
    monkeypatch.setattr(grouped_recorded, "backward", _spy(real, used))
    x0 = torch.randn(T, K, dtype=BF)
    w0 = torch.randn(G, N, K, dtype=BF).transpose(1, 2) if stored_nk else torch.randn(G, K, N, dtype=BF)
    dy0 = torch.randn(T, N, dtype=BF)
    cuts = torch.linspace(0, owned, G + 1)[1:].round().to(torch.int32)
    steps = []
    for _ in range(3):
        x, dy = x0.clone().requires_grad_(x_grad), dy0.clone()
        w = torch.empty_strided(w0.shape, w0.stride(), dtype=BF).copy_(w0).requires_grad_(w_grad)
        offs = cuts.clone()
        y = warpgemm.grouped_mm(x, w, offs)
        launches.clear()
        used.clear()
        y.backward(dy)
        names = {dy.data_ptr(): "dy", x.data_ptr(): "x", w.data_ptr(): "w"}
        for t, name in ((x, "dx"), (w, "dw")):
            if t.grad is not None:
                names[t.grad.data_ptr()] = name
        calls = sorted((i, names.get(pa, pa), names.get(pb, pb), names.get(pc, pc), table)
                       for i, pa, pb, pc, table in launches)
        steps.append((calls, [None if t.grad is None else t.grad for t in (x, w)], used[0]))
    assert any(r is not False for r in grouped_recorded._RECIPES.values())
    general_step, recorded = steps[0], steps[1:]
    assert len(general_step[0]) == x_grad + w_grad
    # every launch reads the step's own operands and writes the gradient the step returns
    assert all(isinstance(n, str) for _, pa, pb, pc, _ in general_step[0] for n in (pa, pb, pc))
    assert not general_step[2]
    for calls, grads, from_recipe in recorded:
        assert from_recipe
        assert calls == general_step[0]  # the same plans' launches on this step's operands
        for want, got in zip(general_step[1], grads):
            assert (want is None) == (got is None)
            if want is not None:
                assert (got.shape, got.stride(), got.dtype) == (want.shape, want.stride(), want.dtype)
                assert torch.equal(got, want)  # written by the same launch; rows past the end zero in both
    if x_grad:
        assert torch.equal(steps[1][1][0][owned:], torch.zeros(T - owned, K, dtype=BF))


def test_general_formula_under_create_graph_and_modes(launches, monkeypatch):
    from torch.utils.flop_counter import FlopCounterMode

    x = torch.randn(128, 64, dtype=BF).requires_grad_()
    w = torch.randn(4, 64, 32, dtype=BF).requires_grad_()
    offs = torch.tensor([32, 64, 96, 128], dtype=torch.int32)
    dy = torch.randn(128, 32, dtype=BF)
    for _ in range(2):
        warpgemm.grouped_mm(x, w, offs).backward(dy)
    used = []
    real = grouped_recorded.backward
    monkeypatch.setattr(grouped_recorded, "backward", lambda *a: used.append(real(*a) is not None) or None)
    warpgemm.grouped_mm(x, w, offs).backward(dy)
    with FlopCounterMode(display=False) as counter:
        warpgemm.grouped_mm(x, w, offs).backward(dy)
    torch.autograd.grad(warpgemm.grouped_mm(x, w, offs), (x, ), dy.requires_grad_(), create_graph=True)
    assert used == [True, False, False]  # plain eager: the recipe; under a mode or create_graph: the general formula
    assert counter.get_total_flops() == 3 * 2 * 128 * 64 * 32


@pytest.mark.parametrize("why", ["logging", "fp32_out", "portable"])
def test_recipe_declines(launches, monkeypatch, why):
    """Where the general formula differs (logging, an fp32 gradient of bf16 tokens, the portable path), no recipe."""
    x = torch.randn(128, 64, dtype=BF).requires_grad_()
    w = torch.randn(4, 64, 32, dtype=BF).requires_grad_()
    offs = torch.tensor([32, 64, 96, 128], dtype=torch.int32)
    if why == "logging":
        monkeypatch.setattr(_env, "LOG_ENABLED", True)
        monkeypatch.setattr(_env, "log", lambda message: None)
    if why == "portable":
        portable = lambda device: gemm_impl.PathChoice("portable", "test")  # noqa: E731
        monkeypatch.setattr(gemm_impl, "select_path", portable)
        monkeypatch.setattr(grouped, "select_path", portable)
    out_dtype = torch.float32 if why == "fp32_out" else None
    used = []
    real = grouped_recorded.backward
    monkeypatch.setattr(grouped_recorded, "backward", _spy(real, used))
    for _ in range(3):
        y = warpgemm.grouped_mm(x, w, offs, out_dtype=out_dtype)
        y.backward(torch.randn(y.shape, dtype=y.dtype))
    assert used == [False] * 3
    assert all(r is False for r in grouped_recorded._RECIPES.values())



@pytest.mark.parametrize("grad", [False, True], ids=["no_grad", "grad"])
def test_recorded_forward_skips_the_checks_and_launches_the_same_plan(launches, monkeypatch, grad):
    """From the second call of a signature grouped_mm skips its checks (no check_tensor) and, without gradients,
    launches the recorded plan on the call's own x, W, offs and output; with gradients it goes to the same op. New
    tensors (and offs values) each call."""
    checked = []
    real_check = grouped.checks.check_tensor
    monkeypatch.setattr(grouped.checks, "check_tensor", lambda *a: checked.append(1) or real_check(*a))
    steps = []
    for n in range(3):
        x, w = torch.randn(256, 64, dtype=BF).requires_grad_(grad), torch.randn(4, 64, 96, dtype=BF)
        offs = torch.tensor([64 + n, 100, 200 - n, 256], dtype=torch.int32)
        checked.clear()
        launches.clear()
        y = warpgemm.grouped_mm(x, w, offs)
        names = {x.data_ptr(): "x", w.data_ptr(): "w", y.data_ptr(): "y"}
        steps.append(([(i, names.get(pa), names.get(pb), names.get(pc), t) for i, pa, pb, pc, t in launches],
                      bool(checked), (y.shape, y.stride(), y.dtype, y.requires_grad)))
        assert launches[0][4] == tuple(offs.tolist())  # this call's offs (the GEMM counts row tiles from it)
        if grad:
            y.backward(torch.randn(y.shape, dtype=BF))
            assert x.grad is not None and x.grad.shape == x.shape
    assert steps[0][1] and not steps[1][1] and not steps[2][1]  # checked once
    for s in steps[1:]:
        assert [c[:4] for c in s[0]] == [c[:4] for c in steps[0][0]] and s[2] == steps[0][2]
    assert steps[0][0][0][1:4] == ("x", "w", "y") and steps[0][2][3] == grad


@pytest.mark.parametrize("why", ["out", "config", "check_offs", "logging", "mode", "other_shape"])
def test_recorded_forward_declines(launches, monkeypatch, why):
    from torch.utils.flop_counter import FlopCounterMode

    from warpgemm.heuristics import GROUPED_LARGE

    x, w = torch.randn(256, 64, dtype=BF), torch.randn(4, 64, 96, dtype=BF)
    offs = torch.tensor([64, 100, 200, 256], dtype=torch.int32)
    for _ in range(2):
        warpgemm.grouped_mm(x, w, offs)
    assert any(grouped_recorded._FORWARDS.values())  # recorded
    checked = []
    real_check = grouped.checks.check_tensor
    monkeypatch.setattr(grouped.checks, "check_tensor", lambda *a: checked.append(1) or real_check(*a))
    warpgemm.grouped_mm(x, w, offs)
    assert not checked  # the recipe, unchanged
    kwargs = {}
    if why == "out":
        kwargs["out"] = torch.empty(256, 96, dtype=BF)
    if why == "config":
        kwargs["config"] = GROUPED_LARGE
    if why == "check_offs":
        monkeypatch.setattr(grouped, "_CHECK_OFFS", True)
    if why == "logging":
        monkeypatch.setattr(_env, "LOG_ENABLED", True)
        monkeypatch.setattr(_env, "log", lambda message: None)
    if why == "other_shape":
        x = torch.randn(255, 64, dtype=BF)
    if why == "mode":
        with FlopCounterMode(display=False):
            warpgemm.grouped_mm(x, w, offs)
    else:
        warpgemm.grouped_mm(x, w, offs, **kwargs)
    assert checked  # the checked call


def test_recorded_forward_keeps_the_checks_messages_and_meta_calls(launches):
    """Inputs the checks refuse by name still get their message after a recording, and meta calls (shape inference)
    are never recorded: a second one works as the first."""
    x, w = torch.randn(256, 64, dtype=BF), torch.randn(4, 64, 96, dtype=BF)
    offs = torch.tensor([64, 100, 200, 256], dtype=torch.int32)
    for _ in range(2):
        warpgemm.grouped_mm(x, w, offs)
    with pytest.raises(TypeError, match="out_dtype"):
        warpgemm.grouped_mm(x, w, offs, out_dtype=[1])
    with pytest.raises(TypeError, match="a must be a dense"):
        warpgemm.grouped_mm(x.to_sparse(), w, offs)
    with pytest.raises(TypeError, match="offs must be torch.int32"):
        warpgemm.grouped_mm(x, w, offs.long())
    recorded = dict(grouped_recorded._FORWARDS)
    xm, wm, om = x.to("meta"), w.to("meta"), offs.to("meta")
    for _ in range(2):
        assert warpgemm.grouped_mm(xm, wm, om).shape == (256, 96)
    assert grouped_recorded._FORWARDS == recorded
