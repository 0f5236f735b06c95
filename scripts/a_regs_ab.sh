#!/usr/bin/env bash
# Probe (session 34): two-part tiles with A read into registers once per K step (wgmma RS) against the shipped
# shared-memory A, in separate processes and Triton caches. Needs scripts/a_regs_probe.diff applied (git apply) on
# the device copy: it adds the WARPGEMM_A_REGS switch. Outputs under $OUT (the device tool's folder).
export PYTHONPATH=$PWD; mkdir -p $OUT
S=1536x1536x1536,3072x3072x3072,1024x2304x4096,567x13864x5104,788x3304x4672,448x11008x4096,320x8192x8192,6144x1536x4096,1280x6912x4096,568x7616x2912,843x5696x5376,645x3328x1440,203x19176x6384,300x5000x4096
for v in 0 1; do TRITON_CACHE_DIR=/tmp/tc$v WARPGEMM_A_REGS=$v python3 scripts/width_cost_probe.py $OUT/width_a$v.json --rounds 3 2>&1 | grep -v Warn > $OUT/width_a$v.log; done
for r in 1 2; do for v in 0 1; do TRITON_CACHE_DIR=/tmp/tc$v WARPGEMM_A_REGS=$v LABEL=a$v SET= timeout 200 python3 scripts/setting_probe.py $OUT/ab_a${v}_r$r.json $S flush 3 > /tmp/ab_$v$r.log 2>&1 || tail -3 /tmp/ab_$v$r.log; done; done
TRITON_CACHE_DIR=/tmp/tc1 WARPGEMM_A_REGS=1 timeout 200 python3 -m pytest -q -x tests/test_gpu_wide.py tests/test_gpu_swap_rows.py 2>&1 | tail -3 > $OUT/tests_a1.log
cat $OUT/width_a*.log $OUT/tests_a1.log
python3 - <<'PY'
import json,glob,os,math,collections
out=os.environ['OUT']; cells=collections.defaultdict(list); cfg={}
for f in sorted(glob.glob(out+'/ab_*.json')):
    d=json.load(open(f)); l=d['label']
    for r in d['results']: cells[(r['shape'],l)].append(r['ratio']); cfg[(r['shape'],l)]=r['config']
shapes=list(dict.fromkeys(k[0] for k in cells))
g={l:[] for l in ('a0','a1')}
for s in shapes:
    m={l:sum(cells[(s,l)])/len(cells[(s,l)]) for l in ('a0','a1')}
    for l in m: g[l].append(m[l])
    print(f"{s:>18} {cfg[(s,'a0')][:26]:>26} a0 {m['a0']:.3f} a1 {m['a1']:.3f} gain {m['a1']/m['a0']:.3f}")
gm=lambda v: math.exp(sum(map(math.log,v))/len(v))
print('geomean vs cuBLAS a0 %.3f a1 %.3f'%(gm(g['a0']),gm(g['a1'])))
PY
