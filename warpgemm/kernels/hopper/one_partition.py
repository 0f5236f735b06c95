"""The GEMM mainloop without warp specialization: every warp of the program issues the TMA loads and the wgmma.

Why: Triton's warp_specialize costs each program a fixed ~0.4 us (the partitions' start and end: CTA-wide barriers,
register reallocation, the workers' dispatch), measured on one GEMM body run with and without an idle worker
partition (scripts/one_partition_probe.py, notes/perf.md session 23). A product whose programs run one short tile
each (256^3-1024^3, a few K steps) spends a tenth of its time there. Here the loads of a unit's first STAGES K steps
go out together, and each later step's load is issued as soon as the wgmma two steps back has retired and freed its
slot; a producer warp running ahead buys nothing when the whole unit fits in the ring, or (measured for plain
64-row tiles: one_partition_rule.LONGER_K) runs up to 16 K steps through 4 slots. Thread 0 makes the
barrier inits and expect-tx arrives; Triton may split one TMA box into chunks issued by several warps. Units drain the
ring between them (the next unit's loads start after the last wgmma of this one), so the heuristics choose this form
only for programs of one unit.

Same scheduler, ring slots, ready barriers and epilogues as the warp-specialized kernel (the empty barriers go
unused: one instruction stream orders reuse by itself).
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import warpgroup_mma, warpgroup_mma_wait

from .partitions import GemmOperands, load_step, wait_for_prior_grid
from .pipeline import RingPosition


@gluon.jit
def one_partition_mainloop(p: GemmOperands, SchedulerImpl: gl.constexpr, EpilogueImpl: gl.constexpr,
                           acc_layout: gl.constexpr):
    BM: gl.constexpr = p.mma_m()
    BN: gl.constexpr = p.block_n_main()
    S: gl.constexpr = p.ring.num_slots
    p.zero_a_padding()
    wait_for_prior_grid()
    sched = p.scheduler(SchedulerImpl)
    epi = EpilogueImpl.create(p, sched)
    steps = 0  # ring steps of the units before this one: where its slots and barrier phases start
    for i in range(sched.local_count()):
        work = sched.work(i)
        # Predicated, not branched: straight-line issue code lets ptx_hints.drop_issue_barriers remove the CTA
        # barriers Triton puts between the loads.
        for j in gl.static_range(S):
            load_step(p, work, j, (steps + j) % S, p.ring.ready.index((steps + j) % S), pred=j < work.k_count)
        pos = RingPosition.at(steps, S)
        acc = gl.zeros([BM, BN], gl.float32, acc_layout)
        for kk in range(work.k_count):
            p.ring.wait_ready(pos)
            acc = warpgroup_mma(p.a_tile(pos.index), p.b_tile(pos.index), acc, use_acc=kk > 0, is_async=True)
            # One wgmma in flight: the one of step kk - 1 has retired, so its slot takes step kk - 1 + S, once every
            # warp has passed its wait (a wait covers the waiting warp's wgmma only, and other warps issue the load).
            acc = warpgroup_mma_wait(1, deps=(acc, ))
            gl.thread_barrier()
            refill = kk - 1 + S
            prev = pos.previous_index()
            load_step(p, work, refill, prev, p.ring.ready.index(prev), pred=(kk > 0) & (refill < work.k_count))
            pos = pos.next()
        acc = warpgroup_mma_wait(0, deps=(acc, ))
        # Every warp's wgmma has retired before the next unit's loads refill the ring (not left to the epilogue).
        gl.thread_barrier()
        epi.store(acc, work)
        steps += work.k_count
    epi.drain()
