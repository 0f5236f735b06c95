"""The PTX pass that marks gemm_kernel's TMA stores evict-first in L2 (warpgemm/kernels/hopper/ptx_hints.py)."""
import pytest
from triton import knobs

from warpgemm.kernels.hopper import ptx_hints

PTX = """.visible .entry gemm_kernel(
	cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r74], [%rd3, {%r75, %r76, %r2}], [%r73];
	@%p22 cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%rd1, {%r187, %r188, %r189}], [%r190];
	cp.async.bulk.commit_group;
	cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%rd1, {%r191, %r188, %r189}], [%r192];
	@!%p3 cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%rd1, {%r1, %r2, %r3}], [%r4];
"""


def test_every_store_is_hinted_and_nothing_else_changes():
    out, n = ptx_hints.hint_stores(PTX)
    assert n == 3
    lines = out.splitlines()
    stores = [l for l in lines if "shared::cta.bulk_group" in l]
    assert all(".bulk_group.L2::cache_hint [" in l and l.endswith(", %l2pol; }") for l in stores), stores
    assert "\t@%p22 cp.async.bulk.tensor.3d.global.shared::cta.bulk_group.L2::cache_hint [%rd1, {%r187, %r188, " \
           "%r189}], [%r190], %l2pol; }" in lines
    assert out.count("createpolicy.fractional.L2::evict_first.b64 %l2pol, 1.0;") == 3
    # Loads and everything else untouched.
    assert [l for l in lines if "shared::cta.bulk_group" not in l and "createpolicy" not in l] == \
        [l for l in PTX.splitlines() if "shared::cta.bulk_group" not in l]


def test_the_hook_is_installed_only_while_compiling_and_chains_the_previous_one():
    calls = []

    def previous(backend, stages, options, language, capability):
        calls.append("previous")

    saved = knobs.runtime.add_stages_inspection_hook
    knobs.runtime.add_stages_inspection_hook = previous
    try:
        with ptx_hints.store_hints():
            hook = knobs.runtime.add_stages_inspection_hook
            assert hook is not previous
            stages = {"ptx": lambda src, metadata: PTX}
            hook(None, stages, None, None, 90)
            assert calls == ["previous"]
            ptx_hints.check_hint_compile(ptx_hints.PASS_VERSION)  # what tracing a hinted variant records
            assert stages["ptx"](None, {"name": "gemm_kernel"}).count(".L2::cache_hint") == 3
            other = {"ptx": lambda src, metadata: PTX.replace("gemm_kernel", "user_kernel")}
            hook(None, other, None, None, 90)
            assert ".L2::cache_hint" not in other["ptx"](None, {"name": "user_kernel"})
        assert knobs.runtime.add_stages_inspection_hook is previous
        with ptx_hints.store_hints(False):
            assert knobs.runtime.add_stages_inspection_hook is previous
    finally:
        knobs.runtime.add_stages_inspection_hook = saved


def test_the_hook_is_restored_when_the_compile_raises():
    saved = knobs.runtime.add_stages_inspection_hook
    try:
        with ptx_hints.store_hints():
            raise RuntimeError("compile failed")
    except RuntimeError:
        pass
    assert knobs.runtime.add_stages_inspection_hook is saved


def test_a_hinted_variant_refuses_to_compile_outside_the_pass(monkeypatch, tmp_path):
    """Triton files a binary under its constexprs: a hinted variant traced without the pass would put a plain
    binary under the hinted key (in memory and on disk), so the trace itself refuses. (An empty cache: a hinted
    binary compiled earlier under the pass would be found without tracing, rightly.)"""
    import contextlib

    import pytest

    from warpgemm.heuristics import RAGGED_K_ROWS
    from warpgemm.kernels.hopper import aot, gemm

    monkeypatch.setattr(knobs.cache, "dir", str(tmp_path))
    monkeypatch.setattr(gemm, "store_hints", lambda enabled=True: contextlib.nullcontext())  # compile_context's
    with pytest.raises(Exception, match="outside .*store_hints"):
        aot.compile_gemm(RAGGED_K_ROWS, a_kmajor=False, b_kmajor=False, a_batched=False, b_batched=False,
                         ragged_k=True)


