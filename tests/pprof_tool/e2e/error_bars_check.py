#!/usr/bin/env python3
"""The sampling error where people look (pprof-tool/model/estimate.h), on sampled profiles made
here (heap_v2 at 512 KiB, symbols included, so no binary is needed):

- a bounded cache whose sampling noise reads -9.0 MB and a real +8.0 MB leak, --base of two
  dumps and --since of a dump with age lines: the leak is the first row (rows sorted by growth, not by |change|), the cache row is
  marked "(within noise)", the header total carries its interval and says the total change is
  within sampling noise; --fail_on_growth=0 exits 0 there, and 1 on a pair whose growth is
  beyond its noise;
- the header total of --text/--top carries "± X at 95 %"; --error_bars adds the rows' interval
  columns; the row table without it is go pprof's (five columns);
- an exact profile's report is unchanged (no interval anywhere);
- a runtime timeline's --window report: its total is the row's sampled estimate of the whole
  heap (120 MB), not the sum of the few stacks the row names (16 MB, which read as 100 %).

usage: error_bars_check.py <pprof-tool> <work dir>
"""
import math
import os
import re
import subprocess
import sys

PPROF, WORK = sys.argv[1:3]
RATE = 524288
os.makedirs(WORK, exist_ok=True)

# Leaf PCs and their callers; names in the file's symbol section (as --raw writes it: the leaf's
# PC, and each caller's return address and return address - 1).
FUNCS = {0x401000: "CacheInsert", 0x402000: "LeakyAppend", 0x403000: "Small",
         0x404000: "main"}


def symbol_section():
    lines = ["--- symbol", "binary=synthetic"]
    for pc, name in sorted(FUNCS.items()):
        lines.append("0x%016x %s" % (pc, name))
        lines.append("0x%016x %s" % (pc - 1, name))
    lines.append("---")
    return "\n".join(lines) + "\n"


