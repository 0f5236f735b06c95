"""grouped_mm on CPU (the loop path under the Triton interpreter), its validation, and the device-side row-tile
table (a tl kernel, run here by the interpreter)."""
import pytest
import torch

import warpgemm
from warpgemm.kernels.group_table import ENTRY, TABLE_HEADER, build_group_table, table_slots
from warpgemm.testing import rel_error

BF = torch.bfloat16


def _table_reference(offs, rows, bm):
    out, prev = [], 0
    for g, o in enumerate(offs):
        end = min(max(o, prev), rows)
        r = prev
        while r < end:
            out.append((g, r, end))
            r += bm
        prev = end
    return out


@pytest.mark.parametrize("offs, rows", [
    ([3, 3, 9], 10), ([0, 0], 5), ([5, 2, 8, 20], 12), ([-3, 4], 4), ([130, 130, 300, 129, 700], 700),
    (list(range(0, 3000, 3)), 3000), (list(range(1, 2201, 2)), 2200), ([], 10),  # 1100 groups: two chunks
])
def test_row_tile_table_sanitizes_offsets(offs, rows):
    for bm in (16, 32, 64, 128):  # 16 and 32: swap-AB row tiles
        table = build_group_table(torch.tensor(offs, dtype=torch.int32), rows, bm)
        assert table.numel() == table_slots(rows, len(offs), bm)
        t = table.tolist()
        h = TABLE_HEADER
        got = [tuple(t[h + ENTRY * i:h + ENTRY * (i + 1)]) for i in range(t[0])]
        want = _table_reference(offs, rows, bm)
        assert [e[:3] for e in got] == want
        # Each entry also names its group's first row tile and row-tile count (the GEMM's bands stay in a group).
        for i, (g, _, _, first, count) in enumerate(got):
            mine = [j for j, e in enumerate(want) if e[0] == g]
            assert (first, count) == (mine[0], len(mine)) and first <= i < first + count
        assert t[1] == len({g for g, _, _ in want})  # groups with at least one row


def test_forms_match_torch_grouped_mm():
    torch.manual_seed(0)
    a, b = torch.randn(40, 32, dtype=BF), torch.randn(3, 32, 24, dtype=BF)
    offs = torch.tensor([10, 10, 33], dtype=torch.int32)
    assert torch.equal(warpgemm.grouped_mm(a, b, offs)[:33], torch._grouped_mm(a, b, offs)[:33])
    bt = torch.randn(3, 24, 32, dtype=BF).transpose(1, 2)
    assert torch.equal(warpgemm.grouped_mm(a, bt, offs)[:33], torch._grouped_mm(a, bt, offs)[:33])
    x, dy = torch.randn(8, 16, dtype=BF), torch.randn(16, 8, dtype=BF)
    offs2 = torch.tensor([3, 3, 12], dtype=torch.int32)
    assert torch.equal(warpgemm.grouped_mm(x, dy, offs2), torch._grouped_mm(x, dy, offs2))
    a3, b3 = torch.randn(3, 4, 16, dtype=BF), torch.randn(3, 16, 8, dtype=BF)
    assert torch.equal(warpgemm.grouped_mm(a3, b3), torch._grouped_mm(a3, b3))


@pytest.mark.parametrize("call, err, msg", [
    (lambda a, b, o: warpgemm.grouped_mm(a, b), ValueError, "offs is required"),
    (lambda a, b, o: warpgemm.grouped_mm(a, b, o.long()), TypeError, "offs must be torch.int32"),
    (lambda a, b, o: warpgemm.grouped_mm(a, b, o[:2]), ValueError, "offs must have shape (3,)"),
    (lambda a, b, o: warpgemm.grouped_mm(a, b[:, :8], o), ValueError, "to match a's K = 16"),
    (lambda a, b, o: warpgemm.grouped_mm(a.float(), b.float(), o), TypeError, "bfloat16 or torch.float16"),
    (lambda a, b, o: warpgemm.grouped_mm(a, b, o, out_dtype=torch.float16), TypeError, "out_dtype"),
    (lambda a, b, o: warpgemm.grouped_mm(a, b, o, out=torch.empty(3, 3, dtype=BF)), ValueError, "out must have"),
    (lambda a, b, o: warpgemm.grouped_mm(a[None], b, o), ValueError, "offs must be None"),
    (lambda a, b, o: warpgemm.grouped_mm(a[0], b, o), ValueError, "2-D x 3-D"),
    (lambda a, b, o: warpgemm.grouped_mm(a, b, o, config=warpgemm.GemmConfig(128, 128, 64, 4, 4, stream_k=True)),
     ValueError, "grouped_mm runs whole tiles"),
    (lambda a, b, o: warpgemm.grouped_mm(a, b, o, config=warpgemm.GemmConfig(128, 128, 64, 4, 4, split_k=2)),
     ValueError, "split_k must be 1"),
])
def test_bad_arguments_say_what_is_wrong(call, err, msg):
    a, b, o = torch.randn(10, 16, dtype=BF), torch.randn(3, 16, 8, dtype=BF), torch.tensor([2, 5, 9], dtype=torch.int32)
    with pytest.raises(err, match=msg.replace("(", r"\(").replace(")", r"\)")):
        call(a, b, o)


