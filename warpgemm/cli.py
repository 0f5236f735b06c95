"""The `warpgemm` command: benchmarks against torch in the same process, a correctness check, and `info`."""
from __future__ import annotations

import functools
import json
import os
import sys
from pathlib import Path
from typing import Optional

import torch
import typer
from rich.console import Console
from rich.table import Table

from . import _env
from .bench.suites import GEMM_SUITES

app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="warpgemm: warp-specialized Hopper GEMMs, measured against torch on the same GPU.")
bench_app = typer.Typer(no_args_is_help=True, help="Fixed benchmark suites, warpgemm against torch in one process.")
app.add_typer(bench_app, name="bench")
console = Console()


def _has_hopper() -> bool:
    return torch.cuda.is_available() and _env.is_hopper(torch.cuda.current_device())


def _no_hopper_reason() -> str:
    if not torch.cuda.is_available():
        return "no CUDA GPU here"
    i = torch.cuda.current_device()
    cap = _env.capability(i)
    return f"cuda:{i} is {_env.device_name(i)} (sm_{cap[0]}{cap[1]})"


def _no_gpu_notice(what: str) -> None:
    """A benchmark cannot stand in for itself: say why and exit with status 2 (nothing run, no JSON written)."""
    console.print(f"[red]{what} needs an NVIDIA Hopper GPU (H100/H200): {_no_hopper_reason()}.[/red]")
    raise typer.Exit(2)


def _cpu_demo() -> list:
    """The portable kernel on a few shapes under the interpreter: a table, and its rows (for --json)."""
    import warpgemm
    from .testing import matmul_reference, rel_error

    table = Table(title="portable kernel under the Triton interpreter (CPU)")
    for col in ("shape", "layout", "rel. error vs float64"):
        table.add_column(col)
    g = torch.Generator().manual_seed(0)
    rows = []
    for m, n, k in [(33, 17, 40), (64, 64, 64), (7, 65, 31)]:
        a = torch.randn(m, k, generator=g).to(torch.bfloat16)
        w = torch.randn(n, k, generator=g).to(torch.bfloat16)
        err = rel_error(warpgemm.matmul(a, w.T), matmul_reference(a, w.T))
        rows.append({"shape": f"{m}x{n}x{k}", "layout": "A row-major, B = W.T", "rel_error": err})
        table.add_row(rows[-1]["shape"], rows[-1]["layout"], f"{err:.2e}")
    console.print(table)
    return rows


def _write_json(path: Optional[Path], payload: dict) -> None:
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2))
    console.print(f"wrote {path}")


def _print_table(title: str, columns, rows) -> None:
    """A right-aligned rich table: `rows` are sequences of already formatted cells."""
    table = Table(title=title)
    for col in columns:
        table.add_column(col, justify="right")
    for row in rows:
        table.add_row(*row)
    console.print(table)


def _print_gemm_table(res: dict) -> None:
    table = Table(title=f"suite {res['suite']} {res['dtype']} layout {res['layout']} on {res['environment']['device']}"
                  + (" [calibration: cuBLAS vs cuBLAS]" if res["calibration"] else ""))
    for col in ("shape", "config", "ms", "TFLOP/s", "cuBLAS TFLOP/s", "ratio"):
        table.add_column(col, justify="right")
    for r in res["results"]:
        table.add_row(r["shape"], r["config"], f"{r['ms']:.3f}", f"{r['tflops']:.1f}", f"{r['tflops_baseline']:.1f}",
                      f"{r['ratio']:.3f}")
    table.add_row("geomean", "", "", "", "", f"{res['geomean_ratio']:.3f}", style="bold")
    console.print(table)


def _check_choice(option: str, value, choices) -> None:
    """An option's typo is reported as one on any machine, before the GPU is looked for (not as a missing GPU)."""
    if value not in choices:
        raise typer.BadParameter(f"must be one of {', '.join(choices)}, got {value!r}", param_hint=option)


def _check_layout(layout: str) -> None:
    from .bench.gemm_bench import LAYOUTS

    _check_choice("--layout", layout, LAYOUTS)


def _check_dtype(dtype: str) -> None:
    from .bench.gemm_bench import DTYPES

    _check_choice("--dtype", dtype, DTYPES)