def write_profile(name, rows, kind="heap_v2/%d" % RATE, ages=None):
    """rows: (sampled count, object size, leaf pc); ages: (dump M, [(interval, count, size,
    leaf pc)]), heapkit's age lines."""
    n = sum(c for c, _, _ in rows)
    b = sum(c * s for c, s, _ in rows)
    text = symbol_section()
    text += "heap profile: %6d: %8d [%6d: %8d] @ %s\n" % (n, b, n, b, kind)
    if ages:
        text += "# heapkit: ages at dump %d\n" % ages[0]
        for interval, count, size, leaf in ages[1]:
            text += "# heapkit: age %d %d %d @ 0x%x 0x%x\n" % (interval, count, count * size, leaf,
                                                             0x404000 + 1)
    for count, size, leaf in rows:
        text += "%6d: %8d [%6d: %8d] @ 0x%x 0x%x\n" % (count, count * size, count, count * size,
                                                      leaf, 0x404000 + 1)
    text += "\nMAPPED_LIBRARIES:\n00400000-00500000 r-xp 00000000 00:00 0 /synthetic\n"
    path = os.path.join(WORK, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def run(args, expect_rc=0):
    p = subprocess.run([PPROF] + args, capture_output=True, text=True)
    if p.returncode != expect_rc:
        fail("pprof-tool %s: exit %d (expected %d)\n%s%s" % (" ".join(args), p.returncode,
                                                             expect_rc, p.stdout, p.stderr))
    return p.stdout


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def rows_of(report):
    """(name, rest of the row) of the text report's rows, in order."""
    lines = report.splitlines()
    start = next(i for i, l in enumerate(lines) if l.lstrip().startswith("flat"))
    out = []
    for l in lines[start + 1:]:
        m = re.match(r"^\s*(\S+)\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S+)(.*)$", l)
        if m:
            out.append((m.group(2), l))
    return out


KB64 = 65536
p = 1 - math.exp(-KB64 / RATE)
# Dump a: cache 94 samples, leak 4, small 200; dump b: cache 77 (noise: the cache holds the
# same 50 MB), leak 19 (+8 MB), small 200.
a = write_profile("a.heap", [(94, KB64, 0x401000), (4, KB64, 0x402000), (200, 100, 0x403000)])
b = write_profile("b.heap", [(77, KB64, 0x401000), (19, KB64, 0x402000), (200, 100, 0x403000)])
# Dump c: the leak grew far beyond the noise, the cache the same as in a.
c = write_profile("c.heap", [(94, KB64, 0x401000), (80, KB64, 0x402000), (200, 100, 0x403000)])

# 1. --base: sorted by growth, noise marked, the header total's interval and verdict.
out = run(["--text", "--base=" + a, b])
rows = rows_of(out)
if not rows or rows[0][0] != "LeakyAppend":
    fail("--base: the leak (+8 MB) is not the first row (rows sorted by |change|?):\n" + out)
cache = [l for n, l in rows if n == "CacheInsert"]
if not cache or "(within noise)" not in cache[0]:
    fail("--base: the cache's -9 MB of sampling noise is not marked within noise:\n" + out)
leak = [l for n, l in rows if n == "LeakyAppend"]
if "(within noise)" in leak[0]:
    fail("--base: the leak is marked as noise:\n" + out)
total = re.search(r"of (\S+) total \(± (\S+) at 95 %: within sampling noise\)", out)
if not total:
    fail("--base: the header total carries no interval or no verdict:\n" + out)
print("base: %s ± %s (within noise); first row %s" % (total.group(1), total.group(2), rows[0][0]))

# 1b. --since=1 of dump 3 with dump 1 beside it: the same cache (all of its 94 older samples
# replaced by 77 new) and leak (4 older samples kept, 15 new).
write_profile("prof.0001.heap", [(94, KB64, 0x401000), (4, KB64, 0x402000)])
m = write_profile("prof.0003.heap", [(77, KB64, 0x401000), (19, KB64, 0x402000)],
                  ages=(3, [(1, 40, KB64, 0x401000), (2, 37, KB64, 0x401000),
                            (0, 4, KB64, 0x402000), (1, 7, KB64, 0x402000),
                            (2, 8, KB64, 0x402000)]))
out = run(["--top", "--since=1", m])
rows = rows_of(out)
if not rows or rows[0][0] != "LeakyAppend":
    fail("--since: the leak (+8 MB) is not the first row:\n" + out)
if "(within noise)" not in [l for n, l in rows if n == "CacheInsert"][0]:
    fail("--since: the cache's -9 MB is not marked within noise:\n" + out)
if not re.search(r"of -1.06MB total \(± \S+ at 95 %: within sampling noise\)", out):
    fail("--since: the header total carries no interval or no verdict:\n" + out)
run(["--top", "--since=1", m, "--fail_on_growth=0"], 0)

# 2. --fail_on_growth: 0 when the growth is noise, 1 when it is beyond it (report printed).
run(["--text", "--base=" + a, b, "--fail_on_growth=0"], 0)
grown = run(["--text", "--base=" + a, c, "--fail_on_growth=0"], 1)
if "significant growth" not in grown:
    fail("--fail_on_growth: the header does not call the growth significant:\n" + grown)
run(["--text", "--base=" + a, c, "--fail_on_growth=100MB"], 0)  # beyond noise but under 100 MB
err = subprocess.run([PPROF, "--text", b, "--fail_on_growth=0"], capture_output=True, text=True)
if err.returncode != 2 or "--base" not in err.stderr:
    fail("--fail_on_growth without --base: %d %r" % (err.returncode, err.stderr))

# 3. The header of a sampled profile; --error_bars' columns; go pprof's five columns without.
top = run(["--top", b])
if not re.search(r"of \S+ total \(± \S+ at 95 %\)", top):
    fail("--top: the header total carries no interval:\n" + top)
header = [l for l in top.splitlines() if l.lstrip().startswith("flat")][0]
if header.split() != ["flat", "flat%", "sum%", "cum", "cum%", "name"]:
    fail("--top: the row table is not go pprof's: %r" % header)
bars = run(["--top", "--error_bars", b])
header = [l for l in bars.splitlines() if l.lstrip().startswith("flat")][0]
if header.split() != ["flat", "±2σ", "flat%", "sum%", "cum", "±2σ", "cum%", "name"]:
    fail("--error_bars: unexpected columns %r" % header)
cache_row = [l for l in bars.splitlines() if l.endswith("CacheInsert")][0].split()
# 77 samples of 64 KiB: sigma = sqrt(77 w^2 (1-p)), w = 64 KiB / p.
sigma = math.sqrt(77 * (KB64 / p) ** 2 * (1 - p))
shown = float(cache_row[1].lstrip("±").rstrip("MB"))
if abs(shown - 2 * sigma / 1048576) > 0.01:
    fail("--error_bars: CacheInsert's interval %s, expected ±%.2fMB" % (cache_row[1],
                                                                     2 * sigma / 1048576))
if "approximated from each row's mean object size" not in bars:
    fail("--error_bars on a gperftools-style file: no note that the intervals are approximate")
print("top: %s" % [l for l in top.splitlines() if "total" in l][0])

# 4. An exact profile: no interval, the report as before.
exact = write_profile("exact.heap", [(3, 100, 0x401000)], kind="heapprofile")
out = run(["--top", exact])
if "±" in out or "95 %" in out:
    fail("exact profile: an interval where there is no sampling error:\n" + out)
# 5. --timeline --window of a runtime timeline: the total is the heap's.
timeline = symbol_section()
timeline += "heap profile:     30:  1966080 [    30:  1966080] @ heap_v2/%d\n" % RATE
timeline += ("# heapkit: timeline period_ms 100 ticks 3 start_unix 1000.000 start_ns 5 rate %d\n"
             % RATE)
timeline += "# heapkit: timeline stack 1 @ 0x401000 0x404001\n"
timeline += "# heapkit: timeline stack 2 @ 0x402000 0x404001\n"
timeline += ("# heapkit: timeline row 100 exact 100000000 rss 200000000 est 90000000 "
             "1:10:%d 2:5:%d\n" % (10 * KB64, 5 * KB64))
timeline += ("# heapkit: timeline row 200 exact 126000000 rss 200000000 est 120000000 "
             "1:20:%d 2:10:%d\n" % (20 * KB64, 10 * KB64))
timeline += "    20: %d [    20: %d] @ 0x401000 0x404001\n" % (20 * KB64, 20 * KB64)
timeline += "    10: %d [    10: %d] @ 0x402000 0x404001\n" % (10 * KB64, 10 * KB64)
timeline += "\nMAPPED_LIBRARIES:\n00400000-00500000 r-xp 00000000 00:00 0 /synthetic\n"
path = os.path.join(WORK, "prof.timeline.heap")
with open(path, "w") as f:
    f.write(timeline)
out = run(["--timeline", "--window=0:1", path])
total = re.search(r"accounting for (\S+), (\S+) of (\S+) total", out)
if not total or total.group(3) != "114MB":
    fail("--timeline --window: the total is not the row's estimate (120000000 B = 114MB):\n" + out)
print("window: %s" % total.group(0))
print("PASS")
