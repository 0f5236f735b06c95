"""The opt-in tuner: time candidate kernel configs for one GEMM problem on this GPU and keep the winner on disk.

The heuristics (heuristics.choose_config) cost nothing per call and were measured on the bench suites
(notes/perf.md); a shape they were not measured on may run faster with another tile. The tuner times the shipped
and sweep candidates that fit the problem (warpgemm/candidates.py) on the caller's own operands, checks each one's
result against a float32 product, and keeps a candidate only when it beats the heuristics' choice by more than
MARGIN (do_bench medians of a config against itself move by ~1-2%: a smaller lead is noise, notes/perf.md).

Settings, read when warpgemm is imported (set_mode changes them at run time):
  WARPGEMM_TUNE unset   winners already in the cache are used; nothing is ever timed
  WARPGEMM_TUNE=1       a dense matmul/linear problem with no cache entry is tuned on its first eager call (never
                        while a CUDA graph is being captured: that call takes the heuristics and stays untuned)
  WARPGEMM_TUNE=0       the cache is ignored: heuristics only
  WARPGEMM_CACHE_DIR    where the cache file lives (default $XDG_CACHE_HOME/warpgemm, else ~/.cache/warpgemm)

The cache is one JSON file. Its entries are keyed by the device name, the triton and warpgemm versions, the dtypes,
the operand layout, whether there is a bias, and the problem's size: batch count and M rounded up to a power of two
(so one tuning serves the nearby batch sizes of a model's calls), N and K exact (a model's weights). A new triton or
warpgemm version starts from nothing. Writes merge with the file as it is on disk and replace it atomically, so
processes tuning at the same time never corrupt it. An unreadable file is set aside with a warning, never fatal.
Grouped, fp8 and one- or two-row GEMV problems are not tuned.
"""
from __future__ import annotations

import json
import math
import os
import tempfile
import threading
import time
import warnings
from dataclasses import dataclass, field

import torch

from . import _env
from .config import GemmConfig, check_config

FORMAT = 1
FILE_NAME = f"tuned_configs_v{FORMAT}.json"
MARGIN = 0.02
_MODES = {"": "use", "1": "tune", "true": "tune", "on": "tune", "yes": "tune",
          "0": "off", "false": "off", "off": "off", "no": "off"}
_env_mode = os.environ.get("WARPGEMM_TUNE", "").strip().lower()
if _env_mode not in _MODES:
    raise ValueError(f"WARPGEMM_TUNE must be unset, 1 or 0, got {os.environ['WARPGEMM_TUNE']!r}")
_mode = _MODES[_env_mode]
_lock = threading.RLock()
_entries: dict[str, dict] | None = None  # the file's entries as last read or written by this process
_local = threading.local()  # .tuning: this thread is inside tune_problem (its heuristic baseline must stay one)


def set_mode(mode: str) -> None:
    """'use' (cached winners only), 'tune' (also tune on a miss) or 'off' (heuristics only)."""
    global _mode
    if mode not in ("use", "tune", "off"):
        raise ValueError(f"mode must be 'use', 'tune' or 'off', got {mode!r}")
    _mode = mode


def mode() -> str:
    return _mode


def cache_path() -> str:
    base = os.environ.get("WARPGEMM_CACHE_DIR")
    if not base:
        xdg = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
        base = os.path.join(xdg, "warpgemm")
    return os.path.join(base, FILE_NAME)


def bucket(x: int) -> int:
    """x rounded up to a power of two (0 stays 0)."""
    return 0 if x <= 0 else 1 << (x - 1).bit_length()


def problem_key(a3: torch.Tensor, b3: torch.Tensor, c3: torch.Tensor, has_bias: bool) -> str:
    """The cache key of c3 = a3 @ b3 (+ bias) on a3's device. a3 is (Ba, M, K), b3 (Bb, K, N), c3 (Bt, M, N)."""
    import triton

    from . import __version__

    batches, M, N = c3.shape
    a_layout = "k" if a3.stride(2) == 1 else "m"  # A contiguous along K (row-major) or along M
    b_layout = "k" if b3.stride(1) == 1 else "n"  # B contiguous along K (an nn.Linear weight read as W.T) or N
    dtypes = f"{str(a3.dtype).replace('torch.', '')}->{str(c3.dtype).replace('torch.', '')}"
    return (f"{_env.device_name(a3.device.index)}|triton {triton.__version__}|warpgemm {__version__}|{dtypes}|"
            f"a{a_layout}b{b_layout}|bias {int(has_bias)}|B{bucket(batches)} M{bucket(M)} N{N} K{a3.shape[2]}")


