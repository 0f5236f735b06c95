"""Launching a Gluon kernel variant many times with little host work.

The first launch goes through `kernel[grid](...)` (Triton binds the arguments, specializes, compiles or finds
the binary in its cache, launches). The CompiledKernel it returns is kept; later launches call its launcher
directly with light descriptor records, skipping Triton's binder: that is most of the host cost of a small
kernel (measured: 161 us -> 61 us per 256^3 GEMM call, notes/perf.md).
"""
from __future__ import annotations

import contextlib
import functools
import hashlib
from pathlib import Path

import torch
import triton
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.nvidia.hopper import TensorDescriptor

GL_DTYPES = {torch.bfloat16: gl.bfloat16, torch.float16: gl.float16, torch.float32: gl.float32,
             torch.float8_e4m3fn: gl.float8e4nv, torch.float8_e5m2: gl.float8e5}


@functools.lru_cache(maxsize=None)
def nvmma_layout(block: tuple[int, ...], dtype: torch.dtype, swizzle: bool = True):
    """Shared-memory layout of a TMA box: the widest swizzle (for wgmma operands) or none (plain streaming)."""
    if swizzle:
        return gl.NVMMASharedLayout.get_default_for(list(block), GL_DTYPES[dtype])
    return gl.NVMMASharedLayout(swizzle_byte_width=0, element_bitwidth=dtype.itemsize * 8, rank=len(block))


@functools.lru_cache(maxsize=None)
def parts_source_hash() -> int:
    """A hash of every module in this package (the Gluon parts and their host side), as a kernel constexpr.

    Triton keys a kernel's binaries on its own source and on the jit functions it calls by global name, not on the
    methods of aggregate or policy classes reached through constexpr arguments (EpilogueImpl, SchedulerImpl,
    GemmOperands' methods). Without this an edited epilogue method kept being served the old binary from the cache
    (found in review, 2026-11-25). Host-only edits here recompile too: a cost paid once per edit."""
    return source_hash(Path(__file__).parent)


def source_hash(folder: Path) -> int:
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return int(digest.hexdigest()[:12], 16)


class LightDesc:
    """What Triton's launcher reads off a host tensor descriptor once the kernel is compiled."""

    __slots__ = ("base", "shape", "strides", "padding")

    def __init__(self, base, shape, strides):
        self.base = base
        self.shape = shape
        self.strides = strides
        self.padding = "zero"


def full_desc(base: torch.Tensor, shape, strides, block, layout) -> TensorDescriptor:
    return TensorDescriptor(base, list(shape), list(strides), list(block), layout)


def launch_hooks_active() -> bool:
    # Profilers (proton) register launch hooks; then launches go through Triton's own path, which calls them.
    # In triton 3.6 the hook is a HookChain that is never None: it is active when it holds calls.
    hook = triton.knobs.runtime.launch_enter_hook
    return hook is not None and bool(getattr(hook, "calls", True))


_TMA_MAPS: dict[tuple, object] = {}


def with_cuda_context(fn, *args, **kwargs):
    """fn(*args, **kwargs), retried once after making this thread's CUDA context current.

    Encoding a TMA descriptor is a driver call and needs a current context. torch binds one to a thread lazily, at
    its first runtime call: the autograd engine's device thread can reach a launch of ours before any (a backward
    whose first op is ours), and the encode then fails with "invalid device context"."""
    try:
        return fn(*args, **kwargs)
    except RuntimeError as e:
        if "invalid device context" not in str(e):
            raise
        torch.cuda.current_stream().query()  # a runtime call: binds the current device's primary context
        return fn(*args, **kwargs)


def encode_tensor_map(ptr: int, shape, strides, meta: dict):
    """A CUtensorMap for a TMA operand, as Triton's launcher would encode it from a host descriptor."""
    from triton.backends.nvidia.driver import TMA_DTYPE_DEVICE_TO_HOST

    return with_cuda_context(
        triton.runtime.driver.active.utils.fill_tma_descriptor,
        ptr, meta["swizzle"], meta["elem_size"], TMA_DTYPE_DEVICE_TO_HOST[meta["elem_type"]], meta["block_size"],
        shape, strides, 0)


