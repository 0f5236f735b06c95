"""Ahead-of-time compiles of every shipped Hopper config for sm_90a (no GPU needed).

Each variant must use wgmma and TMA (loads and stores), reallocate registers with setmaxnreg, spill nothing
and fit its shared memory in 227 KB.
"""
import pytest
import torch

from warpgemm.config import SMEM_LIMIT, GemmConfig, check_config
from warpgemm.heuristics import SHIPPED_CONFIGS
from warpgemm.kernels.hopper.aot import compile_gemm, inspect_compiled
from warpgemm.ops.grouped import grouped_config_problem
from warpgemm.ops.grouped_ragged_k import forced_config_problem

VARIANTS = []
for cfg in SHIPPED_CONFIGS:
    for a_k in (True, False):
        for b_k in (True, False):
            VARIANTS.append((cfg, torch.bfloat16, torch.bfloat16, a_k, b_k, False))
    VARIANTS.append((cfg, torch.float16, torch.float16, True, True, True))
    VARIANTS.append((cfg, torch.bfloat16, torch.float32, True, True, True))
# The sweep's other candidates (ping-pong, split-K, other tiles), which users can force with config=.
from warpgemm.candidates import CANDIDATES, CLUSTER_CANDIDATES, WIDE_CANDIDATES  # noqa: E402
from warpgemm.kernels.hopper import ptx_hints  # noqa: E402
from warpgemm.kernels.hopper.ptx_hints import MULTICAST_BEGIN, REMOTE_ARRIVE, drop_issue_barriers  # noqa: E402

for cfg in CANDIDATES:
    if cfg not in SHIPPED_CONFIGS:
        VARIANTS.append((cfg, torch.bfloat16, torch.bfloat16, True, True, False))
        VARIANTS.append((cfg, torch.float16, torch.float32, False, False, True))


@pytest.mark.parametrize("cfg", [c for c in SHIPPED_CONFIGS if grouped_config_problem(c) is None],
                         ids=lambda c: c.name)
@pytest.mark.parametrize("b_kmajor", [False, True])
@pytest.mark.parametrize("offs_table", [False, True], ids=["table", "offs"])
def test_grouped_variant_compiles_clean(cfg, b_kmajor, offs_table, tmp_path):
    """The MoE form: a table scheduler (or one counting row tiles from offs) and row-bounded stores, still no
    spills. Under swap-AB the kernel's A is the experts' weight (batched by group) and its B the tokens."""
    if cfg.block_m < 64 and not b_kmajor:
        with pytest.raises(Exception, match="K-major"):
            compile_gemm(cfg, a_batched=True, b_batched=False, a_kmajor=b_kmajor, grouped=True, offs_table=offs_table)
        return
    if cfg.swap_ab:
        kernel = compile_gemm(cfg, a_batched=True, b_batched=False, a_kmajor=b_kmajor, grouped=True,
                              offs_table=offs_table)
    else:
        kernel = compile_gemm(cfg, a_batched=False, b_batched=True, b_kmajor=b_kmajor, grouped=True,
                              offs_table=offs_table)
    r = inspect_compiled(kernel, "grouped", str(tmp_path))
    assert r.has_wgmma and r.has_tma_load and r.has_setmaxnreg
    assert r.stack_bytes == 0 and r.local_bytes == 0, f"register spills: {r}"
    assert r.shared_bytes <= SMEM_LIMIT


@pytest.mark.parametrize("cfg,out_dtype", [(c, dt) for c in SHIPPED_CONFIGS for dt in (torch.bfloat16, torch.float32)
                                           if forced_config_problem(c) is None and check_config(c, torch.bfloat16, dt)
                                           is None], ids=lambda x: getattr(x, "name", str(x)[6:]))
def test_ragged_k_variant_compiles_clean(cfg, out_dtype, tmp_path):
    """grouped_mm's 2-D x 2-D form (kernels/hopper/ragged_k.py): both operands token-outer, every config it
    accepts (forced or chosen) with each output dtype it fits, no spills."""
    kernel = compile_gemm(cfg, out_dtype=out_dtype, a_kmajor=False, b_kmajor=False, a_batched=False,
                          b_batched=False, ragged_k=True)
    r = inspect_compiled(kernel, "ragged_k", str(tmp_path))
    assert r.has_wgmma and r.has_tma_load and r.has_tma_store and r.has_setmaxnreg
    # Every TMA store of this form is marked evict-first in L2 by the PTX pass (kernels/hopper/ptx_hints.py).
    assert r.hinted_stores > 0 and r.plain_stores == 0, f"{r.hinted_stores} hinted, {r.plain_stores} plain stores"
    assert r.stack_bytes == 0 and r.local_bytes == 0, f"register spills: {r}"
    assert r.shared_bytes <= SMEM_LIMIT


@pytest.mark.parametrize("cfg", WIDE_CANDIDATES, ids=lambda c: c.name)
def test_wide_tiles_are_dense_only(cfg):
    for kw in (dict(grouped=True, a_batched=False, b_batched=True), dict(ragged_k=True, a_kmajor=False)):
        with pytest.raises(ValueError, match="two-part widths"):
            compile_gemm(cfg, **kw)


def test_device_dispatched_grouped_pair_compiles_clean(tmp_path):
    """The two GEMMs grouped_mm may launch on one table (ops/grouped.py, streaming_config), each with its run
    condition on the table."""
    from warpgemm.heuristics import GROUPED_LARGE, GROUPED_STREAM
    from warpgemm.kernels.hopper.expert_scheduler import RUN_IF_REUSED, RUN_IF_STREAMING

    for cfg, when in ((GROUPED_STREAM, RUN_IF_STREAMING), (GROUPED_LARGE, RUN_IF_REUSED)):
        kernel = compile_gemm(cfg, a_batched=False, b_batched=True, grouped=True, when=when)
        r = inspect_compiled(kernel, "grouped_when", str(tmp_path))
        assert r.has_wgmma and r.has_tma_load and r.stack_bytes == 0 and r.local_bytes == 0, r
        assert r.shared_bytes <= SMEM_LIMIT


