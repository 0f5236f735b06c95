# Session 23: the one-partition kernel's fixed cost, variant by variant (flat_ablation.py), two alternating rounds.
export PYTHONPATH=$PWD
for v in v0 v1 v2 v3; do rm -rf /tmp/$v; mkdir /tmp/$v; cp -r warpgemm scripts /tmp/$v/; done
for v in v1 v2 v3; do python3 scripts/variants_tmp/flat_ablation.py /tmp/$v $v; done
S=256x256x256,512x512x512,384x384x384
C=64x64x128_s2_w4_g8_flat,64x64x128_s4_w4_g8_flat
for r in 1 2; do
  for v in v0 v1 v2 v3; do
    (cd /tmp/$v && TRITON_CACHE_DIR=/tmp/tc_$v PYTHONPATH=/tmp/$v python3 scripts/fixed_cost_probe.py $OUT/abl_${v}_$r.json --shapes $S --configs $C 2>/dev/null | grep _flat | awk -v v=$v '{print v, $1, $2, $3, $4}')
  done
done
python3 scripts/one_partition_probe.py $OUT/abl_probe.json --shapes $S --tiles 64x64x128_s2,64x64x128_s4 2>/dev/null | grep flat
