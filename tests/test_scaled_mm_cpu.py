"""scaled_mm (fp8, torch._scaled_mm semantics) without a GPU: argument checks, the float32 composite path, the fake
op, the fp8 heuristics, and sm_90a compiles of every fp8 config with both scale modes."""
import pytest
import torch

import warpgemm
from warpgemm.config import SMEM_LIMIT, GemmConfig, check_config
from warpgemm.heuristics import FP8_CONFIGS, choose_fp8_config
from warpgemm.ops.scaled import ROWWISE, TENSORWISE, reference, scale_mode

E4, E5, BF = torch.float8_e4m3fn, torch.float8_e5m2, torch.bfloat16


def operands(M=33, N=48, K=64, seed=0, dtype_b=E4):
    g = torch.Generator().manual_seed(seed)
    a = torch.randn(M, K, generator=g).to(E4)
    w = torch.randn(N, K, generator=g).to(dtype_b)
    return a, w.T, torch.rand((), generator=g) + 0.5, torch.rand((), generator=g) + 0.5


def test_composite_path_matches_dequantized_product():
    """On the CPU the product is the float32 composite: exact against a float64 dequantized reference up to
    float32 rounding, tensorwise and rowwise, with a bias, into each output dtype."""
    a, b, sa, sb = operands()
    g = torch.Generator().manual_seed(1)
    ra, rb = torch.rand(33, 1, generator=g) + 0.5, torch.rand(1, 48, generator=g) + 0.5
    for scales in ((sa, sb), (ra, rb)):
        for out_dtype in (BF, torch.float16, torch.float32):
            bias = torch.randn(48, generator=g).to(out_dtype)
            got = warpgemm.scaled_mm(a, b, *scales, bias, out_dtype=out_dtype)
            want = ((a.double() @ b.double()) * scales[0].double().reshape(-1, 1) * scales[1].double().reshape(1, -1)
                    + bias.double())
            assert got.dtype == out_dtype and got.shape == (33, 48)
            tol = {torch.float32: 1e-6, BF: 8e-3, torch.float16: 1e-3}[out_dtype]
            assert (got.double() - want).norm() / want.norm() < tol


def test_empty_and_k0():
    a, b, sa, sb = operands(M=0)
    assert warpgemm.scaled_mm(a, b, sa, sb, out_dtype=BF).shape == (0, 48)
    a, b, sa, sb = operands(K=0)
    bias = torch.ones(48, dtype=BF)
    out = warpgemm.scaled_mm(a, b, sa, sb, bias, out_dtype=BF)
    assert torch.equal(out, bias.expand(33, 48))


@pytest.mark.parametrize("change,kind,match", [
    (dict(a=torch.randn(4, 8, dtype=BF)), TypeError, "a must be torch.float8_e4m3fn or torch.float8_e5m2, got "
                                                     "torch.bfloat16"),
    (dict(out_dtype=None), TypeError, "out_dtype must be .* got None .None means an fp8 output"),
    (dict(out_dtype=E4), TypeError, "an fp8 output is not supported"),
    (dict(use_fast_accum=False), ValueError, "use_fast_accum=False is not supported"),
    (dict(scale_a=torch.ones(4)), ValueError, r"shapes \(4, 1\) and \(1, 6\)"),
    (dict(scale_a=torch.ones((), dtype=torch.float64)), TypeError, "scale_a must be torch.float32"),
    (dict(bias=torch.ones(5, dtype=BF)), ValueError, r"bias must have shape \(6,\)"),
    (dict(bias=torch.ones(6, dtype=torch.float16)), TypeError, "bias must be torch.bfloat16"),
    (dict(b=torch.randn(9, 6).to(E4)), ValueError, "b must have 8 rows"),
    (dict(a=torch.randn(2, 4, 8).to(E4)), ValueError, "a and b must be 2-D"),
    (dict(config=(128, 128)), TypeError, "config must be a warpgemm.GemmConfig"),
])
def test_bad_arguments_are_named(change, kind, match):
    args = dict(a=torch.randn(4, 8).to(E4), b=torch.randn(6, 8).to(E4).T, scale_a=torch.ones(()),
                scale_b=torch.ones(()), bias=None, out_dtype=BF, use_fast_accum=True, config=None)
    args.update(change)
    with pytest.raises(kind, match=match):
        warpgemm.scaled_mm(args.pop("a"), args.pop("b"), args.pop("scale_a"), args.pop("scale_b"), args.pop("bias"),
                           **args)