@pytest.mark.parametrize("grouped", [False, True], ids=["dense", "grouped"])
@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32], ids=["bf16", "fp32"])
def test_pointer_stores_are_16_byte_vectors(grouped, out_dtype):
    """The epilogues that store with pointers (a grouped tile's rows up to its group's end, swap-AB's transposed
    tile) must emit 16-byte stores when C's rows end on 16 bytes: the compiler cannot see that from descriptor
    strides and bounds by itself, and one store per element made a partial grouped tile ~15 us slower."""
    import re

    from warpgemm.heuristics import DECODE, GROUPED_LARGE

    cases = [(DECODE[16], dict(a_batched=grouped, b_batched=False, a_kmajor=True))]
    if grouped:
        cases.append((GROUPED_LARGE, dict(a_batched=False, b_batched=True)))
    for cfg, kw in cases:
        ptx = compile_gemm(cfg, out_dtype=out_dtype, grouped=grouped, **kw).asm["ptx"]
        assert re.search(r"st\.global\.v4", ptx), f"{cfg.name}: no 16-byte pointer stores"


def _id(v):
    cfg, i, o, a_k, b_k, bias = v
    return (f"{cfg.name}-{str(i)[6:]}-{str(o)[6:]}-A{'k' if a_k else 'm'}-B{'k' if b_k else 'n'}"
            f"{'-bias' if bias else ''}")


@pytest.mark.parametrize("variant", VARIANTS, ids=_id)
def test_hopper_variant_compiles_clean(variant, tmp_path):
    cfg, in_dt, out_dt, a_k, b_k, bias = variant
    if check_config(cfg, in_dt, out_dt) is not None:
        pytest.skip(f"{cfg.name} is not valid for {in_dt}->{out_dt}: {check_config(cfg, in_dt, out_dt)}")
    if cfg.block_m < 64 and not a_k:
        # 32-row swap-AB tiles need the weight K-major (the host falls back to 64-row tiles or copies it first).
        with pytest.raises(Exception, match="K-major"):
            compile_gemm(cfg, in_dtype=in_dt, out_dtype=out_dt, a_kmajor=a_k, b_kmajor=b_k, has_bias=bias)
        return
    kernel = compile_gemm(cfg, in_dtype=in_dt, out_dtype=out_dt, a_kmajor=a_k, b_kmajor=b_k, has_bias=bias)
    r = inspect_compiled(kernel, "gemm", str(tmp_path))
    assert r.has_wgmma, "no wgmma.mma_async in the PTX"
    assert r.has_tma_load, "TMA bulk tensor loads missing"
    # Swap-AB stores a whole transposed tile from registers, one in chunks through TMA (swap_rows.py); every other
    # kernel stores through TMA.
    assert r.has_tma_store != (cfg.swap_ab and cfg.store_chunks == 1), "TMA store missing (or present in a " \
        "swap-AB kernel that stores from registers)"
    assert r.has_setmaxnreg, "no register reallocation between partitions"
    assert r.stack_bytes == 0 and r.local_bytes == 0, f"register spills: {r}"
    assert r.shared_bytes <= SMEM_LIMIT
    assert r.shared_bytes <= cfg.smem_bytes(in_dt, out_dt), "the config's shared-memory estimate is too low"
    assert r.hinted_stores == 0, "only the ragged-K form's stores carry L2 hints"


def test_ping_pong_register_counts_are_the_planned_ones(tmp_path):
    """setmaxnreg.inc blocks until registers are free, so the counts the compiler emits inside the region must be
    the ones test_config checks against the register file: worker consumer as requested, default consumer what
    the producer and the worker leave of 3 warpgroups x maxnreg."""
    import re

    from warpgemm.config import GemmConfig, launch_warps, worker_consumer_regs

    cfg = GemmConfig(128, 128, 64, 5, 4, consumers=2)
    counts = set(int(x) for x in re.findall(r"setmaxnreg\.(?:inc|dec)\.sync\.aligned\.u32\s+(\d+);",
                                             compile_gemm(cfg).asm["ptx"]))
    _, maxnreg = launch_warps(cfg)
    worker = worker_consumer_regs(cfg)
    default = 3 * maxnreg - worker - cfg.producer_regs
    assert {worker, default, cfg.producer_regs} <= counts, (worker, default, sorted(counts))
    assert 4 * 32 * (worker + default + cfg.producer_regs) <= 65536


from warpgemm.bench.elementwise_bench import SWEEP_CONFIGS  # noqa: E402
from warpgemm.config import check_stream_config  # noqa: E402
from warpgemm.kernels.hopper.aot import compile_elementwise  # noqa: E402
from warpgemm.ops.elementwise import default_stream_config  # noqa: E402

STREAM_VARIANTS = [(default_stream_config(dt), dt) for dt in (torch.float32, torch.bfloat16, torch.float16)]
STREAM_VARIANTS += [(cfg, torch.float32) for cfg in SWEEP_CONFIGS]


@pytest.mark.parametrize("variant", STREAM_VARIANTS, ids=lambda v: f"{v[0].name}-{str(v[1])[6:]}")
def test_elementwise_variant_compiles_clean(variant, tmp_path):
    cfg, dtype = variant
    assert check_stream_config(cfg, dtype) is None
    r = inspect_compiled(compile_elementwise(cfg, dtype), "ew", str(tmp_path))
    assert r.has_tma_load and r.has_tma_store, "TMA bulk tensor copies missing"
    assert r.has_setmaxnreg, "the load/store warps' register budget was not applied"
    assert r.stack_bytes == 0 and r.local_bytes == 0, f"register spills: {r}"
    assert r.shared_bytes <= cfg.smem_bytes(dtype.itemsize) and r.shared_bytes * cfg.ctas_per_sm <= SMEM_LIMIT


