#!/usr/bin/env python3
"""How much of the heap a runtime timeline names: runs a command under heapkit with
HEAP_PROFILE_TIMELINE, then reads <workdir>/prof.timeline.heap (profiler/time/timeline.h).

  timeline_share.py --preload libheapkit.so --pprof_tool pprof-tool --workdir DIR
                    [--period 100ms] [--rate R] [--env NAME=VALUE]... -- <program> <args>...

Prints, for the row of the highest exact in-use (the peak) and as the median over the rows
holding at least a tenth of the peak's estimate:
  - named: the un-sampled bytes of the row's stacks over the row's estimate;
  - top8: the same for the row's 8 largest stacks alone (what a fixed top-8 row kept);
  - the window report at the peak row (`--timeline --window=T:T`, every node shown): its named
    share ("Showing nodes accounting for"), and the SVG's named part at that row (its bands by
    leaf function, the 10 largest, over the row's estimate);
  - stacks per row (mean, max), entries in the file, rows and their period (halvings);
  - in exact mode (--rate 1), the timeline's peak against the peak profile's requested total.
"""
import argparse
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import xml.etree.ElementTree as ET


def unsample(n, b, rate):
    if n == 0 or rate <= 1:
        return float(b)
    return b / (1.0 - math.exp(-(b / n) / rate))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--preload', required=True)
    ap.add_argument('--pprof_tool', required=True)
    ap.add_argument('--workdir', required=True)
    ap.add_argument('--period', default='100ms')
    ap.add_argument('--rate')
    ap.add_argument('--env', action='append', default=[], help='NAME=VALUE for the command')
    ap.add_argument('command', nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ['--'] else a.command
    shutil.rmtree(a.workdir, ignore_errors=True)
    os.makedirs(a.workdir)
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('HEAP', 'TCMALLOC', 'PERFTOOLS', 'LD_PRELOAD'))}
    env.update(LD_PRELOAD=a.preload, HEAPPROFILE=os.path.join(a.workdir, 'prof'),
               HEAP_PROFILE_TIMELINE=a.period)
    if a.rate:
        env['TCMALLOC_SAMPLE_PARAMETER'] = a.rate
    env.update(kv.split('=', 1) for kv in a.env)
    p = subprocess.run(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        print('command failed (%d): %s' % (p.returncode, p.stderr[-600:]))
        return 1
    path = os.path.join(a.workdir, 'prof.timeline.heap')
    head, rows = None, []
    for line in open(path):
        m = re.match(r'^# heapkit: timeline period_ms (\d+) ticks (\d+) .* rate (\d+)', line)
        if m:
            head = tuple(int(x) for x in m.groups())
        m = re.match(r'^# heapkit: timeline row (\d+) exact (\d+) rss \d+ est (\d+)(.*)$', line)
        if m:
            entries = [tuple(int(x) for x in e.split(':')) for e in m.group(4).split()]
            rows.append((int(m.group(1)), int(m.group(2)), int(m.group(3)), entries))
    period, ticks, rate = head

    def share(row, top=None):
        entries = sorted(row[3], key=lambda e: -e[2])[:top] if top else row[3]
        return sum(unsample(n, b, rate) for _, n, b in entries) / row[2] if row[2] else 1.0

    peak = max(rows, key=lambda r: r[1])
    big = [r for r in rows if r[2] >= 0.1 * peak[2]]
    t = '%.3f:%.3f' % (peak[0] / 1000, peak[0] / 1000)
    rep = subprocess.run([a.pprof_tool, '--timeline', '--window=' + t, '--show_bytes',
                          '--nodefraction=0', '--nodecount=1000000', cmd[0], path],
                         capture_output=True, text=True).stdout
    m = re.search(r'^Showing nodes accounting for (\d+), ([\d.]+)% of (\d+) total', rep, re.M)
    report = float(m.group(2)) if m else float('nan')
    svg = os.path.join(a.workdir, 'timeline.svg')
    subprocess.run([a.pprof_tool, '--timeline=' + svg, '--show_bytes', cmd[0], path],
                   capture_output=True)
    chart = float('nan')
    key = '%.3f:%.3f' % (peak[0] / 1000, peak[0] / 1000)
    for r in ET.parse(svg).getroot().iter('{http://www.w3.org/2000/svg}rect'):
        if r.get('class') == 'dump' and r.get('data-dump') == key:
            title = next(iter(r)).text
            named = 0
            for line in title.split('\n'):
                f = re.match(r'^(\d+)B?  (.*)$', line)
                if f and f.group(2) != 'other':
                    named += int(f.group(1))
            chart = 100.0 * named / peak[2]
    stacks = [len(r[3]) for r in rows]
    print('rows %d of %d ms (%d ticks), rate %d; peak at %.3f s: exact %d, estimate %d' %
          (len(rows), period, ticks, rate, peak[0] / 1000, peak[1], peak[2]))
    print('named at the peak: %.1f %% (top8 %.1f %%); median over %d rows >= 10 %% of the peak: '
          '%.1f %% (top8 %.1f %%)' % (100 * share(peak), 100 * share(peak, 8), len(big),
                                     100 * statistics.median(share(r) for r in big),
                                     100 * statistics.median(share(r, 8) for r in big)))
    print('window report at the peak names %.1f %%; the SVG\'s 10 bands %.1f %%' % (report, chart))
    print('stacks per row: mean %.0f, max %d; %d entries in the file; distinct stacks %d' %
          (statistics.mean(stacks), max(stacks), sum(stacks),
           len({e[0] for r in rows for e in r[3]})))
    peak_path = os.path.join(a.workdir, 'prof.peak.heap')
    if rate <= 1 and os.path.exists(peak_path):  # exact mode: the peak profile's exact total
        with open(peak_path) as f:
            m = re.match(r'^heap profile:\s*\d+:\s*(\d+) \[', f.readline())
        if m:
            total = int(m.group(1))
            print('exact mode: the timeline\'s peak %d, the peak profile\'s %d requested bytes '
                  '(%+.2f %%)' % (peak[1], total, 100.0 * (peak[1] - total) / total))
    return 0


if __name__ == '__main__':
    sys.exit(main())
