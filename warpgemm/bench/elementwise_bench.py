"""`warpgemm bench elementwise`: warpgemm.add against torch.add(out=...) in the same process, in TB/s.

Bytes counted are the minimum: both inputs read once and the output written once. The 4096^2 case is timed with
CUDA-graph replays (its ~64 us launches would otherwise carry launch overhead); the 32768^2 cases with do_bench.
"""
from __future__ import annotations

from typing import NamedTuple

import torch

from ..config import StreamConfig, check_stream_config
from .gemm_bench import environment
from .timing import alternate, geomean, warm_gpu


class StreamCase(NamedTuple):
    rows: int
    cols: int
    dtype: str
    graph: bool

    @property
    def label(self) -> str:
        return f"{self.rows}x{self.cols} {self.dtype}"


DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
ELEMENTWISE_SUITE = [StreamCase(32768, 32768, "fp32", False), StreamCase(32768, 32768, "bf16", False),
                     StreamCase(4096, 4096, "fp32", True)]

# Candidates the sweep measures (fp32; block_y = 128 elements = 512-byte rows unless stated).
SWEEP_CONFIGS = [
    StreamConfig(32, 128, 4, 2, 4),  # persistent, 16 KB tiles, 4 input slots, 2 output slots
    StreamConfig(64, 128, 3, 1, 8),  # persistent, the seed tutorial's choice: 32 KB tiles
    StreamConfig(32, 128, 2, 2, 4, ctas_per_sm=2, tiles_per_program=8),
    StreamConfig(32, 128, 2, 2, 4, ctas_per_sm=2, tiles_per_program=4),
    StreamConfig(32, 128, 2, 2, 4, ctas_per_sm=2, tiles_per_program=2),
    StreamConfig(32, 128, 2, 2, 4, ctas_per_sm=2, tiles_per_program=1),
    StreamConfig(32, 128, 2, 1, 4, ctas_per_sm=2, tiles_per_program=2),
    StreamConfig(32, 128, 1, 1, 4, ctas_per_sm=4, tiles_per_program=1),
    StreamConfig(16, 128, 2, 2, 4, ctas_per_sm=4, tiles_per_program=2),
    StreamConfig(16, 256, 2, 2, 4, ctas_per_sm=2, tiles_per_program=2),
    StreamConfig(32, 128, 2, 2, 8, ctas_per_sm=2, tiles_per_program=2),
    StreamConfig(64, 128, 1, 1, 4, ctas_per_sm=2, tiles_per_program=1),
]


def _run_case(case: StreamCase, rounds: int, config: StreamConfig | None = None) -> dict:
    import warpgemm

    dtype = DTYPES[case.dtype]
    a = torch.randn(case.rows, case.cols, device="cuda", dtype=dtype)
    b = torch.randn(case.rows, case.cols, device="cuda", dtype=dtype)
    c = torch.empty_like(a)
    ref = torch.empty_like(a)
    ours = lambda: warpgemm.add(a, b, out=c, config=config)  # noqa: E731
    base = lambda: torch.add(a, b, out=ref)  # noqa: E731
    ours(), base()
    bitwise = bool(torch.equal(c, ref))
    t = alternate(ours, base, rounds=rounds, use_graph=case.graph)
    nbytes = 3 * a.numel() * a.element_size()
    return {"case": case.label, "rows": case.rows, "cols": case.cols, "dtype": case.dtype,
            "timing": "cuda graph" if case.graph else "do_bench", "config": config.name if config else "default",
            "ms": t.ms_a, "ms_baseline": t.ms_b, "tbps": nbytes / t.ms_a / 1e9, "tbps_baseline": nbytes / t.ms_b / 1e9,
            "ratio": t.ms_b / t.ms_a, "rounds_ms": t.rounds_a, "rounds_ms_baseline": t.rounds_b,
            "bitwise_equal": bitwise}


def run_elementwise_suite(rounds: int = 5, sweep: bool = False, warmup_s: float = 3.0, progress=print) -> dict:
    warm_gpu(warmup_s)
    rows = []
    for case in ELEMENTWISE_SUITE:
        r = _run_case(case, rounds)
        rows.append(r)
        progress(f"{r['case']:>18} {r['ms']:8.3f} ms {r['tbps']:5.2f} TB/s torch {r['tbps_baseline']:5.2f} TB/s "
                 f"ratio {r['ratio']:.3f} bitwise {r['bitwise_equal']}")
    sweep_rows = []
    if sweep:
        for case in ELEMENTWISE_SUITE:
            for cfg in SWEEP_CONFIGS:
                if case.dtype != "fp32":  # same bytes per tile: 512-byte rows
                    cfg = cfg.replace(block_y=cfg.block_y * 4 // DTYPES[case.dtype].itemsize)
                if check_stream_config(cfg, DTYPES[case.dtype]) is not None:
                    continue
                r = _run_case(case, max(3, rounds - 2), cfg)
                sweep_rows.append(r)
                progress(f"sweep {r['case']:>18} {cfg.name:>24} {r['tbps']:5.2f} TB/s ratio {r['ratio']:.3f}")
    return {"suite": "elementwise", "op": "add", "baseline": "torch.add(a, b, out=c)",
            "bytes": "2 reads + 1 write of the tensor", "method": f"{rounds} alternating rounds after {warmup_s}s "
            "warm-up; median; ratio = baseline ms / warpgemm ms", "environment": environment(),
            "geomean_ratio": geomean(r["ratio"] for r in rows), "results": rows, "sweep": sweep_rows}
