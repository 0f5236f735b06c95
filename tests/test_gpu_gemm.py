"""GPU suite for the Hopper GEMM (skipped without an sm_90 GPU).

Outputs are NaN-filled before every call, inputs are fresh random data, and the error against a float32
reference must stay within about twice torch's own error on the same inputs.
"""
import pytest
import torch

import warpgemm
from warpgemm.heuristics import SHIPPED_CONFIGS
from warpgemm.testing import (LAYOUTS, assert_ok, check_matmul, matmul_reference, matrix_cases, rand, rel_error,
                              strided_operand, tolerance)

pytestmark = pytest.mark.gpu
BF, FP = torch.bfloat16, torch.float16
DEV = "cuda"




ALL_CASES = matrix_cases()
CHUNKS = [ALL_CASES[i::16] for i in range(16)]


@pytest.mark.parametrize("dtype", [BF, FP], ids=["bf16", "fp16"])
@pytest.mark.parametrize("chunk", range(16))
def test_shape_and_layout_matrix(dtype, chunk):
    """M, N, K in {1, 7, 64, 65, 127, 128, 1000, 4097} (B = W.T) and all four layouts on a smaller grid."""
    g = torch.Generator(device=DEV).manual_seed(chunk)
    for m, n, k, a_col, b_col in CHUNKS[chunk]:
        a = strided_operand(m, k, col_major=a_col, dtype=dtype, device=DEV, generator=g)
        b = strided_operand(k, n, col_major=b_col, dtype=dtype, device=DEV, generator=g)
        assert_ok(check_matmul(a, b), f"M={m} N={n} K={k} a_col={a_col} b_col={b_col}")


@pytest.mark.parametrize("cfg", SHIPPED_CONFIGS, ids=lambda c: c.name)
@pytest.mark.parametrize("a_col, b_col", LAYOUTS)
def test_every_shipped_config(cfg, a_col, b_col):
    """Each config the heuristics can pick, forced, on ragged shapes that wrap the ring and the tile grid."""
    g = torch.Generator(device=DEV).manual_seed(7)
    for m, n, k in [(1, 1, 1), (7, 65, 127), (129, 257, 1000), (1000, 1000, 4097), (4097, 300, 200)]:
        a = strided_operand(m, k, col_major=a_col, dtype=BF, device=DEV, generator=g)
        b = strided_operand(k, n, col_major=b_col, dtype=BF, device=DEV, generator=g)
        assert_ok(check_matmul(a, b, config=cfg), f"{cfg.name} M={m} N={n} K={k}")


@pytest.mark.parametrize("cfg", [None] + list(SHIPPED_CONFIGS), ids=lambda c: c.name if c else "heuristic")
def test_column_major_a_read_in_place_with_k_below_one_step(cfg):
    """Column-major A whose columns are 16-byte multiples is read in place (the grouped kernel faulted on column-major
    tokens whose groups started off 16 bytes: test_gpu_grouped; matmul's tile coordinates are block multiples), with
    K below one K step, on every shipped config, batched too."""
    g = torch.Generator(device=DEV).manual_seed(8)
    for k in (1, 16, 40):
        for batch in ((), (3, )):
            a = torch.randn(*batch, k, 1024, device=DEV, generator=g).to(BF).transpose(-1, -2)
            b = rand(k, 200, g=g)
            assert_ok(check_matmul(a, b, config=cfg), f"K={k} batch={batch}")


def test_many_tiles_per_program():
    """More tiles than SMs: every persistent program walks several tiles through one continuous ring, the odd ones
    with their K steps last to first (gemm.k_serpentine), a ragged last K step included, on either B layout."""
    g = torch.Generator(device=DEV).manual_seed(3)
    for cfg in SHIPPED_CONFIGS:
        for k in (1024, 1000):
            a, w = rand(3000, k, g=g), rand(2500, k, g=g)
            assert_ok(check_matmul(a, w.T, config=cfg), f"{cfg.name} K={k}")
        b = rand(1000, 2500, g=g)
        assert_ok(check_matmul(a, b, config=cfg), f"{cfg.name} N-major B")


