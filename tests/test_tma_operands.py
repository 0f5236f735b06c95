"""Which strided tensors go to TMA as they are, and the padded copies for the rest (host logic, CPU tensors)."""
import torch

from warpgemm.kernels.hopper import tma_operands as tma

BF = torch.bfloat16


def rnd(*shape):
    return torch.randn(shape).to(BF)


def test_row_major_is_read_in_place():
    a = rnd(1, 64, 128)
    op = tma.describe(a, 2)
    assert op is not None and op.contiguous_dim == 2 and op.shape == (1, 64, 128) and op.strides[1:] == (128, 1)


def test_weight_transpose_is_k_major_in_place():
    w = rnd(96, 128)  # (N, K)
    b3 = w.t().unsqueeze(0)  # (1, K, N) column-major
    op = tma.describe_any(b3, 1)
    assert op is not None and op.contiguous_dim == 1 and op.shape == (1, 96, 128) and op.strides[1:] == (128, 1)


def test_column_major_a_is_read_in_place():
    a = rnd(128, 64).t().unsqueeze(0)  # (1, M=64, K=128), M contiguous
    op = tma.describe_any(a, 2)
    assert op is not None and op.contiguous_dim == 1


def test_unaligned_pitch_is_rejected_and_copied():
    a = rnd(1, 10, 7)  # 14-byte rows
    assert tma.describe_any(a, 2) is None
    copy = tma.padded_copy(a, 2)
    assert torch.equal(copy, a)
    assert tma.describe(copy, 2) == tma.padded_geometry(a.shape, 2, 2)
    # Rows padded to whole 32-byte sectors (16 elements): TMA reads rows that start mid-sector slowly.
    assert tma.padded_geometry(a.shape, 2, 2).strides[1] == 16
    assert not tma.off_sector(tma.padded_geometry(rnd(1, 10, 999).shape, 2, 2), 2)


def test_misaligned_base_is_rejected():
    big = rnd(1, 16, 72)
    view = big[:, :, 1:65]
    assert view.data_ptr() % 16 != 0
    assert tma.describe_any(view, 2) is None
    copy = tma.padded_copy(view, 2)
    assert torch.equal(copy, view)


def test_gapped_view_with_aligned_pitch_stays_in_place():
    big = rnd(1, 32, 64)
    view = big[:, ::2, :]  # row pitch 128 elements: still TMA-legal
    op = tma.describe(view, 2)
    assert op is not None and op.strides[1] == 128


def test_unit_dimensions_get_legal_strides():
    row = rnd(1, 1, 7)  # M = 1, odd K: the row stride is never stepped over
    op = tma.describe(row, 2)
    assert op is not None and op.strides[1] % 8 == 0 and op.strides[0] % 8 == 0
    col = rnd(1, 5, 1)  # N = 1 column
    assert tma.describe_any(col, 2) is not None


def test_broadcast_batch_stride_zero_is_not_tma_legal():
    x = rnd(1, 16, 16).expand(3, 16, 16)
    assert tma.describe_any(x, 2) is None


def test_output_buffer_pads_unaligned_rows():
    c = tma.output_buffer((2, 5, 7), BF, torch.device("cpu"))
    assert c.shape == (2, 5, 7) and c.stride(1) == 16
    assert tma.describe(c, 2) == tma.padded_geometry((2, 5, 7), 2, 2)
    c2 = tma.output_buffer((2, 5, 16), BF, torch.device("cpu"))
    assert c2.is_contiguous()
    # A staged output's buffer is always the one padded_geometry describes (also where the rows alone were legal:
    # the plan stages C for a misaligned base or pitch too).
    for n in (8, 600, 1000, 1001):
        c3 = tma.output_buffer((2, 5, n), BF, torch.device("cpu"))
        assert tma.describe(c3, 2) == tma.padded_geometry((2, 5, n), 2, 2), n


def test_padded_copy_geometry_matches_for_column_major():
    b = rnd(2, 13, 5)  # K=13, N=5 copied K-major
    copy = tma.padded_copy(b, 1)
    assert torch.equal(copy, b)
    assert tma.describe(copy, 1) == tma.padded_geometry(b.shape, 2, 1)


def test_off_sector_rows_are_the_odd_multiples_of_16_bytes():
    """bf16 rows of K = 8 mod 16 elements start 16 bytes into a 32-byte sector every other row (the heuristics give
    such operands cluster pairs); a unit dimension's stride is never stepped over."""
    geom = lambda x: tma.describe(x, 2)
    assert tma.off_sector(geom(rnd(1, 4, 1000)), 2)
    assert not tma.off_sector(geom(rnd(1, 4, 1008)), 2)
    assert not tma.off_sector(geom(rnd(1, 1, 1000)), 2)  # one row
    assert tma.off_sector(geom(rnd(3, 1, 1000)), 2)  # batches 2000 bytes apart
    assert tma.off_sector(tma.TmaGeometry((1, 4, 1040), (4 * 1040, 1040, 1), 2), 1)  # fp8 K = 16 mod 32
