#!/usr/bin/env python3
"""HEAP_PROFILE_TIMELINE=100ms against sawtooth_workload.cc, whose three stacks follow a known
schedule (the workload prints what each holds after every 5 ms step).

Checks, on <prefix>.timeline.heap (profiler/time/timeline.h):
  1. Each stack's curve within 3 sigma of the truth per 1 s window. Derivation: at the default
     rate R = 524288 a 64 KiB block is sampled with p = 1 - exp(-s/R) independently of every
     other block and, when sampled, stands for s/p bytes (Horvitz-Thompson, the dumps' and the
     pprofs' weight). A row's estimate for a stack holding N blocks is therefore unbiased with
     variance N * s^2 * (1-p)/p = B * s * (1-p)/p, B = N*s the true bytes. A window's mean of n
     rows has standard deviation at most the mean of the rows' standard deviations (the rows
     share blocks, so they are correlated; Minkowski's inequality bounds the sd of a sum by
     the sum of the sds): the bound is 3 * mean_r sqrt(B_r * s * (1-p)/p). Rows within 3 ms
     of a step in which the stack dropped its blocks are left out (the tick and the step are
     not ordered within that time, and a drop moves the truth by the whole tooth).
  2. Peaks aligned within one tick: within each tooth (a ramp without frees the estimate only
     rises), the last row at the stack's maximal estimate is at most one tick (100 ms) before
     the tooth's true top (which holds from the last step before the drop until the drop).
  3. The exact total: in the quiet phase, where nothing is allocated, every row's exact in-use
     equals the allocator's counter the workload read (generic.current_allocated_bytes).
  4. The file is bounded (kTimelineRows rows; run_timeline_ring.py fills the ring) and
     `pprof-tool --timeline` prints the rows, and with --window the stacks at the peak of a
     window name the stack whose tooth is highest there; the SVG, the web UI's view and
     damaged files (timeline_views.py).
  5. A bad value is one line naming the variable, and no timeline.
"""
import math
import os
import re
import subprocess
import sys

RATE = 524288
BLOCK = 64 * 1024
NAMES = ('saw_a', 'saw_b', 'saw_c')
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
from driver_checks import (check, clean_env, fresh_dir, profile_workload, symbol_at,  # noqa: E402
                           symbols_matching, verdict, workload_args)
from timeline_views import check_views  # noqa: E402


def saw_symbols(program):
    """(start, size, 'saw_a'|'saw_b'|'saw_c') of the workload's three stack functions."""
    return symbols_matching(program, r'\b(saw_[abc])\(')


def parse_timeline(path, syms):
    head, stacks, rows = None, {}, []
    with open(path) as f:
        for line in f:
            m = re.match(r'^# heapkit: timeline period_ms (\d+) ticks (\d+) start_unix [\d.]+ '
                         r'start_ns (\d+) rate (\d+) exact usable$', line)
            if m:
                head = tuple(int(x) for x in m.groups())
                continue
            m = re.match(r'^# heapkit: timeline stack (\d+) @((?: 0x[0-9a-f]+)*)$', line)
            if m:
                fn = None
                for pc in (int(x, 16) for x in m.group(2).split()):
                    fn = symbol_at(syms, pc)
                    if fn:
                        break
                stacks[int(m.group(1))] = fn
                continue
            m = re.match(r'^# heapkit: timeline row (\d+) exact (\d+) rss (\d+) est (\d+)(.*)$', line)
            if m:
                per = {}
                for item in m.group(5).split():
                    i, n, b = (int(x) for x in item.split(':'))
                    per[i] = (n, b)
                rows.append((int(m.group(1)), int(m.group(2)), int(m.group(3)), int(m.group(4)), per))
    return head, stacks, rows


def unsample(n, b, rate):
    if n == 0:
        return 0.0
    return b / (1.0 - math.exp(-(b / n) / rate))


