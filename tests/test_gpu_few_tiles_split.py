"""GPU checks of the few-tiles split (warpgemm/few_tiles_split.py): the products the heuristics now cut along K, on
both B layouts, with a bias, fp16, fp32 outputs and a ragged K (repeats: test_gpu_gemm.test_deterministic)."""
import pytest
import torch

import warpgemm
from warpgemm.few_tiles_split import SPLIT_TILE
from warpgemm.testing import assert_ok, check_matmul, rand

pytestmark = pytest.mark.gpu
BF, FP = torch.bfloat16, torch.float16
DEV = "cuda"
SHAPES = [(104, 2832, 7816), (90, 1048, 6664), (204, 1352, 6223), (160, 1904, 5192), (65, 1100, 12289)]


def test_the_heuristics_take_the_split_and_are_right():
    if torch.cuda.get_device_properties(0).multi_processor_count != 132:
        pytest.skip("the shapes below are chosen for 132 SMs")
    g = torch.Generator(device=DEV).manual_seed(41)
    for M, N, K in SHAPES:
        for dtype in (BF, FP):
            a, w = rand(M, K, g=g, dtype=dtype), rand(N, K, g=g, dtype=dtype)
            for b in (w.T, w.T.contiguous()):
                plan = warpgemm.explain(a, b)
                assert SPLIT_TILE.name in plan, plan
                assert_ok(check_matmul(a, b), f"{M}x{N}x{K} {dtype} {plan}")
            bias = rand(N, g=g, dtype=dtype)
            assert_ok(check_matmul(a, w.T, bias=bias), f"{M}x{N}x{K} {dtype} bias")
            # fp32 outputs keep the 64x64 tiles: the split tile's fp32 output tile does not fit beside its ring.
            assert_ok(check_matmul(a, w.T, out_dtype=torch.float32), f"{M}x{N}x{K} {dtype} fp32 out")
