"""The opt-in tuner's host logic: cache keys, the on-disk cache, the keep-or-not rule, and when it may time anything.

On CPU the products run on the portable kernel (it ignores configs), and timings come from an injected timer, so
these tests check what the tuner decides and stores, not how fast anything is (tests/test_gpu_tuning.py runs it on
an H100)."""
import json
import os
import warnings

import pytest
import torch

import warpgemm
from warpgemm import _env, tuning
from warpgemm.config import GemmConfig
from warpgemm.ops import gemm_impl

FAST = GemmConfig(128, 128, 64, stages=6, consumer_warps=4)
OTHER = GemmConfig(64, 128, 64, stages=8, consumer_warps=4)


@pytest.fixture
def cache(tuning_cache, monkeypatch):
    """The private tuning cache (conftest) and a fake device: keys name a GPU this CPU machine does not have."""
    monkeypatch.setattr(_env, "device_name", lambda index: "Fake H100")
    monkeypatch.setattr(_env, "num_sms", lambda index: 132)
    return tuning_cache


def operands(M=40, N=24, K=32, seed=0, dtype=torch.bfloat16):
    g = torch.Generator().manual_seed(seed)
    a3 = torch.randn(1, M, K, generator=g).to(dtype)
    w = torch.randn(N, K, generator=g).to(dtype)
    b3 = w.t().unsqueeze(0)  # an nn.Linear weight read as W.T: contiguous along K
    c3 = torch.empty(1, M, N, dtype=dtype)
    return a3, b3, c3


def heuristic(a3, c3):
    return gemm_impl.resolve_config(None, a3, c3)[0]


def timer_from(times):
    """A timer that reads each config's time from `times` (None: the heuristics) and counts its calls."""
    calls = []

    def timer(fn, cfg):
        fn()
        calls.append(cfg)
        return times[cfg]

    timer.calls = calls
    return timer


def test_bucket():
    assert [tuning.bucket(x) for x in (0, 1, 2, 3, 100, 128, 129, 4097)] == [0, 1, 2, 4, 128, 128, 256, 8192]
    assert [tuning.m_bucket(x) for x in (256, 257, 320, 511, 512, 513)] == ["256", "512-", "512-", "512-", "512",
                                                                          "1024"]
    assert [tuning.m_bucket(x) for x in (32, 33, 47, 48, 64)] == ["32", "64-", "64-", "64", "64"]
    from warpgemm.heuristics import DECODE_WIDE_MAX_ROWS, DECODE_WIDE_MIN_ROWS
    assert (DECODE_WIDE_MIN_ROWS, DECODE_WIDE_MAX_ROWS) == (33, 47)  # the buckets above follow these


def test_key_separates_what_changes_the_kernel(cache):
    a3, b3, c3 = operands(M=100)
    key = tuning.problem_key(a3, b3, c3, False)
    assert "Fake H100 132 SMs" in key and "warpgemm " + warpgemm.__version__ in key and "M128 N24 K32" in key
    assert "triton " in key and "B1 " in key
    assert tuning.problem_key(a3, b3, c3.expand(3, -1, -1), False) != key  # three outputs: bucket B4
    assert tuning.problem_key(*operands(M=128)[:3], False) == key  # same M bucket
    assert tuning.problem_key(*operands(M=129)[:3], False) != key
    assert tuning.problem_key(a3, b3, c3, True) != key
    assert tuning.problem_key(a3, b3.contiguous(), c3, False) != key  # B contiguous along N
    a16, b16, c16 = operands(M=100, dtype=torch.float16)
    assert tuning.problem_key(a16, b16, c16, False) != key
    assert tuning.problem_key(a3, b3, c3.float(), False) != key
    both = tuning.problem_key(a3.expand(2, -1, -1), b3.expand(2, -1, -1), c3.expand(2, -1, -1), False)
    shared_b = tuning.problem_key(a3.expand(2, -1, -1), b3, c3.expand(2, -1, -1), False)
    assert both != shared_b and "batched AB" in both and "batched A-" in shared_b


