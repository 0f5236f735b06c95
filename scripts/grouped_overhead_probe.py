"""Probe: which part of the grouped kernel costs time against the dense one (one aligned group, same config).

Swaps the scheduler / epilogue policies of the grouped launch (valid here: one group, every tile full, so the
plain scheduler and the plain TMA epilogue compute the same thing) and times each with do_bench."""
import torch
import triton

import warpgemm.kernels.hopper.gemm as gm
from warpgemm.heuristics import LARGE
from warpgemm.kernels.group_table import build_group_table
from warpgemm.kernels.hopper import epilogue as ep, expert_scheduler as es, scheduler as sc
from warpgemm.kernels.hopper import tma_operands as tma

T, K, N = 16384, 14336, 4096
a = torch.randn(T, K, device="cuda", dtype=torch.bfloat16)
b = torch.randn(1, N, K, device="cuda", dtype=torch.bfloat16).transpose(1, 2)
c = torch.empty(1, T, N, device="cuda", dtype=torch.bfloat16)
offs = torch.tensor([T], device="cuda", dtype=torch.int32)
table = build_group_table(offs, T, LARGE.block_m)
orig = gm.kernel_constexprs
ref = None
import sys  # noqa: E402

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from _probe_epilogues import MaskedOnly  # noqa: E402

for sched, epi in [(es.ExpertTileScheduler, ep.RowBoundStoreEpilogue), (es.ExpertTileScheduler, ep.TmaStoreEpilogue),
                   (es.ExpertTileScheduler, MaskedOnly),
                   (sc.GroupedTileScheduler, MaskedOnly), (sc.GroupedTileScheduler, ep.TmaStoreEpilogue)]:
    def patched(*args, _s=sched, _e=epi, **kw):
        d = orig(*args, **kw)
        d["SchedulerImpl"], d["EpilogueImpl"] = _s, _e
        return d
    gm.kernel_constexprs = patched
    launch = gm.GemmLaunch(LARGE, tma.describe(a.unsqueeze(0), 2), tma.describe(b, 1), tma.describe(c, 2), False, True,
                           False, torch.cuda.get_device_properties(0).multi_processor_count, groups=1)
    gm.kernel_constexprs = orig
    c.fill_(float("nan"))
    launch.launch(a.unsqueeze(0), b, c, None, table)
    torch.cuda.synchronize()
    if ref is None:
        ref = c.clone()
    ms = triton.testing.do_bench(lambda: launch.launch(a.unsqueeze(0), b, c, None, table))
    print(f"{sched.__name__:>22} {epi.__name__:>22} {ms:.3f} ms {2 * T * K * N / ms / 1e9:.1f} TF/s "
          f"same={torch.equal(c, ref)}")