def test_ragged_k_form_refuses_configs_it_cannot_run():
    x, dy, offs = torch.randn(16, 8, dtype=BF), torch.randn(16, 8, dtype=BF), torch.tensor([3, 16], dtype=torch.int32)
    for cfg, msg in ((warpgemm.GemmConfig(64, 16, 256, 5, 4, swap_ab=True), "swap_ab must be False"),
                     (warpgemm.GemmConfig(32, 16, 256, 5, 4, swap_ab=True), "swap_ab must be False")):
        with pytest.raises(ValueError, match=msg):
            warpgemm.grouped_mm(x.t(), dy, offs, config=cfg)


def test_ragged_k_groups_raise_each_end_to_the_one_before():
    """The loop path's copy of the kernel's rule, as the token forms': start = the largest end before the group,
    end = the larger of that and offs[g], both clamped to [0, T]; a decreasing offset makes an empty group."""
    from warpgemm.ops.grouped import _sanitized_bounds

    offs = torch.tensor([100, 50, -20, 250, 1000, 120, 299], dtype=torch.int32)
    assert _sanitized_bounds(offs, 300) == [(0, 100), (100, 100), (100, 100), (100, 250), (250, 300), (300, 300),
                                            (300, 300)]
    x, dy = torch.randn(8, 300, dtype=BF), torch.randn(300, 4, dtype=BF)
    out = warpgemm.grouped_mm(x, dy, offs)
    for g, (s, e) in enumerate(_sanitized_bounds(offs, 300)):
        want = x[:, s:e].float() @ dy[s:e].float()
        assert torch.allclose(out[g].float(), want, rtol=2e-2, atol=1e-1), g


def test_ragged_k_gradients_follow_the_forward_groups_of_decreasing_offsets():
    """offs [12, 5, 20] on the 2-D x 2-D form: groups [0, 12), [12, 12), [12, 20) in the forward and both
    gradients (token-form products), so each token's gradient comes from the one group that summed it."""
    torch.manual_seed(5)
    x0, y0 = torch.randn(8, 20, dtype=BF), torch.randn(20, 4, dtype=BF)
    offs = torch.tensor([12, 5, 20], dtype=torch.int32)
    x, y = x0.clone().requires_grad_(), y0.clone().requires_grad_()
    out = warpgemm.grouped_mm(x, y, offs)
    spans = [(0, 12), (12, 12), (12, 20)]
    fwd = torch.stack([x0[:, s:e].double() @ y0[s:e].double() for s, e in spans])
    assert rel_error(out, fwd) <= 1e-2 and torch.equal(out[1], torch.zeros(8, 4, dtype=BF))
    grad = torch.randn(3, 8, 4, dtype=BF)
    out.backward(grad)
    dx = torch.cat([grad[g].double() @ y0[s:e].double().t() for g, (s, e) in enumerate(spans)], 1)
    dy = torch.cat([x0[:, s:e].double().t() @ grad[g].double() for g, (s, e) in enumerate(spans)])
    assert rel_error(x.grad, dx) <= 1e-2 and rel_error(y.grad, dy) <= 1e-2