def _bench_gemm(suite: str, dtype: str, layout: str, rounds: int, calibrate: bool, json_path: Optional[Path],
                back_to_back: bool = False):
    _check_layout(layout)
    _check_dtype(dtype)
    if not _has_hopper():
        _no_gpu_notice(f"bench {suite}")
        return
    from .bench.gemm_bench import run_gemm_suite

    res = run_gemm_suite(suite, dtype, layout, rounds, calibrate, back_to_back=back_to_back,
                         progress=lambda s: console.print(s, highlight=False))
    _print_gemm_table(res)
    _write_json(json_path, res)


_DTYPE_OPT = typer.Option("bf16", help="bf16 or fp16")
_LAYOUT_OPT = typer.Option("nt", help="nt: B = W.T of an (N,K) weight; nn: B row-major (K,N); tn: A = G.T of a "
                           "(K,M) G, B row-major (K,N) (a weight gradient)")
_ROUNDS_OPT = typer.Option(5, help="alternating timing rounds per shape")
_CALIBRATE_OPT = typer.Option(False, help="time cuBLAS against itself: the noise floor of any claim")
_JSON_OPT = typer.Option(None, "--json", help="write full results here")
_B2B_OPT = typer.Option(False, "--back-to-back", help="time calls back to back in a CUDA graph, each on a cold copy "
                                                      "of B (as a model's layers run), instead of one call after an "
                                                      "L2 flush")


@bench_app.command("dense")
def bench_dense(dtype: str = _DTYPE_OPT, layout: str = _LAYOUT_OPT, rounds: int = _ROUNDS_OPT,
                quick: bool = typer.Option(False, help="a 4-shape subset instead of the full suite"),
                calibrate: bool = _CALIBRATE_OPT, json_path: Optional[Path] = _JSON_OPT,
                back_to_back: bool = _B2B_OPT):
    """Suite `dense`: squares 2048-8192 and M in {1024, 4096, 16384} x six LLM (N, K) weights."""
    _bench_gemm("quick" if quick else "dense", dtype, layout, rounds, calibrate, json_path, back_to_back)


@bench_app.command("odd")
def bench_odd(dtype: str = _DTYPE_OPT, layout: str = _LAYOUT_OPT, rounds: int = _ROUNDS_OPT,
              calibrate: bool = _CALIBRATE_OPT, json_path: Optional[Path] = _JSON_OPT):
    """Suite `odd`: 12 shapes off the powers of two (1536^3, 3072^3, 3000x5000x2000, 777x4096x11008, ...)."""
    _bench_gemm("odd", dtype, layout, rounds, calibrate, json_path, False)


@bench_app.command("round")
def bench_round(dtype: str = _DTYPE_OPT, layout: str = _LAYOUT_OPT, rounds: int = _ROUNDS_OPT,
                calibrate: bool = _CALIBRATE_OPT, json_path: Optional[Path] = _JSON_OPT):
    """Suite `round`: 12 round decimal sizes (1000^3-8000^3, 10000x10000x1000, ...); odd thousands put rows off
    32-byte sectors."""
    _bench_gemm("round", dtype, layout, rounds, calibrate, json_path, False)


@bench_app.command("small")
def bench_small(dtype: str = _DTYPE_OPT, layout: str = _LAYOUT_OPT, rounds: int = _ROUNDS_OPT,
                calibrate: bool = _CALIBRATE_OPT, json_path: Optional[Path] = _JSON_OPT):
    """Suite `small`: 12 products of a few microseconds (128^3-1536x384x512), timed back to back in CUDA graphs."""
    _bench_gemm("small", dtype, layout, rounds, calibrate, json_path, True)


@bench_app.command("mid")
def bench_mid(dtype: str = _DTYPE_OPT, layout: str = _LAYOUT_OPT, rounds: int = _ROUNDS_OPT,
              calibrate: bool = _CALIBRATE_OPT, json_path: Optional[Path] = _JSON_OPT,
              back_to_back: bool = _B2B_OPT):
    """Suite `mid`: M in {128, 256, 512} x the six LLM (N, K) weights of `dense`."""
    _bench_gemm("mid", dtype, layout, rounds, calibrate, json_path, back_to_back)


