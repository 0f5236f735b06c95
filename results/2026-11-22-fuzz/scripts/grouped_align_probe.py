"""Is it K < BK or unaligned group starts that make column-major tokens fault? (the old in-place geometry)"""
import json, subprocess, sys

VARIANTS = [
    dict(K=64, sizes=[224] * 8),
    dict(K=64, sizes=[100, 101, 3, 200, 56, 0, 77, 9]),
    dict(K=64, sizes=[104, 96, 8, 200, 56, 0, 80, 16]),
    dict(K=1, sizes=[224] * 8),
    dict(K=16, sizes=[104, 96, 8, 200, 56, 0, 80, 16]),
    dict(K=64, sizes=[12, 4, 9, 20, 1, 0, 7, 16]),
    dict(K=64, sizes=[16, 8, 8, 24, 8, 0, 8, 16]),
]
CHILD = r'''
import json, sys, torch, warpgemm
import warpgemm.kernels.hopper.tma_operands as tma
p = json.loads(sys.argv[1])
g = torch.Generator(device="cuda").manual_seed(0)
sizes = p["sizes"]; T = sum(sizes); T8 = (T + 7) // 8 * 8
a = torch.randn(p["K"], T8, device="cuda", generator=g).bfloat16().t()
b = torch.randn(len(sizes), p["K"], 256, device="cuda", generator=g).bfloat16()
orig = tma.describe
def old_describe(x, d):  # the geometry before the fix: tokens read column-major in place
    if x.dim() == 3 and x.data_ptr() == a.data_ptr() and d == 2:
        return orig(x, 2) or orig(x, 1)
    return orig(x, d)
tma.describe = old_describe
offs = torch.tensor(sizes, device="cuda").cumsum(0).int()
out = warpgemm.grouped_mm(a, b, offs)
torch.cuda.synchronize()
ref = torch.cat([a[s - n:s].float() @ b[i].float() for i, (n, s) in enumerate(zip(sizes, offs.tolist()))])
err = ((out[:T].float() - ref).norm() / ref.norm()).item()
print("RESULT", f"err={err:.2e}")
'''
for v in VARIANTS:
    r = subprocess.run([sys.executable, "-c", CHILD, json.dumps(v)], capture_output=True, text=True, timeout=120)
    line = [l for l in r.stdout.splitlines() if l.startswith("RESULT")]
    err = [l for l in r.stderr.splitlines() if "Error" in l][-1:]
    print(v, line[0] if line else "FAIL " + (err[0] if err else r.stderr[-300:]), flush=True)