def test_ragged_k_tile_follows_tokens_and_output_size():
    """The weight-gradient tile from the mean tokens per group and each group's output (M, N): few tokens 64x128;
    up to 128 the chunked-store tile, one tile-row at a time once a group's output evicts its input panels from
    L2 (K7168 N2048), in bands of 8 below that (K2048 N1408); an fp32 output takes a tile whose epilogue fits."""
    from warpgemm import heuristics as h
    from warpgemm.config import check_config
    from warpgemm.ops.grouped_ragged_k import ragged_k_config

    def pick(M, N, T, G, out=BF):
        return ragged_k_config(M, N, T, G, BF, out)[0]

    assert pick(4096, 1536, 512, 32) == h.SMALL
    assert pick(7168, 2048, 16384, 128) == h.RAGGED_K_ROWS
    assert pick(7168, 2048, 32768, 256) == h.RAGGED_K_ROWS
    assert pick(2048, 1408, 8192, 64) == h.LARGE_ONE_WAVE
    assert pick(2048, 1536, 65536, 128) == h.LARGE
    assert pick(4096, 14336, 16384, 8) == h.LARGE_TALL_BANDS
    assert h.RAGGED_K_ROWS in h.SHIPPED_CONFIGS and h.RAGGED_K_ROWS.group_m == 1
    cfg = pick(7168, 2048, 16384, 128, torch.float32)
    assert check_config(cfg, BF, torch.float32) is None


def test_ragged_k_operand_view():
    """(t, j, x) -> op[t + j, x]: both token dimensions step by the operand's pitch; one token gets a legal pitch."""
    from warpgemm.ops.grouped_ragged_k import ragged_view

    x = torch.empty(300, 72, dtype=BF)
    assert ragged_view(x, 64, 1) == ((300, 64, 72), (72, 72, 1), 1)
    assert ragged_view(x[:1, :13], 128, 2) == ((1, 128, 13), (16, 16, 1), 2)


def test_empty_and_k0():
    a, b = torch.randn(0, 16, dtype=BF), torch.randn(3, 16, 8, dtype=BF)
    assert warpgemm.grouped_mm(a, b, torch.zeros(3, dtype=torch.int32)).shape == (0, 8)
    z = warpgemm.grouped_mm(torch.randn(5, 0, dtype=BF), torch.randn(2, 0, 8, dtype=BF),
                            torch.tensor([2, 5], dtype=torch.int32))
    assert torch.equal(z, torch.zeros(5, 8, dtype=BF))
    # K = 0 into a caller's out: the groups' rows are zero, the rows past offs[-1] keep what they held.
    out = torch.full((10, 3), float("nan"), dtype=BF)
    warpgemm.grouped_mm(torch.randn(10, 0, dtype=BF), torch.randn(2, 0, 3, dtype=BF),
                        torch.tensor([3, 6], dtype=torch.int32), out=out)
    assert torch.equal(out[:6], torch.zeros(6, 3, dtype=BF)) and out[6:].isnan().all()
    # Ends that fall back are raised to the one before (as the other paths read offs): rows 0-6 are groups' rows.
    out = torch.full((10, 3), float("nan"), dtype=BF)
    warpgemm.grouped_mm(torch.randn(10, 0, dtype=BF), torch.randn(2, 0, 3, dtype=BF),
                        torch.tensor([7, 2], dtype=torch.int32), out=out)
    assert torch.equal(out[:7], torch.zeros(7, 3, dtype=BF)) and out[7:].isnan().all()


def test_backward_matches_a_per_group_reference():
    torch.manual_seed(1)
    a0, b0 = torch.randn(40, 16, dtype=BF), torch.randn(3, 16, 24, dtype=BF)
    offs = torch.tensor([10, 10, 33], dtype=torch.int32)
    grad = torch.randn(40, 24, dtype=BF)
    a, b = a0.clone().requires_grad_(), b0.clone().requires_grad_()
    warpgemm.grouped_mm(a, b, offs).backward(grad)
    ra, rb = a0.float().requires_grad_(), b0.float().requires_grad_()
    ref = torch.cat([ra[0:10] @ rb[0], ra[10:10] @ rb[1], ra[10:33] @ rb[2], torch.zeros(7, 24)])
    ref.backward(grad.float())
    assert torch.allclose(a.grad.float(), ra.grad, rtol=2e-2, atol=5e-2)
    assert torch.allclose(b.grad.float(), rb.grad, rtol=2e-2, atol=5e-2)
    assert torch.equal(a.grad[33:], torch.zeros(7, 16, dtype=BF))