def test_a_clearly_faster_candidate_is_kept_and_used(cache, monkeypatch):
    a3, b3, c3 = operands()
    timer = timer_from({None: 10.0, FAST: 8.0, OTHER: 9.9})
    res = tuning.tune_problem(a3, b3, c3, None, candidates=[FAST, OTHER], timer=timer)
    # The fastest is re-timed against the heuristics (CONFIRM_ROUNDS - 1 more alternating rounds) before it is kept.
    assert res.config == FAST and timer.calls == [None, FAST, OTHER] + [None, FAST] * (tuning.CONFIRM_ROUNDS - 1)
    assert [r[0] for r in res.rows][1:] == [FAST.name, OTHER.name]
    data = json.load(open(tuning.cache_path()))
    assert data["format"] == tuning.FORMAT
    entry = data["entries"][res.key]
    assert entry["config"] == FAST.name and GemmConfig(**entry["fields"]) == FAST
    assert entry["ms"] == 8.0 and entry["heuristic_ms"] == 10.0 and entry["heuristic"] == heuristic(a3, c3).name
    assert oct(os.stat(tuning.cache_path()).st_mode & 0o777) == "0o644"
    # A later process (nothing loaded yet) uses it; the products still run on CPU tensors without it.
    tuning.forget_loaded()
    monkeypatch.setattr(tuning, "on_gpu", lambda t: True)
    cfg, why = tuning.config_for(a3, b3, c3, None, heuristic(a3, c3))
    assert cfg == FAST and why.startswith("tuned on this GPU") and tuning.cache_path() in why
    # Where the heuristics choose otherwise (another regime inside the same M bucket) the entry is not used.
    assert tuning.config_for(a3, b3, c3, None, OTHER) == (None, "")
    tuning.set_mode("off")
    assert tuning.config_for(a3, b3, c3, None, heuristic(a3, c3)) == (None, "")


def test_a_lead_within_the_margin_keeps_the_heuristics(cache, monkeypatch):
    a3, b3, c3 = operands()
    res = tuning.tune_problem(a3, b3, c3, None, candidates=[FAST], timer=timer_from({None: 10.0, FAST: 9.9}))
    assert res.config is None and res.entry["config"] is None and res.entry["ms"] == 10.0
    monkeypatch.setattr(tuning, "on_gpu", lambda t: True)
    assert tuning.config_for(a3, b3, c3, None, heuristic(a3, c3)) == (None, "")


def test_a_lead_that_does_not_survive_the_confirmation_is_dropped(cache):
    a3, b3, c3 = operands()
    times = iter([10.0, 8.0] + [9.0, 10.0] * (tuning.CONFIRM_ROUNDS - 1))  # lucky once, then slower

    def timer(fn, cfg):
        fn()
        return next(times)

    res = tuning.tune_problem(a3, b3, c3, None, candidates=[FAST], timer=timer)
    assert res.config is None and res.entry["config"] is None


def test_wrong_or_failing_candidates_are_never_kept(cache, monkeypatch):
    a3, b3, c3 = operands()
    real = gemm_impl.bmm_into

    def bmm_into(a, b, bias, c, config=None):
        if config == FAST:
            raise RuntimeError("no kernel for you")
        real(a, b, bias, c, config)
        if config == OTHER:
            c[0, 0, 0] += 0.5  # one element off by less than 1% of the product's norm

    monkeypatch.setattr(gemm_impl, "bmm_into", bmm_into)
    timer = timer_from({None: 10.0, FAST: 1.0, OTHER: 1.0})
    res = tuning.tune_problem(a3, b3, c3, None, candidates=[FAST, OTHER], timer=timer)
    assert res.config is None and timer.calls == [None]
    notes = {name: note for name, _, _, note in res.rows}
    assert "no kernel for you" in notes[FAST.name] and "not kept" in notes[OTHER.name]


@pytest.mark.parametrize("poison", ["zero", "nan"])
def test_operands_that_say_nothing_are_refused(cache, poison):
    a3, b3, c3 = operands()
    a3 = a3 * 0 if poison == "zero" else a3.clone().index_fill_(1, torch.tensor([3]), float("nan"))
    with pytest.raises(ValueError, match="all zero" if poison == "zero" else "not finite"):
        tuning.tune_problem(a3, b3, c3, None, candidates=[FAST], timer=timer_from({None: 1.0, FAST: 0.5}))
    assert not os.path.exists(tuning.cache_path())


