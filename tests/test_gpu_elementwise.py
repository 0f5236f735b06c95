"""GPU suite for the warp-specialized elementwise kernel: bitwise equality with torch.add (both compute one
fp32 FMA per element and round once), outputs NaN-filled before every call."""
import pytest
import torch

import warpgemm
from warpgemm.bench.elementwise_bench import SWEEP_CONFIGS

pytestmark = pytest.mark.gpu
DTYPES = [torch.float32, torch.bfloat16, torch.float16]
SHAPES = [(1, ), (7, ), (4097, ), (33, 65), (1000, 1000), (2, 3, 5, 8), (4096, 4096), (3, 1000, 1024), (8191, 132)]


def rnd(shape, dtype, g):
    return torch.randn(shape, device="cuda", generator=g).to(dtype)


def _check(a, b, alpha=1, **kw):
    out = torch.full(a.shape, float("nan"), device="cuda", dtype=a.dtype)
    warpgemm.add(a, b, alpha=alpha, out=out, **kw)
    ref = torch.add(a, b, alpha=alpha)
    assert torch.equal(out, ref), (tuple(a.shape), a.dtype, alpha, (out.float() - ref.float()).abs().max().item())


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("alpha", [1, 0.3, -2.5])
def test_add_bitwise(dtype, alpha):
    g = torch.Generator(device="cuda").manual_seed(0)
    for shape in SHAPES:
        _check(rnd(shape, dtype, g), rnd(shape, dtype, g), alpha)


def test_row_sliced_views_stream_in_place():
    g = torch.Generator(device="cuda").manual_seed(1)
    big_a, big_b = rnd((1000, 1024), torch.float32, g), rnd((1000, 1024), torch.float32, g)
    out_big = torch.full((1000, 1024), float("nan"), device="cuda")
    a, b, out = big_a[:, :1000], big_b[:, 8:1008], out_big[:, 16:1016]
    warpgemm.add(a, b, out=out)
    assert torch.equal(out, a + b)
    assert torch.isnan(out_big[:, :16]).all() and torch.isnan(out_big[:, 1016:]).all()


@pytest.mark.parametrize("cfg", SWEEP_CONFIGS, ids=lambda c: c.name)
def test_every_sweep_config(cfg):
    g = torch.Generator(device="cuda").manual_seed(2)
    for shape in [(1, 128), (33, 200), (4096, 4096), (1000, 1000), (5, 3000, 128)]:
        _check(rnd(shape, torch.float32, g), rnd(shape, torch.float32, g), 0.3, config=cfg)


def test_paths_are_said(capfd):
    g = torch.Generator(device="cuda").manual_seed(3)
    a = rnd((4096, 4096), torch.float32, g)
    odd = rnd((1001, 1001), torch.float32, g)
    warpgemm.set_logging(True)
    try:
        warpgemm.add(a, a)
        warpgemm.add(odd, odd)
        warpgemm.add(a, a[0])
        warpgemm.add(a.t(), a.t())
    finally:
        warpgemm.set_logging(False)
    err = capfd.readouterr().err
    assert "path=hopper" in err and "path=portable" in err and err.count("path=torch") == 2
    assert torch.equal(warpgemm.add(odd, odd), odd + odd)


def test_mul_and_autograd():
    g = torch.Generator(device="cuda").manual_seed(4)
    a, b = rnd((512, 512), torch.bfloat16, g), rnd((512, 512), torch.bfloat16, g)
    assert torch.equal(warpgemm.mul(a, b), a * b)
    x, y = a.float().requires_grad_(), b.float().requires_grad_()
    warpgemm.add(x, y, alpha=2).sum().backward()
    assert torch.equal(y.grad, torch.full_like(y, 2.0))


def test_cuda_graph_capture():
    g = torch.Generator(device="cuda").manual_seed(5)
    a, b = rnd((4096, 4096), torch.float32, g), rnd((4096, 4096), torch.float32, g)
    out = torch.empty_like(a)
    warpgemm.add(a, b, out=out)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        warpgemm.add(a, b, out=out)
    out.fill_(float("nan"))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, a + b)
