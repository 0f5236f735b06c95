"""Probe: weight loads marked L2::evict_first on weight-streaming GEMMs (`mid`, decode), then a `bench` command.

    HINT=none|b_first|a_first TRITON_CACHE_DIR=$(mktemp -d) python3 scripts/evict_first_weight_probe.py bench mid ...

Reading (session 27, scripts/tile_timeline_probe.py): at 128x14336x4096 under `bench mid` (do_bench, which zeroes
a 256 MB buffer before each call) the first wave of tiles streams the weight at 2.0 TB/s and the second at 2.6:
the first pays for writing back the ~50 MB of dirty lines the flush leaves in L2, which our weight loads evict.
A weight read once (or by the two tile-rows of a band at the same time) has no use for L2 residency; marked
evict-first its lines would replace each other and leave other lines (dirty activations in a model, the flush's
here) in place. Session 11 found evict-first TMA stores paid on the weight gradient; loads were never tried on
weight streams. B is the weight of plain tiles (b_first), A of swap-AB tiles (a_first).

The hint goes into gemm_kernel's PTX through l2_load_hint_probe.install (first TMA load = A, second = B; kernels
with other load counts stay plain, with a warning). A fresh TRITON_CACHE_DIR per setting: the hinted binary has
the plain one's cache key.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(__file__))
from l2_load_hint_probe import POLICIES, install  # noqa: E402

from warpgemm.cli import app  # noqa: E402


def main():
    hint = os.environ.get("HINT", "none")
    counts = []
    if hint != "none":
        install(*POLICIES[hint], counts)
    try:
        app(sys.argv[1:], standalone_mode=False)
    finally:
        print(f"hint {hint}: hinted loads per compiled gemm_kernel {counts}")


if __name__ == "__main__":
    main()