def _read_file(path: str) -> dict[str, dict]:
    try:
        with open(path) as f:
            data = json.load(f)
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as e:
        aside = f"{path}.unreadable-{int(time.time())}"
        try:
            os.replace(path, aside)
        except OSError:
            aside = "(left in place)"
        warnings.warn(f"warpgemm: the tuning cache {path} could not be read ({e}); moved to {aside}, starting empty")
        return {}
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("entries"), dict):
        warnings.warn(f"warpgemm: the tuning cache {path} is not a format-{FORMAT} file; its entries are ignored")
        return {}
    return data["entries"]


def _loaded() -> dict[str, dict]:
    global _entries
    with _lock:
        if _entries is None:
            _entries = _read_file(cache_path())
        return _entries


def forget_loaded() -> None:
    """Read the cache file again on next use (after another process or the user changed it)."""
    global _entries
    with _lock:
        _entries = None


def _write_entry(key: str, entry: dict) -> None:
    global _entries
    path = cache_path()
    with _lock:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        merged = _read_file(path)  # what other processes wrote since this one last read
        merged[key] = entry
        fd, tmp = tempfile.mkstemp(prefix=".tuned-", dir=os.path.dirname(path))
        try:
            with os.fdopen(fd, "w") as f:
                json.dump({"format": FORMAT, "entries": merged}, f, indent=1, sort_keys=True)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
        _entries = merged


def cached_entry(key: str) -> dict | None:
    return _loaded().get(key)


def entries() -> dict[str, dict]:
    """Every entry of the cache file (a copy)."""
    return dict(_loaded())


def clear() -> int:
    """Delete the cache file; returns how many entries it held."""
    global _entries
    with _lock:
        n = len(_read_file(cache_path()))
        try:
            os.remove(cache_path())
        except FileNotFoundError:
            pass
        _entries = {}
    return n


def _entry_config(entry: dict) -> GemmConfig | None:
    """The config an entry keeps (None: the heuristics won). A malformed entry counts as absent."""
    fields = entry.get("fields")
    return None if fields is None else GemmConfig.from_list(fields)


def on_gpu(t: torch.Tensor) -> bool:
    # Tuned entries name a GPU; meta and CPU tensors (explain, the portable path) never use them.
    return t.device.type == "cuda"


def config_for(a3, b3, c3, bias, *, may_tune: bool = True) -> tuple[GemmConfig | None, str]:
    """(the tuned config to run, why) for a plan without a forced config; (None, "") means: take the heuristics.
    Tunes on a miss only in 'tune' mode, with may_tune, outside graph capture and outside another tuning."""
    if _mode == "off" or getattr(_local, "tuning", False) or not on_gpu(a3):
        return None, ""
    key = problem_key(a3, b3, c3, bias is not None)
    entry = cached_entry(key)
    if entry is None:
        if _mode != "tune" or not may_tune:
            return None, ""
        if torch.cuda.is_current_stream_capturing():
            if _env.LOG_ENABLED:
                _env.log(f"tuning skipped while a CUDA graph is captured: {key}")
            return None, ""
        entry = tune_problem(a3, b3, c3, bias).entry
    try:  # an entry edited by hand or by a future version counts as absent
        cfg = _entry_config(entry)
        if cfg is None or check_config(cfg, a3.dtype, c3.dtype, weight_k_contiguous=b3.stride(1) == 1) is not None:
            return None, ""
        return cfg, (f"tuned on this GPU: {entry['ms'] * 1e3:.1f} us against {entry['heuristic_ms'] * 1e3:.1f} us "
                     f"for the heuristics' {entry['heuristic']} ({cache_path()})")
    except (TypeError, ValueError, KeyError, AttributeError):
        return None, ""


