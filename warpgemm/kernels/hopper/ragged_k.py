"""The ragged-K grouped GEMM (the MoE weight gradient): C[g] = A[:, tokens of g] @ B[tokens of g, :].

Groups are token ranges [offs[g-1], offs[g]) along the K dimension of both operands: A (M, T) and B (T, N) with
the tokens as each operand's outer dimension (A M-contiguous, B N-contiguous, as `x.t()` and `dy` of a backward
are). The output is (G, M, N): every group owns whole tiles, so the units are (group, tile_m, tile_n), group by
group, each group's tiles in the grouped order; a unit's K loop covers its group's tokens only.

A group's tokens start and end anywhere, but a TMA box zero-fills only outside the descriptor's shape. So both
operands are described as a 3-D view (t, j, x) -> op[t + j, x]: the t and j dimensions share the token stride and
j has BLOCK_K entries (`ragged_view` on the host). The box of a K step with r of the group's tokens left is loaded
at (t = k, j = r - BLOCK_K): its first BLOCK_K - r rows have j < 0, out of bounds and read as zeros, and its last r
rows are tokens [k, k + r). Nothing of the next group is read, in A or B, so a NaN there cannot leak in, and a
whole step (r = BLOCK_K) is the plain box at (k, 0). The producer computes these coordinates
(partitions.tma_producer, RAGGED_K).

offs is read on the device, sanitized per group (start and end clamped to [0, T]; an end below its start makes
the group empty): any offs keeps every read in bounds and every write in C. An empty group's tiles run no K step
and store zeros, as torch does.
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.language.core import _aggregate as aggregate

from .scheduler import WorkItem, grouped_order


@aggregate
class RaggedKScheduler:
    """Units u = p, p + P, ... of G x tiles_m x tiles_n: group u // (tiles_m * tiles_n), then the grouped order
    within the group, so the programs running at once share one group's panels of A and B in L2 (interleaving
    the units of a few groups instead was 4-30% slower: results/2026-11-25-wgrad/). offs is the kernel's
    group_table argument."""

    first: gl.tensor
    step: gl.tensor
    num_units: gl.tensor
    tiles_m: gl.tensor
    tiles_n: gl.tensor
    tokens: gl.tensor
    offs_ptr: gl.tensor
    BLOCK_M: gl.constexpr
    BLOCK_N: gl.constexpr
    BLOCK_K: gl.constexpr
    GROUP_M: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, first, step, num_units, tiles_m, tiles_n, tokens, offs_ptr, BLOCK_M, BLOCK_N, BLOCK_K,
                 GROUP_M):
        self.first = first
        self.step = step
        self.num_units = num_units
        self.tiles_m = tiles_m
        self.tiles_n = tiles_n
        self.tokens = tokens
        self.offs_ptr = offs_ptr
        self.BLOCK_M = gl.constexpr(BLOCK_M)
        self.BLOCK_N = gl.constexpr(BLOCK_N)
        self.BLOCK_K = gl.constexpr(BLOCK_K)
        self.GROUP_M = gl.constexpr(GROUP_M)

    @gluon.jit
    def create(p):
        # A is the (t, j, m) view: its outer dimension counts the tokens; C is (G, M, N).
        tiles_m = gl.cdiv(p.c_desc.shape[1], p.block_m())
        tiles_n = gl.cdiv(p.c_desc.shape[2], p.block_n())
        return RaggedKScheduler(gl.program_id(0), gl.num_programs(0), p.c_desc.shape[0] * tiles_m * tiles_n,
                                tiles_m, tiles_n, p.a_desc.shape[0], p.group_table_ptr,
                                p.block_m(), p.block_n(), p.block_k(), p.GROUP_M)

    @gluon.jit
    def local_count(self):
        return gl.maximum(gl.cdiv(self.num_units - self.first, self.step), 0)

    @gluon.jit
    def work(self, i):
        u = self.first + i * self.step
        per_group = self.tiles_m * self.tiles_n
        g = u // per_group
        tile_m, tile_n = grouped_order(u - g * per_group, self.tiles_m, self.tiles_n, self.GROUP_M)
        start = gl.load(self.offs_ptr + g - 1, mask=g > 0, other=0)
        end = gl.load(self.offs_ptr + g)
        start = gl.minimum(gl.maximum(start, 0), self.tokens)
        end = gl.minimum(gl.maximum(end, start), self.tokens)
        k_count = gl.cdiv(end - start, self.BLOCK_K)
        return WorkItem(g, tile_m * self.BLOCK_M, tile_n * self.BLOCK_N, u, u * 0, start, k_count,
                        (tile_m + 1) * self.BLOCK_M, end)
