"""The one-partition kernel's config field and the heuristics' rule for it (host logic, meta tensors)."""
import pytest
import torch

from warpgemm import one_partition_rule
from warpgemm.bench.suites import GEMM_SUITES, GemmCase
from warpgemm.candidates import parse_config
from warpgemm.config import GemmConfig, check_config, launch_warps
from warpgemm.heuristics import FP8_NARROW, FP8_SMALL, NARROW, SHIPPED_CONFIGS, SMALL, choose_fp8_config
from warpgemm.ops import gemm_impl
from warpgemm.ops.grouped import grouped_config_problem
from warpgemm.ops.grouped_ragged_k import forced_config_problem

BF = torch.bfloat16
E4 = torch.float8_e4m3fn
FLAT = dict(warp_specialize=False)


def meta(*shape, dtype=BF):
    return torch.empty(shape, dtype=dtype, device="meta")


def chosen(M, N, K, dtype=BF, out_dtype=None, weight_layout=True, batch=1):
    a = meta(batch, M, K, dtype=dtype)
    b = meta(N, K, dtype=dtype).t().unsqueeze(0) if weight_layout else meta(1, K, N, dtype=dtype)
    return gemm_impl.resolve_config(None, a, meta(batch, M, N, dtype=out_dtype or dtype), b)


@pytest.mark.parametrize("bad, reason", [
    (GemmConfig(128, 128, 64, 5, 4, consumers=2, **FLAT), "one consumer"),
    (GemmConfig(128, 128, 64, 6, 4, cluster_m=2, **FLAT), "cluster_m=1"),
    (GemmConfig(128, 128, 64, 6, 4, split_k=2, **FLAT), "split_k=1"),
    (GemmConfig(128, 128, 64, 6, 4, stream_k=True, **FLAT), "stream_k=False"),
    (GemmConfig(128, 192, 64, 4, 8, store_chunks=3, **FLAT), "power-of-two width"),
])
def test_what_one_partition_cannot_run_is_refused_by_name(bad, reason):
    assert reason in check_config(bad, BF, BF)


def test_grouped_and_ragged_k_refuse_it():
    flat = SMALL.replace(**FLAT)
    assert check_config(flat.replace(block_k=128), torch.float8_e4m3fn, BF) is None  # fp8 runs it (scaled.plan)
    assert "warp_specialize must be True" in grouped_config_problem(flat)
    assert "warp_specialize must be True" in forced_config_problem(flat)


def test_name_launch_and_op_boundary():
    flat = NARROW.replace(stages=2, **FLAT)
    assert flat.name == "64x64x128_s2_w4_g8_flat" and parse_config(flat.name) == flat
    assert GemmConfig.from_list(flat.to_list()) == flat
    assert launch_warps(flat) == (4, None)  # no producer warpgroup, Triton's own register limit
    for cfg in one_partition_rule.one_partition_variants(SHIPPED_CONFIGS):
        assert check_config(cfg, BF, BF) is None and parse_config(cfg.name) == cfg


def test_the_rule_takes_one_wave_of_tiles_whose_k_fits_the_ring():
    cfg, why = chosen(512, 512, 512)
    assert cfg == NARROW.replace(stages=4, **FLAT) and "one partition: 64 tiles" in why  # 4 K steps: 4 slots
    assert chosen(512, 512, 768)[0] == NARROW.replace(stages=4, **FLAT)  # 6 K steps fit NARROW's 6: 4 slots
    one_partition_rule.RING_CAP = False
    try:
        assert chosen(512, 512, 768)[0] == NARROW.replace(**FLAT)  # uncapped: as many slots as K steps
    finally:
        one_partition_rule.RING_CAP = True
    # LONGER_K: plain 64-row tiles keep 4 slots up to 16 K steps (K <= 2048).
    one_partition_rule.LONGER_K = False
    try:
        assert chosen(512, 512, 896)[0] == NARROW  # 7 K steps past NARROW's 6 slots: the producer warp runs ahead
        assert chosen(1024, 1024, 1024)[0].warp_specialize  # 128 tiles but 16 K steps of 64
    finally:
        one_partition_rule.LONGER_K = True
    assert chosen(512, 512, 896)[0] == NARROW.replace(stages=4, **FLAT)  # 7 K steps
    assert chosen(1024, 1024, 1024)[0] == SMALL.replace(stages=4, **FLAT)  # 16 K steps of 64
    assert chosen(512, 512, 2176)[0] == NARROW  # 17 K steps
    assert fp8_chosen(1024, 1024, 1536) == FP8_SMALL.replace(stages=4, **FLAT)  # 12 K steps of 128
    assert fp8_chosen(128, 4096, 4096).warp_specialize  # 16 K steps, but K = 4096: a weight stream
    for name, suite in GEMM_SUITES.items():  # no suite shape but `small`'s changes plan with it either
        for case in suite() if name != "small" else ():
            if case in RULES_GROUND:
                continue
            assert chosen(case.M, case.N, case.K)[0].warp_specialize, (name, case)
            assert fp8_chosen(case.M, case.N, case.K).warp_specialize, (name, case)
    assert chosen(1600, 1600, 256)[0].warp_specialize  # more tiles than SMs
    # Other dtypes, layouts and batches take it too (all tested forced on the GPU: test_gpu_one_partition.py).
    assert not chosen(256, 256, 256, dtype=torch.float16)[0].warp_specialize
    assert not chosen(256, 256, 256, out_dtype=torch.float32)[0].warp_specialize
    assert not chosen(256, 256, 256, weight_layout=False)[0].warp_specialize
    assert not chosen(128, 128, 128, batch=3)[0].warp_specialize
    assert chosen(256, 256, 256, batch=40)[0].warp_specialize  # more than one wave of any tile


