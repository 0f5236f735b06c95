"""GPU suite for grouped_mm (skipped without sm_90): every form, ragged and empty groups, many groups, bad
offsets, CUDA-graph replay with new offsets; the 2-D x 2-D (ragged-K) form's own kernel at the end. Outputs are
NaN-filled first; rows past offs[-1] stay unwritten."""
import pytest
import torch

import warpgemm
from warpgemm.config import GemmConfig, check_config
from warpgemm.heuristics import DECODE, SHIPPED_CONFIGS
from warpgemm.ops.grouped import grouped_config_problem
from warpgemm.ops.grouped_ragged_k import forced_config_problem
from warpgemm.testing import rand, rel_error

pytestmark = pytest.mark.gpu
BF = torch.bfloat16
DEV = "cuda"



def offsets(sizes):
    return torch.tensor(sizes, device=DEV, dtype=torch.int64).cumsum(0).to(torch.int32)


def reference(a, b, offs):
    """fp32 per group, from the sanitized bounds: rows [prev_end, clamp(max(offs[g], prev_end), 0, T))."""
    out = torch.full((a.shape[0], b.shape[-1]), float("nan"), device=DEV)
    prev = 0
    for g, o in enumerate(offs.tolist()):
        end = min(max(o, prev), a.shape[0])
        if end > prev:
            out[prev:end] = a[prev:end].float() @ b[g].float()
        prev = end
    return out, prev


def check(a, b, offs, config=None, out_dtype=None):
    out = torch.full((a.shape[0], b.shape[-1]), float("nan"), device=DEV, dtype=out_dtype or a.dtype)
    warpgemm.grouped_mm(a, b, offs, out=out, config=config)
    want, covered = reference(a, b, offs)
    got = out[:covered].float()
    assert not got.isnan().any(), "rows inside the groups were not written"
    err = ((got - want[:covered]).norm() / want[:covered].norm().clamp_min(1e-30)).item() if covered else 0.0
    assert err < 1e-2, err
    assert out[covered:].float().isnan().all(), "rows past the last group were written"


@pytest.mark.parametrize("b_kmajor", [False, True], ids=["b_GKN", "b_GNK_T"])
def test_tokens_by_expert_ragged_and_empty_groups(b_kmajor):
    g = torch.Generator(device=DEV).manual_seed(1)
    sizes = [0, 1, 127, 128, 129, 0, 300, 5, 64, 0]
    T, K, N = sum(sizes) + 7, 256, 200  # 7 rows past offs[-1]
    a = rand(T, K, g=g)
    b = rand(len(sizes), N, K, g=g).transpose(1, 2) if b_kmajor else rand(len(sizes), K, N, g=g)
    check(a, b, offsets(sizes))


# Two-part widths (128x192, 128x160) are dense-only (grouped_mm refuses them: test_gpu_wide.py).
# grouped_mm refuses two-part widths and cluster pairs by name (test_ragged_k_forced_configs_it_cannot_run_are_refused).
# The shipped configs grouped_mm accepts (stream-K ones are filtered per test where they are refused).
GROUPED_CONFIGS = [c for c in SHIPPED_CONFIGS if c.stream_k or grouped_config_problem(c) is None]


@pytest.mark.parametrize("cfg", [c for c in GROUPED_CONFIGS if not c.stream_k], ids=lambda c: c.name)
def test_every_shipped_config_on_groups(cfg):
    g = torch.Generator(device=DEV).manual_seed(2)
    sizes = [100, 0, 257, 31, 600]
    a, b = rand(sum(sizes), 192, g=g), rand(len(sizes), 192, 72, g=g)
    check(a, b, offsets(sizes), config=cfg)
    if check_config(cfg, BF, torch.float32) is None:
        check(a, b, offsets(sizes), config=cfg, out_dtype=torch.float32)


ROW_TILE_CONFIGS = [c for c in GROUPED_CONFIGS if not c.stream_k and c.split_k == 1] + [
    GemmConfig(block_m=128, block_n=128, block_k=64, stages=4, consumer_warps=4, consumers=2)]


