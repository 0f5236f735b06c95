"""`scaled_mm`: fp8 matmul with torch._scaled_mm's semantics, dequantized in the GEMM's epilogue.

    out = (a @ b) * scale_a * scale_b (+ bias), a (M, K) and b (K, N) float8, accumulated in fp32.

Scales are fp32 device tensors: one per operand (numel 1, "tensorwise"), or one per row of a ((M, 1)) and one per
column of b ((1, N)): "rowwise". On sm_90 the product runs on the Hopper GEMM kernel with fp8 wgmma and the scales
applied to the fp32 accumulator before the bias (kernels/hopper/epilogue.OutputScales). Elsewhere (CPU, other
GPUs) a torch composite computes the same in float32.

Differences from torch._scaled_mm, all on purpose:
- out_dtype must be given (bf16, fp16 or fp32): an fp8 output (torch's default) is not offered, nor scale_result.
- Accumulation is wgmma's fp32 accumulator with no periodic promotion: the precision of
  torch._scaled_mm(..., use_fast_accum=True). So use_fast_accum defaults to True (torch's default is False: a call
  ported without it gets fast accumulation, as documented here), and an explicit False is refused.
- Any strides and alignments: operands torch refuses (a column-major a, a row-major b, K or N not a multiple of 16,
  scales at an offset) are read correctly, through copies where TMA needs them.
- A bias may be fp32 with any output dtype.
- No autograd (torch._scaled_mm has none either): with inputs that need grad the output is in the graph and its
  backward raises, as torch's does.
"""
from __future__ import annotations

from typing import List, NamedTuple, Optional

import torch
from torch import Tensor

from .. import _env, heuristics, off_sector, one_partition_rule, swap_rows
from ..config import GemmConfig, check_config
from ..kernels.hopper import tma_operands as tma
from . import autocast, checks, transforms
from . import gemm_impl
from .gemm_impl import select_path

FP8_DTYPES = (torch.float8_e4m3fn, torch.float8_e5m2)
OUT_DTYPES = (torch.bfloat16, torch.float16, torch.float32)
TENSORWISE, ROWWISE = 1, 2


def scale_mode(scale_a: Tensor, scale_b: Tensor, M: int, N: int) -> int:
    """TENSORWISE or ROWWISE from the scale shapes (torch._scaled_mm's rules), or a ValueError saying why not."""
    for name, s in (("scale_a", scale_a), ("scale_b", scale_b)):
        checks.check_tensor(name, s)
        if s.dtype != torch.float32:
            raise TypeError(f"{name} must be torch.float32, got {s.dtype}")
    if scale_a.numel() == 1 and scale_b.numel() == 1:
        return TENSORWISE
    if tuple(scale_a.shape) == (M, 1) and tuple(scale_b.shape) == (1, N):
        return ROWWISE
    raise ValueError(f"scale_a and scale_b must both have one element (tensorwise) or shapes ({M}, 1) and (1, {N}) "
                     f"(rowwise), got {tuple(scale_a.shape)} and {tuple(scale_b.shape)}")


def validate(a, b, scale_a, scale_b, bias, out_dtype, use_fast_accum, config) -> int:
    """Check every argument (messages name it, the expected and the actual value); returns the scale mode."""
    checks.check_tensor("a", a)
    checks.check_tensor("b", b)
    if a.dim() != 2 or b.dim() != 2:
        raise ValueError(f"a and b must be 2-D, got a {tuple(a.shape)} and b {tuple(b.shape)}")
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"b must have {a.shape[1]} rows (a's columns), got shape {tuple(b.shape)}")
    for name, t in (("a", a), ("b", b)):
        if t.dtype not in FP8_DTYPES:
            raise TypeError(f"{name} must be torch.float8_e4m3fn or torch.float8_e5m2, got {t.dtype}")
    if a.dtype == torch.float8_e5m2 and b.dtype == torch.float8_e5m2:
        raise TypeError("a and b cannot both be torch.float8_e5m2 (as in torch._scaled_mm): make one of them e4m3fn")
    if out_dtype not in OUT_DTYPES:
        why = (" (None means an fp8 output in torch._scaled_mm, which is not supported: pass the dtype)"
               if out_dtype is None else " (an fp8 output is not supported)" if out_dtype in FP8_DTYPES else "")
        raise TypeError(f"out_dtype must be torch.bfloat16, torch.float16 or torch.float32, got {out_dtype}{why}")
    if not use_fast_accum:
        raise ValueError("use_fast_accum=False is not supported: the kernel accumulates in wgmma's fp32 accumulator "
                         "without promotion, which is torch._scaled_mm's use_fast_accum=True")
    mode = scale_mode(scale_a, scale_b, a.shape[0], b.shape[1])
    checks.check_bias(bias, b.shape[1], out_dtype)
    checks.check_devices(allow_cpu=True, a=a, b=b, scale_a=scale_a, scale_b=scale_b, bias=bias)
    if config is not None and not isinstance(config, GemmConfig):
        raise TypeError(f"config must be a warpgemm.GemmConfig or None, got {type(config).__name__}")
    return mode


