"""What the backward keeps and the layout of the gradients it returns, against torch's own ops: a frozen operand's
partner is not saved (torch's mm saves the same), and a gradient comes back in its operand's layout (an nn.Linear
weight read as W.T gets a contiguous W-shaped gradient). CPU tensors under the Triton interpreter."""
import pytest
import torch

import warpgemm
from warpgemm.testing import rel_error

BF = torch.bfloat16


def _saved_shapes(fn):
    shapes = []

    def pack(t):
        shapes.append(tuple(t.shape))
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = fn()
    return out, shapes


@pytest.mark.parametrize("grads", ["input", "weight", "both"])
def test_linear_saves_only_what_its_gradients_need(grads):
    torch.manual_seed(0)
    x = torch.randn(6, 32, dtype=BF, requires_grad=grads in ("input", "both"))
    w = torch.randn(16, 32, dtype=BF, requires_grad=grads in ("weight", "both"))
    _, shapes = _saved_shapes(lambda: warpgemm.linear(x, w))
    _, torch_shapes = _saved_shapes(lambda: torch.nn.functional.linear(x, w))
    assert len(shapes) == len(torch_shapes), (shapes, torch_shapes)


def test_input_changed_in_place_after_a_frozen_weight_layer():
    """Only the weight is saved for dX, so changing the layer's input in place later is fine, as with F.linear."""
    torch.manual_seed(1)
    w = torch.randn(16, 32, dtype=BF)
    h = torch.randn(6, 32, dtype=BF, requires_grad=True) * 1
    y = warpgemm.linear(h, w)
    h.add_(1)
    y.backward(torch.ones(6, 16, dtype=BF))


def test_gradients_come_back_in_their_operands_layout():
    torch.manual_seed(2)
    x, w = torch.randn(6, 32, dtype=BF, requires_grad=True), torch.randn(16, 32, dtype=BF, requires_grad=True)
    g = torch.randn(6, 16, dtype=BF)
    gx, gw = torch.autograd.grad(warpgemm.linear(x, w), (x, w), g)
    tx, tw = torch.autograd.grad(torch.nn.functional.linear(x, w), (x, w), g)
    assert gx.stride() == tx.stride() and gw.stride() == tw.stride() == (32, 1)
    assert rel_error(gw, tw) < 1e-2 and rel_error(gx, tx) < 1e-2
    xt = torch.randn(32, 6, dtype=BF, requires_grad=True)  # a read along M: x.T of a (K, M) tensor
    ga, = torch.autograd.grad(warpgemm.matmul(xt.t(), w.detach().t()), (xt, ), g)
    ta, = torch.autograd.grad(torch.matmul(xt.t(), w.detach().t()), (xt, ), g)
    assert ga.stride() == ta.stride() and rel_error(ga, ta) < 1e-2
    # A weight shared over batches: its gradient summed over them, still W-shaped and contiguous.
    xb, gb = torch.randn(3, 6, 32, dtype=BF), torch.randn(3, 6, 16, dtype=BF)
    gwb, = torch.autograd.grad(warpgemm.linear(xb, w), (w, ), gb)
    assert gwb.is_contiguous() and rel_error(gwb, torch.einsum("bmn,bmk->nk", gb.double(), xb.double())) < 1e-2


def test_grouped_mm_saves_only_what_its_gradients_need():
    torch.manual_seed(3)
    a = torch.randn(20, 8, dtype=BF, requires_grad=True)
    b = torch.randn(3, 8, 4, dtype=BF)  # frozen experts
    offs = torch.tensor([6, 12, 20], dtype=torch.int32)
    out, shapes = _saved_shapes(lambda: warpgemm.grouped_mm(a, b, offs))
    assert (20, 8) not in shapes and (3, 8, 4) in shapes
    out.float().sum().backward()
    want = torch.cat([b[g].double().sum(1).expand(e - s, 8) for g, (s, e) in enumerate([(0, 6), (6, 12), (12, 20)])])
    assert rel_error(a.grad, want) < 1e-2


def test_a_weight_shared_by_unfoldable_batches_keeps_its_layout():
    """x's batches cannot merge into one tall matrix (a slice of a longer one), so dW is summed over batches: in
    the product's own orientation, so W's gradient is still contiguous like torch's."""
    torch.manual_seed(4)
    x = torch.randn(3, 7, 32, dtype=BF)[:, :4]
    w = torch.randn(16, 32, dtype=BF, requires_grad=True)
    g = torch.randn(3, 4, 16, dtype=BF)
    gw, = torch.autograd.grad(warpgemm.linear(x, w), (w, ), g)
    tw, = torch.autograd.grad(torch.nn.functional.linear(x, w), (w, ), g)
    assert gw.stride() == tw.stride() == (32, 1) and rel_error(gw, tw) < 1e-2


def test_compiled_linear_of_a_transposed_batch():
    """A batched x whose batches cannot merge into its rows, under torch.compile: the fold is decided from the
    strides (a failed view() on fake tensors is an error no except clause sees)."""
    torch.manual_seed(5)
    x, w = torch.randn(4, 3, 32, dtype=BF), torch.randn(16, 32, dtype=BF)
    got = torch.compile(lambda x, w: warpgemm.linear(x.transpose(0, 1), w))(x, w)
    assert rel_error(got, torch.nn.functional.linear(x.transpose(0, 1).double(), w.double())) < 1e-2
