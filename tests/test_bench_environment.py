"""The benchmarks without a GPU: the commit a JSON records (gemm_bench.source_commit), the config a row names."""
import json
import os
import shutil
import subprocess

import pytest
import torch

from warpgemm.bench.gemm_bench import source_commit


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_modified_tree_is_not_recorded_as_its_commit(tmp_path, monkeypatch):
    # A repository of its own, whatever the caller's git setup (hooks set GIT_DIR; global configs may sign commits).
    for var in [v for v in os.environ if v.startswith("GIT_")]:
        monkeypatch.delenv(var)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    repo, pkg = tmp_path / "repo", tmp_path / "repo" / "pkg"
    pkg.mkdir(parents=True)

    def git(*args):
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false",
                               *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()

    assert source_commit(pkg) is None  # not a checkout
    git("init", "-q")
    (pkg / "__init__.py").write_text("a = 1\n")
    (repo / "README").write_text("x\n")
    assert source_commit(pkg) is None  # the package is not tracked here (an installed copy inside a repository)
    git("add", "pkg/__init__.py", "README")
    git("commit", "-qm", "one")
    head = git("rev-parse", "--short", "HEAD")
    assert source_commit(pkg) == head
    (repo / "notes.txt").write_text("untracked files outside the package do not count\n")
    assert source_commit(pkg) == head
    (pkg / "new_kernel.py").write_text("b = 1\n")  # what a copied working tree brings along
    assert source_commit(pkg) == head + "+modified"
    (pkg / "new_kernel.py").unlink()
    (repo / "README").write_text("y\n")
    assert source_commit(pkg) == head + "+modified"


def test_alternating_rounds_flip_the_order_every_round():
    from warpgemm.bench.timing import alternating_rounds

    order = []
    fns = {"a": "fa", "b": "fb", "c": "fc"}
    times = alternating_rounds(fns, 3, lambda fn: order.append(fn) or len(order))
    assert order == ["fa", "fb", "fc", "fc", "fb", "fa", "fa", "fb", "fc"]
    assert times == {"a": [1, 6, 7], "b": [2, 5, 8], "c": [3, 4, 9]}


def test_bench_rows_name_the_plan_that_runs():
    """`bench` rows are labelled from the plan warpgemm runs (pairs for rows off 32-byte sectors included), for bf16
    and fp8, and a GEMV plan says so (meta tensors: no GPU)."""
    import torch

    from warpgemm.bench.fp8_bench import plan_name as fp8_plan_name
    from warpgemm.bench.gemm_bench import plan_name
    from warpgemm.heuristics import CLUSTER_LARGE, FP8_CLUSTER_LARGE

    meta = lambda *s, dtype=torch.bfloat16: torch.empty(s, dtype=dtype, device="meta")  # noqa: E731
    assert plan_name(meta(4096, 4104), meta(4096, 4104).T) == CLUSTER_LARGE.name
    assert plan_name(meta(1024, 4096), meta(14336, 4096).T) == "128x256x64_s3_w8_g8+128x128@12544"
    assert plan_name(meta(1, 4096), meta(4096, 4096).T) == "gemv"
    e4 = torch.float8_e4m3fn
    one = meta(dtype=torch.float32)
    # 8 waves of pairs: the 3-stage one (off_sector.fp8_four_stages)
    assert fp8_plan_name(meta(4096, 4112, dtype=e4), meta(8192, 4112, dtype=e4).T, one, one) == FP8_CLUSTER_LARGE.name


