"""Eager training calls run the registered ops' implementations and autograd formulas without the op dispatcher
(ops/eager_autograd.py), and wherever something must see the ops (a dispatch mode, tracing) they still go through
them. Gradients, second-order gradients and saved tensors agree with torch's. CPU tensors, Triton interpreter."""
import pytest
import torch
from torch.utils.flop_counter import FlopCounterMode

import warpgemm
from warpgemm.ops import elementwise, grouped, library
from warpgemm.testing import rel_error

BF = torch.bfloat16
EAGER_OPS = [(library, "BMM"), (grouped, "TOKENS"), (grouped, "RAGGED_K"), (elementwise, "BINARY")]


@pytest.fixture
def op_calls(monkeypatch):
    """How many times each registered op was called, by name."""
    calls = {}
    for module, name in EAGER_OPS:
        eager = getattr(module, name)

        def counted(*args, _op=eager.op, _name=name):
            calls[_name] = calls.get(_name, 0) + 1
            return _op(*args)

        monkeypatch.setattr(eager, "op", counted)
    return calls


def _tokens_case():
    g = torch.Generator().manual_seed(3)
    a = torch.randn(10, 32, dtype=BF, generator=g).requires_grad_()
    b = torch.randn(3, 32, 16, dtype=BF, generator=g).requires_grad_()
    return a, b, torch.tensor([3, 3, 10], dtype=torch.int32)


def _steps():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(6, 32, dtype=BF, generator=g).requires_grad_()
    w = torch.randn(16, 32, dtype=BF, generator=g).requires_grad_()
    a, b, offs = _tokens_case()
    u, v = torch.randn(5, 7, dtype=BF, generator=g), torch.randn(5, 7, dtype=BF, generator=g)
    u.requires_grad_()
    return {
        "linear": lambda: warpgemm.linear(x, w).float().sum().backward(),
        "grouped_tokens": lambda: warpgemm.grouped_mm(a, b, offs).float().sum().backward(),
        "grouped_ragged_k": lambda: warpgemm.grouped_mm(a.t(), torch.randn(10, 16, dtype=BF), offs)
        .float().sum().backward(),
        "add_mul": lambda: warpgemm.mul(warpgemm.add(u, v), v).float().sum().backward(),
    }


@pytest.mark.parametrize("case", list(_steps()))
def test_eager_training_steps_skip_the_op_dispatcher(case, op_calls):
    _steps()[case]()
    assert op_calls == {}


@pytest.mark.parametrize("case", list(_steps()))
def test_under_a_dispatch_mode_the_registered_ops_run(case, op_calls):
    with FlopCounterMode(display=False):
        _steps()[case]()
    assert sum(op_calls.values()) >= 2, op_calls  # the forward and at least one backward product


def test_linear_gradients_match_float64():
    g = torch.Generator().manual_seed(4)
    x = torch.randn(2, 6, 32, dtype=BF, generator=g).requires_grad_()
    w = torch.randn(16, 32, dtype=BF, generator=g).requires_grad_()
    bias = torch.randn(16, dtype=BF, generator=g).requires_grad_()
    dy = torch.randn(2, 6, 16, dtype=BF, generator=g)
    got = torch.autograd.grad(warpgemm.linear(x, w, bias), (x, w, bias), dy)
    ref = [t.double().detach().requires_grad_() for t in (x, w, bias)]
    want = torch.autograd.grad(torch.nn.functional.linear(*ref), ref, dy.double())
    for name, a, b in zip(("x", "w", "bias"), got, want):
        assert a.dtype == BF and rel_error(a, b) < 1e-2, name


