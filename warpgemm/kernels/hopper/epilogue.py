"""Epilogues: what a consumer does with a finished fp32 accumulator tile.

The interface the GEMM consumer relies on:

    epi = Epilogue.create(c_desc, bias_ptr, HAS_BIAS)   # inside the consumer partition; may allocate smem
    epi.store(acc, batch, off_m, off_n)                # once per tile
    epi.drain()                                        # before the partition returns
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import fence_async_shared, tma
from triton.language.core import _aggregate as aggregate


@aggregate
class TmaStoreEpilogue:
    """Adds an optional bias row, casts to the output dtype and stores the tile through shared memory with a TMA
    bulk store that is left in flight: the wait for it sits at the start of the next tile's store, so the copy to
    global memory runs under the next tile's mainloop. TMA clips the parts of the box outside the output."""

    c_desc: tma.tensor_descriptor
    c_smem: gl.shared_memory_descriptor
    bias_ptr: gl.tensor
    HAS_BIAS: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, c_desc, c_smem, bias_ptr, HAS_BIAS):
        self.c_desc = c_desc
        self.c_smem = c_smem
        self.bias_ptr = bias_ptr
        self.HAS_BIAS = gl.constexpr(HAS_BIAS)

    @gluon.jit
    def create(c_desc, bias_ptr, HAS_BIAS: gl.constexpr):
        c_smem = gl.allocate_shared_memory(c_desc.dtype, c_desc.block_type.shape, c_desc.layout)
        return TmaStoreEpilogue(c_desc, c_smem, bias_ptr, HAS_BIAS)

    @gluon.jit
    def store(self, acc, batch, off_m, off_n):
        BLOCK_M: gl.constexpr = self.c_desc.block_type.shape[1]
        BLOCK_N: gl.constexpr = self.c_desc.block_type.shape[2]
        if self.HAS_BIAS:
            # The bias (any float dtype) is indexed by output column and added in fp32.
            cols = off_n + gl.arange(0, BLOCK_N, layout=gl.SliceLayout(0, acc.type.layout))
            bias = gl.load(self.bias_ptr + cols, mask=cols < self.c_desc.shape[2], other=0.0)
            acc = acc + gl.expand_dims(bias.to(gl.float32), 0)
        out = acc.to(self.c_desc.dtype)
        # The previous tile's bulk store must have finished reading c_smem before it is overwritten.
        tma.store_wait(0)
        self.c_smem.reshape([BLOCK_M, BLOCK_N]).store(out)
        fence_async_shared()
        tma.async_copy_shared_to_global(self.c_desc, [batch, off_m, off_n], self.c_smem)

    @gluon.jit
    def drain(self):
        tma.store_wait(0)
