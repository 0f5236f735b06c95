"""Bad input gets a clear error naming the argument, the expected and the actual value."""
import pytest
import torch

import warpgemm
from warpgemm import _env
from warpgemm.config import GemmConfig
from warpgemm.ops import gemm_impl

BF = torch.bfloat16
# CPU tensors run under the Triton interpreter (conftest sets it where there is no GPU); on a GPU machine, where
# CPU tensors are refused without it, the same checks run on CUDA tensors.
DEV = "cuda" if torch.cuda.is_available() else "cpu"


def t(*shape, dtype=BF, device=DEV):
    return torch.randn(shape, device=device).to(dtype)


def test_unsupported_dtype_names_argument_and_dtype():
    with pytest.raises(TypeError, match=r"a must be torch.bfloat16 or torch.float16, got torch.float32"):
        warpgemm.matmul(t(4, 4, dtype=torch.float32), t(4, 4, dtype=torch.float32))


def test_mismatched_dtypes():
    with pytest.raises(TypeError, match=r"b must have the same dtype as a \(torch.bfloat16\), got torch.float16"):
        warpgemm.matmul(t(4, 4), t(4, 4, dtype=torch.float16))


def test_inner_dimension_mismatch():
    with pytest.raises(ValueError, match=r"b must have 5 rows .*shape \(3, 5\).*got b of shape \(4, 2\)"):
        warpgemm.matmul(t(3, 5), t(4, 2))


def test_batch_dims_that_do_not_broadcast():
    with pytest.raises(ValueError, match=r"batch dimensions of a \(2,\) and b \(3,\) do not broadcast"):
        warpgemm.matmul(t(2, 3, 4), t(3, 4, 5))


def test_zero_dim_input():
    with pytest.raises(ValueError, match="at least 1 dimension"):
        warpgemm.matmul(torch.tensor(1.0, dtype=BF, device=DEV), t(3))


def test_not_a_tensor():
    with pytest.raises(TypeError, match="b must be a torch.Tensor, got list"):
        warpgemm.matmul(t(2, 2), [[1.0]])


def test_different_devices():
    with pytest.raises(ValueError, match=rf"b must be on the same device as a \({DEV}(:0)?\), got meta"):
        warpgemm.matmul(t(4, 4), torch.empty(4, 4, dtype=BF, device="meta"))


def test_cpu_tensors_without_interpreter(monkeypatch):
    monkeypatch.setattr(_env, "INTERPRET", False)
    with pytest.raises(ValueError, match="TRITON_INTERPRET=1"):
        warpgemm.matmul(t(4, 4, device="cpu"), t(4, 4, device="cpu"))


def test_out_dtype_checks():
    with pytest.raises(TypeError, match=r"out_dtype must be None, torch.bfloat16 or torch.float32"):
        warpgemm.matmul(t(4, 4), t(4, 4), out_dtype=torch.float16)
    with pytest.raises(TypeError, match=r"out must have dtype out_dtype \(torch.float32\), got torch.bfloat16"):
        warpgemm.matmul(t(4, 4), t(4, 4), out=t(4, 4), out_dtype=torch.float32)


def test_out_shape():
    with pytest.raises(ValueError, match=r"out must have shape \(4, 3\), got \(3, 4\)"):
        warpgemm.matmul(t(4, 5), t(5, 3), out=t(3, 4))


def test_bias_checks():
    with pytest.raises(ValueError, match=r"bias must have shape \(3,\) .*got \(4,\)"):
        warpgemm.matmul(t(4, 5), t(5, 3), bias=t(4))
    with pytest.raises(TypeError, match=r"bias must be torch.bfloat16 or torch.float32, got torch.float16"):
        warpgemm.matmul(t(4, 5), t(5, 3), bias=t(3, dtype=torch.float16))
    # A 1-D b makes one column, which the output drops: the message says so instead of "the output's last dimension".
    with pytest.raises(ValueError, match=r"bias must have shape \(1,\) \(b is 1-D: one column, which the output "
                                         r"drops\)"):
        warpgemm.matmul(t(4, 5), t(5), bias=t(4))


