"""GPU suite for static weights (warpgemm.mark_static): a swap-AB launch that loads its weight before the wait on
the prior grid must give bit for bit what the same launch gives without the promise, and must still read x only
after the kernel that writes x has finished (skipped without sm_90)."""
import pytest
import torch

import warpgemm
from warpgemm.config import GemmConfig, check_config
from warpgemm.heuristics import DECODE, DECODE_HALF, DECODE_SHORT_K, choose_config
from warpgemm.testing import rand, strided_operand

pytestmark = pytest.mark.gpu
BF = torch.bfloat16
DEV = "cuda"
VARIANTS = (*DECODE.values(), *DECODE_HALF.values(), DECODE_SHORT_K, GemmConfig(64, 16, 256, 5, 4, stream_k=True,
                                                                                swap_ab=True),
            GemmConfig(128, 16, 128, 6, 4, split_k=4, swap_ab=True))


def _static_copy(w: torch.Tensor) -> torch.Tensor:
    ws = warpgemm.mark_static(w.clone())
    torch.cuda.synchronize()  # the promise: a marked tensor's last writes are done before a product reads it
    return ws


def _explain_static(x, w, cfg=None) -> bool:
    return "is a static weight" in warpgemm.explain(x, w.T, config=cfg)


@pytest.mark.parametrize("cfg", dict.fromkeys(VARIANTS), ids=lambda c: c.name)
def test_static_weight_gives_the_same_bits(cfg):
    """Shapes whose K is shorter than the ring (fewer early steps than slots), K = 1, N off the tile grid, strided
    x, bias, fp32 out, batched x against one weight: the static launch equals the plain one bit for bit."""
    g = torch.Generator(device=DEV).manual_seed(51)
    cases = [(4, 4096, 4096), (1, 1, 1), (3, 70, 63), (16, 1000, 100), (17, 4103, 1000), (32, 300, 8200),
             (64, 129, 4097), (5, 24000, 64)]
    for i, (m, n, k) in enumerate(cases):
        x = strided_operand(m, k, col_major=i % 3 == 2, dtype=BF, device=DEV, generator=g)
        w = rand(n, k, g=g)
        ws = _static_copy(w)
        # A weight TMA cannot read in place (rows off 16 bytes) runs on a copy this call makes: not static.
        text = warpgemm.explain(x, ws.T, config=cfg)
        assert ("is a static weight" in text) == ("B copied" not in text), f"{cfg.name} M={m} N={n} K={k}: {text}"
        want = warpgemm.linear(x, w, config=cfg)
        got = warpgemm.linear(x, ws, config=cfg)
        assert torch.equal(got, want), f"{cfg.name} M={m} N={n} K={k}"
        ref = x.float() @ w.float().T
        assert (got.float() - ref).norm() <= 1e-2 * ref.norm() + 1e-3, f"{cfg.name} M={m} N={n} K={k} vs fp32"
    x, w, bias = rand(7, 3000, g=g), rand(1500, 3000, g=g), rand(1500, g=g)
    ws = _static_copy(w)
    assert torch.equal(warpgemm.matmul(x, ws.T, bias=bias, config=cfg), warpgemm.matmul(x, w.T, bias=bias, config=cfg))
    if check_config(cfg, BF, torch.float32) is None:
        assert torch.equal(warpgemm.matmul(x, ws.T, out_dtype=torch.float32, config=cfg),
                           warpgemm.matmul(x, w.T, out_dtype=torch.float32, config=cfg))
    x3 = rand(3, 9, 3000, g=g)
    assert torch.equal(warpgemm.matmul(x3, ws.T, config=cfg), warpgemm.matmul(x3, w.T, config=cfg))


@pytest.mark.parametrize("m", [1, 2])
def test_one_and_two_rows_skip_the_gemv(m):
    """Batch-1 and -2 decode against a static weight run the swap-AB kernel (loading ahead) instead of a GEMV where
    its tiles fit one wave: results within the usual error of the GEMV's, bitwise repeatable."""
    g = torch.Generator(device=DEV).manual_seed(54)
    for n, k in ((4096, 4096), (14336, 4096), (1000, 4000), (8, 1032)):
        x, w = rand(m, k, g=g), rand(n, k, g=g)
        ws = _static_copy(w)
        # The GEMV stays where the tiles make more than a wave (14336 rows: 448 32-row tiles) or would run in one
        # partition, with no producer to load ahead (8 rows).
        gemv = n in (14336, 8)
        assert _explain_static(x, ws) != gemv and ("path=gemv" in warpgemm.explain(x, ws.T)) == gemv
        got = warpgemm.linear(x, ws)
        assert all(torch.equal(warpgemm.linear(x, ws), got) for _ in range(3)), (n, k)
        ref = x.float() @ w.float().T
        assert (got.float() - ref).norm() <= 1e-2 * ref.norm(), (n, k)
        assert (warpgemm.linear(x, w).float() - ref).norm() <= 1e-2 * ref.norm(), (n, k)