@pytest.mark.parametrize("out_dtype", [BF, torch.float32], ids=["bf16", "fp32"])
@pytest.mark.parametrize("cfg", ROW_TILE_CONFIGS, ids=lambda c: c.name)
def test_group_ends_around_tile_boundaries(cfg, out_dtype):
    """Group ends on both sides of 64 and 128 rows, several column tiles with a partial one, both weight layouts,
    rows that end on 16 bytes or not, and a ping-pong config (two consumers alternating tiles)."""
    if check_config(cfg, BF, out_dtype) is not None:
        pytest.skip("config does not fit this output dtype")
    g = torch.Generator(device=DEV).manual_seed(11)
    sizes = [1, 63, 64, 65, 0, 127, 128, 129, 191, 192, 193, 320, 17]
    T, K = sum(sizes) + 5, 384
    a = rand(T, K, g=g)
    # N = 601: rows that do not end on 16 bytes (staged output, element-wise masks at the row end).
    for N in (600, 601):
        check(a, rand(len(sizes), K, N, g=g), offsets(sizes), config=cfg, out_dtype=out_dtype)
        check(a, rand(len(sizes), N, K, g=g).transpose(1, 2), offsets(sizes), config=cfg, out_dtype=out_dtype)


@pytest.mark.parametrize("n", [200, 201], ids=["rows_16B", "rows_odd"])
def test_callers_out_keeps_rows_past_the_groups(n):
    """A caller's out that the kernel cannot write in place (column-major; or rows not ending on 16 bytes, so the
    output is staged) keeps its rows past offs[-1]."""
    g = torch.Generator(device=DEV).manual_seed(12)
    sizes = [70, 0, 150, 3]
    T, K = sum(sizes) + 9, 128
    a, b = rand(T, K, g=g), rand(len(sizes), K, n, g=g)
    offs = offsets(sizes)
    want, covered = reference(a, b, offs)
    for out in (torch.full((n, T), float("nan"), device=DEV, dtype=BF).t(),
                torch.full((T, n), float("nan"), device=DEV, dtype=BF)):
        warpgemm.grouped_mm(a, b, offs, out=out)
        assert ((out[:covered].float() - want[:covered]).norm() / want[:covered].norm()).item() < 1e-2
        assert out[covered:].float().isnan().all(), "rows past the last group were written"


def test_many_groups_and_odd_shapes():
    g = torch.Generator(device=DEV).manual_seed(3)
    sizes = torch.randint(0, 7, (1500,), generator=torch.Generator().manual_seed(3)).tolist()
    a, b = rand(sum(sizes), 40, g=g), rand(1500, 40, 24, g=g)  # K and N not 16-byte multiples: copies
    check(a, b, offsets(sizes))


@pytest.mark.parametrize("mean_rows", [100, 10], ids=["tiles", "swap_ab"])
@pytest.mark.parametrize("b_kmajor", [False, True], ids=["b_GKN", "b_GNK_T"])
def test_column_major_tokens_with_unaligned_groups(mean_rows, b_kmajor):
    """Column-major tokens, and a contiguous (T, 1) matrix (TMA can read it only column-major), with groups that
    start off 8-row boundaries. Found by test_gpu_fuzz: read in place column-major, a group starting off a 16-byte
    boundary is a TMA box coordinate off 16 bytes along the contiguous dimension, and the kernel faulted with an
    illegal instruction; such tokens are copied now."""
    g = torch.Generator(device=DEV).manual_seed(13)
    sizes = [mean_rows, 0, mean_rows + 1, 3, 2 * mean_rows]
    T, N = sum(sizes) + 1, 64
    a = rand(T, 1, g=g)
    b = rand(len(sizes), N, 1, g=g).transpose(1, 2) if b_kmajor else rand(len(sizes), 1, N, g=g)
    check(a, b, offsets(sizes))
    T8 = (T + 7) // 8 * 8  # column-major tokens whose columns are 16-byte multiples (TMA could read them)
    sizes[-1] += T8 - T
    a = rand(16, T8, g=g).t()
    b = rand(len(sizes), N, 16, g=g).transpose(1, 2) if b_kmajor else rand(len(sizes), 16, N, g=g)
    check(a, b, offsets(sizes))


@pytest.mark.parametrize("cfg", list(DECODE.values()), ids=lambda c: c.name)
@pytest.mark.parametrize("b_kmajor", [False, True], ids=["b_GKN", "b_GNK_T"])
def test_swap_ab_few_rows_per_group(cfg, b_kmajor):
    """Swap-AB (rows of A on wgmma's narrow side): groups of 0, 1, around one and two tiles, rows past offs[-1],
    N not a multiple of the 64-row side, fp32 outputs."""
    g = torch.Generator(device=DEV).manual_seed(10)
    sizes = [0, 1, 15, 16, 17, 0, 31, 32, 33, 63, 64, 65, 130, 2, 0]
    T, K, N = sum(sizes) + 9, 320, 200
    a = rand(T, K, g=g)
    b = rand(len(sizes), N, K, g=g).transpose(1, 2) if b_kmajor else rand(len(sizes), K, N, g=g)
    check(a, b, offsets(sizes), config=cfg)
    check(a, b, offsets(sizes), config=cfg, out_dtype=torch.float32)