def test_gemm_kernels_wait_on_the_prior_grid_before_any_access():
    """Launched with programmatic dependent launch, the GEMM may start while the kernel before it runs: every
    partition must execute griddepcontrol.wait (and the kernel lets its own successor launch early)."""
    from warpgemm.config import GemmConfig

    for cfg, grouped in ((GemmConfig(64, 16, 256, 5, 4, swap_ab=True), False), (SHIPPED_CONFIGS[0], True)):
        k = compile_gemm(cfg, a_batched=not grouped, b_batched=grouped, grouped=grouped)
        ptx = k.asm["ptx"]
        assert k.metadata.launch_pdl
        assert ptx.count("griddepcontrol.wait") >= 2 and "griddepcontrol.launch_dependents" in ptx


_GROUP_COMPILE = """
import json, sys, tempfile
from warpgemm.kernels.hopper.aot import compile_group_gemm, inspect_compiled
out = []
for tile in ("small", "medium", "large"):
    for b_kmajor in (False, True):
        k = compile_group_gemm(tile, b_kmajor=b_kmajor)
        r = inspect_compiled(k, "group_" + tile, tempfile.mkdtemp())
        out.append(dict(r._asdict(), tile=tile, b_kmajor=b_kmajor, scratch=k.metadata.global_scratch_size,
                        tensormap="tensormap.replace" in k.asm["ptx"]))
print(json.dumps(out))
"""


_GEMV_COMPILE = """
import json, re, tempfile, torch
from warpgemm.kernels.hopper.aot import compile_gemv, compile_gemv_rows, inspect_compiled
out = []
for name, compile_fn in (("gemv", compile_gemv), ("gemv_rows", compile_gemv_rows)):
    for kw in (dict(), dict(K=4000, has_bias=True), dict(dtype=torch.float16, out_dtype=torch.float32)):
        k = compile_fn(**kw)
        ptx = k.asm["ptx"]
        r = inspect_compiled(k, name, tempfile.mkdtemp())
        out.append(dict(r._asdict(), v4_loads=len(re.findall(r"ld\\.global(\\.[\\w:]+)*\\.v4", ptx)),
                        evict_first_loads=len(re.findall(r"ld\\.global\\S*L2::cache_hint\\S*\\.v4", ptx)),
                        shuffles=ptx.count("shfl.sync"), pdl=k.metadata.launch_pdl,
                        wait_first=ptx.index("griddepcontrol.wait") < ptx.index("ld.global")))
print(json.dumps(out))
"""


def _run_clean(code: str) -> str:
    """Run `code` in a Python process without TRITON_INTERPRET (plain Triton kernels compile only there)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env["PYTHONPATH"] = root + os.pathsep + env.get("PYTHONPATH", "")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.strip().splitlines()[-1]


def test_gemv_kernel_streams_16_byte_loads():
    """The GEMVs (one row: plain Triton; two rows: Gluon) read the weight with 16-byte loads (one per lane per row
    piece) that carry an L2 evict-first policy (gemv.weight_eviction), do not spill, and, launched with programmatic
    dependent launch, wait on the prior grid before their first load."""
    import json

    from warpgemm.kernels import gemv_rows

    reports = json.loads(_run_clean(_GEMV_COMPILE))
    assert {r["name"] for r in reports} == {"gemv", "gemv_rows"}
    for r in reports:
        assert r["stack_bytes"] == 0 and r["local_bytes"] == 0, r
        assert r["pdl"] and r["wait_first"], r
        assert r["evict_first_loads"] > 0, r
        if r["name"] == "gemv":
            assert r["v4_loads"] >= gemv_v4_loads_expected(), r
        else:
            # One 16-byte load per weight row and per x row for each thread; the K fold inside the thread needs no
            # shuffles, so the only ones are the final reduction's (2 rows x BLOCK_N outputs, 5 steps of a warp).
            assert r["v4_loads"] >= gemv_rows.BLOCK_N + 2, r
            assert r["shuffles"] <= 2 * gemv_rows.BLOCK_N * 5 + 8, r
            assert r["registers"] <= 96, r


def gemv_v4_loads_expected() -> int:
    from warpgemm.kernels import gemv

    # Each step loads BLOCK_N x BLOCK_K 16-bit weights: 8 per 16-byte load, spread over the lanes.
    return gemv.BLOCK_N * gemv.BLOCK_K // 8 // (32 * gemv.NUM_WARPS)


def test_group_gemm_kernel_compiles_clean():
    """group_gemm's TMA kernel (plain Triton, so compiled in a process without the interpreter): wgmma fed by TMA,
    descriptors built on the device (tensormap in global scratch), no spills, and its programs per SM fit in
    shared memory together."""
    import json

    from warpgemm.kernels.hopper.group_gemm_tma import TILE_CONFIGS

    reports = json.loads(_run_clean(_GROUP_COMPILE))
    assert len(reports) == 6
    for r in reports:
        assert r["has_wgmma"] and r["has_tma_load"] and r["tensormap"] and r["scratch"] > 0, r
        assert r["stack_bytes"] == 0 and r["local_bytes"] == 0, r
        per_sm = TILE_CONFIGS[r["tile"]][5]
        assert per_sm * (r["shared_bytes"] + 1024) <= 228 * 1024, r


@pytest.mark.parametrize("cfg", CLUSTER_CANDIDATES, ids=lambda c: c.name)
def test_cluster_variant_is_rewritten_into_a_cluster_kernel(cfg):
    """The PTX pass (ptx_hints.cluster_rewrite) must have made every marked B load a multicast and every marked
    release an arrive on the peer too, at CTA scope (a cluster-scope release cost 25% on the GPU), and set the
    cluster shape on the entry: without it the kernel would wait forever for its peer's half of B."""
    ptx = compile_gemm(cfg, a_batched=False).asm["ptx"]
    assert ".reqnctapercluster 2, 1, 1" in ptx
    # One multicast per box of B (two row halves; a two-part tile's rest-wide boxes each cut in two).
    assert ptx.count(".multicast::cluster [") == ptx.count(MULTICAST_BEGIN) == cfg.b_pieces_for(True) >= 2
    assert ptx.count("mapa.shared::cluster.u32") == ptx.count(REMOTE_ARRIVE) >= 1
    assert ptx.count("mbarrier.arrive.shared::cluster.b64") == ptx.count(REMOTE_ARRIVE)
    assert ".release.cluster.shared::cluster" not in ptx
    assert ptx.count("barrier.cluster.arrive") == 2  # one per partition: producer and consumer


