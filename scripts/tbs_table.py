"""Print each JSON result file of a directory (bench decode / graph_mid_probe output) as one line per shape with
every config's effective TB/s (and with --us its time per call). Usage: python scripts/tbs_table.py DIR [--us]"""
import collections
import glob
import json
import os
import sys

show_us = "--us" in sys.argv[2:]
for path in sorted(glob.glob(os.path.join(sys.argv[1], "*.json"))):
    table = collections.defaultdict(dict)
    for r in json.load(open(path))["results"]:
        table[r["shape"]][r["config"].replace("_w4_g8", "")] = (r["tbs"], r["us"])
    print(os.path.basename(path))
    for shape, row in table.items():
        cells = (f"{c}:{v:.3f}" + (f" TB/s {u:.2f} us" if show_us else "") for c, (v, u) in row.items())
        print(f"  {shape:>14} " + " ".join(cells))
