"""warpgemm.add / mul on the portable kernel under the Triton interpreter, and the fallbacks."""
import pytest
import torch

import warpgemm
from warpgemm import _env

pytestmark = pytest.mark.skipif(not _env.INTERPRET, reason="interpreter suite: runs where TRITON_INTERPRET=1")

DTYPES = [torch.float32, torch.bfloat16, torch.float16]
SHAPES = [(), (1, ), (7, ), (4097, ), (33, 65), (2, 3, 5, 7), (128, 96)]


def rnd(shape, dtype, g):
    return torch.randn(shape, generator=g).to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_add_is_bitwise_torch_add(dtype):
    g = torch.Generator().manual_seed(0)
    for shape in SHAPES:
        a, b = rnd(shape, dtype, g), rnd(shape, dtype, g)
        out = torch.full(shape, float("nan"), dtype=dtype)
        warpgemm.add(a, b, out=out)
        assert torch.equal(out, torch.add(a, b)), shape
        assert torch.equal(warpgemm.add(a, b), torch.add(a, b)), shape


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
def test_add_with_alpha_within_one_rounding(dtype):
    # The interpreter's fma rounds twice and CPU torch has its own bf16 path: bitwise equality for alpha != 1 is
    # checked on the GPU, where both sides are one fp32 FMA.
    g = torch.Generator().manual_seed(1)
    a, b = rnd((4097, ), dtype, g), rnd((4097, ), dtype, g)
    for alpha in (0.3, -2.5, 3):
        got, ref = warpgemm.add(a, b, alpha=alpha), torch.add(a, b, alpha=alpha)
        torch.testing.assert_close(got, ref, rtol=2 * torch.finfo(dtype).eps, atol=2 * torch.finfo(dtype).eps)


def test_mul_is_bitwise_torch_mul():
    g = torch.Generator().manual_seed(2)
    for dtype in DTYPES:
        a, b = rnd((1000, ), dtype, g), rnd((1000, ), dtype, g)
        assert torch.equal(warpgemm.mul(a, b), torch.mul(a, b))


def test_fallbacks_are_correct_and_said(capfd):
    g = torch.Generator().manual_seed(3)
    a = rnd((6, 5), torch.float32, g)
    row = rnd((5, ), torch.float32, g)
    half = rnd((6, 5), torch.bfloat16, g)
    warpgemm.set_logging(True)
    try:
        assert torch.equal(warpgemm.add(a, row, alpha=2), torch.add(a, row, alpha=2))  # broadcasting
        assert torch.equal(warpgemm.add(a, half), torch.add(a, half))  # mixed dtypes
        assert torch.equal(warpgemm.add(a.t(), a.t()), torch.add(a.t(), a.t()))  # transposed views
        assert torch.equal(warpgemm.add(a, a), torch.add(a, a))
    finally:
        warpgemm.set_logging(False)
    err = capfd.readouterr().err
    assert err.count("path=torch") == 3 and "path=portable" in err


def test_out_views_and_empty():
    g = torch.Generator().manual_seed(4)
    a, b = rnd((8, 8), torch.float32, g), rnd((8, 8), torch.float32, g)
    big = torch.full((8, 16), float("nan"))
    warpgemm.add(a, b, out=big[:, 4:12])
    assert torch.equal(big[:, 4:12], a + b) and torch.isnan(big[:, :4]).all() and torch.isnan(big[:, 12:]).all()
    e = torch.empty(0, 3)
    assert warpgemm.add(e, e).shape == (0, 3)


def test_autograd_and_compile():
    g = torch.Generator().manual_seed(5)
    a = rnd((4, 33), torch.float32, g).requires_grad_()
    b = rnd((4, 33), torch.float32, g).requires_grad_()
    (warpgemm.add(a, b, alpha=3.0) * 2).sum().backward()
    assert torch.equal(a.grad, torch.full_like(a, 2.0)) and torch.equal(b.grad, torch.full_like(b, 6.0))

    @torch.compile(fullgraph=True, backend="aot_eager")
    def f(x, y):
        return warpgemm.mul(warpgemm.add(x, y), y).sum()

    x, y = a.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    f(x, y).backward()
    assert torch.allclose(x.grad, y.detach()) and torch.allclose(y.grad, x.detach() + 2 * y.detach())
    torch.library.opcheck(torch.ops.warpgemm.binary, (a.detach(), b.detach(), "add", 0.5))


def test_argument_errors():
    with pytest.raises(TypeError, match="b must be a torch.Tensor, got str"):
        warpgemm.add(torch.ones(3), "1")
    with pytest.raises(ValueError, match=r"b must be on the same device as a \(cpu\), got meta"):
        warpgemm.add(torch.ones(3), torch.ones(3, device="meta"))


def test_in_place_and_overlapping_out():
    g = torch.Generator().manual_seed(6)
    a, b = rnd((4096, ), torch.float32, g), rnd((4096, ), torch.float32, g)
    want = a + b
    warpgemm.add(a, b, out=a)  # in place: out is a
    assert torch.equal(a, want)
    buf = rnd((4097, ), torch.float32, g)
    x, y = buf[:4096], buf[1:]
    with pytest.raises(RuntimeError):  # partial overlap: torch decides, and refuses
        warpgemm.add(x, b, out=y)


def test_python_numbers_and_meta_tensors_as_torch_takes_them():
    """torch.add(x, 2.0) and torch.mul(3, x): a Python number on either side is computed as torch computes it; meta
    tensors give meta results (shape inference) without a launch."""
    x = torch.randn(3, 4, dtype=torch.bfloat16)
    assert torch.equal(warpgemm.add(x, 2.0), torch.add(x, 2.0))
    assert torch.equal(warpgemm.add(x, 2, alpha=3), torch.add(x, 2, alpha=3))
    assert torch.equal(warpgemm.mul(3, x), torch.mul(3, x))
    np = pytest.importorskip("numpy")
    assert torch.equal(warpgemm.add(x, np.float32(2)), torch.add(x, np.float32(2)))
    out = torch.full((3, 4), float("nan"), dtype=torch.bfloat16)
    assert warpgemm.add(x, 1.5, out=out) is out and torch.equal(out, torch.add(x, 1.5))
    with pytest.raises(TypeError, match="b must be a torch.Tensor, got list"):
        warpgemm.add(x, [1.0])
    m = torch.empty(4, 8, dtype=torch.bfloat16, device="meta")
    got = warpgemm.add(m, m)
    assert got.device.type == "meta" and got.shape == (4, 8) and got.dtype == torch.bfloat16
    given = torch.empty(4, 8, dtype=torch.bfloat16, device="meta")
    assert warpgemm.mul(m, m, out=given) is given