@pytest.mark.parametrize("cfg", CLUSTER_CANDIDATES, ids=lambda c: c.name)
def test_cluster_variant_reads_an_n_major_weight_in_pieces(cfg, tmp_path):
    """B row-major (K, N): each CTA loads every other piece of the tile's columns (a power-of-two tile's halves, a
    two-part tile's rest-wide boxes whole: 128x192 two of 64 columns and one), one marked region a piece; Triton may
    cut a piece wider than the 128-byte swizzle into messages issued by several producer warps, each made a
    multicast. No spills."""
    kernel = compile_gemm(cfg, a_batched=False, b_kmajor=False)
    ptx = kernel.asm["ptx"]
    assert ".reqnctapercluster 2, 1, 1" in ptx
    pieces = cfg.b_pieces_for(False)
    assert ptx.count(MULTICAST_BEGIN) == pieces == {128: 2, 256: 2, 192: 3, 160: 5}[cfg.block_n]
    assert ptx.count(".multicast::cluster [") == pieces  # one instruction a piece (several warps may issue it)
    assert ptx.count("mbarrier.arrive.shared::cluster.b64") == ptx.count(REMOTE_ARRIVE) >= 1
    r = inspect_compiled(kernel, f"n_major_{cfg.name}", str(tmp_path))
    assert r.stack_bytes == 0 and r.local_bytes == 0, f"register spills: {r}"


@pytest.mark.parametrize("scale", [1, 2], ids=["tensorwise", "rowwise"])
def test_fp8_cluster_variant_is_rewritten_and_does_not_spill(scale, tmp_path):
    """scaled_mm takes a forced cluster config too: the same rewrite on fp8 operands with the scales' epilogue."""
    cfg = GemmConfig(128, 256, 128, 3, 8, cluster_m=2)
    kernel = compile_gemm(cfg, in_dtype=torch.float8_e4m3fn, a_batched=False, scale=scale)
    ptx = kernel.asm["ptx"]
    assert ".reqnctapercluster 2, 1, 1" in ptx
    assert ptx.count(".multicast::cluster [") == ptx.count(MULTICAST_BEGIN) == 2
    assert ptx.count("mbarrier.arrive.shared::cluster.b64") == ptx.count(REMOTE_ARRIVE) >= 1
    r = inspect_compiled(kernel, "fp8_cluster", str(tmp_path))
    assert r.stack_bytes == 0 and r.local_bytes == 0, f"register spills: {r}"


def test_plain_variant_has_no_cluster_code():
    ptx = compile_gemm(SHIPPED_CONFIGS[0], a_batched=False).asm["ptx"]
    assert "reqnctapercluster" not in ptx and "multicast" not in ptx and "mapa" not in ptx
    assert "barrier.cluster" not in ptx


def _one_partition_cases():
    from warpgemm.one_partition_rule import one_partition_variants

    cases = []
    for cfg in one_partition_variants(SHIPPED_CONFIGS):
        cases.append((cfg, torch.bfloat16, torch.bfloat16, True, True, False))
        if cfg.stages == 2:
            cases.append((cfg, torch.float16, torch.float32, cfg.block_m < 64, False, True))
    return cases


@pytest.mark.parametrize("variant", _one_partition_cases(), ids=_id)
def test_one_partition_variant_compiles_clean(variant, tmp_path):
    """What the one-partition rule can choose (one_partition_rule.py): wgmma and TMA in one partition (no setmaxnreg),
    no spills, and Triton's CTA barriers between the single-thread TMA issues dropped by the PTX pass: what stays
    is the one before each wait on a slot, the one after each wgmma wait (another warp's wgmma may still read the
    slot about to be refilled), and those around the epilogue."""
    cfg, in_dt, out_dt, a_k, b_k, bias = variant
    if check_config(cfg, in_dt, out_dt) is not None:
        pytest.skip(f"{cfg.name} is not valid for {in_dt}->{out_dt}: {check_config(cfg, in_dt, out_dt)}")
    kernel = compile_gemm(cfg, in_dtype=in_dt, out_dtype=out_dt, a_kmajor=a_k, b_kmajor=b_k, has_bias=bias)
    r = inspect_compiled(kernel, "one_partition", str(tmp_path))
    assert r.has_wgmma and r.has_tma_load and not r.has_setmaxnreg, r
    assert r.stack_bytes == 0 and r.local_bytes == 0, f"register spills: {r}"
    assert r.shared_bytes <= SMEM_LIMIT
    ptx = kernel.asm["ptx"]
    assert ptx.count("barrier.sync") == 0  # no warp_specialize
    # The pass ran: nothing it would drop is left, and TMA loads follow one another with no barrier between (Triton
    # puts one before every load).
    assert drop_issue_barriers(ptx)[1] == 0
    loads = [line for line in ptx.splitlines() if "cp.async.bulk.tensor" in line or line == "\tbar.sync \t0;"]
    unbarred = sum(a != "\tbar.sync \t0;" and b != "\tbar.sync \t0;" for a, b in zip(loads, loads[1:]))
    assert unbarred > 0, "every TMA load still follows a CTA barrier"
    # And what must stay: a barrier after each wgmma wait before anything else touches memory, and one between the
    # last barrier init and the first TMA load (another warp may issue it).
    lines = ptx.splitlines()
    for i, line in enumerate(lines):
        if "wgmma.wait_group.sync.aligned" in line:
            j = i + 1
            while ptx_hints._SKIPPED.match(lines[j]) or ptx_hints._REGISTER_ONLY.match(lines[j]):
                j += 1
            assert lines[j] == "\tbar.sync \t0;", f"no CTA barrier after {line.strip()!r}: {lines[j]!r}"
    last_init = max(i for i, line in enumerate(lines) if "mbarrier.init" in line)
    first_load = next(i for i, line in enumerate(lines) if i > last_init and "cp.async.bulk.tensor" in line)
    assert "\tbar.sync \t0;" in lines[last_init:first_load]


