#!/bin/bash
# Session 41, call 4: no A loads for a pair's phantom tile as a branch per unit (gemm.PHANTOM_A = 3) against the
# predicate per K step (2) that cost the 128x160 pair 18% on every tile; forced pairs, the held-out shapes of call 2
# in alternating processes, the tests.
export PYTHONPATH=$PWD
d=$OUT/s41c4; mkdir -p $d
P=warpgemm.kernels.hopper.gemm.PHANTOM_A
timeout 170 python -m pytest -q tests/test_gpu_edge_pieces.py > $d/pytest.log 2>&1; tail -1 $d/pytest.log; grep -E "^(FAILED|ERROR)" $d/pytest.log | head
for s in 0 2 3; do
  timeout 60 python scripts/partial_rows_probe.py $d/w160_$s.json --m 1125 --nk 3488x5816,3488x5824 --config 128x160x64_s5_w8_g8_c5_cm2 --set "$P=$s" --rounds 3 2>&1 | tail -2 | sed "s/^/w160 $s /"
  timeout 60 python scripts/partial_rows_probe.py $d/cm128_$s.json --m 384 --nk 4096x14336 --config 128x128x64_s6_w4_g8_cm2 --set "$P=$s" --rounds 3 2>&1 | tail -1 | sed "s/^/cm128 $s /"
done
AB_MODES="zero:$P=0 step:$P=2 unit:$P=3" AB_TIMING=flush AB_REPS=2 AB_TIMEOUT=110 AB_ROUNDS=3 \
AB_SHAPES="2900x7544x8456,866x9568x10200,2315x6552x10680,4218x9832x1480,1567x13672x11864,1387x5728x6504,843x5584x12680,1125x3488x5816,4431x1072x14888,1559x1080x14664,555x1744x10968,553x1408x11688,347x14680x6280,283x12712x15992,896x14568x8072,3633x10504x8728,3708x2488x11736,265x1920x12680,370x2968x15864,557x6560x13032,334x7000x13192,383x15536x4360" \
  bash scripts/setting_ab.sh $d 2>&1 | tail -28
tar czf $OUT/s41c4.tgz -C $OUT s41c4 && rm -rf $d