def test_backward_follows_the_forward_groups_of_decreasing_offsets():
    """offs [12, 5, 20]: the forward raises each end to the one before ([0, 12), [12, 12), [12, 20)); the weight's
    gradient must use the same groups (its ragged-K kernel only clamps ends: it once gave group 2 tokens 5-19)."""
    torch.manual_seed(3)
    a0, b0 = torch.randn(20, 8, dtype=BF), torch.randn(3, 8, 4, dtype=BF)
    a, b = a0.clone().requires_grad_(), b0.clone().requires_grad_()
    warpgemm.grouped_mm(a, b, torch.tensor([12, 5, 20], dtype=torch.int32)).backward(torch.ones(20, 4, dtype=BF))
    want = torch.stack([a0[0:12].float().t().sum(1), torch.zeros(8), a0[12:20].float().t().sum(1)])
    assert torch.allclose(b.grad.float(), want.unsqueeze(2).expand(3, 8, 4), rtol=2e-2, atol=5e-2)


def test_fp16_backward_of_an_fp32_output_does_not_overflow():
    """grouped_mm(out_dtype=torch.float32) on fp16: gradients of 1e5 scale into fp16's range (library.py)."""
    torch.manual_seed(4)
    a0, b0 = (torch.randn(20, 8) * 1e-2).half(), (torch.randn(3, 8, 4) * 1e-3).half()
    offs = torch.tensor([6, 12, 20], dtype=torch.int32)
    grad = torch.randn(20, 4) * 1e5
    a, b = a0.clone().requires_grad_(), b0.clone().requires_grad_()
    warpgemm.grouped_mm(a, b, offs, out_dtype=torch.float32).backward(grad)
    spans = [(0, 6), (6, 12), (12, 20)]
    da = torch.cat([grad[s:e].double() @ b0[g].double().t() for g, (s, e) in enumerate(spans)])
    db = torch.stack([a0[s:e].double().t() @ grad[s:e].double() for s, e in spans])
    assert a.grad.isfinite().all() and b.grad.isfinite().all()
    assert rel_error(a.grad, da) <= 2e-3 and rel_error(b.grad, db) <= 2e-3
    # The 2-D x 2-D form (groups along K: x (M, T), y (T, N)), whose gradients are token-form products.
    x0, y0 = (torch.randn(8, 20) * 1e-2).half(), (torch.randn(20, 4) * 1e-3).half()
    grad = torch.randn(3, 8, 4) * 1e5
    x, y = x0.clone().requires_grad_(), y0.clone().requires_grad_()
    warpgemm.grouped_mm(x, y, offs, out_dtype=torch.float32).backward(grad)
    dx = torch.cat([grad[g].double() @ y0[s:e].double().t() for g, (s, e) in enumerate(spans)], 1)
    dy = torch.cat([x0[:, s:e].double().t() @ grad[g].double() for g, (s, e) in enumerate(spans)])
    assert x.grad.isfinite().all() and rel_error(x.grad, dx) <= 2e-3
    assert y.grad.isfinite().all() and rel_error(y.grad, dy) <= 2e-3


def test_group_gemm_mixed_problems_in_one_launch():
    torch.manual_seed(2)
    shapes = [(5, 7, 3), (33, 16, 40), (0, 8, 8), (16, 0, 8), (20, 24, 0), (64, 65, 33)]
    la = [torch.randn(m, k, dtype=BF) for m, k, n in shapes]
    lb = [torch.randn(k, n, dtype=BF) for m, k, n in shapes]
    lb[1] = torch.randn(40, 16, dtype=BF).t()  # a transposed view
    outs = warpgemm.group_gemm(la, lb)
    for a, b, c in zip(la, lb, outs):
        want = (a.float() @ b.float()).to(BF)
        assert c.shape == want.shape and torch.equal(c, want)


def test_group_gemm_bad_arguments():
    a, b = torch.randn(4, 8, dtype=BF), torch.randn(8, 3, dtype=BF)
    assert warpgemm.group_gemm([], []) == []
    with pytest.raises(ValueError, match="same length"):
        warpgemm.group_gemm([a], [])
    with pytest.raises(ValueError, match="matching K"):
        warpgemm.group_gemm([a], [b[:5]])
    with pytest.raises(TypeError, match="dtype of list_a"):
        warpgemm.group_gemm([a, a.half()], [b, b.half()])
    with pytest.raises(TypeError, match=r"list_a\[0\] must be a torch.Tensor, got NoneType"):
        warpgemm.group_gemm([None], [b])
    with pytest.raises(RuntimeError, match="does not record autograd"):
        warpgemm.group_gemm([a], [b.clone().requires_grad_()])
    with torch.no_grad():
        assert warpgemm.group_gemm([a], [b.clone().requires_grad_()])[0].shape == (4, 3)


