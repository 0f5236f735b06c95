"""Static weights (warpgemm.mark_static): the marks, which launches they reach, and what refuses them (no GPU)."""
import pytest
import torch

import warpgemm
from warpgemm import _env
from warpgemm.ops import api, gemm_impl
from warpgemm.static_weights import is_static, mark_static, writes_static

BF = torch.bfloat16


def meta(*shape):
    return torch.empty(shape, dtype=BF, device="meta")


def early(a3, b3, c3, config=None) -> bool:
    plan = gemm_impl.plan_hopper(a3, b3, c3, None, config, may_tune=False, static_b=is_static(b3))
    return bool(plan.launch.constexprs["EARLY_WEIGHT"])


def test_marks_reach_views_of_the_marked_tensor_only():
    w = torch.nn.Parameter(torch.randn(64, 32))
    assert not is_static(w)
    assert mark_static(w) is w
    assert is_static(w) and is_static(w.t()) and is_static(w.t().unsqueeze(0)) and is_static(w[:16])
    part = torch.randn(8, 4)
    mark_static(part[:4])  # a view: that object only, never its base or its other views
    assert not is_static(part) and not is_static(part[:4])
    mark_static(w, False)
    assert not is_static(w) and not is_static(w.t())
    mark_static(w, False)  # unmarking an unmarked tensor is fine


def test_a_module_marks_every_parameter():
    layer = torch.nn.Linear(32, 16)
    assert mark_static(layer) is layer
    assert is_static(layer.weight) and is_static(layer.bias)
    mark_static(layer, static=False)
    assert not is_static(layer.weight) and not is_static(layer.bias)
    with pytest.raises(TypeError, match="tensor or an nn.Module, got list"):
        mark_static([layer.weight])


def test_the_environment_switch_ignores_marks(monkeypatch):
    w = mark_static(torch.randn(8, 8))
    monkeypatch.setattr(_env, "STATIC_WEIGHTS", False)
    assert not is_static(w)


def test_a_static_weight_reaches_swap_ab_launches_only():
    w = mark_static(meta(14336, 4096))
    c = meta(1, 16, 14336)
    assert early(meta(1, 16, 4096), w.t().unsqueeze(0), c)
    assert not early(meta(1, 16, 4096), meta(14336, 4096).t().unsqueeze(0), c)  # same shapes, not marked
    # Plain tiles launch without programmatic dependent launch: nothing to start early.
    assert not early(meta(1, 4096, 4096), w.t().unsqueeze(0), meta(1, 4096, 14336))
    # A forced one-partition swap-AB tile has no producer warp to issue the loads.
    flat = warpgemm.GemmConfig(64, 16, 256, 5, 4, swap_ab=True, warp_specialize=False)
    assert not early(meta(1, 16, 4096), w.t().unsqueeze(0), c, config=flat)


def test_one_or_two_rows_against_a_static_weight_skip_the_gemv(monkeypatch):
    from warpgemm.ops.gemm_impl import GemvPlan

    for m in (1, 2):
        a3, c3, w = meta(1, m, 4096), meta(1, m, 4096), meta(4096, 4096)
        assert isinstance(gemm_impl.plan_hopper(a3, w.t().unsqueeze(0), c3, None, None), GemvPlan)
        p = gemm_impl.plan_hopper(a3, w.t().unsqueeze(0), c3, None, None, static_b=True)
        assert not isinstance(p, GemvPlan) and p.config.swap_ab and p.launch.constexprs["EARLY_WEIGHT"]
        # Rows off 16 bytes (128 tiles, one wave): the swap-AB kernel would copy the weight, the GEMV reads it.
        odd = meta(4096, 4100)[:, :4099]
        assert isinstance(gemm_impl.plan_hopper(meta(1, m, 4099), odd.t().unsqueeze(0), meta(1, m, 4096), None,
                                                None, static_b=True), GemvPlan)
        even = meta(4096, 4104)[:, :4096]  # the same with rows TMA can read: tiles
        assert not isinstance(gemm_impl.plan_hopper(meta(1, m, 4096), even.t().unsqueeze(0), meta(1, m, 4096), None,
                                                    None, static_b=True), GemvPlan)
        # x off 16 bytes would be copied for the tiles, not for the GEMV.
        x_odd = meta(1, m, 4104)[:, :, 1:4097]
        assert isinstance(gemm_impl.plan_hopper(x_odd, w.t().unsqueeze(0), c3, None, None, static_b=True), GemvPlan)
        # 28672 weight rows make 3.4 waves of tiles: the GEMV's hardware-scheduled programs stay ahead there.
        wide = meta(28672, 8192)
        assert isinstance(gemm_impl.plan_hopper(meta(1, m, 8192), wide.t().unsqueeze(0), meta(1, m, 28672), None,
                                                None, static_b=True), GemvPlan)
        monkeypatch.setattr(_env, "PDL", False)  # nothing starts early: the GEMV stays
        assert isinstance(gemm_impl.plan_hopper(a3, w.t().unsqueeze(0), c3, None, None, static_b=True), GemvPlan)
        monkeypatch.undo()


