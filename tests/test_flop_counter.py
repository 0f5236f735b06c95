"""torch.utils.flop_counter.FlopCounterMode counts warpgemm's GEMMs as it counts torch's (ops/flops.py), eager fast
paths included (under a dispatch mode the calls go through the registered ops). CPU tensors, Triton interpreter."""
import torch
from torch.utils.flop_counter import FlopCounterMode

import warpgemm

BF = torch.bfloat16


def _flops(fn) -> int:
    with FlopCounterMode(display=False) as mode:
        fn()
    return mode.get_total_flops()


def test_gemms_count_as_torch_counts_them():
    torch.manual_seed(0)
    x, w = torch.randn(6, 32, dtype=BF), torch.randn(16, 32, dtype=BF)
    want = 2 * 6 * 32 * 16
    assert _flops(lambda: torch.nn.functional.linear(x, w)) == want
    for _ in range(2):  # the second call would take the recorded eager recipe without a mode
        assert _flops(lambda: warpgemm.linear(x, w)) == want
    assert _flops(lambda: warpgemm.matmul(x, w.t(), out=torch.empty(6, 16, dtype=BF))) == want
    assert _flops(lambda: warpgemm.matmul(x.expand(3, 6, 32), w.t())) == 3 * want
    offs = torch.tensor([2, 6], dtype=torch.int32)
    assert _flops(lambda: warpgemm.grouped_mm(x, torch.randn(2, 32, 16, dtype=BF), offs)) == want
    assert _flops(lambda: warpgemm.grouped_mm(x.t(), torch.randn(6, 16, dtype=BF), offs)) == 2 * 32 * 6 * 16
    one = torch.tensor(1.0)
    assert _flops(lambda: warpgemm.scaled_mm(x.to(torch.float8_e4m3fn), w.to(torch.float8_e4m3fn).t(), one, one,
                                             out_dtype=BF)) == want


def test_training_step_counts_forward_and_backward():
    torch.manual_seed(1)
    x = torch.randn(6, 32, dtype=BF, requires_grad=True)
    w = torch.randn(16, 32, dtype=BF, requires_grad=True)
    ours = _flops(lambda: warpgemm.linear(x, w).float().sum().backward())
    theirs = _flops(lambda: torch.nn.functional.linear(x, w).float().sum().backward())
    assert ours == theirs == 3 * 2 * 6 * 32 * 16
