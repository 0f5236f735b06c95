export PYTHONPATH=$PWD
python3 -m warpgemm bench dense --layout nn --rounds 3 --json $OUT/bench_dense_nn.json > $OUT/bench_dense_nn.log 2>&1; grep geomean $OUT/bench_dense_nn.log
python3 -m warpgemm bench dense --dtype fp16 --rounds 3 --json $OUT/bench_dense_fp16.json > $OUT/bench_dense_fp16.log 2>&1; grep geomean $OUT/bench_dense_fp16.log
for v in forward serpentine; do
  WARPGEMM_K_ORDER=$v python3 -m warpgemm bench fp8 --rounds 3 --json $OUT/fp8_$v.json > $OUT/fp8_$v.log 2>&1; echo fp8 $v; grep geomean $OUT/fp8_$v.log
  WARPGEMM_K_ORDER=$v python3 -m warpgemm bench odd --rounds 3 --json $OUT/odd_$v.json > $OUT/odd_$v.log 2>&1; echo odd $v; grep geomean $OUT/odd_$v.log
done
cd $OUT && tar czf extra.tgz *.json && rm -f *.json
