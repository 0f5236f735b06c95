"""`group_gemm(list_a, list_b)`: independent 2-D problems of any shapes in one kernel launch.

This replaces a Python loop of matmul calls, whose per-call host cost (~15 us on the H100 machine) dominates small
problems, so the call itself is written for host speed: one pass over the problems that reads each tensor's
pointer, shape and strides once, one output allocation cut into views, one table copied to the device.

On Hopper, when every operand can be read through TMA (A row-major; B all row-major (K, N) or all transposed
(N, K) weights; 16-byte aligned bases and pitches), kernels/hopper/group_gemm_tma.py runs; otherwise, and on the
CPU under the interpreter, the portable pointer kernel (kernels/portable/group_gemm.py).

Differences from the loop: the outputs are views into one allocation (each starts 128-byte aligned); they are
ordinary contiguous (M_i, N_i) tensors, but share one storage. No autograd.
"""
from __future__ import annotations

import array
import ctypes
from typing import NamedTuple

import torch

from .. import _env
from ..kernels.hopper import group_gemm_tma
from ..kernels.hopper.group_gemm_tma import FIELDS, TILE_CONFIGS, tile_config_for
from . import autocast, checks, transforms

# Set by `warpgemm bench groups --tile`: force a TILE_CONFIGS entry of the Hopper kernel (None: heuristic).
FORCE_TILE: str | None = None

_ALIGN_ELEMS = 64  # each output view starts 128 bytes after a multiple of 128 bytes
_KEEP_FOR_GRAPHS: list = []  # host tables copied inside a CUDA-graph capture: a replay reads them again


def _allocate(numel: int, dtype, device) -> torch.Tensor:
    """The one output allocation (tests replace it with a NaN-filled one to catch unwritten elements)."""
    return torch.empty(numel, dtype=dtype, device=device)


def _bad_problem(i: int, a, b, list_a) -> None:
    """Raise the precise error for problem i (the fast scan only knows that something is off)."""
    checks.check_tensor(f"list_a[{i}]", a)
    checks.check_tensor(f"list_b[{i}]", b)
    checks.check_gemm_dtypes(a, b, f"list_a[{i}]", f"list_b[{i}]")
    if a.dtype != list_a[0].dtype:
        raise TypeError(f"list_a[{i}] must have the dtype of list_a[0] ({list_a[0].dtype}), got {a.dtype}")
    if a.dim() != 2 or b.dim() != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"problem {i}: list_a[{i}] (M, K) and list_b[{i}] (K, N) must be 2-D with matching K, "
                         f"got {tuple(a.shape)} and {tuple(b.shape)}")
    checks.check_devices(**{"list_a[0]": list_a[0], f"list_a[{i}]": a, f"list_b[{i}]": b})


