"""Run small GPU cases, each in its own subprocess under a timeout, to locate hangs."""
import subprocess, sys, os, json
CASES = {
 "A_128x128_w8": "M=N=K=1024; cfg=GemmConfig(128,128,64,4,8)",
 "B_64x256_w4": "M=N=K=1024; cfg=GemmConfig(64,256,64,3,4)",
 "C_large_preg24": "M=N=K=1024; cfg=LARGE.replace(producer_regs=24)",
 "D_large_s2": "M=N=K=1024; cfg=LARGE.replace(stages=2)",
 "E_256x128_w8": "M=N=K=1024; cfg=GemmConfig(256,128,64,3,8)",
 "F_large_maxnreg256": "import os; os.environ['WARPGEMM_DEBUG_MAXNREG']='256'; M=N=K=1024; cfg=LARGE",
 "G_large_256": "M=N=K=256; cfg=LARGE",
 "H_large_k64": "M=N=1024; K=64; cfg=LARGE",
 "I_128x256_w4_acc": "M=N=K=1024; cfg=GemmConfig(128,128,64,3,4)",
}
BODY = r'''
import torch, time, sys
import warpgemm
from warpgemm.heuristics import LARGE, MEDIUM, SMALL_M
from warpgemm.config import GemmConfig
{setup}
a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16); w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
out = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
print("explain:", warpgemm.explain(a, w.T, config=cfg), flush=True)
t=time.time(); warpgemm.matmul(a, w.T, out=out, config=cfg); print("launched", time.time()-t, flush=True)
torch.cuda.synchronize(); print("synced", time.time()-t, flush=True)
ref = a.float() @ w.float().T
print("relerr", ((out.float()-ref).norm()/ref.norm()).item(), "nan", out.isnan().any().item(), flush=True)
'''
only = sys.argv[1:] or list(CASES)
for name in only:
    code = BODY.format(setup=CASES[name])
    try:
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=int(os.environ.get("CASE_TIMEOUT", "45")))
        print(f"== {name}: rc={r.returncode}\n{r.stdout[-1500:]}{r.stderr[-2500:]}", flush=True)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        print(f"== {name}: TIMEOUT\n{out[-1500:]}", flush=True)
