"""Isolate the grouped_mm illegal instruction: each variant in a fresh process."""
import json, subprocess, sys

VARIANTS = [
    dict(G=8, K=64, N=256, mean=224, out=False, a="col", tail=0),
    dict(G=8, K=64, N=256, mean=224, out=False, a="col", tail=0, cfg="128x128x64_s6_w4_g8"),
    dict(G=8, K=128, N=256, mean=224, out=False, a="col", tail=0, cfg="64x128x128_s4_w4_g8"),
    dict(G=8, K=64, N=256, mean=16, out=False, a="col", tail=0),
]
import os
PREFIX = os.environ.get("PREFIX", "").split()
CHILD = r'''
import json, sys, torch, warpgemm
from warpgemm.ops.grouped import planned_name
p = json.loads(sys.argv[1])
g = torch.Generator(device="cuda").manual_seed(0)
sizes = [p["mean"]] * p["G"]
T = sum(sizes) + p.get("tail", 1)
a = torch.randn(T, p["K"], device="cuda", generator=g).bfloat16()
b = torch.randn(p["G"], p["K"], p["N"], device="cuda", generator=g).bfloat16()
if p.get("a") == "col":
    a = a.t().contiguous().t()
elif p.get("a") == "kpad":
    a = torch.nn.functional.pad(a, (0, 7))[:, :1]
if p.get("mm"):
    out = warpgemm.matmul(a, b[0]); torch.cuda.synchronize()
    err = ((out.float() - a.float() @ b[0].float()).norm() / (a.float() @ b[0].float()).norm()).item()
    print("RESULT matmul", a.stride(), f"err={err:.2e}"); sys.exit(0)
offs = torch.tensor(sizes, device="cuda").cumsum(0).int()
od = torch.float32 if p.get("fp32") else torch.bfloat16
name = planned_name(a, b, od)
if p["out"]:
    out = torch.full((T, p["N"]), float("nan"), device="cuda", dtype=od)
    warpgemm.grouped_mm(a, b, offs, out=out)
else:
    from warpgemm.bench.sweep import parse_config
    cfg = parse_config(p["cfg"]) if p.get("cfg") else None
    out = warpgemm.grouped_mm(a, b, offs, out_dtype=od, config=cfg)
torch.cuda.synchronize()
ref = torch.cat([a[i*p["mean"]:(i+1)*p["mean"]].float() @ b[i].float() for i in range(p["G"])])
err = ((out[:len(sizes)*p["mean"]].float() - ref).norm() / ref.norm()).item()
print("RESULT", name, a.stride(), f"err={err:.2e}")
'''

for v in VARIANTS[int(sys.argv[1]) if len(sys.argv) > 1 else 0:]:
    r = subprocess.run(PREFIX + [sys.executable, "-c", CHILD, json.dumps(v)], capture_output=True, text=True, timeout=120)
    line = [l for l in r.stdout.splitlines() if l.startswith("RESULT")]
    err = [l for l in r.stderr.splitlines() if "Error" in l][-1:] 
    print(v, line[0] if line else "FAIL " + (err[0] if err else r.stderr[-300:]), flush=True)
