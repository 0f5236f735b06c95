"""Global scratch of the split-K and stream-K GEMMs: fp32 partial tiles and one int32 semaphore per output tile.

The kernel leaves every semaphore at zero when it finishes, so scratch is zeroed once when allocated and then
reused by every launch on the same (device, stream): launches on one stream run in order, and two streams never
share scratch.

Under CUDA-graph capture, scratch comes from the graph's memory pool and its zeroing is recorded in the graph, so
every replay starts from zeroed semaphores. It is shared by the calls of one capture on one stream (they run in
order in the graph too), so a graph of many calls replays one small memset, not one per call. The capture is told
apart by the driver's capture id; where that cannot be read, each captured call takes its own scratch.
"""
from __future__ import annotations

import ctypes

import torch

_BY_STREAM: dict[tuple[int, int], tuple[torch.Tensor, torch.Tensor]] = {}
# (device, stream) -> (capture id, partials, semaphores): the latest capture's scratch on that stream.
_BY_CAPTURE: dict[tuple[int, int], tuple[int, torch.Tensor, torch.Tensor]] = {}
_DUMMY: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}


def _allocate(device: int, partial_elems: int, tiles: int) -> tuple[torch.Tensor, torch.Tensor]:
    partials = torch.empty(partial_elems, dtype=torch.float32, device=device)
    semaphores = torch.zeros(tiles, dtype=torch.int32, device=device)
    return partials, semaphores


def _fits(have, partial_elems: int, tiles: int) -> bool:
    return have[0].numel() >= partial_elems and have[1].numel() >= tiles


class _CaptureInfo:
    """cuStreamGetCaptureInfo from the driver (ctypes): the id of the capture a stream is in, or None."""

    fn = None
    tried = False

    @classmethod
    def capture_id(cls, stream: int) -> int | None:
        if not cls.tried:
            cls.tried = True
            try:
                fn = ctypes.CDLL("libcuda.so.1").cuStreamGetCaptureInfo_v2
                fn.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_int), ctypes.POINTER(ctypes.c_ulonglong),
                               ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p]
                fn.restype = ctypes.c_int
                cls.fn = fn
            except (OSError, AttributeError):
                cls.fn = None
        if cls.fn is None:
            return None
        status, cid = ctypes.c_int(0), ctypes.c_ulonglong(0)
        if cls.fn(ctypes.c_void_p(stream), ctypes.byref(status), ctypes.byref(cid), None, None, None) != 0:
            return None
        return cid.value if status.value == 1 else None  # 1: CU_STREAM_CAPTURE_STATUS_ACTIVE


def _capture_scratch(device: int, stream: int, partial_elems: int, tiles: int):
    cid = _CaptureInfo.capture_id(stream)
    if cid is None:
        return _allocate(device, partial_elems, tiles)
    key = (device, stream)
    have = _BY_CAPTURE.get(key)
    if have is None or have[0] != cid or not _fits(have[1:], partial_elems, tiles):
        grow = (partial_elems, tiles) if have is None or have[0] != cid else \
            (max(partial_elems, have[1].numel()), max(tiles, have[2].numel()))
        have = _BY_CAPTURE[key] = (cid, *_allocate(device, *grow))
    return have[1], have[2]


def split_k_scratch(device: int, stream: int, partial_elems: int, tiles: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(partials, semaphores) with room for `partial_elems` floats and `tiles` semaphores, all semaphores 0."""
    if torch.cuda.is_current_stream_capturing():
        return _capture_scratch(device, stream, partial_elems, tiles)
    key = (device, stream)
    have = _BY_STREAM.get(key)
    if have is None or not _fits(have, partial_elems, tiles):
        # Growing replaces the buffers; the old ones return to the caching allocator in stream order.
        grow = (max(partial_elems, 0 if have is None else have[0].numel()),
                max(tiles, 0 if have is None else have[1].numel()))
        have = _BY_STREAM[key] = _allocate(device, *grow)
    return have


def unused_pointers(device: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Placeholders for the scratch arguments of kernels without split-K (same argument types)."""
    have = _DUMMY.get(device)
    if have is None:
        have = _DUMMY[device] = _allocate(device, 1, 1)
    return have