def _parse_configs(configs: Optional[str]):
    """--configs' comma-separated config names as GemmConfigs (None: none given); a bad name is a usage error."""
    from .candidates import parse_config_list

    if not configs:
        return None
    try:
        return tuple(parse_config_list(configs).values())
    except (ValueError, TypeError) as e:
        raise typer.BadParameter(str(e), param_hint="--configs") from None


@bench_app.command("sweep")
def bench_sweep(suite: str = typer.Option("mid", help=", ".join(GEMM_SUITES)), dtype: str = _DTYPE_OPT,
                layout: str = _LAYOUT_OPT,
                configs: Optional[str] = typer.Option(None, help="comma-separated config names (default: all)"),
                rounds: int = typer.Option(1, help="rounds per config (medians)"),
                json_path: Optional[Path] = _JSON_OPT):
    """Every candidate config on every shape of a suite, each against cuBLAS: what the heuristics rest on."""
    chosen = _parse_configs(configs)  # a bad name is reported before the GPU is looked for
    _check_choice("--suite", suite, GEMM_SUITES)
    _check_layout(layout)
    _check_dtype(dtype)
    if not _has_hopper():
        _no_gpu_notice("bench sweep")
        return
    from .bench.sweep import run_sweep

    res = run_sweep(suite, dtype, layout, chosen, rounds=rounds, progress=lambda s: console.print(s, highlight=False))
    _print_table(f"best config per shape: {suite} {dtype} {layout}", ("shape", "config", "ms", "ratio"),
                 [(r["shape"], r["config"], f"{r['ms']:.4f}", f"{r['ratio']:.3f}") for r in res["best"]])
    _write_json(json_path, res)


@bench_app.command("decode")
def bench_decode(rounds: int = typer.Option(5, help="alternating timing rounds per pair"),
                 configs: Optional[str] = typer.Option(None, help="comma-separated config names to sweep instead of "
                                                                  "the heuristic's choice"),
                 eager: bool = typer.Option(True, help="also time eager calls (host overhead included)"),
                 m: Optional[str] = typer.Option(None, help="comma-separated M values, any positive ones "
                                                            "(default 1,4,16,32,64)"),
                 static_weights: bool = typer.Option(False, "--static-weights",
                                                     help="mark the weights static (warpgemm.mark_static), as an "
                                                          "inference model's: loads start under the previous kernel"),
                 json_path: Optional[Path] = _JSON_OPT):
    """Decode: x (M = 1-64 rows, or those of --m) @ W.T for the six LLM weights, bandwidth vs F.linear, weights
    cold in L2."""
    chosen = _parse_configs(configs)
    ms = None
    if m:
        try:
            ms = tuple(dict.fromkeys(int(v) for v in m.split(",")))
        except ValueError:
            raise typer.BadParameter(f"expected comma-separated integers, got {m!r}", param_hint="--m") from None
        if min(ms) < 1:
            raise typer.BadParameter(f"M values must be positive, got {m!r}", param_hint="--m")
    if not _has_hopper():
        _no_gpu_notice("bench decode")
        return
    from .bench.decode_bench import DECODE_M, decode_cases, run_decode_suite

    ms = ms or DECODE_M
    res = run_decode_suite(rounds=rounds, configs=chosen, eager=eager, cases=decode_cases(ms),
                           progress=lambda s: console.print(s, highlight=False), static_weights=static_weights)
    _print_table("bench decode (bf16, CUDA graphs, weights cold in L2" + (", static)" if static_weights else ")"),
                 ("shape", "config", "us", "TB/s", "cuBLAS TB/s", "ratio", "eager ratio"),
                 [(r["shape"], r["config"], f"{r['us']:.2f}", f"{r['tbs']:.2f}", f"{r['tbs_baseline']:.2f}",
                   f"{r['ratio']:.3f}", f"{r.get('eager_ratio', float('nan')):.3f}") for r in res["results"]])
    if "geomean_ratio" in res:
        console.print(f"geomean {res['geomean_ratio']:.3f} (min {res['min_ratio']:.3f}); min TB/s: weights >= 64 MB "
                      f"{res['min_tbs_large_weights']:.2f}, 32 MB {res['min_tbs_small_weights']:.2f}"
                      + (f"; eager geomean {res['geomean_eager_ratio']:.3f} (min {res['min_eager_ratio']:.3f})"
                         if "geomean_eager_ratio" in res else ""))
    _write_json(json_path, res)