def test_swap_ab_many_tiny_groups():
    g = torch.Generator(device=DEV).manual_seed(11)
    sizes = torch.randint(0, 4, (1200,), generator=torch.Generator().manual_seed(11)).tolist()
    a, b = rand(sum(sizes), 64, g=g), rand(1200, 64, 136, g=g)
    check(a, b, offsets(sizes), config=DECODE[16])


@pytest.mark.parametrize("cfg", [None, DECODE[16]], ids=["default", "swap"])
def test_bad_offsets_never_write_outside(cfg):
    g = torch.Generator(device=DEV).manual_seed(4)
    T, K, N = 300, 64, 64
    a, b = rand(T, K, g=g), rand(4, K, N, g=g)
    for bad in ([100, 50, 200, 280], [-5, 100, 400, 500], [300, 300, 300, 1 << 30]):
        offs = torch.tensor(bad, device=DEV, dtype=torch.int32)
        guard = torch.full((T + 64, N), float("nan"), device=DEV, dtype=BF)
        out = guard[32:32 + T]
        warpgemm.grouped_mm(a, b, offs, out=out, config=cfg)
        assert guard[:32].isnan().all() and guard[32 + T:].isnan().all(), bad
        want, covered = reference(a, b, offs)
        assert torch.allclose(out[:covered].float(), want[:covered], rtol=2e-2, atol=2e-1), bad


@pytest.mark.parametrize("cfg", [None, DECODE[16]], ids=["default", "swap"])
@pytest.mark.parametrize("groups", [64, 65], ids=["offs_in_kernel", "table_kernel"])
def test_row_tiles_from_offs_or_table_with_strided_and_bad_offsets(groups, cfg):
    """Up to 64 groups the GEMM counts its row tiles from offs itself; past that a table kernel does it first. Both
    must read a strided offs view correctly and sanitize bad offsets the same way."""
    g = torch.Generator(device=DEV).manual_seed(14)
    sizes = torch.randint(0, 40, (groups,), generator=torch.Generator().manual_seed(14)).tolist()
    sizes[3] = sizes[-1] = 0
    T, K, N = sum(sizes) + 5, 64, 96
    a, b = rand(T, K, g=g), rand(groups, K, N, g=g)
    offs = offsets(sizes)
    strided = torch.zeros(2 * groups, device=DEV, dtype=torch.int32)
    strided[::2] = offs
    check(a, b, strided[::2], config=cfg)
    shifted = torch.cat([offs[:1], offs])[1:]  # contiguous, 4 bytes past a 16-byte boundary
    assert shifted.data_ptr() % 16
    check(a, b, shifted, config=cfg)
    bad = offs.clone()
    bad[10], bad[20], bad[-2] = bad[9] - 7, -3, 1 << 30
    guard = torch.full((T + 64, N), float("nan"), device=DEV, dtype=BF)
    out = guard[32:32 + T]
    warpgemm.grouped_mm(a, b, bad, out=out, config=cfg)
    assert guard[:32].isnan().all() and guard[32 + T:].isnan().all()
    want, covered = reference(a, b, bad)
    assert torch.allclose(out[:covered].float(), want[:covered], rtol=2e-2, atol=2e-1)


def test_no_groups_leaves_every_row_unwritten():
    g = torch.Generator(device=DEV).manual_seed(15)
    a, b = rand(40, 64, g=g), rand(0, 64, 32, g=g)
    out = torch.full((40, 32), float("nan"), device=DEV, dtype=BF)
    warpgemm.grouped_mm(a, b, torch.zeros(0, device=DEV, dtype=torch.int32), out=out)
    assert out.isnan().all()


@pytest.mark.parametrize("cfg", [None, DECODE[32]], ids=["default", "swap"])
def test_cuda_graph_replays_with_new_offsets(cfg):
    g = torch.Generator(device=DEV).manual_seed(5)
    T, K, N, G = 1024, 128, 256, 8
    a, b = rand(T, K, g=g), rand(G, K, N, g=g)
    offs = offsets([128] * G)
    warpgemm.grouped_mm(a, b, offs, config=cfg)  # compile outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = warpgemm.grouped_mm(a, b, offs, config=cfg)
    for sizes in ([128] * G, [0, 1000, 0, 0, 24, 0, 0, 0], [1, 2, 3, 4, 5, 6, 7, 900]):
        offs.copy_(offsets(sizes))
        graph.replay()
        torch.cuda.synchronize()
        want, covered = reference(a, b, offs)
        err = ((out[:covered].float() - want[:covered]).norm() / want[:covered].norm()).item()
        assert err < 1e-2, (sizes, err)


