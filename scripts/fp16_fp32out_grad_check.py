"""fp16 products with fp32 outputs: their gradients against float64 on the GPU (the fp32 gradient is scaled into
fp16's range for the backward GEMMs, ops/library.gradient_operand). Prints one line a case; exits 1 on a failure.

    python scripts/fp16_fp32out_grad_check.py
"""
import sys

import torch

import warpgemm
from warpgemm.testing import rel_error

torch.manual_seed(0)
bad = 0


def report(name, got, want):
    global bad
    err = rel_error(got, want)
    ok = bool(got.isfinite().all()) and err <= 3e-3
    bad += not ok
    print(f"{name:<40} rel {err:.2e} finite {bool(got.isfinite().all())} {'ok' if ok else 'FAIL'}")


for M, N, K in ((512, 1024, 768), (300, 4096, 2048), (64, 8192, 4096)):
    a0 = (torch.randn(M, K, device="cuda") * 1e-2).half()
    b0 = (torch.randn(K, N, device="cuda") * 1e-3).half()
    grad = torch.randn(M, N, device="cuda") * 1e4
    a, b = a0.clone().requires_grad_(), b0.clone().requires_grad_()
    warpgemm.matmul(a, b, out_dtype=torch.float32).backward(grad)
    report(f"matmul {M}x{N}x{K} da", a.grad, grad.double() @ b0.double().t())
    report(f"matmul {M}x{N}x{K} db", b.grad, a0.double().t() @ grad.double())
T, E, K, N = 2048, 8, 1024, 512
offs = torch.tensor([200, 200, 900, 1000, 1400, 1800, 2000, 2048], dtype=torch.int32, device="cuda")
a0 = (torch.randn(T, K, device="cuda") * 1e-2).half()
b0 = (torch.randn(E, K, N, device="cuda") * 1e-3).half()
grad = torch.randn(T, N, device="cuda") * 1e4
a, b = a0.clone().requires_grad_(), b0.clone().requires_grad_()
warpgemm.grouped_mm(a, b, offs, out_dtype=torch.float32).backward(grad)
starts = [0] + offs.tolist()[:-1]
da = torch.cat([grad[s:e].double() @ b0[g].double().t() for g, (s, e) in enumerate(zip(starts, offs.tolist()))])
db = torch.stack([a0[s:e].double().t() @ grad[s:e].double() for s, e in zip(starts, offs.tolist())])
report("grouped_mm da", a.grad, da)
report("grouped_mm db", b.grad, db)
sys.exit(1 if bad else 0)