@bench_app.command("train")
def bench_train(dtype: str = _DTYPE_OPT, rounds: int = _ROUNDS_OPT, json_path: Optional[Path] = _JSON_OPT):
    """One linear layer's training step (forward + backward) vs F.linear's: M in {4096, 16384} x six LLM weights."""
    _check_dtype(dtype)
    if not _has_hopper():
        _no_gpu_notice("bench train")
        return
    from .bench.train_bench import run_train_suite

    res = run_train_suite(dtype, rounds, progress=lambda s: console.print(s, highlight=False))
    _print_table(f"bench train ({dtype}: linear(x, W).backward(dY) vs F.linear)",
                 ("shape MxNxK", "ms", "TFLOP/s", "F.linear TFLOP/s", "ratio", "dW diff"),
                 [(r["shape"], f"{r['ms']:.3f}", f"{r['tflops']:.1f}", f"{r['tflops_baseline']:.1f}",
                   f"{r['ratio']:.3f}", f"{r['rel_diff_dw']:.1e}") for r in res["results"]])
    console.print(f"geomean vs F.linear: {res['geomean_ratio']:.3f} (min {res['min_ratio']:.3f})")
    _write_json(json_path, res)


@bench_app.command("moe")
def bench_moe(rounds: int = typer.Option(3, help="alternating timing rounds per pair"),
              json_path: Optional[Path] = _JSON_OPT,
              back_to_back: bool = typer.Option(False, "--back-to-back", help="time calls back to back in a CUDA "
                                                "graph (every case's experts overflow the L2) instead of one call "
                                                "after an L2 flush"),
              wgrad: bool = typer.Option(False, "--wgrad", help="the weight gradients of the same cases instead "
                                         "(the 2-D x 2-D form: groups along K)"),
              train: bool = typer.Option(False, "--train", help="a training step of the same cases instead: "
                                         "forward and backward (dX, dW) against torch._grouped_mm's")):
    """grouped_mm vs torch._grouped_mm and a loop of matmuls: 8 MoE cases x skewed/uniform/empty routing."""
    if wgrad and train:
        raise typer.BadParameter("--wgrad and --train each choose the suite: give one of them")
    if back_to_back and (wgrad or train):
        raise typer.BadParameter("--back-to-back times the forward suite only: give it without --wgrad or --train")
    if not _has_hopper():
        _no_gpu_notice("bench moe")
        return
    from .bench.moe_bench import run_moe_suite, run_moe_wgrad_suite

    if train:
        from .bench.moe_train_bench import run_moe_train_suite

        res = run_moe_train_suite(rounds=rounds, progress=lambda s: console.print(s, highlight=False))
        _print_table("bench moe --train (bf16: grouped_mm(x, W, offs).backward(dY) vs torch._grouped_mm)",
                     ("case", "routing", "ms", "TFLOP/s", "torch TFLOP/s", "ratio", "dW diff"),
                     [(r["case"], r["routing"], f"{r['ms']:.3f}", f"{r['tflops']:.1f}", f"{r['tflops_grouped_mm']:.1f}",
                       f"{r['ratio_vs_grouped_mm']:.3f}", f"{r['rel_diff_dw']:.1e}") for r in res["results"]])
        console.print(f"geomean vs torch._grouped_mm: {res['geomean_vs_grouped_mm']:.3f} "
                      f"(min {res['min_vs_grouped_mm']:.3f})")
        _write_json(json_path, res)
        return
    if wgrad:
        res = run_moe_wgrad_suite(rounds=rounds, progress=lambda s: console.print(s, highlight=False))
        title, tb_key = "bench moe --wgrad (bf16, dW[e] = x_e^T dy_e)", "tb_s"
    else:
        res = run_moe_suite(rounds=rounds, back_to_back=back_to_back,
                            progress=lambda s: console.print(s, highlight=False))
        title, tb_key = "bench moe (bf16, weights (E, N, K) read as (E, K, N))", "weight_tb_s"
    _print_table(title, ("case", "routing", "ms", "TFLOP/s", "TB/s", "vs _grouped_mm", "vs loop"),
                 [(r["case"], r["routing"], f"{r['ms']:.3f}", f"{r['tflops']:.1f}", f"{r[tb_key]:.2f}",
                   f"{r['ratio_vs_grouped_mm']:.3f}", f"{r['ratio_vs_loop']:.3f}") for r in res["results"]])
    console.print(f"geomean vs torch._grouped_mm: {res['geomean_vs_grouped_mm']:.3f}; >= 64 experts: "
                  f"{res['geomean_vs_grouped_mm_64plus_experts']:.3f}")
    _write_json(json_path, res)