def test_out_and_out_dtype_must_agree():
    a, b, o = torch.randn(10, 16, dtype=BF), torch.randn(3, 16, 8, dtype=BF), torch.tensor([2, 5, 9], dtype=torch.int32)
    with pytest.raises(TypeError, match="out must have dtype out_dtype"):
        warpgemm.grouped_mm(a, b, o, out=torch.empty(10, 8, dtype=BF), out_dtype=torch.float32)


def test_group_gemm_tma_eligibility():
    """Which operands the Hopper kernel may read through device-built descriptors (decided on the host; a bad
    descriptor would read garbage silently): 16-byte aligned bases and pitches, one B layout for all problems."""
    from warpgemm.ops.group_gemm import _pitch, _plan

    assert _pitch(4, 64, 64, 1, 0) == 64
    assert _pitch(4, 60, 60, 1, 0) is None  # 120-byte pitch
    assert _pitch(1, 60, 7, 1, 0) == 64  # a single row: any covering pitch
    assert _pitch(4, 64, 64, 1, 2) is None  # misaligned base
    assert _pitch(4, 64, 1, 4, 0) is None  # column-major
    x = lambda *s: torch.empty(s, dtype=BF)  # noqa: E731
    layout = lambda la, lb: _plan(la, lb).b_layout  # noqa: E731
    assert layout([x(8, 64), x(3, 16)], [x(64, 32), x(16, 8)]) is False  # row-major (K, N)
    assert layout([x(8, 64), x(3, 16)], [x(32, 64).t(), x(5, 16).t()]) is True  # (N, K) weights, N = 5 too
    assert layout([x(8, 64), x(3, 16)], [x(64, 32), x(8, 16).t()]) is None  # layouts disagree
    assert layout([x(8, 64), x(3, 16)], [x(64, 32), x(16, 1)]) is None  # a (K, 1) column: only transposed
    assert layout([x(8, 64).t().contiguous().t(), x(3, 16)], [x(64, 32), x(16, 8)]) is None  # column-major A
    assert layout([x(8, 60), x(3, 16)], [x(60, 32), x(16, 8)]) is None  # A pitch of 120 bytes
    assert layout([x(8, 64), x(0, 16), x(3, 0)], [x(64, 32), x(16, 3), x(0, 5)]) is False  # empty ones don't count
    p = _plan([x(8, 64), x(0, 16), x(3, 0), x(5, 8)], [x(64, 32), x(16, 3), x(0, 5), x(8, 8)])
    assert p.zero_k == [2] and p.ms == [8, 5] and p.ns == [32, 8]
    assert [off for _, _, off in p.shapes] == [0, 256, 256, 320] and p.total == 384
    assert list(p.table[2::10]) == [0, 320]  # the C offsets of the live problems


def test_group_gemm_outputs_share_one_allocation():
    la = [torch.randn(5, 8, dtype=BF), torch.randn(3, 16, dtype=BF)]
    lb = [torch.randn(8, 7, dtype=BF), torch.randn(16, 9, dtype=BF)]
    outs = warpgemm.group_gemm(la, lb)
    base = outs[0].untyped_storage().data_ptr()
    assert all(c.untyped_storage().data_ptr() == base for c in outs)
    assert all(c.is_contiguous() and (c.data_ptr() - base) % 128 == 0 for c in outs)


