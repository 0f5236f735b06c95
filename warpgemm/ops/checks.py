"""Argument checks shared by the public ops. Every message names the argument, what was expected and what
was given."""
from __future__ import annotations

import torch
import torch.autograd.forward_ad as _forward_ad

from .. import _env
from . import autocast
from ..config import check_config
from ..static_weights import writes_static

GEMM_DTYPES = (torch.bfloat16, torch.float16)
PLAIN_TYPES = (torch.Tensor, torch.nn.Parameter)  # no subclass: a subclass's own dispatch must see the ops


_TRANSFORM_LEVEL = torch._C._functorch.maybe_current_level  # None outside every torch.func transform
_DISPATCH_MODES = torch._C._len_torch_dispatch_stack
_ANY_AUTOCAST = autocast._ANY or (lambda: True)  # (True: this torch cannot tell cheaply)


def under_dispatch_mode() -> bool:
    """Whether a Python dispatch mode is active (FlopCounterMode, a debug or logging mode): calls then go through
    the registered ops, which the mode sees, instead of launching the kernels directly (~0.06 us)."""
    return _DISPATCH_MODES() > 0


def autograd_node_context() -> bool:
    """Whether an eager training call may be one of warpgemm's own autograd nodes (linear_autograd.py): no tracing,
    autocast region, torch.func transform or forward-AD level. Unlike plain_context, dispatch modes do not decide it:
    a checkpoint's recompute must save what the forward saved, with or without a mode (FlopCounterMode over one of
    the two); the node's products go through the registered ops under a mode."""
    return not (torch.compiler.is_compiling() or _ANY_AUTOCAST() or _TRANSFORM_LEVEL() is not None
                or _forward_ad._current_level >= 0)


def plain_context() -> bool:
    """No autocast region, torch.func transform, forward-AD level or dispatch mode is active, so an eager call may
    launch the kernels directly (ops/autocast.py, ops/transforms.py, under_dispatch_mode). ~0.25 us on the CI CPU,
    ~0.1 of it the tracing check the fast paths paid before: the one check they pay for all four. False while
    tracing (dynamo cannot trace the dispatch-stack query; a traced call goes through the ops anyway)."""
    return autograd_node_context() and not _DISPATCH_MODES()  # (the tracing check first: see above)


def check_tensor(name: str, x) -> None:
    if not isinstance(x, torch.Tensor):
        raise TypeError(f"{name} must be a torch.Tensor, got {type(x).__name__}")
    if x.layout != torch.strided:
        raise TypeError(f"{name} must be a dense (torch.strided) tensor, got layout {x.layout}")
    if torch.compiler.is_compiling() or _TRANSFORM_LEVEL() is not None:
        # traced: fake tensors have no storage to measure (and is_neg() does not trace); under a torch.func
        # transform the wrappers have none either (torch ops compute there: ops/transforms.py)
        return
    if x.is_neg():
        # A lazy negation (conj().imag of a complex tensor, torch._neg_view) lives in a flag the kernels never see.
        raise TypeError(f"{name} is a lazily negated view (is_neg() is True), which the kernels would read without "
                        f"its sign: pass {name}.resolve_neg()")
    n = x.numel()
    if n and not x.is_meta:
        # Runs on every call of the ops without a recipe (add, grouped_mm), so the stride sum only where the view is
        # not contiguous (a contiguous one ends at offset + numel).
        have = x.untyped_storage().nbytes()
        reach = x.storage_offset() + n  # elements from the storage's start to one past the last one read
        if not x.is_contiguous():
            reach = x.storage_offset() + 1
            for d, st in zip(x.shape, x.stride()):
                reach += (d - 1) * st
        need = reach * x.element_size()
        if have < need:
            raise ValueError(f"{name} of shape {tuple(x.shape)} and strides {x.stride()} reaches {need} bytes into "
                             f"its storage, which has {have} (freed or resized, e.g. by resize_(0)); torch ops "
                             "refuse such tensors too")