@bench_app.command("fp8")
def bench_fp8(suite: str = typer.Option("dense", help="dense, mid, odd, quick; decode (M = 1-64) or small: CUDA "
                                                     "graphs, cold weights, as `bench decode` / `bench small`"),
              scaling: str = typer.Option("tensorwise", help="tensorwise or rowwise scales"),
              rounds: int = _ROUNDS_OPT, json_path: Optional[Path] = _JSON_OPT):
    """scaled_mm vs torch._scaled_mm (e4m3 in, bf16 out, weight as W.T) on a GEMM suite's shapes."""
    _check_choice("--suite", suite, GEMM_SUITES)
    _check_choice("--scaling", scaling, ("tensorwise", "rowwise"))
    if not _has_hopper():
        _no_gpu_notice("bench fp8")
        return
    from .bench.fp8_bench import run_fp8_suite

    res = run_fp8_suite(suite, scaling, rounds, progress=lambda s: console.print(s, highlight=False))
    _print_table(f"bench fp8 {suite} ({scaling}; baseline torch._scaled_mm use_fast_accum=True)",
                 ("shape", "config", "ms", "TFLOP/s", "torch TFLOP/s", "TB/s", "ratio", "vs promoted"),
                 [(r["shape"], r["config"], f"{r['ms']:.3f}", f"{r['tflops']:.1f}", f"{r['tflops_baseline']:.1f}",
                   f"{r['tbs']:.2f}", f"{r['ratio']:.3f}", f"{r['ratio_vs_promoted']:.3f}") for r in res["results"]])
    promoted = res["geomean_ratio_vs_promoted"]
    console.print(f"geomean {res['geomean_ratio']:.3f} (min {res['min_ratio']:.3f})"
                  + (f"; against use_fast_accum=False {promoted:.3f}" if promoted == promoted else
                     "; CUDA graphs, weights cold in L2"))
    _write_json(json_path, res)


@bench_app.command("groups")
def bench_groups(rounds: int = typer.Option(5, help="alternating timing rounds"),
                 tile: Optional[str] = typer.Option(None, help="force a tile of the Hopper kernel: small, medium "
                                                    "or large (default: chosen per call)"),
                 json_path: Optional[Path] = _JSON_OPT):
    """group_gemm on 4-64 mixed small problems vs a loop of torch.matmul, eager wall time on both sides."""
    if tile is not None:
        _check_choice("--tile", tile, ("small", "medium", "large"))
    if not _has_hopper():
        _no_gpu_notice("bench groups")
        return
    from .bench.groups_bench import run_groups_suite

    res = run_groups_suite(rounds=rounds, tile=tile, progress=lambda s: console.print(s, highlight=False))
    _print_table("bench groups (bf16, eager)", ("problems", "ms", "loop ms", "ratio"),
                 [(str(r["problems"]), f"{r['ms']:.3f}", f"{r['ms_loop']:.3f}", f"{r['ratio_vs_loop']:.3f}")
                  for r in res["results"]])
    console.print(f"geomean vs loop: {res['geomean_ratio_vs_loop']:.3f}")
    _write_json(json_path, res)