def test_grouped_tile_choice_follows_groups_and_rows():
    from warpgemm.heuristics import GROUPED_LARGE, GROUPED_NARROW_N, GROUPED_SWAP, LARGE, LARGE_TALL_BANDS, SMALL
    from warpgemm.ops.grouped import grouped_config

    bf = torch.bfloat16
    assert grouped_config(16384, 128, bf, bf) == GROUPED_LARGE  # fine-grained experts: 4-row bands
    assert grouped_config(16384, 8, bf, bf) == LARGE_TALL_BANDS  # few large experts, 128 tile-rows: 16-row bands
    assert grouped_config(1024, 8, bf, bf) == LARGE             # 8 tile-rows in all: 8-row bands
    assert grouped_config(1536, 32, bf, bf) == SMALL            # 48 rows per group: 64-row tiles
    assert grouped_config(4096, 64, bf, bf) == GROUPED_NARROW_N  # 64 groups of 64 rows: a weight stream
    assert grouped_config(2048, 64, bf, bf) == SMALL            # 32 rows per group: 64-row tiles still
    assert grouped_config(4000, 63, bf, bf) == SMALL            # 63 groups: 64-row tiles
    assert grouped_config(8192, 256, bf, torch.float32) == SMALL  # NARROW_N's fp32 epilogue does not fit
    assert GROUPED_SWAP.swap_ab                                 # <= 16: weight streaming, swap-AB
    # N = 1408 leaves most of the last 256-wide column empty: 128-wide tiles with 128-deep K steps.
    assert grouped_config(8192, 64, bf, bf, 1408) == GROUPED_NARROW_N
    assert grouped_config(16384, 128, bf, bf, 2048) == GROUPED_LARGE
    assert grouped_config(16384, 8, bf, bf, 1408) == LARGE_TALL_BANDS  # 8 large experts: compute-bound, 128x256
    for rows, groups in ((512, 32), (256, 64), (0, 8)):
        assert grouped_config(rows, groups, bf, bf) == GROUPED_SWAP
    from warpgemm.ops.grouped import planned_config  # what the bench reports: the same rule from the operands
    experts = torch.empty(64, 1408, 2048, dtype=bf, device="meta").transpose(1, 2)
    assert planned_config(torch.empty(8192, 2048, dtype=bf, device="meta"), experts) == GROUPED_NARROW_N
    for rows, groups in ((16384, 128), (512, 32)):
        assert warpgemm.check_config(grouped_config(rows, groups, bf, torch.float32), bf, torch.float32) is None


def test_streaming_tile_is_offered_only_where_groups_may_fit_one_row_tile():
    from warpgemm.heuristics import GROUPED_LARGE, GROUPED_STREAM, LARGE
    from warpgemm.ops.grouped import planned_name, streaming_config

    bf = torch.bfloat16
    assert streaming_config(GROUPED_LARGE, 16384, 128, bf, bf) == GROUPED_STREAM  # 128 rows per group on average
    assert streaming_config(GROUPED_LARGE, 65536, 128, bf, bf) is None  # 512: some group has a second tile
    assert streaming_config(LARGE, 4096, 8, bf, bf) is None  # few large experts keep one tile
    assert streaming_config(GROUPED_LARGE, 16384, 128, bf, torch.float32) is None  # fp32 out does not fit it
    assert GROUPED_STREAM.block_m == GROUPED_LARGE.block_m  # both GEMMs read one row-tile table
    experts = torch.empty(256, 7168, 2048, dtype=bf, device="meta")
    assert planned_name(torch.empty(32768, 7168, dtype=bf, device="meta"), experts) == \
        f"{GROUPED_LARGE.name}|{GROUPED_STREAM.name}"


def test_every_form_traces_under_torch_compile_and_differentiates():
    """grouped_mm without out= goes through registered ops: fullgraph torch.compile traces the token, ragged-K and
    batched forms, and backward (on the same kernels) matches a per-group fp64 reference."""
    torch.manual_seed(2)
    offs = torch.tensor([10, 10, 33], dtype=torch.int32)
    bounds = [(0, 10), (10, 10), (10, 33)]

    @torch.compile(fullgraph=True, backend="aot_eager")
    def f(x, w, dy):
        return warpgemm.grouped_mm(x, w, offs), warpgemm.grouped_mm(x.t(), dy, offs), warpgemm.grouped_mm(w, w.mT)

    x = torch.randn(40, 16, dtype=BF).requires_grad_()
    w = torch.randn(3, 16, 24, dtype=BF).requires_grad_()
    dy = torch.randn(40, 24, dtype=BF).requires_grad_()
    h, dw, ww = f(x, w, dy)
    (h[:33].float().sum() + dw.float().pow(2).sum() + ww.float().sum()).backward()
    xr, wr, dyr = (t.detach().double().requires_grad_() for t in (x, w, dy))
    hr = torch.cat([xr[s:e] @ wr[g] for g, (s, e) in enumerate(bounds)])
    dwr = torch.stack([xr[s:e].t() @ dyr[s:e] for s, e in bounds])
    (hr.sum() + dwr.pow(2).sum() + (wr @ wr.mT).sum()).backward()
    for got, want in ((h[:33], hr), (dw, dwr), (x.grad, xr.grad), (w.grad, wr.grad), (dy.grad, dyr.grad)):
        assert rel_error(got, want) < 2e-2
    assert torch.equal(x.grad[33:], torch.zeros(7, 16, dtype=BF))
    assert torch.equal(dy.grad[33:], torch.zeros(7, 24, dtype=BF))


