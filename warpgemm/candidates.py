"""The kernel configs worth measuring: the candidate lists `bench sweep` times against cuBLAS (how the heuristics'
rules were found, notes/perf.md) and the opt-in tuner tries per problem (warpgemm/tuning.py), and config names read
back into GemmConfigs."""
from __future__ import annotations

from .config import GemmConfig

_C = GemmConfig
_PP = dict(consumers=2)
# The design space the kernel offers, minus combinations known not to fit (the predicate filters the rest).
DENSE_CANDIDATES: tuple[GemmConfig, ...] = (
    _C(128, 256, 64, 3, 8),                       # cooperative: two warpgroups on one 128x256 tile
    _C(128, 256, 64, 3, 8, store_chunks=4),       # the same, output stored in 4 overlapped column chunks
    _C(128, 256, 64, 4, 8, store_chunks=4),       # ... and the freed shared memory spent on a 4th stage
    _C(256, 128, 64, 4, 8, store_chunks=4),       # tall tile, 4 stages
    _C(128, 128, 64, 6, 4, store_chunks=4, **_PP),  # ping-pong: two warpgroups on alternate 128x128 tiles
    _C(128, 128, 64, 5, 4, **_PP),
) + (
    # Two-part widths (config.TWO_PART_WIDTHS: a power-of-two main part + a smaller rest, two accumulators), for
    # shapes whose tile count 128 and 256 leave wave-quantized: 192 = 128 + 64, 160 = 128 + 32, 144 = 128 + 16,
    # 96 = 64 + 32, 80 = 64 + 16; deep rings beside a 16-bit output (as measured: 128x80 would also fit 8 stages).
    _C(128, 192, 64, 4, 8, store_chunks=3),
    _C(128, 192, 64, 4, 8, group_m=16, store_chunks=3),
    _C(128, 160, 64, 5, 8, store_chunks=5),
    _C(128, 144, 64, 6, 8, store_chunks=9),
    _C(128, 96, 64, 7, 8, store_chunks=3),
    _C(128, 80, 64, 7, 8, store_chunks=5),
)
WIDE_CANDIDATES = DENSE_CANDIDATES[-6:]
# Few tiles (M = 128-512): smaller tiles, deeper rings (bytes in flight per SM) and split-K to fill the SMs.
MID_CANDIDATES: tuple[GemmConfig, ...] = (
    _C(128, 256, 64, 3, 8),
    _C(128, 128, 64, 5, 4, **_PP),
    _C(128, 128, 64, 4, 4),
    _C(128, 128, 128, 3, 4),
    _C(64, 256, 64, 4, 4),
) + tuple(_C(128, 128, 64, 6, 4, split_k=s) for s in (1, 2, 3, 4)) \
  + tuple(_C(64, 128, 64, 8, 4, split_k=s) for s in (1, 2, 3, 4)) \
  + (_C(128, 128, 128, 3, 4, split_k=2), _C(64, 256, 64, 4, 4, split_k=2), _C(128, 256, 64, 3, 8, split_k=2))
# Stream-K on the mid shapes (tiles of a last, partly filled wave spread evenly over the SMs).
MID_CANDIDATES += (_C(128, 128, 64, 6, 4, stream_k=True), _C(64, 128, 64, 8, 4, stream_k=True),
                   _C(128, 256, 64, 3, 8, stream_k=True), _C(128, 16, 128, 6, 4, swap_ab=True, stream_k=True))
# Decode (M <= 64): swap-AB with stream-K or split-K, tile heights and ring shapes; the plain 64-row kernel.
DECODE_CANDIDATES: tuple[GemmConfig, ...] = (
    _C(128, 16, 128, 6, 4, stream_k=True, swap_ab=True),
    _C(128, 16, 64, 12, 4, stream_k=True, swap_ab=True),
    _C(64, 16, 128, 10, 4, stream_k=True, swap_ab=True),
    _C(256, 16, 64, 6, 4, stream_k=True, swap_ab=True),
    _C(128, 16, 128, 6, 4, split_k=4, swap_ab=True),
    _C(128, 16, 128, 6, 4, swap_ab=True),
    _C(64, 128, 64, 8, 4, stream_k=True),
    _C(64, 128, 64, 8, 4),
)
# 2-CTA clusters sharing B through TMA multicast: measured no faster than the same tiles alone on the suites
# (notes/perf.md, 2026-11-25 session 15), so in no suite's sweep; the heuristics take them for weights whose rows
# start off 32-byte sectors (off_sector.off_sector_config), users can force them and the tuner tries them.
CLUSTER_CANDIDATES: tuple[GemmConfig, ...] = (
    _C(128, 256, 64, 3, 8, group_m=16, cluster_m=2),
    _C(128, 128, 64, 6, 4, cluster_m=2),
    _C(64, 128, 64, 8, 4, cluster_m=2),
    # Two-part: 3 of 6 32-row boxes a CTA (B N-major: 2 and 1 of 3 whole boxes); 128 + 32: 5 of 10 16-row boxes each
    # (N-major: 3 and 2 of 5).
    _C(128, 192, 64, 4, 8, group_m=16, store_chunks=3, cluster_m=2),
    _C(128, 160, 64, 5, 8, store_chunks=5, cluster_m=2),
)
CANDIDATES = tuple(dict.fromkeys(DENSE_CANDIDATES + MID_CANDIDATES + DECODE_CANDIDATES + CLUSTER_CANDIDATES))
SUITE_CANDIDATES = {"dense": DENSE_CANDIDATES, "quick": DENSE_CANDIDATES, "odd": DENSE_CANDIDATES,
                    "round": DENSE_CANDIDATES, "mid": MID_CANDIDATES, "decode": DECODE_CANDIDATES}


def parse_config_list(text: str) -> dict[str, GemmConfig]:
    """Comma-separated config names (a --configs option) as {name: GemmConfig}, in the order given."""
    return {name: parse_config(name) for name in text.split(",")}


def parse_config(text: str) -> GemmConfig:
    """'128x128x64_s5_w4_g8_pp_sk2' (a config's name) back into a GemmConfig."""
    parts = text.split("_")
    try:
        bm, bn, bk = (int(x) for x in parts[0].split("x"))
    except ValueError:
        raise ValueError(f"cannot read config name {text!r}: expected a tile BMxBNxBK then _-separated fields, e.g. "
                         "128x256x64_s3_w8_g8") from None
    fields = dict(block_m=bm, block_n=bn, block_k=bk)
    for p in parts[1:]:
        if not p:
            raise ValueError(f"cannot read config name {text!r}: an empty field between underscores")
        if p == "pp":
            fields["consumers"] = 2
        elif p == "streamk":
            fields["stream_k"] = True
        elif p == "swap":
            fields["swap_ab"] = True
        elif p == "flat":
            fields["warp_specialize"] = False
        elif p.startswith("cm"):
            fields["cluster_m"] = int(p[2:])
        elif p.startswith("sk"):
            fields["split_k"] = int(p[2:])
        elif p.startswith("c"):
            fields["store_chunks"] = int(p[1:])
        elif p[0] in "swg":
            fields[{"s": "stages", "w": "consumer_warps", "g": "group_m"}[p[0]]] = int(p[1:])
        else:
            raise ValueError(f"cannot read config field {p!r} in {text!r}")
    return GemmConfig(**fields)