def test_8192_cube():
    g = torch.Generator(device=DEV).manual_seed(4)
    a, w = rand(8192, 8192, g=g), rand(8192, 8192, g=g)
    assert_ok(check_matmul(a, w.T), "8192^3")


def test_batched_broadcast_bias_and_fp32_out():
    g = torch.Generator(device=DEV).manual_seed(5)
    a, b = rand(4, 300, 200, g=g), rand(4, 200, 129, g=g)
    assert_ok(check_matmul(a, b), "batched")
    assert_ok(check_matmul(a, b[0]), "3-D @ 2-D (folded)")
    assert_ok(check_matmul(a[0], b), "2-D @ 3-D (A shared)")
    assert_ok(check_matmul(a.transpose(1, 2).contiguous().transpose(1, 2), b), "batched column-major A")
    for bias_dtype in (BF, torch.float32):
        bias = rand(129, dtype=bias_dtype, g=g)
        assert_ok(check_matmul(a, b, bias=bias), f"bias {bias_dtype}")
        assert_ok(check_matmul(a, b, bias=bias, out_dtype=torch.float32), f"bias {bias_dtype}, fp32 out")
    assert_ok(check_matmul(a.half(), b.half(), out_dtype=torch.float32), "fp16 -> fp32")


def test_sliced_misaligned_and_gapped_views():
    g = torch.Generator(device=DEV).manual_seed(6)
    big = rand(2100, 1100, g=g)
    views = {
        "misaligned base": (big[:1000, 1:1001], big[100:1100, 3:603]),
        "gapped rows": (big[::2, :1000], big[:1000, :600]),
        "odd pitch (K=7)": (big[:500, :7].contiguous(), big[:7, :300].contiguous()),
        "transposed slices": (big[:800, :1000].T, big[:800, 5:605]),
        "odd N output": (big[:300, :256], big[:256, :77]),
    }
    for name, (a, b) in views.items():
        assert_ok(check_matmul(a, b), name)
    # out= as a strided view: nothing outside it may be written.
    out_big = torch.full((700, 900), float("nan"), device=DEV, dtype=BF)
    out = out_big[10:510, 3:603]
    a, b = big[:500, :1000], big[:1000, :600]
    warpgemm.matmul(a, b, out=out)
    assert rel_error(out, matmul_reference(a, b)) < 1e-2
    assert torch.isnan(out_big[:10]).all() and torch.isnan(out_big[:, :3]).all()


def test_repeated_calls_on_fresh_tensors():
    """Repeats take the cached recipe and raw launch; tensor maps are cached per address: fresh data each time."""
    g = torch.Generator(device=DEV).manual_seed(12)
    w, bias = rand(768, 512, g=g), rand(768, g=g)
    for i in range(6):
        x = rand(300 + (i % 2), 512, g=g)  # alternate two shapes so the recipe cache switches
        ref = matmul_reference(x, w.T, bias)
        got = warpgemm.linear(x, w, bias)
        assert rel_error(got, ref) <= tolerance(rel_error(torch.nn.functional.linear(x, w, bias), ref), BF)
        a, b = rand(257, 129, g=g), rand(129, 65, g=g)
        assert rel_error(warpgemm.matmul(a, b), matmul_reference(a, b)) < 1e-2


