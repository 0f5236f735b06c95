#!/bin/bash
# Session 44, call 4: why the 128x160 class (545-3416 rows) trails cuBLAS more after do_bench's flush than back to
# back. scripts/flush_probe.py on 8 weak shapes + 2048^3: zero (do_bench's flush, dirty L2), read (clean L2), graph
# (back to back over cold weights). Then DRAM bytes of the plan's kernel and cuBLAS under ncu (caches flushed and
# clean before each kernel).
export PYTHONPATH=$PWD
mkdir -p $OUT/c4
S=545x4096x14336,573x4096x11008,542x8192x28672,1901x2408x2512,2147x1880x2536,994x5136x4416,2970x1544x3040,3416x1312x2176,2048x2048x2048
timeout 330 python scripts/flush_probe.py $OUT/c4/flush.json 2 $S > $OUT/c4/flush.log 2>&1
echo "flush rc=$?"; cat $OUT/c4/flush.log | grep -v Warn
M="--clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum"
for sc in 545x4096x14336:128x160x64_s5_w8_g8_c5 1901x2408x2512:128x160x64_s5_w8_g8_c5 \
          994x5136x4416:128x160x64_s5_w8_g8_c5 2048x2048x2048:128x256x64_s4_w8_g8_c4; do
    timeout 90 ncu $M python scripts/ncu_gemm_probe.py ${sc%%:*} ${sc#*:} > $OUT/c4/ncu_${sc%%:*}.log 2>&1
    echo "== ${sc}"; grep -E "^  [a-zA-Z_].*\(|gpu__time|dram__bytes|lts__t_bytes" $OUT/c4/ncu_${sc%%:*}.log | cut -c1-110
done