def test_linear_checks():
    with pytest.raises(ValueError, match=r"weight must be 2-D .*got shape \(5,\)"):
        warpgemm.linear(t(4, 5), t(5))
    with pytest.raises(ValueError, match=r"input must have last dimension 5 .*got shape \(4, 6\)"):
        warpgemm.linear(t(4, 6), t(3, 5))


def test_out_with_autograd_is_refused():
    a = t(4, 4).requires_grad_()
    with pytest.raises(RuntimeError, match="out=.* don't support automatic differentiation"):
        warpgemm.matmul(a, t(4, 4), out=t(4, 4))


def test_config_type():
    with pytest.raises(TypeError, match="config must be a warpgemm.GemmConfig or None, got dict"):
        warpgemm.matmul(t(4, 4), t(4, 4), config={"block_m": 64})


def test_invalid_forced_config_is_a_clear_error():
    a3, c3 = torch.empty(1, 8, 8, dtype=BF, device="meta"), torch.empty(1, 8, 8, dtype=BF, device="meta")
    bad = GemmConfig(block_m=128, block_n=256, block_k=64, stages=6, consumer_warps=8)
    with pytest.raises(ValueError, match=r"config .* is invalid for torch.bfloat16 inputs .*shared memory"):
        gemm_impl.resolve_config(bad, a3, c3)


def test_out_aliasing_an_input_is_refused():
    a = t(4, 4)
    with pytest.raises(ValueError, match="out must not share memory with a"):
        warpgemm.matmul(a, t(4, 4), out=a)
    big = t(8, 4)
    with pytest.raises(ValueError, match="out must not share memory with b"):
        warpgemm.matmul(t(4, 4), big[:4], out=big[2:6])
    # Disjoint slices of one storage do not overlap: written as torch.matmul writes them (it accepts them too).
    buf = t(200)
    x, w = buf[:35].view(5, 7), t(7, 3)
    before = buf[:100].clone()
    got = warpgemm.matmul(x, w, out=buf[100:115].view(5, 3))
    assert torch.equal(buf[:100], before)
    torch.testing.assert_close(got.float(), x.float() @ w.float(), rtol=2e-2, atol=2e-2)


def test_an_inference_tensor_out_is_written_only_in_inference_mode():
    """torch refuses to update an inference tensor outside inference mode; so do the out= paths."""
    with torch.inference_mode():
        out = torch.empty(3, 5, dtype=BF, device=DEV)
    for call in (lambda: warpgemm.matmul(t(3, 4), t(4, 5), out=out),
                 lambda: warpgemm.add(t(3, 5), t(3, 5), out=out),
                 lambda: warpgemm.grouped_mm(t(3, 4), t(1, 4, 5), torch.tensor([3], dtype=torch.int32, device=DEV),
                                             out=out)):
        with pytest.raises(RuntimeError, match="inference tensor outside InferenceMode"):
            call()
    with torch.inference_mode():
        a, b = t(3, 4), t(4, 5)
        warpgemm.matmul(a, b, out=out)
    torch.testing.assert_close(out.float(), a.float() @ b.float(), rtol=2e-2, atol=2e-2)