def reference(a, b, scale_a, scale_b, bias, out_dtype) -> Tensor:
    """The product in float32: what the fallback path returns, and what the tests compare against (in float32 inside
    an autocast region too: scaled_mm is not autocast)."""
    with autocast.suspended():
        prod = torch.matmul(a.float(), b.float()) * scale_a.float().reshape(-1, 1) * scale_b.float().reshape(1, -1)
        if bias is not None:
            prod = prod + bias.float()
        return prod.to(out_dtype)


class ScaledPlan(NamedTuple):
    config: GemmConfig
    reason: str
    a_copy: bool  # a copied into a K-major buffer of 32-byte-sector rows (tma_operands.padded_copy)
    b_copy: bool
    c_staged: bool
    launch: object  # kernels.hopper.gemm.GemmLaunch


_PLANS: dict[tuple, ScaledPlan] = {}
_PLAN_CACHE_LIMIT = 4096
gemm_impl._FORGET_HOOKS.append(_PLANS.clear)  # gemm_impl.forget_plans drops these too


def _geometry(x3: Tensor, contiguous_dim: int):
    g = tma.describe(x3, contiguous_dim)
    return (g, False) if g is not None else (tma.padded_geometry(x3.shape, x3.element_size(), contiguous_dim), True)


def plan(a: Tensor, b: Tensor, c: Tensor, mode: int, has_bias: bool, config: GemmConfig | None) -> ScaledPlan:
    from ..kernels.hopper.gemm import GemmLaunch

    M, K = a.shape
    N = b.shape[1]
    if config is not None:
        reason = check_config(config, a.dtype, c.dtype)
        if reason is not None:
            raise ValueError(f"config {config} is invalid for {a.dtype} inputs and a {c.dtype} output: {reason}")
        cfg, why = config, "forced by the caller"
    else:
        cfg, why = heuristics.choose_fp8_config(M, N, K, c.dtype, _env.sms_for(c.device), rowwise=mode == ROWWISE)
    # fp8 wgmma reads both operands K-major from shared memory: A row-major, B column-major (W.T of an (N, K) W).
    a_geom, a_copy = _geometry(a.unsqueeze(0), 2)
    b_geom, b_copy = _geometry(b.unsqueeze(0), 1)
    fit = None if config is not None else swap_rows.swap_rows_config(cfg, 1, M, N, _env.sms_for(c.device), a.dtype,
                                                                      c.dtype)
    if fit is not None:
        cfg, why = fit[0], f"{why}; {fit[1]}"
    elif config is None and not b_copy and tma.off_sector(b_geom, b.element_size()):
        # Rows of 16 mod 32 bytes (off_sector.off_sector_config, which gives row-wise scales only pairs that store
        # 128x256 tiles in chunks: heuristics.FP8_LARGE_ROWWISE's comment).
        pair = off_sector.off_sector_config(cfg, 1, M, N, _env.sms_for(c.device), a.dtype, c.dtype,
                                            rowwise=mode == ROWWISE)
        if pair is not None:
            cfg, why = pair[0], f"{why}; {pair[1]}"
    if config is None:  # last, as in gemm_impl.resolve_config
        cfg, why = one_partition_rule.applied(cfg, why, 1, M, N, K, _env.sms_for(c.device), a.dtype, c.dtype)
    c_geom = tma.describe(c.unsqueeze(0), 2)
    c_staged = c_geom is None
    if c_staged:
        c_geom = tma.padded_geometry((1, M, N), c.element_size(), 2)
    launch = GemmLaunch(cfg, a_geom, b_geom, c_geom, False, False, has_bias, _env.sms_for(c.device), scale=mode)
    return ScaledPlan(cfg, why, a_copy, b_copy, c_staged, launch)


def _plan_key(a, b, c, mode, scales, bias, config) -> tuple:
    # Pointer alignment is in the key: Triton specializes a compiled kernel on it (16-byte divisibility).
    return (a.shape, a.stride(), b.shape, b.stride(), a.dtype, b.dtype, c.dtype, mode, a.data_ptr() % 16 == 0,
            b.data_ptr() % 16 == 0, c.device.index, scales[0].data_ptr() % 16 == 0, scales[1].data_ptr() % 16 == 0,
            None if bias is None else (bias.dtype, bias.data_ptr() % 16 == 0), config)