def test_repeated_out_calls_write_each_calls_own_out():
    """matmul(..., out=o) repeats launch through the recorded recipe (no validation, no planning): each call must
    write its own out with its own operands' product (fresh NaN-filled outs, at two offsets in a larger buffer,
    bf16 and fp32), touch nothing around it, and still refuse an out that overlaps an operand."""
    from warpgemm.ops import api

    g = torch.Generator(device=DEV).manual_seed(14)
    w, bias = rand(768, 512, g=g), rand(768, g=g)
    n_out = 300 * 768
    recipes_before = len(api._RECIPES)
    for i in range(6):
        x = rand(300, 512, g=g)
        ref = matmul_reference(x, w.T, bias)
        buf = torch.full((n_out + 64,), float("nan"), device=DEV, dtype=BF)
        off = 8 * (i % 2)  # 16-byte aligned either way: the same recipe
        out = buf[off:off + n_out].view(300, 768)
        assert warpgemm.matmul(x, w.T, bias=bias, out=out) is out
        assert rel_error(out, ref) <= tolerance(rel_error(torch.nn.functional.linear(x, w, bias), ref), BF)
        assert torch.isnan(buf[:off]).all() and torch.isnan(buf[off + n_out:]).all()
        out32 = torch.full((300, 768), float("nan"), device=DEV, dtype=torch.float32)
        assert warpgemm.matmul(x, w.T, out=out32) is out32
        assert rel_error(out32, matmul_reference(x, w.T)) < 1e-2
    assert len(api._RECIPES) >= recipes_before + 2, "the out= calls recorded no recipe"
    big = rand(512 * 768 + 100 * 768, g=g)
    # o2 covers b2's last 200 rows: an overlap.
    b2, o2 = big[:512 * 768].view(512, 768), big[312 * 768:612 * 768].view(300, 768)
    with pytest.raises(ValueError, match="out must not share memory with b"):
        warpgemm.matmul(x, b2, out=o2)  # refused on the checked path (no recipe has this key yet)
    b3 = rand(512, 768, g=g)  # b2's layout and alignment, an out like o2's: record the recipe o2's call will hit
    warpgemm.matmul(x, b3, out=rand(300, 768, g=g))
    warpgemm.matmul(x, b3, out=rand(300, 768, g=g))
    with pytest.raises(ValueError, match="out must not share memory with b"):
        warpgemm.matmul(x, b2, out=o2)
    # A disjoint slice of the same storage is no overlap: written, as torch.matmul writes it, and b4 stays intact.
    whole = rand(512 * 768 + n_out, g=g)
    b4, o4 = whole[:512 * 768].view(512, 768), whole[512 * 768:].view(300, 768)
    b4_before = b4.clone()
    assert warpgemm.matmul(x, b4, out=o4) is o4
    assert torch.equal(b4, b4_before)
    assert rel_error(o4, matmul_reference(x, b4)) <= tolerance(rel_error(torch.matmul(x, b4), matmul_reference(x, b4)),
                                                               BF)


def test_repeated_calls_keep_the_output_dtype():
    """The eager fast path allocates the output itself (like the input when the dtypes agree): an fp32 output of
    bf16 inputs and an fp16 linear must come back with their own dtype, contiguous, on the inputs' device."""
    g = torch.Generator(device=DEV).manual_seed(13)
    a, b = rand(129, 200, g=g), rand(200, 72, g=g)
    x, w = rand(5, 256, g=g).half(), rand(96, 256, g=g).half()
    for _ in range(3):  # the second call onwards goes through the recorded eager recipe
        c = warpgemm.matmul(a, b, out_dtype=torch.float32)
        assert c.dtype == torch.float32 and c.is_contiguous() and c.device == a.device
        assert rel_error(c, matmul_reference(a, b)) < 1e-2
        y = warpgemm.linear(x, w)
        assert y.dtype == torch.float16 and y.shape == (5, 96) and y.is_contiguous()
        assert rel_error(y, matmul_reference(x, w.T)) < 1e-2
        y1 = warpgemm.linear(x[:1], w)  # one row: the GEMV
        assert y1.dtype == torch.float16 and y1.shape == (1, 96)
        assert rel_error(y1, matmul_reference(x[:1], w.T)) < 1e-2