def test_linear_shares_a_recipe_that_matmul_recorded(monkeypatch):
    """linear(x, w) after matmul(x, w.t()) on the same shapes: linear's first call hits matmul's eager recipe and
    must record it under its own key too, or every later linear call misses and pays validation (as measured:
    scripts/overhead_probe.py). The recipes are faked here (CPU): a launch that counts."""
    from warpgemm.ops import api

    class CountingLaunch:
        calls = 0

        def launch(self, *args):
            CountingLaunch.calls += 1

    monkeypatch.setattr(api, "_RECIPES", {})
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: 0, raising=False)
    x = torch.randn(8, 32, dtype=torch.bfloat16, device=DEV)
    w = torch.randn(16, 32, dtype=torch.bfloat16, device=DEV)
    recipe = api._Recipe((8, 16), torch.bfloat16, torch.device("cuda", 0), CountingLaunch())
    api._RECIPES[api._recipe_key(x, w.t(), None, None, None)] = recipe
    linear_key = ("linear", ) + api._recipe_key(x, w, None, None, None)
    assert warpgemm.linear(x, w).shape == (8, 16) and CountingLaunch.calls == 1
    assert api._RECIPES.get(linear_key) is recipe
    warpgemm.linear(x, w)
    assert CountingLaunch.calls == 2


def test_out_calls_take_a_recipe_but_keep_their_per_call_checks(monkeypatch):
    """matmul(a, b, out=o) repeated: a recorded recipe launches straight into the caller's out (no validation, no
    planning), but what the recipe key cannot see is still refused on every call: an out that overlaps an operand,
    or one that writes a static weight. A key differing only in out's strides or alignment misses. Faked recipes
    (CPU): a launch that records its output."""
    from warpgemm.ops import api

    class RecordingLaunch:
        outs = []

        def launch(self, a, b, c, bias):
            RecordingLaunch.outs.append(c)

    monkeypatch.setattr(api, "_RECIPES", {})
    monkeypatch.setattr(torch._C, "_cuda_getDevice", lambda: 0, raising=False)
    a, b = t(8, 32), t(32, 16)
    big = t(8 * 16 + 16, 1)
    o = big[:128].view(8, 16)
    recipe = api._Recipe((8, 16), BF, torch.device("cuda", 0), RecordingLaunch())
    api._RECIPES[api._recipe_key(a, b, None, None, None, o)] = recipe
    assert warpgemm.matmul(a, b, out=o) is o and RecordingLaunch.outs[-1] is o
    assert api._recipe_key(a, b, None, None, None, o) != api._recipe_key(a, b, None, None, None, t(8, 24)[:, :16])
    assert api._recipe_key(a, b, None, None, None, o) != api._recipe_key(
        a, b, None, None, None, big[1:129].view(8, 16))  # 2 bytes further: another TMA alignment
    assert api._recipe_key(a, b, None, None, None, o) != api._recipe_key(a, b, None, None, None)
    calls = len(RecordingLaunch.outs)
    # An out over part of b with a's key and layout: the recipe must not launch.
    b_big = t(32 * 16 + 8 * 16, 1)
    b2, o2 = b_big[:512].view(32, 16), b_big[384:512].view(8, 16)
    api._RECIPES[api._recipe_key(a, b2, None, None, None, o2)] = recipe
    with pytest.raises(ValueError, match="out must not share memory with b"):
        warpgemm.matmul(a, b2, out=o2)
    from warpgemm import static_weights
    try:
        static_weights.mark_static(o)
        api._RECIPES[api._recipe_key(a, b, None, None, None, o)] = recipe
        with pytest.raises(ValueError, match="out shares memory with a tensor marked as a static weight"):
            warpgemm.matmul(a, b, out=o)
    finally:
        static_weights.mark_static(o, False)
    with torch.inference_mode():
        o3 = t(8, 16)
    api._RECIPES[api._recipe_key(a, b, None, None, None, o3)] = recipe
    with pytest.raises(RuntimeError, match="inference tensor outside InferenceMode"):
        warpgemm.matmul(a, b, out=o3)
    assert len(RecordingLaunch.outs) == calls


def test_sparse_operands_are_refused_by_name():
    a, b = t(4, 4), t(4, 4)
    with pytest.raises(TypeError, match=r"a must be a dense \(torch.strided\) tensor, got layout torch.sparse_coo"):
        warpgemm.matmul(a.to_sparse(), b)
    with pytest.raises(TypeError, match=r"out must be a dense \(torch.strided\) tensor, got layout torch.sparse_coo"):
        warpgemm.matmul(a, b, out=t(4, 4).to_sparse())
    with pytest.raises(TypeError, match=r"weight must be a dense \(torch.strided\) tensor"):
        warpgemm.linear(a, b.to_sparse())


