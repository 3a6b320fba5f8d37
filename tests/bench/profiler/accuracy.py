#!/usr/bin/env python3
"""Per-function in-use estimates of a heap profile vs the truth printed by profiler_bench.

usage: accuracy.py <profiler_bench> <profile.heap> <bench stdout file>
Prints one line per function: name, truth bytes, estimate bytes, relative error, the
expected 1-sigma relative error at this sampling rate, share of heap.
heap_v2/<R> lines are un-sampled as the pprofs do: scale = 1 / (1 - exp(-(bytes/count) / R)).
The function of a record is the one holding its leaf PC (nm; the bench is non-PIE).
"""
import math
import re
import subprocess
import sys

prog, heap, out = sys.argv[1:4]
truth = {}
objects = {}
for line in open(out):
    m = re.match(r'truth (\w+) (\d+) (\d+) (\d+)', line)
    if m:
        truth[m.group(1)] = int(m.group(2))
        objects[m.group(1)] = (int(m.group(3)), int(m.group(4)))
syms = []
for line in subprocess.run(['nm', '-S', '-C', '--defined-only', prog], capture_output=True,
                           text=True, check=True).stdout.splitlines():
    p = line.split(None, 3)
    if len(p) == 4 and p[2] in 'tTwW':
        syms.append((int(p[0], 16), int(p[1], 16), p[3]))
lines = open(heap).read().split('\n')
h = re.match(r'^heap profile:.*@ (heapprofile|heap_v2/(\d+))', lines[0])
rate = int(h.group(2)) if h.group(2) else 1
est = {k: 0.0 for k in truth}
total = 0.0
for l in lines[1:]:
    if not l:
        break
    if l.startswith('#'):  # comment lines (the dump reason) between header and records
        continue
    m = re.match(r'^\s*(\d+):\s*(\d+)\s*\[\s*(\d+):\s*(\d+)\s*\]\s*@((?: 0x[0-9a-f]+)*)$', l)
    n, b = int(m.group(1)), int(m.group(2))
    pcs = [int(x, 16) for x in m.group(5).split()]
    scale = 1.0
    if rate > 1 and n > 0:
        scale = 1.0 / (1.0 - math.exp(-(b / n) / rate))
    total += b * scale
    if not pcs:
        continue
    fn = next((name for s, z, name in syms if s <= pcs[0] < s + z), '')
    for k in est:
        if re.search(r'\b%s\(' % k, fn):
            est[k] += b * scale
for k in sorted(truth):
    if truth[k] == 0:
        print('%-12s holds nothing in this run' % k)
        continue
    err = est[k] / truth[k] - 1
    # Expected relative standard deviation of the estimate: n objects of size s, each sampled
    # with p = 1 - exp(-s/R): sqrt((1-p) / (n p)).
    n, s = objects[k]
    p = 1 - math.exp(-s / rate) if rate > 1 else 1.0
    sd = math.sqrt((1 - p) / (n * p)) if p < 1 else 0.0
    print('%-12s truth %11d  estimate %13.0f  error %+6.2f%%  (1 sigma %4.1f%%)  share %5.1f%%'
          % (k, truth[k], est[k], 100 * err, 100 * sd, 100 * truth[k] / max(total, 1)))