def scaled_mm_into(a, b, scale_a, scale_b, bias, c, mode: int, config: GemmConfig | None = None):
    """Write the scaled product into c (M, N), contiguous. Arguments are validated by the caller. Returns the plan
    when the kernel ran on the caller's own tensors (no copies, no staging), else None."""
    M, K = a.shape
    if c.numel() == 0:
        return
    if K == 0:
        with torch.no_grad():
            c.copy_(reference(a, b, scale_a, scale_b, bias, c.dtype))
        return
    choice = select_path(c.device)
    if choice.path == "portable":
        if _env.LOG_ENABLED:
            _env.log(f"scaled_mm {M}x{b.shape[1]}x{K}: torch float32 composite ({choice.reason})")
        with torch.no_grad():  # as on the GPU path: no autograd through scales or bias
            c.copy_(reference(a, b, scale_a, scale_b, bias, c.dtype))
        return
    if bias is not None and bias.stride(0) != 1:
        bias = bias.contiguous()
    scales = (scale_a.reshape(-1).contiguous(), scale_b.reshape(-1).contiguous())
    key = _plan_key(a, b, c, mode, scales, bias, config)
    p = _PLANS.get(key)
    if p is None:
        if len(_PLANS) >= _PLAN_CACHE_LIMIT:
            _PLANS.clear()
        p = _PLANS[key] = plan(a, b, c, mode, bias is not None, config)
    if _env.LOG_ENABLED:
        _env.log(f"scaled_mm {M}x{b.shape[1]}x{K} {a.dtype}x{b.dtype}->{c.dtype} "
                 f"{'rowwise' if mode == ROWWISE else 'tensorwise'}: path=hopper, config={p.config.name} "
                 f"({p.reason})" + ("; a copied K-major" if p.a_copy else "") + ("; b copied K-major" if p.b_copy
                                                                                else ""))
    a3 = tma.padded_copy(a.unsqueeze(0), 2) if p.a_copy else a.unsqueeze(0)
    b3 = tma.padded_copy(b.unsqueeze(0), 1) if p.b_copy else b.unsqueeze(0)
    c3 = tma.output_buffer((1, M, c.shape[1]), c.dtype, c.device) if p.c_staged else c.unsqueeze(0)
    if torch.cuda.current_device() != c.device.index:
        with torch.cuda.device(c.device.index):
            p.launch.launch(a3, b3, c3, bias, scales=scales)
    else:
        p.launch.launch(a3, b3, c3, bias, scales=scales)
    if p.c_staged:
        c.copy_(c3[0])
        return None
    return None if p.a_copy or p.b_copy else p


@torch.library.custom_op("warpgemm::scaled_mm", mutates_args=())
def _scaled_mm_op(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, bias: Optional[Tensor],
                  out_dtype: torch.dtype, config: Optional[List[int]]) -> Tensor:
    """(M, K) fp8 @ (K, N) fp8, scaled, (+ bias), as out_dtype. Arguments checked by `scaled_mm`."""
    transforms.refuse_tangents("scaled_mm", a, b, scale_a, scale_b, bias)
    c = torch.empty((a.shape[0], b.shape[1]), dtype=out_dtype, device=a.device)
    mode = scale_mode(scale_a, scale_b, a.shape[0], b.shape[1])
    scaled_mm_into(a, b, scale_a, scale_b, bias, c, mode, None if config is None else GemmConfig.from_list(config))
    return c


@_scaled_mm_op.register_fake
def _scaled_mm_fake(a, b, scale_a, scale_b, bias, out_dtype, config):
    return a.new_empty((a.shape[0], b.shape[1]), dtype=out_dtype)


_PLAIN = (Tensor, torch.nn.Parameter)


class _NoDerivative(torch.autograd.Function):
    """The output of a call whose inputs require grad, as torch._scaled_mm leaves it: part of the graph, with a
    backward that raises (a result detached from the graph would drop those gradients without a word). The result
    is computed inside forward, so it is the Function's own output (not a view of an input) and in-place ops on it
    stay legal, as on torch's."""

    @staticmethod
    def forward(ctx, compute, *inputs):
        return compute()

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError("the derivative of warpgemm.scaled_mm is not implemented (nor is torch._scaled_mm's): "
                           "its inputs must not require grad where a loss is differentiated through it")


