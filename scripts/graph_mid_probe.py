"""`bench mid` shapes timed as `bench decode` times them: CUDA-graph replay of back-to-back calls, one per cold
weight copy (what a model's layers see), ours against F.linear in alternating rounds.
Usage: python scripts/graph_mid_probe.py OUT.json [M,M,...] [config,config,...|auto] [NxK,NxK,...] [MxNxK,...]
WARPGEMM_PDL=0 / 1 / all in the environment: programmatic dependent launch off / where the rule gives it / for every
launch (warpgemm.kernels.hopper.gemm.launch_uses_pdl)."""
import json
import sys

from warpgemm.bench.decode_bench import run_decode_suite
from warpgemm.bench.suites import LLM_NK
from warpgemm.candidates import parse_config

out_path = sys.argv[1]
ms = [int(v) for v in (sys.argv[2] if len(sys.argv) > 2 else "128,256").split(",")]
names = sys.argv[3] if len(sys.argv) > 3 else "auto"
configs = None if names == "auto" else [parse_config(c) for c in names.split(",")]
shapes = LLM_NK if len(sys.argv) <= 4 else [tuple(int(v) for v in s.split("x")) for s in sys.argv[4].split(",")]
extra_arg = sys.argv[5] if len(sys.argv) > 5 else ""
extra = [tuple(int(v) for v in s.split("x")) for s in extra_arg.split(",")] if extra_arg else []
res = run_decode_suite(rounds=2, configs=configs, eager=False, warmup_s=2.0,
                       cases=[(m, n, k) for m in ms for n, k in shapes] + extra)
json.dump(res, open(out_path, "w"), indent=1)