def test_one_partition_variants_are_dense_only():
    from warpgemm.heuristics import SMALL

    flat = SMALL.replace(warp_specialize=False)
    for kw in (dict(grouped=True, a_batched=False, b_batched=True),
               dict(ragged_k=True, a_kmajor=False, b_kmajor=False)):
        with pytest.raises(ValueError, match="one-partition kernel"):
            compile_gemm(flat, **kw)


def _descriptor_registers(ptx: str) -> dict:
    """gemm_kernel's PTX registers that hold a TMA descriptor, each mapped to its operand ("A", "B", "C"): traced back
    to the kernel parameter (the descriptors are the 128-byte parameters, in the order A, B, C)."""
    import re

    descs = sorted(int(m) for m in re.findall(r"\.b8 gemm_kernel_param_(\d+)\[128\]", ptx))
    names = dict(zip(descs, "ABC"))
    reg = {m[0]: names[int(m[1])] for m in re.findall(r"mov\.b64 \t(%rd\d+), gemm_kernel_param_(\d+);", ptx)
           if int(m[1]) in names}
    for dst, src in re.findall(r"cvta\.param\.u64 \t(%rd\d+), (%rd\d+);", ptx):
        if src in reg:
            reg[dst] = reg[src]
    return reg


def _load_operands(ptx: str) -> dict:
    """Which operands ("A", "B") the plain and the L2-hinted TMA loads of gemm_kernel's PTX read."""
    import re

    reg = _descriptor_registers(ptx)
    out = {"hinted": set(), "plain": set()}
    for hint, desc in re.findall(r"complete_tx::bytes(\.L2::cache_hint)? \[[^\]]*\], \[(%rd\d+),", ptx):
        out["hinted" if hint else "plain"].add(reg.get(desc, "?"))
    return out


@pytest.mark.parametrize("cfg,b_k", [(c, b_k) for c in SHIPPED_CONFIGS if c.cluster_m == 1
                                     and check_config(c, torch.bfloat16, torch.bfloat16) is None
                                     for b_k in (True, False)],
                         ids=lambda x: getattr(x, "name", "b_kmajor" if x is True else "b_nmajor"))
def test_weight_hinted_variant_compiles_clean(cfg, b_k, tmp_path):
    """Dense products of few rows mark the weight's TMA loads evict-first (gemm.weight_evict_first); any shipped
    config may meet one (forced, or chosen), on either weight layout. Exactly the weight's loads (B, or A under
    swap-AB) carry the policy, the activations' stay plain, and the variant still spills nothing."""
    kernel = compile_gemm(cfg, a_batched=False, b_kmajor=b_k, weight_hint=True)
    weight, act = ("A", "B") if cfg.swap_ab else ("B", "A")
    assert _load_operands(kernel.asm["ptx"]) == {"hinted": {weight}, "plain": {act}}
    r = inspect_compiled(kernel, "weight_hint", str(tmp_path))
    assert r.stack_bytes == 0 and r.local_bytes == 0, f"register spills: {r}"
    assert r.shared_bytes <= SMEM_LIMIT


@pytest.mark.parametrize("cfg", [GemmConfig(64, 64, 128, 4, 4, warp_specialize=False),
                                 GemmConfig(64, 16, 256, 4, 4, swap_ab=True, warp_specialize=False),
                                 GemmConfig(128, 256, 64, 3, 8, warp_specialize=False)], ids=lambda c: c.name)
def test_weight_hint_keeps_the_one_partition_barrier_pass(cfg):
    """The one-partition kernel's issue barriers are dropped before the weight's loads are hinted (the barrier pass
    knows plain load lines only): a hinted variant has as few CTA barriers as the plain one."""
    plain = compile_gemm(cfg, a_batched=False).asm["ptx"]
    hinted = compile_gemm(cfg, a_batched=False, weight_hint=True).asm["ptx"]
    assert _load_operands(hinted)["hinted"]
    assert hinted.count("bar.sync \t0;") == plain.count("bar.sync \t0;")


def _load_wait_events(ptx: str) -> list:
    """gemm_kernel's TMA loads ("A", "B": the operand each reads) and griddepcontrol.wait ("wait"), in PTX order."""
    import re

    reg = _descriptor_registers(ptx)
    events = []
    for line in ptx.splitlines():
        if "griddepcontrol.wait" in line:
            events.append("wait")
        m = re.search(r"cp\.async\.bulk\.tensor.*complete_tx::bytes\S* \[[^\]]*\], \[(%rd\d+),", line)
        if m:
            events.append(reg.get(m.group(1), "?"))
    return events


def _weight_loads_before_a_wait(events: list) -> bool:
    """Whether some load of A (the weight under swap-AB) is followed by a wait with no load of B in between."""
    pending = False
    for e in events:
        if e == "A":
            pending = True
        elif e == "B":
            pending = False
        elif e == "wait" and pending:
            return True
    return False