def test_column_split_of_the_last_wave():
    """Shapes whose last wave of 128x256 tiles is recut into a second launch of 128x128 tiles (heuristics.
    tail_split_columns): every layout, a ragged N (the tail launch's last tile is partial), bias, batches, and the
    eager fast path, whose launch gets the caller's untransposed weight."""
    from warpgemm.kernels.hopper.gemm import ColumnSplitLaunch
    from warpgemm.ops import gemm_impl

    if torch.cuda.get_device_properties(0).multi_processor_count != 132:
        pytest.skip("the split shapes below are chosen for 132 SMs")
    g = torch.Generator(device=DEV).manual_seed(41)
    # K >= 4096: at shorter K the second launch costs more than it saves (heuristics.TAIL_COST_K) and no split is made.
    gemm_impl._PLANS.clear()
    for i, (m, n, k) in enumerate(((1024, 14336, 4096), (1024, 14336 - 40, 4104), (1000, 14300, 4136))):
        a = strided_operand(m, k, col_major=i == 2, dtype=BF, device=DEV, generator=g)
        for b_col in (True, False):
            b = strided_operand(k, n, col_major=b_col, dtype=BF, device=DEV, generator=g)
            assert_ok(check_matmul(a, b), f"{m}x{n}x{k} B col-major={b_col}")
    plans = [p for p in gemm_impl._PLANS.values() if isinstance(p.launch, ColumnSplitLaunch)]
    assert len(plans) >= 3, "the shapes above did not all take the column split"
    gemm_impl._PLANS.clear()
    x, w, bias = rand(1024, 4096, g=g), rand(14336, 4096, g=g), rand(14336, g=g)
    assert_ok(check_matmul(x, w.T, bias=bias), "bias")
    want = x.float() @ w.float().T + bias.float()
    for _ in range(3):  # the second call onwards goes through the recorded eager recipe
        y = warpgemm.linear(x, w, bias)
        assert rel_error(y, want) < 1e-2
    a3, b3 = rand(2, 512, 4096, g=g), rand(2, 4096, 14336, g=g)
    assert_ok(check_matmul(a3, b3), "batched")
    assert sum(isinstance(p.launch, ColumnSplitLaunch) for p in gemm_impl._PLANS.values()) >= 2, \
        "the bias, eager and batched cases did not take the column split"


def test_empty_and_k0():
    assert warpgemm.matmul(rand(0, 64), rand(64, 32)).shape == (0, 32)
    out = torch.empty(0, 4, 32, device=DEV, dtype=BF)
    assert warpgemm.matmul(rand(0, 4, 64), rand(64, 32), out=out) is out
    assert warpgemm.matmul(rand(3, 0, 64), rand(64, 32)).shape == (3, 0, 32)
    z = warpgemm.matmul(rand(16, 0), rand(0, 32))
    assert torch.equal(z, torch.zeros(16, 32, device=DEV, dtype=BF))


# The second shape takes split-K (few_tiles_split): its parts are summed in part order, so it repeats bitwise too.
@pytest.mark.parametrize("m, n, k", [(2048, 4096, 4096), (104, 2832, 7816)])
def test_deterministic(m, n, k):
    g = torch.Generator(device=DEV).manual_seed(8)
    a, w = rand(m, k, g=g), rand(n, k, g=g)
    first = warpgemm.matmul(a, w.T)
    for _ in range(3):
        assert torch.equal(warpgemm.matmul(a, w.T), first)
    assert torch.equal(warpgemm.linear(a, w), first)  # F.linear's form: the same plan


def _grads(fn, xs, grad_out):
    xs = [x.detach().clone().requires_grad_() for x in xs]
    fn(*xs).backward(grad_out)
    return [x.grad for x in xs]


@pytest.mark.parametrize("case", ["matmul", "batched_broadcast", "linear_bias"])
def test_backward(case):
    g = torch.Generator(device=DEV).manual_seed(9)
    if case == "matmul":
        xs, ours, ref = [rand(300, 520, g=g), rand(520, 130, g=g)], warpgemm.matmul, torch.matmul
    elif case == "batched_broadcast":
        xs, ours, ref = [rand(3, 300, 520, g=g), rand(520, 130, g=g)], warpgemm.matmul, torch.matmul
    else:
        xs = [rand(2, 150, 520, g=g), rand(130, 520, g=g), rand(130, g=g)]
        ours, ref = warpgemm.linear, torch.nn.functional.linear
    grad_out = rand(*ref(*xs).shape, g=g)
    got = _grads(ours, xs, grad_out)
    want = _grads(ref, [x.float() for x in xs], grad_out.float())
    torch_bf16 = _grads(ref, xs, grad_out)
    for a, w, t in zip(got, want, torch_bf16):
        assert a.dtype == BF and a.shape == w.shape
        assert rel_error(a, w) <= tolerance(rel_error(t, w), BF), (rel_error(a, w), rel_error(t, w))


