"""GPU suite for the decode path: swap-AB, stream-K and split-K on few-row inputs (skipped without sm_90).

Correctness on ragged K (not a multiple of parts x block), K shorter than one block per program, M = 1, bias and
fp32 output; bitwise repeatability, two concurrent streams, and many calls in one CUDA graph.
"""
import pytest
import torch

import warpgemm
from warpgemm.config import GemmConfig, check_config
from warpgemm.heuristics import DECODE, DECODE_HALF, DECODE_SHORT_K, DECODE_WIDE, choose_config
from warpgemm.testing import assert_ok, check_matmul, rand, strided_operand

pytestmark = pytest.mark.gpu
BF = torch.bfloat16
DEV = "cuda"
STREAM_K = GemmConfig(64, 16, 256, 5, 4, stream_k=True, swap_ab=True)
SWAP_SPLIT = GemmConfig(128, 16, 128, 6, 4, split_k=4, swap_ab=True)
SWAP_PLAIN = GemmConfig(128, 32, 64, 8, 4, swap_ab=True)
DECODE_VARIANTS = (STREAM_K, DECODE[16], DECODE[32], DECODE[64], DECODE_WIDE, SWAP_SPLIT, SWAP_PLAIN,
                   GemmConfig(128, 128, 64, 6, 4, stream_k=True), GemmConfig(64, 128, 64, 8, 4, stream_k=True))




@pytest.mark.parametrize("cfg", DECODE_VARIANTS, ids=lambda c: c.name)
def test_decode_shapes(cfg):
    """M = 1..65 against weights whose N and K are off every grid; K = 1 and K below one block per program."""
    g = torch.Generator(device=DEV).manual_seed(31)
    shapes = [(1, 4096, 4096), (1, 1, 1), (3, 70, 63), (16, 1000, 100), (17, 4103, 1000), (33, 300, 8200),
              (64, 129, 4097), (65, 2000, 520), (5, 24000, 64)]
    for i, (m, n, k) in enumerate(shapes):
        a = strided_operand(m, k, col_major=i % 3 == 2, dtype=BF, device=DEV, generator=g)
        w = rand(n, k, g=g)
        assert_ok(check_matmul(a, w.T, config=cfg), f"{cfg.name} M={m} N={n} K={k}")
        b = strided_operand(k, n, col_major=False, dtype=BF, device=DEV, generator=g)
        assert_ok(check_matmul(a, b, config=cfg), f"{cfg.name} M={m} N={n} K={k} B row-major")
    a, w, bias = rand(7, 3000, g=g), rand(1500, 3000, g=g), rand(1500, g=g)
    assert_ok(check_matmul(a, w.T, bias=bias, config=cfg), f"{cfg.name} bias")
    if check_config(cfg, BF, torch.float32) is None:
        assert_ok(check_matmul(a, w.T, bias=bias, out_dtype=torch.float32, config=cfg), f"{cfg.name} fp32 out")
    a3, w3 = rand(3, 9, 700, g=g), rand(3, 700, 260, g=g)
    assert_ok(check_matmul(a3, w3, config=cfg), f"{cfg.name} batched")


HALF_TILES = (DECODE_SHORT_K, *DECODE_HALF.values())  # the shipped 32-row tiles, 16 / 32 / 64 rows of x


