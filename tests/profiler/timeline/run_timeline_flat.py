#!/usr/bin/env python3
"""The runtime timeline on a flat heap (flat_workload.cc: 200 equal stacks site_10..site_209,
each 128 objects of 1000 bytes, through the allocation wrapper hk_xmalloc, held for 800 ms).

Sampled run (TCMALLOC_SAMPLE_PARAMETER=16384, ~8 samples per stack):
  1. The rows name the heap, not its 8 largest stacks: at the plateau every row names at least
     90 % of its sampled bytes, and `pprof-tool --timeline --window=<plateau>`'s report puts at
     least 90 % of its total (the row's estimate) on named rows.
  2. One folding: hk_xmalloc is folded in every view of the file. The window report's rows, the
     --timeline text's stack names and the SVG's legend all name site_* functions, never
     hk_xmalloc, and the names the text gives are names the window report shows.
  3. The chart and the text say what "in use" counts: requested bytes for the estimate and the
     stacks, usable bytes for a sampled run's exact curve.
Exact run (TCMALLOC_SAMPLE_PARAMETER=1):
  4. The timeline's exact in-use counts requested bytes, as the peak profile does: the file's
     highest exact row, and `--timeline`'s "Peak of the exact in-use", equal the requested total
     of <prefix>.peak.heap (1000-byte objects are 1024 usable bytes: 2.4 % more), and the
     header says `exact requested`.
With --ring (label slow): a 9 s hold at 10 ms ticks, ~200 stacks per row, fills the pool of
stack entries (131,072) before the 4096 rows: the ring halves (rows of 20 ms or longer, every
tick counted), the file holds at most 131,072 entries, and the rows still name 90 %.
"""
import math
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ET

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
from driver_checks import check, fresh_dir, profile_workload, verdict, workload_args  # noqa: E402

SVG = '{http://www.w3.org/2000/svg}'
SITES = 200
REQUESTED = SITES * 128 * 1000


def unsample(n, b, rate):
    if n == 0 or rate <= 1:
        return float(b)
    return b / (1.0 - math.exp(-(b / n) / rate))


def parse(path):
    head, rows = None, []
    with open(path) as f:
        for line in f:
            m = re.match(r'^# heapkit: timeline period_ms \d+ ticks \d+ start_unix [\d.]+ '
                         r'start_ns (\d+) rate (\d+)(.*)$', line)
            if m:
                head = (int(m.group(1)), int(m.group(2)), m.group(3).strip())
            m = re.match(r'^# heapkit: timeline row (\d+) exact (\d+) rss \d+ est (\d+)(.*)$', line)
            if m:
                named = sum(unsample(*(int(x) for x in e.split(':')[1:]), head[1])
                            for e in m.group(4).split())
                rows.append((int(m.group(1)), int(m.group(2)), int(m.group(3)), named))
    return head, rows


def run_pprof(args, *more):
    p = subprocess.run([args.pprof_tool] + list(more), capture_output=True, text=True, timeout=120)
    check(p.returncode == 0, 'pprof-tool %s: %s' % (' '.join(more[:2]), p.stderr[-400:]))
    return p.stdout


def plateau_window(p, head):
    _, a, b = p.stdout.split()
    start_ms = head[0] / 1e6
    return ((int(a) - start_ms) / 1000 + 0.1, (int(b) - start_ms) / 1000 - 0.1)


def profile_timeline(args, sample_parameter):
    """The workload profiled with a 50 ms timeline: (process, file, header, rows), or None."""
    p = profile_workload(args, 60, HEAP_PROFILE_TIMELINE='50ms',
                         TCMALLOC_SAMPLE_PARAMETER=sample_parameter)
    if p is None:
        return None
    path = os.path.join(args.workdir, 'prof.timeline.heap')
    head, rows = parse(path)
    if not check(head is not None and rows, 'no timeline in %s' % path):
        return None
    return p, path, head, rows