def test_device_picks_the_streaming_tile_only_when_no_group_has_two_row_tiles(monkeypatch):
    """64+ groups of <= 128 rows on average launch two GEMMs on one table; the device runs the streaming one only
    when every group fits one row tile. Each routing must be right whichever runs, also in one graph replayed with
    offsets that switch between them; with WARPGEMM_LOG=1 the plan says so."""
    from warpgemm.ops import grouped

    g = torch.Generator(device=DEV).manual_seed(9)
    G, K, N = 64, 384, 512
    T = G * 128
    a, b = rand(T, K, g=g), rand(G, K, N, g=g)
    uniform = [128] * G
    skewed = [0, 1, 700, 129] + [100] * (G - 5) + [T - 830 - 100 * (G - 5) - 8]  # 8 rows past offs[-1]
    ragged_singles = [(g * 37) % 129 for g in range(G)]  # every group at most one tile, some empty
    for sizes in (uniform, skewed, ragged_singles):
        check(a, b, offsets(sizes))
    plan = next(p for k, p in grouped._PLANS.items() if k[2] == b.shape and k[-1] is None)
    assert isinstance(plan.launch, grouped._DispatchedLaunch)
    offs = offsets(uniform)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = warpgemm.grouped_mm(a, b, offs)
    for sizes in (skewed, uniform, ragged_singles, [0] * G, skewed):
        out.fill_(float("nan"))
        offs.copy_(offsets(sizes))
        graph.replay()
        torch.cuda.synchronize()
        want, covered = reference(a, b, offs)
        got = out[:covered].float()
        assert not got.isnan().any(), sizes[:6]
        if covered:
            assert ((got - want[:covered]).norm() / want[:covered].norm()).item() < 1e-2, sizes[:6]


def test_batched_and_ragged_k_forms():
    g = torch.Generator(device=DEV).manual_seed(6)
    a, b = rand(4, 100, 64, g=g), rand(4, 64, 48, g=g)
    got = warpgemm.grouped_mm(a, b)
    assert torch.allclose(got.float(), a.float() @ b.float(), rtol=2e-2, atol=2e-1)
    x, dy = rand(64, 500, g=g), rand(500, 96, g=g)
    offs = offsets([100, 0, 250, 150])
    got = warpgemm.grouped_mm(x, dy, offs)
    bounds = [(0, 100), (100, 100), (100, 350), (350, 500)]
    for i, (s, e) in enumerate(bounds):
        want = x[:, s:e].float() @ dy[s:e].float()
        assert torch.allclose(got[i].float(), want, rtol=2e-2, atol=2e-1), i


@pytest.mark.parametrize("b_nmajor", [False, True], ids=["b_row_major", "b_col_major"])
def test_groups_along_n_form(b_nmajor):
    """3-D x 2-D (columns of group g use a[g]): the token form on transposed views. Ragged and empty groups, a
    NaN-filled out whose columns past offs[-1] stay unwritten, against fp32 per group."""
    g = torch.Generator(device=DEV).manual_seed(17)
    sizes = [300, 0, 77, 640]
    G, M, K, N = len(sizes), 200, 384, sum(sizes) + 9
    a = rand(G, M, K, g=g)
    b = rand(N, K, g=g).t() if b_nmajor else rand(K, N, g=g)
    offs = offsets(sizes)
    out = torch.full((M, N), float("nan"), device=DEV, dtype=BF)
    assert warpgemm.grouped_mm(a, b, offs, out=out) is out
    n = sum(sizes)
    want = torch.cat([a[i].float() @ b[:, s:e].float()
                      for i, (s, e) in enumerate(zip([0] + offsets(sizes).tolist()[:-1], offs.tolist()))], dim=1)
    assert rel_error(out[:, :n], want) < 1e-2 and torch.isnan(out[:, n:].float()).all()
    got = warpgemm.grouped_mm(a, b, offs)
    assert got.shape == (M, N) and torch.equal(got[:, :n], out[:, :n])
    # Not compared with torch._grouped_mm here: its kernel asserts on the device (a sticky CUDA error) when a group's
    # width in bytes is not a multiple of 16, as the 77-column group is.


def test_matches_torch_grouped_mm():
    g = torch.Generator(device=DEV).manual_seed(7)
    sizes = [300, 10, 0, 714]
    a, b = rand(1024, 512, g=g), rand(4, 512, 256, g=g)
    offs = offsets(sizes)
    ours, theirs = warpgemm.grouped_mm(a, b, offs), torch._grouped_mm(a, b, offs)
    n = sum(sizes)
    want, _ = reference(a, b, offs)
    err_ours = ((ours[:n].float() - want[:n]).norm() / want[:n].norm()).item()
    err_torch = ((theirs[:n].float() - want[:n]).norm() / want[:n].norm()).item()
    assert err_ours <= 2 * err_torch + 1e-6, (err_ours, err_torch)


