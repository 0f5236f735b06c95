"""Epilogue variants for scripts/grouped_overhead_probe.py, scripts/grouped_store_probe.py and
scripts/split_cost_probe.py (measurement only: TmaEveryTile and the Split* variants write wrong values on purpose)."""
from triton.experimental import gluon
from triton.language.core import _aggregate as aggregate

from warpgemm.kernels.hopper.epilogue import RowBoundStoreEpilogue
from warpgemm.kernels.hopper.partial_sums import PartialSumEpilogue


@aggregate
class MaskedOnly:
    """Every tile through the masked path, full or not."""
    inner: RowBoundStoreEpilogue

    @gluon.constexpr_function
    def __init__(self, inner):
        self.inner = inner

    @gluon.jit
    def create(p, sched):
        return MaskedOnly(RowBoundStoreEpilogue.create(p, sched))

    @gluon.jit
    def store(self, acc, work):
        self.inner.store_masked(acc, work)

    @gluon.jit
    def drain(self):
        self.inner.drain()


@aggregate
class TmaEveryTile:
    """Every tile through the TMA store at batch 0, partial or not: a group's last tile overwrites the next group's
    first rows (wrong values: timing only)."""
    inner: RowBoundStoreEpilogue

    @gluon.constexpr_function
    def __init__(self, inner):
        self.inner = inner

    @gluon.jit
    def create(p, sched):
        return TmaEveryTile(RowBoundStoreEpilogue.create(p, sched))

    @gluon.jit
    def store(self, acc, work):
        self.inner.out.store_tile(acc, 0, work.off_m, work.off_n)

    @gluon.jit
    def drain(self):
        self.inner.drain()


@aggregate
class SplitNoPartials:
    """Split-K units that each store their own accumulator as the tile (wrong sums): what the schedule costs
    without any partial sums, i.e. a split whose reduction were free."""
    inner: PartialSumEpilogue

    @gluon.constexpr_function
    def __init__(self, inner):
        self.inner = inner

    @gluon.jit
    def create(p, sched):
        return SplitNoPartials(PartialSumEpilogue.create(p, sched))

    @gluon.jit
    def store(self, acc, work):
        self.inner.out.store_tile(acc, work.batch, work.off_m, work.off_n)

    @gluon.jit
    def drain(self):
        self.inner.drain()


@aggregate
class SplitStoreOnly:
    """Split-K units that write their fp32 partial and count themselves; the last stores its own accumulator
    instead of the sum (wrong sums): the partial stores and the semaphore without the reduction's reads."""
    inner: PartialSumEpilogue

    @gluon.constexpr_function
    def __init__(self, inner):
        self.inner = inner

    @gluon.jit
    def create(p, sched):
        return SplitStoreOnly(PartialSumEpilogue.create(p, sched))

    @gluon.jit
    def store(self, acc, work):
        e = self.inner
        parts, first, base, step = e.sched.tile_parts(work.tile)
        if e.publish(acc, work, parts):
            e.out.store_tile(acc, work.batch, work.off_m, work.off_n)
            e.release(work)

    @gluon.jit
    def drain(self):
        self.inner.drain()