def test_grouped_ops_pass_opcheck():
    offs = torch.tensor([3, 3, 12], dtype=torch.int32)
    x, w, dy = torch.randn(12, 8, dtype=BF), torch.randn(3, 8, 8, dtype=BF), torch.randn(12, 8, dtype=BF)
    torch.library.opcheck(torch.ops.warpgemm.grouped_mm_tokens, (x, w, offs, BF, None),
                          test_utils=("test_schema", "test_faketensor"))
    torch.library.opcheck(torch.ops.warpgemm.grouped_mm_ragged_k, (x.t(), dy, offs, BF, None),
                          test_utils=("test_schema", "test_faketensor"))


def test_groups_along_n_form_matches_torch_and_differentiates():
    """3-D x 2-D: a (G, M, K) x b (K, N), columns of group g use a[g]; computed as the transposed token form."""
    torch.manual_seed(3)
    a, b = torch.randn(3, 5, 16, dtype=BF), torch.randn(16, 24, dtype=BF)
    offs = torch.tensor([8, 8, 20], dtype=torch.int32)
    got = warpgemm.grouped_mm(a, b, offs)
    assert got.shape == (5, 24) and got.dtype == BF
    assert torch.equal(got[:, :20], torch._grouped_mm(a, b, offs)[:, :20])
    out = torch.full((5, 24), float("nan"), dtype=BF)
    assert warpgemm.grouped_mm(a, b, offs, out=out) is out and torch.equal(out[:, :20], got[:, :20])
    assert torch.isnan(out[:, 20:].float()).all()  # columns past offs[-1] keep the caller's contents
    # Gradients against a float64 loop over groups.
    a64, b64 = a.double().requires_grad_(), b.double().requires_grad_()
    ref = torch.cat([a64[g] @ b64[:, s:e] for g, (s, e) in enumerate([(0, 8), (8, 8), (8, 20)])], dim=1)
    ga, gb = a.clone().requires_grad_(), b.clone().requires_grad_()
    y = warpgemm.grouped_mm(ga, gb, offs)
    w = torch.randn(5, 20, dtype=torch.float64)
    (y[:, :20].double() * w).sum().backward()
    (ref * w).sum().backward()
    assert rel_error(ga.grad, a64.grad) < 2e-2 and rel_error(gb.grad[:, :20], b64.grad[:, :20]) < 2e-2
    with pytest.raises(ValueError, match=r"b must have shape \(16, N\) to match a's K = 16, got \(8, 24\)"):
        warpgemm.grouped_mm(a, b[:8], offs)
    with pytest.raises(ValueError, match=r"offs must have shape \(3,\)"):
        warpgemm.grouped_mm(a, b, offs[:2])
    with pytest.raises(ValueError, match=r"out must have shape \(5, 24\), got \(24, 5\)"):
        warpgemm.grouped_mm(a, b, offs, out=torch.empty(24, 5, dtype=BF))
    # The same form traces under torch.compile(fullgraph=True) (through the token op on transposed views).
    f = torch.compile(lambda a, b: warpgemm.grouped_mm(a, b, offs), fullgraph=True, backend="aot_eager")
    assert torch.equal(f(a, b)[:, :20], got[:, :20])


def test_every_form_infers_shapes_on_meta_tensors():
    def m(*shape):
        return torch.empty(*shape, dtype=BF, device="meta")

    offs = torch.empty(3, dtype=torch.int32, device="meta")
    assert warpgemm.grouped_mm(m(40, 16), m(3, 16, 24), offs).shape == (40, 24)
    assert warpgemm.grouped_mm(m(3, 4, 16), m(3, 16, 8)).shape == (3, 4, 8)
    assert warpgemm.grouped_mm(m(16, 40), m(40, 24), offs).shape == (3, 16, 24)
    assert warpgemm.grouped_mm(m(3, 5, 16), m(16, 24), offs).shape == (5, 24)
    given = m(40, 24)
    assert warpgemm.grouped_mm(m(40, 16), m(3, 16, 24), offs, out=given) is given
    assert warpgemm.grouped_mm(m(40, 16), m(3, 16, 24), offs, out_dtype=torch.float32).dtype == torch.float32
