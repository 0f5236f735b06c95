"""SM clock, power and throttle reasons while a GEMM runs back to back (steady state, no L2 flush), for warpgemm
configs and cuBLAS on the same operands: is a shape bound by the tensor cores' issue rate or by the power cap?

    python3 scripts/clock_probe.py OUT.json 8192x8192x8192,4096x14336x4096 128x256x64_s3_w8_g8,128x256x64_s3_w8_g16

nvidia-smi samples every 50 ms in the background; each side runs `--seconds` (default 2.5) after a 0.5 s lead-in
that is not counted. Efficiency per clock = TFLOP/s / (median SM clock x 540.7 TFLOP/s per GHz: 132 SMs x 4 tensor
cores x 512 bf16 FMA per clock x 2).
"""
import json
import statistics
import subprocess
import sys
import time

import torch

import warpgemm
from warpgemm.candidates import parse_config
from warpgemm.bench.timing import warm_gpu

FIELDS = "timestamp,clocks.sm,power.draw,clocks_event_reasons.active,temperature.gpu"
PEAK_PER_GHZ = 132 * 4 * 512 * 2 / 1e3  # TFLOP/s per GHz of SM clock, dense bf16


def sample_while(fn, seconds: float, lead: float = 0.5):
    """Run fn back to back for lead + seconds; return (calls timed, elapsed s, samples after the lead-in)."""
    smi = subprocess.Popen(["nvidia-smi", f"--query-gpu={FIELDS}", "--format=csv,noheader,nounits", "-lms", "50"],
                           stdout=subprocess.PIPE, text=True)
    end_lead = time.perf_counter() + lead
    while time.perf_counter() < end_lead:
        fn()
    torch.cuda.synchronize()
    t_lead = time.time()
    start = torch.cuda.Event(enable_timing=True)
    stop = torch.cuda.Event(enable_timing=True)
    calls = 0
    start.record()
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(5):
            fn()
        calls += 5
    stop.record()
    torch.cuda.synchronize()
    t_end = time.time()
    smi.terminate()
    out, _ = smi.communicate()
    rows = []
    for line in out.strip().splitlines():
        parts = [p.strip() for p in line.split(",")]
        try:
            ts = time.mktime(time.strptime(parts[0].split(".")[0], "%Y/%m/%d %H:%M:%S"))
            rows.append((ts, float(parts[1]), float(parts[2]), parts[3], float(parts[4])))
        except (ValueError, IndexError):
            continue
    kept = [r for r in rows if t_lead - 1 <= r[0] <= t_end + 1] or rows
    return calls, start.elapsed_time(stop) / 1e3, kept



def sustained(fn, flops_per_call: float, seconds: float) -> dict:
    """fn back to back for `seconds` (sample_while): its TFLOP/s and the median SM clock and power sampled meanwhile,
    with the throttle reasons seen."""
    calls, elapsed, samples = sample_while(fn, seconds)
    clocks = sorted(s[1] for s in samples)
    power = sorted(s[2] for s in samples)
    return {"tflops": flops_per_call * calls / elapsed / 1e12,
            "sm_clock_mhz": clocks[len(clocks) // 2] if clocks else None,
            "power_w": power[len(power) // 2] if power else None,
            "throttle": sorted({s[3] for s in samples})}

def main():
    out_path, shapes, cfgs = sys.argv[1], sys.argv[2].split(","), sys.argv[3].split(",")
    seconds = float(sys.argv[4]) if len(sys.argv) > 4 else 2.5
    warm_gpu(3.0)
    results = []
    for shape in shapes:
        M, N, K = (int(x) for x in shape.split("x"))
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        w = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        sides = [("cublas", lambda: torch.matmul(a, w.T))]
        for c in cfgs:
            cfg = parse_config(c)
            sides.append((c, lambda cfg=cfg: warpgemm.matmul(a, w.T, config=cfg)))
        for _, fn in sides:
            fn()
        # Two passes in opposite orders, so neither side always runs on a GPU the other has just heated.
        for rnd, order in enumerate((sides, sides[::-1])):
            for name, fn in order:
                calls, secs, rows = sample_while(fn, seconds)
                tflops = 2 * M * N * K * calls / secs / 1e12
                clock = statistics.median(r[1] for r in rows)
                power = statistics.median(r[2] for r in rows)
                reasons = sorted({r[3] for r in rows})
                results.append({"shape": shape, "side": name, "round": rnd, "us": secs / calls * 1e6,
                                "tflops": tflops, "sm_mhz": clock, "power_w": power, "reasons": reasons,
                                "temp_c": statistics.median(r[4] for r in rows),
                                "eff_per_clock": tflops / (clock / 1e3 * PEAK_PER_GHZ), "samples": len(rows)})
                r = results[-1]
                print(f"{shape:>16} {name:>24} r{rnd} {r['us']:9.1f} us {tflops:6.1f} TF/s {clock:6.0f} MHz "
                      f"{power:5.0f} W eff {r['eff_per_clock']:.3f} {reasons}", flush=True)
        del a, w
    json.dump({"device": torch.cuda.get_device_name(), "results": results}, open(out_path, "w"), indent=1)


if __name__ == "__main__":
    main()
