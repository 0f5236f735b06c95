"""Wave fill: the plan by which the idle programs of a last, partly filled wave take the K tails of its tiles, in
plain Python. The device scheduler (scheduler.py, WaveFillScheduler) evaluates the same integer
formulas; the host uses these for scratch sizing and the heuristics' time model, and tests check the properties the
kernel relies on.

With T tiles of num_k K steps on P programs, the first W = T // P waves are whole tiles (program p takes tiles p,
p + P, ...). The last wave has `rem` = T - W * P tiles and R = P - rem programs without one. Each of those tiles is
cut at the same K step: its "main" part, K steps [0, num_k - L), goes to program R + u (u: the tile's place in the
last wave); its "tail", the last L steps, to program u % R, which takes the tails of tiles u, u + R, ... in turn.
All main parts run at once over the same K window, and so do the tails a round of tail programs takes: the
operands' panels are shared in L2 as among whole tiles (stream-K's unaligned shares are not, which makes it
DRAM-bound on shapes past the L2: notes/perf.md).

A tail writes its fp32 partial to scratch slot u and raises the tile's flag; the main part waits for the flag, adds
the partial to its accumulator (main + tail, always in that order: bitwise repeatable) and stores the tile. Only a
program waits, and only on a program of lower index (u % R < R <= R + u), which the hardware has started before it:
no schedule can deadlock.

L balances the two: a tail program does c = ceil(rem / R) tails of L steps plus c partial stores, a main part
num_k - L steps plus one partial read; with both extra costs taken as FILL_COST_K columns of K,
L = (num_k - (c - 1) * FILL_COST_K / block_k) / (c + 1). Where that leaves no step for the tail (or the last wave is
full), the last wave runs whole tiles.
"""
from __future__ import annotations

from typing import NamedTuple

# What a tail's partial store (or a main part's read of it) costs, in columns of K of the mainloop: a 128 x 256 fp32
# partial (128 KB) takes about as long as 1.5 K steps of 64 at the per-SM rate of a full GPU.
FILL_COST_K = 96

WHOLE, MAIN, TAIL = 0, 1, 2


class Plan(NamedTuple):
    waves: int  # whole-tile waves before the last
    rem: int  # tiles in the last wave
    tail_programs: int  # R: programs without a tile of their own in the last wave
    tails_each: int  # c: tails the busiest tail program takes
    tail_steps: int  # L: K steps of each tail (0: the last wave runs whole tiles)


def plan(tiles: int, num_k: int, programs: int, block_k: int) -> Plan:
    waves = tiles // programs
    rem = tiles - waves * programs
    if rem == 0:
        return Plan(waves, 0, 0, 0, 0)
    r = programs - rem
    c = -(-rem // r)
    tail = max((num_k * block_k - (c - 1) * FILL_COST_K) // ((c + 1) * block_k), 0)
    return Plan(waves, rem, r, c, tail)


class Unit(NamedTuple):
    tile: int
    k_first: int
    k_count: int
    kind: int  # WHOLE, MAIN or TAIL
    slot: int  # the scratch slot of a MAIN or TAIL part (-1 for WHOLE)


def units(program: int, programs: int, tiles: int, num_k: int, block_k: int) -> list[Unit]:
    pl = plan(tiles, num_k, programs, block_k)
    out = [Unit(w * programs + program, 0, num_k, WHOLE, -1) for w in range(pl.waves)]
    first = pl.waves * programs
    if pl.tail_steps == 0:
        if program < pl.rem:
            out.append(Unit(first + program, 0, num_k, WHOLE, -1))
    elif program >= pl.tail_programs:
        u = program - pl.tail_programs
        out.append(Unit(first + u, 0, num_k - pl.tail_steps, MAIN, u))
    else:
        for u in range(program, pl.rem, pl.tail_programs):
            out.append(Unit(first + u, num_k - pl.tail_steps, pl.tail_steps, TAIL, u))
    return out


def partial_slots(tiles: int, num_k: int, programs: int, block_k: int) -> int:
    """Scratch slots (and flags) a launch needs: one per tile of a split last wave."""
    pl = plan(tiles, num_k, programs, block_k)
    return pl.rem if pl.tail_steps else 0


def makespan_steps(tiles: int, num_k: int, programs: int, block_k: int) -> float:
    """The plan's time in K steps of one program, partial stores and reads counted as FILL_COST_K columns each."""
    pl = plan(tiles, num_k, programs, block_k)
    cost = FILL_COST_K / block_k
    whole = pl.waves * num_k
    if pl.rem == 0:
        return float(whole)
    if pl.tail_steps == 0:
        return float(whole + num_k)
    return whole + max(num_k - pl.tail_steps + cost, pl.tails_each * (pl.tail_steps + cost))
