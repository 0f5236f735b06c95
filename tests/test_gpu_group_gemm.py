"""GPU suite for group_gemm's Hopper TMA kernel (skipped without sm_90): mixed ragged shapes, both B layouts,
empty and single-row problems, K = 0, more problems than fit in registers, every tile, CUDA-graph replay, and the
fallback for operands TMA cannot read. Outputs come from a NaN-filled allocation, so an unwritten element fails."""
import pytest
import torch

import warpgemm
from warpgemm.kernels.hopper import group_gemm_tma
from warpgemm.ops import group_gemm as op

pytestmark = pytest.mark.gpu
BF = torch.bfloat16
DEV = "cuda"


@pytest.fixture(autouse=True)
def nan_outputs(monkeypatch):
    monkeypatch.setattr(op, "_allocate", lambda n, dtype, device: torch.full((n, ), float("nan"), dtype=dtype,
                                                                            device=device))


@pytest.fixture
def tma_launches(monkeypatch):
    calls = []
    real = group_gemm_tma.launch_group_gemm_tma

    def spy(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(group_gemm_tma, "launch_group_gemm_tma", spy)
    return calls


def check(la, lb, outs):
    for i, (a, b, c) in enumerate(zip(la, lb, outs)):
        want = a.double() @ b.double()
        assert c.shape == want.shape and c.is_contiguous(), i
        assert not c.isnan().any(), i
        if want.numel():
            err = ((c.double() - want).norm() / want.norm().clamp_min(1e-30)).item()
            assert err < 1e-2, (i, err)


# (M, K, N): ragged M and N, K a multiple of 8 (16-byte pitches), one row, one column, empty problems, K = 0.
SHAPES = [(1, 64, 128), (129, 296, 80), (0, 64, 64), (512, 1024, 256), (33, 16, 0), (1000, 4104, 72),
          (7, 0, 24), (300, 8, 1), (64, 2048, 2048), (200, 512, 8)]


def make(shapes, b_kmajor, seed=0):
    g = torch.Generator(device=DEV).manual_seed(seed)
    la = [torch.randn(m, k, device=DEV, generator=g).to(BF) for m, k, n in shapes]
    if b_kmajor:  # weights (N, K), used transposed as in x @ w.t()
        lb = [torch.randn(n, k, device=DEV, generator=g).to(BF).t() for m, k, n in shapes]
    else:
        lb = [torch.randn(k, n, device=DEV, generator=g).to(BF) for m, k, n in shapes]
    return la, lb


@pytest.mark.parametrize("tile", [None, "small", "medium", "large"])
@pytest.mark.parametrize("b_kmajor", [False, True])
def test_tma_kernel_mixed_shapes(tile, b_kmajor, monkeypatch, tma_launches):
    monkeypatch.setattr(op, "FORCE_TILE", tile)
    # A single-column B (N = 1) is only readable as a transposed row: with row-major Bs it takes the fallback.
    shapes = SHAPES if b_kmajor else [s for s in SHAPES if s[2] % 8 == 0]
    la, lb = make(shapes, b_kmajor)
    outs = warpgemm.group_gemm(la, lb)
    assert len(tma_launches) == 1 and tma_launches[0][6] == b_kmajor
    check(la, lb, outs)


def test_odd_n_with_weight_layout_uses_tma(tma_launches):
    la, lb = make([(40, 64, 65), (3, 128, 129)], b_kmajor=True)
    check(la, lb, warpgemm.group_gemm(la, lb))
    assert len(tma_launches) == 1 and tma_launches[0][7] is False  # outputs not 16-byte pitched: no store hint


def test_more_problems_than_registers_hold(tma_launches):
    g = torch.Generator().manual_seed(3)
    shapes = [(int(torch.randint(0, 40, (1, ), generator=g)), 64, 64) for _ in range(group_gemm_tma.MAX_RESIDENT + 300)]
    la, lb = make(shapes, b_kmajor=False, seed=1)
    outs = warpgemm.group_gemm(la, lb)
    assert len(tma_launches) == 1
    check(la, lb, outs)


def test_unreadable_operands_fall_back(tma_launches):
    la, lb = make([(40, 64, 72), (16, 128, 24)], b_kmajor=False)
    la2 = [la[0], torch.randn(128, 16, device=DEV).to(BF).t()]  # A column-major: not TMA-readable here
    check(la2, lb, warpgemm.group_gemm(la2, lb))
    lb2 = [lb[0], torch.randn(24, 128, device=DEV).to(BF).t()]  # B layouts disagree
    check(la, lb2, warpgemm.group_gemm(la, lb2))
    la3 = [la[0], torch.randn(16, 129, device=DEV).to(BF)[:, 1:]]  # misaligned base
    check(la3, lb, warpgemm.group_gemm(la3, lb))
    assert not tma_launches


def test_fp16_and_repeat_is_bitwise_equal():
    la, lb = make(SHAPES[:6], b_kmajor=True)
    la, lb = [a.half() for a in la], [b.half() for b in lb]
    first = [c.clone() for c in warpgemm.group_gemm(la, lb)]
    check(la, lb, first)
    for _ in range(3):
        assert all(torch.equal(x, y) for x, y in zip(first, warpgemm.group_gemm(la, lb)))


def test_cuda_graph_replay_reads_new_inputs():
    la, lb = make([(100, 256, 128), (7, 64, 64), (256, 512, 512)], b_kmajor=False)
    warpgemm.group_gemm(la, lb)  # compile outside the capture
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.stream(stream), torch.cuda.graph(graph, stream=stream):
        outs = warpgemm.group_gemm(la, lb)
    torch.cuda.current_stream().wait_stream(stream)
    for seed in range(2):
        g = torch.Generator(device=DEV).manual_seed(10 + seed)
        for x in la + lb:
            x.copy_(torch.randn(x.shape, device=DEV, generator=g).to(BF))
        graph.replay()
        torch.cuda.synchronize()
        check(la, lb, outs)


def test_two_streams_at_once():
    la, lb = make(SHAPES, b_kmajor=True, seed=5)
    want = [c.clone() for c in warpgemm.group_gemm(la, lb)]
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    torch.cuda.synchronize()
    res = []
    for s in (s1, s2, s1, s2):
        with torch.cuda.stream(s):
            res.append(warpgemm.group_gemm(la, lb))
    torch.cuda.synchronize()
    for outs in res:
        assert all(torch.equal(x, y) for x, y in zip(want, outs))