def test_the_hint_constexpr_is_the_pass_version():
    import pytest

    from warpgemm.kernels.hopper.gemm import store_hint

    assert store_hint(True) == ptx_hints.PASS_VERSION and store_hint(False) == 0
    for bad in (ptx_hints.PASS_VERSION + 1, True):
        with pytest.raises(ValueError, match="L2_STORE_HINT must be 0 or"):
            ptx_hints.check_hint_compile(bad)
    with ptx_hints.store_hints():
        assert ptx_hints.hints_active()
        ptx_hints.check_hint_compile(ptx_hints.PASS_VERSION)
    assert not ptx_hints.hints_active()
    ptx_hints.check_hint_compile(0)


def test_only_a_compile_that_traced_a_hinted_variant_is_rewritten():
    """The hook is process-wide: a plain variant compiled while it is installed (by this thread or another) keeps
    plain stores, and the depth that allows a hinted trace is this thread's own."""
    import threading

    with ptx_hints.store_hints():
        hook = knobs.runtime.add_stages_inspection_hook
        seen = {}

        def compile_plain(tag):
            stages = {"ptx": lambda src, metadata: PTX}
            hook(None, stages, None, None, 90)
            ptx_hints.check_hint_compile(0)  # tracing a plain variant
            seen[tag] = (stages["ptx"](None, {"name": "gemm_kernel"}).count(".L2::cache_hint"),
                         ptx_hints.hints_active())

        compile_plain("here")
        worker = threading.Thread(target=compile_plain, args=("other thread", ))
        worker.start()
        worker.join()
        assert seen == {"here": (0, True), "other thread": (0, False)}


def test_nested_contexts_install_the_hook_once():
    saved = knobs.runtime.add_stages_inspection_hook
    with ptx_hints.store_hints():
        outer = knobs.runtime.add_stages_inspection_hook
        with ptx_hints.store_hints():
            assert knobs.runtime.add_stages_inspection_hook is outer
        assert knobs.runtime.add_stages_inspection_hook is outer and ptx_hints.hints_active()
    assert knobs.runtime.add_stages_inspection_hook is saved and not ptx_hints.hints_active()


def test_a_flag_left_by_a_failed_compile_does_not_hint_the_next():
    """A hinted trace whose compile fails before its PTX stage leaves the flag set; the next compile's setup (the
    hook, called before its trace) clears it, so another kernel named gemm_kernel is not rewritten."""
    with ptx_hints.store_hints():
        ptx_hints.check_hint_compile(ptx_hints.PASS_VERSION)  # a hinted trace ... whose compile then fails
        hook = knobs.runtime.add_stages_inspection_hook
        stages = {"ptx": lambda src, metadata: PTX}
        hook(None, stages, None, None, 90)  # the next compile: a user's own gemm_kernel, never traced by us
        assert ".L2::cache_hint" not in stages["ptx"](None, {"name": "gemm_kernel"})


CLUSTER_PTX = """.visible .entry gemm_kernel(
	.param .u64 gemm_kernel_param_0
)
.reqntid 384
.maxnreg 168
{
	@%p6 cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r91], [%rd6, {%r1, %r2, %r3}], [%r90];
	// warpgemm:multicast-begin %r95
	@%p8 cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r96], [%rd2, {%r1, %r97, %r3}], [%r90];
	// warpgemm:multicast-end %r98
	@%p20 mbarrier.arrive.shared::cta.b64 _, [%r173];
	// warpgemm:remote-arrive %r197
	bar.sync 	0, 256;
	@%p28 mbarrier.arrive.shared::cta.b64 _, [%r198];
}
"""


def test_cluster_rewrite_touches_only_the_marked_instructions():
    out, loads, arrives, regions = ptx_hints.cluster_rewrite(CLUSTER_PTX)
    assert (loads, arrives, regions) == (1, 1, 1)
    lines = out.splitlines()
    assert lines[lines.index(".maxnreg 168") + 1] == ".reqnctapercluster 2, 1, 1"
    # The unmarked A load and the unmarked arrive are left alone.
    assert "\t@%p6 cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r91], [%rd6, " \
           "{%r1, %r2, %r3}], [%r90];" in lines
    assert "\t@%p20 mbarrier.arrive.shared::cta.b64 _, [%r173];" in lines
    assert "\t@%p8 cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster " \
           "[%r96], [%rd2, {%r1, %r97, %r3}], [%r90], %wgmc; }" in lines
    # The marked arrive stays local and is repeated on the peer's barrier (rank ^ 1), same predicate.
    assert "\t@%p28 mbarrier.arrive.shared::cta.b64 _, [%r198];" in lines
    assert "\tmapa.shared::cluster.u32 %wgbar, %r198, %wgpeer;" in lines
    assert "\t@%p28 mbarrier.arrive.shared::cluster.b64 _, [%wgbar]; }" in lines