def main():
    args = workload_args()
    syms = saw_symbols(args.program)
    p = profile_workload(args, 60, HEAP_PROFILE_TIMELINE='100ms')
    if p is None:
        return 1
    steps, quiet = [], None
    for line in p.stdout.splitlines():
        parts = line.split()
        if parts[0] == 'step':
            steps.append(tuple(int(x) for x in parts[1:]))
        elif parts[0] == 'quiet':
            quiet = tuple(int(x) for x in parts[1:])
    path = os.path.join(args.workdir, 'prof.timeline.heap')
    if not check(os.path.exists(path), 'no %s' % path):
        return 1
    head, stacks, rows = parse_timeline(path, syms)
    if not check(head is not None and rows, 'no timeline header or rows in %s' % path):
        return 1
    period_ms, ticks, start_ns, rate = head
    check(rate == RATE, 'rate %d, want %d' % (rate, RATE))
    check(len(rows) <= 4096, '%d rows, more than the ring holds' % len(rows))
    print('%d rows every %d ms, %d ticks; stacks %s' % (len(rows), period_ms, ticks, stacks))
    ids = {fn: [i for i, f in stacks.items() if f == fn] for fn in NAMES}

    def truth_at(ns):
        """Bytes per stack after the last step done by `ns`, and the time to the nearest drop
        of each stack."""
        lo, hi = 0, len(steps)
        while lo < hi:
            mid = (lo + hi) // 2
            if steps[mid][0] <= ns:
                lo = mid + 1
            else:
                hi = mid
        k = lo - 1
        held = steps[k][1:] if k >= 0 else (0, 0, 0)
        return held, k

    drops = [[] for _ in NAMES]  # (ns of the step that dropped, ns of the last step before)
    for a, b in zip(steps, steps[1:]):
        for i in range(3):
            if b[1 + i] < a[1 + i]:
                drops[i].append((b[0], a[0]))
    p_block = 1.0 - math.exp(-BLOCK / RATE)
    var_per_byte = BLOCK * (1 - p_block) / p_block
    first, last = steps[0][0], steps[-1][0]
    windows = {}
    for t_ms, exact, rss, est, per in rows:
        ns = start_ns + t_ms * 1000000
        if not first <= ns <= last:
            continue
        held, k = truth_at(ns)
        for i, fn in enumerate(NAMES):
            if any(abs(ns - d) < 3000000 or abs(ns - before) < 3000000 for d, before in drops[i]):
                continue
            got = sum(unsample(*per[j], rate) for j in ids[fn] if j in per)
            w = windows.setdefault((fn, (ns - first) // 1000000000), [0, 0.0, 0.0, 0])
            w[0] += 1
            w[1] += got - held[i]
            w[2] += math.sqrt(held[i] * var_per_byte)
    for (fn, sec), (n, diff, sd, _) in sorted(windows.items()):
        bound = 3 * sd / n
        ok = abs(diff / n) <= bound
        print('%s s%d: %d rows, mean error %+.1f MiB, bound %.1f MiB%s' % (
            fn, sec, n, diff / n / 2**20, bound / 2**20, '' if ok else '  MISS'))
        check(ok, '%s window %d: mean error %.1f MiB over 3 sigma %.1f MiB' % (
            fn, sec, diff / n / 2**20, bound / 2**20))

    # Peaks: per tooth of each stack, the last row at its maximal estimate.
    for i, fn in enumerate(NAMES):
        for drop_ns, top_ns in drops[i]:
            begin = max([d for d, _ in drops[i] if d < drop_ns], default=first)
            tooth = [(t_ms, per) for t_ms, _, _, _, per in rows
                     if begin <= start_ns + t_ms * 1000000 < drop_ns]
            if len(tooth) < 2:
                continue
            est = [sum(unsample(*per[j], rate) for j in ids[fn] if j in per) for _, per in tooth]
            best = max(est)
            at = max(k for k, v in enumerate(est) if v == best)
            at_ns = start_ns + tooth[at][0] * 1000000
            # The top holds from its last step (top_ns) until the drop's step (drop_ns).
            check(top_ns - period_ms * 1000000 <= at_ns <= drop_ns,
                  '%s: tooth [%d, %d]: peak row at %d, more than one tick (%d ms) away' % (
                      fn, top_ns, drop_ns, at_ns, period_ms))

    # The exact total in the quiet phase.
    if check(quiet is not None, 'the workload allocated during its quiet phase'):
        q_from, q_to, counter = quiet
        inside = [(t_ms, exact) for t_ms, exact, _, _, _ in rows
                  if q_from + 1000000 <= start_ns + t_ms * 1000000 <= q_to - 1000000]
        print('quiet phase: %d rows, counter %d, rows %s' % (
            len(inside), counter, sorted(set(e for _, e in inside))))
        check(len(inside) >= 3, 'only %d rows in the quiet phase' % len(inside))
        check(all(e == counter for _, e in inside),
              'exact in-use in the quiet phase differs from the allocator counter %d' % counter)

    if args.pprof_tool:
        pt = subprocess.run([args.pprof_tool, '--timeline', args.program, path],
                            capture_output=True, text=True, timeout=120)
        check(pt.returncode == 0 and 'saw_a' in pt.stdout and pt.stdout.count('\n') > len(rows),
              'pprof-tool --timeline: %s' % (pt.stdout + pt.stderr)[-800:])
        # The window [1.5 s, 2.4 s] after the workload's start: saw_a's tooth tops at 2.0 s
        # (48 MiB), saw_b's at 1.5 s (32 MiB), saw_c's at 2.1 s (24 MiB).
        t0 = (first - start_ns) / 1e9 + 1.55
        t1 = t0 + 0.8
        pt = subprocess.run([args.pprof_tool, '--timeline', '--window=%.3f:%.3f' % (t0, t1),
                             args.program, path],
                            capture_output=True, text=True, timeout=120)
        rows_out = [l.split()[-1] for l in pt.stdout.splitlines()
                    if re.match(r'^\s*[\d.]+[kMG]?B\s', l)]
        check(pt.returncode == 0 and rows_out[:1] == ['saw_a'],
              'pprof-tool --timeline --window: want saw_a first: %s' % (pt.stdout + pt.stderr)[-800:])
        # The same file drawn (SVG, web UI) and damaged copies refused: timeline_views.py.
        check_views(args.pprof_tool, args.program, path, rows, (round(t0, 3), round(t1, 3)),
                    'saw_a', args.workdir)

    # Bad values: one line naming the variable, no timeline file.
    for bad in ('5ms', '100x', '-1s'):
        workdir = fresh_dir(os.path.join(args.workdir, 'bad'))
        env = clean_env(dict(LD_PRELOAD=args.preload, HEAPPROFILE=os.path.join(workdir, 'prof'),
                             HEAP_PROFILE_TIMELINE=bad))
        p = subprocess.run(['/bin/true'], env=env, capture_output=True, text=True, timeout=30)
        lines = [l for l in p.stderr.splitlines() if 'HEAP_PROFILE_TIMELINE' in l]
        check(p.returncode == 0 and len(lines) == 1 and
              not os.path.exists(os.path.join(workdir, 'prof.timeline.heap')),
              'HEAP_PROFILE_TIMELINE=%s: want one line and no timeline, got %r' % (bad, p.stderr))

    return verdict('timeline')


if __name__ == '__main__':
    sys.exit(main())
