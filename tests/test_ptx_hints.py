"""The PTX pass that marks gemm_kernel's TMA stores evict-first in L2 (warpgemm/kernels/hopper/ptx_hints.py)."""
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