def test_a_failed_tuning_warns_once_and_leaves_the_heuristics(cache, monkeypatch):
    a3, b3, c3 = operands()
    monkeypatch.setattr(tuning, "on_gpu", lambda t: True)
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)
    calls = []

    def failing(*args, **kw):
        calls.append(1)
        raise OSError("read-only file system")

    monkeypatch.setattr(tuning, "tune_problem", failing)
    tuning.set_mode("tune")
    with pytest.warns(UserWarning, match="read-only file system"):
        assert tuning.config_for(a3, b3, c3, None, heuristic(a3, c3)) == (None, "")
    assert tuning.config_for(a3, b3, c3, None, heuristic(a3, c3)) == (None, "") and len(calls) == 1


def test_an_unwritable_cache_keeps_the_result_in_memory(cache, monkeypatch):
    a3, b3, c3 = operands()
    monkeypatch.setenv("WARPGEMM_CACHE_DIR", "/dev/null/not-a-directory")
    tuning.forget_loaded()
    with pytest.raises(OSError):
        tuning.tune_problem(a3, b3, c3, None, candidates=[FAST], timer=timer_from({None: 10.0, FAST: 5.0}))
    monkeypatch.setattr(tuning, "on_gpu", lambda t: True)
    assert tuning.config_for(a3, b3, c3, None, heuristic(a3, c3))[0] == FAST

def test_nothing_is_timed_outside_tune_mode_during_capture_or_inside_a_tuning(cache, monkeypatch):
    a3, b3, c3 = operands()
    monkeypatch.setattr(tuning, "on_gpu", lambda t: True)
    h = heuristic(a3, c3)
    ran = []
    monkeypatch.setattr(tuning, "tune_problem", lambda *args, **kw: ran.append(1))
    assert tuning.config_for(a3, b3, c3, None, h) == (None, "")  # 'use': a miss stays a miss
    tuning.set_mode("tune")
    assert tuning.config_for(a3, b3, c3, None, h, may_tune=False) == (None, "")  # explain
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: True)
    assert tuning.config_for(a3, b3, c3, None, h) == (None, "")
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)
    tuning._local.tuning = True
    try:
        assert tuning.config_for(a3, b3, c3, None, h) == (None, "")
    finally:
        tuning._local.tuning = False
    tuning._in_progress.add(tuning.problem_key(a3, b3, c3, False))  # another thread is on it
    try:
        assert tuning.config_for(a3, b3, c3, None, h) == (None, "")
    finally:
        tuning._in_progress.clear()
    monkeypatch.setattr(tuning, "AUTO_MAX_OUTPUT", c3.numel() - 1)
    assert tuning.config_for(a3, b3, c3, None, h) == (None, "")
    assert not ran and not os.path.exists(tuning.cache_path())


def test_tune_mode_tunes_a_miss_once(cache, monkeypatch):
    a3, b3, c3 = operands()
    monkeypatch.setattr(tuning, "on_gpu", lambda t: True)
    monkeypatch.setattr(tuning, "candidates_for", lambda *args: [FAST])
    monkeypatch.setattr(torch.cuda, "is_current_stream_capturing", lambda: False)
    monkeypatch.setattr(tuning, "do_bench_ms", lambda fn, cfg, rep_ms=25: {None: 10.0, FAST: 5.0}[cfg])
    tuning.set_mode("tune")
    assert tuning.config_for(a3, b3, c3, None, heuristic(a3, c3))[0] == FAST
    monkeypatch.setattr(tuning, "do_bench_ms", lambda *args, **kw: pytest.fail("timed twice"))
    assert tuning.config_for(a3, b3, c3, None, heuristic(a3, c3))[0] == FAST