def test_lazily_negated_views_are_refused_or_computed_by_torch():
    """A negation held in a flag (torch._neg_view; conj().imag of a complex tensor) is invisible to a kernel that
    reads the memory: the GEMM ops refuse it by name, also when a recipe with its key exists; add falls back to
    torch, which applies it."""
    from warpgemm.ops import api

    a, b = t(8, 32), t(32, 16)
    neg_a = torch._neg_view(a)
    assert neg_a.is_neg()
    for call, name in ((lambda: warpgemm.matmul(neg_a, b), "a"),
                       (lambda: warpgemm.matmul(a, torch._neg_view(b)), "b"),
                       (lambda: warpgemm.matmul(a, b, out=torch._neg_view(t(8, 16))), "out"),
                       (lambda: warpgemm.matmul(a, b, bias=torch._neg_view(t(16))), "bias"),
                       (lambda: warpgemm.linear(neg_a, b.t()), "input"),
                       (lambda: warpgemm.group_gemm([a, neg_a], [b, b]), r"list_a\[1\]"),
                       (lambda: warpgemm.group_gemm([a], [torch._neg_view(b)]), r"list_b\[0\]")):
        with pytest.raises(TypeError, match=rf"{name} is a lazily negated view .*resolve_neg\(\)"):
            call()
    assert api._recipe_key(neg_a, b, None, None, None) is None  # so no recipe recorded for `a` can serve it
    x = t(64)
    got = warpgemm.add(torch._neg_view(x), x)
    assert torch.equal(got, torch.zeros_like(x))


def test_a_freed_storage_is_refused_by_name():
    from warpgemm.ops import api

    a = t(8, 32)
    w = t(16, 32)
    w.untyped_storage().resize_(0)  # what FSDP-style sharding does to a parameter between uses
    with pytest.raises(ValueError, match=r"weight of shape \(16, 32\) .*reaches 1024 bytes into its storage, which "
                                         r"has 0"):
        warpgemm.linear(a, w)
    assert api._recipe_key(t(8, 16), w, None, None, None) is None  # no recorded launch can take it either
    big = t(64, 32)
    tail = big[32:]
    big.untyped_storage().resize_(1024)  # a shrunk storage: the view's rows now lie past its end
    with pytest.raises(ValueError, match="b of shape .* which has 1024"):
        warpgemm.matmul(t(8, 32), tail)
    # group_gemm reads pointers straight off its lists: a freed operand (it crashed the process), also a view at an
    # offset into one, is refused by name too (a storage shrunk to a nonzero size is left to matmul's fuller checks).
    with pytest.raises(ValueError, match=r"list_b\[1\] of shape \(16, 32\) .*which has 0"):
        warpgemm.group_gemm([t(8, 16), t(8, 16)], [t(16, 4), w])
    flat = t(64 * 32)
    part = flat[32 * 32:].view(32, 32)
    flat.untyped_storage().resize_(0)
    with pytest.raises(ValueError, match=r"list_a\[1\] of shape \(32, 32\) .* which has 0"):
        warpgemm.group_gemm([t(4, 32), part], [t(32, 4), t(32, 4)])


def test_out_writes_count_as_in_place_for_autograd():
    """torch's out= ops bump out's version counter, so a graph that saved out refuses to run backward on the
    overwritten values; warpgemm's out= writes must too (matmul, grouped_mm, add)."""
    a, b = t(8, 32), t(32, 16)
    x = torch.randn(8, 16, device=DEV, dtype=BF, requires_grad=True)
    ga, gw, offs = t(3, 8, 32), t(32, 16), torch.tensor([6, 6, 16], dtype=torch.int32, device=DEV)
    for write in (lambda o: warpgemm.matmul(a, b, out=o),
                  lambda o: warpgemm.add(t(8, 16), t(8, 16), out=o),
                  lambda o: warpgemm.grouped_mm(ga, gw, offs, out=o)):
        o = t(8, 16)
        y = (x * o).sum()
        before = o._version
        write(o)
        assert o._version > before
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.backward()