def test_backward():
    g = torch.Generator(device=DEV).manual_seed(8)
    sizes = [100, 0, 300, 57]
    T, K, N = sum(sizes) + 5, 128, 96
    a0, b0 = rand(T, K, g=g), rand(len(sizes), K, N, g=g)
    grad = rand(T, N, g=g)
    offs = offsets(sizes)
    a, b = a0.clone().requires_grad_(), b0.clone().requires_grad_()
    warpgemm.grouped_mm(a, b, offs).backward(grad)
    ra, rb = a0.float().requires_grad_(), b0.float().requires_grad_()
    parts, start = [], 0
    for i, n in enumerate(sizes):
        parts.append(ra[start:start + n] @ rb[i])
        start += n
    torch.cat(parts + [torch.zeros(T - start, N, device=DEV)]).backward(grad.float())
    for got, want in ((a.grad, ra.grad), (b.grad, rb.grad)):
        err = ((got.float() - want).norm() / want.norm()).item()
        assert err < 1e-2, err
    assert torch.equal(a.grad[start:], torch.zeros_like(a.grad[start:]))


def test_decreasing_offsets_give_both_forms_and_their_gradients_the_same_groups():
    """offs [300, 120, 700, 650, 900]: every form raises each end to the one before it, so the groups are
    [0, 300), [300, 300), [300, 700), [700, 700), [700, 900) in each forward and in the gradients (the ragged-K
    kernel is the token form's dB and the token kernel the ragged-K form's dA and dB)."""
    g = torch.Generator(device=DEV).manual_seed(9)
    T, K, N = 960, 128, 192
    offs_list = [300, 120, 700, 650, 900]
    spans = [(0, 300), (300, 300), (300, 700), (700, 700), (700, 900)]
    offs = torch.tensor(offs_list, device=DEV, dtype=torch.int32)
    a0, b0, grad = rand(T, K, g=g), rand(len(spans), K, N, g=g), rand(T, N, g=g)
    a, b = a0.clone().requires_grad_(), b0.clone().requires_grad_()
    warpgemm.grouped_mm(a, b, offs).backward(grad)
    da = torch.zeros(T, K, device=DEV, dtype=torch.float64)
    for i, (s, e) in enumerate(spans):
        da[s:e] = grad[s:e].double() @ b0[i].double().t()
    db = torch.stack([a0[s:e].double().t() @ grad[s:e].double() for s, e in spans])
    assert rel_error(a.grad, da) < 1e-2 and rel_error(b.grad, db) < 1e-2
    # The 2-D x 2-D form: x (K, T) and y (T, N), out (G, K, N).
    x0, y0, gout = a0.t().contiguous(), grad, rand(len(spans), K, N, g=g)
    x, y = x0.clone().requires_grad_(), y0.clone().requires_grad_()
    out = warpgemm.grouped_mm(x, y, offs)
    want = torch.stack([x0[:, s:e].double() @ y0[s:e].double() for s, e in spans])
    assert rel_error(out, want) < 1e-2 and torch.equal(out[1], torch.zeros_like(out[1]))
    out.backward(gout)
    dx = torch.zeros(K, T, device=DEV, dtype=torch.float64)
    dy = torch.zeros(T, N, device=DEV, dtype=torch.float64)
    for i, (s, e) in enumerate(spans):
        dx[:, s:e] = gout[i].double() @ y0[s:e].double().t()
        dy[s:e] = x0[:, s:e].double().t() @ gout[i].double()
    assert rel_error(x.grad, dx) < 1e-2 and rel_error(y.grad, dy) < 1e-2


def test_compiled_forward_and_backward_match_eager():
    """torch.compile (inductor, fullgraph) over the token form and its backward (the ragged-K form for dB): the
    same kernels, so the same bits as eager."""
    g = torch.Generator(device=DEV).manual_seed(10)
    sizes = [300, 0, 129, 57]
    T, K, N = sum(sizes) + 9, 256, 384
    a0, b0, grad = rand(T, K, g=g), rand(len(sizes), K, N, g=g), rand(T, N, g=g)
    offs = offsets(sizes)

    def step(fn):
        a, b = a0.clone().requires_grad_(), b0.clone().requires_grad_()
        y = fn(a, b, offs)
        y.backward(grad)
        return y.detach(), a.grad, b.grad

    eager = step(warpgemm.grouped_mm)
    compiled = step(torch.compile(warpgemm.grouped_mm, fullgraph=True))
    end = sum(sizes)
    assert torch.equal(eager[0][:end], compiled[0][:end])
    assert torch.equal(eager[1], compiled[1]) and torch.equal(eager[2], compiled[2])


