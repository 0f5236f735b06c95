#!/bin/bash
# Session 39, call 4: fp8 from 512 rows, rows off sectors: the 4-stage chunked-store pair at <= 4 waves (per-tensor,
# seed 113) and for row-wise scales (seed 114), each against the plan with its flag off in the same process.
export PYTHONPATH=$PWD
d=$OUT/fp8large; mkdir -p $d
timeout 200 python scripts/fp8_wide_probe.py $d/tw113.json --rounds 3 --configs none \
  --rule-off off_sector.FP8_PAIR_FOUR_STAGES \
  --shapes 1777x5680x1840,1260x4016x2704,763x11152x1104,742x11984x6576,1011x8496x3536,684x11344x1264,3491x2304x1552,2464x5600x3920,1224x7408x2128,2836x2320x3760,1838x4992x2192,891x5952x4304 \
  > $d/tw113.log 2>&1; tail -24 $d/tw113.log
timeout 200 python scripts/fp8_wide_probe.py $d/rw114.json --rounds 3 --configs none --scaling rowwise \
  --rule-off off_sector.FP8_ROWWISE_PAIRS \
  --shapes 849x8896x1424,3935x10608x1872,584x18640x6608,3288x5072x1296,2443x29600x1904,1104x20800x4880,3445x8832x1648,3697x16960x6192,1026x2928x7760,3505x1440x1200 \
  > $d/rw114.log 2>&1; tail -20 $d/rw114.log
timeout 120 python -m pytest -q tests/test_gpu_fp8.py -k "shapes or off_sectors or cm2" 2>&1 | tail -3
tar czf $OUT/fp8large.tgz -C $OUT fp8large && rm -rf $d