# What a first hour of use on the CPU turned up (an audit, 2026-11-26).

def test_an_expanded_out_is_refused_not_half_written():
    a, b = t(5, 7), t(7, 4)
    with pytest.raises(ValueError, match=r"out must not have overlapping elements .*shape \(5, 4\) with strides "
                                         r"\(1, 0\)"):
        warpgemm.matmul(a, b, out=torch.zeros(5, 1, dtype=BF, device=DEV).expand(5, 4))
    x, w = t(6, 8), t(2, 8, 3)
    offs = torch.tensor([2, 6], dtype=torch.int32, device=DEV)
    with pytest.raises(ValueError, match="out must not have overlapping elements"):
        warpgemm.grouped_mm(x, w, offs, out=torch.zeros(1, 3, dtype=BF, device=DEV).expand(6, 3))


def test_out_that_needs_grad_or_inputs_that_need_grad_are_refused_with_out():
    a, b = t(5, 7), t(7, 4)
    with pytest.raises(RuntimeError, match="out requires grad"):
        warpgemm.matmul(a, b, out=torch.empty(5, 4, dtype=BF, device=DEV, requires_grad=True))
    x, w = t(6, 8).requires_grad_(), t(2, 8, 3)
    offs = torch.tensor([2, 6], dtype=torch.int32, device=DEV)
    with pytest.raises(RuntimeError, match="grouped_mm.*out=.*automatic differentiation"):
        warpgemm.grouped_mm(x, w, offs, out=torch.empty(6, 3, dtype=BF, device=DEV))
    with torch.no_grad():  # without grad mode the same call is fine
        warpgemm.grouped_mm(x, w, offs, out=torch.empty(6, 3, dtype=BF, device=DEV))


def test_scaled_mm_keeps_a_bias_that_needs_grad_in_the_graph():
    a = torch.randn(16, 32, device=DEV).to(torch.float8_e4m3fn)
    b = torch.randn(16, 32, device=DEV).to(torch.float8_e4m3fn).t()
    one = torch.tensor(1.0, device=DEV)
    bias = torch.randn(16, device=DEV, requires_grad=True)
    out = warpgemm.scaled_mm(a, b, one, one, bias, out_dtype=torch.float32)
    out += 1.0  # in-place on the output stays legal, as on torch._scaled_mm's
    out.relu_()
    with pytest.raises(RuntimeError, match="derivative of warpgemm.scaled_mm is not implemented"):
        out.sum().backward()


def test_an_invalid_forced_config_is_refused_on_every_path():
    """A config the GPU would refuse must not pass silently on the CPU (the portable path ignores configs)."""
    with pytest.raises(ValueError, match=r"config .* is invalid for torch.bfloat16 inputs"):
        warpgemm.matmul(t(8, 8), t(8, 8), config=GemmConfig(block_m=100))


def test_non_tensor_bias_and_wrong_out_dtype_name_the_argument():
    with pytest.raises(TypeError, match="bias must be a torch.Tensor, got list"):
        warpgemm.matmul(t(5, 4), t(4, 4), bias=[1.0, 2.0, 3.0, 4.0])
    with pytest.raises(TypeError, match=r"out must have dtype torch.bfloat16 or torch.float32 for torch.bfloat16 "
                                        r"inputs, got torch.float16"):
        warpgemm.matmul(t(5, 4), t(4, 4), out=torch.empty(5, 4, dtype=torch.float16, device=DEV))


