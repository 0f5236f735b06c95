"""torch.func transforms (ops/transforms.py): matmul, linear, add and mul compose with vmap / grad / jacrev by
computing with torch ops under the transform (warpgemm's dtype rules, fp32 accumulation, bias in fp32); the other
ops refuse with a NotImplementedError that names the op. CPU tensors under the Triton interpreter."""
import pytest
import torch
from torch.func import grad, jacrev, vmap

import warpgemm
from warpgemm.testing import rel_error

BF = torch.bfloat16


def test_vmap_linear_and_matmul_match_the_eager_ops():
    torch.manual_seed(0)
    x, w, bias = torch.randn(4, 5, 16, dtype=BF), torch.randn(8, 16, dtype=BF), torch.randn(8)
    got = vmap(lambda xi: warpgemm.linear(xi, w, bias))(x)
    assert got.dtype == BF and got.shape == (4, 5, 8)
    assert rel_error(got, warpgemm.linear(x, w, bias)) < 1e-2
    wide = vmap(lambda xi: warpgemm.matmul(xi, w.t(), out_dtype=torch.float32))(x)
    assert wide.dtype == torch.float32 and rel_error(wide, x.double() @ w.double().t()) < 1e-5
    assert torch.equal(vmap(lambda xi: warpgemm.add(xi, xi, alpha=2))(x), torch.add(x, x, alpha=2))
    assert torch.equal(vmap(lambda xi: warpgemm.mul(xi, xi))(x), x * x)


def test_grad_and_jacrev_through_linear():
    torch.manual_seed(1)
    x, w = torch.randn(5, 16, dtype=BF), torch.randn(8, 16, dtype=BF)
    dw = grad(lambda ww: warpgemm.linear(x, ww).float().sum())(w)
    assert rel_error(dw, x.double().sum(0).expand(8, 16)) < 1e-2
    jac = jacrev(lambda xx: warpgemm.matmul(xx, w.t(), out_dtype=torch.float32))(x.float().to(BF))
    assert jac.shape == (5, 8, 5, 16)
    assert rel_error(jac[2, :, 2], w.double()) < 1e-2 and jac[2, :, 3].abs().max() == 0


def test_dtype_rules_and_refusals_under_a_transform():
    x, w = torch.randn(3, 5, 16, dtype=BF), torch.randn(8, 16, dtype=BF)
    with pytest.raises(TypeError, match="got torch.float32"):
        vmap(lambda xi: warpgemm.matmul(xi.float(), w.t().float()))(x)
    with pytest.raises(NotImplementedError, match=r"matmul\(out=...\) does not support torch.func"):
        vmap(lambda xi: warpgemm.matmul(xi, w.t(), out=torch.empty(5, 8, dtype=BF)))(x)
    offs = torch.tensor([5], dtype=torch.int32)
    with pytest.raises(NotImplementedError, match="warpgemm.grouped_mm does not support torch.func"):
        vmap(lambda xi: warpgemm.grouped_mm(xi, w.t().unsqueeze(0).contiguous(), offs))(x)
    with pytest.raises(NotImplementedError, match="warpgemm.group_gemm does not support torch.func"):
        vmap(lambda xi: warpgemm.group_gemm([xi], [w.t()])[0])(x)


def test_forward_mode_ad_propagates_tangents():
    """Dual tensors (torch.autograd.forward_ad): matmul, linear and add carry the tangent as torch's ops do (it was
    silently dropped); grouped_mm refuses a dual input by name and runs plain inputs inside the level."""
    import torch.autograd.forward_ad as fwad

    torch.manual_seed(2)
    x, tx = torch.randn(6, 32, dtype=BF), torch.randn(6, 32, dtype=BF)
    w, tw = torch.randn(16, 32, dtype=BF), torch.randn(16, 32, dtype=BF)
    bias, tb = torch.randn(16), torch.randn(16)
    want = tx.double() @ w.double().t() + x.double() @ tw.double().t() + tb.double()
    with fwad.dual_level():
        y = warpgemm.linear(fwad.make_dual(x, tx), fwad.make_dual(w, tw), fwad.make_dual(bias, tb))
        primal, tangent = fwad.unpack_dual(y)
        assert tangent is not None and tangent.dtype == BF
        assert rel_error(tangent, want) < 1e-2
        assert rel_error(primal, x.double() @ w.double().t() + bias.double()) < 1e-2
        m = fwad.unpack_dual(warpgemm.matmul(fwad.make_dual(x, tx), w.t(), out_dtype=torch.float32)).tangent
        assert m.dtype == torch.float32 and rel_error(m, tx.double() @ w.double().t()) < 1e-5
        s = fwad.unpack_dual(warpgemm.add(fwad.make_dual(x, tx), x, alpha=3)).tangent
        assert torch.equal(s, tx)
        offs = torch.tensor([6], dtype=torch.int32)
        experts = w.t().unsqueeze(0).contiguous()
        with pytest.raises(NotImplementedError, match="grouped_mm does not support forward-mode AD"):
            warpgemm.grouped_mm(fwad.make_dual(x, tx), experts, offs)
        assert rel_error(warpgemm.grouped_mm(x, experts, offs), x.double() @ w.double().t()) < 1e-2


def test_forward_over_reverse_and_plain_calls_inside_a_dual_level():
    """A backward fed a dual gradient computes with torch ops (its tangent propagates, as F.linear's); inside a dual
    level plain tensors still take warpgemm's path (out= included); a registered op handed a dual tensor directly
    refuses by name instead of dropping the tangent."""
    import torch.autograd.forward_ad as fwad

    torch.manual_seed(3)
    x = torch.randn(6, 32, dtype=BF, requires_grad=True)
    w = torch.randn(16, 32, dtype=BF)
    gy, tgy = torch.randn(6, 16, dtype=BF), torch.randn(6, 16, dtype=BF)
    y = warpgemm.linear(x, w)
    with fwad.dual_level():
        gx, = torch.autograd.grad(y, x, fwad.make_dual(gy, tgy))
        primal, tangent = fwad.unpack_dual(gx)
        assert tangent is not None and rel_error(tangent, tgy.double() @ w.double()) < 1e-2
        assert rel_error(primal, gy.double() @ w.double()) < 1e-2
        out = torch.full((6, 16), float("nan"), dtype=BF)
        warpgemm.matmul(x.detach(), w.t(), out=out)
        assert rel_error(out, x.detach().double() @ w.double().t()) < 1e-2
        dual = fwad.make_dual(x.detach().unsqueeze(0), torch.ones(1, 6, 32, dtype=BF))
        with pytest.raises(NotImplementedError, match="torch.ops.warpgemm.bmm does not support forward-mode AD"):
            torch.ops.warpgemm.bmm(dual, w.t().unsqueeze(0), None, None, None)


def test_the_torch_path_checks_bias_as_the_kernels_path_does():
    w, bias = torch.randn(16, 32, dtype=BF), torch.randn(6, 16)
    with pytest.raises(ValueError, match=r"bias must have shape \(16,\)"):
        vmap(lambda xi: warpgemm.linear(xi, w, bias))(torch.randn(2, 6, 32, dtype=BF))