def test_cluster_rewrite_multicasts_every_piece_of_one_box():
    """Triton cuts a box wider than its swizzle into messages over the producer's warps; where messages outnumber
    warps it emits several loads of the same tensor map (3.6 emits one instruction per region for every shipped
    pair): each is multicast, and the region still counts once."""
    load = ("\t@%p8 cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r96], "
            "[%rd2, {%r1, %r97, %r3}], [%r90];\n")
    second = load.replace("[%r96]", "[%r99]").replace("%r97", "%r100")
    out, loads, arrives, regions = ptx_hints.cluster_rewrite(CLUSTER_PTX.replace(load, load + second))
    assert (loads, arrives, regions) == (2, 1, 1)
    assert out.count(".multicast::cluster [") == 2


def test_a_cluster_variant_refuses_to_compile_outside_the_pass(monkeypatch, tmp_path):
    import contextlib

    from warpgemm.config import GemmConfig
    from warpgemm.kernels.hopper import aot, gemm

    monkeypatch.setattr(knobs.cache, "dir", str(tmp_path))
    monkeypatch.setattr(gemm, "store_hints", lambda enabled=True: contextlib.nullcontext())  # compile_context's
    with pytest.raises(Exception, match="outside .*store_hints"):
        aot.compile_gemm(GemmConfig(128, 128, 64, 6, 4, cluster_m=2), a_batched=False)


@pytest.mark.parametrize("edit, why", [
    # A second TMA load (A's) inside the region would be multicast into the peer's A slot.
    (lambda p: p.replace("\t// warpgemm:multicast-end", "\t@%p6 cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier"
                         "::complete_tx::bytes [%r91], [%rd6, {%r1, %r2, %r3}], [%r90];\n\t// warpgemm:multicast-end"),
     "two tensor maps"),
    (lambda p: p.replace("\t@%p8 cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r96], "
                         "[%rd2, {%r1, %r97, %r3}], [%r90];\n", ""), "no TMA load"),
    # The unmarked load reads the multicast map (%rd2) too: the regions no longer tell B's box from A's.
    (lambda p: p.replace("[%rd6, {%r1, %r2, %r3}]", "[%rd2, {%r1, %r2, %r3}]"), "read both by multicast"),
    (lambda p: p.replace("\t// warpgemm:multicast-end %r98\n", ""), "inside an open multicast region"),
    (lambda p: p.replace("\tbar.sync \t0, 256;", "\tmbarrier.try_wait.parity.shared::cta.b64 %p1, [%r5], %r6;"),
     "followed by"),
    (lambda p: p.replace("\tbar.sync \t0, 256;", "\tbra.uni \t$L__BB0_3;"), "followed by"),
    (lambda p: p.replace("\t@%p28 mbarrier.arrive.shared::cta.b64 _, [%r198];\n", ""), "left open"),
])
def test_cluster_rewrite_refuses_ptx_of_another_shape(edit, why):
    """Where Triton's PTX stops matching, the pass must refuse (the hook turns that into a compile error) rather than
    multicast the wrong load or arrive on an unrelated barrier; a kernel built half-way would hang or be wrong."""
    bad = edit(CLUSTER_PTX)
    assert bad != CLUSTER_PTX
    with pytest.raises(ValueError, match=why):
        ptx_hints.cluster_rewrite(bad)


def test_the_hook_refuses_a_cluster_compile_whose_ptx_does_not_match():
    stages = {"ptx": lambda src, metadata: CLUSTER_PTX.replace("\t// warpgemm:multicast-end %r98\n", "")}
    ptx_hints._hook(None)(None, stages, None, None, 90)
    ptx_hints._thread.cluster = 2  # what check_cluster_compile leaves for a traced cluster variant
    with pytest.raises(RuntimeError, match="cluster_m=2 cannot be built"):
        stages["ptx"](None, {"name": "gemm_kernel"})


