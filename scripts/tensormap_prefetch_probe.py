"""Does fetching the TMA descriptors early shorten a decode GEMM? (probe; run each mode in its own process)

    python3 scripts/tensormap_prefetch_probe.py OUT.json [prefetch]

A TMA copy reads its 128-byte descriptor (a kernel parameter) on first use, after `griddepcontrol.wait`. With
`prefetch`, a PTX post-pass inserts `prefetch.tensormap` for every descriptor parameter right at kernel entry, so
the fetch overlaps the wait on the previous kernel. Triton's cache key does not see the pass: use a fresh
TRITON_CACHE_DIR per mode. Times a few decode shapes with `bench decode`'s method (CUDA graphs, cold weights)
against F.linear in the same process; compare the ratios across the two modes' processes.
"""
import json
import re
import sys

from triton import knobs


def add_tensormap_prefetch(ptx: str) -> str:
    # `cvta.param.u64 %rdA, %rdB;` turns a .param descriptor's address into the generic one the TMA copies use.
    out, n = re.subn(r"(\tcvta\.param\.u64 \t(%rd\d+), %rd\d+;\n)", r"\1\tprefetch.tensormap [\2];\n", ptx)
    assert n > 0, "no descriptor parameter found"
    return out


def hook(backend, stages, options, language, capability):
    make_ptx = stages["ptx"]
    stages["ptx"] = lambda src, metadata: add_tensormap_prefetch(make_ptx(src, metadata))


def main():
    out_path = sys.argv[1]
    mode = sys.argv[2] if len(sys.argv) > 2 else "plain"
    if mode == "prefetch":
        knobs.runtime.add_stages_inspection_hook = hook
    from warpgemm.bench.decode_bench import run_decode_suite

    cases = [(m, n, k) for n, k in [(4096, 4096), (14336, 4096), (8192, 8192), (4096, 14336)] for m in (1, 16, 64)]
    res = run_decode_suite(rounds=3, eager=False, cases=cases, warmup_s=2.0)
    res["probe_mode"] = mode
    json.dump(res, open(out_path, "w"), indent=1)
    for r in res["results"]:
        print(f"{mode:>8} {r['shape']:>14} {r['us']:7.2f} us {r['tbs']:.3f} TB/s  F.linear {r['us_baseline']:7.2f} us  "
              f"ratio {r['ratio']:.3f}")


if __name__ == "__main__":
    main()