def test_writes_merge_with_other_processes_entries(cache):
    a3, b3, c3 = operands()
    tuning.tune_problem(a3, b3, c3, None, candidates=[FAST], timer=timer_from({None: 10.0, FAST: 5.0}))
    # Another process adds an entry after this one loaded the file.
    data = json.load(open(tuning.cache_path()))
    data["entries"]["someone else's key"] = {"fields": None, "config": None, "ms": 1.0, "heuristic": "x",
                                             "heuristic_ms": 1.0}
    json.dump(data, open(tuning.cache_path(), "w"))
    a3b, b3b, c3b = operands(M=300)
    tuning.tune_problem(a3b, b3b, c3b, None, candidates=[FAST], timer=timer_from({None: 10.0, FAST: 5.0}))
    keys = json.load(open(tuning.cache_path()))["entries"]
    assert len(keys) == 3 and "someone else's key" in keys
    assert not [f for f in os.listdir(cache) if f.startswith(".tuned-")]  # no temp files left
    assert tuning.clear() == 3 and not os.path.exists(tuning.cache_path())


@pytest.mark.parametrize("content", ["{not json", json.dumps({"format": 1, "entries": {}}), json.dumps([1, 2])])
def test_an_unreadable_or_foreign_cache_is_ignored_with_a_warning(cache, content):
    path = tuning.cache_path()
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(content)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert tuning.entries() == {}
    assert any("tuning cache" in str(w.message) for w in seen)
    a3, b3, c3 = operands()
    tuning.tune_problem(a3, b3, c3, None, candidates=[FAST], timer=timer_from({None: 10.0, FAST: 5.0}))
    assert len(json.load(open(path))["entries"]) == 1


def test_a_malformed_entry_counts_as_absent(cache, monkeypatch):
    a3, b3, c3 = operands()
    key = tuning.problem_key(a3, b3, c3, False)
    h = heuristic(a3, c3)
    monkeypatch.setattr(tuning, "on_gpu", lambda t: True)
    for fields in (["nonsense"], {"block_m": "x"}, {"no_such_field": 1}):
        tuning._write_entry(key, {"fields": fields, "config": "x", "ms": 1.0, "heuristic": h.name,
                                  "heuristic_ms": 2.0})
        assert tuning.config_for(a3, b3, c3, None, h) == (None, "")


def test_a_one_partition_winner_is_not_served_past_one_wave(cache, monkeypatch):
    """Keys round M up to a power of two: a one-partition winner timed where its tiles made one wave must not run a
    larger problem of the same bucket, where it would drain its ring between tiles."""
    flat = GemmConfig(64, 128, 64, 4, 4, warp_specialize=False)
    one_wave, two_waves = operands(700, 1536, 1024), operands(1024, 1536, 1024)  # 132 and 192 64x128 tiles
    key = tuning.problem_key(*one_wave, False)
    assert key == tuning.problem_key(*two_waves, False)
    h = heuristic(one_wave[0], one_wave[2])
    assert h == heuristic(two_waves[0], two_waves[2])
    monkeypatch.setattr(tuning, "on_gpu", lambda t: True)
    monkeypatch.setattr(_env, "sms_for", lambda device: 132)
    tuning._write_entry(key, {"fields": flat.__dict__, "config": flat.name, "ms": 1.0, "heuristic": h.name,
                              "heuristic_ms": 2.0})
    assert tuning.config_for(*one_wave, None, h)[0] == flat
    assert tuning.config_for(*two_waves, None, h) == (None, "")