def test_torch_argument_order():
    """torch._scaled_mm's positional order (a, b, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum)
    works unchanged; scale_result (an fp8 output's scale) is refused by name."""
    a, b, sa, sb = operands()
    out = warpgemm.scaled_mm(a, b, sa, sb, None, None, BF, True)
    assert out.dtype == BF and torch.equal(out, reference(a, b, sa, sb, None, BF))
    with pytest.raises(ValueError, match="scale_result must be None"):
        warpgemm.scaled_mm(a, b, sa, sb, None, torch.ones(()), BF)
    with pytest.raises(TypeError, match="out_dtype must be .* got"):
        warpgemm.scaled_mm(a, b, sa, sb, out_dtype=[BF])  # unhashable: named, not a KeyError from a cache


def test_inputs_that_need_grad_give_a_backward_that_raises():
    """As torch._scaled_mm: the forward runs, and differentiating through it raises (no silent zero gradient)."""
    a, b, sa, sb = operands()
    out = warpgemm.scaled_mm(a, b, sa.requires_grad_(), sb, out_dtype=BF)
    assert out.requires_grad
    with pytest.raises(RuntimeError, match="derivative of warpgemm.scaled_mm is not implemented"):
        out.float().sum().backward()
    with torch.no_grad():
        assert not warpgemm.scaled_mm(a, b, sa, sb, out_dtype=BF).requires_grad


def test_both_e5m2_refused_and_mixed_accepted():
    a = torch.randn(4, 8).to(E5)
    with pytest.raises(TypeError, match="cannot both be torch.float8_e5m2"):
        warpgemm.scaled_mm(a, torch.randn(6, 8).to(E5).T, torch.ones(()), torch.ones(()), out_dtype=BF)
    out = warpgemm.scaled_mm(a, torch.randn(6, 8).to(E4).T, torch.ones(()), torch.ones(()), out_dtype=BF)
    assert out.shape == (4, 6)


def test_scale_modes():
    assert scale_mode(torch.ones(1, 1), torch.ones(1), 4, 6) == TENSORWISE
    assert scale_mode(torch.ones(4, 1), torch.ones(1, 6), 4, 6) == ROWWISE
    with pytest.raises(ValueError):
        scale_mode(torch.ones(4, 1), torch.ones(()), 4, 6)  # mixed modes: torch refuses them too


def test_fake_op_under_meta():
    a = torch.empty(16, 64, dtype=E4, device="meta")
    b = torch.empty(32, 64, dtype=E4, device="meta").T
    out = warpgemm.scaled_mm(a, b, torch.empty((), device="meta"), torch.empty((), device="meta"), out_dtype=BF)
    assert out.shape == (16, 32) and out.dtype == BF and out.device.type == "meta"


def test_opcheck_on_cpu():
    a, b, sa, sb = operands()
    # test_schema multiplies the inputs, which torch's CPU kernels cannot do in fp8: the fake tensor and autograd
    # registration checks run.
    torch.library.opcheck(torch.ops.warpgemm.scaled_mm.default, (a, b, sa, sb, None, BF, None),
                          test_utils=("test_faketensor", "test_autograd_registration"))


def test_torch_compile_fullgraph():
    """Tracing only (on the CPU the op is the composite): fullgraph through the custom op and its fake."""
    a, b, sa, sb = operands()
    f = torch.compile(lambda a, b: warpgemm.scaled_mm(a, b, sa, sb, out_dtype=BF), fullgraph=True, backend="eager")
    assert torch.equal(f(a, b), reference(a, b, sa, sb, None, BF))


@pytest.mark.parametrize("out_dtype", [BF, torch.float32])
@pytest.mark.parametrize("M", [1, 16, 40, 64, 128, 300, 512, 4096, 16384])
def test_fp8_heuristics_pick_valid_configs(M, out_dtype):
    cfg, why = choose_fp8_config(M, 8192, 4096, out_dtype, 132)
    assert check_config(cfg, E4, out_dtype) is None, (cfg.name, why)
    assert cfg.block_k * 1 >= 128  # fp8 K steps of at least 128 bytes


def test_fp8_configs_listed_are_the_ones_chosen():
    chosen = {choose_fp8_config(M, N, K, BF, 132, rowwise=r)[0] for M in (1, 16, 32, 64, 128, 256, 512, 4096, 16384)
              for N, K in ((4096, 4096), (14336, 4096), (28672, 8192)) for r in (False, True)}
    assert chosen <= set(FP8_CONFIGS)


def _compiled(cfg, scale, out_dtype, tmp_path, has_bias=True):
    from warpgemm.kernels.hopper.aot import compile_gemm, inspect_compiled

    kernel = compile_gemm(cfg, in_dtype=E4, out_dtype=out_dtype, a_batched=False, has_bias=has_bias, scale=scale)
    return kernel, inspect_compiled(kernel, f"fp8_{cfg.name}_{scale}", str(tmp_path))