def test_torch_compile_fullgraph():
    g = torch.Generator(device=DEV).manual_seed(10)
    w = rand(256, 512, g=g).requires_grad_()
    x = rand(4, 64, 512, g=g).requires_grad_()

    @torch.compile(fullgraph=True)
    def f(x, w):
        return torch.nn.functional.gelu(warpgemm.linear(x, w)).float().sum()

    f(x, w).backward()
    xr, wr = x.detach().float().requires_grad_(), w.detach().float().requires_grad_()
    torch.nn.functional.gelu(torch.nn.functional.linear(xr, wr)).sum().backward()
    assert rel_error(x.grad, xr.grad) < 2e-2 and rel_error(w.grad, wr.grad) < 2e-2


def test_portable_kernel_on_gpu():
    from warpgemm.kernels.portable.gemm import portable_gemm

    g = torch.Generator(device=DEV).manual_seed(11)
    a, b = rand(2, 129, 70, g=g), rand(2, 70, 65, g=g)
    c = torch.full((2, 129, 65), float("nan"), device=DEV, dtype=BF)
    portable_gemm(a, b, c, None)
    ref = matmul_reference(a, b)
    assert rel_error(c, ref) <= tolerance(rel_error(torch.matmul(a, b), ref), BF)


def test_explain_and_log(capfd):
    a, w = rand(4096, 4096), rand(4096, 4096)
    text = warpgemm.explain(a, w.T)
    assert "path=hopper" in text and "B K-major, read in place" in text
    warpgemm.set_logging(True)
    try:
        warpgemm.matmul(a[:, 1:], w.T[1:])
    finally:
        warpgemm.set_logging(False)
    assert "copied into a padded buffer" in capfd.readouterr().err


def test_autocast_region_casts_operands_like_torch():
    """Inside torch.autocast("cuda") fp32 activations, weights and bias run in the region's dtype, as F.linear's
    do, with fp32 gradients for the fp32 parameters; grouped_mm too (ops/autocast.py)."""
    g = torch.Generator(device=DEV).manual_seed(31)
    x = torch.randn(3, 257, 1024, device=DEV, generator=g, requires_grad=True)
    w = torch.randn(768, 1024, device=DEV, generator=g, requires_grad=True)
    bias = torch.randn(768, device=DEV, generator=g, requires_grad=True)
    for dtype in (BF, FP):
        with torch.autocast("cuda", dtype=dtype):
            y, y_torch = warpgemm.linear(x, w, bias), torch.nn.functional.linear(x, w, bias)
            m = warpgemm.matmul(x, w.t())
        assert y.dtype == y_torch.dtype == m.dtype == dtype
        assert rel_error(y, y_torch) < 1e-2 and rel_error(m, x.double() @ w.double().t()) < 1e-2
    grad = torch.randn(3, 257, 768, device=DEV, generator=g)
    y.float().backward(grad)
    assert w.grad.dtype == x.grad.dtype == bias.grad.dtype == torch.float32
    assert rel_error(w.grad, torch.einsum("bmn,bmk->nk", grad.double(), x.detach().double())) < 1e-2
    assert rel_error(x.grad, grad.double() @ w.detach().double()) < 1e-2
    a, b = torch.randn(300, 256, device=DEV, generator=g), torch.randn(4, 256, 128, device=DEV, generator=g)
    offs = torch.tensor([50, 120, 120, 300], device=DEV, dtype=torch.int32)
    with torch.autocast("cuda", dtype=BF):
        out = warpgemm.grouped_mm(a, b, offs)
    want = torch.cat([a[s:e].double() @ b[i].double() for i, (s, e) in enumerate([(0, 50), (50, 120), (120, 120),
                                                                                   (120, 300)])])
    assert out.dtype == BF and rel_error(out, want) < 1e-2


