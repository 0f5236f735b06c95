#!/bin/bash
# Session 41, call 1: a cluster pair's phantom lower tile (odd tile-row count) with its A box clamped to A's last
# rows (gemm.EDGE_CLAMP_PAIRS) against the box past the end (zero fill), forced configs, then held-out heuristic
# shapes whose plan is a pair over an odd tile-row count, in alternating processes.
export PYTHONPATH=$PWD
d=$OUT/s41c1; mkdir -p $d
C=warpgemm.kernels.hopper.gemm.EDGE_CLAMP_PAIRS=True
for s in off on; do
  set=""; [ $s = on ] && set=$C
  timeout 70 python scripts/partial_rows_probe.py $d/cm128_$s.json --m 384,512 --nk 4096x14336 --config 128x128x64_s6_w4_g8_cm2 --set "$set" 2>&1 | tail -2 | sed "s/^/$s /"
  timeout 90 python scripts/partial_rows_probe.py $d/cl256_$s.json --m 384,512,2944,3072 --nk 4096x14336 --config 128x256x64_s3_w8_g16_cm2 --set "$set" 2>&1 | tail -4 | sed "s/^/$s /"
done
AB_MODES="base: clamp:$C" AB_TIMING=flush AB_REPS=2 AB_TIMEOUT=110 AB_ROUNDS=3 \
AB_SHAPES="2900x7544x8456,866x9568x10200,2315x6552x10680,4218x9832x1480,1567x13672x11864,1387x5728x6504,843x5584x12680,1125x3488x5816,4431x1072x14888,1559x1080x14664,555x1744x10968,553x1408x11688,347x14680x6280,283x12712x15992" \
  bash scripts/setting_ab.sh $d 2>&1 | tail -22
tar czf $OUT/s41c1.tgz -C $OUT s41c1 && rm -rf $d