def test_grouped_offs_messages_for_the_groups_along_k_form():
    a, b = t(4, 10), t(10, 3)
    with pytest.raises(ValueError, match=r"offs is required for the 2-D x 2-D .* cumulative end offsets \(one per "
                                         r"group\)"):
        warpgemm.grouped_mm(a, b)
    with pytest.raises(ValueError, match=r"offs must have shape \(G,\) for G groups, got \(2, 1\)"):
        warpgemm.grouped_mm(a, b, torch.tensor([[4], [10]], dtype=torch.int32, device=DEV))


def test_meta_tensors_plan_and_infer_shapes():
    a = torch.empty(300, 4096, dtype=BF, device="meta")
    w = torch.empty(11008, 4096, dtype=BF, device="meta")
    text = warpgemm.explain(a, w.t())
    assert "path=hopper" in text and "config=" in text, text
    out = warpgemm.matmul(a, w.t())
    assert out.device.type == "meta" and out.shape == (300, 11008) and out.dtype == BF
    assert warpgemm.linear(a, w).shape == (300, 11008)
    given = torch.empty(300, 11008, dtype=BF, device="meta")
    assert warpgemm.matmul(a, w.t(), out=given) is given  # meta tensors have no storage to alias
    assert "config=" in warpgemm.explain(a, w.t(), out=given)


def test_matmul_with_out_compiles_fullgraph():
    a, b = t(5, 7), t(7, 4)

    def f(a, b, o):
        return warpgemm.matmul(a, b, out=o)

    o = torch.full((5, 4), float("nan"), dtype=BF, device=DEV)
    torch.compile(f, fullgraph=True)(a, b, o)
    assert torch.allclose(o.float(), a.float() @ b.float(), rtol=2e-2, atol=2e-2)
    big = t(12, 4)  # b and out: two disjoint slices of one storage (no overlap: written in place)
    b_before = big[:7].clone()
    torch.compile(f, fullgraph=True)(a, big[:7], big[7:])
    assert torch.allclose(big[7:].float(), a.float() @ b_before.float(), rtol=2e-2, atol=2e-2)
    assert torch.equal(big[:7], b_before)
    # An out whose strides do not fold to (batches, M, N): computed aside and copied in, traced too.
    a4, b2 = t(2, 3, 5, 7), t(7, 4)
    o4 = torch.full((3, 2, 5, 4), float("nan"), dtype=BF, device=DEV).transpose(0, 1)
    torch.compile(f, fullgraph=True)(a4, b2, o4)
    assert torch.allclose(o4.float(), a4.float() @ b2.float(), rtol=2e-2, atol=2e-2)


def test_bench_without_a_hopper_gpu_exits_nonzero_and_writes_nothing(tmp_path):
    from typer.testing import CliRunner

    from warpgemm.cli import app

    if torch.cuda.is_available() and _env.is_hopper(torch.cuda.current_device()):
        pytest.skip("a Hopper GPU is here: bench would run")
    res = CliRunner().invoke(app, ["bench", "dense", "--json", str(tmp_path / "o.json")], terminal_width=200)
    assert res.exit_code == 2 and "needs an NVIDIA Hopper GPU" in res.output, res.output
    assert not (tmp_path / "o.json").exists()


def test_config_fields_are_typed_at_construction():
    for bad, what in ((dict(block_m="128"), "block_m must be an int, got '128'"),
                      (dict(stages=3.0), "stages must be an int, got 3.0"),
                      (dict(stream_k=2), "stream_k must be a bool, got 2")):
        with pytest.raises(TypeError, match=what):
            GemmConfig(**bad)
    cfg = GemmConfig(stream_k=True)
    assert GemmConfig.from_list(cfg.to_list()) == cfg and GemmConfig.from_list(cfg.to_list()).stream_k is True
    # Integers of other types (numpy's, a 0-dim tensor) are the int they hold.
    np = pytest.importorskip("numpy")
    odd = GemmConfig(block_m=np.int64(64), block_n=torch.tensor(128))
    assert odd == GemmConfig(block_m=64, block_n=128) and type(odd.block_m) is int and type(odd.block_n) is int
    for bad in (torch.tensor([128]), torch.tensor(True)):  # not a 0-dim integer
        with pytest.raises(TypeError, match="block_m must be an int"):
            GemmConfig(block_m=bad)


