"""Seeded random combinations of what users try in their first hour (skipped without an sm_90 GPU).

The other GPU suites test one feature at a time; here each case draws odd sizes, layouts (transposed views,
gapped and misaligned slices), batching and broadcasting, bias, fp32 output, a caller's `out` (sometimes
column-major) and a forced shipped config together, for matmul, linear, grouped_mm, group_gemm and add/mul. A
case is a seed: a failure names it, and `pytest -k "grouped_mm_fuzz and case_17"` replays it. Outputs start
NaN-filled; the error is measured against a float32 reference with the same tolerance rule as the rest of the
suite (add/mul: bitwise against torch).
"""
import os
import random

import pytest
import torch
import torch.nn.functional as F

import warpgemm
from warpgemm.config import check_config
from warpgemm.heuristics import SHIPPED_CONFIGS
from warpgemm.testing import matmul_reference, rel_error, tolerance, torch_matmul_error

pytestmark = pytest.mark.gpu
DEV = "cuda"
# Sizes around tile, vector and warpgroup boundaries, and a few that are none of these.
SIZES = (1, 2, 3, 7, 8, 9, 15, 16, 17, 24, 31, 33, 40, 63, 64, 65, 96, 127, 128, 129, 192, 255, 256, 257, 384,
         511, 513, 777, 1000, 1024, 1536, 2047, 2304)
DTYPES = (torch.bfloat16, torch.float16)
# WARPGEMM_FUZZ_SEED=n draws a fresh set of cases (every seed shifted by n * 100000); a failure found that way replays
# with the same variable set. The default (0) is the set CI and the GPU suite run.
SEED_SHIFT = int(os.environ.get("WARPGEMM_FUZZ_SEED", "0")) * 100_000
BUDGET = 2 ** 30  # M * N * K * batch of one case: keeps the fp32 reference cheap


def _operand(rng, rows, cols, dtype, layout, batch=()):
    """A random (*batch, rows, cols) tensor stored as `layout`: row, col (a transposed view), gap (a slice of a
    wider tensor: rows not contiguous), or shift (a storage offset of one element: misaligned for TMA)."""
    g = torch.Generator(device=DEV).manual_seed(rng.randrange(2 ** 31))

    def randn(*shape):
        return torch.randn(shape, device=DEV, generator=g).to(dtype)

    if layout == "col":
        return randn(*batch, cols, rows).transpose(-1, -2)
    if layout == "gap":
        return randn(*batch, rows, cols + rng.choice((1, 3, 8, 64)))[..., :cols]
    if layout == "shift":
        n = rows * cols
        for b in batch:
            n *= b
        return randn(n + 1)[1:].view(*batch, rows, cols)
    return randn(*batch, rows, cols)


def _sizes(rng, count, budget):
    while True:
        dims = [rng.choice(SIZES) for _ in range(count)]
        prod = 1
        for d in dims:
            prod *= d
        if prod <= budget:
            return dims


def _bias(rng, n, dtype):
    """An (N,) bias in the input dtype or fp32, contiguous or a strided view."""
    bias_dtype = torch.float32 if rng.random() < 0.3 else dtype
    if rng.random() < 0.3:
        return torch.randn(2 * n, device=DEV).to(bias_dtype)[::2]
    return torch.randn(n, device=DEV).to(bias_dtype)


def _forced_config(rng, dtype, out_dtype):
    if rng.random() >= 0.3:
        return None
    cfg = rng.choice(SHIPPED_CONFIGS)
    return cfg if check_config(cfg, dtype, out_dtype) is None else None


def _run_or_refused(fn, config):
    """A forced config may be refused for a shape it cannot run; anything else must run."""
    try:
        return fn()
    except ValueError as e:
        if config is None:
            raise
        assert "config" in str(e), f"a forced config was refused without saying so: {e}"
        return None


