"""PTX passes over gemm_kernel after Triton generates it: L2 cache hints on the TMA stores, an L2 evict-first policy
on the weight's TMA loads (`hint_marked_loads`, for WEIGHT_HINT variants), the 2-CTA cluster form (TMA multicast of
B, remote mbarrier arrives: `cluster_rewrite`, run for GemmConfig.cluster_m = 2 variants), and the one-partition
kernel's issue barriers dropped (`drop_issue_barriers`, for warp_specialize=False variants), all compiled under the
same `store_hints()` hook (`check_weight_hint_compile`, `check_cluster_compile`, `check_one_partition_compile`). The
rest of this text is the store hints'.

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


_LOAD = re.compile(r"^(\t(?:@!?%p\d+ )?)(cp\.async\.bulk\.tensor\.\dd\.shared::cluster\.global\.mbarrier::complete_tx"
                   r"::bytes)( \[.*\]);$", re.M)
_ARRIVE = re.compile(r"^\t((?:@!?%p\d+ )?)mbarrier\.arrive\.shared::cta\.b64 _, \[(%r\d+)\];$")
# A basic-block label or a branch: the end of straight-line code.
_BRANCH = re.compile(r"^(\$L__BB\d+_\d+:|\t(?:@!?%p\d+ )?bra(?:\.uni)? )")
EVICT_FIRST_BEGIN = "// warpgemm:evict-first-begin"
EVICT_FIRST_END = "// warpgemm:evict-first-end"
# Bump when the load rewrite changes: WEIGHT_HINT variants carry it, as L2_STORE_HINT carries PASS_VERSION.
LOAD_PASS_VERSION = 1
# A TMA load's operands ` [dst], [tensor map, {coords}], [mbarrier]`: the tensor map's register.
_TENSOR_MAP = re.compile(r"^ \[[^\]]*\], \[(%rd\d+),")
MULTICAST_BEGIN = "// warpgemm:multicast-begin"
MULTICAST_END = "// warpgemm:multicast-end"
REMOTE_ARRIVE = "// warpgemm:remote-arrive"


def cluster_rewrite(ptx: str, cluster: int = 2) -> tuple[str, int, int, int]:
    """gemm_kernel's PTX made a 2-CTA-cluster kernel (GemmConfig.cluster_m): (ptx, loads made multicasts, arrives
    made remote, multicast regions). Triton 3.6's Gluon has no TMA multicast ("NYI" in its lowering) and no remote
    mbarrier arrive, so the kernel marks what it needs with comments (partitions.multicast_begin/end,
    BarrierRing.mark_previous_empty):
    - `.reqnctapercluster` on the entry: the driver then launches clusters of `cluster` consecutive programs;
    - every TMA load between multicast markers writes to both CTAs' shared memory at the same offsets and signals
      the mbarrier at the same offset in both (ctaMask 0b11). A region is one box of B. Triton cuts a box wider
      than its swizzle into messages spread over the producer's warps (an N-major B's 128 columns: one instruction
      that two warps issue, one 64-column message each); where messages outnumber warps it would emit more than one
      instruction, so a region may hold several loads, all of one tensor map, and no load outside the regions may
      read that map (A's box must never be multicast into the peer's A slot);
    - the mbarrier arrive after a remote-arrive marker goes to the peer CTA's barrier (rank ^ 1) through mapa."""
    if cluster != 2:
        raise ValueError(f"the cluster PTX pass builds 2-CTA clusters, got {cluster}")
    out, loads, arrives, regions = [], 0, 0, 0
    region_loads = None  # TMA loads seen since the open multicast-begin marker; None outside a region
    region_map = None  # the tensor map (descriptor register) the open region's loads read
    multicast_maps, plain_maps = set(), set()
    remote_next = False
    entry = False

    def refuse(why):
        raise ValueError(f"cluster PTX pass: {why}; triton's PTX no longer has the shape this pass was written for")

    for line in ptx.split("\n"):
        if KERNEL_ENTRY in line:
            entry = True
        if entry and line.startswith(".maxnreg"):
            out.append(line)
            out.append(f".reqnctapercluster {cluster}, 1, 1")
            entry = False
            continue
        if MULTICAST_BEGIN in line:
            if region_loads is not None or remote_next:
                refuse("a multicast-begin marker inside an open region")
            region_loads, region_map = 0, None
        elif MULTICAST_END in line:
            if region_loads == 0:
                refuse("a multicast region holds no TMA load")
            region_loads = None
            regions += 1
        elif REMOTE_ARRIVE in line:
            if region_loads is not None:
                refuse("a remote-arrive marker inside an open multicast region")
            if remote_next:
                refuse("a remote-arrive marker before the previous one's arrive")
            remote_next = True
        elif region_loads is not None and (m := _LOAD.match(line)):
            # Only B's box: a load of another tensor map, e.g. A's, would be multicast into the peer's A slot and
            # counted twice on its barrier.
            tensor_map = _TENSOR_MAP.match(m.group(3))
            if tensor_map is None or region_map not in (None, tensor_map.group(1)):
                refuse(f"a multicast region holds loads of two tensor maps ({region_map}, {m.group(3).strip()})")
            region_map = tensor_map.group(1)
            multicast_maps.add(region_map)
            line = (f"\t{{ .reg .b16 %wgmc; mov.b16 %wgmc, 3;\n"
                    f"{m.group(1)}{m.group(2)}.multicast::cluster{m.group(3)}, %wgmc; }}")
            region_loads += 1
            loads += 1
        elif m := _LOAD.match(line):  # a load outside the regions (A's): stays plain
            if tensor_map := _TENSOR_MAP.match(m.group(3)):
                plain_maps.add(tensor_map.group(1))
        elif remote_next and (m := _ARRIVE.match(line)):
            # The local arrive, then the same arrive on the peer's barrier (default .release.cta semantics, as
            # CUTLASS's cluster barriers use: what it orders is this CTA's wgmma reads, already retired).
            line = (f"{line}\n"
                    "\t{ .reg .b32 %wgpeer, %wgbar; mov.u32 %wgpeer, %cluster_ctarank; xor.b32 %wgpeer, %wgpeer, 1;\n"
                    f"\tmapa.shared::cluster.u32 %wgbar, {m.group(2)}, %wgpeer;\n"
                    f"\t{m.group(1)}mbarrier.arrive.shared::cluster.b64 _, [%wgbar]; }}")
            arrives += 1
            remote_next = False
        elif remote_next and ("mbarrier." in line or _BRANCH.match(line)):
            # The marked arrive must be the next barrier operation, in the same basic block.
            refuse(f"a remote-arrive marker is followed by {line.strip()!r} before its arrive")
        elif region_loads is not None and _BRANCH.match(line):
            refuse(f"a multicast region spans control flow ({line.strip()!r})")
        out.append(line)
    if region_loads is not None or remote_next:
        refuse("a marker is left open at the end of the PTX")
    shared = multicast_maps & plain_maps
    if shared:
        refuse(f"tensor map {sorted(shared)[0]} is read both by multicast loads and by plain ones")
    return "\n".join(out), loads, arrives, regions


