"""Planning of Hopper launches (host logic only, on meta tensors): orientation, copies, staging, grid."""
import torch

from warpgemm.heuristics import SMALL
from warpgemm.ops import gemm_impl

BF = torch.bfloat16


def meta(*shape, dtype=BF):
    return torch.empty(shape, dtype=dtype, device="meta")


def plan(a3, b3, c3, bias=None, config=None):
    return gemm_impl.plan_hopper(a3, b3, c3, bias, config)


def test_weight_layout_is_read_in_place():
    a = meta(1, 4096, 4096)
    w = meta(14336, 4096)
    p = plan(a, w.t().unsqueeze(0), meta(1, 4096, 14336))
    assert (p.a_copy, p.b_copy, p.c_staged) == (0, 0, False)
    assert p.a.contiguous_dim == 2 and p.b.contiguous_dim == 1  # both K-major
    assert p.launch.grid == 132 and p.config.block_n == 256


def test_all_layouts_in_place():
    for a in (meta(1, 512, 256), meta(1, 256, 512).transpose(1, 2)):
        for b in (meta(1, 256, 384), meta(1, 384, 256).transpose(1, 2)):
            p = plan(a, b, meta(1, 512, 384))
            assert (p.a_copy, p.b_copy, p.c_staged) == (0, 0, False)


def test_odd_pitch_is_copied_and_odd_n_is_staged():
    p = plan(meta(1, 100, 7), meta(1, 7, 9), meta(1, 100, 9))
    assert p.a_copy == 2 and p.b_copy == 2 and p.c_staged
    assert p.a.strides[1] == 8 and p.c.strides[1] == 16


def test_forced_config_and_small_grid():
    p = plan(meta(1, 16, 64), meta(1, 64, 64), meta(1, 16, 64), config=SMALL)
    assert p.config == SMALL and p.config_reason == "forced by the caller" and p.launch.grid == 1


def test_broadcast_operand_reads_batch_zero():
    p = plan(meta(1, 256, 64), meta(4, 64, 64), meta(4, 256, 64))
    assert p.launch.constexprs["A_BATCHED"] is False and p.launch.constexprs["B_BATCHED"] is True
    # Swap-AB (decode-sized M): the kernel's A is the caller's B, read transposed.
    p = plan(meta(1, 16, 64), meta(4, 64, 64), meta(4, 16, 64))
    assert p.config.swap_ab
    assert p.launch.constexprs["A_BATCHED"] is True and p.launch.constexprs["B_BATCHED"] is False
