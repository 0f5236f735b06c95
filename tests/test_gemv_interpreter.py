"""The CUDA-core GEMVs: the one-row Triton kernel under the Triton interpreter (the two-row Gluon kernel is checked
by test_compile_sm90 and on the GPU), and the rule that routes products to them."""
import pytest
import torch

from warpgemm import _env
from warpgemm.heuristics import gemv_reason
from warpgemm.kernels import gemv
from warpgemm.ops import gemm_impl
from warpgemm.testing import rel_error


def run_gemv(x, w, bias=None, out_dtype=None, block_n=gemv.BLOCK_N, block_k=gemv.BLOCK_K):
    M, K = x.shape
    N = w.shape[0]
    y = torch.full((M, N), float("nan"), dtype=out_dtype or x.dtype)
    gemv.gemv_kernel[(-(-N // block_n), )](x, w, y, y if bias is None else bias, M, N, K, x.stride(0), x.stride(1),
                                            w.stride(0), y.stride(0), y.stride(1), M_ROWS=1 << (M - 1).bit_length(),
                                            BLOCK_N=block_n, BLOCK_K=block_k, HAS_BIAS=bias is not None,
                                            EVEN_K=K % block_k == 0)
    return y


@pytest.mark.skipif(not _env.INTERPRET, reason="interpreter suite: runs where TRITON_INTERPRET=1")
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_gemv_matches_float64(dtype):
    g = torch.Generator().manual_seed(7)
    # Rows off the block, K off the block and shorter than it, one element; a strided x; 2-4 rows (masked rows).
    for m, n, k in [(1, 37, 100), (1, 1, 1), (1, 9, 256), (1, 130, 600), (3, 64, 128), (4, 5, 300)]:
        x = torch.randn(k, m, generator=g).to(dtype).t() if n == 130 else torch.randn(m, k, generator=g).to(dtype)
        w = torch.randn(n, k, generator=g).to(dtype)
        bias = torch.randn(n, generator=g).to(dtype)
        want = x.double() @ w.double().T
        for block_k in (64, 256):
            got = run_gemv(x, w, block_k=block_k)
            assert got.dtype == dtype and rel_error(got, want) < 1e-2, (m, n, k, block_k)
        got = run_gemv(x, w, bias=bias, out_dtype=torch.float32, block_k=64)
        assert rel_error(got, want + bias.double()) < 1e-5, (m, n, k)


def meta(*shape, dtype=torch.bfloat16):
    return torch.empty(shape, dtype=dtype, device="meta")


def test_batch_one_single_row_goes_to_the_gemv():
    w = meta(14336, 4096)
    p = gemm_impl.plan_hopper(meta(1, 1, 4096), w.t().unsqueeze(0), meta(1, 1, 14336), None, None)
    assert isinstance(p, gemm_impl.GemvPlan) and "GEMV" in p.config_reason
    assert p.launch.grid == 14336 // gemv.BLOCK_N
    assert p.launch.kernel.fn is gemv.gemv_kernel


def test_two_rows_go_to_the_gluon_gemv():
    from warpgemm.kernels import gemv_rows

    w = meta(4103, 4096)
    p = gemm_impl.plan_hopper(meta(1, 2, 4096), w.t().unsqueeze(0), meta(1, 2, 4103), None, None)
    assert isinstance(p, gemm_impl.GemvPlan) and "M=2" in p.config_reason
    assert p.launch.kernel.fn is gemv_rows.gemv_rows_kernel
    assert p.launch.grid == -(-4103 // gemv_rows.BLOCK_N)
    assert p.launch.kernel.constexprs["M_ROWS"] == 2
    with pytest.raises(ValueError, match="1 to 2 rows of x, got M=3"):
        gemv.GemvLaunch(meta(1, 3, 64), meta(8, 64).t().unsqueeze(0), meta(1, 3, 8), False)


def test_other_products_stay_on_the_wgmma_kernel():
    from warpgemm.config import GemmConfig

    w = meta(4096, 4096)
    assert gemv_reason(1, 1, True, torch.bfloat16) and gemv_reason(1, 1, True, torch.float16)
    assert gemv_reason(1, 2, True, torch.bfloat16)
    for batches, m, kcontig, dtype in ((1, 3, True, torch.bfloat16), (2, 1, True, torch.bfloat16),
                                       (1, 1, False, torch.bfloat16), (1, 1, True, torch.float32)):
        assert gemv_reason(batches, m, kcontig, dtype) is None
    # Three rows; B row-major (K, N) (not contiguous along K); a forced config.
    cases = [(meta(1, 3, 4096), w.t().unsqueeze(0), None), (meta(1, 1, 4096), meta(1, 4096, 4096), None),
             (meta(1, 1, 4096), w.t().unsqueeze(0), GemmConfig(64, 16, 256, 5, 4, swap_ab=True))]
    for a3, b3, cfg in cases:
        p = gemm_impl.plan_hopper(a3, b3, meta(1, a3.shape[1], 4096), None, cfg)
        assert isinstance(p, gemm_impl.HopperPlan), (a3.shape, b3.stride(), cfg)


def test_decode_suite_takes_any_row_counts():
    """`bench decode --m` runs exactly the rows asked for (2 is not in the default suite), and refuses nonsense."""
    from warpgemm.bench.decode_bench import DECODE_M, decode_cases
    from warpgemm.bench.suites import LLM_NK

    assert decode_cases((2, )) == [(2, n, k) for n, k in LLM_NK]
    assert len(decode_cases()) == len(DECODE_M) * len(LLM_NK)
    for bad in ((), (0, 4)):
        with pytest.raises(ValueError, match="M values must be positive"):
            decode_cases(bad)
