#!/usr/bin/env python3
"""Per-function in-use estimates of a heap profile vs the truth printed by profiler_bench.

usage: accuracy.py <profiler_bench> <profile.heap> <bench stdout file>
Prints one line per function: name, truth bytes, estimate bytes, relative error, the
expected 1-sigma relative error at this sampling rate, share of heap.
heap_v2/<R> lines are un-sampled as the pprofs do: scale = 1 / (1 - exp(-(bytes/count) / R)).
The function of a record is the one holding its leaf PC (nm; the bench is non-PIE).
"""
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
import legacy_dump  # noqa: E402

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
try:
    rate, records = legacy_dump.read(heap)
except legacy_dump.DumpError as e:
    sys.exit(str(e))
est = {k: 0.0 for k in truth}
total = 0.0
for n, b, _, _, pcs in records:
    estimate = legacy_dump.unsample(n, b, rate)
    total += estimate
    if not pcs:
        continue
    fn = next((name for s, z, name in syms if s <= pcs[0] < s + z), '')
    for k in est:
        if re.search(r'\b%s\(' % k, fn):
            est[k] += estimate
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