class _RawLaunch:
    """The C launcher behind a CompiledKernel, called with arguments expanded here.

    Triton's Python wrapper walks every argument (constexprs included) and re-encodes each tensor map per
    launch. Here the expansion is a short loop and encoded maps are cached: a CUtensorMap is a pure function of
    (address, shape, strides, box, swizzle, element type), so a cached map can never be stale. Built only when
    the wrapper has the structure triton 3.6 gives it; otherwise the caller keeps Triton's path.
    """

    __slots__ = ("fn", "function", "packed", "coop", "pdl", "metas")

    @staticmethod
    def build(compiled):
        try:
            launcher = compiled.run
            inner = launcher.launch
            if launcher.global_scratch_size or launcher.profile_scratch_size:
                return None
            if not hasattr(inner, "__code__"):
                # No descriptor parameters: triton hands the C launcher over unwrapped.
                fn, metas = inner, []
            else:
                cells = dict(zip(inner.__code__.co_freevars, (c.cell_contents for c in inner.__closure__)))
                fn, metas = cells["launcher"], cells["tensordesc_meta"]
                if not metas or any(m is None or m.get("fp4_padded") for m in metas):
                    return None
            raw = _RawLaunch()
            raw.fn, raw.function, raw.packed = fn, compiled.function, compiled.packed_metadata
            raw.coop, raw.pdl, raw.metas = launcher.launch_cooperative_grid, launcher.launch_pdl, metas
            return raw
        except Exception:  # another triton version: keep the supported path
            return None

    def tensor_map(self, desc: LightDesc, meta: dict):
        ptr = desc.base.data_ptr()
        key = (ptr, desc.shape, desc.strides, meta["swizzle"], meta["elem_type"], tuple(meta["block_size"]))
        tmap = _TMA_MAPS.get(key)
        if tmap is None:
            if len(_TMA_MAPS) > 4096:
                _TMA_MAPS.clear()
            tmap = _TMA_MAPS[key] = encode_tensor_map(ptr, desc.shape, desc.strides, meta)
        return tmap

    def bind(self, grid: int, light_args, tail) -> "BoundLaunch":
        """The argument list of a launch with fixed grid, geometry and constexprs, with holes for what changes
        per call (stream, descriptor bases, pointer arguments)."""
        args = [grid, 1, 1, None, self.function, self.coop, self.pdl, None, None, self.packed, None, None, None]
        desc_slots, other_slots, metas = [], [], []
        i = 0
        for x in light_args:
            if type(x) is LightDesc:
                desc_slots.append(len(args))
                metas.append((x.shape, x.strides, self.metas[i]))
                args.append(None)
                args.extend(x.shape)
                args.extend(x.strides)
                i += 1
            else:
                other_slots.append(len(args))
                args.append(None)
        args.extend(tail)
        return BoundLaunch(self, args, tuple(desc_slots), tuple(other_slots), metas)

    def __call__(self, grid: int, stream: int, light_args, tail) -> None:
        args = [grid, 1, 1, stream, self.function, self.coop, self.pdl, None, None, self.packed, None, None, None]
        i = 0
        for x in light_args:
            if type(x) is LightDesc:
                args.append(self.tensor_map(x, self.metas[i]))
                args.extend(x.shape)
                args.extend(x.strides)
                i += 1
            else:
                args.append(x)
        args.extend(tail)
        self.fn(*args)


class BoundLaunch:
    """A launch with everything fixed but the stream, the descriptors' base tensors and the pointer arguments:
    a call copies a prepared argument list, fills the holes and calls the C launcher (the eager hot path)."""

    __slots__ = ("fn", "args", "desc_slots", "other_slots", "metas", "maps")

    def __init__(self, raw: _RawLaunch, args, desc_slots, other_slots, metas):
        self.fn, self.args, self.desc_slots, self.other_slots, self.metas = raw.fn, args, desc_slots, other_slots, metas
        self.maps = [{} for _ in desc_slots]  # per descriptor: base address -> encoded tensor map

    def __call__(self, stream: int, bases, others) -> None:
        args = self.args.copy()
        args[3] = stream
        for slot, base, maps, (shape, strides, meta) in zip(self.desc_slots, bases, self.maps, self.metas):
            ptr = base.data_ptr()
            tmap = maps.get(ptr)
            if tmap is None:
                if len(maps) > 64:
                    maps.clear()
                tmap = maps[ptr] = encode_tensor_map(ptr, shape, strides, meta)
            args[slot] = tmap
        for slot, x in zip(self.other_slots, others):
            args[slot] = x
        self.fn(*args)


class CachedKernel:
    """One specialization of a Gluon kernel: fixed constexprs, launch options and argument types.

    `launch(grid, device, full_args, light_args)`: `full_args` (a callable) builds the arguments with real
    TensorDescriptors, needed only for the first launch; `light_args` are the same arguments with LightDesc
    records in place of descriptors. The caller guarantees that everything Triton specializes on (dtypes, block
    shapes, layouts, pointer alignment) is fixed for this object.
    """

    __slots__ = ("fn", "constexprs", "tail", "num_warps", "maxnreg", "compiled", "raw", "pdl", "compile_context")

    def __init__(self, fn, constexprs: dict, num_warps: int, maxnreg: int | None, pdl: bool = False,
                 num_warps_param: bool = True, compile_context=contextlib.nullcontext):
        """pdl: launch with programmatic dependent launch (the kernel must wait on the prior grid itself).
        num_warps_param: the kernel's last parameter is `num_warps: constexpr` (the Gluon GEMM's is).
        compile_context: a context manager factory the first launch (which compiles) runs inside, e.g. a PTX
        pass (ptx_hints.store_hints)."""
        self.fn = fn
        self.pdl = pdl
        self.compile_context = compile_context
        self.constexprs = constexprs
        self.num_warps = num_warps
        self.maxnreg = maxnreg
        # The launcher takes every parameter, constexprs included, in signature order.
        self.tail = (*constexprs.values(), num_warps) if num_warps_param else tuple(constexprs.values())
        self.compiled = None
        self.raw = None

    def bind(self, grid: int, light_args) -> BoundLaunch | None:
        """A BoundLaunch for this grid and geometry, once the kernel is compiled and the raw launcher usable."""
        if self.raw is None:
            return None
        return self.raw.bind(grid, light_args, self.tail)

    def launch(self, grid: int, device: int, full_args, light_args) -> None:
        k = self.compiled
        if k is not None and not launch_hooks_active():
            stream = torch._C._cuda_getCurrentRawStream(device)
            if self.raw is not None:
                self.raw(grid, stream, light_args, self.tail)
            else:
                k.run(grid, 1, 1, stream, k.function, k.packed_metadata, None, None, None, *light_args, *self.tail)
            return
        options = {"launch_pdl": True} if self.pdl else {}
        with self.compile_context():
            self.compiled = with_cuda_context(lambda: self.fn[(grid, )](*full_args(), **self.constexprs,
                                                                        num_warps=self.num_warps,
                                                                        maxnreg=self.maxnreg, **options))
        self.raw = _RawLaunch.build(self.compiled)
