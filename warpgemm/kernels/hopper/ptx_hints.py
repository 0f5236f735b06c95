"""L2 cache hints on the GEMM's TMA stores, added to the PTX after Triton generates it.

Why: where a GEMM writes far more than it reads (the MoE weight gradient writes a (G, M, N) output: 3.7 GB for
128 experts at K7168 N2048, from 0.3 GB of inputs), the output streams through the 50 MB L2 and evicts the input
panels that later tiles read again: ncu counted 633-909 MB of DRAM reads for those 302 MB of inputs, and reads
mixed into the write stream cost the HBM ~12% of its rate. Stores marked evict-first leave the panels resident:
5-8% faster on those gradients (results/2026-11-25-wgrad/l2_hint_*.json, notes/perf.md).

How: triton 3.6's Gluon TMA store (`tma.async_copy_shared_to_global`) takes no cache hint, so the kernel variant
carries an L2_STORE_HINT constexpr and is compiled inside `store_hints()`, which wraps Triton's PTX stage of every
compile while it is installed; only a compile that has just traced a hinted gemm_kernel on the same thread is
rewritten. The constexpr keys Triton's caches (in memory and on disk), so a hinted binary never stands in for a
plain one: its value is PASS_VERSION (a changed pass gets new keys), and the kernel refuses to be traced with it
outside `store_hints()` (`check_hint_compile`), so no plain binary is ever filed under a hinted key. Each bulk tensor
store of `gemm_kernel` gains `.L2::cache_hint` with a `createpolicy.fractional.L2::evict_first` policy made just
before it in its own PTX scope. Hints do not change results. If Triton's PTX stops matching, the store is left
plain, a warning says so; the CPU compile checks assert that hinted variants carry the hint.
"""
from __future__ import annotations

import contextlib
import re
import threading
import warnings

from triton import knobs

_STORE = re.compile(r"^(\t(?:@!?%p\d+ )?)(cp\.async\.bulk\.tensor\.\dd\.global\.shared::cta\.bulk_group)( \[.*\]);$",
                    re.M)
KERNEL_ENTRY = ".entry gemm_kernel("
# One thread's compile under the hook at a time: the hook is process-wide, and overlapping installs from two
# threads would leave one installed.
_LOCK = threading.RLock()

# Bump when the rewrite changes: hinted variants carry it as their L2_STORE_HINT, so binaries of an older pass in
# Triton's disk cache are not reused.
PASS_VERSION = 1

# Per thread (a compile traces and runs its stages on one thread): `depth`, the store_hints() contexts this thread
# is inside; `tracing`, the L2_STORE_HINT of the gemm_kernel this thread traced last. The PTX stage rewrites only a
# compile that traced a hinted variant, so a plain variant compiled by another thread while the hook is installed
# stays plain under its plain key.
_thread = threading.local()


def hint_stores(ptx: str, policy: str = "evict_first") -> tuple[str, int]:
    """(ptx with every bulk tensor store hinted, the number of stores hinted)."""

    def sub(m: re.Match) -> str:
        return (f"\t{{ .reg .b64 %l2pol; createpolicy.fractional.L2::{policy}.b64 %l2pol, 1.0;\n"
                f"{m.group(1)}{m.group(2)}.L2::cache_hint{m.group(3)}, %l2pol; }}")

    return _STORE.subn(sub, ptx)


def store_counts(ptx: str) -> tuple[int, int]:
    """(plain, hinted) bulk tensor stores in `ptx`: what the compile checks assert on."""
    return len(_STORE.findall(ptx)), ptx.count(".bulk_group.L2::cache_hint [")


def _hook(previous):
    def hook(backend, stages, options, language, capability):
        # Triton calls this while setting up a compile, before the trace, on the compiling thread: a flag left by
        # an earlier compile that failed between its trace and its PTX stage must not reach this one.
        _thread.tracing = 0
        if previous is not None:
            previous(backend, stages, options, language, capability)
        make_ptx = stages["ptx"]

        def ptx_stage(src, metadata):
            traced = getattr(_thread, "tracing", 0)
            _thread.tracing = 0
            ptx = make_ptx(src, metadata)
            if KERNEL_ENTRY not in ptx or traced != PASS_VERSION:
                return ptx
            ptx, n = hint_stores(ptx)
            if n == 0:
                warnings.warn("warpgemm: no TMA store matched the L2-hint PTX pass; the kernel runs without hints")
            return ptx

        stages["ptx"] = ptx_stage
    return hook


@contextlib.contextmanager
def store_hints(enabled: bool = True):
    """Compile a hinted variant inside this (on the thread that compiles it): the PTX stage of that compile hints
    gemm_kernel's stores. Any hook already installed still runs, and is put back; nested contexts install once."""
    if not enabled:
        yield
        return
    with _LOCK:
        depth = getattr(_thread, "depth", 0)
        previous = knobs.runtime.add_stages_inspection_hook
        if depth == 0:
            knobs.runtime.add_stages_inspection_hook = _hook(previous)
        _thread.depth = depth + 1
        try:
            yield
        finally:
            _thread.depth = depth
            knobs.runtime.add_stages_inspection_hook = previous


def hints_active() -> bool:
    """Whether this thread is inside store_hints()."""
    return getattr(_thread, "depth", 0) > 0


def check_hint_compile(l2_store_hint) -> None:
    """Called while gemm_kernel is traced (a cache miss; gemm_kernel._check_hint_compile): a hinted variant must be
    compiling under store_hints() on this thread, or Triton would file a binary without hints under its key. It
    also tells the PTX stage of this compile whether to hint (so Triton's async compile mode, whose workers are
    other threads, refuses hinted variants rather than building them plain)."""
    if isinstance(l2_store_hint, bool) or l2_store_hint not in (0, PASS_VERSION):
        raise ValueError(f"L2_STORE_HINT must be 0 or {PASS_VERSION} (this PTX pass's version), got {l2_store_hint!r}")
    if l2_store_hint and not hints_active():
        raise RuntimeError("gemm_kernel with L2_STORE_HINT set is being compiled outside "
                           "warpgemm.kernels.hopper.ptx_hints.store_hints() on this thread: its stores would not "
                           "be hinted")
    _thread.tracing = l2_store_hint
