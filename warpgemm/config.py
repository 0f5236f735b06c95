"""GemmConfig: one kernel choice for the Hopper GEMM, and the single predicate that says whether it fits a problem."""
from __future__ import annotations

import dataclasses
import functools
import operator
from dataclasses import dataclass

import torch

# Hopper: 227 KB of shared memory per block (232,448 B). The offline compile does not reject a kernel over
# it (it fails at launch), so the budget is checked here. The kernel also holds its mbarriers and Triton
# rounds allocations up; SMEM_SLACK covers both.
SMEM_LIMIT = 232_448
SMEM_SLACK = 1024

# Registers one thread of the consumer partition may spend on accumulators. wgmma keeps a BM x BN fp32 tile
# spread over the consumer warps. Every shipped tile stays at 128; more compiles without spills only where the
# consumers get 240 registers (a 256x192 tile on two warpgroups holds 192), and that tile measured no faster
# (notes/perf.md, session 31), so the check keeps the 128 the kernel is tested at.
MAX_ACC_REGS = 128

# Tile widths that are not a power of two: a power-of-two main part and a smaller power-of-two rest of at least 16
# columns, each its own accumulator and wgmma (kernels/hopper/partitions.py); B arrives in rest-wide TMA boxes and the
# output leaves in rest-wide chunks (TMA boxes and Triton's shared buffers need power-of-two sides). They fit whole
# waves where 128 and 256 do not, as the odd-width tiles cuBLAS picks do (3072^2 outputs: 384 tiles of 128x192, 2.9
# waves, against 288 of 128x256, 2.2; 1536^2: 132 tiles of 128x144, one exact wave, against 144 of 128x128).
TWO_PART_WIDTHS = (80, 96, 144, 160, 192)
# The two-part widths a 2-CTA cluster pair runs (B's rest-wide boxes split between the CTAs: GemmConfig.b_pieces_for;
# measured on 16-bit inputs only: check_config).
TWO_PART_PAIR_WIDTHS = (160, 192)
WIDE_BLOCK_N = 192