def test_bench_config_names_are_checked_before_the_gpu():
    """A mistyped --configs is a usage error (exit 2, naming the option and the name) on any machine."""
    from typer.testing import CliRunner

    from warpgemm.cli import app

    for cmd in (["bench", "sweep"], ["bench", "decode"]):
        res = CliRunner().invoke(app, cmd + ["--configs", "128x256x64_s3,bogus"], terminal_width=200)
        assert res.exit_code == 2 and "--configs" in res.output and "bogus" in res.output, res.output


def test_a_forced_hopper_backend_refuses_cpu_tensors(monkeypatch):
    """WARPGEMM_BACKEND=hopper makes a GEMM that cannot run the sm_90 kernels raise, on a CPU tensor as on a GPU
    without wgmma, instead of running the portable kernel without a word."""
    monkeypatch.setattr(_env, "BACKEND", "hopper")
    monkeypatch.setattr(_env, "INTERPRET", True)  # CPU tensors pass the device check on a GPU machine too (no launch)
    with pytest.raises(RuntimeError, match="WARPGEMM_BACKEND=hopper needs an sm_90 GPU, got a CPU tensor"):
        warpgemm.matmul(t(4, 8, device="cpu"), t(8, 4, device="cpu"))


def test_add_and_mul_refuse_a_static_out_and_check_a_forced_config_on_every_path():
    """As matmul does: a marked weight is never written (also where torch computes the op), and a forced config is
    checked whichever path runs (it was accepted unread off the GPU)."""
    from warpgemm import static_weights
    from warpgemm.config import StreamConfig

    x, y, w = t(4, 8), t(4, 8), t(4, 8)
    static_weights.mark_static(w)
    try:
        for call in (lambda: warpgemm.add(x, y, out=w[1:]), lambda: warpgemm.mul(x[1:], 2.0, out=w[1:]),
                     lambda: warpgemm.mul(x, y, out=w)):
            with pytest.raises(ValueError, match="out shares memory with a tensor marked as a static weight"):
                call()
    finally:
        static_weights.mark_static(w, False)
    assert torch.equal(warpgemm.add(x, y, out=w), x + y)  # unmarked: written
    with pytest.raises(TypeError, match="config must be a warpgemm.StreamConfig or None, got str"):
        warpgemm.add(x, y, config="x")
    bad = StreamConfig(load_slots=64)
    with pytest.raises(ValueError, match=r"config .* is invalid for torch.bfloat16 tensors"):
        warpgemm.mul(x, y, config=bad)


def test_the_interpreter_path_names_a_numpy_it_cannot_run_on(monkeypatch):
    """triton 3.6's interpreter fails on numpy >= 2.4 deep inside a kernel; warpgemm says so when imported under
    TRITON_INTERPRET=1 (the pin lives in the test extra only)."""
    import numpy

    import triton

    monkeypatch.setattr(triton, "__version__", "3.6.0")
    monkeypatch.setattr(numpy, "__version__", "2.4.0rc1")
    with pytest.raises(ImportError, match=r"fails on numpy >= 2.4; found numpy 2.4.0rc1: pip install 'numpy<2.4'"):
        _env._check_interpreter_numpy()
    monkeypatch.setattr(numpy, "__version__", "2.3.5")
    _env._check_interpreter_numpy()
    monkeypatch.setattr(numpy, "__version__", "2.4.0")
    monkeypatch.setattr(triton, "__version__", "3.7.0")  # not refused where another triton may have fixed it
    _env._check_interpreter_numpy()