def hint_marked_loads(ptx: str, policy: str = "evict_first") -> tuple[str, int, int]:
    """(ptx with every TMA load between evict-first markers given an L2 `policy`, loads hinted, marked regions).

    Triton 3.6's Gluon TMA load takes no cache hint; the kernel marks the weight's loads with comments
    (partitions.evict_first_begin/end) and each load there gains `.L2::cache_hint` with a
    `createpolicy.fractional.L2::<policy>` made just before it in its own PTX scope. A region may span branches (a
    predicated load, Triton's elected issuing lane) but must close, and must hold a load."""
    out, loads, regions = [], 0, 0
    open_loads = None  # loads seen in the open region; None outside one

    def refuse(why):
        raise ValueError(f"load-hint PTX pass: {why}; triton's PTX no longer has the shape this pass was written for")

    for line in ptx.split("\n"):
        if EVICT_FIRST_BEGIN in line:
            if open_loads is not None:
                refuse("an evict-first-begin marker inside an open region")
            open_loads = 0
        elif EVICT_FIRST_END in line:
            if not open_loads:
                refuse("an evict-first region without a TMA load" if open_loads == 0 else "an unopened region closed")
            open_loads = None
            regions += 1
        elif open_loads is not None and (m := _LOAD.match(line)):
            line = (f"\t{{ .reg .b64 %l2ld; createpolicy.fractional.L2::{policy}.b64 %l2ld, 1.0;\n"
                    f"{m.group(1)}{m.group(2)}.L2::cache_hint{m.group(3)}, %l2ld; }}")
            open_loads += 1
            loads += 1
        out.append(line)
    if open_loads is not None:
        refuse("an evict-first region is left open at the end of the PTX")
    return "\n".join(out), loads, regions


