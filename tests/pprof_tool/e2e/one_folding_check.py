#!/usr/bin/env python3
"""One folding per profile (report/pipeline.cc, FindWrappers): a dump where xmalloc serves four
callers, two of whose objects died within 1 ms. Every view of it folds xmalloc into its callers
and the header names it: the whole dump's --top, --alloc_space, and --lifetime='<1ms', whose
samples reach xmalloc from two callers only (deciding from the view's own samples, xmalloc
stayed a 100 % row there). Synthetic file with its symbols, no binary needed.

usage: one_folding_check.py <pprof-tool> <work dir>
"""
import os
import subprocess
import sys

PPROF, WORK = sys.argv[1:3]
os.makedirs(WORK, exist_ok=True)
FUNCS = {0x401000: "xmalloc", 0x402000: "one", 0x403000: "two", 0x404000: "three",
         0x405000: "four", 0x406000: "main"}
lines = ["--- symbol", "binary=synthetic"]
for pc, name in sorted(FUNCS.items()):
    lines += ["0x%016x %s" % (pc, name), "0x%016x %s" % (pc - 1, name)]
text = "\n".join(lines + ["---"]) + "\n"
text += "heap profile:      4:      400 [     4:      400] @ heapprofile\n"
callers = [0x402001, 0x403001, 0x404001, 0x405001]
for i, c in enumerate(callers):
    kind = "0 same" if i < 2 else "1000000000 live"
    text += "# heapkit: lifetime %s 1 100 100 @ 0x401000 0x%x 0x406001\n" % (kind, c)
for c in callers:
    text += "     1:      100 [     1:      100] @ 0x401000 0x%x 0x406001\n" % c
text += "\nMAPPED_LIBRARIES:\n00400000-00500000 r-xp 00000000 00:00 0 /synthetic\n"
path = os.path.join(WORK, "fold.heap")
with open(path, "w") as f:
    f.write(text)

for view in [[], ["--alloc_space"], ["--lifetime=<1ms"], ["--lifetime=live"]]:
    p = subprocess.run([PPROF, "--top"] + view + [path], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("FAIL: %s: exit %d %s" % (view, p.returncode, p.stderr))
    rows = [l.split()[-1] for l in p.stdout.splitlines() if l.endswith(("xmalloc", "one", "two",
                                                                       "three", "four"))]
    if "xmalloc" in rows:
        sys.exit("FAIL: %s: xmalloc is a row, not folded into its callers:\n%s" % (view, p.stdout))
    if "Allocation wrappers charged to their callers: xmalloc" not in p.stdout:
        sys.exit("FAIL: %s: the header does not name xmalloc:\n%s" % (view, p.stdout))
    print("%-18s rows %s" % (" ".join(view) or "(default)", " ".join(rows)))
print("PASS")