def test_training_gradients_follow_torch_layouts_and_flop_counts():
    """On the kernels' own path (eager recipes included): linear's gradients have F.linear's strides (W's is
    contiguous, also summed over batches that cannot fold), values against float64; a frozen weight's layer saves
    no activation; FlopCounterMode counts what it counts for F.linear (ops/library.py, ops/flops.py)."""
    from torch.utils.flop_counter import FlopCounterMode

    g = torch.Generator(device=DEV).manual_seed(41)
    x = torch.randn(2, 300, 1024, device=DEV, generator=g).to(BF).requires_grad_()
    w = (torch.randn(768, 1024, device=DEV, generator=g) / 32).to(BF).requires_grad_()
    dy = torch.randn(2, 300, 768, device=DEV, generator=g).to(BF)
    for inp in (x, x[:, :257]):  # a slice's batches cannot fold into one tall matrix
        gy = dy[:, :inp.shape[1]]
        gx, gw = torch.autograd.grad(warpgemm.linear(inp, w), (x, w), gy)
        tx, tw = torch.autograd.grad(torch.nn.functional.linear(inp, w), (x, w), gy)
        assert gw.stride() == tw.stride() == (1024, 1) and gx.stride() == tx.stride()
        assert rel_error(gw, torch.einsum("bmn,bmk->nk", gy.double(), inp.detach().double())) < 1e-2
        assert rel_error(gx, tx) < 1e-2
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(tuple(t.shape)) or t, lambda t: t):
        warpgemm.linear(x, w.detach())
    assert all(s[-2:] != (300, 1024) and s[-2:] != (600, 1024) for s in saved), saved
    for _ in range(3):  # the later calls take the eager recipe without a mode
        with FlopCounterMode(display=False) as ours:
            warpgemm.linear(x.detach(), w.detach())
    with FlopCounterMode(display=False) as theirs:
        torch.nn.functional.linear(x.detach(), w.detach())
    assert ours.get_total_flops() == theirs.get_total_flops() == 2 * 600 * 1024 * 768


def test_repeated_training_calls_take_in_place_changes_and_batched_gradients():
    """linear's eager training node (ops/linear_autograd.py) on the kernels: repeated calls (the forward takes the
    recorded recipe from the second on) return outputs an in-place shift and ReLU may change, gradients against
    float64 each time; a Jacobian with vectorize=True (legacy vmap in the backward) runs through the registered ops;
    a checkpoint whose forward alone runs under FlopCounterMode recomputes the same saved tensors."""
    from torch.utils.checkpoint import checkpoint
    from torch.utils.flop_counter import FlopCounterMode

    g = torch.Generator(device=DEV).manual_seed(42)
    w = (torch.randn(512, 1024, device=DEV, generator=g) / 32).to(BF).requires_grad_()
    for step in range(3):
        x = torch.randn(4, 96, 1024, device=DEV, generator=g).to(BF).requires_grad_()
        y = warpgemm.linear(x, w)
        y.add_(1).relu_()
        gx, gw = torch.autograd.grad(y.float().sum(), (x, w))
        # The reference takes our ReLU mask (bf16 rounding may flip entries next to zero against float64).
        mask = (y > 0).double()
        xr, wr = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
        tx, tw = torch.autograd.grad((torch.nn.functional.linear(xr, wr) * mask).sum(), (xr, wr))
        assert rel_error(gx, tx) < 1e-2 and rel_error(gw, tw) < 1e-2, step
    xs, ws = x[0, :8, :16].detach(), w[:4, :16].detach()
    jac = torch.autograd.functional.jacobian(lambda w: warpgemm.linear(xs, w), ws, vectorize=True)
    want = torch.autograd.functional.jacobian(lambda w: torch.nn.functional.linear(xs.double(), w), ws.double())
    assert rel_error(jac, want) < 1e-2
    with FlopCounterMode(display=False):
        y = checkpoint(warpgemm.linear, x, w, use_reentrant=False)
    gx2, gw2 = torch.autograd.grad(y.float().sum(), (x, w))
    xr, wr = x.detach().double().requires_grad_(), w.detach().double().requires_grad_()
    tx, tw = torch.autograd.grad(torch.nn.functional.linear(xr, wr).sum(), (xr, wr))
    assert rel_error(gx2, tx) < 1e-2 and rel_error(gw2, tw) < 1e-2
