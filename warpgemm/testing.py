"""Reference implementations and error measures shared by the test suites and `warpgemm check`.

The rule: an op's relative error against a float64 reference may be at most about twice what torch's own
same-dtype op makes on the same inputs (plus a tiny floor for exactly-representable cases).
"""
from __future__ import annotations

from typing import NamedTuple

import torch


def rel_error(out: torch.Tensor, ref: torch.Tensor) -> float:
    """||out - ref|| / ||ref|| in float64; inf when out has NaN (unwritten elements), 0 for empty tensors."""
    if out.numel() == 0:
        return 0.0
    out64 = out.detach().to(torch.float64)
    if torch.isnan(out64).any():
        return float("inf")
    ref64 = ref.detach().to(torch.float64)
    denom = ref64.norm().item()
    diff = (out64 - ref64).norm().item()
    return diff / denom if denom > 0 else diff


def matmul_reference(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """torch.matmul in float64 (CPU tensors) or float32 (CUDA: float64 matmul is slow there)."""
    dt = torch.float64 if a.device.type == "cpu" else torch.float32
    ref = torch.matmul(a.to(dt), b.to(dt))
    if bias is not None:
        ref = ref + bias.to(dt)
    return ref


def torch_matmul_error(a, b, bias, ref, out_dtype) -> float:
    """The error torch itself makes computing the same product in the input dtype, rounded to out_dtype."""
    if a.device.type == "cpu":
        # CPU bf16 matmul is slow and not the baseline anyone uses; emulate fp32 accumulation + output rounding.
        got = torch.matmul(a.float(), b.float())
        if bias is not None:
            got = got + bias.float()
        got = got.to(out_dtype)
    else:
        got = torch.matmul(a, b) if out_dtype == a.dtype else torch.matmul(a.float(), b.float())
        if bias is not None:
            got = got + bias.to(got.dtype)
        got = got.to(out_dtype)
    return rel_error(got, ref)


def tolerance(torch_err: float, dtype: torch.dtype, k: int = 1) -> float:
    """Allowed error: twice torch's own, with a floor of a few units of rounding of the output dtype. For fp32
    outputs (where torch's own error against an fp32 reference is ~0) the floor grows like sqrt(K): the tensor
    cores' fp32 accumulation order differs from the reference's. Measured on the GPU (session 39,
    scripts/s39_fp32_err_probe.py): 1.0-1.13e-6 * sqrt(K / 64) for 64x64 tiles at K = 7816-14336 (fp16 and bf16
    inputs; 128x4096x14336 fp16: 1.69e-5), so the floor's constant is 1.5e-6."""
    floor = {torch.float32: 1.5e-6 * max(1.0, (k / 64) ** 0.5), torch.bfloat16: 4e-3,
             torch.float16: 5e-4}.get(dtype, 1e-3)
    return max(2.0 * torch_err, floor)


def strided_operand(rows: int, cols: int, *, col_major: bool, dtype, device, batch: int | None = None,
                    generator=None) -> torch.Tensor:
    """A random (batch?, rows, cols) tensor, stored row-major or column-major (a transposed view)."""
    shape = (cols, rows) if col_major else (rows, cols)
    if batch is not None:
        shape = (batch, ) + shape
    t = torch.randn(shape, dtype=torch.float32, device=device, generator=generator).to(dtype)
    return t.transpose(-1, -2) if col_major else t


def check_matmul(a: torch.Tensor, b: torch.Tensor, *, bias=None, out_dtype=None, config=None) -> dict:
    """Run warpgemm.matmul into a NaN-filled output and measure it against float32/64 and against torch."""
    import warpgemm

    out_dtype = out_dtype or a.dtype
    shape = torch.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + (a.shape[-2], b.shape[-1])
    out = torch.full(shape, float("nan"), dtype=out_dtype, device=a.device)
    warpgemm.matmul(a, b, out=out, bias=bias, config=config)
    ref = matmul_reference(a, b, bias)
    err = rel_error(out, ref)
    torch_err = torch_matmul_error(a, b, bias, ref, out_dtype)
    tol = tolerance(torch_err, out_dtype, a.shape[-1])
    return {"err": err, "torch_err": torch_err, "tol": tol, "ok": err <= tol}


def assert_ok(result: dict, what: str) -> None:
    """Fail with the error, the tolerance and torch's own error when a check_matmul result is not ok."""
    assert result["ok"], (f"{what}: error {result['err']:.3e} > tolerance {result['tol']:.3e} "
                          f"(torch {result['torch_err']:.3e})")


def rand(*shape, g: torch.Generator | None = None, dtype=torch.bfloat16, device: str = "cuda") -> torch.Tensor:
    """Seeded standard-normal values in `dtype` (the GPU tests' inputs: random, never zeros)."""
    return torch.randn(shape, device=device, generator=g).to(dtype)


SIZES = (1, 7, 64, 65, 127, 128, 1000, 4097)
LAYOUT_SIZES = (1, 7, 65, 128, 1000)
LAYOUTS = ((False, False), (False, True), (True, False), (True, True))  # (A column-major, B column-major)


def rowwise_fp8(x: torch.Tensor, w: torch.Tensor):
    """x (M, K) and a weight w (N, K) quantized to e4m3 with one fp32 scale per row of each: (a8, w8, sa, sb), sa of
    shape (M, 1) and sb (1, N) as scaled_mm takes them; (a8 * sa) @ (w8 * sb.T).T is the product they represent."""
    sa = x.float().abs().amax(1, keepdim=True) / 448
    sb = w.float().abs().amax(1, keepdim=True).T / 448
    return (x.float() / sa).to(torch.float8_e4m3fn), (w.float() / sb.T).to(torch.float8_e4m3fn), sa, sb


def matrix_cases(sizes=SIZES, layout_sizes=LAYOUT_SIZES):
    """(M, N, K, a_col, b_col): the weight layout (B = W.T) on the full grid, every layout on a smaller one."""
    import itertools

    cases = [(m, n, k, False, True) for m, n, k in itertools.product(sizes, sizes, sizes)]
    for a_col, b_col in LAYOUTS:
        if (a_col, b_col) != (False, True):
            cases += [(m, n, k, a_col, b_col) for m, n, k in itertools.product(layout_sizes, repeat=3)]
    return cases


def check_matrix(dtypes=(torch.bfloat16, torch.float16), device="cuda", cases=None) -> list[dict]:
    g = torch.Generator(device=device).manual_seed(0)
    rows = []
    for dtype in dtypes:
        for m, n, k, a_col, b_col in (cases or matrix_cases()):
            a = strided_operand(m, k, col_major=a_col, dtype=dtype, device=device, generator=g)
            b = strided_operand(k, n, col_major=b_col, dtype=dtype, device=device, generator=g)
            r = check_matmul(a, b)
            r.update(M=m, N=n, K=k, dtype=str(dtype), a_col_major=a_col, b_col_major=b_col)
            rows.append(r)
    return rows


def check_repeatable(a: torch.Tensor, b: torch.Tensor, config=None) -> None:
    """warpgemm.matmul(a, b, config=config) gives bitwise the first call's result on repeats, on two streams at once
    and replayed from a CUDA graph into a NaN-filled out (captured after a warm-up call, which compiles); raises
    AssertionError otherwise. GPU only."""
    import warpgemm

    first = warpgemm.matmul(a, b, config=config)
    for _ in range(3):
        assert torch.equal(warpgemm.matmul(a, b, config=config), first), "a repeat differs"
    outs = [None, None]
    torch.cuda.synchronize()
    for i, s in enumerate([torch.cuda.Stream() for _ in range(2)]):
        with torch.cuda.stream(s):
            outs[i] = warpgemm.matmul(a, b, config=config)
    torch.cuda.synchronize()
    assert all(torch.equal(o, first) for o in outs), "a call on a second stream differs"
    out = torch.full_like(first, float("nan"))
    graph = torch.cuda.CUDAGraph()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        warpgemm.matmul(a, b, out=out, config=config)
        out.fill_(float("nan"))
        with torch.cuda.graph(graph, stream=s):
            warpgemm.matmul(a, b, out=out, config=config)
    torch.cuda.current_stream().wait_stream(s)
    graph.replay()
    torch.cuda.synchronize()
    assert torch.equal(out, first), "the graph replay differs"


def probe_operands(M: int, N: int, K: int, dtype=None, device: str = "cuda"):
    """The GPU probes' operands for one shape: x (M, K) and a weight w (N, K), random with a seed of M + N + K (so
    every probe and rerun times the same values), and the fp32 reference x @ w.T."""
    g = torch.Generator(device=device).manual_seed(M + N + K)
    a = rand(M, K, g=g, dtype=dtype or torch.bfloat16, device=device)
    w = rand(N, K, g=g, dtype=dtype or torch.bfloat16, device=device)
    return a, w, a.float() @ w.float().t()


class ProbeProduct(NamedTuple):
    """One probe shape's product c = a @ b with b = w.T (an nn.Linear weight), c NaN-filled bf16, and the batched
    (1, ., .) views the planner takes."""

    a: torch.Tensor
    b: torch.Tensor
    c: torch.Tensor
    ref: torch.Tensor
    a3: torch.Tensor
    b3: torch.Tensor
    c3: torch.Tensor


def probe_product(shape: str) -> ProbeProduct:
    """probe_operands for an 'MxNxK' shape, arranged as the GEMM probes time it."""
    M, N, K = (int(x) for x in shape.split("x"))
    a, w, ref = probe_operands(M, N, K)
    b = w.t()
    c = torch.full((M, N), float("nan"), device=a.device, dtype=torch.bfloat16)
    return ProbeProduct(a, b, c, ref, a.unsqueeze(0), b.unsqueeze(0), c.unsqueeze(0))


def padded_rows(src: torch.Tensor, multiple: int = 64) -> torch.Tensor:
    """A 2-D view with src's values whose rows start `multiple` elements apart at least (128 bytes for 16-bit data:
    what TMA reads at full speed; the probes set it against the same tensor as allocated)."""
    rows, cols = src.shape
    view = torch.empty(rows, -(-cols // multiple) * multiple, device=src.device, dtype=src.dtype)[:, :cols]
    view.copy_(src)
    return view


def add_probe_rows(result: dict, shape: str, times: dict, errs: dict, configs: dict | None = None) -> None:
    """Append a probe's rows for one shape to result["rows"] and print them: each variant of `errs` with its median
    time (rounds in `times`, which also holds "cublas", the baseline), its ratio to cuBLAS and its error."""
    import statistics

    med = {k: statistics.median(v) for k, v in times.items()}
    for name in errs:
        row = {"shape": shape, "variant": name, **({"config": configs[name]} if configs else {}), "ms": med[name],
               "ms_cublas": med["cublas"], "ratio_vs_cublas": med["cublas"] / med[name], "rel_error": errs[name],
               "rounds_ms": times[name], "rounds_ms_cublas": times["cublas"]}
        result["rows"].append(row)
        print(f"{shape:>16} {name:>36} {med[name] * 1e3:8.1f} us {row['ratio_vs_cublas']:6.3f} "
              f"{configs[name] if configs else ''} err {errs[name]:.1e}", flush=True)


def write_probe_result(path: str, result: dict, max_error: float = 1e-2) -> None:
    """Write a probe's result as JSON, then fail (SystemExit) if any row's rel_error is not below max_error: a
    timing is only kept with the correctness check it came with."""
    import json

    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    bad = [(r.get("shape"), r.get("variant")) for r in result["rows"] if not r["rel_error"] < max_error]
    if bad:
        raise SystemExit(f"{len(bad)} results wrong: {bad}")