def test_candidates_fit_the_problem():
    wide = tuning.candidates_for(1, 8192, 4096, torch.bfloat16, torch.bfloat16, True)
    few = tuning.candidates_for(1, 16, 4096, torch.bfloat16, torch.bfloat16, True)
    under_two_waves = tuning.candidates_for(1, 777, 4096, torch.bfloat16, torch.bfloat16, True)
    assert wide and few
    assert not any(c.swap_ab or c.split_k > 1 or c.stream_k for c in wide)
    assert any(c.swap_ab for c in few)
    assert any(c.stream_k for c in under_two_waves) and not any(c.swap_ab and c.store_chunks == 1
                                                                for c in under_two_waves)
    # Past 700 rows the chunked swap-AB tiles too (to SWAP_WIDE_ROWS_MAX_M; the heuristics take them from
    # SWAP_WIDE_ROWS_MIN_M), and none past that.
    assert any(c.swap_ab and c.store_chunks > 1 for c in under_two_waves)
    assert not any(c.swap_ab for c in tuning.candidates_for(1, 4097, 4096, torch.bfloat16, torch.bfloat16, True))
    # 65-700 rows: the swap-AB tiles fitted to x's rows (swap_rows.py), not decode's whole-stored ones.
    fitted = tuning.candidates_for(1, 300, 8192, torch.bfloat16, torch.bfloat16, True)
    assert any(c.swap_ab and c.store_chunks > 1 for c in fitted)
    assert not any(c.swap_ab and c.store_chunks == 1 for c in fitted)
    assert not any(c.swap_ab and c.store_chunks > 1 for c in few)
    n_major = tuning.candidates_for(1, 16, 4096, torch.bfloat16, torch.bfloat16, False)
    assert not any(c.swap_ab and c.block_m == 32 for c in n_major)  # 32-row tiles read K-major weights only
    assert all(c.store_chunks == 1 or c.block_n % c.store_chunks == 0 for c in wide)
    # One-partition variants where their tiles fit one wave (each program one tile), at several ring depths.
    small = tuning.candidates_for(1, 688, 632, torch.bfloat16, torch.bfloat16, True)
    flat = [c for c in small if not c.warp_specialize]
    assert {(c.block_m, c.block_n, c.block_k) for c in flat} >= {(64, 64, 128), (64, 128, 64)}
    assert len({c.stages for c in flat if (c.block_m, c.block_n) == (64, 64)}) >= 3
    assert all(c.block_m == 64 and not c.swap_ab and -(-688 // 64) * -(-632 // c.block_n) <= 132 for c in flat)
    assert not any(not c.warp_specialize for c in wide)
    streaming = tuning.candidates_for(1, 688, 632, torch.bfloat16, torch.bfloat16, True, K=4096)
    assert all(c.warp_specialize for c in streaming)  # K past LONGER_K_MAX_K: a weight stream
    assert not any(c.swap_ab and not c.warp_specialize for c in few)  # swap-AB decode tiles stay warp-specialized


def test_mode_setting_is_checked():
    with pytest.raises(ValueError, match="mode must be"):
        tuning.set_mode("sometimes")


def test_public_tune_needs_a_hopper_gpu():
    a = torch.randn(8, 16).to(torch.bfloat16)
    with pytest.raises(RuntimeError, match="needs an sm_90 GPU"):
        warpgemm.tune(a, a.t())


def test_cli_shows_and_clears_the_cache(cache):
    from typer.testing import CliRunner

    from warpgemm.cli import app

    a3, b3, c3 = operands()
    tuning.tune_problem(a3, b3, c3, None, candidates=[FAST], timer=timer_from({None: 10.0, FAST: 5.0}))
    runner = CliRunner()
    shown = runner.invoke(app, ["tune", "--show"], terminal_width=300)
    # M = 40: the 33-47-row bucket (tuning.m_bucket)
    assert shown.exit_code == 0 and FAST.name in shown.output and "M64- N24 K32" in shown.output
    wrong = runner.invoke(app, ["tune"])
    assert wrong.exit_code != 0 and "exactly one of --suite or --shapes" in wrong.output
    for bogus in ("bogus", "64x64", "0x64x64"):  # a typo is a typo on any machine, GPU or not
        typo = runner.invoke(app, ["tune", "--shapes", bogus])
        assert typo.exit_code == 2 and "shapes must" in typo.output, typo.output
    no_gpu = runner.invoke(app, ["tune", "--shapes", "64x64x64"])
    assert no_gpu.exit_code == 2 and "needs an NVIDIA Hopper GPU" in no_gpu.output  # as the bench suites
    cleared = runner.invoke(app, ["tune", "--clear"], terminal_width=300)
    assert cleared.exit_code == 0 and "removed 1 entries" in cleared.output
    assert not os.path.exists(tuning.cache_path())
