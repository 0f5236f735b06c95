"""GPU suite for tensors past 2^31 elements (skipped without sm_90, or with under 48 GB of free GPU memory): the
output of a large batch's LM head (32768 x 131072 logits, bf16 and fp8), a token-form grouped_mm over 300,000
tokens, the weight gradient of 160 experts, a swap-AB product whose rows pass 2^31 elements of a strided output, and
an elementwise add of 2.5G elements. Every index past 2^31 must be computed in 64 bits somewhere. Outputs are NaN-filled first; rows
are checked against float32 references at both ends and past the 2^31st element, and the whole output for NaN."""
import pytest
import torch

import warpgemm
from warpgemm.testing import rel_error, rowwise_fp8

DEV = "cuda"
BF = torch.bfloat16
PAST = 2 ** 31


# Without a GPU the gpu marker skips these (conftest) and says why.
_FREE_GB = torch.cuda.mem_get_info()[0] / 2 ** 30 if torch.cuda.is_available() else None

pytestmark = [pytest.mark.gpu, pytest.mark.skipif(_FREE_GB is not None and _FREE_GB < 48,
                                                  reason=f"needs 48 GB of free GPU memory, has {_FREE_GB} GB")]


@pytest.fixture(autouse=True)
def _release():
    yield
    torch.cuda.empty_cache()


def randn(*shape, seed: int, dtype=BF) -> torch.Tensor:
    """Standard-normal values made in `dtype` directly (no float32 copy of a multi-GB tensor)."""
    g = torch.Generator(device=DEV).manual_seed(seed)
    return torch.empty(shape, device=DEV, dtype=dtype).normal_(generator=g)


def rows_past(n_cols: int, count: int = 64) -> int:
    """The end of a `count`-row range that starts at the first row lying wholly past 2^31 elements of a
    (rows, n_cols) row-major output."""
    return -(-PAST // n_cols) + count


def check_rows(out: torch.Tensor, want_rows, rows: range, tol: float = 1e-2) -> None:
    got = out[rows.start:rows.stop].float()
    want = want_rows(rows)
    assert rel_error(got, want) < tol, rows


def test_lm_head_logits_past_2_31_elements():
    """linear(x, W, bias) with x (32768, 1024) and W (131072, 1024): 4.3G output elements, 8.6 GB."""
    M, K, N = 32768, 1024, 131072
    x, w, bias = randn(M, K, seed=1), randn(N, K, seed=2), randn(N, seed=3)
    out = torch.full((M, N), float("nan"), device=DEV, dtype=BF)
    warpgemm.matmul(x, w.t(), out=out)
    assert not out.isnan().any()
    wf = w.float()
    for rows in (range(0, 64), range(rows_past(N) - 64, rows_past(N)), range(M - 64, M)):
        check_rows(out, lambda r: x[r.start:r.stop].float() @ wf.t(), rows)
    del out
    y = warpgemm.linear(x, w, bias)
    assert not y.isnan().any()
    for rows in (range(0, 64), range(M - 64, M)):
        check_rows(y, lambda r: x[r.start:r.stop].float() @ wf.t() + bias.float(), rows)


def test_fp8_rowwise_logits_past_2_31_elements():
    """scaled_mm on e4m3 operands with a scale per row of each, the LM-head shape: 4.3G bf16 output elements."""
    M, K, N = 32768, 1024, 131072
    a8, w8, sa, sb = rowwise_fp8(randn(M, K, seed=12), randn(N, K, seed=13))
    out = warpgemm.scaled_mm(a8, w8.t(), sa, sb, out_dtype=BF)
    assert out.shape == (M, N) and not out.isnan().any()
    wf = w8.float() * sb.t()
    for rows in (range(0, 64), range(rows_past(N) - 64, rows_past(N)), range(M - 64, M)):
        check_rows(out, lambda r: (a8[r.start:r.stop].float() * sa[r.start:r.stop]) @ wf.t(), rows)


def test_swap_ab_rows_into_a_wide_strided_output():
    """16 rows against a 65536-wide weight, written into the first 65536 columns of a (16, 2^28) buffer, whose
    last row starts past 2^31 elements (the swap-AB tile's transposed store)."""
    M, K, N, pitch = 16, 2048, 65536, 2 ** 28
    x, w = randn(M, K, seed=4), randn(N, K, seed=5)
    buf = torch.full((M, pitch), float("nan"), device=DEV, dtype=BF)
    out = buf[:, :N]
    warpgemm.matmul(x, w.t(), out=out)
    want = x.float() @ w.float().t()
    assert rel_error(out, want) < 1e-2
    assert buf[:, N:N + 1024].isnan().all() and buf[:, -1024:].isnan().all()  # nothing written past the view


def test_token_form_grouped_mm_past_2_31_output_elements():
    """300,000 tokens over 8 experts of (512, 8192): a (300000, 8192) output, 2.5G elements."""
    T, K, N, E = 300_000, 512, 8192, 8
    a, b = randn(T, K, seed=6), randn(E, K, N, seed=7)
    sizes = [40_000, 10_000, 60_000, 30_000, 50_000, 20_000, 45_000, 44_000]  # 299,000: 1,000 rows past the end
    offs = torch.tensor(sizes, device=DEV).cumsum(0).to(torch.int32)
    out = torch.full((T, N), float("nan"), device=DEV, dtype=BF)
    warpgemm.grouped_mm(a, b, offs, out=out)
    ends = offs.tolist()
    assert not out[:ends[-1]].isnan().any() and out[ends[-1]:].isnan().all()
    starts = [0] + ends[:-1]

    def want(r):
        g = next(i for i, e in enumerate(ends) if r.start < e)
        assert r.stop <= ends[g] and r.start >= starts[g], "a check range must lie in one group"
        return a[r.start:r.stop].float() @ b[g].float()

    past = rows_past(N)  # inside group 7 (rows 255,000-299,000)
    for rows in (range(0, 64), range(past - 64, past), range(ends[-1] - 64, ends[-1])):
        check_rows(out, want, rows)


def test_weight_gradient_of_160_experts_past_2_31_output_elements():
    """grouped_mm's 2-D x 2-D form: out (160, 4096, 4096), 2.7G elements, the last experts' tiles past 2^31."""
    T, M, N, E = 8192, 4096, 4096, 160
    x, dy = randn(T, M, seed=8), randn(T, N, seed=9)
    sizes = [(i * 37) % 97 + 3 for i in range(E)]
    offs = torch.tensor(sizes, device=DEV).cumsum(0).to(torch.int32)
    assert offs[-1].item() <= T
    out = torch.full((E, M, N), float("nan"), device=DEV, dtype=BF)
    warpgemm.grouped_mm(x.t(), dy, offs, out=out)
    assert not out.isnan().any()
    ends = offs.tolist()
    for g in (0, PAST // (M * N) + 1, E - 1):
        s, e = (ends[g - 1] if g else 0), ends[g]
        assert rel_error(out[g], x[s:e].float().t() @ dy[s:e].float()) < 1e-2, g


def test_elementwise_add_of_2_5g_elements():
    n = 2_500_000_000
    a, b = randn(n, seed=10), randn(n, seed=11)
    out = torch.full((n,), float("nan"), device=DEV, dtype=BF)
    warpgemm.add(a, b, alpha=0.5, out=out)
    for start in (0, PAST - 2 ** 20, n - 2 ** 20):
        sl = slice(start, start + 2 ** 20)
        assert torch.equal(out[sl], (a[sl].float() + 0.5 * b[sl].float()).to(BF)), start
    assert not out.isnan().any()