def test_bench_layouts_lay_out_the_operands_they_name():
    """`--layout`: nt reads the weight along K, nn along N, tn (a weight gradient, dY.T @ X) reads A along M and B
    along N; an unknown layout is refused by name (meta tensors: no GPU)."""
    import torch

    from warpgemm.bench.gemm_bench import LAYOUTS, make_operands
    from warpgemm.bench.suites import GemmCase

    case = GemmCase(384, 640, 512)
    strides = {}
    for layout in LAYOUTS:
        a, b = make_operands(case, torch.bfloat16, layout, device="meta")
        assert (a.shape, b.shape) == ((384, 512), (512, 640))
        strides[layout] = (a.stride(), b.stride())
    assert strides == {"nt": ((512, 1), (1, 512)), "nn": ((512, 1), (640, 1)), "tn": ((1, 384), (640, 1))}
    with pytest.raises(ValueError, match="layout must be one of .*'tn'.*got 'tt'"):
        make_operands(case, torch.bfloat16, "tt", device="meta")


def test_bench_commands_refuse_a_bad_option_before_looking_for_a_gpu():
    """A typo is reported as one (naming the option, the choices and the value), not as a missing GPU."""
    from typer.testing import CliRunner

    from warpgemm.cli import app

    cases = [(["bench", "dense", "--layout", "tt"], "--layout", "must be one of nt, nn, tn, got 'tt'"),
             (["bench", "sweep", "--layout", "tt"], "--layout", "must be one of nt, nn, tn, got 'tt'"),
             (["bench", "mid", "--dtype", "fp64"], "--dtype", "must be one of bf16, fp16, got 'fp64'"),
             (["bench", "train", "--dtype", "fp64"], "--dtype", "must be one of bf16, fp16, got 'fp64'"),
             (["bench", "sweep", "--suite", "big"], "--suite", "got 'big'"),
             (["bench", "fp8", "--scaling", "blockwise"], "--scaling", "must be one of tensorwise, rowwise"),
             (["bench", "fp8", "--suite", "big"], "--suite", "got 'big'"),
             (["bench", "groups", "--tile", "huge"], "--tile", "must be one of small, medium, large, got 'huge'"),
             (["bench", "decode", "--m", "0,-3"], "--m", "M values must be positive, got '0,-3'"),
             (["bench", "decode", "--m", "four"], "--m", "expected comma-separated integers, got 'four'"),
             (["bench", "overhead", "--size", "-1"], "--size", "must be positive, got -1")]
    for args, option, message in cases:
        res = CliRunner().invoke(app, args, terminal_width=200)
        assert res.exit_code == 2 and option in res.output and message in res.output, (args, res.output)
        assert "needs an NVIDIA Hopper GPU" not in res.output


def test_check_writes_its_json_on_a_cpu_machine_too(tmp_path):
    from typer.testing import CliRunner

    from warpgemm import _env
    from warpgemm.cli import app

    if torch.cuda.is_available() or not _env.INTERPRET:
        pytest.skip("the CPU demo runs where there is no GPU, under the Triton interpreter")
    path = tmp_path / "check.json"
    res = CliRunner().invoke(app, ["check", "--json", str(path)], terminal_width=200)
    assert res.exit_code == 0, res.output
    cases = json.loads(path.read_text())["cases"]
    assert len(cases) == 3 and all(c["rel_error"] < 1e-2 for c in cases)


def test_bench_train_cases_and_its_cli_without_a_gpu(tmp_path):
    """`bench train`: the dense suite's six LLM weights at 4096 and 16384 tokens; without a Hopper GPU it says so
    (exit 2) and writes nothing."""
    from typer.testing import CliRunner

    from warpgemm import _env
    from warpgemm.bench.suites import LLM_NK
    from warpgemm.bench.train_bench import train_cases
    from warpgemm.cli import app

    cases = train_cases()
    assert len(cases) == 12 and {(c.N, c.K) for c in cases} == set(LLM_NK) and {c.M for c in cases} == {4096, 16384}
    if torch.cuda.is_available() and _env.is_hopper(torch.cuda.current_device()):
        pytest.skip("a Hopper GPU is here: bench would run")
    res = CliRunner().invoke(app, ["bench", "train", "--json", str(tmp_path / "t.json")], terminal_width=200)
    assert res.exit_code == 2 and "needs an NVIDIA Hopper GPU" in res.output, res.output
    assert not (tmp_path / "t.json").exists()