@pytest.mark.parametrize("cfg", HALF_TILES, ids=lambda c: c.name)
def test_32_row_swap_tiles(cfg):
    """32 weight rows per swap-AB tile (64 wgmma rows, the upper 32 zero): N off the 32-row grid, so the last
    tile's kept rows run past N and its padding rows past the tile; ragged K, strided x, bias, fp32 out, batched
    weights, NaN-filled outputs (check_matmul), bitwise repeats; grouped_mm with the same tile; a weight that is
    not K-contiguous runs on a K-major copy."""
    g = torch.Generator(device=DEV).manual_seed(38)
    for i, (m, n, k) in enumerate([(1, 4096, 4096), (1, 1, 1), (3, 70, 63), (16, 1000, 100), (17, 4103, 1000),
                                   (32, 300, 8200), (64, 129, 4097), (5, 24000, 64), (4, 31, 4096), (4, 33, 520)]):
        a = strided_operand(m, k, col_major=i % 3 == 2, dtype=BF, device=DEV, generator=g)
        assert_ok(check_matmul(a, rand(n, k, g=g).T, config=cfg), f"{cfg.name} M={m} N={n} K={k}")
    a, w, bias = rand(7, 3000, g=g), rand(1500, 3000, g=g), rand(1500, g=g)
    assert_ok(check_matmul(a, w.T, bias=bias, config=cfg), f"{cfg.name} bias")
    assert_ok(check_matmul(a, w.T, bias=bias, out_dtype=torch.float32, config=cfg), f"{cfg.name} fp32 out")
    a3, w3 = rand(3, 9, 700, g=g), rand(3, 260, 700, g=g)
    assert_ok(check_matmul(a3, w3.transpose(1, 2), config=cfg), f"{cfg.name} batched")
    first = warpgemm.linear(a, w, config=cfg)
    assert all(torch.equal(warpgemm.linear(a, w, config=cfg), first) for _ in range(5))
    # An N-major weight cannot be read in place by this tile: the forced config runs on a K-major copy.
    assert_ok(check_matmul(a, rand(3000, 1500, g=g), config=cfg), f"{cfg.name} N-major weight")
    # grouped_mm: 8 experts, a few rows each (one empty), weights given as (G, N, K).transpose
    counts = [5, 0, 17, 1, 9, 16, 3, 12]
    offs = torch.tensor(counts, device=DEV).cumsum(0).to(torch.int32)
    x, experts = rand(sum(counts), 520, g=g), rand(8, 300, 520, g=g)
    got = warpgemm.grouped_mm(x, experts.transpose(1, 2), offs, config=cfg)
    start = 0
    for e, c in enumerate(counts):
        if c:
            want = x[start:start + c].float() @ experts[e].float().T
            assert (got[start:start + c].float() - want).abs().max() <= 2e-2 * max(1.0, want.abs().max().item())
        start += c


def test_heuristic_runs_decode_shapes():
    g = torch.Generator(device=DEV).manual_seed(32)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for m in (1, 4, 16, 32, 64):
        cfg, _ = choose_config(1, m, 4096, 4096, BF, BF, sms)
        assert cfg.swap_ab, cfg.name
        x, w = rand(m, 4096, g=g), rand(4096, 4096, g=g)
        assert_ok(check_matmul(x, w.T), f"heuristic M={m}")


@pytest.mark.parametrize("cfg", (STREAM_K, SWAP_SPLIT, GemmConfig(128, 128, 64, 6, 4, stream_k=True)),
                         ids=lambda c: c.name)
def test_bitwise_repeatable(cfg):
    g = torch.Generator(device=DEV).manual_seed(33)
    x, w = rand(16, 8192, g=g), rand(4096, 8192, g=g)
    first = warpgemm.linear(x, w, config=cfg)
    for _ in range(10):
        assert torch.equal(warpgemm.linear(x, w, config=cfg), first), cfg.name


@pytest.mark.parametrize("cfg", (STREAM_K, SWAP_SPLIT), ids=lambda c: c.name)
def test_two_streams_at_once(cfg):
    g = torch.Generator(device=DEV).manual_seed(34)
    w = rand(14336, 4096, g=g)
    x1, x2 = rand(4, 4096, g=g), rand(32, 4096, g=g)
    want1, want2 = warpgemm.linear(x1, w, config=cfg), warpgemm.linear(x2, w, config=cfg)
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    torch.cuda.synchronize()
    outs1, outs2 = [], []
    for _ in range(6):
        with torch.cuda.stream(s1):
            outs1.append(warpgemm.linear(x1, w, config=cfg))
        with torch.cuda.stream(s2):
            outs2.append(warpgemm.linear(x2, w, config=cfg))
    torch.cuda.synchronize()
    assert all(torch.equal(o, want1) for o in outs1)
    assert all(torch.equal(o, want2) for o in outs2)


def test_many_calls_in_one_cuda_graph():
    """Calls of one capture share scratch (one memset per graph); replays match eager results bit for bit, and
    a second graph captured afterwards gets its own scratch."""
    g = torch.Generator(device=DEV).manual_seed(35)
    ws = [rand(4096, 4096, g=g) for _ in range(3)]
    x = rand(8, 4096, g=g)
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for w in ws:
            warpgemm.linear(x, w)
    torch.cuda.current_stream().wait_stream(s)
    graphs, outs = [], []
    for _ in range(2):
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            outs.append([warpgemm.linear(x, w) for w in ws] + [warpgemm.linear(x, ws[0], config=SWAP_SPLIT)])
        graphs.append(graph)
    for _ in range(3):
        x.copy_(rand(8, 4096, g=g))
        want = [warpgemm.linear(x, w) for w in ws] + [warpgemm.linear(x, ws[0], config=SWAP_SPLIT)]
        for graph, out in zip(graphs, outs):
            graph.replay()
            torch.cuda.synchronize()
            for o, e in zip(out, want):
                assert torch.equal(o, e)