def test_second_order_gradients_of_linear_match_float64():
    """create_graph=True: the backward's products are themselves differentiated (they run with grad mode on)."""
    g = torch.Generator().manual_seed(5)
    x = torch.randn(6, 32, dtype=BF, generator=g).requires_grad_()
    w = torch.randn(16, 32, dtype=BF, generator=g).requires_grad_()
    dy = torch.randn(6, 16, dtype=BF, generator=g)

    def second(fn, x, w, dy):
        gx, gw = torch.autograd.grad(fn(x, w), (x, w), dy, create_graph=True)
        return torch.autograd.grad((gx.float() ** 2).sum() + (gw.float() ** 2).sum(), (x, w))

    got = second(warpgemm.linear, x, w, dy)
    ref = [t.double().detach().requires_grad_() for t in (x, w)]
    want = second(torch.nn.functional.linear, *ref, dy.double())
    for a, b in zip(got, want):
        assert rel_error(a, b) < 3e-2


def test_second_order_gradients_of_grouped_mm_match_float64():
    a, b, offs = _tokens_case()
    dy = torch.randn(10, 16, dtype=BF, generator=torch.Generator().manual_seed(6))

    def second(fn, a, b):
        ga, gb = torch.autograd.grad(fn(a, b), (a, b), dy.to(a.dtype), create_graph=True)
        return torch.autograd.grad((ga.float() ** 2).sum() + (gb.float() ** 2).sum(), (a, b))

    def reference(a, b):
        ends = offs.tolist()
        return torch.cat([a[s:e] @ b[i] for i, (s, e) in enumerate(zip([0] + ends[:-1], ends))])

    got = second(lambda a, b: warpgemm.grouped_mm(a, b, offs), a, b)
    want = second(reference, *[t.double().detach().requires_grad_() for t in (a, b)])
    for x, y in zip(got, want):
        assert rel_error(x, y) < 3e-2


def test_saved_tensor_hooks_see_what_the_eager_function_saves():
    """save_on_cpu-style hooks (activation offloading) apply to the eager path's saved tensors."""
    g = torch.Generator().manual_seed(7)
    x = torch.randn(6, 32, dtype=BF, generator=g).requires_grad_()
    w = torch.randn(16, 32, dtype=BF, generator=g).requires_grad_()
    packed = []

    def pack(t):
        packed.append(t)
        return t.clone()

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        y = warpgemm.linear(x, w)
    y.float().sum().backward()
    assert len(packed) == 2 and rel_error(w.grad, torch.ones(6, 16).t() @ x.detach().float()) < 1e-2


def _x_layouts():
    g = torch.Generator().manual_seed(8)
    r = lambda *s: torch.randn(*s, dtype=BF, generator=g)  # noqa: E731
    return {
        "2-D": r(6, 32),
        "1-D": r(32),
        "3-D": r(2, 5, 32),
        "3-D batch-transposed": r(5, 2, 32).transpose(0, 1),  # batches that cannot fold into rows
        "column-major": r(32, 6).t(),
        "4-D sliced": r(2, 3, 4, 40)[..., 3:35],
        "no rows": r(0, 32),
    }


@pytest.mark.parametrize("layout", list(_x_layouts()))
@pytest.mark.parametrize("grads", ["all", "x", "weight", "bias"])
def test_linear_training_call_matches_f_linear(layout, grads, op_calls):
    """One autograd node (linear_autograd.py): values against float64, and gradients' shapes and strides as
    F.linear's, whatever x's layout and whichever inputs need gradients."""
    x0 = _x_layouts()[layout]
    g = torch.Generator().manual_seed(9)
    w0, b0 = torch.randn(16, 32, dtype=BF, generator=g), torch.randn(16, dtype=BF, generator=g)
    wants = {"x": grads in ("all", "x"), "w": grads in ("all", "weight"), "b": grads in ("all", "bias")}
    x, w, b = (t.clone().requires_grad_(wants[n]) if n != "x" else
               x0.detach().requires_grad_(wants[n]) for n, t in (("x", x0), ("w", w0), ("b", b0)))
    y = warpgemm.linear(x, w, b)
    # (An empty x has no storage to key a recipe on: it takes the general path, through the views.)
    assert type(y.grad_fn).__name__ == ("LinearFunctionBackward" if x.numel() else "ViewBackward0")
    dy = torch.randn(y.shape, dtype=BF, generator=g)
    inputs = [t for t in (x, w, b) if t.requires_grad]
    got = torch.autograd.grad(y, inputs, dy)
    ref = [t.detach().double().requires_grad_(t.requires_grad) for t in (x, w, b)]
    yr = torch.nn.functional.linear(*ref)
    want = torch.autograd.grad(yr, [t for t in ref if t.requires_grad], dy.double())
    assert rel_error(y, yr) < 1e-2
    for a, e, t in zip(got, want, inputs):
        assert a.dtype == t.dtype and a.shape == t.shape and (a.numel() == 0 or rel_error(a, e) < 1e-2)
    # Layouts as F.linear's own bf16 gradients.
    torch_grads = torch.autograd.grad(torch.nn.functional.linear(x, w, b), inputs, dy)
    for a, t in zip(got, torch_grads):
        assert a.numel() <= 1 or a.stride() == t.stride(), (a.stride(), t.stride())
    assert op_calls == {}