def check_sampled(args):
    run = profile_timeline(args, '16384')
    if run is None:
        return
    p, path, head, rows = run
    check(head[2] == 'exact usable', 'sampled run: header says %r, want "exact usable"' % head[2])
    t0, t1 = plateau_window(p, head)
    plateau = [r for r in rows if t0 <= r[0] / 1000 <= t1]
    if not check(plateau, 'no row in the plateau %.3f..%.3f s' % (t0, t1)):
        return
    # 1. What the rows name: their stacks' un-sampled bytes against the row's estimate.
    least = min(r[3] / r[2] for r in plateau)
    print('plateau rows %d; each names >= %.1f %% of its estimate' % (len(plateau), 100 * least))
    check(least >= 0.9, 'a plateau row names only %.1f %% of its estimate' % (100 * least))
    window = '--window=%.3f:%.3f' % (t0, t1)
    report = run_pprof(args, '--timeline', window, '--show_bytes', '--nodefraction=0',
                       '--nodecount=100000', args.program, path)
    m = re.search(r'^Showing nodes accounting for (\d+), [\d.]+% of (\d+) total\b', report, re.M)
    names = set()
    for line in report.splitlines():
        f = re.match(r'^\s*(\d+)\s+[\d.]+%\s+[\d.]+%\s+\d+\s+[\d.]+%\s+(.*)$', line)
        if f and int(f.group(1)) > 0:
            names.add(f.group(2).strip())
    if check(m is not None and names, 'window report without total or rows:\n' + report[:1500]):
        named, total = int(m.group(1)), int(m.group(2))
        print('window report: %d of %d bytes on %d named rows (%.1f %%)' %
              (named, total, len(names), 100.0 * named / total))
        check(named >= 0.9 * total, 'the window report names %d of %d bytes' % (named, total))
        check(abs(total - plateau[-1][2]) <= 0.02 * total or
              any(r[2] == total for r in plateau), 'window total %d is no plateau row\'s estimate'
              % total)
        check('hk_xmalloc' not in names, 'the window report shows hk_xmalloc as a row')
        check(all(re.search(r'site_\d+', n) for n in names),
              'window report rows not all site_*: %s' % sorted(names)[:5])
        check(re.search(r'^Allocation wrappers charged to their callers: .*hk_xmalloc', report,
                        re.M) is not None, 'the header does not name hk_xmalloc as folded')
    # 2. The text's legend and the SVG's legend use the same folding.
    text = run_pprof(args, '--timeline', args.program, path)
    legend = re.findall(r'^  S\d+ (.*)$', text, re.M)
    print('text legend: %s' % legend)
    check(legend and all(re.search(r'site_\d+', n) for n in legend),
          'the --timeline text names %s, not the site_* callers of hk_xmalloc' % legend)
    check(all(any(n in r or r in n for r in names) for n in legend),
          'text legend %s not among the window report\'s rows' % legend)
    check(re.search(r'In use: requested bytes', text) is not None and
          re.search(r'exact = the exact in-use \(the allocator\'s count, usable bytes\)', text),
          'the --timeline text does not say what "in use" counts:\n' + text[:600])
    svg = os.path.join(args.workdir, 'flat.svg')
    run_pprof(args, '--timeline=' + svg, args.program, path)
    if check(os.path.exists(svg), 'no SVG'):
        root = ET.parse(svg).getroot()
        bands = [b.get('data-name') for b in root.iter(SVG + 'polygon')
                 if b.get('class') == 'band']
        curves = [c.get('data-name') for c in root.iter(SVG + 'polyline')
                  if c.get('class') == 'curve']
        texts = ' '.join((t.text or '') for t in root.iter(SVG + 'text'))
        print('SVG bands %s; curves %s' % (bands, curves))
        check(bands and all(re.search(r'site_\d+', b) or b == 'other' for b in bands),
              'SVG legend %s: not the site_* callers' % bands)
        check('exact in-use (usable bytes)' in curves, 'SVG curves %s' % curves)
        check('In use: requested bytes' in texts, 'the SVG does not say what "in use" counts')


def check_exact(args):
    run = profile_timeline(args, '1')
    if run is None:
        return
    p, path, head, rows = run
    check(head[1] == 1 and head[2] == 'exact requested',
          'exact run: rate %d, header says %r, want "exact requested"' % (head[1], head[2]))
    peak_path = os.path.join(args.workdir, 'prof.peak.heap')
    with open(peak_path) as f:
        m = re.match(r'^heap profile:\s*\d+:\s*(\d+) \[', f.readline())
    if not check(m is not None, 'no header in %s' % peak_path):
        return
    peak = int(m.group(1))
    top = max(r[1] for r in rows)
    print('exact run: timeline peak %d, peak profile %d requested bytes (objects %d)' %
          (top, peak, REQUESTED))
    check(REQUESTED <= peak < REQUESTED * 1.01, 'peak profile %d, want ~%d' % (peak, REQUESTED))
    check(top == peak, 'timeline peak %d != the peak profile\'s %d requested bytes (%.2f %%)' %
          (top, peak, 100.0 * (top - peak) / peak))
    text = run_pprof(args, '--timeline', '--show_bytes', args.program, path)
    m = re.search(r'^Peak of the exact in-use: (\d+) requested bytes', text, re.M)
    check(m is not None and int(m.group(1)) == peak,
          '--timeline peak line %r, want %d requested bytes' %
          (m.group(0) if m else text[-300:], peak))


def check_ring(args):
    p = profile_workload(args, 120, HEAP_PROFILE_TIMELINE='10ms', TCMALLOC_SAMPLE_PARAMETER='16384',
                         FLAT_HOLD_MS='9000')
    if p is None:
        return
    path = os.path.join(args.workdir, 'prof.timeline.heap')
    with open(path) as f:
        text = f.read()
    m = re.search(r'^# heapkit: timeline period_ms (\d+) ticks (\d+) ', text, re.M)
    head, rows = parse(path)
    if not check(m is not None and rows, 'no timeline in %s' % path):
        return
    period, ticks = int(m.group(1)), int(m.group(2))
    entries = sum(len(line.split()) - 10 for line in text.splitlines()
                  if line.startswith('# heapkit: timeline row '))
    t0, t1 = plateau_window(p, head)
    plateau = [r for r in rows if t0 <= r[0] / 1000 <= t1]
    least = min(r[3] / r[2] for r in plateau) if plateau else 0
    print('ring: %d rows of %d ms, %d ticks, %d entries; plateau rows name >= %.1f %%' %
          (len(rows), period, ticks, entries, 100 * least))
    check(period >= 20, 'rows of %d ms: the pool did not fill and halve' % period)
    check(len(rows) < 4096 and ticks > len(rows), '%d rows for %d ticks' % (len(rows), ticks))
    check(entries <= 131072, '%d entries, more than the pool holds' % entries)
    check(plateau and least >= 0.9, 'a plateau row names only %.1f %%' % (100 * least))


def main():
    ring = '--ring' in sys.argv
    if ring:
        sys.argv.remove('--ring')
    args = workload_args()
    if ring:
        check_ring(args)
        return verdict('flat timeline ring')
    check_sampled(args)
    fresh_dir(args.workdir)
    check_exact(args)
    return verdict('flat timeline')


if __name__ == '__main__':
    sys.exit(main())
