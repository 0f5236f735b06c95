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

offs is read on the device and sanitized as the token forms' offsets are (expert_scheduler): each end raised to the
one before it and clamped to [0, T], group g taking [end of g-1, end of g). So a decreasing offset makes an empty
group, groups never share a token (the forward and its gradients, token-form products, sum the same tokens), and
any offs keeps every read in bounds and every write in C. An empty group's tiles run no K step and store zeros, as
torch does. Up to RAGGED_OFFS_GROUPS_MAX groups the kernel raises the ends itself (RaggedKScheduler: one chunk of
offs loaded a unit, beside the two ends the clamp-only form loaded); past that the host passes ends it raised
(torch.cummax, one small kernel: 4-6 us a call, results/2026-11-28-s46/).
"""
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.language.core import _aggregate as aggregate

from .expert_scheduler import OFFS_GROUPS_MAX, running_max, total
from .scheduler import WorkItem, grouped_order

_OFFS_G = gl.constexpr(OFFS_GROUPS_MAX)
# Chunks loaded at once while a program takes each chunk's largest end (RaggedKScheduler.create).
_CHUNK_LOADS = gl.constexpr(4)
# Groups whose ends the kernel raises itself: one chunk's largest end per lane of the chunk vector. Past that the
# host raises them (torch.cummax).
RAGGED_OFFS_GROUPS_MAX = OFFS_GROUPS_MAX * OFFS_GROUPS_MAX


@gluon.jit
def _ragged_item(u, g, tiles_m, tiles_n, start, end, BLOCK_M: gl.constexpr, BLOCK_N: gl.constexpr,
                 BLOCK_K: gl.constexpr, GROUP_M: gl.constexpr):
    """Unit u of group g, whose tokens are [start, end) (sanitized)."""
    tile_m, tile_n = grouped_order(u - g * tiles_m * tiles_n, tiles_m, tiles_n, GROUP_M)
    k_count = gl.cdiv(end - start, BLOCK_K)
    return WorkItem(g, tile_m * BLOCK_M, tile_n * BLOCK_N, u, u * 0, start, k_count, (tile_m + 1) * BLOCK_M, end)


@aggregate
class RaggedKScheduler:
    """Units u = p, p + P, ... of G x tiles_m x tiles_n: group u // (tiles_m * tiles_n), then the grouped order
    within the group, so the programs running at once share one group's panels of A and B in L2 (interleaving
    the units of a few groups instead was 4-30% slower: results/2026-11-25-wgrad/). The kernel's group_table
    argument is offs.

    A unit's start is the largest end before its group. offs is read in chunks of OFFS_GROUPS_MAX ends, each held
    whole by every warp (two a lane: a reduction is shuffles within a warp). Each partition first takes every
    chunk's largest end, CHUNK_LOADS chunks a step (independent loads, one latency), and keeps their running maximum
    in the same kind of vector (one entry a chunk); a unit of group g then loads g's chunk up to g beside offs[g-1]
    and offs[g], and its start is the largest of the chunks before g's, g's chunk before g and offs[g-1]. Past
    RAGGED_OFFS_GROUPS_MAX groups the host hands over ends it raised itself, no chunk is taken, and offs[g-1] alone
    is the start."""

    first: gl.tensor
    step: gl.tensor
    num_units: gl.tensor
    tiles_m: gl.tensor
    tiles_n: gl.tensor
    tokens: gl.tensor
    offs_ptr: gl.tensor
    lane: gl.tensor  # 0 .. OFFS_GROUPS_MAX - 1: the position in a chunk, or a chunk's number
    before: gl.tensor  # entry j: the largest end in chunks 0..j (at least 0)
    BLOCK_M: gl.constexpr
    BLOCK_N: gl.constexpr
    BLOCK_K: gl.constexpr
    GROUP_M: gl.constexpr

    @gluon.constexpr_function
    def __init__(self, first, step, num_units, tiles_m, tiles_n, tokens, offs_ptr, lane, before, BLOCK_M, BLOCK_N,
                 BLOCK_K, GROUP_M):
        self.first = first
        self.step = step
        self.num_units = num_units
        self.tiles_m = tiles_m
        self.tiles_n = tiles_n
        self.tokens = tokens
        self.offs_ptr = offs_ptr
        self.lane = lane
        self.before = before
        self.BLOCK_M = gl.constexpr(BLOCK_M)
        self.BLOCK_N = gl.constexpr(BLOCK_N)
        self.BLOCK_K = gl.constexpr(BLOCK_K)
        self.GROUP_M = gl.constexpr(GROUP_M)

    @gluon.jit
    def create(p):
        tiles_m = gl.cdiv(p.c_desc.shape[1], p.block_m())
        tiles_n = gl.cdiv(p.c_desc.shape[2], p.block_n())
        groups = p.c_desc.shape[0]
        layout: gl.constexpr = gl.BlockedLayout([_OFFS_G // 32], [32], [gl.num_warps()], [0])
        lane = gl.arange(0, _OFFS_G, layout=layout)
        chunk_max = lane * 0  # 0 for chunks past the last: a start is at least 0 anyway
        chunks = gl.cdiv(groups, _OFFS_G)
        chunks = gl.where(chunks > _OFFS_G, 0, chunks)  # past RAGGED_OFFS_GROUPS_MAX: raised by the host
        for c0 in range(0, chunks, _CHUNK_LOADS):
            for d in gl.static_range(_CHUNK_LOADS):
                idx = (c0 + d) * _OFFS_G + lane
                ends = gl.load(p.group_table_ptr + idx, mask=idx < groups, other=0)
                chunk_max = gl.where(lane == c0 + d, gl.reduce(ends, 0, running_max), chunk_max)
        before = gl.maximum(gl.associative_scan(chunk_max, 0, running_max), 0)
        # A is the (t, j, m) view: its outer dimension counts the tokens; C is (G, M, N).
        return RaggedKScheduler(gl.program_id(0), gl.num_programs(0), groups * tiles_m * tiles_n, tiles_m, tiles_n,
                                p.a_desc.shape[0], p.group_table_ptr, lane, before, p.block_m(), p.block_n(),
                                p.block_k(), p.GROUP_M)

    @gluon.jit
    def local_count(self):
        return gl.maximum(gl.cdiv(self.num_units - self.first, self.step), 0)

    @gluon.jit
    def work(self, i):
        u = self.first + i * self.step
        g = u // (self.tiles_m * self.tiles_n)
        c = g // _OFFS_G
        idx = c * _OFFS_G + self.lane
        # g's chunk before g, with offs[g-1] and offs[g] loaded beside it (one reduction after the loads).
        ends = gl.load(self.offs_ptr + idx, mask=idx < g, other=0)
        prev = gl.load(self.offs_ptr + g - 1, mask=g > 0, other=0)
        end = gl.load(self.offs_ptr + g)
        start = gl.maximum(total(gl.where(self.lane == c - 1, self.before, 0)),  # chunks before g's (0 if none)
                           gl.maximum(gl.reduce(ends, 0, running_max), prev))
        end = gl.maximum(start, end)
        start = gl.minimum(start, self.tokens)
        end = gl.minimum(end, self.tokens)
        return _ragged_item(u, g, self.tiles_m, self.tiles_n, start, end, self.BLOCK_M, self.BLOCK_N, self.BLOCK_K,
                            self.GROUP_M)
