"""Warp-specialized elementwise binary op on Hopper: c = OP(a, b) over a 2-D view, persistent.

Three partitions joined by two rings (pipeline.py):
- a one-warp TMA load partition fills the input ring with (a, b) tiles;
- the default (compute) partition reads both tiles into registers, frees the input slot, applies OP in fp32
  and writes the result into the output ring;
- a one-warp TMA store partition drains the output ring to global memory, keeping up to (slots - 1) bulk
  stores in flight, and frees each output slot once its store has finished reading it.
The load and store warps run on a small register budget (setmaxnreg); OP is a constexpr gluon function
`op(a, b, alpha) -> c` on fp32 register tensors, so another binary op is a few lines (see OPS).
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, mbarrier, tma
from triton.language.core import _aggregate as aggregate

from .pipeline import BarrierRing, RingPosition
from .scheduler import GroupedTileScheduler


@gluon.jit
def add_op(a, b, alpha):
    # torch.add computes a + alpha * b in fp32 with one rounding (nvcc contracts it to an FMA): match it bitwise.
    return gl.fma(b, alpha, a)


@gluon.jit
def mul_op(a, b, alpha):
    return a * b


OPS = {"add": add_op, "mul": mul_op}


@aggregate
class StreamArgs:
    a_desc: tma.tensor_descriptor
    b_desc: tma.tensor_descriptor
    c_desc: tma.tensor_descriptor
    a_bufs: gl.shared_memory_descriptor
    b_bufs: gl.shared_memory_descriptor
    c_bufs: gl.shared_memory_descriptor
    in_ring: BarrierRing
    out_ring: BarrierRing

    @gluon.constexpr_function
    def __init__(self, a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, in_ring, out_ring):
        self.a_desc = a_desc
        self.b_desc = b_desc
        self.c_desc = c_desc
        self.a_bufs = a_bufs
        self.b_bufs = b_bufs
        self.c_bufs = c_bufs
        self.in_ring = in_ring
        self.out_ring = out_ring

    @gluon.jit
    def scheduler(self):
        BX: gl.constexpr = self.c_desc.block_type.shape[0]
        BY: gl.constexpr = self.c_desc.block_type.shape[1]
        # Row-major tile order (GROUP_M = 1): programs running together stream neighbouring memory.
        return GroupedTileScheduler.make(1, self.c_desc.shape[0], self.c_desc.shape[1], 1, BX, BY, 1, 1)


@gluon.jit
def _load_partition(p: StreamArgs):
    nbytes: gl.constexpr = p.a_desc.block_type.nbytes + p.b_desc.block_type.nbytes
    sched = p.scheduler()
    pos = RingPosition.start(p.in_ring.num_slots)
    for i in range(sched.local_count()):
        work = sched.work(i)
        off_x = work.off_m
        off_y = work.off_n
        p.in_ring.wait_empty(pos)
        bar = p.in_ring.ready_barrier(pos)
        mbarrier.expect(bar, nbytes)
        tma.async_copy_global_to_shared(p.a_desc, [off_x, off_y], bar, p.a_bufs.index(pos.index))
        tma.async_copy_global_to_shared(p.b_desc, [off_x, off_y], bar, p.b_bufs.index(pos.index))
        pos = pos.next()


@gluon.jit
def _store_partition(p: StreamArgs):
    slots: gl.constexpr = p.out_ring.num_slots
    in_flight: gl.constexpr = slots - 1
    sched = p.scheduler()
    pos = RingPosition.start(slots)
    for i in range(sched.local_count()):
        work = sched.work(i)
        off_x = work.off_m
        off_y = work.off_n
        p.out_ring.wait_ready(pos)
        tma.async_copy_shared_to_global(p.c_desc, [off_x, off_y], p.c_bufs.index(pos.index))
        # At most `in_flight` stores still read shared memory: the one issued `in_flight` steps ago is done.
        tma.store_wait(in_flight)
        p.out_ring.mark_empty_index(pos.lagging_index(in_flight), pred=i >= in_flight)
        pos = pos.next()
    tma.store_wait(0)


@gluon.jit
def _compute_partition(p: StreamArgs, alpha, OP: gl.constexpr, layout: gl.constexpr):
    sched = p.scheduler()
    in_pos = RingPosition.start(p.in_ring.num_slots)
    out_pos = RingPosition.start(p.out_ring.num_slots)
    for i in range(sched.local_count()):
        p.in_ring.wait_ready(in_pos)
        a = p.a_bufs.index(in_pos.index).load(layout)
        b = p.b_bufs.index(in_pos.index).load(layout)
        # Order these generic-proxy reads before the TMA (async proxy) refill the release allows.
        fence_async_shared()
        p.in_ring.mark_empty(in_pos)
        c = OP(a.to(gl.float32), b.to(gl.float32), alpha).to(p.c_desc.dtype)
        p.out_ring.wait_empty(out_pos)
        p.c_bufs.index(out_pos.index).store(c)
        fence_async_shared()
        p.out_ring.mark_ready(out_pos)
        in_pos = in_pos.next()
        out_pos = out_pos.next()


@gluon.constexpr_function
def stream_layout(block_x, block_y, itemsize, num_warps):
    # 16-byte vectors per thread along the contiguous dimension; a warp covers whole rows where it can.
    vec = 16 // itemsize
    ty = min(32, block_y // vec)
    return gl.BlockedLayout([1, vec], [32 // ty, ty], [num_warps, 1], [1, 0])


@gluon.jit
def elementwise_kernel(a_desc, b_desc, c_desc, alpha,  #
                       OP: gl.constexpr, LOAD_SLOTS: gl.constexpr, STORE_SLOTS: gl.constexpr,
                       IO_REGS: gl.constexpr, PARTS_HASH: gl.constexpr, num_warps: gl.constexpr):
    # PARTS_HASH: the parts' source (launch.parts_source_hash): OP and the ring's methods are outside Triton's
    # cache key.
    a_bufs = gl.allocate_shared_memory(a_desc.dtype, [LOAD_SLOTS] + a_desc.block_type.shape, a_desc.layout)
    b_bufs = gl.allocate_shared_memory(b_desc.dtype, [LOAD_SLOTS] + b_desc.block_type.shape, b_desc.layout)
    c_bufs = gl.allocate_shared_memory(c_desc.dtype, [STORE_SLOTS] + c_desc.block_type.shape, c_desc.layout)
    in_ring = BarrierRing.allocate(LOAD_SLOTS, 1)
    out_ring = BarrierRing.allocate(STORE_SLOTS, 1)
    p = StreamArgs(a_desc, b_desc, c_desc, a_bufs, b_bufs, c_bufs, in_ring, out_ring)
    layout: gl.constexpr = stream_layout(c_desc.block_type.shape[0], c_desc.block_type.shape[1],
                                         c_desc.dtype.primitive_bitwidth // 8, num_warps)
    gl.warp_specialize([
        (_compute_partition, (p, alpha, OP, layout)),
        (_load_partition, (p, )),
        (_store_partition, (p, )),
    ], [1, 1], [IO_REGS, IO_REGS])
    # No mbarrier.invalidate at the end (as gemm_kernel): the memory is not reused before the program exits.