def test_group_gemm_mixed_shapes_and_views():
    g = torch.Generator(device=DEV).manual_seed(9)
    shapes = [(1, 1, 1), (129, 300, 77), (0, 64, 64), (512, 1024, 256), (33, 0, 16), (1000, 65, 4097)]
    la = [rand(m, k, g=g) for m, k, n in shapes]
    lb = [rand(k, n, g=g) for m, k, n in shapes]
    lb[1] = rand(77, 300, g=g).t()
    la[3] = rand(1024, 512, g=g).t()
    outs = warpgemm.group_gemm(la, lb)
    for i, (a, b, c) in enumerate(zip(la, lb, outs)):
        want = a.float() @ b.float()
        assert c.shape == want.shape
        if want.numel():
            err = ((c.float() - want).norm() / want.norm().clamp_min(1e-30)).item()
            assert err < 1e-2, (i, err)


# ---- the 2-D x 2-D form (groups along K, the MoE weight gradient) on the Hopper kernel ----------------------
# Group bounds at every offset within a K step, groups shorter than a step, empty groups, NaN in a neighbouring
# group, every operand layout, fp32 outputs, each config it can run, bad offsets inside a guarded output,
# CUDA-graph replay with new offsets, determinism, many groups.

def ragged_reference(a, b, offs_list):
    """fp32 per group over the kernel's bounds: each end raised to the one before it (0 for the first), clamped
    to [0, T]; a group starts where the one before it ends."""
    T = a.shape[1]
    out = torch.zeros(len(offs_list), a.shape[0], b.shape[1], device=DEV)
    start = 0
    for i, o in enumerate(offs_list):
        end = min(max(o, start), T)
        if end > start:
            out[i] = a[:, start:end].float() @ b[start:end].float()
        start = end
    return out


def check_ragged(a, b, offs, out_dtype=None, config=None, tol=1e-2):
    G = offs.shape[0]
    out = torch.full((G, a.shape[0], b.shape[1]), float("nan"), device=DEV, dtype=out_dtype or a.dtype)
    warpgemm.grouped_mm(a, b, offs, out=out, config=config)
    want = ragged_reference(a, b, offs.tolist())
    assert not out.isnan().any(), "an output element was not written"
    for i in range(G):
        if want[i].abs().max() == 0:
            assert torch.equal(out[i].float(), want[i]), f"empty group {i} is not zeros"
        else:
            err = rel_error(out[i], want[i])
            assert err < tol, (i, err)
    return out


@pytest.mark.parametrize("lead", [0, 1, 7, 8, 63, 64, 65, 127])
def test_ragged_k_group_bounds_at_every_offset_in_a_step(lead):
    """Groups of 1-200 tokens starting at every residue of the 64-deep K step, an empty group, tokens past the
    last group."""
    g = torch.Generator(device=DEV).manual_seed(lead)
    sizes = [lead, 1, 63, 0, 64, 65, 200, 3, 129]
    T = sum(sizes) + 11
    x, dy = rand(T, 192, g=g), rand(T, 320, g=g)
    check_ragged(x.t(), dy, offsets(sizes))


def test_ragged_k_nan_in_neighbouring_groups_does_not_leak():
    """A partial K step reads the box past its group's end as zeros in both operands: a NaN or inf in the next
    group's (or the trailing) tokens must not reach this group's sum."""
    g = torch.Generator(device=DEV).manual_seed(1)
    sizes = [70, 5, 130, 33]
    T = sum(sizes) + 20
    x, dy = rand(T, 256, g=g), rand(T, 256, g=g)
    x[70:75] = float("nan")  # group 1
    dy[75 + 130:75 + 130 + 33] = float("inf")  # group 3
    x[sum(sizes):] = float("nan")  # past the last group
    dy[sum(sizes):] = float("inf")
    out = warpgemm.grouped_mm(x.t(), dy, offsets(sizes))
    want = ragged_reference(x.t(), dy, offsets(sizes).tolist())
    for i in (0, 2):
        assert rel_error(out[i], want[i]) < 1e-2, i
    assert out[1].isnan().all() and not out[3].isfinite().all()