def load_counts(ptx: str) -> tuple[int, int]:
    """(plain, hinted) TMA loads in `ptx`: what the compile checks assert on."""
    return len(_LOAD.findall(ptx)), ptx.count("complete_tx::bytes.L2::cache_hint [")


# Issue operations of the one-partition kernel (one_partition.py): mbarrier inits and expect-tx arrives (made by the
# program's thread 0) and TMA loads (Triton may split one box into chunks issued by different warps' elected lanes).
_ISSUE = re.compile(r"^\t(?:@!?%p\d+ )?(?:mbarrier\.init\.|mbarrier\.arrive\.expect_tx\.|"
                    r"cp\.async\.bulk\.tensor\.\dd\.shared::cluster\.global\.)")
_INIT = re.compile(r"^\t(?:@!?%p\d+ )?mbarrier\.init\.")
# Register-only instructions, comments and debug lines: a barrier's "nearest operation" is looked for across these
# only; any other line (memory, barriers, wgmma, fences, labels, branches, calls, exits...) ends the search.
_REGISTER_ONLY = re.compile(r"^\t(?:@!?%p\d+ )?(?:mov|add|sub|mul|mad|shl|shr|and|or|xor|not|setp|selp|cvt|cvta|shfl|"
                            r"elect|min|max|neg|abs|div|rem|prmt|bfe|bfi|popc|clz|brev|lop3|ld\.param)[.\s]")
_SKIPPED = re.compile(r"^\s*(?://|\.loc\b|$)|^\$L__tmp\d+:$")
_CTA_BARRIER = "\tbar.sync \t0;"


def drop_issue_barriers(ptx: str) -> tuple[str, int]:
    """(ptx without the CTA barriers between two of the one-partition kernel's issue operations, the number dropped).

    Triton's membar pass puts a `bar.sync 0` between every two operations on the ring's shared memory, the issue ones
    included: three per K step loaded (~0.2 us of a short one-partition GEMM's prologue, notes/perf.md session 23).
    None of those orders anything: within one phase of a slot's ready barrier, thread 0's expect-tx arrive and the
    TMA chunks' completions may come in any order (the transaction count may go negative; the phase cannot complete
    before the arrive), and inits are all made by thread 0. A barrier is dropped only where the nearest operation on
    each side, across register-only instructions (`_REGISTER_ONLY`), is an issue operation, and not between an init
    and anything but another init (another warp's TMA chunk must not signal a barrier before it is initialised). The
    barrier after each wgmma wait (another warp's wgmma may still read the slot about to be refilled) and every
    barrier around the epilogue stay."""
    lines = ptx.split("\n")

    def nearest(i, step):
        i += step
        while 0 <= i < len(lines):
            line = lines[i]
            if not (_SKIPPED.match(line) or _REGISTER_ONLY.match(line)):
                return line
            i += step
        return ""

    out, dropped = [], 0
    for i, line in enumerate(lines):
        if line == _CTA_BARRIER:
            before, after = nearest(i, -1), nearest(i, 1)
            if (_ISSUE.match(before) and _ISSUE.match(after)
                    and (not _INIT.match(before) or _INIT.match(after))):
                dropped += 1
                continue
        out.append(line)
    return "\n".join(out), dropped