def scaled_mm(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, bias: Tensor | None = None,
              scale_result: Tensor | None = None, out_dtype: torch.dtype | None = None, use_fast_accum: bool = True,
              *, config: GemmConfig | None = None) -> Tensor:
    """torch._scaled_mm(a, b, scale_a, scale_b, bias, scale_result, out_dtype, use_fast_accum) on the warpgemm
    kernels, same argument order: a (M, K) and b (K, N) float8 (b ideally W.T of an (N, K) weight, read in place),
    fp32 scales (tensorwise or rowwise), optional (N,) bias of out_dtype or fp32. scale_result must be None (it
    scales an fp8 output). use_fast_accum defaults to True here, False in torch: see the module docstring."""
    if scale_result is not None:
        raise ValueError("scale_result must be None: it scales an fp8 output, which scaled_mm does not produce")
    # nn.Parameter counts as a plain tensor (fp8 weights are often kept as frozen Parameters).
    fast = (type(a) in _PLAIN and type(b) in _PLAIN and type(scale_a) in _PLAIN and type(scale_b) in _PLAIN
            and (bias is None or type(bias) in _PLAIN) and (config is None or type(config) is GemmConfig)
            and type(out_dtype) is torch.dtype and use_fast_accum is True and not _env.LOG_ENABLED
            and checks.plain_context()  # (False while tracing)
            and not (torch.is_grad_enabled()
                     and (a.requires_grad or b.requires_grad or scale_a.requires_grad or scale_b.requires_grad
                          or (bias is not None and bias.requires_grad))))
    fast = fast and checks.recipe_safe(a, b, scale_a, scale_b, bias)
    if fast:
        key = _recipe_key(a, b, scale_a, scale_b, bias, out_dtype, config)
        r = _RECIPES.get(key)
        if r is not None and torch._C._cuda_getDevice() == r.device_index:
            # A repeated eager call (decode steps, a model's layers): validated and planned when first seen.
            c = torch.empty(r.out_shape, dtype=out_dtype, device=a.device)
            r.launch.launch(a, b, c, bias, scales=(scale_a, scale_b))
            return c
    # After the fast path, whose plain_context() already rules out a transform or a forward-AD level.
    transforms.refuse("scaled_mm", a, b, scale_a, scale_b, bias)
    mode = validate(a, b, scale_a, scale_b, bias, out_dtype, use_fast_accum, config)
    graded = [t for t in (a, b, scale_a, scale_b, bias) if t is not None and t.requires_grad]
    if graded and torch.is_grad_enabled():
        if torch.compiler.is_compiling():
            raise RuntimeError("scaled_mm with inputs that require grad cannot be compiled (it has no derivative): "
                               "detach them or call it under torch.no_grad()")
        return _NoDerivative.apply(
            lambda: scaled_mm(a, b, scale_a, scale_b, bias, None, out_dtype, use_fast_accum, config=config), *graded)
    if torch.compiler.is_compiling() or a.device.type == "meta" or checks.under_dispatch_mode():
        return torch.ops.warpgemm.scaled_mm(a, b, scale_a, scale_b, bias, out_dtype,
                                            None if config is None else config.to_list())
    c = torch.empty((a.shape[0], b.shape[1]), dtype=out_dtype, device=a.device)
    p = scaled_mm_into(a, b, scale_a, scale_b, bias, c, mode, config)
    if (fast and p is not None and scale_a.is_contiguous() and scale_b.is_contiguous()
            and (bias is None or bias.stride(0) == 1)):
        # Recorded only where the launch read the caller's tensors themselves: a hit passes them straight on.
        if len(_RECIPES) >= _PLAN_CACHE_LIMIT:
            _RECIPES.clear()
        _RECIPES[key] = _Recipe(tuple(c.shape), c.device.index, p.launch)
    return c


class _Recipe(NamedTuple):
    out_shape: tuple
    device_index: int
    launch: object  # kernels.hopper.gemm.GemmLaunch


_RECIPES: dict[tuple, _Recipe] = {}


def _recipe_key(a, b, scale_a, scale_b, bias, out_dtype, config) -> tuple:
    """Everything validation and planning read, alignments included: a hit is a call already checked and planned."""
    bias_key = None if bias is None else (bias.shape, bias.stride(), bias.dtype, bias.device, bias.data_ptr() % 16)
    return (a.shape, a.stride(), b.shape, b.stride(), a.dtype, b.dtype, a.device, b.device, a.data_ptr() % 16,
            b.data_ptr() % 16, scale_a.shape, scale_a.stride(), scale_a.dtype, scale_a.device, scale_a.data_ptr() % 16,
            scale_b.shape, scale_b.stride(), scale_b.dtype, scale_b.device, scale_b.data_ptr() % 16, bias_key,
            out_dtype, config)