def test_outputs_take_in_place_changes_as_torch_outputs_do():
    """An in-place activation or residual after the op (nn.ReLU(inplace=True)): autograd refuses in-place changes
    of a custom Function's view outputs, so the eager nodes must return the output itself. Gradients against
    float64 through each op followed by an in-place shift and ReLU."""
    g = torch.Generator().manual_seed(10)
    x = torch.randn(2, 3, 32, dtype=BF, generator=g).requires_grad_()
    w = torch.randn(16, 32, dtype=BF, generator=g).requires_grad_()
    a, b, offs = _tokens_case()
    u = torch.randn(5, 7, dtype=BF, generator=g).requires_grad_()
    v = torch.randn(5, 7, dtype=BF, generator=g)

    def grouped_reference(a, b, offs):
        ends = offs.tolist()
        return torch.cat([a[s:e] @ b[i] for i, (s, e) in enumerate(zip([0] + ends[:-1], ends))])

    cases = [
        (lambda x, w: warpgemm.linear(x, w), torch.nn.functional.linear, (x, w)),
        (lambda x, w: warpgemm.matmul(x, w.t()), lambda x, w: torch.matmul(x, w.t()), (x, w)),
        (lambda a, b: warpgemm.grouped_mm(a, b, offs), lambda a, b: grouped_reference(a, b, offs), (a, b)),
        (lambda u: warpgemm.add(u, v), lambda u: u + v.double(), (u, )),
    ]
    for ours, reference, inputs in cases:
        y = ours(*inputs)
        y.add_(1).relu_()
        got = torch.autograd.grad(y.float().sum(), inputs)
        mask = (y > 0).double()  # ours: bf16 rounding may flip entries next to zero against float64
        ref = [t.detach().double().requires_grad_() for t in inputs]
        want = torch.autograd.grad((reference(*ref) * mask).sum(), ref)
        for p, q in zip(got, want):
            assert rel_error(p, q) < 1e-2


@pytest.mark.parametrize("mode_over", ["forward", "backward", "neither"])
def test_checkpoint_recomputes_what_the_forward_saved_under_a_mode_in_one_pass(mode_over):
    """Non-reentrant checkpointing compares what the recompute saves with what the forward saved: the route a call
    takes must not depend on a dispatch mode (FlopCounterMode over the forward only, or the backward only)."""
    from torch.utils.checkpoint import checkpoint

    g = torch.Generator().manual_seed(11)
    x = torch.randn(6, 32, dtype=BF, generator=g).requires_grad_()
    w = torch.randn(16, 32, dtype=BF, generator=g).requires_grad_()
    a, b, offs = _tokens_case()

    def block(x, w, a, b):
        return warpgemm.linear(x, w).float().sum() + warpgemm.grouped_mm(a, b, offs).float().sum()

    def mode(active):
        return FlopCounterMode(display=False) if active else torch.autograd.graph.saved_tensors_hooks(
            lambda t: t, lambda t: t)

    with mode(mode_over == "forward"):
        y = checkpoint(block, x, w, a, b, use_reentrant=False)
    with mode(mode_over == "backward"):
        got = torch.autograd.grad(y, (x, w, a, b))
    ref = [t.detach().double().requires_grad_() for t in (x, w, a, b)]
    ends = offs.tolist()
    grouped = torch.cat([ref[2][s:e] @ ref[3][i] for i, (s, e) in enumerate(zip([0] + ends[:-1], ends))])
    want = torch.autograd.grad((ref[0] @ ref[1].t()).sum() + grouped.sum(), ref)
    for p, q in zip(got, want):
        assert rel_error(p, q) < 1e-2