@bench_app.command("elementwise")
def bench_elementwise(
    rounds: int = typer.Option(5, help="alternating timing rounds per case"),
    sweep: bool = typer.Option(False, help="also time the kernel's config candidates (slots, tile, warps)"),
    json_path: Optional[Path] = typer.Option(None, "--json", help="write full results here"),
):
    """warpgemm.add vs torch.add(out=...): 32768^2 fp32 and bf16, 4096^2 fp32 (CUDA-graph timed), in TB/s."""
    if not _has_hopper():
        _no_gpu_notice("bench elementwise")
        return
    from .bench.elementwise_bench import run_elementwise_suite

    res = run_elementwise_suite(rounds, sweep, progress=lambda s: console.print(s, highlight=False))
    table = Table(title=f"elementwise add on {res['environment']['device']} (TB/s = 2 reads + 1 write)")
    for col in ("case", "timing", "ms", "TB/s", "torch TB/s", "ratio", "bitwise"):
        table.add_column(col, justify="right")
    for r in res["results"]:
        table.add_row(r["case"], r["timing"], f"{r['ms']:.3f}", f"{r['tbps']:.2f}", f"{r['tbps_baseline']:.2f}",
                      f"{r['ratio']:.3f}", str(r["bitwise_equal"]))
    console.print(table)
    if res["sweep"]:
        _print_table("config sweep (same process, alternating with torch.add)", ("case", "config", "TB/s", "ratio"),
                     [(r["case"], r["config"], f"{r['tbps']:.2f}", f"{r['ratio']:.3f}") for r in res["sweep"]])
    _write_json(json_path, res)


@bench_app.command("overhead")
def bench_overhead(size: int = typer.Option(256), json_path: Optional[Path] = typer.Option(None, "--json")):
    """Eager host overhead per call (a problem small enough that the CPU is the bottleneck)."""
    if size < 1:
        raise typer.BadParameter(f"must be positive, got {size}", param_hint="--size")
    if not _has_hopper():
        _no_gpu_notice("bench overhead")
        return
    from .bench.gemm_bench import environment
    from .bench.overhead import measure_overhead

    res = measure_overhead(size=size)
    res["environment"] = environment()
    table = Table(title=f"eager per-call overhead at {size}^3 (us per call, back-to-back)")
    for col in ("call", "warpgemm us", "torch us", "difference us"):
        table.add_column(col, justify="right")
    for name, r in res["calls"].items():
        table.add_row(name, f"{r['warpgemm_us']:.1f}", f"{r['torch_us']:.1f}",
                      f"{r['warpgemm_us'] - r['torch_us']:+.1f}")
    console.print(table)
    _write_json(json_path, res)


@app.command()
def tune(suite: Optional[str] = typer.Option(None, help="tune every shape of a suite: " + ", ".join(GEMM_SUITES)),
         shapes: Optional[str] = typer.Option(None, help="comma-separated MxNxK shapes to tune"),
         dtype: str = _DTYPE_OPT, layout: str = _LAYOUT_OPT,
         rep_ms: int = typer.Option(25, help="do_bench time per candidate (ms)"),
         show: bool = typer.Option(False, "--show", help="list the tuning cache's entries and exit"),
         clear: bool = typer.Option(False, "--clear", help="delete the tuning cache and exit"),
         json_path: Optional[Path] = _JSON_OPT):
    """Opt-in tuner: time candidate configs per shape on this GPU and keep the winners in the on-disk cache
    (used by later calls unless WARPGEMM_TUNE=0; WARPGEMM_TUNE=1 tunes new shapes on their first call)."""
    from . import tuning

    if clear:
        console.print(f"removed {tuning.clear()} entries ({tuning.cache_path()})")
        return
    if show:
        found = tuning.entries()
        console.print(f"tuning cache {tuning.cache_path()}: {len(found)} entries", highlight=False)
        for k, e in sorted(found.items()):
            try:
                console.print(f"{k}\n    {e.get('config') or 'heuristics'}: {e['ms'] * 1e3:.1f} us; the heuristics' "
                              f"{e.get('heuristic')}: {e['heuristic_ms'] * 1e3:.1f} us", highlight=False)
            except (KeyError, TypeError):
                console.print(f"{k}\n    malformed entry (ignored by the planner): {e!r}", highlight=False)
        return
    if (suite is None) == (shapes is None):
        raise typer.BadParameter("give exactly one of --suite or --shapes (or --show / --clear)")
    from .bench.gemm_bench import DTYPES, make_operands
    from .bench.suites import GemmCase

    if suite is not None:
        _check_choice("--suite", suite, GEMM_SUITES)
        cases = GEMM_SUITES[suite]()
    else:
        try:
            cases = [GemmCase(*(int(v) for v in s.lower().split("x"))) for s in shapes.split(",")]
        except (TypeError, ValueError):
            raise typer.BadParameter(f"shapes must look like 4096x4096x4096,128x14336x4096; got {shapes!r}")
        if any(min(c) < 1 for c in cases):
            raise typer.BadParameter(f"shapes must have sizes >= 1, got {shapes!r}")
    _check_dtype(dtype)
    _check_layout(layout)
    # The arguments are checked first: a typo is reported as one on any machine.
    if not _has_hopper():
        _no_gpu_notice("tune (it times the sm_90 kernels)")  # exit status 2, as the bench suites
    import warpgemm

    rows, out = [], []
    for case in cases:
        a, b = make_operands(case, DTYPES[dtype], layout)
        console.print(f"{case.label}:", highlight=False)
        try:
            res = warpgemm.tune(a, b, rep_ms=rep_ms, progress=lambda m: console.print(m, highlight=False))
        except ValueError as e:
            console.print(f"  skipped: {e}", highlight=False)
            continue
        e = res.entry
        # What a user's call sees now (the public eager path, tuned plan) against torch, timed alike, in turn.
        ours_ms = tuning.do_bench_ms(functools.partial(warpgemm.matmul, a, b), None, rep_ms)
        torch_ms = tuning.do_bench_ms(functools.partial(torch.matmul, a, b), None, rep_ms)
        rows.append((case.label, e["heuristic"], f"{e['heuristic_ms'] * 1e3:.1f}", e["config"] or "(heuristics)",
                     f"{e['ms'] * 1e3:.1f}", f"{e['heuristic_ms'] / e['ms']:.3f}", f"{ours_ms * 1e3:.1f}",
                     f"{torch_ms * 1e3:.1f}", f"{torch_ms / ours_ms:.3f}"))
        out.append({"shape": case.label, "key": res.key, **e, "matmul_ms": ours_ms, "torch_ms": torch_ms,
                    "rows": [{"config": c, "ms": ms, "max_error_ulps": err, "note": n} for c, ms, err, n in res.rows]})
        del a, b
    _print_table(f"tuned ({dtype}, layout {layout}); cache {tuning.cache_path()}",
                 ("shape", "heuristics", "us", "kept", "us", "gain", "matmul us", "torch us", "vs torch"), rows)
    _write_json(json_path, {"dtype": dtype, "layout": layout, "cache": tuning.cache_path(), "results": out})