def _hook(previous):
    def hook(backend, stages, options, language, capability):
        # Triton calls this while setting up a compile, before the trace, on the compiling thread: a flag left by
        # an earlier compile that failed between its trace and its PTX stage must not reach this one.
        _thread.tracing = 0
        _thread.cluster = 1
        _thread.one_partition = False
        _thread.weight_hint = 0
        if previous is not None:
            previous(backend, stages, options, language, capability)
        make_ptx = stages["ptx"]

        def ptx_stage(src, metadata):
            traced = getattr(_thread, "tracing", 0)
            _thread.tracing = 0
            cluster = getattr(_thread, "cluster", 1)
            _thread.cluster = 1
            one_partition = getattr(_thread, "one_partition", False)
            _thread.one_partition = False
            weight_hint = getattr(_thread, "weight_hint", 0)
            _thread.weight_hint = 0
            ptx = make_ptx(src, metadata)
            if KERNEL_ENTRY not in ptx:
                return ptx
            if one_partition:
                ptx, _ = drop_issue_barriers(ptx)
            if weight_hint == LOAD_PASS_VERSION:
                # After the barrier pass (which knows the plain load lines, not hinted ones) and before the cluster
                # pass (which never meets these markers: check_weight_hint_compile).
                try:
                    ptx, loads, regions = hint_marked_loads(ptx)
                except ValueError as e:
                    raise RuntimeError(f"warpgemm: {e}: the weight-hinted variant cannot be built") from None
                if regions == 0:
                    # hint_marked_loads refuses open, nested or empty regions; none at all means Triton dropped the
                    # markers, and the variant would run unhinted under its hinted key.
                    raise RuntimeError("warpgemm: the load-hint PTX pass found no marked TMA loads: triton's PTX has "
                                       "changed, the weight-hinted variant cannot be built")
            if cluster > 1:
                # Without the rewrite a cluster kernel would wait forever for its peer's half of B: refuse it.
                expected = ptx.count(MULTICAST_BEGIN), ptx.count(REMOTE_ARRIVE)
                try:
                    ptx, loads, arrives, regions = cluster_rewrite(ptx, cluster)
                except ValueError as e:
                    raise RuntimeError(f"warpgemm: {e}: cluster_m=2 cannot be built") from None
                if regions != expected[0] or arrives != expected[1] or ".reqnctapercluster" not in ptx:
                    raise RuntimeError(f"warpgemm: the cluster PTX pass closed {regions} multicast regions ({loads} "
                                       f"TMA loads) for {expected[0]} markers and matched {arrives} arrives for "
                                       f"{expected[1]} remote-arrive markers: triton's PTX has changed, cluster_m=2 "
                                       "cannot be built")
            if traced != PASS_VERSION:
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


def check_cluster_compile(cluster_m) -> None:
    """Called while gemm_kernel is traced: a cluster variant must compile under store_hints() (which installs the
    PTX hook that makes it one: cluster_rewrite), and the PTX stage of this compile is told to rewrite it."""
    if cluster_m not in (1, 2):
        raise ValueError(f"CLUSTER_M must be 1 or 2, got {cluster_m!r}")
    if cluster_m > 1 and not hints_active():
        raise RuntimeError("gemm_kernel with CLUSTER_M > 1 is being compiled outside "
                           "warpgemm.kernels.hopper.ptx_hints.store_hints() on this thread: it would not be made a "
                           "cluster kernel")
    _thread.cluster = cluster_m


def check_one_partition_compile(warp_specialize) -> None:
    """Called while gemm_kernel is traced: a one-partition variant (WARP_SPECIALIZE False) compiles under
    store_hints(), whose PTX hook drops its issue barriers (drop_issue_barriers)."""
    if not isinstance(warp_specialize, bool):
        raise ValueError(f"WARP_SPECIALIZE must be a bool, got {warp_specialize!r}")
    if not warp_specialize and not hints_active():
        raise RuntimeError("gemm_kernel with WARP_SPECIALIZE False is being compiled outside "
                           "warpgemm.kernels.hopper.ptx_hints.store_hints() on this thread")
    _thread.one_partition = not warp_specialize


def check_weight_hint_compile(weight_hint, cluster_m) -> None:
    """Called while gemm_kernel is traced: a WEIGHT_HINT variant must compile under store_hints() (whose PTX hook
    hints its marked loads: hint_marked_loads), and the PTX stage of this compile is told to. Not with clusters:
    their multicast regions would nest inside the weight's."""
    if isinstance(weight_hint, bool) or weight_hint not in (0, LOAD_PASS_VERSION):
        raise ValueError(f"WEIGHT_HINT must be 0 or {LOAD_PASS_VERSION} (the load pass's version), got {weight_hint!r}")
    if weight_hint and cluster_m > 1:
        raise ValueError("WEIGHT_HINT is not for cluster variants (CLUSTER_M > 1)")
    if weight_hint and not hints_active():
        raise RuntimeError("gemm_kernel with WEIGHT_HINT set is being compiled outside "
                           "warpgemm.kernels.hopper.ptx_hints.store_hints() on this thread: its loads would not be "
                           "hinted")
    _thread.weight_hint = weight_hint
