export PYTHONPATH=$PWD
for v in main ip mb; do rm -rf /tmp/$v; mkdir /tmp/$v; cp -r warpgemm scripts /tmp/$v/; done
python3 scripts/variants/init_pass.py /tmp/ip; python3 scripts/variants/init_pass.py /tmp/mb; python3 scripts/variants/mbar_sync_pass.py /tmp/mb
S=64x64x64,256x256x256,512x512x512,1024x1024x1024,2048x2048x2048
for v in main ip mb; do
  (cd /tmp/$v && export TRITON_CACHE_DIR=/tmp/tc_$v PYTHONPATH=/tmp/$v
   python3 scripts/fixed_cost_probe.py $OUT/fixed_$v.json --shapes $S 2>/dev/null | awk '{print $1,$2,$3}' > $OUT/fixed_$v.txt
   timeout 150 python3 -m warpgemm bench decode --rounds 2 --no-eager --m 16,64 --json $OUT/decode_$v.json > $OUT/decode_$v.log 2>&1
   timeout 150 python3 -m warpgemm bench mid --rounds 2 --json $OUT/mid_$v.json > $OUT/mid_$v.log 2>&1 )
  echo "== $v"; cat $OUT/fixed_$v.txt | grep -v cublas; grep geomean $OUT/decode_$v.log $OUT/mid_$v.log
done