def test_64x64_tiles_filling_few_sms_are_halved():
    cfg, why = chosen(256, 256, 256)  # 16 64x64 tiles: 32 of 64x32
    assert cfg == NARROW.replace(block_n=32, stages=2, **FLAT) and "32 tiles" in why and "twice the SMs" in why
    assert chosen(448, 448, 512)[0].block_n == 32  # 49 tiles: at most 40% of 132 SMs
    assert chosen(512, 448, 512)[0] == NARROW.replace(stages=4, **FLAT)  # 56: more
    one_partition_rule.NARROW_HALVES = False
    try:
        assert chosen(256, 256, 256)[0] == NARROW.replace(stages=2, **FLAT)
    finally:
        one_partition_rule.NARROW_HALVES = True


def test_off_switch_and_forced_configs():
    one_partition_rule.ONE_PARTITION_ENABLED = False
    try:
        assert chosen(256, 256, 256)[0] == NARROW
    finally:
        one_partition_rule.ONE_PARTITION_ENABLED = True
    a, b, c = meta(1, 256, 256), meta(256, 256).t().unsqueeze(0), meta(1, 256, 256)
    assert gemm_impl.resolve_config(NARROW, a, c, b)[0] == NARROW  # a forced config runs as given


# `round`'s 1000^3: one wave of 64x128 tiles over 16 K steps, the rule's own ground. A 16-bit K-major weight whose
# rows start off 32-byte sectors (K = 1000) takes the cluster pair first (off_sector.py); with an N-major weight, and
# in fp8, the rule runs it in one partition.
RULES_GROUND = {GemmCase(1000, 1000, 1000)}


def test_round_suite_meets_the_rule_only_at_1000_cubed():
    for dtype in (BF, torch.float16):
        assert chosen(1000, 1000, 1000, dtype=dtype)[0].cluster_m == 2
        assert not chosen(1000, 1000, 1000, dtype=dtype, weight_layout=False)[0].warp_specialize
    assert not fp8_chosen(1000, 1000, 1000).warp_specialize


def test_no_suite_shape_changes_plan():
    """The suites' products have K >= 4096 (or 2048 at 2048^3) over deep rings, or more tiles than SMs: the
    rule leaves every one of them warp-specialized, in both layouts and both 16-bit dtypes (but `small`, its own)."""
    for name, suite in GEMM_SUITES.items():
        if name == "small":
            continue
        for case in suite():
            if case in RULES_GROUND:
                continue
            for dtype in (BF, torch.float16):
                for weight_layout in (True, False):
                    cfg = chosen(case.M, case.N, case.K, dtype=dtype, weight_layout=weight_layout)[0]
                    assert cfg.warp_specialize, (name, case, cfg.name)


def fp8_chosen(M, N, K, out_dtype=BF, rowwise=False):
    cfg, _ = choose_fp8_config(M, N, K, out_dtype, 132, rowwise=rowwise)
    flat = one_partition_rule.one_partition_config(cfg, 1, M, N, K, 132, E4, out_dtype)
    return flat[0] if flat else cfg


def test_fp8_products_take_it_as_16_bit_ones_do():
    assert fp8_chosen(512, 512, 512) == FP8_NARROW.replace(stages=2, **FLAT)  # 2 K steps of 256
    assert fp8_chosen(256, 256, 256) == FP8_NARROW.replace(block_n=32, stages=2, **FLAT)  # 16 tiles: halved
    assert fp8_chosen(1024, 1024, 512, rowwise=True) == FP8_SMALL.replace(stages=4, **FLAT)
    assert fp8_chosen(16, 1024, 1024).swap_ab and not fp8_chosen(16, 1024, 1024).warp_specialize
    assert fp8_chosen(16, 4096, 4096).warp_specialize  # 16 K steps: the producer warp runs ahead
    assert fp8_chosen(1024, 1024, 1536) == FP8_SMALL.replace(stages=4, **FLAT)  # 12 K steps of 128: LONGER_K
    assert fp8_chosen(512, 512, 2048) == FP8_NARROW.replace(stages=4, **FLAT)  # 8 K steps of 256
    assert fp8_chosen(512, 512, 2304).warp_specialize  # 9 K steps, but K > 2048
    for rowwise in (False, True):
        for out_dtype in (BF, torch.float32):
            cfg = fp8_chosen(384, 640, 768, out_dtype, rowwise)
            assert not cfg.warp_specialize and check_config(cfg, E4, out_dtype) is None


def test_no_fp8_suite_shape_changes_plan():
    """`bench fp8` runs the dense, mid, decode, odd and round shapes: K >= 1024 over deep rings or more tiles than
    SMs."""
    for name, suite in GEMM_SUITES.items():
        if name == "small":
            continue
        for case in suite():
            if case in RULES_GROUND:
                continue
            for rowwise in (False, True):
                assert fp8_chosen(case.M, case.N, case.K, rowwise=rowwise).warp_specialize, (name, case)


def test_the_small_suite_is_the_rules_ground():
    """`bench small` measures what the rule changes: every shape runs in one partition, 16-bit and fp8."""
    for case in GEMM_SUITES["small"]():
        assert case.N % 16 == 0 and case.K % 16 == 0  # torch._scaled_mm's baseline takes them
        for dtype in (BF, torch.float16):
            assert not chosen(case.M, case.N, case.K, dtype=dtype)[0].warp_specialize, case
        assert not fp8_chosen(case.M, case.N, case.K).warp_specialize, case