@pytest.mark.parametrize("a_layout", ["x_t", "row_major", "strided"])
@pytest.mark.parametrize("b_layout", ["row_major", "col_major", "sliced"])
def test_ragged_k_operand_layouts(a_layout, b_layout):
    """a as x.t() is read in place; a row-major (T contiguous), b column-major or with an odd pitch are copied
    token-outer first. N = 77 (a 154-byte row) stages the output."""
    g = torch.Generator(device=DEV).manual_seed(2)
    sizes = [100, 0, 257, 31]
    T, M, N = sum(sizes) + 3, 129, 77
    a = {"x_t": lambda: rand(T, M, g=g).t(), "row_major": lambda: rand(M, T, g=g),
         "strided": lambda: rand(T, M + 5, g=g)[:, 2:2 + M].t()}[a_layout]()
    b = {"row_major": lambda: rand(T, N, g=g), "col_major": lambda: rand(N, T, g=g).t(),
         "sliced": lambda: rand(T, N + 3, g=g)[:, :N]}[b_layout]()
    check_ragged(a, b, offsets(sizes))


@pytest.mark.parametrize("shape", [(1, 1), (1, 300), (300, 1), (64, 8), (4096, 14336 // 8)])
def test_ragged_k_thin_outputs(shape):
    M, N = shape
    g = torch.Generator(device=DEV).manual_seed(3)
    sizes = [5, 90, 0, 1]
    T = sum(sizes)
    check_ragged(rand(T, M, g=g).t(), rand(T, N, g=g), offsets(sizes))


@pytest.mark.parametrize("dtype,out_dtype", [(BF, torch.float32), (torch.float16, torch.float16),
                                             (torch.float16, torch.float32)])
def test_ragged_k_dtypes(dtype, out_dtype):
    g = torch.Generator(device=DEV).manual_seed(4)
    sizes = [300, 17, 0, 512]
    T = sum(sizes)
    check_ragged(rand(T, 256, g=g, dtype=dtype).t(), rand(T, 384, g=g, dtype=dtype), offsets(sizes),
                 out_dtype=out_dtype)


def test_ragged_k_launch_runs_the_store_hinted_binary():
    """The JIT path compiles the ragged-K variant under the PTX pass (kernels/hopper/ptx_hints.py): the binary it
    launches carries evict-first TMA stores, and a dense GEMM's does not (a dense GEMM of few rows hints its weight
    loads instead: gemm.weight_evict_first)."""
    from warpgemm.ops import grouped_ragged_k
    from warpgemm.ops.gemm_impl import _PLANS

    g = torch.Generator(device=DEV).manual_seed(9)
    sizes = [40, 0, 90]
    x, dy = rand(sum(sizes), 256, g=g), rand(sum(sizes), 512, g=g)
    out = check_ragged(x.t(), dy, offsets(sizes))
    ptx = grouped_ragged_k.plan_ragged(x, dy, out, None).launch.kernel.compiled.asm["ptx"]
    assert ".bulk_group.L2::cache_hint" in ptx and "L2::evict_first" in ptx
    a, w = rand(300, 256, g=g), rand(512, 256, g=g)
    warpgemm.matmul(a, w.T)
    dense = [p.launch.kernel.compiled for p in _PLANS.values()
             if getattr(p, "config", None) is not None and getattr(p.launch, "kernel", None) is not None
             and p.launch.kernel.compiled is not None]
    assert dense, "no compiled dense plan to check"
    assert all(".bulk_group.L2::cache_hint" not in k.asm["ptx"] for k in dense)
    # 128 rows against the weight: its loads are hinted, the activations' and the stores are not.
    ref = a[:128].float() @ w.float().T
    y = warpgemm.matmul(a[:128], w.T)
    assert ((y.float() - ref).norm() / ref.norm()).item() < 1e-2
    few = [p.launch.kernel for p in _PLANS.values() if getattr(p, "config", None) is not None
           and getattr(p.launch, "kernel", None) is not None and p.launch.kernel.constexprs.get("WEIGHT_HINT")]
    assert few, "no weight-hinted plan for 128 rows"
    ptx = few[0].compiled.asm["ptx"]
    assert "complete_tx::bytes.L2::cache_hint" in ptx and ".bulk_group.L2::cache_hint" not in ptx
    assert "complete_tx::bytes [" in ptx  # the activations' loads stay plain


RAGGED_CONFIGS = [c for c in SHIPPED_CONFIGS if forced_config_problem(c) is None]


@pytest.mark.parametrize("cfg", RAGGED_CONFIGS, ids=lambda c: c.name)
def test_ragged_k_each_config_it_can_run(cfg):
    g = torch.Generator(device=DEV).manual_seed(5)
    sizes = [130, 0, 1, 700, 64]
    T = sum(sizes) + 9
    for out_dtype in (BF, torch.float32):
        if check_config(cfg, BF, out_dtype) is None:
            check_ragged(rand(T, 200, g=g).t(), rand(T, 300, g=g), offsets(sizes), out_dtype=out_dtype, config=cfg)


def test_ragged_k_forced_configs_it_cannot_run_are_refused():
    x, dy = torch.randn(100, 64, device=DEV, dtype=BF), torch.randn(100, 64, device=DEV, dtype=BF)
    offs = offsets([50, 50])
    for cfg in SHIPPED_CONFIGS:
        if forced_config_problem(cfg) is not None:
            # grouped_mm's own refusals of two-part widths, cluster pairs and split-K tiles (every form) come first.
            with pytest.raises(ValueError, match="2-D x 2-D form|in powers of two|cluster_m must be 1|stored whole|"
                                                 "split_k must be 1"):
                warpgemm.grouped_mm(x.t(), dy, offs, config=cfg)


@pytest.mark.parametrize("lead,spike", [(0, False), (64, False), (300, False), (300, True), (4087, True),
                                        (4100, False)],
                         ids=["one-chunk", "two-chunks", "five-chunks", "five-chunks-spike", "4096-groups-spike",
                              "host-raised"])
def test_ragged_k_bad_offsets_stay_inside_the_output(lead, spike):
    """Decreasing, negative and past-T offsets: each group sums its sanitized range (or nothing), and nothing is
    written outside the output (guard rows around it stay NaN). lead: sorted groups before them, so the kernel
    raises the ends over one, two or five chunks of 64 or all 64 of them (4096 groups: ragged_k.RaggedKScheduler),
    and past RAGGED_OFFS_GROUPS_MAX groups the host does (torch.cummax). spike: the fourth end is 140, above the
    next few chunks' ends, so only the running maximum over chunk maxima (not the chunk before alone) starts
    those groups right."""
    g = torch.Generator(device=DEV).manual_seed(6)
    T, M, N = 300, 128, 256
    x, dy = rand(T, M, g=g), rand(T, N, g=g)
    lead_ends = [140 if spike and i == 3 else i * 150 // lead for i in range(lead)]
    offs_list = lead_ends + [100, 50, -20, 250, 1000, 120, 299, 300, 2 ** 31 - 1]
    offs = torch.tensor(offs_list, device=DEV, dtype=torch.int32)
    G = len(offs_list)
    guarded = torch.full((G + 2, M, N), float("nan"), device=DEV, dtype=BF)
    warpgemm.grouped_mm(x.t(), dy, offs, out=guarded[1:-1])
    assert guarded[0].isnan().all() and guarded[-1].isnan().all()
    want = ragged_reference(x.t(), dy, offs_list)
    for i in range(G):
        if want[i].abs().max() == 0:
            assert torch.equal(guarded[1 + i].float(), want[i]), i
        else:
            assert rel_error(guarded[1 + i], want[i]) < 1e-2, i


def test_ragged_k_graph_replay_with_new_offsets_and_determinism():
    g = torch.Generator(device=DEV).manual_seed(7)
    T, M, N = 2048, 512, 768
    x, dy = rand(T, M, g=g), rand(T, N, g=g)
    offs = offsets([512] * 4)
    warpgemm.grouped_mm(x.t(), dy, offs)  # compile outside the capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = warpgemm.grouped_mm(x.t(), dy, offs)
    for sizes in ([512] * 4, [2000, 0, 40, 8], [0, 0, 0, 2048], [1, 1, 1, 1]):
        offs.copy_(offsets(sizes))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        want = ragged_reference(x.t(), dy, offs.tolist())
        for i in range(4):
            if want[i].abs().max() == 0:
                assert torch.equal(out[i].float(), want[i]), (sizes, i)
            else:
                assert rel_error(out[i], want[i]) < 1e-2, (sizes, i)
        eager = warpgemm.grouped_mm(x.t(), dy, offs)
        assert torch.equal(eager, out), sizes  # the same bits, every time


def test_ragged_k_many_groups():
    g = torch.Generator(device=DEV).manual_seed(8)
    G = 1100
    sizes = [(i * 37) % 23 for i in range(G)]
    T = sum(sizes)
    check_ragged(rand(T, 64, g=g).t(), rand(T, 64, g=g), offsets(sizes))


def test_ragged_k_no_tokens():
    x, dy = torch.empty(0, 64, device=DEV, dtype=BF), torch.empty(0, 32, device=DEV, dtype=BF)
    out = warpgemm.grouped_mm(x.t(), dy, torch.zeros(3, device=DEV, dtype=torch.int32))
    assert out.shape == (3, 64, 32) and torch.equal(out, torch.zeros_like(out))
