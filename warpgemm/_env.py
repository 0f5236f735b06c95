"""Facts about the running environment, read once and cached.

Everything on the per-call path reads plain module attributes or small dict caches: a
`torch.cuda.get_device_capability` call costs microseconds, a dict lookup does not.
"""
from __future__ import annotations

import functools
import logging
import os
import sys

import torch

_TRUE = {"1", "true", "yes", "on"}

# Under TRITON_INTERPRET=1 `triton.jit` kernels run on CPU tensors (the portable path's CPU mode).
# Triton reads the variable when a kernel is decorated, so it must be set before warpgemm is imported.
INTERPRET = os.environ.get("TRITON_INTERPRET", "0").lower() in _TRUE


def _version(text: str) -> tuple[int, int]:
    major, minor = (int("".join(c for c in p if c.isdigit()) or 0) for p in (text.split(".") + ["0"])[:2])
    return major, minor


def _check_interpreter_numpy() -> None:
    """triton 3.6's interpreter converts loop bounds with int() on 1-element arrays, which numpy >= 2.4 refuses
    ("only 0-dimensional arrays can be converted to Python scalars" from deep inside a kernel): say so up front. The
    pin is in the `test` extra, not the core dependencies, which GPU installs share. Only for triton 3.6 (the project's
    pin), so that a later triton that fixes its interpreter is not refused."""
    try:
        import numpy
        import triton
    except ImportError:
        return  # triton's interpreter will say what it needs
    if _version(triton.__version__) == (3, 6) and _version(numpy.__version__) >= (2, 4):
        raise ImportError(f"warpgemm under TRITON_INTERPRET=1 runs triton 3.6's interpreter, which fails on numpy >= "
                          f"2.4; found numpy {numpy.__version__}: pip install 'numpy<2.4' (or the 'test' extra)")


if INTERPRET:
    _check_interpreter_numpy()

# WARPGEMM_BACKEND=portable forces the plain-Triton kernels everywhere (debugging, non-Hopper checks); =hopper makes a
# GEMM that cannot run the sm_90 kernels (another GPU, a CPU tensor) raise instead of falling back (the GEMM ops only).
BACKEND = os.environ.get("WARPGEMM_BACKEND", "auto").lower()
if BACKEND not in ("auto", "portable", "hopper"):
    raise ValueError(f"WARPGEMM_BACKEND must be one of auto, portable, hopper; got {BACKEND!r}")

# WARPGEMM_PDL=0 launches the GEMM kernels without programmatic dependent launch (they then never overlap the
# kernel before them on the stream; see kernels/hopper/partitions.py, wait_for_prior_grid). Which launches use it
# is decided per launch (kernels/hopper/gemm.py, launch_uses_pdl); WARPGEMM_PDL=all gives it to every launch
# (the measurement of that rule: notes/perf.md).
_PDL_SETTING = os.environ.get("WARPGEMM_PDL", "1").lower()
PDL = _PDL_SETTING in _TRUE or _PDL_SETTING == "all"
PDL_EVERYWHERE = _PDL_SETTING == "all"

# WARPGEMM_K_ORDER=forward reads every tile's K steps first to last. The default, serpentine, reverses them on every
# other tile of a persistent program (whole plain tiles of dense products: kernels/hopper/gemm.py, k_serpentine), so
# that each wave of tiles starts on the K end where the wave before it finished, whose A panel lines are still in L2.
K_ORDER = os.environ.get("WARPGEMM_K_ORDER", "serpentine").lower()
if K_ORDER not in ("serpentine", "forward"):
    raise ValueError(f"WARPGEMM_K_ORDER must be serpentine or forward; got {K_ORDER!r}")

# WARPGEMM_WEIGHT_HINT=0 leaves every TMA load without a cache hint. By default a dense product of few rows marks the
# weight's loads evict-first in L2 (kernels/hopper/gemm.py, weight_evict_first): it streams the weight once.
WEIGHT_HINT = os.environ.get("WARPGEMM_WEIGHT_HINT", "1").lower() in _TRUE

# WARPGEMM_STATIC_WEIGHTS=0 ignores every warpgemm.mark_static mark: no launch then reads its weight before the
# previous kernel on the stream has finished (static_weights.py).
STATIC_WEIGHTS = os.environ.get("WARPGEMM_STATIC_WEIGHTS", "1").lower() in _TRUE

_log = logging.getLogger("warpgemm")


class _CurrentStderr(logging.StreamHandler):
    """Writes to whatever sys.stderr is when a record is emitted, not the stream of the moment logging was turned
    on: notebooks and test runners swap sys.stderr, and a handler holding an old one logs into nowhere."""

    def emit(self, record):
        self.stream = sys.stderr
        super().emit(record)


def set_logging(enabled: bool) -> None:
    """Turn the per-call path/config log on or off at run time (same as WARPGEMM_LOG=1)."""
    global LOG_ENABLED
    LOG_ENABLED = bool(enabled)
    if enabled and not _log.handlers:
        handler = _CurrentStderr()
        handler.setFormatter(logging.Formatter("[warpgemm] %(message)s"))
        _log.addHandler(handler)
        _log.propagate = False
    _log.setLevel(logging.INFO if enabled else logging.WARNING)


LOG_ENABLED = False
if os.environ.get("WARPGEMM_LOG", "0").lower() in _TRUE:
    set_logging(True)  # unset: the logger's level stays whatever the application gave it


def log(msg: str) -> None:
    _log.info(msg)


@functools.lru_cache(maxsize=None)
def capability(index: int) -> tuple[int, int]:
    return torch.cuda.get_device_capability(index)


@functools.lru_cache(maxsize=None)
def num_sms(index: int) -> int:
    return torch.cuda.get_device_properties(index).multi_processor_count


H100_SMS = 132


def sms_for(device: torch.device) -> int:
    """SM count of a CUDA device; an H100's for meta tensors (planning and `explain` without a GPU)."""
    return num_sms(device.index) if device.type == "cuda" else H100_SMS


@functools.lru_cache(maxsize=None)
def device_name(index: int) -> str:
    return torch.cuda.get_device_name(index)


def is_hopper(index: int) -> bool:
    # wgmma and setmaxnreg exist on sm_90a only; Blackwell (sm_100) has neither, so it takes the portable path.
    return capability(index) == (9, 0)