def _chain(xs0, weights, steps, config=None):
    """h <- linear(h, w_i) for i in steps, each output the next call's x (so every launch depends on the one before
    it), with a warpgemm.add between some: returns every intermediate."""
    h, outs = xs0, []
    for i in steps:
        h = warpgemm.linear(h, weights[i % len(weights)], config=config)
        if i % 3 == 2:
            h = warpgemm.add(h, h, alpha=-0.5)  # h * 0.5: keeps the chain's scale, and a non-GEMM predecessor
        outs.append(h)
    return outs


@pytest.mark.parametrize("m", [1, 2, 4, 16, 32, 64])
def test_each_launch_reads_x_after_the_kernel_that_writes_it(m):
    """A chain of 24 products where each call's x is the previous call's output, eager and in one CUDA graph:
    static weights give the same bits as plain ones, so no launch read x before its predecessor had written it."""
    g = torch.Generator(device=DEV).manual_seed(52)
    # Square weights scaled to keep the activations near unit size; 4096^2 runs the swap-AB tiles at these rows.
    plain = [rand(4096, 4096, g=g) * (1 / 64) for _ in range(4)]
    static = [_static_copy(w) for w in plain]
    x0 = rand(m, 4096, g=g)
    assert _explain_static(x0, static[0])
    # One or two rows run a GEMV on plain weights and swap-AB tiles on static ones: the plain chain is forced onto
    # the tile the static one runs, so that both sum in the same order.
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    cfg = choose_config(1, m, 4096, 4096, BF, BF, sms)[0] if m <= 2 else None
    want = _chain(x0, plain, range(24), cfg)
    got = _chain(x0, static, range(24))
    for i, (a, b) in enumerate(zip(got, want)):
        assert torch.equal(a, b), f"eager step {i}"
    x = x0.clone()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        _chain(x, static, range(24))  # warm-up: compile and record outside the capture
    torch.cuda.current_stream().wait_stream(s)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = _chain(x, static, range(24))
    for _ in range(3):
        x.copy_(rand(m, 4096, g=g))
        want = _chain(x, plain, range(24), cfg)
        graph.replay()
        torch.cuda.synchronize()
        for i, (a, b) in enumerate(zip(captured, want)):
            assert torch.equal(a, b), f"graph step {i}"


def test_two_streams_share_static_weights():
    g = torch.Generator(device=DEV).manual_seed(53)
    plain = [rand(4096, 4096, g=g) * (1 / 64) for _ in range(3)]
    static = [_static_copy(w) for w in plain]
    x1, x2 = rand(4, 4096, g=g), rand(64, 4096, g=g)
    want1, want2 = _chain(x1, plain, range(9)), _chain(x2, plain, range(9))
    s1, s2 = torch.cuda.Stream(), torch.cuda.Stream()
    for s in (s1, s2):
        s.wait_stream(torch.cuda.current_stream())
    outs = []
    for _ in range(4):
        with torch.cuda.stream(s1):
            o1 = _chain(x1, static, range(9))
        with torch.cuda.stream(s2):
            o2 = _chain(x2, static, range(9))
        outs.append((o1, o2))
    torch.cuda.synchronize()
    for o1, o2 in outs:
        assert all(torch.equal(a, b) for a, b in zip(o1, want1))
        assert all(torch.equal(a, b) for a, b in zip(o2, want2))


def test_a_static_weight_updated_then_synchronized_is_read_anew():
    """The documented update path: write a marked weight in place, synchronize, read it: the new values."""
    g = torch.Generator(device=DEV).manual_seed(55)
    x = rand(16, 4096, g=g)
    w = _static_copy(rand(4096, 4096, g=g))
    first = warpgemm.linear(x, w)
    for _ in range(3):
        new = rand(4096, 4096, g=g)
        w.copy_(new)
        torch.cuda.synchronize()
        got = warpgemm.linear(x, w)
        assert torch.equal(got, warpgemm.linear(x, new)) and not torch.equal(got, first)
    with pytest.raises(ValueError, match="static weight"):
        warpgemm.matmul(x, new.T, out=w[:16])