ISSUE_PTX = """.visible .entry gemm_kernel(
	@%p1 mbarrier.init.shared::cta.b64 [%r18], 1;
	bar.sync 	0;
	ld.param.b32 	%r34, [gemm_kernel_param_15];
	@%p1 mbarrier.init.shared::cta.b64 [%r19], 1;
	bar.sync 	0;
	// begin inline asm
	@%p1 mbarrier.arrive.expect_tx.shared.b64 _, [%r81], 32768;
	// end inline asm
	.loc	3 288 76
	bar.sync 	0;
	elect.sync 	%r92|%p8, -1;
	@%p4 cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r82], [%rd4, {%r83}], [%r81];
	bar.sync 	0;
	@%p5 cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r84], [%rd5, {%r83}], [%r81];
$L__BB0_10:
	bar.sync 	0;
	mbarrier.try_wait.parity.shared.b64 complete, [%r197], %r278;
	wgmma.wait_group.sync.aligned 1;
	bar.sync 	0;
	@%p1 mbarrier.arrive.expect_tx.shared.b64 _, [%r206], 32768;
	bar.sync 	0;
	@%p39 cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r207], [%rd4, {%r208}], [%r206];
	stmatrix.sync.aligned.m8n8.x4.shared.b16 [%r13], {%r198, %r199, %r200, %r201};
	bar.sync 	0;
	@%p61 cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%rd24, {%r195}], [%r21];
"""


def test_issue_barriers_are_dropped_only_between_issue_operations():
    out, n = ptx_hints.drop_issue_barriers(ISSUE_PTX)
    assert n == 4
    lines = out.splitlines()
    # Kept: after the last init (another warp's TMA chunk must not reach an uninitialised barrier), after a label
    # (before the wait), after the wgmma wait, before the TMA store of the epilogue.
    kept = [lines[i + 1].strip().split()[0] for i, l in enumerate(lines) if l == "\tbar.sync \t0;"]
    assert kept == ["//", "mbarrier.try_wait.parity.shared.b64", "@%p1", "@%p61"], kept
    assert lines[lines.index("\twgmma.wait_group.sync.aligned 1;") + 1] == "\tbar.sync \t0;"
    assert [l for l in lines if l != "\tbar.sync \t0;"] == [l for l in ISSUE_PTX.splitlines() if l != "\tbar.sync \t0;"]


@pytest.mark.parametrize("between", ["\tbrx.idx \t%r35, $L_brx_0;", "$L_brx_0:", "\tcall.uni __assertfail, (%rd1);",
                                     "\texit;", "\tst.shared.b32 \t[%r1], %r2;", "\tfoo.bar \t%r1;"])
def test_anything_but_register_arithmetic_between_issues_keeps_the_barrier(between):
    load = "\t@%p4 cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r82], [%rd4, {%r83}], [%r81];"
    expect = "\t@%p1 mbarrier.arrive.expect_tx.shared.b64 _, [%r81], 32768;"
    init = "\t@%p1 mbarrier.init.shared::cta.b64 [%r18], 1;"
    ptx = "\n".join([expect, between, "\tbar.sync \t0;", "\tadd.s32 \t%r1, %r2, 1;", load])
    assert ptx_hints.drop_issue_barriers(ptx)[1] == 0
    plain = "\n".join([expect, "\tmov.b32 \t%r1, 0;", "\tbar.sync \t0;", "\tshfl.sync.idx.b32 \t%r2, %r3, 0, 31, -1;", load])
    assert ptx_hints.drop_issue_barriers(plain)[1] == 1
    assert ptx_hints.drop_issue_barriers("\n".join([init, "\tbar.sync \t0;", load]))[1] == 0


def test_a_one_partition_variant_refuses_to_compile_outside_the_pass():
    with pytest.raises(RuntimeError, match="WARP_SPECIALIZE False"):
        ptx_hints.check_one_partition_compile(False)
    ptx_hints.check_one_partition_compile(True)  # the warp-specialized kernel needs no pass
    with pytest.raises(ValueError, match="must be a bool"):
        ptx_hints.check_one_partition_compile(0)


