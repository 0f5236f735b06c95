"""Small launches of every kernel family, for compute-sanitizer (memcheck, racecheck):

    PYTORCH_NO_CUDA_MEMORY_CACHING=1 compute-sanitizer --tool memcheck python scripts/sanitize_gpu.py
    ONLY_CONFIGS=32x16x256_s5_w4_g8_swap compute-sanitizer ...            # the GEMM loop over these configs only
    FAMILIES=grouped,ragged_k compute-sanitizer ...                       # some families only (default: all)
    TRITON_INSTRUMENTATION_MODE=consan python scripts/sanitize_gpu.py    # triton's race/deadlock checker
    CONTROL=1 compute-sanitizer ...    # only a deliberate out-of-bounds store: memcheck must report it
    CONTROL=tma compute-sanitizer --tool initcheck ...    # one TMA-stored (7, 65) output, staged and copied back;
                                                          # then the same output written by a swap-AB tile's stores

Without PYTORCH_NO_CUDA_MEMORY_CACHING=1 torch's caching allocator carves tensors out of large segments, and
memcheck sees only the segments: a write past one tensor into its neighbour would go unreported.
Families: dense (every shipped config and one_partition_rule's variants x 4 layouts), fp8 (scaled_mm on every fp8
config and its one-partition variants, both scale modes), gemv, split (forced
split-K and stream-K), grouped (grouped_mm
2-D x 3-D on both weight layouts, offs counted in the kernel and by the table kernel, swap-AB tiles, empty groups,
rows past offs[-1], bad offsets clamped on the device; 3-D x 3-D), ragged_k (the weight-gradient form, store-hinted),
group_gemm (the list API), elementwise. Also the grouped form's device-dispatched pair of tiles (70 groups of
~100 rows: the weight-streaming tile when every group fits one row tile, the reuse tile when not).
"""
import os

import torch
import triton

import warpgemm
from warpgemm.bench.elementwise_bench import SWEEP_CONFIGS
from warpgemm.config import GemmConfig, check_config
from warpgemm.heuristics import DECODE, DECODE_SHORT_K, FP8_CONFIGS, SHIPPED_CONFIGS
from warpgemm.one_partition_rule import one_partition_variants
from warpgemm.testing import strided_operand

if os.environ.get("TRITON_INSTRUMENTATION_MODE"):  # consan builds need global scratch memory
    triton.set_allocator(lambda size, align, stream: torch.empty(size, dtype=torch.int8, device="cuda"))
if os.environ.get("CONTROL") == "1":
    import triton.language as tl

    @triton.jit
    def _store_past_end(p, n):
        tl.store(p + n + tl.arange(0, 128), 1.0)

    _store_past_end[(1, )](torch.empty(64, device="cuda"), 64)
    torch.cuda.synchronize()
    raise SystemExit("control: the out-of-bounds store was not caught (fine outside compute-sanitizer)")
if os.environ.get("CONTROL") == "tma":
    from warpgemm.heuristics import MEDIUM

    x, w = torch.randn(7, 127, device="cuda").bfloat16(), torch.randn(65, 127, device="cuda").bfloat16()
    y = warpgemm.matmul(x, w.T, config=MEDIUM)  # TMA store into a padded buffer, then copied into y
    print("tma:", y.isnan().sum().item(), "NaN", flush=True)
    torch.cuda.synchronize()
    print("--- swap-AB (register stores) ---", flush=True)
    y = warpgemm.matmul(x, w.T, config=GemmConfig(64, 16, 256, 5, 4, swap_ab=True))
    print("swap:", y.isnan().sum().item(), "NaN", flush=True)
    raise SystemExit(0)
g = torch.Generator(device="cuda").manual_seed(0)
only = [c for c in os.environ.get("ONLY_CONFIGS", "").split(",") if c]
ALL_FAMILIES = ("dense", "fp8", "gemv", "split", "grouped", "ragged_k", "group_gemm", "elementwise")
families = set(os.environ.get("FAMILIES", ",".join(ALL_FAMILIES)).split(","))
if families - set(ALL_FAMILIES):
    raise SystemExit(f"FAMILIES: unknown {sorted(families - set(ALL_FAMILIES))}; known: {', '.join(ALL_FAMILIES)}")
BF = torch.bfloat16


def rand(*shape):
    return torch.randn(*shape, device="cuda", dtype=BF, generator=g)


def offsets(sizes):
    return torch.tensor(sizes, device="cuda").cumsum(0).to(torch.int32)


DENSE_CONFIGS = SHIPPED_CONFIGS + one_partition_variants(SHIPPED_CONFIGS)
for cfg in [c for c in DENSE_CONFIGS if "dense" in families and (not only or c.name in only)]:
    for a_col in (False, True):
        for b_col in (False, True):
            if cfg.block_m < 64 and not b_col:
                continue  # 32-row swap-AB tiles read K-contiguous weights (others run on a K-major copy)
            # The last shape gives one-partition programs several tiles (their ring drains between tiles).
            shapes = [(7, 65, 127), (129, 257, 300), (4, 100, 520)]
            for m, n, k in shapes + ([(1100, 1100, 520)] if not cfg.warp_specialize else []):
                a = strided_operand(m, k, col_major=a_col, dtype=torch.bfloat16, device="cuda", generator=g)
                b = strided_operand(k, n, col_major=b_col, dtype=torch.bfloat16, device="cuda", generator=g)
                warpgemm.matmul(a, b, config=cfg)
