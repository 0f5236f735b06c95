#!/bin/bash
# Session 41, call 2: a cluster pair's phantom lower tile, three ways (gemm.PHANTOM_A: 0 A boxes past the end, zero
# filled; 1 clamped to A's last rows; 2 no A loads): forced pairs, then held-out heuristic shapes whose plan is a pair
# over an odd tile-row count (call 1's 14 and 8 fresh), in alternating processes; the GPU tests.
export PYTHONPATH=$PWD
d=$OUT/s41c2; mkdir -p $d
P=warpgemm.kernels.hopper.gemm.PHANTOM_A
timeout 200 python -m pytest -q tests/test_gpu_edge_pieces.py tests/test_gpu_clusters.py > $d/pytest.log 2>&1; tail -1 $d/pytest.log; grep -E "^(FAILED|ERROR)" $d/pytest.log | head
for s in 0 2; do
  timeout 60 python scripts/partial_rows_probe.py $d/cm128_$s.json --m 384,512 --nk 4096x14336 --config 128x128x64_s6_w4_g8_cm2 --set "$P=$s" 2>&1 | tail -2 | sed "s/^/$s /"
  timeout 60 python scripts/partial_rows_probe.py $d/cl256c4_$s.json --m 384,512 --nk 4096x14336 --config 128x256x64_s4_w8_g16_c4_cm2 --set "$P=$s" 2>&1 | tail -2 | sed "s/^/$s /"
done
AB_MODES="zero:$P=0 clamp:$P=1 skip:$P=2" AB_TIMING=flush AB_REPS=2 AB_TIMEOUT=110 AB_ROUNDS=3 \
AB_SHAPES="2900x7544x8456,866x9568x10200,2315x6552x10680,4218x9832x1480,1567x13672x11864,1387x5728x6504,843x5584x12680,1125x3488x5816,4431x1072x14888,1559x1080x14664,555x1744x10968,553x1408x11688,347x14680x6280,283x12712x15992,896x14568x8072,3633x10504x8728,3708x2488x11736,265x1920x12680,370x2968x15864,557x6560x13032,334x7000x13192,383x15536x4360" \
  bash scripts/setting_ab.sh $d 2>&1 | tail -28
tar czf $OUT/s41c2.tgz -C $OUT s41c2 && rm -rf $d