@pytest.mark.parametrize("cfg,a_k", [(c, a_k) for c in SHIPPED_CONFIGS
                                     if c.swap_ab and c.store_chunks == 1 and c.warp_specialize and c.cluster_m == 1
                                     for a_k in ((True, False) if c.block_m >= 64 else (True, ))],
                         ids=lambda x: getattr(x, "name", "w_kmajor" if x is True else "w_nmajor"))
def test_static_weight_variant_compiles_clean(cfg, a_k, tmp_path):
    """A static weight (static_weights.py) lets a swap-AB launch load its first ring-full of weight boxes before it
    waits on the prior grid: in the producer some weight (A) loads come before a wait and no activation (B) load
    does; the variant without the promise issues no load before its waits; both spill nothing."""
    early = compile_gemm(cfg, a_batched=False, a_kmajor=a_k, weight_hint=True, early_weight=True)
    plain = compile_gemm(cfg, a_batched=False, a_kmajor=a_k, weight_hint=True)
    events = _load_wait_events(early.asm["ptx"])
    assert _weight_loads_before_a_wait(events), events
    assert not _weight_loads_before_a_wait(_load_wait_events(plain.asm["ptx"]))
    # The producer's stretch: from the wait before its first load to the wait after it. Only weight loads there.
    first = next(i for i, e in enumerate(events) if e in "AB")
    start = max(i for i in range(first) if events[i] == "wait")
    end = events.index("wait", first)
    assert set(events[start + 1:end]) == {"A"}, f"an activation load before the producer's wait: {events}"
    r = inspect_compiled(early, "early_weight", str(tmp_path))
    assert r.stack_bytes == 0 and r.local_bytes == 0, f"register spills: {r}"
    assert r.shared_bytes <= SMEM_LIMIT


def test_static_weight_needs_a_dense_warp_specialized_swap_ab_variant():
    from warpgemm.heuristics import SMALL

    swap = GemmConfig(64, 16, 256, 5, 4, swap_ab=True)
    for cfg, kw in ((SMALL, {}), (swap.replace(warp_specialize=False), {}),
                    (swap, dict(grouped=True, a_batched=True, b_batched=False))):
        with pytest.raises(ValueError, match="early_weight is for dense swap-AB"):
            compile_gemm(cfg, early_weight=True, **kw)


def _load_counts_by_operand(ptx: str) -> dict:
    """TMA loads of gemm_kernel's PTX per operand ("A", "B")."""
    import collections
    import re

    reg = _descriptor_registers(ptx)
    loads = r"complete_tx::bytes(?:\.multicast::cluster)?(?:\.L2::cache_hint)? \[[^\]]*\], \[(%rd\d+),"
    return collections.Counter(reg.get(desc, "?") for desc in re.findall(loads, ptx))


def _edge_variants():
    from warpgemm.heuristics import FP8_CONFIGS
    from warpgemm.kernels.hopper.gemm import EDGE_PIECES, edge_pieces

    out = []
    for cfg in dict.fromkeys(SHIPPED_CONFIGS + FP8_CONFIGS + CANDIDATES + CLUSTER_CANDIDATES + WIDE_CANDIDATES):
        # Configs that take pieces somewhere (the heuristics' and the ones users and the tuner can force): a last
        # tile-row more than one piece short of full, after a full one.
        if edge_pieces(cfg, 2 * cfg.block_m + 1, True) == EDGE_PIECES:
            fp8 = cfg in FP8_CONFIGS
            for b_k in ((True, ) if fp8 else (True, False)):
                out.append((cfg, fp8, b_k))
    return out


@pytest.mark.parametrize("cfg,fp8,b_k", _edge_variants(),
                         ids=lambda x: getattr(x, "name", str(x)))
def test_edge_pieces_variant_compiles_clean(cfg, fp8, b_k, tmp_path):
    """A tile-row past A's last row loads A in EDGE_PIECES boxes of rows (gemm.edge_pieces): every config the rule
    can give pieces compiles with EDGE_PIECES times the plain variant's A loads and the same B loads, in the same
    shared memory, without spills (fp8: with its per-row scales, which the same plans meet)."""
    from warpgemm.kernels.hopper.gemm import EDGE_PIECES

    kw = dict(in_dtype=torch.float8_e4m3fn, scale=2) if fp8 else dict(b_kmajor=b_k, has_bias=True)
    plain = compile_gemm(cfg, a_batched=False, **kw)
    pieces = compile_gemm(cfg, a_batched=False, a_pieces=EDGE_PIECES, **kw)
    n_plain, n_pieces = _load_counts_by_operand(plain.asm["ptx"]), _load_counts_by_operand(pieces.asm["ptx"])
    assert n_plain["B"] > 0 and n_plain["A"] > 0, n_plain
    assert n_pieces["A"] == EDGE_PIECES * n_plain["A"] and n_pieces["B"] == n_plain["B"], (n_plain, n_pieces)
    r, r0 = inspect_compiled(pieces, "pieces", str(tmp_path)), inspect_compiled(plain, "plain", str(tmp_path))
    assert r.stack_bytes == 0 and r.local_bytes == 0, f"register spills: {r}"
    assert r.shared_bytes == r0.shared_bytes <= SMEM_LIMIT


