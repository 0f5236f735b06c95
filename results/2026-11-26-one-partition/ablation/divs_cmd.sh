# Session 23: before (HEAD: one-partition kernel) / after (first-band division skips + no empty inits), alternating.
export PYTHONPATH=$PWD
rm -rf /tmp/before; cp -r scripts/variants_tmp/before /tmp/before
S=256x256x256,384x384x384,512x512x512,1024x1024x256,2048x2048x512,128x4096x4096
for r in 1 2; do
  (cd /tmp/before && TRITON_CACHE_DIR=/tmp/tc_b PYTHONPATH=/tmp/before python3 scripts/fixed_cost_probe.py $OUT/divs_before_$r.json --shapes $S --flat 2>/dev/null | grep -v cublas | awk '{print "before", $1, $2, $3, $4, $5}')
  TRITON_CACHE_DIR=/tmp/tc_a python3 scripts/fixed_cost_probe.py $OUT/divs_after_$r.json --shapes $S --flat 2>/dev/null | grep -v cublas | awk '{print "after ", $1, $2, $3, $4, $5}'
done