def _check(out, ref, a, b, bias, out_dtype, k, what):
    torch_err = torch_matmul_error(a, b, bias, ref, out_dtype)
    err = rel_error(out, ref)
    tol = tolerance(torch_err, out_dtype, k)
    assert err <= tol, f"{what}: error {err:.3e} > tolerance {tol:.3e} (torch {torch_err:.3e})"


@pytest.mark.parametrize("case", range(120), ids=lambda c: f"case_{c}")
def test_matmul_fuzz(case):
    rng = random.Random(SEED_SHIFT + 1000 + case)
    dtype = rng.choice(DTYPES)
    batched = rng.random() < 0.3
    batch = (rng.choice((1, 2, 3)), ) if batched else ()
    m, n, k = _sizes(rng, 3, BUDGET // max(1, batch[0] if batch else 1))
    if rng.random() < 0.05:
        m, n, k = [0 if rng.random() < 0.5 else d for d in (m, n, k)]
    a_layout, b_layout = rng.choice(("row", "col", "gap", "shift")), rng.choice(("row", "col", "gap", "shift"))
    a = _operand(rng, m, k, dtype, a_layout, batch)
    b_batch = batch if batched and rng.random() < 0.5 else ()  # else b broadcasts over a's batch
    b = _operand(rng, k, n, dtype, b_layout, b_batch)
    out_dtype = torch.float32 if rng.random() < 0.25 else dtype
    bias = _bias(rng, n, dtype) if rng.random() < 0.3 else None
    config = _forced_config(rng, dtype, out_dtype)
    what = (f"M={m} N={n} K={k} batch={batch} b_batch={b_batch} a={a_layout} b={b_layout} {dtype} -> {out_dtype} "
            f"bias={bias is not None} config={config and config.name}")
    out_shape = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (m, n)
    mode = rng.choice(("new", "out", "out_col"))
    if mode == "new":
        got = _run_or_refused(lambda: warpgemm.matmul(a, b, bias=bias, out_dtype=out_dtype, config=config), config)
    else:
        out = torch.full(out_shape, float("nan"), device=DEV, dtype=out_dtype)
        if mode == "out_col":
            out = torch.full(out_shape[:-2] + (n, m), float("nan"), device=DEV, dtype=out_dtype).transpose(-1, -2)
        got = _run_or_refused(lambda: warpgemm.matmul(a, b, bias=bias, out=out, config=config), config)
        assert got is None or got is out
    if got is None:
        return
    assert got.shape == out_shape and got.dtype == out_dtype, what
    _check(got, matmul_reference(a, b, bias), a, b, bias, out_dtype, k, what)


@pytest.mark.parametrize("case", range(40), ids=lambda c: f"case_{c}")
def test_linear_fuzz(case):
    rng = random.Random(SEED_SHIFT + 2000 + case)
    dtype = rng.choice(DTYPES)
    lead = tuple(rng.choice((1, 2, 3, 5, 17)) for _ in range(rng.choice((0, 1, 2))))
    rows, n, k = _sizes(rng, 3, BUDGET)
    g = torch.Generator(device=DEV).manual_seed(SEED_SHIFT + case)
    x = torch.randn(*lead, rows, k, device=DEV, generator=g).to(dtype)
    if rng.random() < 0.3:  # a strided activation (a slice of a wider hidden state)
        x = torch.randn(*lead, rows, k + 8, device=DEV, generator=g).to(dtype)[..., 8:]
    w = _operand(rng, n, k, dtype, rng.choice(("row", "gap", "col")))
    bias = torch.randn(n, device=DEV, generator=g).to(dtype) if rng.random() < 0.5 else None
    what = f"x={tuple(x.shape)} w={tuple(w.shape)} stride={w.stride()} {dtype} bias={bias is not None}"
    for _ in range(2):  # the second call takes the cached recipe
        got = warpgemm.linear(x, w, bias)
        ref = F.linear(x.float(), w.float(), None if bias is None else bias.float())
        assert got.shape == ref.shape and got.dtype == dtype, what
        _check(got, ref, x, w.t(), bias, dtype, k, what)


def _grouped_reference(a, b, offs_list):
    ref = torch.zeros((a.shape[0], b.shape[-1]), device=DEV)
    prev = 0
    for g, o in enumerate(offs_list):
        if o > prev:
            ref[prev:o] = a[prev:o].float() @ b[g].float()
        prev = max(prev, o)
    return ref, prev


@pytest.mark.parametrize("case", range(60), ids=lambda c: f"case_{c}")
def test_grouped_mm_fuzz(case):
    rng = random.Random(SEED_SHIFT + 3000 + case)
    dtype = rng.choice(DTYPES)
    groups = rng.choice((1, 2, 3, 8, 17, 64, 130))
    k, n = _sizes(rng, 2, 2 ** 22)
    mean_rows = rng.choice((1, 4, 20, 100, 300))
    sizes = [0 if rng.random() < 0.2 else rng.randrange(0, 2 * mean_rows + 1) for _ in range(groups)]
    tail = rng.choice((0, 0, 1, 37))  # rows past offs[-1]
    t = sum(sizes) + tail
    offs_list = torch.tensor(sizes).cumsum(0).tolist()
    offs = torch.tensor(offs_list, device=DEV, dtype=torch.int32)
    a = _operand(rng, t, k, dtype, rng.choice(("row", "row", "gap")))
    b_kmajor = rng.random() < 0.5
    b = _operand(rng, k, n, dtype, "col" if b_kmajor else "row", (groups, ))
    out_dtype = torch.float32 if rng.random() < 0.25 else dtype
    config = _forced_config(rng, dtype, out_dtype)
    if config is not None and (config.split_k > 1 or config.stream_k or config.store_chunks > 1
                               or config.cluster_m > 1):
        config = None  # grouped_mm refuses these up front (tested in test_gpu_grouped)
    what = (f"G={groups} sizes={sizes[:8]}{'...' if groups > 8 else ''} T={t} K={k} N={n} b_kmajor={b_kmajor} "
            f"a_stride={a.stride()} {dtype} -> {out_dtype} config={config and config.name}")
    ref, covered = _grouped_reference(a, b, offs_list)
    if rng.random() < 0.5:
        out = torch.full((t, n), float("nan"), device=DEV, dtype=out_dtype)
        got = warpgemm.grouped_mm(a, b, offs, out=out, config=config)
        assert got is out, what
        assert out[covered:].isnan().all(), f"{what}: rows past offs[-1] were written"
    else:
        got = warpgemm.grouped_mm(a, b, offs, out_dtype=out_dtype, config=config)
    assert got.shape == (t, n) and got.dtype == out_dtype, what
    err = rel_error(got[:covered], ref[:covered])
    assert err < (1e-2 if out_dtype != torch.float32 else 2e-3), f"{what}: error {err:.3e}"


@pytest.mark.parametrize("case", range(20), ids=lambda c: f"case_{c}")
def test_group_gemm_fuzz(case):
    rng = random.Random(SEED_SHIFT + 4000 + case)
    dtype = rng.choice(DTYPES)
    problems = [_sizes(rng, 3, 2 ** 27) for _ in range(rng.choice((1, 2, 5, 13, 40)))]
    list_a = [_operand(rng, m, k, dtype, rng.choice(("row", "col", "gap"))) for m, n, k in problems]
    list_b = [_operand(rng, k, n, dtype, rng.choice(("row", "col", "gap"))) for m, n, k in problems]
    outs = warpgemm.group_gemm(list_a, list_b)
    assert len(outs) == len(problems)
    for i, (a, b, got) in enumerate(zip(list_a, list_b, outs)):
        what = f"problem {i} of {len(problems)}: M, N, K = {problems[i]} strides {a.stride()} {b.stride()} {dtype}"
        assert got.shape == (a.shape[0], b.shape[1]) and got.dtype == dtype, what
        _check(got, matmul_reference(a, b), a, b, None, dtype, a.shape[1], what)


@pytest.mark.parametrize("case", range(12), ids=lambda c: f"case_{c}")
def test_matmul_backward_fuzz(case):
    rng = random.Random(SEED_SHIFT + 5000 + case)
    dtype = rng.choice(DTYPES)
    m, n, k = _sizes(rng, 3, 2 ** 27)
    a = _operand(rng, m, k, dtype, rng.choice(("row", "col"))).requires_grad_()
    b = _operand(rng, k, n, dtype, rng.choice(("row", "col"))).requires_grad_()
    grad = torch.randn(m, n, device=DEV).to(dtype)
    warpgemm.matmul(a, b).backward(grad)
    a32, b32 = a.detach().float().requires_grad_(), b.detach().float().requires_grad_()
    (a32 @ b32).backward(grad.float())
    what = f"M={m} N={n} K={k} {dtype}"
    for name, got, want, red in (("a.grad", a.grad, a32.grad, n), ("b.grad", b.grad, b32.grad, m)):
        err = rel_error(got, want)
        assert err < tolerance(0.0, dtype, red) * 4, f"{what}: {name} error {err:.3e}"


@pytest.mark.parametrize("case", range(30), ids=lambda c: f"case_{c}")
def test_vector_operands_fuzz(case):
    """torch.matmul's 1-D forms: (K,) @ (K, N), (M, K) @ (K,), (K,) @ (K,), (B, M, K) @ (K,), (K,) @ (B, K, N)."""
    rng = random.Random(SEED_SHIFT + 6000 + case)
    dtype = rng.choice(DTYPES)
    m, n, k = _sizes(rng, 3, BUDGET)
    batch = rng.choice((2, 3))
    form = rng.choice(("vm", "mv", "vv", "bmv", "vbm"))
    g = torch.Generator(device=DEV).manual_seed(SEED_SHIFT + case)

    def randn(*shape):
        return torch.randn(shape, device=DEV, generator=g).to(dtype)

    a, b = {"vm": (randn(k), randn(k, n)), "mv": (randn(m, k), randn(k)), "vv": (randn(k), randn(k)),
            "bmv": (randn(batch, m, k), randn(k)), "vbm": (randn(k), randn(batch, k, n))}[form]
    got = warpgemm.matmul(a, b)
    ref = torch.matmul(a.float(), b.float())
    what = f"{form}: {tuple(a.shape)} @ {tuple(b.shape)} {dtype}"
    assert got.shape == ref.shape and got.dtype == dtype, what
    err = rel_error(got, ref)
    assert err <= tolerance(rel_error(torch.matmul(a, b), ref), dtype, k), f"{what}: error {err:.3e}"


@pytest.mark.parametrize("case", range(20), ids=lambda c: f"case_{c}")
def test_grouped_other_forms_fuzz(case):
    """grouped_mm's 3-D x 3-D (batched) and 2-D x 2-D (groups along K: the weight gradient) forms."""
    rng = random.Random(SEED_SHIFT + 7000 + case)
    dtype = rng.choice(DTYPES)
    m, n = _sizes(rng, 2, 2 ** 20)
    g = torch.Generator(device=DEV).manual_seed(SEED_SHIFT + case)

    def randn(*shape):
        return torch.randn(shape, device=DEV, generator=g).to(dtype)

    if rng.random() < 0.5:
        groups, k = rng.choice((1, 3, 8)), rng.choice(SIZES[:25])
        a = randn(groups, m, k)
        b = randn(groups, n, k).transpose(-1, -2) if rng.random() < 0.5 else randn(groups, k, n)
        got = warpgemm.grouped_mm(a, b)
        ref = torch.bmm(a.float(), b.float())
        what = f"batched {tuple(a.shape)} @ {tuple(b.shape)} strides {b.stride()} {dtype}"
    else:
        groups = rng.choice((1, 2, 5, 16))
        sizes = [0 if rng.random() < 0.2 else rng.randrange(0, 300) for _ in range(groups)]
        t = sum(sizes) + rng.choice((0, 5))
        offs_list = torch.tensor(sizes).cumsum(0).tolist()
        a, b = randn(m, t), randn(t, n)
        got = warpgemm.grouped_mm(a, b, torch.tensor(offs_list, device=DEV, dtype=torch.int32))
        ref = torch.zeros(groups, m, n, device=DEV)
        prev = 0
        for i, o in enumerate(offs_list):
            ref[i] = a[:, prev:o].float() @ b[prev:o].float()
            prev = o
        what = f"ragged K: ({m}, {t}) @ ({t}, {n}) sizes={sizes} {dtype}"
    assert got.shape == ref.shape and got.dtype == dtype, what
    err = rel_error(got, ref)
    assert err < 1e-2, f"{what}: error {err:.3e}"


@pytest.mark.parametrize("case", range(40), ids=lambda c: f"case_{c}")
def test_add_mul_fuzz(case):
    """warpgemm.add / mul against torch.add / mul, bitwise: odd shapes of 1-4 dims, transposed, sliced and offset
    views, alpha, out= (fresh, NaN-filled, strided, or an input itself), and the fallback's inputs (broadcasting,
    mixed dtypes)."""
    rng = random.Random(SEED_SHIFT + 8000 + case)
    dtype = rng.choice((torch.float32, torch.bfloat16, torch.float16))
    shape = [rng.choice((1, 3, 7, 8, 33, 64, 127, 1000, 1025)) for _ in range(rng.choice((1, 2, 3, 4)))]
    while torch.Size(shape).numel() > 2 ** 24:
        shape[rng.randrange(len(shape))] = 3
    g = torch.Generator(device=DEV).manual_seed(SEED_SHIFT + case)

    def operand(dt=dtype):
        kind = rng.choice(("plain", "plain", "transposed", "sliced", "offset"))
        if kind == "transposed" and len(shape) >= 2:
            return torch.randn(shape[::-1], device=DEV, generator=g).to(dt).permute(*range(len(shape) - 1, -1, -1))
        if kind == "sliced":
            return torch.randn(shape[:-1] + [shape[-1] + 5], device=DEV, generator=g).to(dt)[..., 2:2 + shape[-1]]
        if kind == "offset":
            n = torch.Size(shape).numel()
            return torch.randn(n + 1, device=DEV, generator=g).to(dt)[1:].view(shape)
        return torch.randn(shape, device=DEV, generator=g).to(dt)

    a, b = operand(), operand()
    if rng.random() < 0.15:  # the fallback: b broadcast over a's leading dims, or another dtype
        b = b[(0, ) * (len(shape) - 1)] if len(shape) > 1 else b.to(torch.float32)
    op = rng.choice(("add", "mul"))
    alpha = rng.choice((1, 0.5, -3.25)) if op == "add" else 1
    want = torch.add(a, b, alpha=alpha) if op == "add" else torch.mul(a, b)
    kwargs = dict(alpha=alpha) if op == "add" else {}
    fn = getattr(warpgemm, op)
    mode = rng.choice(("new", "out", "out_strided", "in_place"))
    what = f"{op} {shape} {a.dtype}/{b.dtype} strides {a.stride()} {b.stride()} alpha={alpha} mode={mode}"
    if mode == "new":
        got = fn(a, b, **kwargs)
    elif mode == "in_place" and a.shape == want.shape and a.dtype == want.dtype:
        got = fn(a, b, out=a, **kwargs)
        assert got is a, what
    else:
        out = torch.full(want.shape, float("nan"), device=DEV, dtype=want.dtype)
        if mode == "out_strided" and len(shape) >= 2:
            out = torch.full(list(want.shape[:-2]) + [want.shape[-1], want.shape[-2]], float("nan"), device=DEV,
                             dtype=want.dtype).transpose(-1, -2)
        got = fn(a, b, out=out, **kwargs)
        assert got is out, what
    assert got.shape == want.shape and got.dtype == want.dtype, what
    assert torch.equal(got, want), f"{what}: max diff {(got.float() - want.float()).abs().max().item():.3e}"
