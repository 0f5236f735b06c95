"""Probe variant (applied to a copy of the tree after init_pass.py): the PTX hook also drops the CTA barriers Triton
puts right before an mbarrier try_wait or a one-thread mbarrier arrive in gemm_kernel, where the instructions just
before the barrier write no shared memory (CUTLASS's pipelines wait and release with no such barrier)."""
import sys

root = sys.argv[1] + "/warpgemm/kernels/hopper/"
h = open(root + "ptx_hints.py").read()
old = "            ptx = drop_init_barriers(ptx)\n"
assert old in h
h = h.replace(old, old + "            ptx = drop_mbar_syncs(ptx)\n")
h += '''

import re as _re
_TRIVIAL = _re.compile(r"^\\s*($|\\.loc|//|\\{|\\}|\\.reg|waitLoop:|and\\.pred|setp|add\\.s|shl\\.b|selp|mov\\.|or\\.b|bfe|cvt|\\$L__tmp)")
_WRITES = ("st.shared", "stmatrix", "fence", "cp.async", "st.global", "atom", "red.", "wgmma.mma", "bar.", "barrier.")


def drop_mbar_syncs(ptx):
    lines = ptx.split("\\n")
    keep = [True] * len(lines)
    dropped = 0
    for i, l in enumerate(lines):
        if not _re.match(r"^\\tbar\\.sync \\t0, \\d+;$", l):
            continue
        j = i + 1
        while j < len(lines) and _TRIVIAL.match(lines[j]):
            j += 1
        nxt = lines[j] if j < len(lines) else ""
        if not ("mbarrier.try_wait" in nxt or "mbarrier.arrive.shared::cta.b64 _," in nxt):
            continue
        k = i - 1
        while k >= 0 and (_TRIVIAL.match(lines[k]) or lines[k].startswith("$L__BB")):
            k -= 1
        prev = lines[k]
        if any(w in prev for w in _WRITES) and "wgmma.wait_group" not in prev:
            continue
        keep[i] = False
        dropped += 1
    import sys as _s
    print(f"[mbar_sync_pass] dropped {dropped} bar.sync", file=_s.stderr)
    return "\\n".join(l for l, k in zip(lines, keep) if k)
'''
open(root + "ptx_hints.py", "w").write(h)