# Every (config, scale mode) the heuristics can choose: the unchunked 128x256 tiles serve tensorwise scales only
# (a row-wise column-scale vector over 256 columns would spill: heuristics.FP8_LARGE).
FP8_CHOICES = [(c, m) for c in FP8_CONFIGS for m in (TENSORWISE, ROWWISE)
               if not (m == ROWWISE and c.block_n == 256 and c.store_chunks == 1)]


def test_fp8_choices_cover_the_heuristics():
    for M in (1, 16, 64, 128, 512, 1024, 4096, 16384):
        for N, K in ((4096, 4096), (14336, 4096), (28672, 8192)):
            for rowwise in (False, True):
                cfg, _ = choose_fp8_config(M, N, K, BF, 132, rowwise=rowwise)
                assert (cfg, ROWWISE if rowwise else TENSORWISE) in FP8_CHOICES, (M, N, K, cfg.name)


@pytest.mark.sm90_compile
@pytest.mark.parametrize("cfg,scale", FP8_CHOICES, ids=lambda x: getattr(x, "name", str(x)))
def test_fp8_config_compiles_clean(cfg, scale, tmp_path):
    """Every fp8 config the heuristics ship, with the scale modes they choose it for, with a bias: e4m3 wgmma with
    32-deep K, TMA, no spills, shared memory within the limit."""
    kernel, r = _compiled(cfg, scale, BF, tmp_path)
    assert "wgmma.mma_async.sync.aligned" in kernel.asm["ptx"] and ".e4m3.e4m3" in kernel.asm["ptx"]
    assert r.has_tma_load and r.has_setmaxnreg and (r.has_tma_store or cfg.swap_ab)
    assert r.stack_bytes == 0 and r.local_bytes == 0, f"register spills: {r}"
    assert r.shared_bytes <= SMEM_LIMIT


def _fp8_one_partition_choices():
    from warpgemm.one_partition_rule import one_partition_variants

    return [(c, m) for c in one_partition_variants(FP8_CONFIGS, E4) for m in (TENSORWISE, ROWWISE)
            if not (m == ROWWISE and c.block_n == 256 and c.store_chunks == 1)]


@pytest.mark.sm90_compile
@pytest.mark.parametrize("cfg,scale", _fp8_one_partition_choices(), ids=lambda x: getattr(x, "name", str(x)))
def test_fp8_one_partition_variants_compile_clean(cfg, scale, tmp_path):
    """What the one-partition rule can make of the fp8 configs (one_partition_rule.py, applied in scaled.plan), with
    both scale modes and a bias: e4m3 wgmma and TMA in one partition (no setmaxnreg), no spills."""
    kernel, r = _compiled(cfg, scale, BF, tmp_path)
    assert ".e4m3.e4m3" in kernel.asm["ptx"] and r.has_tma_load and not r.has_setmaxnreg, r
    assert r.stack_bytes == 0 and r.local_bytes == 0, f"register spills: {r}"
    assert r.shared_bytes <= SMEM_LIMIT


@pytest.mark.sm90_compile
def test_fp8_fp32_output_configs_compile_clean(tmp_path):
    from warpgemm.heuristics import FP8_CLUSTER_SMALL

    cases = [(choose_fp8_config(M, 8192, 8192, torch.float32, 132, rowwise=rowwise)[0], rowwise)
             for M, rowwise in ((16, True), (128, True), (512, True), (4096, True), (4096, False))]
    # The off-sector pair the heuristics take with fp32 outputs too (off_sector.off_sector_config).
    cases += [(FP8_CLUSTER_SMALL, True), (FP8_CLUSTER_SMALL, False)]
    for cfg, rowwise in cases:
        _, r = _compiled(cfg, ROWWISE if rowwise else TENSORWISE, torch.float32, tmp_path)
        assert r.stack_bytes == 0 and r.local_bytes == 0 and r.shared_bytes <= SMEM_LIMIT, (cfg.name, r)


@pytest.mark.sm90_compile
def test_unscaled_kernel_never_reads_the_scales(tmp_path):
    """SCALE=0 (every bf16 variant) leaves the scale pointers unused: they appear only in the kernel's signature,
    and the kernel loads nothing from global memory with pointer loads, as before the scales existed."""
    from warpgemm.heuristics import LARGE
    from warpgemm.kernels.hopper.aot import compile_gemm

    plain = compile_gemm(LARGE).asm["ttgir"]
    assert plain.count("%scale_a_ptr") == 1 and plain.count("%scale_b_ptr") == 1
    assert plain.count("tt.load") == 0
    scaled = compile_gemm(GemmConfig(128, 256, 128, 4, 8, store_chunks=4), in_dtype=E4, scale=ROWWISE,
                          a_batched=False).asm["ttgir"]
    assert scaled.count("%scale_a_ptr") > 1 and scaled.count("%scale_b_ptr") > 1