def cdiv(a: int, b: int) -> int:
    """Ceiling division: tiles of b that cover a (the heuristics' wave counts)."""
    return -(-a // b)


def width_parts(block_n: int) -> tuple[int, int]:
    """(main, rest) columns of a tile width: the largest power of two <= block_n, and what is left (0 for a power
    of two)."""
    main = 1 << (max(block_n, 1).bit_length() - 1)
    return main, block_n - main


def is_two_part(block_n: int) -> bool:
    return block_n in TWO_PART_WIDTHS


# The reducing part loads all parts' partials at once (CHUNK rows each): past 8 parts its registers spill.
MAX_SPLIT_K = 8


@dataclass(frozen=True)
class GemmConfig:
    """A Hopper GEMM kernel choice.

    block_m/block_n/block_k: the output tile and the K step of one pipeline stage.
    stages: depth of the shared-memory operand ring the TMA producer fills.
    consumer_warps: warps of each wgmma consumer (4 = one warpgroup, 8 = two warpgroups sharing a tile).
    group_m: rows of tiles walked together by the persistent scheduler (L2 reuse of the B panel).
    producer_regs: register budget of the one-warp TMA producer (setmaxnreg).
    consumers: 1 = one consumer takes every tile; 2 = "ping-pong": two one-warpgroup consumers take alternate
        tiles, each with its own accumulator and epilogue buffer, so one's epilogue runs under the other's
        mainloop (the shared FIFO operand ring makes them alternate on the tensor cores by itself).
    split_k: 1 = each program computes whole tiles; n > 1 = each tile's K loop is cut into n parts that run on
        different programs; the last part to finish sums the fp32 partials in a fixed order (deterministic).
    store_chunks: 1 = the finished tile goes out through one tile-sized shared buffer; 2 or 4 = in that many
        column chunks through two chunk-sized buffers that alternate (one chunk's TMA store overlaps the next
        chunk's conversion), which frees shared memory for a deeper operand ring. A two-part width (TWO_PART_WIDTHS,
        whole tiles) stores in chunks as wide as its rest: block_n / rest of them (192 = 128 + 64: 3; 144 =
        128 + 16: 9). Under swap_ab the chunks are of C's rows (see swap_ab).
    stream_k: False = tiles (or split-K parts) are the units; True = stream-K: all tiles' K steps, laid end to
        end, are cut into one even range per program; a tile spread over several programs is summed by the last
        of them in program order (deterministic).
    swap_ab: False = C = A @ B; True = the kernel computes C^T = B^T @ A^T, so a tiny M lands on wgmma's narrow
        N side (block_n rows of A per tile) and the wide N on its 64-row side (block_m columns of C per tile);
        the transposed tile is written with ordinary stores (store_chunks = 1), or in C's orientation through shared
        memory and TMA in block_n / store_chunks-row chunks (store_chunks > 1: wide tiles, 65-700 and 1000-4096 rows
        of x on wgmma's N side, where a two-part width fits x's rows as cuBLAS's 136-192-wide tiles do). Under swap_ab
        block_m may be 32: twice the tiles over a weight, each computed as 64 wgmma rows of which the upper 32 are
        zero (stored whole only). Such a tile reads the
        weight K-contiguous, as an nn.Linear weight is: forced on a weight contiguous along N, it runs on a K-major
        copy made per call (the heuristics take 64-row tiles for such a weight instead).
    cluster_m: 1 = programs run alone; 2 = programs run in 2-CTA clusters on pairs of vertically adjacent tiles
        (same columns), each loading half of their common B tile (half of its columns; a two-part tile: half of
        every rest-wide box of a K-major B, every other whole box of an N-major one) and multicasting it to both
        (TMA multicast, added to Triton's PTX: kernels/hopper/ptx_hints.py), which halves B's L2 -> shared memory
        traffic.
    warp_specialize: True = a one-warp TMA producer partition feeds the consumer partition(s); False = one
        partition: the consumer warps issue the TMA loads themselves, STAGES steps ahead within each unit
        (kernels/hopper/one_partition.py). It saves the ~0.4 us a program pays to start and end partitions, and
        drains the ring between units: for programs of one short unit. One consumer, whole plain or swap-AB tiles
        of a power-of-two width, no clusters.
    """

    block_m: int = 128
    block_n: int = 256
    block_k: int = 64
    stages: int = 3
    consumer_warps: int = 8
    group_m: int = 8
    producer_regs: int = 40
    consumers: int = 1
    split_k: int = 1
    store_chunks: int = 1
    stream_k: bool = False
    swap_ab: bool = False
    cluster_m: int = 1
    warp_specialize: bool = True

    def __post_init__(self):
        # Types only (what a config can run is check_config's question, asked per problem): a "128" or 128.0
        # would otherwise reach the kernel's constexprs. from_list passes 0/1 for the flags (torch.library ints).
        # Integers of other types (numpy's, a 0-dim integer tensor) are taken as the int they hold.
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            if type(v) is not int and not isinstance(v, bool) and not (
                    isinstance(v, torch.Tensor) and (v.dim() != 0 or v.dtype == torch.bool or v.is_meta)):
                try:
                    v = operator.index(v)
                except (TypeError, RuntimeError):
                    pass
                else:
                    object.__setattr__(self, f.name, v)
            if f.type in (bool, "bool"):
                if v not in (0, 1) or not isinstance(v, int):
                    raise TypeError(f"GemmConfig.{f.name} must be a bool, got {v!r}")
                object.__setattr__(self, f.name, bool(v))
            elif not isinstance(v, int) or isinstance(v, bool):
                raise TypeError(f"GemmConfig.{f.name} must be an int, got {v!r}")

    @property
    def name(self) -> str:
        return (f"{self.block_m}x{self.block_n}x{self.block_k}_s{self.stages}"
                f"_w{self.consumer_warps}_g{self.group_m}" + ("_pp" if self.consumers == 2 else "")
                + (f"_sk{self.split_k}" if self.split_k > 1 else "")
                + (f"_c{self.store_chunks}" if self.store_chunks > 1 else "")
                + ("_streamk" if self.stream_k else "") + ("_swap" if self.swap_ab else "")
                + (f"_cm{self.cluster_m}" if self.cluster_m > 1 else "") + ("" if self.warp_specialize else "_flat"))

    def b_pieces_for(self, b_kmajor: bool) -> int:
        """TMA boxes one B tile arrives in: a cluster pair's two halves (each CTA loads one; columns, in either
        layout), a two-part tile's rest-wide boxes (TMA boxes need power-of-two sides: 128x192 three of 64, 128x144
        nine of 16). A two-part pair's B read along K comes in boxes half as wide as its rest (128x192: six of 32,
        three loaded by each CTA); read along N, its rest-wide boxes stay whole (halved, 64 bf16 columns would be
        64-byte rows inside a 128-byte swizzle) and the CTAs take every other one (128x192: two and one). Else one."""
        if not is_two_part(self.block_n):
            return self.cluster_m
        pieces = self.block_n // width_parts(self.block_n)[1]
        return pieces * self.cluster_m if b_kmajor else pieces

    def epilogue_buffers(self) -> int:
        if self.swap_ab and self.store_chunks == 1:
            return 0  # the transposed tile is stored from registers
        return 2 if self.store_chunks > 1 else 1

    @property
    def mma_m(self) -> int:
        """Rows of the wgmma tile and of each A slot: a 32-row tile still computes one warpgroup's 64."""
        return max(self.block_m, 64)

    def smem_bytes(self, in_dtype: torch.dtype, out_dtype: torch.dtype) -> int:
        ring = self.stages * (self.mma_m + self.block_n) * self.block_k * in_dtype.itemsize
        epilogue = (self.consumers * self.epilogue_buffers() * self.block_m * (self.block_n // self.store_chunks)
                    * out_dtype.itemsize)
        if self.swap_ab and self.store_chunks == 1:
            # The transposed store converts the fp32 tile's layout through shared scratch.
            epilogue = self.mma_m * self.block_n * 4
        barriers = 2 * self.stages * 8
        return ring + epilogue + barriers + SMEM_SLACK

    def replace(self, **changes) -> "GemmConfig":
        return dataclasses.replace(self, **changes)

    def to_list(self) -> list[int]:
        """The fields in order: how a config crosses the torch.library op boundary."""
        return list(dataclasses.astuple(self))

    @classmethod
    def from_list(cls, values) -> "GemmConfig":
        if cls is not GemmConfig:
            return cls(*values)
        return _config_from_tuple(tuple(values))


@functools.lru_cache(maxsize=4096)
def check_config(cfg: GemmConfig, in_dtype: torch.dtype, out_dtype: torch.dtype, *,
                 weight_k_contiguous: bool | None = None) -> str | None:
    """Return None when `cfg` can run a GEMM with these dtypes on Hopper, else the reason it cannot.

    This is the only validity predicate: heuristics, the tuner and forced configs all go through it. Cached (configs
    are frozen): a forced config is checked on every call that takes the validating path (out=, autograd).
    Problem sizes never make a config invalid: TMA zero-fills and clips ragged edges. One layout matters:
    `weight_k_contiguous` says whether the product's B (the weight) is contiguous along K, as an nn.Linear weight
    is; None leaves layout out of the check.
    """
    layout = weight_layout_problem(cfg, weight_k_contiguous)
    if layout is not None:
        return layout
    bm, bn, bk = cfg.block_m, cfg.block_n, cfg.block_k
    if bm == 32:
        if not cfg.swap_ab or cfg.split_k > 1 or cfg.stream_k or cfg.consumer_warps != 4:
            return ("block_m=32 runs only under swap_ab with whole tiles and one warpgroup (swap_ab=True, split_k=1, "
                    f"stream_k=False, consumer_warps=4), got {cfg.name}")
    elif bm not in (64, 128, 256):
        return f"block_m must be 32 (swap_ab), 64, 128 or 256, got {bm}"
    # TMA boxes (the operand and output tiles) must have power-of-two sides: a two-part tile's B arrives in boxes as
    # wide as its rest and its output goes out in chunks as wide (128x192: three of 64 columns).
    widths = (16, 32, 64, 128, 256) + TWO_PART_WIDTHS
    if bn not in widths:
        return f"block_n must be one of {', '.join(map(str, sorted(widths)))}, got {bn}"
    wide = wide_tile_problem(cfg)
    if wide is not None:
        return wide
    if cfg.cluster_m > 1 and is_two_part(bn) and in_dtype.itemsize != 2:
        return (f"two-part cluster pairs ({cfg.name}) run 16-bit inputs only (fp8 was never measured), got "
                f"{in_dtype}")
    if bk not in (32, 64, 128, 256):
        return f"block_k must be 32, 64, 128 or 256, got {bk}"
    if bk * in_dtype.itemsize < 32:
        return f"block_k={bk} gives a {bk * in_dtype.itemsize}-byte TMA row; at least 32 bytes are needed"
    if cfg.consumer_warps not in (4, 8):
        return f"consumer_warps must be 4 or 8, got {cfg.consumer_warps}"
    if cfg.consumers not in (1, 2):
        return f"consumers must be 1 or 2 (ping-pong), got {cfg.consumers}"
    if cfg.consumers == 2 and cfg.consumer_warps != 4:
        return ("ping-pong (consumers=2) runs one warpgroup per consumer: consumer_warps must be 4, "
                f"got {cfg.consumer_warps}")
    if not 1 <= cfg.split_k <= MAX_SPLIT_K:
        return f"split_k must be between 1 and {MAX_SPLIT_K}, got {cfg.split_k}"
    if cfg.store_chunks not in (1, 2, 4) and not is_two_part(bn):
        return f"store_chunks must be 1, 2 or 4, got {cfg.store_chunks}"
    if (bn // cfg.store_chunks) * out_dtype.itemsize < 32:
        what = "row chunks (swap_ab)" if cfg.swap_ab else "column chunks: under 32 bytes per row"
        return f"store_chunks={cfg.store_chunks} leaves {bn // cfg.store_chunks}-{what}"
    if cfg.split_k > 1 and cfg.store_chunks > 1:
        return "split_k > 1 stores whole tiles: store_chunks must be 1"
    if cfg.stream_k and cfg.split_k > 1:
        return "stream_k and split_k > 1 are two ways of cutting K: choose one"
    if cfg.stream_k and cfg.consumers > 1:
        return "stream_k is not supported with ping-pong consumers (consumers=2)"
    if cfg.stream_k and cfg.store_chunks > 1:
        return "stream_k stores whole tiles: store_chunks must be 1"
    if cfg.swap_ab and cfg.store_chunks > 1 and bm < 64:
        return f"swap_ab with store_chunks > 1 stores tiles of at least 64 rows through TMA, got block_m={bm}"
    if cfg.swap_ab and cfg.consumers > 1:
        return "swap_ab is not supported with ping-pong consumers (consumers=2)"
    if cfg.split_k > 1 and cfg.consumers > 1:
        # Measured: the combination faults on the GPU (notes/perf.md); it is not offered until that is understood.
        return "split_k > 1 is not supported with ping-pong consumers (consumers=2)"
    if cfg.cluster_m not in (1, 2):
        return f"cluster_m must be 1 or 2, got {cfg.cluster_m}"
    if cfg.cluster_m == 2 and (cfg.split_k > 1 or cfg.stream_k or cfg.swap_ab or cfg.consumers > 1
                               or bm < 64):
        return ("cluster_m=2 runs whole plain tiles of at least 64 rows with one consumer (split_k=1, "
                f"stream_k=False, swap_ab=False, consumers=1), got {cfg.name}")
    if not cfg.warp_specialize and (cfg.consumers > 1 or cfg.cluster_m > 1 or cfg.split_k > 1 or cfg.stream_k
                                    or is_two_part(bn)):
        return ("warp_specialize=False runs whole tiles of a power-of-two width on one consumer (consumers=1, "
                f"cluster_m=1, split_k=1, stream_k=False), got {cfg.name}")
    # wgmma gives each warpgroup (4 warps) slabs of 64 rows: the tile must hold one per warpgroup.
    if cfg.mma_m < 16 * cfg.consumer_warps:
        return f"block_m={bm} is too small for {cfg.consumer_warps} consumer warps (needs >= {16 * cfg.consumer_warps})"
    if cfg.stages < 2 or cfg.stages > 12:
        return f"stages must be between 2 and 12, got {cfg.stages}"
    if cfg.group_m < 1:
        return f"group_m must be >= 1, got {cfg.group_m}"
    if not (24 <= cfg.producer_regs <= 256 and cfg.producer_regs % 8 == 0):
        return f"producer_regs must be a multiple of 8 in [24, 256], got {cfg.producer_regs}"
    acc_regs = cfg.mma_m * bn // (32 * cfg.consumer_warps)
    if acc_regs > MAX_ACC_REGS:
        return (f"a {cfg.mma_m}x{bn} fp32 accumulator over {cfg.consumer_warps} warps needs {acc_regs} registers per "
                f"thread (limit {MAX_ACC_REGS})")
    smem = cfg.smem_bytes(in_dtype, out_dtype)
    if smem > SMEM_LIMIT:
        return (f"needs {smem} bytes of shared memory for {in_dtype} inputs and {out_dtype} output "
                f"(limit {SMEM_LIMIT})")
    return None


def wide_tile_problem(cfg: GemmConfig) -> str | None:
    """Why a two-part-width config (TWO_PART_WIDTHS) cannot run, or None (also for any other width): the kernel's
    two-accumulator path (kernels/hopper/partitions.py) runs whole tiles on one consumer, stored in rest-wide chunks:
    plain 128-row tiles on two warpgroups, or swap-AB tiles of 64 (one warpgroup) or 128 weight rows (two)."""
    if not is_two_part(cfg.block_n):
        return None
    chunks = cfg.block_n // width_parts(cfg.block_n)[1]
    if cfg.swap_ab:
        if (cfg.block_m not in (64, 128) or cfg.consumer_warps != cfg.block_m // 16 or cfg.split_k > 1
                or cfg.stream_k or cfg.consumers > 1 or cfg.store_chunks != chunks):
            return (f"block_n={cfg.block_n} under swap_ab runs whole tiles of 64 or 128 weight rows, one warpgroup per "
                    f"64, stored in {chunks} {cfg.block_n // chunks}-row chunks (block_m=64 with consumer_warps=4 or "
                    f"block_m=128 with consumer_warps=8, split_k=1, stream_k=False, consumers=1, "
                    f"store_chunks={chunks}), got {cfg.name}")
        return None
    if (cfg.block_m != 128 or cfg.consumer_warps != 8 or cfg.split_k > 1 or cfg.stream_k
            or cfg.consumers > 1 or cfg.store_chunks != chunks):
        return (f"block_n={cfg.block_n} runs whole plain 128-row tiles on two warpgroups, stored in {chunks} "
                f"{cfg.block_n // chunks}-column chunks (block_m=128, consumer_warps=8, split_k=1, stream_k=False, "
                f"swap_ab=False, consumers=1, store_chunks={chunks}), got {cfg.name}")
    # A pair splits each rest-wide box of a K-major B into two row halves, one per CTA (rests under 32 columns would
    # make halves under 16 rows). The two measured and tested pairs only: 128x192 and 128x160.
    if cfg.cluster_m > 1 and cfg.block_n not in TWO_PART_PAIR_WIDTHS:
        return (f"block_n={cfg.block_n} in a cluster pair (cluster_m={cfg.cluster_m}): two-part pairs are "
                f"{' and '.join(str(w) for w in TWO_PART_PAIR_WIDTHS)} columns wide, got {cfg.name}")
    return None


def weight_layout_problem(cfg: GemmConfig, weight_k_contiguous: bool | None) -> str | None:
    """The reason `cfg` cannot read a weight of this layout, else None. A 32-row swap-AB tile loads 32 weight rows
    into the lower half of a 64-row wgmma slot, which only a K-contiguous box can do."""
    if cfg.block_m < 64 and weight_k_contiguous is False:
        return (f"config {cfg.name}: {cfg.block_m}-row swap-AB tiles need the weight (the product's B) contiguous "
                "along K, as an nn.Linear weight is; got one contiguous along N")
    return None


def launch_warps(cfg: GemmConfig) -> tuple[int, int | None]:
    """(num_warps, maxnreg) to launch with: the consumer warps plus one warpgroup holding the producer warp.

    num_warps is the default partition's (the first consumer's) warps. maxnreg caps registers at kernel entry
    so that setmaxnreg can move them from the producer to the consumers: 64K registers over all warps. A
    one-partition kernel (warp_specialize=False) is its consumer warps alone, with Triton's register limit.
    """
    if not cfg.warp_specialize:
        return cfg.consumer_warps, None
    total_warps = cfg.consumers * cfg.consumer_warps + 4
    maxnreg = min(256, (65536 // (32 * total_warps)) // 8 * 8)
    return cfg.consumer_warps, maxnreg


def worker_consumer_regs(cfg: GemmConfig) -> int:
    """setmaxnreg budget of the second (worker) consumer of a ping-pong kernel.

    Registers freed by the producer warpgroup are shared by the two consumer warpgroups; asking for more than
    is free would make setmaxnreg wait forever, so this is computed, never guessed.
    """
    _, maxnreg = launch_warps(cfg.replace(warp_specialize=True))  # unused by one-partition kernels
    freed = 4 * 32 * (maxnreg - cfg.producer_regs)  # the producer's warpgroup drops to producer_regs
    per_consumer = maxnreg + freed // (cfg.consumers * cfg.consumer_warps * 32)
    return min(256, per_consumer // 8 * 8)


@dataclass(frozen=True)
class StreamConfig:
    """A choice for the warp-specialized elementwise kernel.

    block_x x block_y: the tile (block_y along the contiguous dimension, in elements).
    load_slots / store_slots: depth of the input and output rings; compute_warps: warps of the compute
    partition; io_regs: register budget of the one-warp load and store partitions; ctas_per_sm: programs per SM
    of the grid (shared memory must allow it); tiles_per_program: 0 = persistent (one program per resident slot
    walks its share of the tiles), n > 0 = a grid of short programs of n tiles each, handed out by the hardware
    as SMs free up (measured: a memory-bound persistent grid finishes with its slowest SM, notes/perf.md).
    """

    block_x: int = 32
    block_y: int = 128
    load_slots: int = 4
    store_slots: int = 2
    compute_warps: int = 4
    io_regs: int = 24
    ctas_per_sm: int = 1
    tiles_per_program: int = 0

    @property
    def name(self) -> str:
        return (f"{self.block_x}x{self.block_y}_l{self.load_slots}_s{self.store_slots}_w{self.compute_warps}"
                f"_c{self.ctas_per_sm}" + (f"_t{self.tiles_per_program}" if self.tiles_per_program else "_persistent"))

    def replace(self, **changes) -> "StreamConfig":
        return dataclasses.replace(self, **changes)

    def smem_bytes(self, itemsize: int) -> int:
        tile = self.block_x * self.block_y * itemsize
        return tile * (2 * self.load_slots + self.store_slots) + 16 * (self.load_slots + self.store_slots) + 1024


def check_stream_config(cfg: StreamConfig, dtype: torch.dtype) -> str | None:
    """None when `cfg` can run the elementwise kernel on `dtype` tensors, else why not."""
    if not (1 <= cfg.block_x <= 256 and 1 <= cfg.block_y <= 256):
        return f"block_x and block_y must be in [1, 256] (TMA box limit), got {cfg.block_x}x{cfg.block_y}"
    if cfg.block_y * dtype.itemsize % 16:
        return f"block_y * itemsize must be a multiple of 16 bytes, got {cfg.block_y * dtype.itemsize}"
    if cfg.compute_warps not in (4, 8):
        return f"compute_warps must be 4 or 8, got {cfg.compute_warps}"
    if cfg.load_slots < 1 or cfg.store_slots < 1:
        return "load_slots and store_slots must be >= 1"
    if not (24 <= cfg.io_regs <= 256 and cfg.io_regs % 8 == 0):
        return f"io_regs must be a multiple of 8 in [24, 256], got {cfg.io_regs}"
    if cfg.tiles_per_program < 0:
        return f"tiles_per_program must be >= 0, got {cfg.tiles_per_program}"
    if cfg.ctas_per_sm < 1 or cfg.smem_bytes(dtype.itemsize) * cfg.ctas_per_sm > SMEM_LIMIT:
        return (f"{cfg.ctas_per_sm} programs per SM need {cfg.smem_bytes(dtype.itemsize) * cfg.ctas_per_sm} bytes of "
                f"shared memory (limit {SMEM_LIMIT})")
    return None


def stream_launch_regs(cfg: StreamConfig) -> tuple[int, int]:
    """(num_warps, maxnreg): the compute warps plus a warpgroup holding the load and store warps."""
    total_warps = cfg.compute_warps + 4
    return cfg.compute_warps, min(256, (65536 // (32 * total_warps * cfg.ctas_per_sm)) // 8 * 8)


@functools.lru_cache(maxsize=256)
def _config_from_tuple(values: tuple) -> GemmConfig:
    # The registered ops get a forced config as a list of ints on every call: build each one once (configs are
    # frozen, so one instance serves every call; __post_init__'s checks cost ~4 us).
    return GemmConfig(*values)
