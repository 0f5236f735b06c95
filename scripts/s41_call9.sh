#!/bin/bash
# Session 41, call 9: call 8's B clamp (reverted) hit an illegal instruction on a cluster pair at 300x1100x700
# (operands copied for TMA, a phantom tile, a partial last tile-column): the landed phantom rule on that product
# alone first, each pair in its own process, then the edge and cluster tests.
export PYTHONPATH=$PWD
d=$OUT/s41c9; mkdir -p $d
for c in 128x256x64_s3_w8_g16_cm2 128x128x64_s6_w4_g8_cm2 128x160x64_s5_w8_g8_c5_cm2; do
  timeout 60 python -m pytest -q "tests/test_gpu_edge_pieces.py::test_cluster_pairs_phantom_tile_copied_operands[$c]" > $d/copied_$c.log 2>&1; echo "$c: $(tail -1 $d/copied_$c.log)"
done
timeout 60 python - <<'PY' 2>&1 | tail -3
import torch, warpgemm
from warpgemm.kernels.hopper import gemm
from warpgemm.off_sector import CLUSTER_LARGE
gemm.PHANTOM_A = False
a, w = torch.randn(300, 700, device="cuda", dtype=torch.bfloat16), torch.randn(1100, 700, device="cuda", dtype=torch.bfloat16)
y = warpgemm.matmul(a, w.T, config=CLUSTER_LARGE); torch.cuda.synchronize()
print("phantom off, 128x256 pair 300x1100x700:", ((y.float() - a.float() @ w.float().T).norm() / (a.float() @ w.float().T).norm()).item())
PY
timeout 200 python -m pytest -q tests/test_gpu_edge_pieces.py tests/test_gpu_clusters.py > $d/pytest.log 2>&1; tail -1 $d/pytest.log; grep -E "^(FAILED|ERROR)" $d/pytest.log | head
tar czf $OUT/s41c9.tgz -C $OUT s41c9 && rm -rf $d
