"""kernels/zero_rows.py under the Triton interpreter (CPU tensors): rows at or past clamp(max(offs), 0, T) become
zeros in place, every other element keeps its value, whatever the strides."""
import pytest
import torch

from warpgemm import _env
from warpgemm.kernels.zero_rows import zero_rows_past_end

pytestmark = pytest.mark.skipif(not _env.INTERPRET, reason="interpreter suite: runs where TRITON_INTERPRET=1")


@pytest.mark.parametrize("ends", [[10, 40], [40, 10], [0], [-5, -1], [70, 500], list(range(1, 2049)), [64]],
                         ids=["short", "decreasing", "zero", "negative", "past_T", "2048_groups", "all_owned"])
@pytest.mark.parametrize("columns", [False, True], ids=["row_major", "column_major"])
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("T", [64, 70, 1])
def test_zero_rows_past_the_last_end(ends, columns, dtype, T):
    C = 200
    x = torch.randn(C, T).t().to(dtype) if columns else torch.randn(T, C).to(dtype)
    want = x.clone()
    end = min(max(max(ends), 0), T)
    want[end:] = 0
    offs = torch.tensor(ends, dtype=torch.int32)
    zero_rows_past_end(x, offs)
    assert torch.equal(x, want)


def test_offsets_read_through_a_strided_view():
    x = torch.randn(48, 16)
    offs_all = torch.tensor([5, 99, 20, 99], dtype=torch.int32)
    want = x.clone()
    want[20:] = 0
    zero_rows_past_end(x, offs_all[::2])
    assert torch.equal(x, want)