def test_edge_pieces_only_where_measured():
    """The rule (gemm.edge_pieces): pieces where the last tile-row is more than a quarter empty and follows a full one,
    on plain tiles of one consumer warpgroup (no ping-pong) with a K-major A, in dense warp-specialized products; one
    box elsewhere, and a variant that cannot take pieces (or not that many) is refused."""
    from warpgemm.heuristics import CLUSTER_MEDIUM, LARGE, MEDIUM, NARROW, SMALL, WIDE_160
    from warpgemm.kernels.hopper.gemm import edge_pieces, kernel_constexprs, operand_blocks

    assert [edge_pieces(MEDIUM, m, True) for m in (389, 416, 479, 480, 500, 512, 130, 67)] == [4, 4, 4, 1, 1, 1, 4, 1]
    assert [edge_pieces(NARROW, m, True) for m in (65, 67, 80, 96, 112, 113, 128)] == [4, 4, 4, 4, 1, 1, 1]
    assert edge_pieces(SMALL, 197, True) == 4 and edge_pieces(CLUSTER_MEDIUM, 389, True) == 4
    # A cluster pair's phantom lower tile (an odd number of tile-rows) takes no pieces; its box clamps instead.
    assert [edge_pieces(CLUSTER_MEDIUM, m, True) for m in (128, 256, 384, 480, 640)] == [1, 1, 1, 1, 1]
    # Two warpgroups (128x256, 128x160), swap-AB, an A read along M, grouped and ragged-K products: one box.
    assert edge_pieces(LARGE, 389, True) == edge_pieces(WIDE_160, 952, True) == 1
    assert edge_pieces(GemmConfig(64, 16, 256, 5, 4, swap_ab=True), 4100, True) == 1
    assert edge_pieces(MEDIUM, 389, False) == edge_pieces(MEDIUM, 389, True, grouped=True) == 1
    assert edge_pieces(MEDIUM, 389, True, ragged_k=True) == 1
    assert edge_pieces(GemmConfig(64, 64, 128, 4, 4, warp_specialize=False), 67, True) == 1
    # Ping-pong consumers, and a single partial tile-row (33-47 rows on 64x128x128 tiles): not measured.
    assert edge_pieces(MEDIUM.replace(stages=5, consumers=2), 389, True) == 1
    assert edge_pieces(GemmConfig(64, 128, 128, 4, 4), 40, True) == 1
    with pytest.raises(ValueError, match="pieces of 8k rows"):
        kernel_constexprs(MEDIUM, True, True, False, False, False, a_pieces=3)
    with pytest.raises(ValueError, match="pieces of 8k rows"):
        kernel_constexprs(NARROW, True, True, False, False, False, a_pieces=16)
    assert operand_blocks(MEDIUM, True, True, 4)[0] == (1, 32, 64)
    with pytest.raises(ValueError, match="K-major A"):
        operand_blocks(MEDIUM, False, True, 4)
    with pytest.raises(ValueError, match="A tiles in pieces"):
        kernel_constexprs(MEDIUM, True, True, False, False, False, grouped=True, a_pieces=4)


def test_phantom_a_only_for_pairs_with_a_phantom_tile():
    """gemm.phantom_a: a dense cluster pair over an odd number of tile-rows (with PHANTOM_A), nothing else."""
    from unittest import mock

    from warpgemm.heuristics import CLUSTER_LARGE, CLUSTER_MEDIUM, MEDIUM
    from warpgemm.kernels.hopper import gemm
    from warpgemm.kernels.hopper.gemm import kernel_constexprs, phantom_a

    assert gemm.PHANTOM_A
    assert [phantom_a(CLUSTER_MEDIUM, m) for m in (100, 128, 129, 256, 257, 384, 385, 640)] == \
        [True, True, False, False, True, True, False, True]
    assert [phantom_a(CLUSTER_LARGE, m) for m in (2851, 2944, 3000)] == [True, True, False]
    assert not phantom_a(MEDIUM, 384) and not phantom_a(CLUSTER_MEDIUM, 384, grouped=True)
    assert not phantom_a(CLUSTER_MEDIUM, 384, ragged_k=True)
    with mock.patch.object(gemm, "PHANTOM_A", False):
        assert not phantom_a(CLUSTER_MEDIUM, 384)
    with pytest.raises(ValueError, match="a_phantom"):
        kernel_constexprs(MEDIUM, True, True, False, False, False, a_phantom=True)


def _phantom_variants():
    from warpgemm.heuristics import FP8_CONFIGS
    from warpgemm.kernels.hopper.gemm import EDGE_PIECES, edge_pieces

    out = []
    for cfg in dict.fromkeys(SHIPPED_CONFIGS + CLUSTER_CANDIDATES + FP8_CONFIGS):
        if cfg.cluster_m != 2:
            continue
        if cfg in FP8_CONFIGS:
            out.append((cfg, True, True, True, 1))
            continue
        # A along M or K-major, B N-major (the 128x192 pair's odd 2 + 1 box split) or K-major, A in pieces where
        # the rule gives this config pieces (a partial last tile-row with a phantom after it).
        pieces = EDGE_PIECES if edge_pieces(cfg, 2 * cfg.block_m + 1, True) == EDGE_PIECES else 1
        out += [(cfg, False, True, True, 1), (cfg, False, False, True, 1), (cfg, False, True, False, 1)]
        if pieces > 1:
            out += [(cfg, False, True, True, pieces), (cfg, False, True, False, pieces)]
    return out


@pytest.mark.parametrize("cfg,fp8,a_k,b_k,pieces", _phantom_variants(), ids=lambda x: getattr(x, "name", str(x)))
def test_phantom_a_variant_compiles_clean(cfg, fp8, a_k, b_k, pieces, tmp_path):
    """A cluster pair whose phantom tile loads no A (A_PHANTOM): the plain variant's A loads, its B loads twice (a
    B-only copy of the unit's loop), the same shared memory, no spills; A K-major or along M, B K-major or N-major,
    A in pieces (fp8: K-major, per-row scales)."""
    kw = (dict(in_dtype=torch.float8_e4m3fn, scale=2) if fp8
          else dict(a_kmajor=a_k, b_kmajor=b_k, has_bias=True, a_pieces=pieces))
    plain = compile_gemm(cfg, a_batched=False, **kw)
    phantom = compile_gemm(cfg, a_batched=False, a_phantom=True, **kw)
    n_plain, n_phantom = _load_counts_by_operand(plain.asm["ptx"]), _load_counts_by_operand(phantom.asm["ptx"])
    assert n_phantom["A"] == n_plain["A"] > 0 and n_phantom["B"] == 2 * n_plain["B"] > 0, (n_plain, n_phantom)
    r, r0 = inspect_compiled(phantom, "phantom", str(tmp_path)), inspect_compiled(plain, "plain", str(tmp_path))
    assert r.stack_bytes == 0 and r.local_bytes == 0, f"register spills: {r}"
    assert r.shared_bytes == r0.shared_bytes <= SMEM_LIMIT


