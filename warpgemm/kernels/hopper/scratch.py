"""Global scratch of the split-K GEMM: fp32 partial tiles and one int32 semaphore per output tile.

The kernel leaves every semaphore at zero when it finishes, so scratch is zeroed once when allocated and then
reused by every launch on the same (device, stream): launches on one stream run in order, and two streams never
share scratch. Under CUDA-graph capture each call takes fresh scratch from the graph's pool and records the
zeroing in the graph, so replays start from zeroed semaphores too.
"""
from __future__ import annotations

import torch

_BY_STREAM: dict[tuple[int, int], tuple[torch.Tensor, torch.Tensor]] = {}
_DUMMY: dict[int, tuple[torch.Tensor, torch.Tensor]] = {}


def _allocate(device: int, partial_elems: int, tiles: int) -> tuple[torch.Tensor, torch.Tensor]:
    partials = torch.empty(partial_elems, dtype=torch.float32, device=device)
    semaphores = torch.zeros(tiles, dtype=torch.int32, device=device)
    return partials, semaphores


def split_k_scratch(device: int, stream: int, partial_elems: int, tiles: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(partials, semaphores) with room for `partial_elems` floats and `tiles` semaphores, all semaphores 0."""
    if torch.cuda.is_current_stream_capturing():
        return _allocate(device, partial_elems, tiles)
    key = (device, stream)
    have = _BY_STREAM.get(key)
    if have is None or have[0].numel() < partial_elems or have[1].numel() < tiles:
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
