"""Stream-K's partition of K steps over programs, in plain Python: the same integer formulas the device scheduler
(kernels/hopper/scheduler.py, StreamKScheduler) evaluates, for the host (grid and scratch sizing) and for tests
that check the properties the kernel's reduction relies on.

The K steps of all tiles are laid end to end: step s belongs to tile s // num_k. Program p of P owns steps
[start(p), start(p + 1)) with start(p) = p * total // P. Its units are its runs within each tile; only the first
and last can be partial. A partial unit writes its fp32 partial to slot 2p (first unit) or 2p + 1 (last unit).
"""
from __future__ import annotations

from typing import NamedTuple


def grid(tiles: int, num_k: int, num_sms: int) -> int:
    """One program per SM, but never more programs than K steps (every share non-empty)."""
    return max(1, min(num_sms, tiles * num_k))


def start(program: int, programs: int, total: int) -> int:
    return program * total // programs


def owner(step: int, programs: int, total: int) -> int:
    """The program whose share holds `step`: the largest p with start(p) <= step."""
    return ((step + 1) * programs + total - 1) // total - 1


class Unit(NamedTuple):
    tile: int
    k_first: int
    k_count: int
    slot: int


def units(program: int, programs: int, tiles: int, num_k: int) -> list[Unit]:
    total = tiles * num_k
    s, e = start(program, programs, total), start(program + 1, programs, total)
    first_tile = s // num_k
    out = []
    for i in range((e - 1) // num_k - first_tile + 1):
        t = first_tile + i
        k_first = max(s - t * num_k, 0)
        out.append(Unit(t, k_first, min(e - t * num_k, num_k) - k_first, 2 * program + (i > 0)))
    return out


def tile_parts(tile: int, programs: int, tiles: int, num_k: int) -> list[int]:
    """Slots of the tile's parts in program order (one part: the tile was done whole by one program)."""
    total = tiles * num_k
    lo, hi = owner(tile * num_k, programs, total), owner(tile * num_k + num_k - 1, programs, total)
    first = 2 * lo + (start(lo, programs, total) < tile * num_k)
    return [first] + [2 * (lo + j) for j in range(1, hi - lo + 1)]
