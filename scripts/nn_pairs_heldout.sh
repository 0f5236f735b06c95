#!/bin/bash
# Held-out check for the candidate rule in scripts/nn_pairs_rule.diff (session 35: cluster pairs for a weight read
# along N whose rows start off 32-byte sectors), to run on the lent GPU from the repository root:
#   bash scripts/nn_pairs_heldout.sh "$OUT"
# It applies the diff to the device's copy of the tree (not committed), then times the rule against
# N_MAJOR_PAIRS=False on 16 random nn shapes (seed 87: M 512-4096, N = 8 mod 16 in 1024-32768, K 1024-8192) where it
# changes the plan, after a flush and back to back, one process a setting (setting_ab.sh).
set -e
git apply scripts/nn_pairs_rule.diff
set +e
LAYOUT=nn AB_MODES="new: old:warpgemm.off_sector.N_MAJOR_PAIRS=False" AB_TIMING="flush b2b" AB_REPS=1 AB_TIMEOUT=120 \
AB_SHAPES=693x1976x5856,1575x2712x2056,1584x3192x4480,660x3608x1816,2460x18584x2976,3275x1304x4160,861x1960x3256,606x1128x1824,1766x9864x5544,1005x9832x7784,3726x2104x2104,768x8056x2776,1697x2840x7056,636x31768x5792,2452x9048x7536,1369x28040x7296 \
  bash scripts/setting_ab.sh "${1:-results/latest}/nn_heldout87"