def test_explain_says_when_the_weight_loads_early():
    x, w = meta(16, 4096), meta(14336, 4096)
    assert "static weight" not in warpgemm.explain(x, w.t())
    mark_static(w)
    assert "B is a static weight: its first ring-full loads before the wait" in warpgemm.explain(x, w.t())
    assert "static weight" not in warpgemm.explain(meta(4096, 4096), w.t())  # plain tiles


def test_plans_and_recipes_keep_static_and_plain_weights_apart():
    a3, c3 = meta(1, 16, 4096), meta(1, 16, 14336)
    plain, marked = meta(14336, 4096), mark_static(meta(14336, 4096))
    assert gemm_impl._plan_key(a3, plain.t().unsqueeze(0), c3, None, None, is_static(plain)) != \
        gemm_impl._plan_key(a3, marked.t().unsqueeze(0), c3, None, None, is_static(marked))
    x = meta(16, 4096)
    assert api._recipe_key(x, plain, None, None, None) != api._recipe_key(x, marked, None, None, None)


def test_warpgemm_refuses_to_write_a_static_tensor():
    out = mark_static(meta(16, 14336))
    with pytest.raises(ValueError, match="out shares memory with a tensor marked as a static weight"):
        warpgemm.matmul(meta(16, 4096), meta(4096, 14336), out=out)
    mark_static(out, False)
    assert warpgemm.matmul(meta(16, 4096), meta(4096, 14336), out=out) is out


def test_a_write_through_any_alias_counts(monkeypatch):
    w = mark_static(torch.randn(16, 32))
    for alias in (w, w.t(), w[2:], w.detach(), w.data):
        assert writes_static(alias)
    assert not writes_static(torch.randn(16, 32))
    with pytest.raises(ValueError, match="static weight"):
        torch.ops.warpgemm.bmm_out(torch.randn(1, 16, 8), torch.randn(1, 8, 32), None, w.detach().unsqueeze(0), None)
    monkeypatch.setattr(_env, "STATIC_WEIGHTS", False)
    assert not writes_static(w.detach())


def test_a_write_is_found_on_the_storage_the_mark_recorded():
    layer = mark_static(torch.nn.Linear(32, 16))
    w = layer.weight
    assert writes_static(w.detach()[1:]) and not writes_static(layer.bias.detach().clone())
    w.data = torch.randn(16, 32)  # a new storage: the mark recorded the old one, so mark again
    mark_static(w)
    assert writes_static(w.detach()) and writes_static(w.data.t())
    mark_static(layer, False)
    assert not writes_static(w.detach()) and not writes_static(layer.bias.detach())


def test_unmarking_a_view_of_a_marked_tensor_is_refused():
    w = mark_static(torch.randn(16, 32))
    with pytest.raises(ValueError, match="view of a marked tensor"):
        mark_static(w.t(), False)
    mark_static(w, False)
    assert not is_static(w.t())


def test_a_mark_belongs_to_the_tensor_object_in_this_process(tmp_path):
    """Copies are not marked, however they are made: deepcopy, torch.save then torch.load (both carried an attribute
    mark inconsistently before); a collected tensor leaves the registry, and a new tensor reusing its id is not
    marked."""
    import copy
    import gc

    from warpgemm import static_weights

    layer = torch.nn.Linear(32, 16, bias=False).to(torch.bfloat16)
    warpgemm.mark_static(layer)
    assert warpgemm.is_static(layer.weight) and warpgemm.is_static(layer.weight.t())
    assert not warpgemm.is_static(copy.deepcopy(layer).weight)
    torch.save(layer.state_dict(), tmp_path / "w.pt")
    torch.save(layer, tmp_path / "layer.pt")
    assert not warpgemm.is_static(torch.load(tmp_path / "w.pt")["weight"])
    assert not warpgemm.is_static(torch.load(tmp_path / "layer.pt", weights_only=False).weight)
    t = warpgemm.mark_static(torch.randn(4, 4))
    key = id(t)
    del t
    gc.collect()
    assert key not in static_weights._marked
    warpgemm.mark_static(layer, False)
    assert not warpgemm.is_static(layer.weight)
