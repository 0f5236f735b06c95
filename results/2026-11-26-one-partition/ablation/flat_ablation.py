"""Probe variants of the one-partition kernel (session 23), applied to a copy of the tree: python3 flat_ablation.py
ROOT VARIANT. v1: no griddepcontrol in the one-partition path; v2: v1 + tile coordinates without the batch and group
divisions (one tile-row band: t % tiles_m, t // tiles_m; unbatched); v3: v2 + no empty-barrier inits."""
import sys

root, variant = sys.argv[1] + "/warpgemm/kernels/hopper/", sys.argv[2]


def patch(name, old, new):
    s = open(root + name).read()
    assert old in s, (name, old[:60])
    open(root + name, "w").write(s.replace(old, new))


if variant in ("v1", "v2", "v3"):
    patch("one_partition.py", "    wait_for_prior_grid()\n", "")
    patch("gemm_kernel.py", "    allow_dependents()\n", "    if WARP_SPECIALIZE:\n        allow_dependents()\n")
if variant in ("v2", "v3"):
    patch("scheduler.py", """    per_batch = tiles_m * tiles_n
    batch = tile // per_batch
    tile_m, tile_n = grouped_order(tile - batch * per_batch, tiles_m, tiles_n, GROUP_M)""",
          """    batch = tile * 0
    tile_n = tile // tiles_m
    tile_m = tile - tile_n * tiles_m""")
if variant == "v3":
    patch("pipeline.py", """            mbarrier.init(empty.index(i), count=empty_count)""",
          """            if empty_count > 0:
                mbarrier.init(empty.index(i), count=empty_count)""")
    patch("gemm_kernel.py", "    ring = BarrierRing.allocate(STAGES, CLUSTER_M)",
          "    ring = BarrierRing.allocate(STAGES, CLUSTER_M if WARP_SPECIALIZE else 0)")