LOAD_PTX = """.visible .entry gemm_kernel(
	@%p6 cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r91], [%rd6, {%r1, %r2, %r3}], [%r90];
	// warpgemm:evict-first-begin %r97
	@%p8 cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r96], [%rd2, {%r1, %r97, %r3}], [%r90];
	@%p8 bra.uni 	$L__BB0_4;
	cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r99], [%rd2, {%r1, %r98, %r3}], [%r90];
$L__BB0_4:
	// warpgemm:evict-first-end %r98
	@%p22 cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%rd1, {%r187, %r188, %r189}], [%r190];
"""


def test_marked_loads_are_hinted_and_nothing_else_changes():
    """The weight's TMA loads (between the markers, a branch inside allowed) get an evict-first policy; the other
    operand's load and the store are untouched."""
    out, loads, regions = ptx_hints.hint_marked_loads(LOAD_PTX)
    assert (loads, regions) == (2, 1)
    lines = out.splitlines()
    assert "\t@%p6 cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r91], [%rd6, " \
           "{%r1, %r2, %r3}], [%r90];" in lines
    assert "\t@%p8 cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint " \
           "[%r96], [%rd2, {%r1, %r97, %r3}], [%r90], %l2ld; }" in lines
    assert out.count("createpolicy.fractional.L2::evict_first.b64 %l2ld, 1.0;") == 2
    assert ptx_hints.load_counts(out) == (1, 2)
    assert ptx_hints.load_counts(LOAD_PTX) == (3, 0)
    assert [l for l in lines if "L2::cache_hint" not in l and "createpolicy" not in l] == \
        [l for l in LOAD_PTX.splitlines() if "complete_tx" not in l or "%r91" in l]


@pytest.mark.parametrize("edit, why", [
    (lambda p: p.replace("\t// warpgemm:evict-first-end %r98\n", ""), "left open"),
    (lambda p: p.replace("[%r96]", "[%r96]\n\t// warpgemm:evict-first-begin %r5"), "inside an open region"),
    (lambda p: p.replace("\t// warpgemm:evict-first-begin %r97\n", ""), "unopened region"),
    (lambda p: "\n".join(l for l in p.split("\n") if not ("complete_tx" in l and "%rd2" in l)), "without a TMA load"),
])
def test_the_load_pass_refuses_ptx_of_another_shape(edit, why):
    bad = edit(LOAD_PTX)
    assert bad != LOAD_PTX
    with pytest.raises(ValueError, match=why):
        ptx_hints.hint_marked_loads(bad)


def test_a_weight_hinted_variant_compiles_only_under_the_pass_and_never_with_clusters(monkeypatch, tmp_path):
    import contextlib

    from warpgemm.config import GemmConfig
    from warpgemm.kernels.hopper import aot, gemm

    with pytest.raises(ValueError, match="WEIGHT_HINT must be 0 or"):
        ptx_hints.check_weight_hint_compile(True, 1)
    with pytest.raises(ValueError, match="not for cluster"):
        ptx_hints.check_weight_hint_compile(ptx_hints.LOAD_PASS_VERSION, 2)
    monkeypatch.setattr(knobs.cache, "dir", str(tmp_path))
    monkeypatch.setattr(gemm, "store_hints", lambda enabled=True: contextlib.nullcontext())  # compile_context's
    with pytest.raises(Exception, match="outside .*store_hints"):
        aot.compile_gemm(GemmConfig(64, 128, 64, 8, 4), a_batched=False, weight_hint=True)


def test_the_hook_refuses_a_weight_hinted_compile_without_markers():
    """A variant traced with WEIGHT_HINT whose PTX lost its markers would run unhinted under its hinted key."""
    stages = {"ptx": lambda src, metadata: LOAD_PTX.replace("\t// warpgemm:evict-first-begin %r97\n", "")
              .replace("\t// warpgemm:evict-first-end %r98\n", "")}
    ptx_hints._hook(None)(None, stages, None, None, 90)
    ptx_hints._thread.weight_hint = ptx_hints.LOAD_PASS_VERSION  # what check_weight_hint_compile leaves
    with pytest.raises(RuntimeError, match="no marked TMA loads"):
        stages["ptx"](None, {"name": "gemm_kernel"})
    stages = {"ptx": lambda src, metadata: LOAD_PTX}
    ptx_hints._hook(None)(None, stages, None, None, 90)
    ptx_hints._thread.weight_hint = ptx_hints.LOAD_PASS_VERSION
    assert ptx_hints.load_counts(stages["ptx"](None, {"name": "gemm_kernel"})) == (1, 2)
