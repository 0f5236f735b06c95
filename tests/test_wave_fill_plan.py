"""The wave-fill plan the kernel computes on the device (kernels/hopper/wave_fill_plan.py, mirrored term for term by
scheduler.WaveFillScheduler), checked exhaustively on small and GPU-sized cases: every K step of every tile is done
exactly once, a tile is cut only in the last wave and at the same K step for all its tiles, each main part waits
on exactly one tail written to its own slot by a program of lower index (no deadlock), and the slots fit the
scratch the host allocates."""
import itertools

import pytest

from warpgemm.config import GemmConfig, check_config
from warpgemm.candidates import parse_config
from warpgemm.kernels.hopper import wave_fill_plan as wf

import torch


def _walk(tiles, num_k, programs, block_k):
    covered, tails, mains = {}, {}, {}
    for p in range(programs):
        for u in wf.units(p, programs, tiles, num_k, block_k):
            assert u.k_count > 0
            for k in range(u.k_first, u.k_first + u.k_count):
                assert (u.tile, k) not in covered, f"step {k} of tile {u.tile} done twice"
                covered[(u.tile, k)] = p
            if u.kind == wf.TAIL:
                assert u.slot not in tails
                tails[u.slot] = (p, u)
            elif u.kind == wf.MAIN:
                assert u.slot not in mains
                mains[u.slot] = (p, u)
    return covered, tails, mains


@pytest.mark.parametrize("tiles", [1, 2, 50, 66, 67, 72, 96, 112, 131, 132, 133, 200, 264, 300, 392])
@pytest.mark.parametrize("num_k", [1, 2, 3, 7, 24, 64, 172])
@pytest.mark.parametrize("programs, block_k", [(132, 64), (132, 128), (7, 64), (1, 64)])
def test_plan_covers_every_step_once_and_waits_only_on_earlier_programs(tiles, num_k, programs, block_k):
    pl = wf.plan(tiles, num_k, programs, block_k)
    covered, tails, mains = _walk(tiles, num_k, programs, block_k)
    assert set(covered) == set(itertools.product(range(tiles), range(num_k)))
    assert set(tails) == set(mains), "every main part has exactly one tail and the reverse"
    slots = wf.partial_slots(tiles, num_k, programs, block_k)
    assert set(mains) == set(range(slots)), "slots are the last wave's places, all of them, within the scratch"
    first_split = pl.waves * programs
    for slot, (p_main, main) in mains.items():
        p_tail, tail = tails[slot]
        assert main.tile == tail.tile == first_split + slot, "only last-wave tiles are cut"
        assert (main.k_first, main.k_count) == (0, num_k - pl.tail_steps)
        assert (tail.k_first, tail.k_count) == (num_k - pl.tail_steps, pl.tail_steps), "one K cut for all"
        assert p_tail < p_main, "a main part waits only on a program the hardware started before it"
    if slots:
        assert 1 <= pl.tail_steps <= num_k // 2


def test_plan_balances_the_last_wave_of_a_gpu_sized_case():
    # 777x4096x11008 in 128x256x64 tiles on 132 SMs: 112 tiles, no full wave; 20 programs take 5-6 tails each.
    pl = wf.plan(112, 172, 132, 64)
    assert (pl.waves, pl.rem, pl.tail_programs, pl.tails_each) == (0, 112, 20, 6)
    assert 20 <= pl.tail_steps <= 25
    span = wf.makespan_steps(112, 172, 132, 64)
    assert span < 0.9 * 172, "the tails shorten the wave by the idle programs' share, less the partials' cost"
    # A full last wave, or too few K steps to cut, runs whole tiles.
    assert wf.plan(264, 64, 132, 64).tail_steps == 0 and wf.partial_slots(264, 64, 132, 64) == 0
    assert wf.plan(131, 2, 132, 64).tail_steps == 0
    assert wf.makespan_steps(131, 2, 132, 64) == 2


def test_wave_fill_config_name_round_trips_and_refuses_other_cuts():
    cfg = GemmConfig(128, 256, 64, 4, 8, store_chunks=4, wave_fill=True)
    assert cfg.name.endswith("_fill") and parse_config(cfg.name) == cfg
    assert check_config(cfg, torch.bfloat16, torch.bfloat16) is None
    wide = GemmConfig(128, 192, 64, 4, 8, group_m=16, store_chunks=3, wave_fill=True)
    assert check_config(wide, torch.bfloat16, torch.bfloat16) is None
    for bad in (dict(split_k=2), dict(stream_k=True), dict(consumers=2, consumer_warps=4, block_n=128),
                dict(swap_ab=True, block_n=16, block_k=128), dict(cluster_m=2)):
        problem = check_config(GemmConfig(wave_fill=True).replace(**bad), torch.bfloat16, torch.bfloat16)
        assert problem is not None and "wave_fill" in problem, (bad, problem)
