"""warpgemm: warp-specialized Gluon GEMM kernels for NVIDIA Hopper, as PyTorch ops.

    import warpgemm
    y = warpgemm.matmul(a, b)            # torch.matmul semantics, bf16/fp16, fp32 accumulation
    y = warpgemm.linear(x, w, bias)      # F.linear semantics; w.T is read in place
    print(warpgemm.explain(a, b))        # which path and kernel config would run, and why
    warpgemm.tune(a, b)                  # opt-in: time candidate configs here, keep the winner on disk
    c = warpgemm.add(a, b, alpha=0.5)    # torch.add on the warp-specialized stream kernel
    y = warpgemm.grouped_mm(x, w, offs)  # torch._grouped_mm semantics (mixture-of-experts)
    y = warpgemm.scaled_mm(a8, w8.T, sa, sb, out_dtype=torch.bfloat16)  # torch._scaled_mm (fp8)
    warpgemm.mark_static(model)          # inference weights: decode launches start loading them early
"""
from ._env import set_logging
from .config import GemmConfig, StreamConfig, check_config
from .heuristics import SHIPPED_CONFIGS, choose_config
from .ops import library as _library  # noqa: F401  (registers torch.ops.warpgemm.*)
from .ops.api import explain, linear, matmul, tune
from .ops.elementwise import add, mul
from .ops.group_gemm import group_gemm
from .ops.grouped import grouped_mm
from .ops.scaled import scaled_mm
from .ops import flops as _flops  # noqa: F401  (FLOP formulas of torch.ops.warpgemm.* for FlopCounterMode)
from .static_weights import is_static, mark_static

__version__ = "0.1.0"

__all__ = ["matmul", "linear", "explain", "tune", "add", "mul", "grouped_mm", "group_gemm", "scaled_mm", "mark_static",
           "is_static", "GemmConfig", "StreamConfig", "check_config", "choose_config", "SHIPPED_CONFIGS", "set_logging",
           "__version__"]
