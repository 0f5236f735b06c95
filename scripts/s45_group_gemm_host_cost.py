# Session 45, call 12: group_gemm host cost per call (64 problems of bench groups) for 0321658s group_gemm.py
# (saved as scripts/_old_group_gemm.py then), the full storage-size check and the null-base check (_cheap_...):
# the files it loads were removed after the call; kept as the record of what was timed.
import timeit, torch, sys, subprocess
from warpgemm.bench import groups_bench as gb
def load(path, name):
    src = open(path).read().replace("from .. import _env", "from warpgemm import _env").replace(
        "from ..kernels", "from warpgemm.kernels").replace("from . import checks", "from warpgemm.ops import checks")
    m = type(sys)(name); exec(compile(src, name, "exec"), m.__dict__); return m
mods = {"old": load("scripts/_old_group_gemm.py", "o"), "full": load("warpgemm/ops/group_gemm.py", "f"),
        "cheap": load("scripts/_cheap_group_gemm.py", "c")}
shapes, la, lb = gb.mixed_problems(64, seed=64)
for r in range(2):
    for name, mod in mods.items():
        for _ in range(3): mod._plan(la, lb)
        t = min(timeit.timeit(lambda: mod._plan(la, lb), number=200) / 200 * 1e6 for _ in range(5))
        print(r, name, "plan (64 bench problems)", round(t, 1), "us")
        torch.cuda.synchronize()
        t = min(timeit.timeit(lambda: mod.group_gemm(la, lb), number=50) / 50 * 1e6 for _ in range(5))
        torch.cuda.synchronize()
        print(r, name, "group_gemm call (host, async)", round(t, 1), "us")
