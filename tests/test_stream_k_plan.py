"""The stream-K partition the kernel computes on the device, checked exhaustively on small cases: every K step of
every tile is done exactly once, the reducer finds exactly the slots the parts wrote, in program order, and the
shares are even."""
import itertools

import pytest

from warpgemm.kernels import stream_k_plan as plan


@pytest.mark.parametrize("tiles, num_k", [(1, 1), (1, 7), (3, 1), (5, 3), (32, 32), (7, 200), (224, 32), (200, 1)])
@pytest.mark.parametrize("sms", [1, 2, 7, 132])
def test_units_cover_every_step_once_and_parts_find_their_slots(tiles, num_k, sms):
    programs = plan.grid(tiles, num_k, sms)
    total = tiles * num_k
    covered = {}
    written = {}
    for p in range(programs):
        us = plan.units(p, programs, tiles, num_k)
        assert us, "every program has a non-empty share"
        assert sum(u.k_count for u in us) in (total // programs, total // programs + 1), "shares are even"
        for i, u in enumerate(us):
            assert u.k_count > 0
            if 0 < i < len(us) - 1:
                assert (u.k_first, u.k_count) == (0, num_k), "middle units are whole tiles"
            for k in range(u.k_first, u.k_first + u.k_count):
                assert (u.tile, k) not in covered
                covered[(u.tile, k)] = p
            if u.k_count < num_k:
                written.setdefault(u.tile, []).append((p, u.slot))
    assert set(covered) == set(itertools.product(range(tiles), range(num_k)))
    slots = [s for parts in written.values() for _, s in parts]
    assert len(slots) == len(set(slots)), "no two partial units share a slot"
    assert max(slots, default=0) < 2 * programs, "slots fit the scratch the host allocates"
    for t in range(tiles):
        parts = plan.tile_parts(t, programs, tiles, num_k)
        if len(parts) == 1:
            assert t not in written, "a tile done whole by one program writes no partial"
        else:
            assert parts == [s for _, s in sorted(written[t])], "reducer reads the written slots in program order"


def test_owner_inverts_start():
    for programs, total in [(1, 1), (3, 10), (132, 132), (132, 2048), (7, 7000)]:
        for step in range(total):
            p = plan.owner(step, programs, total)
            assert plan.start(p, programs, total) <= step < plan.start(p + 1, programs, total)