if "dense" in families:
    x = rand(3, 130, 70)
    w = rand(90, 70)
    warpgemm.linear(x, w, rand(90))
    warpgemm.matmul(x, w.T, out_dtype=torch.float32)
if "fp8" in families:
    # scaled_mm: every fp8 config the heuristics ship and the one-partition rule's variants of them, per-tensor and
    # row-wise scales (row scales where the tile takes them), a bias, ragged sizes and a multi-tile one-partition shape.
    E4 = torch.float8_e4m3fn
    for cfg in [c for c in FP8_CONFIGS + one_partition_variants(FP8_CONFIGS, E4) if not only or c.name in only]:
        rowwise_ok = not (cfg.block_n == 256 and cfg.store_chunks == 1)
        for m, n, k in [(7, 65, 128), (129, 257, 304), (1100, 1100, 528)]:
            a, w = rand(m, k).to(E4), rand(n, k).to(E4)
            one = torch.ones((), device="cuda")
            warpgemm.scaled_mm(a, w.T, one, one, rand(n), out_dtype=BF, config=cfg)
            if rowwise_ok:
                out = torch.float32 if check_config(cfg, E4, torch.float32) is None else BF
                warpgemm.scaled_mm(a, w.T, torch.ones(m, 1, device="cuda"), torch.ones(1, n, device="cuda"),
                                   out_dtype=out, config=cfg)
if "gemv" in families:
    # The one- and two-row GEMVs (kernels/gemv.py, kernels/gemv_rows.py): ragged N and K, bias, and x rows further
    # apart than K starting off 16-byte alignment.
    for rows in (1, 2):
        for n, k in [(5, 7), (67, 1030), (33, 4099)]:
            xs = rand(rows, k + 24)[:, 3:3 + k]
            w = rand(n, k)
            warpgemm.linear(xs, w, rand(n))
            warpgemm.linear(xs.contiguous(), w)
if "split" in families:
    # Ordered split-K and stream-K (partial tiles and semaphores in scratch), plain and swap-AB, ragged K.
    for cfg in (GemmConfig(128, 128, 64, 4, 4, split_k=3), GemmConfig(128, 16, 128, 6, 4, split_k=4, swap_ab=True),
                GemmConfig(128, 128, 64, 6, 4, stream_k=True),
                GemmConfig(64, 16, 256, 5, 4, stream_k=True, swap_ab=True)):
        for m, n, k in [(7, 300, 1000), (200, 130, 777)]:
            warpgemm.matmul(rand(m, k), rand(n, k).T, config=cfg)
if "grouped" in families:
    T, K, N = 300, 72, 136
    a = rand(T + 9, K)  # rows past offs[-1] are left alone
    sizes = [0, 1, 130, 0, 7, 162]
    for b in (rand(len(sizes), K, N), rand(len(sizes), N, K).transpose(1, 2)):
        for cfg in (None, DECODE[16]) + ((DECODE_SHORT_K, ) if b.stride(1) == 1 else ()):
            warpgemm.grouped_mm(a, b, offsets(sizes), config=cfg)
            warpgemm.grouped_mm(a, b, offsets(sizes), config=cfg, out_dtype=torch.float32)
    for bad in ([100, 50, 200, 280, 290, 300], [-5, 100, 400, 500, 9, 1 << 30]):
        warpgemm.grouped_mm(a, rand(len(bad), K, N), torch.tensor(bad, device="cuda", dtype=torch.int32))
    many = torch.randint(0, 5, (70,), generator=torch.Generator().manual_seed(1)).tolist()  # the table kernel
    warpgemm.grouped_mm(rand(sum(many) + 3, K), rand(70, K, N), offsets(many))
    warpgemm.grouped_mm(rand(sum(many) + 3, K), rand(70, K, N), offsets(many), config=DECODE[16])
    for sizes in ([100] * 70, [30, 170] * 35):  # the device-dispatched pair: every group one row tile, or not
        warpgemm.grouped_mm(rand(sum(sizes) + 3, K), rand(70, K, 256), offsets(sizes))
    warpgemm.grouped_mm(rand(3, 65, K), rand(3, K, N))  # 3-D x 3-D
if "ragged_k" in families:
    T, M, N = 330, 200, 136
    x, dy = rand(T, M), rand(T, N)
    for sizes in ([0, 1, 130, 0, 64, 126], [300, 0, 0, 30]):
        warpgemm.grouped_mm(x.t(), dy, offsets(sizes))
        warpgemm.grouped_mm(x.t(), dy, offsets(sizes), out_dtype=torch.float32)
    warpgemm.grouped_mm(x.t(), dy, torch.tensor([100, 50, 400, -3], device="cuda", dtype=torch.int32))
if "group_gemm" in families:
    shapes = [(7, 65, 127), (129, 257, 300), (1, 8, 8), (300, 40, 72)]
    warpgemm.group_gemm([rand(m, k) for m, n, k in shapes], [rand(n, k).T for m, n, k in shapes])
    warpgemm.group_gemm([rand(k, m).T for m, n, k in shapes], [rand(k, n) for m, n, k in shapes])
for cfg in ((None, SWEEP_CONFIGS[0], SWEEP_CONFIGS[4]) if "elementwise" in families else ()):
    a = torch.randn(300, 1000, device="cuda")
    warpgemm.add(a, a, alpha=0.5, config=cfg)
torch.cuda.synchronize()
print("sanitize script done")
