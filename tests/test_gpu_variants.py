"""GPU suite for the kernel variants behind GemmConfig: ping-pong consumers and split-K (skipped without sm_90).

Every candidate of the sweep (a superset of what the heuristics ship) runs on ragged shapes, in every layout,
with bias and fp32 output; split-K is checked for bitwise repeatability, on two streams at once and inside a
CUDA graph.
"""
import pytest
import torch

import warpgemm
from warpgemm.candidates import CANDIDATES
from warpgemm.config import GemmConfig, check_config
from warpgemm.testing import LAYOUTS, assert_ok, check_matmul, rand, strided_operand

pytestmark = pytest.mark.gpu
BF = torch.bfloat16
DEV = "cuda"
SPLIT = GemmConfig(128, 128, 64, 4, 4, split_k=3)




@pytest.mark.parametrize("cfg", [c for c in CANDIDATES if check_config(c, BF, BF) is None], ids=lambda c: c.name)
def test_candidate_on_ragged_shapes(cfg):
    """K from 1 (split parts left empty) to several ring wraps; M and N off the tile grid; all four layouts."""
    g = torch.Generator(device=DEV).manual_seed(21)
    shapes = [(1, 1, 1), (5, 70, 63), (130, 260, 65), (300, 129, 1000), (1000, 700, 4097), (64, 3000, 2048)]
    for i, (m, n, k) in enumerate(shapes):
        a_col, b_col = LAYOUTS[i % 4]
        a = strided_operand(m, k, col_major=a_col, dtype=BF, device=DEV, generator=g)
        b = strided_operand(k, n, col_major=b_col, dtype=BF, device=DEV, generator=g)
        assert_ok(check_matmul(a, b, config=cfg), f"{cfg.name} M={m} N={n} K={k} layout {a_col, b_col}")
    a, b = rand(3, 200, 300, g=g), rand(3, 300, 190, g=g)
    bias = rand(190, g=g)
    assert_ok(check_matmul(a, b, bias=bias, config=cfg), f"{cfg.name} batched + bias")
    if check_config(cfg, BF, torch.float32) is None:
        assert_ok(check_matmul(a, b, bias=bias, out_dtype=torch.float32, config=cfg), f"{cfg.name} fp32 out")


def test_many_units_per_program():
    """More tiles (and parts) than SMs: both ping-pong consumers and every split part walk several units."""
    g = torch.Generator(device=DEV).manual_seed(22)
    a, w = rand(3000, 1024, g=g), rand(2500, 1024, g=g)
    for cfg in (GemmConfig(128, 128, 64, 5, 4, consumers=2), GemmConfig(64, 256, 64, 4, 4, consumers=2), SPLIT):
        assert_ok(check_matmul(a, w.T, config=cfg), cfg.name)


def test_split_k_is_bitwise_repeatable():
    g = torch.Generator(device=DEV).manual_seed(23)
    a, w = rand(256, 8192, g=g), rand(4096, 8192, g=g)
    for cfg in (SPLIT, GemmConfig(128, 128, 64, 4, 4, split_k=4), GemmConfig(64, 128, 64, 6, 4, split_k=4)):
        first = warpgemm.matmul(a, w.T, config=cfg)
        for _ in range(5):
            assert torch.equal(warpgemm.matmul(a, w.T, config=cfg), first), cfg.name


def test_split_k_on_two_streams_at_once():
    """Each stream has its own scratch: concurrent launches neither corrupt nor change each other's results."""
    g = torch.Generator(device=DEV).manual_seed(24)
    a, w = rand(256, 8192, g=g), rand(4096, 8192, g=g)
    a2 = rand(256, 8192, g=g)
    want1 = warpgemm.matmul(a, w.T, config=SPLIT)
    want2 = warpgemm.matmul(a2, w.T, config=SPLIT)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    torch.cuda.synchronize()
    outs1, outs2 = [], []
    for _ in range(4):
        with torch.cuda.stream(s1):
            outs1.append(warpgemm.matmul(a, w.T, config=SPLIT))
        with torch.cuda.stream(s2):
            outs2.append(warpgemm.matmul(a2, w.T, config=SPLIT))
    torch.cuda.synchronize()
    assert all(torch.equal(o, want1) for o in outs1)
    assert all(torch.equal(o, want2) for o in outs2)


def test_split_k_in_a_cuda_graph():
    g = torch.Generator(device=DEV).manual_seed(25)
    a, w = rand(128, 4096, g=g), rand(4096, 4096, g=g)
    want = warpgemm.matmul(a, w.T, config=SPLIT)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        warpgemm.matmul(a, w.T, config=SPLIT)
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = warpgemm.matmul(a, w.T, config=SPLIT)
    for _ in range(3):
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, want)
    a.copy_(rand(128, 4096, g=g))
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, warpgemm.matmul(a, w.T, config=SPLIT))