def test_repeated_linear_calls_follow_new_tensors():
    """The eager fast path (recorded recipe + prepared launch) must read each call's own tensors."""
    g = torch.Generator(device=DEV).manual_seed(36)
    for m, bias in ((1, False), (16, True), (200, True)):
        ws = [rand(1000, 512, g=g) for _ in range(3)]
        xs = [rand(m, 512, g=g) for _ in range(3)]
        b = rand(1000, g=g) if bias else None
        for _ in range(2):
            for x, w in zip(xs, ws):
                got = warpgemm.linear(x, w, b)
                want = torch.nn.functional.linear(x.float(), w.float(), None if b is None else b.float())
                assert (got.float() - want).norm() / want.norm() < 1e-2


def test_heuristic_runs_33_to_64_rows_against_wide_weights():
    """The tiles the heuristics pick for 33-64 rows against a wide weight (plain 64x128 up to 47 rows, swap-AB 64x64
    above): bias, fp32 out, NaN-filled out."""
    g = torch.Generator(device=DEV).manual_seed(33)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    for m in (33, 47, 48, 64):
        n = 128 * sms + 70  # past one wave of 128-row panels, ragged
        cfg, _ = choose_config(1, m, n, 1000, BF, BF, sms)
        assert cfg == (DECODE_WIDE if m <= 47 else DECODE[64]), cfg.name
        x, w, bias = rand(m, 1000, g=g), rand(n, 1000, g=g), rand(n, g=g)
        assert_ok(check_matmul(x, w.T, bias=bias), f"heuristic M={m} N={n}")
        assert_ok(check_matmul(x, w.T, out_dtype=torch.float32), f"heuristic M={m} N={n} fp32 out")


@pytest.mark.parametrize("m", [1, 2])
def test_few_rows_run_the_gemv(m):
    """One or two rows of x against an nn.Linear weight go to a CUDA-core GEMV (plain Triton for one, Gluon for
    two): ragged and tiny N and K, strided x, a 1-D x, bias, fp16, fp32 out, NaN-filled outputs; bitwise
    repeatable and right after CUDA-graph replays."""
    from warpgemm.ops import gemm_impl

    g = torch.Generator(device=DEV).manual_seed(37)
    w = rand(4096, 4096, g=g)
    plan = gemm_impl.plan_hopper(rand(1, m, 4096, g=g), w.t().unsqueeze(0), torch.empty(1, m, 4096, device=DEV,
                                                                                        dtype=BF), None, None)
    assert isinstance(plan, gemm_impl.GemvPlan)
    for i, (n, k) in enumerate([(4096, 4096), (1, 1), (70, 63), (24000, 64), (4103, 1000), (4097, 4101), (3, 2048)]):
        x = strided_operand(m, k, col_major=i % 2 == 1, dtype=BF, device=DEV, generator=g)
        w, bias = rand(n, k, g=g), rand(n, g=g)
        assert_ok(check_matmul(x, w.T), f"gemv N={n} K={k}")
        assert_ok(check_matmul(x, w.T, bias=bias, out_dtype=torch.float32), f"gemv N={n} K={k} bias fp32 out")
        if m == 1:
            got = warpgemm.matmul(x[0], w.T)  # a 1-D x: torch.matmul's vector-matrix product
            want = x[0].double() @ w.double().T
            assert got.shape == (n, ) and (got.double() - want).norm() / want.norm() < 1e-2, f"gemv N={n} K={k} 1-D"
        xh, wh = x.half(), w.half()
        assert_ok(check_matmul(xh, wh.T, bias=bias.half()), f"gemv N={n} K={k} fp16")
        wide = rand(m, k + 24, g=g)[:, 3:k + 3]  # rows of x further apart than K, not 16-byte aligned
        assert_ok(check_matmul(wide, w.T), f"gemv N={n} K={k} x rows {k + 24} apart")
    x, w = rand(m, 8192, g=g), rand(8192, 8192, g=g)
    first = warpgemm.linear(x, w)
    for _ in range(5):
        assert torch.equal(warpgemm.linear(x, w), first)
    graph = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        warpgemm.linear(x, w)
    torch.cuda.current_stream().wait_stream(s)
    with torch.cuda.graph(graph):
        out = warpgemm.linear(x, w)
    for _ in range(2):
        x.copy_(rand(m, 8192, g=g))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, warpgemm.linear(x, w))