def _pitch(rows: int, cols: int, row_stride: int, col_stride: int, ptr: int) -> int | None:
    """The row pitch (elements) through which TMA reads a (rows, cols) operand as row-major, or None.

    TMA wants a 16-byte aligned base, unit column stride and a pitch that is a multiple of 16 bytes (8 elements
    of 2 bytes); a single row has no real pitch, so any multiple of 8 covering it will do."""
    if ptr % 16 or (col_stride != 1 and cols > 1):
        return None
    if rows <= 1:
        return -(-max(cols, 1) // 8) * 8
    return row_stride if row_stride % 8 == 0 else None


class _Plan(NamedTuple):
    dtype: torch.dtype
    device: torch.device
    table: array.array  # per live problem: a, b, C offset (elements), M, N, K, lda, ldb (K, N), ldc, ldb (N, K)
    ms: list  # M and N of the live problems (M, N, K > 0), in table order
    ns: list
    shapes: list  # (M, N, offset in elements) of every output
    total: int  # elements of the output allocation
    zero_k: list  # outputs of K = 0 problems (zero-filled)
    b_layout: bool | None  # TMA reads B as (N, K) transposed (True), row-major (K, N) (False), or cannot (None)


def _plan(list_a, list_b) -> _Plan:
    """One pass over the problems: checks, output offsets and the device table, written for host speed (this
    call competes with a Python loop of matmuls: every attribute read and list is per problem)."""
    a0 = list_a[0]
    if type(a0) is not torch.Tensor:
        _bad_problem(0, a0, list_b[0], list_a)
    dtype, device = a0.dtype, a0.device
    index = a0.get_device()  # a CUDA device's index (cheaper to compare than devices); -1 elsewhere
    if dtype not in checks.GEMM_DTYPES:
        _bad_problem(0, a0, list_b[0], list_a)
    table = array.array("q")
    real = device.type != "meta"  # meta tensors have no storage to check
    esize = a0.element_size()  # every problem has a0's dtype (checked below)
    ms, ns, shapes, zero_k = [], [], [], []
    total = 0
    a_ok = rm_ok = km_ok = True
    for i, (a, b) in enumerate(zip(list_a, list_b)):
        if type(a) is not torch.Tensor or type(b) is not torch.Tensor or a.dtype != dtype or b.dtype != dtype:
            _bad_problem(i, a, b, list_a)
        sa, sb = a.shape, b.shape
        if len(sa) != 2 or len(sb) != 2 or sa[1] != sb[0]:
            _bad_problem(i, a, b, list_a)
        if (a.requires_grad or b.requires_grad) and torch.is_grad_enabled():
            raise RuntimeError(f"group_gemm does not record autograd, but list_a[{i}] or list_b[{i}] requires grad: "
                               "call it under torch.no_grad(), or use matmul per problem (or grouped_mm) to train")
        if (a.get_device() != index or b.get_device() != index) if index >= 0 else \
                (a.device != device or b.device != device):
            _bad_problem(i, a, b, list_a)
        M, K = sa
        N = sb[1]
        shapes.append((M, N, total))
        if M and N:
            if K:
                am, ak = a.stride()
                bk, bn = b.stride()
                pa, pb = a.data_ptr(), b.data_ptr()
                # A lazily negated view (its sign is a flag the kernels never read), or a view of a freed storage
                # (resized to 0 bytes, as FSDP-style sharding leaves a parameter between uses: its base address is
                # null): check_tensor refuses either by name. Host cost within noise on the H100 machine (64 problems,
                # 353 against 355 us a call). Unlike matmul's checks this fast scan does not measure the storage's size,
                # which a storage shrunk by hand to some nonzero size would need (+12% a call: not paid here).
                if real and (a.is_neg() or b.is_neg() or pa == a.storage_offset() * esize
                             or pb == b.storage_offset() * esize):
                    checks.check_tensor(f"list_a[{i}]", a)
                    checks.check_tensor(f"list_b[{i}]", b)
                # The common cases inline; _pitch has the whole rule.
                lda = am if ak == 1 and M > 1 and am % 8 == 0 and pa % 16 == 0 else _pitch(M, K, am, ak, pa)
                ldb = bk if bn == 1 and K > 1 and bk % 8 == 0 and pb % 16 == 0 else _pitch(K, N, bk, bn, pb)
                ldbt = bn if bk == 1 and N > 1 and bn % 8 == 0 and pb % 16 == 0 else _pitch(N, K, bn, bk, pb)
                a_ok = a_ok and lda is not None
                rm_ok = rm_ok and ldb is not None
                km_ok = km_ok and ldbt is not None
                table.extend((pa, pb, total, M, N, K, lda or 0, ldb or 0, N, ldbt or 0))
                ms.append(M)
                ns.append(N)
            else:
                zero_k.append(i)
            total += -(-(M * N) // _ALIGN_ELEMS) * _ALIGN_ELEMS
    # Row-major B wins where both layouts would do.
    b_layout = None if not a_ok else (False if rm_ok else (True if km_ok else None))
    return _Plan(dtype, device, table, ms, ns, shapes, total, zero_k, b_layout)


def group_gemm(list_a, list_b) -> list:
    """[a_i @ b_i]: independent 2-D problems of any shapes (bf16/fp16, one device), in one kernel launch.

    Each a_i is (M_i, K_i) and b_i (K_i, N_i), any strides; the outputs are (M_i, N_i) tensors in the inputs'
    dtype (views into one allocation). The launch reads a small table of pointers and sizes copied to the device
    (no synchronization). Inside torch.autocast, fp32 inputs are cast to the region's dtype first (ops/autocast.py).
    """
    if not isinstance(list_a, (list, tuple)) or not isinstance(list_b, (list, tuple)):
        raise TypeError("group_gemm takes two lists of tensors: list_a and list_b")
    if not checks.plain_context() and list_a:  # one query for the common case (no transform, region or dual level)
        transforms.refuse("group_gemm", *list_a, *list_b)
        cast = autocast.cast(*list_a, *list_b)
        list_a, list_b = list(cast[:len(list_a)]), list(cast[len(list_a):])
    if len(list_a) != len(list_b):
        raise ValueError(f"list_a and list_b must have the same length, got {len(list_a)} and {len(list_b)}")
    if not list_a:
        return []
    plan = _plan(list_a, list_b)
    device = plan.device
    if device.type != "cuda" and device.type != "meta":
        checks.check_devices(list_a=list_a[0])  # CPU only under the interpreter: the same message as matmul
    flat = _allocate(plan.total, plan.dtype, device)
    outs = [flat.as_strided((M, N), (N, 1), off) for M, N, off in plan.shapes]
    if device.type == "meta":
        return outs
    for i in plan.zero_k:
        outs[i].zero_()  # K = 0: an empty sum
    if not plan.ms:
        return outs
    if plan.b_layout is not None and device.type == "cuda" and _env.BACKEND != "portable" and \
            _env.is_hopper(device.index):
        if torch._C._cuda_getDevice() != device.index:
            with torch.cuda.device(device.index):  # the table copy and the launch use the current device's context
                _launch_tma(plan, flat)
        else:
            _launch_tma(plan, flat)
    else:
        from ..kernels.portable.group_gemm import launch_group_gemm

        live = [(a, b, c) for a, b, c in zip(list_a, list_b, outs) if c.numel() and a.shape[1]]
        launch_group_gemm([(a, b) for a, b, _ in live], [c for _, _, c in live])
    return outs


class _Driver:
    """cuMemcpyHtoDAsync from libcuda (ctypes), or None: a pageable host-to-device copy that stages the source
    before returning (no device synchronization), at a fraction of the host cost of torch's copy."""

    fn = None
    tried = False

    @classmethod
    def memcpy(cls):
        if not cls.tried:
            cls.tried = True
            try:
                fn = ctypes.CDLL("libcuda.so.1").cuMemcpyHtoDAsync_v2
                fn.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_void_p]
                fn.restype = ctypes.c_int
                cls.fn = fn
            except (OSError, AttributeError):
                cls.fn = None
        return cls.fn


_TABLES: dict[tuple[int, int], torch.Tensor] = {}  # (device, stream) -> device table buffer, reused in stream order


def _copy_table(table: array.array, nbytes: int, index: int) -> torch.Tensor:
    """The table on the device. One buffer per (device, stream): the copy for a call is queued behind the kernel
    of the call before on the same stream, so overwriting it never races a reader.

    Measured (scripts/group_host_profile.py, notes/perf.md): the driver's pageable copy does not wait for the
    stream (host time per call unchanged behind 6 ms of queued GPU work) and costs less than torch's pinned path,
    whose host-allocator bookkeeping grows with the calls in flight (64 problems: 286 vs 556 us per call)."""
    memcpy = _Driver.memcpy()
    if memcpy is None:
        return torch.frombuffer(table, dtype=torch.int64).to(torch.device("cuda", index), non_blocking=True)
    stream = torch._C._cuda_getCurrentRawStream(index)
    key = (index, stream)
    buf = _TABLES.get(key)
    if buf is None or buf.numel() * 8 < nbytes:
        buf = _TABLES[key] = torch.empty(max(nbytes // 8, 4096), dtype=torch.int64, device=index)
    rc = memcpy(buf.data_ptr(), table.buffer_info()[0], nbytes, stream)
    if rc != 0:
        raise RuntimeError(f"cuMemcpyHtoDAsync failed with CUresult {rc} (group_gemm's problem table)")
    return buf


def _launch_tma(plan: _Plan, flat: torch.Tensor) -> None:
    ms, ns, table = plan.ms, plan.ns, plan.table
    groups = len(ms)
    tile = FORCE_TILE or tile_config_for(ms, ns)
    bm, bn = TILE_CONFIGS[tile][:2]
    tiles = 0
    c_aligned = True
    for M, N in zip(ms, ns):
        tiles += -(-M // bm) * -(-N // bn)
        table.append(tiles)
        c_aligned = c_aligned and N % 8 == 0
    device = plan.device
    nbytes = len(table) * 8
    if torch.cuda.is_current_stream_capturing():
        # A captured copy is replayed from the same host memory: pinned, and kept for the graph's lifetime.
        host = torch.empty(len(table), dtype=torch.int64, pin_memory=True)
        ctypes.memmove(host.data_ptr(), table.buffer_info()[0], nbytes)
        _KEEP_FOR_GRAPHS.append(host)
        dev = host.to(device, non_blocking=True)
    else:
        dev = _copy_table(table, nbytes, device.index)
    b_kmajor = plan.b_layout
    if _env.LOG_ENABLED:
        _env.log(f"group_gemm: {groups} problems, {tiles} tiles, hopper TMA kernel, tile {tile} "
                 f"{TILE_CONFIGS[tile]}, B {'(N, K) transposed' if b_kmajor else 'row-major (K, N)'}")
    ptr = dev.data_ptr()
    group_gemm_tma.launch_group_gemm_tma(dev, ptr, ptr + groups * FIELDS * 8, flat, groups, tiles, b_kmajor,
                                         c_aligned, tile, _env.num_sms(device.index))