def test_edge_shift_only_where_measured():
    """gemm.edge_shift: a last tile-column / tile-row past the edge, after a full one, on warp-specialized tiles of one
    consumer warpgroup (columns only for cluster pairs); not on 128x256 or two-part tiles (unless
    EDGE_SHIFT_TWO_PART), ping-pong, stream-K, grouped, ragged-K or one-partition launches; the serpentine off where
    it shifts."""
    from unittest import mock

    from warpgemm.heuristics import CLUSTER_MEDIUM, LARGE, MEDIUM, NARROW, SMALL, WIDE_160
    from warpgemm.kernels.hopper import gemm
    from warpgemm.kernels.hopper.gemm import edge_shift, kernel_constexprs

    assert [edge_shift(MEDIUM, m, n) for m, n in ((389, 1000), (384, 1000), (389, 1024), (512, 1024), (128, 1000),
                                                  (100, 129), (129, 100))] == [3, 1, 2, 0, 1, 1, 2]
    assert edge_shift(SMALL, 197, 904) == edge_shift(NARROW, 67, 1000) == 3
    assert edge_shift(CLUSTER_MEDIUM, 389, 1000) == 1  # a pair's rows: gemm.phantom_a / edge_pieces
    assert edge_shift(GemmConfig(64, 32, 256, 4, 4, swap_ab=True), 1000, 90) == 3
    assert edge_shift(LARGE, 389, 1000) == edge_shift(WIDE_160, 389, 1000) == 0
    assert edge_shift(MEDIUM.replace(stream_k=True), 389, 1000) == 0
    assert edge_shift(MEDIUM, 389, 1000, grouped=True) == edge_shift(MEDIUM, 389, 1000, ragged_k=True) == 0
    assert edge_shift(GemmConfig(64, 64, 128, 4, 4, warp_specialize=False), 67, 1000) == 0
    assert edge_shift(MEDIUM.replace(stages=5, consumers=2), 389, 1000) == 0  # ping-pong: not measured
    # A two-part width of one warpgroup (a 64x192 swap-AB tile): two-part widths only with EDGE_SHIFT_TWO_PART.
    assert edge_shift(GemmConfig(64, 192, 64, 4, 4, swap_ab=True, store_chunks=3), 1000, 1000) == 0
    with mock.patch.object(gemm, "EDGE_SHIFT_TWO_PART", True):
        assert edge_shift(WIDE_160, 389, 1000) == 3 and edge_shift(LARGE, 389, 1000) == 0
    with mock.patch.object(gemm, "EDGE_SHIFT", 1):
        assert edge_shift(MEDIUM, 389, 1000) == 1
    with mock.patch.object(gemm, "EDGE_SHIFT", 0):
        assert edge_shift(MEDIUM, 389, 1000) == 0
    assert kernel_constexprs(MEDIUM, True, True, False, False, False)["K_SERPENTINE"]
    assert not kernel_constexprs(MEDIUM, True, True, False, False, False, edge_shift=1)["K_SERPENTINE"]
    for bad in (dict(cfg=MEDIUM, grouped=True), dict(cfg=MEDIUM.replace(stream_k=True)),
                dict(cfg=CLUSTER_MEDIUM, bits=2), dict(cfg=MEDIUM, bits=4)):
        with pytest.raises(ValueError, match="edge_shift"):
            kernel_constexprs(bad["cfg"], True, True, False, False, False, grouped=bad.get("grouped", False),
                              edge_shift=bad.get("bits", 1))


def _shift_variants():
    from warpgemm.heuristics import FP8_CONFIGS
    from warpgemm.kernels.hopper.gemm import edge_shift

    out = []
    for cfg in dict.fromkeys(SHIPPED_CONFIGS + FP8_CONFIGS + CANDIDATES + CLUSTER_CANDIDATES + WIDE_CANDIDATES):
        # Configs the rule shifts somewhere (the heuristics' and the ones users and the tuner can force).
        bits = edge_shift(cfg, 2 * cfg.block_m + 1, 2 * cfg.block_n + 1)
        if bits:
            out.append((cfg, cfg in FP8_CONFIGS, bits))
    return out


@pytest.mark.parametrize("cfg,fp8,bits", _shift_variants(), ids=lambda x: getattr(x, "name", str(x)))
def test_edge_shift_variant_compiles_clean(cfg, fp8, bits, tmp_path):
    """A launch with shifted edge tiles (EDGE_SHIFT) issues the plain variant's loads from the same shared memory,
    without spills (fp8: with its per-row and per-column scales, which the shifted offsets index)."""
    kw = dict(in_dtype=torch.float8_e4m3fn, scale=2) if fp8 else dict(has_bias=True)
    plain = compile_gemm(cfg, a_batched=False, **kw)
    shifted = compile_gemm(cfg, a_batched=False, edge_shift=bits, **kw)
    n_plain, n_shifted = _load_counts_by_operand(plain.asm["ptx"]), _load_counts_by_operand(shifted.asm["ptx"])
    assert n_shifted == n_plain and n_plain["A"] > 0 and n_plain["B"] > 0, (n_plain, n_shifted)
    r, r0 = inspect_compiled(shifted, "shifted", str(tmp_path)), inspect_compiled(plain, "plain", str(tmp_path))
    assert r.stack_bytes == 0 and r.local_bytes == 0, f"register spills: {r}"
    assert r.shared_bytes == r0.shared_bytes <= SMEM_LIMIT