def test_batched_gradients_take_the_registered_ops():
    """autograd.grad(is_grads_batched=True) and jacobian(vectorize=True) run the backward on legacy vmap
    BatchedTensors (no storage): the products go through the registered ops and torch's vmap fallback."""
    g = torch.Generator().manual_seed(12)
    x = torch.randn(4, 8, dtype=BF, generator=g)
    w = torch.randn(3, 8, dtype=BF, generator=g)
    jac = torch.autograd.functional.jacobian(lambda w: warpgemm.linear(x, w), w, vectorize=True)
    want = torch.autograd.functional.jacobian(lambda w: torch.nn.functional.linear(x.double(), w), w.double())
    assert jac.shape == want.shape and rel_error(jac, want) < 1e-2
    jac = torch.autograd.functional.jacobian(lambda x: warpgemm.matmul(x, w.t()), x, vectorize=True)
    want = torch.autograd.functional.jacobian(lambda x: torch.matmul(x, w.double().t()), x.double())
    assert rel_error(jac, want) < 1e-2
    a, b, offs = _tokens_case()
    y = warpgemm.grouped_mm(a, b, offs)
    eye = torch.eye(y.numel(), dtype=BF).view(-1, *y.shape)
    ga, = torch.autograd.grad(y, (a, ), eye, is_grads_batched=True)
    for i in (0, 17, y.numel() - 1):
        one, = torch.autograd.grad(warpgemm.grouped_mm(a, b, offs), (a, ), eye[i])
        assert torch.equal(ga[i], one)


def test_eager_nodes_and_registered_ops_give_the_same_bits():
    """The eager nodes run the registered ops' own implementations and formulas: outputs and gradients equal,
    bit for bit, those of the registered-op route (taken under a dispatch mode)."""
    g = torch.Generator().manual_seed(13)
    x = torch.randn(2, 5, 32, dtype=BF, generator=g).requires_grad_()
    w = torch.randn(16, 32, dtype=BF, generator=g).requires_grad_()
    bias = torch.randn(16, dtype=BF, generator=g).requires_grad_()
    a, b, offs = _tokens_case()
    rk = torch.randn(10, 16, dtype=BF, generator=g).requires_grad_()
    u, v = (torch.randn(5, 7, dtype=BF, generator=g).requires_grad_() for _ in range(2))
    cases = [
        (lambda: warpgemm.linear(x, w, bias), (x, w, bias)),
        (lambda: warpgemm.matmul(x, w.t()), (x, w)),
        (lambda: warpgemm.grouped_mm(a, b, offs), (a, b)),
        (lambda: warpgemm.grouped_mm(a.t(), rk, offs), (a, rk)),
        (lambda: warpgemm.mul(warpgemm.add(u, v, alpha=0.5), v), (u, v)),
    ]
    for fn, inputs in cases:
        y = fn()
        dy = torch.randn(y.shape, dtype=y.dtype, generator=g)
        eager = (y, *torch.autograd.grad(y, inputs, dy))
        with FlopCounterMode(display=False):
            y = fn()
            registered = (y, *torch.autograd.grad(y, inputs, dy))
        for p, q in zip(eager, registered):
            assert torch.equal(p, q)