@pytest.mark.sm90_compile
@pytest.mark.parametrize("cfg,stack", [(GemmConfig(32, 16, 256, 8, 4, swap_ab=True), 0),
                                       (GemmConfig(128, 64, 128, 4, 4, split_k=2, swap_ab=True), 0),
                                       # Known: stream-K's one-warpgroup 128x128 tile with row-wise scales spills
                                       # 16 bytes (bf16 and tensorwise: none). No heuristic picks it for fp8.
                                       (GemmConfig(128, 128, 128, 4, 4, stream_k=True), 16)],
                         ids=lambda x: getattr(x, "name", str(x)))
def test_forced_fp8_variants_compile(cfg, stack, tmp_path):
    """Variants a user can force (32-row swap-AB tiles, swap-AB split-K, stream-K) with row-wise scales."""
    _, r = _compiled(cfg, ROWWISE, BF, tmp_path)
    assert r.stack_bytes <= stack and r.local_bytes == 0 and r.shared_bytes <= SMEM_LIMIT, (cfg.name, r)


def test_parts_hash_follows_every_kernel_source(tmp_path):
    """The PARTS_HASH constexpr (GEMM and elementwise kernels) changes with any edit to the Gluon parts, methods of
    policy classes included (Triton's own cache key does not follow those)."""
    import shutil
    from pathlib import Path

    from warpgemm.kernels.hopper import gemm, launch

    folder = Path(gemm.__file__).parent
    assert gemm.kernel_constexprs(GemmConfig(), True, True, False, False, False)["PARTS_HASH"] == \
        launch.parts_source_hash() == launch.source_hash(folder)
    copy = tmp_path / "hopper"
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns("__pycache__"))
    assert launch.source_hash(copy) == launch.source_hash(folder)
    epilogue = copy / "epilogue.py"
    source = epilogue.read_text()
    assert "acc = acc * along(" in source  # the edit below must change a method of OutputScales
    epilogue.write_text(source.replace("acc = acc * along(", "acc = acc * 2 * along(", 1))
    assert launch.source_hash(copy) != launch.source_hash(folder)


def test_frozen_parameters_are_plain_operands():
    """fp8 weights kept as frozen nn.Parameters take the same path (and results) as plain tensors."""
    a, b, sa, sb = operands()
    w = torch.nn.Parameter(b, requires_grad=False)
    bias = torch.nn.Parameter(torch.randn(b.shape[1]), requires_grad=False)
    got = warpgemm.scaled_mm(a, w, sa, sb, bias, out_dtype=torch.float32)
    assert torch.equal(got, warpgemm.scaled_mm(a, b, sa, sb, bias.detach(), out_dtype=torch.float32))
    assert not got.requires_grad


def test_fp8_weight_rows_off_sectors_take_cluster_pairs():
    """fp8 weights whose rows are 16 mod 32 bytes take the cluster pair of the chosen tile, as bf16 ones do
    (off_sector.off_sector_config); the 3-stage 128x256 pair only with per-tensor scales (its unchunked store), the
    4-stage chunked-store one with either (tests/test_hopper_plan.py has its rules)."""
    from warpgemm.heuristics import FP8_CLUSTER_LARGE, FP8_CLUSTER_LARGE_FEW_ROWS, FP8_CLUSTER_SMALL
    from warpgemm.ops.scaled import plan

    def chosen(M, N, K, mode=TENSORWISE, out=BF):
        a = torch.empty(M, K, dtype=E4, device="meta")
        w = torch.empty(N, K, dtype=E4, device="meta")
        return plan(a, w.T, torch.empty(M, N, dtype=out, device="meta"), mode, False, None)

    p = chosen(4096, 8192, 4112)
    assert p.config == FP8_CLUSTER_LARGE and "off 32-byte sectors" in p.reason, p.reason
    assert chosen(4096, 8192, 4112, ROWWISE).config == FP8_CLUSTER_LARGE_FEW_ROWS
    assert chosen(4096, 4096, 4112).config == FP8_CLUSTER_LARGE_FEW_ROWS  # 4 waves of pairs
    assert chosen(1000, 1008, 1008).config == FP8_CLUSTER_SMALL
    assert chosen(1000, 1008, 1008, ROWWISE).config == FP8_CLUSTER_SMALL
    assert chosen(849, 8896, 1424, ROWWISE).config.cluster_m == 1  # 3 waves of pairs for 2 of tiles: the guard
    assert chosen(4096, 4096, 4096).config.cluster_m == 1  # 4096-byte rows
    assert chosen(16, 4096, 4112).config.cluster_m == 1  # decode tiles keep theirs
    assert chosen(486, 2144, 2352).config.cluster_m == 1  # 128x128 pairs: 16-bit inputs only (measured)
