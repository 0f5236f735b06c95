#!/usr/bin/env bash
# Session 42, call 2: gemm.EDGE_SHIFT 0 / 1 / 3 in alternating processes (setting_ab.sh) over 24 held-out shapes
# (seed 422, four per plan class: 128x128, 128x256, 128x256 pair, two-part widths, swap-AB, 64-row tiles) whose last
# tile-column or tile-row is more than a quarter past the edge.
set -u
export PYTHONPATH=$PWD
AB_MODES="s0: s1:warpgemm.kernels.hopper.gemm.EDGE_SHIFT=1 s3:warpgemm.kernels.hopper.gemm.EDGE_SHIFT=3" \
AB_SHAPES="575x2328x15984,178x5008x7792,4179x2488x2048,1729x5896x2768,2217x9744x4096,3430x2128x4864,3554x4504x5456,1982x6048x6144,2942x22560x1368,1647x21376x2184,304x7192x14856,396x25944x9464,1251x2240x6912,351x12376x11008,255x20408x7152,331x23736x11008,67x11288x9048,177x8480x8192,279x30088x4864,274x28080x9104,108x19224x10128,183x3880x14336,445x1880x12984,77x17312x14336" \
AB_TIMING=flush AB_REPS=2 AB_TIMEOUT=150 bash scripts/setting_ab.sh "$OUT/c2" 2>&1 | tail -40