@app.command()
def info():
    """Device, versions, and which kernel paths this machine can run."""
    import triton

    from . import __version__

    console.print(f"warpgemm {__version__}, torch {torch.__version__}, triton {triton.__version__}")
    if not torch.cuda.is_available():
        console.print("no CUDA device: the portable kernels run on CPU tensors under TRITON_INTERPRET=1")
        return
    for i in range(torch.cuda.device_count()):
        cap = _env.capability(i)
        path = "hopper (warp-specialized Gluon)" if cap == (9, 0) else "portable (plain Triton)"
        console.print(f"cuda:{i} {_env.device_name(i)} sm_{cap[0]}{cap[1]}, {_env.num_sms(i)} SMs: {path}")


@app.command()
def check(json_path: Optional[Path] = typer.Option(None, "--json")):
    """Correctness matrix on this GPU: ragged shapes x layouts x dtypes, NaN-filled outputs, vs float32."""
    if not _has_hopper():
        if torch.cuda.is_available():
            _no_gpu_notice("check")
        console.print(f"[yellow]check runs the sm_90 kernels: {_no_hopper_reason()}. The portable kernels under the "
                      "Triton interpreter on small shapes instead:[/yellow]")
        _write_json(json_path, {"path": "portable (Triton interpreter, CPU)", "cases": _cpu_demo()})
        return
    from .testing import check_matrix

    rows = check_matrix()
    bad = [r for r in rows if not r["ok"]]
    console.print(f"{len(rows) - len(bad)}/{len(rows)} cases within tolerance")
    for r in bad[:20]:
        console.print(f"[red]FAIL[/red] {r}")
    _write_json(json_path, {"cases": rows})
    raise typer.Exit(1 if bad else 0)


def main():
    # With no GPU the commands fall back to the interpreter, which Triton reads at import: restart with it set.
    if not torch.cuda.is_available() and not _env.INTERPRET:
        os.environ["TRITON_INTERPRET"] = "1"
        os.execv(sys.executable, [sys.executable, "-m", "warpgemm", *sys.argv[1:]])
    app()


if __name__ == "__main__":
    main()
