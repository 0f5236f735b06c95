#!/usr/bin/env bash
# Session 48, call 4: a mixture-of-experts layer's training step against torch._grouped_mm's (host and wall), then
# a cProfile of our smallest step with the engine's device threads off (the backward on the profiled thread).
source "$(dirname "$0")/gpu_env.sh" "$@"
nvidia-smi --query-gpu=name,power.limit --format=csv,noheader | tee "$out/gpu.txt"
timeout 240 $py scripts/grouped_train_step.py "$out/grouped_train_step.json" 2>&1 | tee "$out/grouped_train_step.txt"
timeout 120 $py - > "$out/grouped_step_profile.txt" 2>&1 <<'PY'
import torch, warpgemm
from warpgemm.bench.timing import print_host_profile
T, K, N, G = 512, 512, 512, 8
x = torch.randn(T, K, device="cuda", dtype=torch.bfloat16).requires_grad_()
w = torch.randn(G, N, K, device="cuda", dtype=torch.bfloat16).transpose(1, 2).detach().requires_grad_()
offs = torch.arange(1, G + 1, device="cuda", dtype=torch.int32) * (T // G)
dy = torch.randn(T, N, device="cuda", dtype=torch.bfloat16)
def step():
    x.grad = w.grad = None
    warpgemm.grouped_mm(x, w, offs).backward(dy)
for _ in range(50):
    step()
with torch.autograd.set_multithreading_enabled(False):
    print_host_profile(step, 500, rows=40)
PY
head -60 "$out/grouped_step_profile.txt"