def recipe_safe(*tensors) -> bool:
    """Whether tensors that passed the checks once (with the same shapes and strides) may take a recorded launch
    without them: dense, no lazy negation, and a storage still allocated (a model sharded FSDP-style frees its
    parameters' storages between uses by resizing them to 0 bytes). None entries are skipped."""
    try:
        for t in tensors:
            if t is not None and (t.is_neg() or not t.untyped_storage().nbytes()):
                return False
    except (RuntimeError, NotImplementedError):  # no storage to ask (a sparse layout): the checks say why
        return False
    return True


def mark_written(out: torch.Tensor) -> None:
    """Tell autograd that `out` was written in place (its version counter), as torch's out= ops do: a graph that
    saved `out` for backward then refuses to run on the overwritten values instead of using them silently."""
    torch.autograd.graph.increment_version(out)


def check_gemm_dtypes(a: torch.Tensor, b: torch.Tensor, a_name: str = "a", b_name: str = "b") -> None:
    if a.dtype not in GEMM_DTYPES:
        raise TypeError(f"{a_name} must be torch.bfloat16 or torch.float16, got {a.dtype}")
    if b.dtype != a.dtype:
        raise TypeError(f"{b_name} must have the same dtype as {a_name} ({a.dtype}), got {b.dtype}")


def resolve_out_dtype(in_dtype: torch.dtype, out_dtype, out: torch.Tensor | None = None) -> torch.dtype:
    """The output dtype from out_dtype and/or a given out tensor (which must agree), defaulting to the input's."""
    if out is not None:
        check_tensor("out", out)
        if out_dtype is None:
            if out.dtype not in (in_dtype, torch.float32):
                raise TypeError(f"out must have dtype {in_dtype} or torch.float32 for {in_dtype} inputs, "
                                f"got {out.dtype}")
            out_dtype = out.dtype
        elif out.dtype != out_dtype:
            raise TypeError(f"out must have dtype out_dtype ({out_dtype}), got {out.dtype}")
    if out_dtype is None:
        return in_dtype
    if out_dtype not in (in_dtype, torch.float32):
        raise TypeError(f"out_dtype must be None, {in_dtype} or torch.float32 for {in_dtype} inputs, got {out_dtype}")
    return out_dtype


def check_devices(allow_cpu: bool = False, **tensors) -> torch.device:
    """All tensors on one device, and a device warpgemm can run on. Returns that device. allow_cpu: the op has a
    CPU path that needs no interpreter (scaled_mm's float32 composite)."""
    items = [(k, v) for k, v in tensors.items() if v is not None]
    name0, t0 = items[0]
    dev = t0.device
    for name, t in items[1:]:
        if t.device != dev:
            raise ValueError(f"{name} must be on the same device as {name0} ({dev}), got {t.device}")
    if dev.type == "cuda":
        return dev
    if dev.type == "cpu":
        if _env.INTERPRET or allow_cpu:
            return dev
        raise ValueError(f"{name0} is on the CPU: warpgemm runs on CUDA tensors, or on CPU tensors only under the "
                         "Triton interpreter (set TRITON_INTERPRET=1 before importing warpgemm)")
    if dev.type == "meta":
        return dev
    raise ValueError(f"{name0} must be a CUDA tensor, got device {dev}")


def check_bias(bias: torch.Tensor | None, n: int, dtype: torch.dtype,
               what: str = "the output's last dimension") -> None:
    """bias: None, or an (n,) vector of `dtype` (the inputs', or fp8 products' output dtype) or fp32. what: where n
    comes from, for the message."""
    if bias is None:
        return
    check_tensor("bias", bias)
    if bias.dim() != 1 or bias.shape[0] != n:
        raise ValueError(f"bias must have shape ({n},) ({what}), got {tuple(bias.shape)}")
    if bias.dtype not in (dtype, torch.float32):
        raise TypeError(f"bias must be {dtype} or torch.float32, got {bias.dtype}")


