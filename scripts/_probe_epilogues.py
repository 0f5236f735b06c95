"""Epilogue variants for scripts/grouped_overhead_probe.py and scripts/grouped_store_probe.py (measurement only:
TmaEveryTile writes wrong values on purpose)."""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.language.core import _aggregate as aggregate

from warpgemm.kernels.hopper.epilogue import RowBoundStoreEpilogue


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
