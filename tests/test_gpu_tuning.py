"""The opt-in tuner on the GPU: a kept config is what later calls run (eager, out=, explain), results stay right, and
nothing is tuned while a CUDA graph is captured."""
import json
import os

import pytest
import torch

import warpgemm
from warpgemm import tuning
from warpgemm.config import GemmConfig
from warpgemm.ops.gemm_impl import forget_plans
from warpgemm.testing import rel_error

pytestmark = pytest.mark.gpu

PICKED = GemmConfig(64, 128, 64, stages=8, consumer_warps=4)
OTHER = GemmConfig(128, 128, 64, stages=6, consumer_warps=4)


@pytest.fixture
def cache(tuning_cache):
    return tuning_cache


def operands(gen, M, N, K):
    x = torch.randn(M, K, device="cuda", generator=gen).to(torch.bfloat16)
    w = torch.randn(N, K, device="cuda", generator=gen).to(torch.bfloat16)
    return x, w, (x.double() @ w.double().T)


def test_a_kept_config_is_what_later_calls_run(cache, gen):
    x, w, ref = operands(gen, 300, 520, 200)

    def timer(fn, cfg):
        fn()
        return {None: 1.0, PICKED: 0.5, OTHER: 0.9}[cfg]

    a3, b3 = x.unsqueeze(0), w.t().unsqueeze(0)
    c3 = torch.empty(1, 300, 520, device="cuda", dtype=torch.bfloat16)
    res = tuning.tune_problem(a3, b3, c3, None, candidates=[PICKED, OTHER], timer=timer)
    # Errors are in output ulps of the product's largest value: a correct bf16 product is within half of one.
    assert res.config == PICKED and all(ulps is not None and ulps <= 1 for _, _, ulps, _ in res.rows)
    assert "tuned on this GPU" in warpgemm.explain(x, w.t()) and PICKED.name in warpgemm.explain(x, w.t())
    for _ in range(3):  # planned, then the eager recipe
        assert rel_error(warpgemm.linear(x, w), ref) < 1e-2
    out = torch.full((300, 520), float("nan"), device="cuda", dtype=torch.bfloat16)
    warpgemm.matmul(x, w.t(), out=out)
    assert rel_error(out, ref) < 1e-2
    # Another row count in the same bucket takes the entry too; one outside it does not.
    assert PICKED.name in warpgemm.explain(x[:257], w.t())
    assert "tuned" not in warpgemm.explain(x[:256], w.t())
    tuning.set_mode("off")  # drops the plans and recipes built on the entry
    assert "tuned" not in warpgemm.explain(x, w.t())


def test_public_tune_times_real_candidates(cache, gen, monkeypatch):
    monkeypatch.setattr(tuning, "candidates_for", lambda *args: [PICKED, OTHER])
    x, w, ref = operands(gen, 1000, 1536, 512)
    res = warpgemm.tune(x, w.t(), rep_ms=5)
    assert [r[0] for r in res.rows][1:] == [PICKED.name, OTHER.name]
    assert all(ms is not None and ms > 0 for _, ms, _, _ in res.rows)
    entry = json.load(open(tuning.cache_path()))["entries"][res.key]
    assert entry["heuristic_ms"] > 0 and entry["candidates"] == 2
    assert rel_error(warpgemm.linear(x, w), ref) < 1e-2
    with pytest.raises(ValueError, match="GEMV"):
        warpgemm.tune(x[:1], w.t())


def test_tune_mode_tunes_on_the_first_call_but_never_during_capture(cache, gen, monkeypatch):
    monkeypatch.setattr(tuning, "candidates_for", lambda *args: [PICKED])
    tuning.set_mode("tune")
    x, w, ref = operands(gen, 200, 384, 256)
    assert rel_error(warpgemm.linear(x, w), ref) < 1e-2
    assert len(tuning.entries()) == 1

    y, v, ref2 = operands(gen, 100, 640, 128)  # a shape with no entry
    tuning.set_mode("use")
    warpgemm.linear(y, v)  # compiled and planned outside the capture
    torch.cuda.synchronize()
    forget_plans()
    tuning.set_mode("tune")
    graph = torch.cuda.CUDAGraph()
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream), torch.cuda.graph(graph, stream=stream):
        out = warpgemm.linear(y, v)
    graph.replay()
    torch.cuda.synchronize()
    assert rel_error(out, ref2) < 1e-2
    assert len(tuning.entries()) == 1 and os.path.exists(tuning.cache_path())