def shares_memory(x: torch.Tensor, y: torch.Tensor) -> bool:
    """True when the two tensors view one storage and the byte ranges they span cross (conservative: interleaved
    views whose ranges cross count even if no element is shared; disjoint slices of one storage do not count)."""
    if x.numel() == 0 or y.numel() == 0:  # empty tensors all report address 0 and overlap nothing
        return False
    if x.device.type == "meta":  # no storage: every meta tensor reports address 0
        return False
    # A storage's base address from the view's own address and offset: what untyped_storage().data_ptr() says,
    # without building a storage object per call (the eager out= path runs this for every operand).
    if not (x.device == y.device and x.data_ptr() - x.storage_offset() * x.element_size()
            == y.data_ptr() - y.storage_offset() * y.element_size()):
        return False
    x0, x1 = _byte_span(x)
    y0, y1 = _byte_span(y)
    return x0 < y1 and y0 < x1


def _byte_span(t: torch.Tensor) -> tuple[int, int]:
    """[first, last + 1) bytes a non-empty view can touch (strides are never negative in torch)."""
    last = sum((size - 1) * stride for size, stride in zip(t.shape, t.stride()))
    return t.data_ptr(), t.data_ptr() + (last + 1) * t.element_size()


def check_forced_config(config, in_dtype: torch.dtype, out_dtype: torch.dtype) -> None:
    """A config forced by the caller must be valid for the dtypes (config.check_config), on every path."""
    reason = check_config(config, in_dtype, out_dtype)
    if reason is not None:
        raise ValueError(f"config {config} is invalid for {in_dtype} inputs and a {out_dtype} output: {reason}")


def check_out_writable(out: torch.Tensor) -> None:
    """out must hold one element per output position (torch's ops refuse an expanded `out` too: every position
    sharing a location would be written by several programs, and only one write would survive) and must not need
    autograd (out= ops do not record gradients)."""
    for size, stride in zip(out.shape, out.stride()):
        if size > 1 and stride == 0:
            raise ValueError(f"out must not have overlapping elements (an expanded view), got shape "
                             f"{tuple(out.shape)} with strides {out.stride()}: pass a tensor with one element per "
                             "output position")
    if out.requires_grad and torch.is_grad_enabled():
        raise RuntimeError("out=... arguments don't support automatic differentiation, but out requires grad")
    check_out_not_inference(out)
    check_out_not_static(out)


def writes_inference_tensor(out: torch.Tensor) -> bool:
    """Whether writing `out` would update an inference tensor outside inference mode, which torch refuses."""
    return out.is_inference() and not torch.is_inference_mode_enabled()


def check_out_not_inference(out: torch.Tensor) -> None:
    # Under torch.compile the tensor's inference flag is not traced (torch's own checks run on the compiled graph).
    if not torch.compiler.is_compiling() and writes_inference_tensor(out):
        raise RuntimeError("Inplace update to inference tensor outside InferenceMode is not allowed: out was made "
                           "under torch.inference_mode(); write it inside inference_mode, or pass a normal tensor")


def check_out_not_static(out: torch.Tensor) -> None:
    """warpgemm's GEMM kernels release the next kernel at their start, so a static weight they wrote could be read
    by a later launch before the write lands (static_weights.py): refuse one, through any alias of its storage."""
    if writes_static(out):
        raise ValueError("out shares memory with a tensor marked as a static weight (warpgemm.mark_static), which "
                         "promises that no running kernel writes it; unmark that tensor (mark_static(t, False)) "
                         "before writing it with warpgemm")


def check_out_not_aliasing(out: torch.Tensor, **inputs) -> None:
    if torch.compiler.is_compiling():
        # Storage addresses are not traceable; the registered out= ops check again when they run (library.py).
        return
    for name, t in inputs.items():
        if t is not None and shares_memory(out, t):
            raise ValueError(f"out must not share memory with {name}: the kernel reads {name} while writing out")
