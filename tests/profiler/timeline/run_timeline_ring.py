#!/usr/bin/env python3
"""The timeline's bounded ring (profiler/time/timeline.h) when it fills: HEAP_PROFILE_TIMELINE=10ms
over spike_workload.cc's 45 s (~4,500 ticks > 4,096 rows), whose only event is a 64 MiB spike
of 60 ms at 20 s. The ring must have halved its resolution once (rows of 20 ms, at most 4,096
rows, every tick counted), and the halving keeps maxima: the row of the highest exact in-use
holds the spike (>= 64 MiB; the median row under 8 MiB), lies inside the spike within one row,
and names spike() as its top stack.
"""
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
from driver_checks import check, load_symbols, profile_workload, verdict, workload_args  # noqa: E402


def main():
    args = workload_args()
    p = profile_workload(args, 120, HEAP_PROFILE_TIMELINE='10ms')
    if p is None:
        return 1
    _, spike_from, spike_to = p.stdout.split()
    spike_from, spike_to = int(spike_from), int(spike_to)
    head, rows, stacks = None, [], {}
    with open(os.path.join(args.workdir, 'prof.timeline.heap')) as f:
        for line in f:
            m = re.match(r'^# heapkit: timeline period_ms (\d+) ticks (\d+) start_unix [\d.]+ '
                         r'start_ns (\d+) rate \d+ exact usable$', line)
            if m:
                head = tuple(int(x) for x in m.groups())
            m = re.match(r'^# heapkit: timeline stack (\d+) @((?: 0x[0-9a-f]+)*)$', line)
            if m:
                stacks[int(m.group(1))] = [int(x, 16) for x in m.group(2).split()]
            m = re.match(r'^# heapkit: timeline row (\d+) exact (\d+) rss \d+ est \d+(.*)$', line)
            if m:
                top = [tuple(int(x) for x in item.split(':')) for item in m.group(3).split()]
                rows.append((int(m.group(1)), int(m.group(2)), top))
    if not check(head is not None and rows, 'no timeline'):
        return 1
    period_ms, ticks, start_ns = head
    print('%d rows of %d ms, %d ticks' % (len(rows), period_ms, ticks))
    check(period_ms == 20, 'rows of %d ms, want 20 (one halving of 10 ms)' % period_ms)
    check(4096 < ticks, 'only %d ticks: the ring did not fill' % ticks)
    check(len(rows) <= 4096, '%d rows, more than the ring holds' % len(rows))
    check(abs(len(rows) - ticks / 2) <= 2, '%d rows for %d ticks of 10 ms in rows of 20 ms' % (
        len(rows), ticks))
    t_ms, exact, top = max(rows, key=lambda r: r[1])
    median = statistics.median(r[1] for r in rows)
    at_ns = start_ns + t_ms * 1000000
    print('highest row at %d ms: %d bytes (median %d); spike [%d, %d] ms' % (
        t_ms, exact, median, (spike_from - start_ns) // 1000000, (spike_to - start_ns) // 1000000))
    check(exact >= 64 << 20 and median < 8 << 20,
          'the highest row holds %d bytes (median row %d), want the 64 MiB spike' % (exact, median))
    check(spike_from - period_ms * 1000000 <= at_ns <= spike_to + period_ms * 1000000,
          'the highest row (%d ms) is not within a row of the spike' % t_ms)
    addr, size = next(((start, size) for start, size, name in load_symbols(args.program)
                       if re.search(r'\bspike\(\)$', name)), (None, 0))
    biggest = max(top, key=lambda e: e[2]) if top else None
    leaf = stacks.get(biggest[0], [0])[0] if biggest else 0
    check(addr is not None and addr <= leaf < addr + size,
          'the highest row\'s top stack is not spike(): leaf %#x, spike at %s' % (
              leaf, hex(addr) if addr else None))
    return verdict('timeline ring')


if __name__ == '__main__':
    sys.exit(main())