def candidates_for(batches: int, M: int, N: int, in_dtype: torch.dtype, out_dtype: torch.dtype,
                   weight_k_contiguous: bool, num_sms: int = _env.H100_SMS):
    """The configs worth timing for a (batches, M, N) output: the shipped ones and the sweep's, valid for it;
    swap-AB only for M <= 64 (the sweeps never saw it win above), split-K and stream-K only where 128x256 tiles
    make under two waves or M <= 512 (with more tiles every SM is busy without them)."""
    from .candidates import CANDIDATES
    from .heuristics import SHIPPED_CONFIGS

    few_tiles = batches * -(-M // 128) * -(-N // 256) < 2 * num_sms
    out = []
    for cfg in dict.fromkeys(SHIPPED_CONFIGS + CANDIDATES):
        if cfg.swap_ab and M > 64:
            continue
        if (cfg.split_k > 1 or cfg.stream_k) and M > 512 and not few_tiles:
            continue
        if check_config(cfg, in_dtype, out_dtype, weight_k_contiguous=weight_k_contiguous) is None:
            out.append(cfg)
    return out


@dataclass
class TuneResult:
    key: str
    config: GemmConfig | None  # None: the heuristics' choice stays
    entry: dict
    rows: list = field(default_factory=list)  # (config name, ms or None, rel. error, note) per candidate


def do_bench_ms(fn, config, rep_ms: int = 25) -> float:
    """The default timer: triton's do_bench median (L2 cleared before each repetition), in ms."""
    import triton

    return triton.testing.do_bench(fn, warmup=5, rep=rep_ms, return_mode="median")


def tune_problem(a3, b3, c3, bias, *, candidates=None, rep_ms: int = 25, timer=None, progress=None) -> TuneResult:
    """Time the heuristics' plan and every candidate on these operands (outputs go to a scratch tensor), store the
    winner in the cache and return it. Each candidate's result is checked against a float32 product first: one
    whose error is over twice the heuristics' (+1e-3) is never kept. timer(fn, config) -> ms (config None for the
    heuristics) replaces do_bench_ms, e.g. to time CUDA-graph replays."""
    from .ops import gemm_impl
    from .testing import rel_error

    bmm_into = gemm_impl.bmm_into
    timer = timer or (lambda fn, cfg: do_bench_ms(fn, cfg, rep_ms))

    key = problem_key(a3, b3, c3, bias is not None)
    kmajor = b3.stride(1) == 1
    if candidates is None:
        candidates = candidates_for(*c3.shape, a3.dtype, c3.dtype, kmajor, _env.sms_for(c3.device))
    scratch = torch.empty(c3.shape, dtype=c3.dtype, device=c3.device)
    ref = torch.matmul(a3.float(), b3.float())
    if bias is not None:
        ref += bias.float()
    prev = getattr(_local, "tuning", False)
    _local.tuning = True
    try:
        h_name = gemm_impl.heuristic_name(a3, b3, scratch)
        scratch.fill_(float("nan"))
        bmm_into(a3, b3, bias, scratch, None)
        h_err = rel_error(scratch, ref)
        h_ms = timer(lambda: bmm_into(a3, b3, bias, scratch, None), None)
        rows = [("heuristics: " + h_name, h_ms, h_err, "")]
        if progress:
            progress(f"  heuristics {h_name:<28} {h_ms * 1e3:9.1f} us  err {h_err:.1e}")
        best = None
        for cfg in candidates:
            try:
                scratch.fill_(float("nan"))
                bmm_into(a3, b3, bias, scratch, cfg)
                err = rel_error(scratch, ref)
                if not math.isfinite(err) or err > 2 * h_err + 1e-3:
                    rows.append((cfg.name, None, err, "error above the heuristics' x2: not kept"))
                    continue
                ms = timer(lambda: bmm_into(a3, b3, bias, scratch, cfg), cfg)
            except Exception as e:  # a candidate that cannot run here is skipped, never fatal
                rows.append((cfg.name, None, None, f"{type(e).__name__}: {e}"))
                continue
            rows.append((cfg.name, ms, err, ""))
            if progress:
                progress(f"  {cfg.name:<39} {ms * 1e3:9.1f} us  err {err:.1e}")
            if best is None or ms < best[1]:
                best = (cfg, ms)
    finally:
        _local.tuning = prev
    won = best is not None and best[1] < (1 - MARGIN) * h_ms
    entry = {"fields": best[0].to_list() if won else None, "config": best[0].name if won else None,
             "ms": best[1] if won else h_ms, "heuristic": h_name, "heuristic_ms": h_ms,
             "candidates": len(candidates), "when": time.strftime("%Y-%m-%dT%H:%M:%S")}
    _write_entry(key, entry)
    if _env.LOG_ENABLED:
        _env.log(f"tuned {key}: {entry['config'] or 'heuristics'} ({entry['ms'] * 1e3:.1f} us, heuristics "
                 f"{h_ms * 1e3:.1f} us)")
    return TuneResult(key, best[0] if won else None, entry, rows)
