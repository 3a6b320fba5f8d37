#!/usr/bin/env python3
"""Lifetimes (HEAP_PROFILE_LIFETIMES=1) against lifetime_workload.cc, whose lifetimes are known.

Truth per allocation site (the leaf frame of the allocation stack):
  fa 64 B freed at once; fb 4 KiB kept 50 ms; fc 1 KiB freed by another thread; fd 16 KiB, half
  freed at once, half kept 1.2 s; fe 1 MiB (256 x 4 KiB) live at exit.
"At once" is a lifetime under 1 ms: the profiler's own path between its two clock reads takes
0.2-5 us, so such objects fall in the [0, 1 us) or [1 us, 10 us) decade by that path's speed,
and a thread preempted between malloc and free (a true lifetime) can land one in a millisecond
decade. So the decades below 1 ms are checked as one group; every decade from 1 ms up is
checked on its own (the truth there is exact: 0 % or 100 % or 50 %).

Sampled run (period T = 64 KiB, so the test stays short): per stack, the share of estimated
bytes in each decade (group) within 5 points of the truth. Why 5 points is >= 3 sigma: a
stack's share in a decade is (close to) the fraction of its sampled objects there (one size per
stack), a binomial proportion with sd sqrt(q(1-q)/n); n, the expected samples per stack, is
>= 900 here (fa: 2^20 objects * (1 - exp(-64/T)) ~ 1023; fb 16384 * 0.061 ~ 993; fc 65536 *
0.0155 ~ 1016; fd 8192 * 0.22 ~ 1813), so sd <= sqrt(0.25/900) = 1.67 points and 5 points is
3 sigma. fc: >= 95 % of its freed bytes freed by another thread (truth 100 %). fe: the live
(censored) estimated bytes within 3 sigma of 1 MiB, sigma^2 = sum s^2 (1/p - 1) over its
objects (the Horvitz-Thompson variance). fd's long half freed (not live), fe not freed.
Exact mode (TCMALLOC_SAMPLE_PARAMETER=1, object counts / 16): every stack's freed + live objects
and bytes exact; fb, fd's long half, fc (cross-thread) and fe (live) exact in their decades;
fa and fd's short half: all under 1 ms but at most 0.1 % (preemption, above). Free stacks
(HEAP_PROFILE_FREE_STACKS=1, exact run): fc's objects are freed in Freer, fa's in main. The exact
run twice: births on the TSC where it qualifies, and on CLOCK_MONOTONIC (HEAP_PROFILE_BIRTH_TSC=0);
and once more with dumps fired by allocations and by frees during the run (allocation and
deallocation intervals), the peak tracker and ages on: the same exact counts in the last dump.
pprof-tool: --lifetime='<1ms' shows fa and fd, not fb or fe; --lifetime=cross shows fc alone;
--lifetime=live ranks fe first.
google-pprof and go tool pprof read the dumps (when installed). A malformed value: one line.
"""
import math
import os
import re
import subprocess
import sys

T = 65536
BINS = [0, 10**3, 10**4, 10**5, 10**6, 10**7, 10**8, 10**9, 10**10, 10**11, 10**12, 3600 * 10**9]
MS = 10**6
LIFETIME_RE = re.compile(r'^# heapkit: lifetime (\d+) (same|cross|live) (\d+) (\d+) (\d+) @'
                         r'((?: 0x[0-9a-f]+)*)(?: \|((?: 0x[0-9a-f]+)*))?$')
SITES = ('fa', 'fb', 'fc', 'fd', 'fe')

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
from driver_checks import check, clean_env, load_symbols, oracles_read, verdict, workload_args  # noqa: E402


def function_of(syms, pc):
    for start, size, name in syms:
        if start <= pc < start + size:
            m = re.match(r'^(?:\(anonymous namespace\)::)?(\w+)', name)
            return m.group(1) if m else name
    return None


def site_of(syms, pcs):
    """The allocation site: the first frame that is one of fa..fe."""
    for pc in pcs:
        fn = function_of(syms, pc)
        if fn in SITES:
            return fn
    return None


def run(args, workdir, env, divisor):
    full = clean_env()
    full.update(env)
    full['LD_PRELOAD'] = args.preload
    full['HEAPPROFILE'] = os.path.join(workdir, 'prof')
    p = subprocess.run([args.program, str(divisor)], env=full, capture_output=True, text=True,
                       timeout=60)
    check(p.returncode == 0, 'workload failed (%d): %s' % (p.returncode, p.stderr[-800:]))
    counts = {}
    for line in p.stdout.splitlines():
        fn, n, size = line.split()
        counts[fn] = (int(n), int(size))
    return counts, p.stderr


def last_dump(workdir):
    dumps = sorted(f for f in os.listdir(workdir) if re.match(r'prof\.\d{4}\.heap$', f))
    return os.path.join(workdir, dumps[-1]) if dumps else None


def parse_lifetimes(path, syms):
    """{site: [(bin_ns, end, count, bytes, estimated, free_site_fn)]}"""
    cells = {fn: [] for fn in SITES}
    with open(path) as f:
        for line in f:
            m = LIFETIME_RE.match(line.rstrip('\n'))
            if not m:
                check(not line.startswith('# heapkit: lifetime'), 'bad lifetime line %r' % line)
                continue
            pcs = [int(x, 16) for x in m.group(6).split()]
            site = site_of(syms, pcs)
            if site is None:
                continue
            free_fn = None
            if m.group(7):
                free_pcs = [int(x, 16) for x in m.group(7).split()]
                free_fn = function_of(syms, free_pcs[0]) if free_pcs else None
            cells[site].append((int(m.group(1)), m.group(2), int(m.group(3)), int(m.group(4)),
                                int(m.group(5)), free_fn))
    return cells


def decade_groups():
    """(name, [bins]): the sub-millisecond decades as one group, then each decade from 1 ms."""
    groups = [('<1ms', [b for b in BINS if b < MS])]
    groups += [('>=%gs' % (b / 1e9), [b]) for b in BINS if b >= MS]
    return groups


TRUTH = {  # share of each site's bytes per decade group (the rest: 0)
    'fa': {'<1ms': 1.0},
    'fb': {'>=0.01s': 1.0},
    'fd': {'<1ms': 0.5, '>=1s': 0.5},
}


def check_sampled(args, syms):
    workdir = os.path.join(args.workdir, 'sampled')
    os.makedirs(workdir)
    counts, _ = run(args, workdir, {'HEAP_PROFILE_LIFETIMES': '1',
                                    'TCMALLOC_SAMPLE_PARAMETER': str(T)}, 1)
    path = last_dump(workdir)
    if not check(path is not None, 'sampled: no dump'):
        return None
    cells = parse_lifetimes(path, syms)
    for fn, truth in TRUTH.items():
        total = sum(c[4] for c in cells[fn])
        if not check(total > 0, 'sampled: no lifetimes for %s' % fn):
            continue
        shares = []
        for name, bins in decade_groups():
            share = sum(c[4] for c in cells[fn] if c[0] in bins) / total
            want = truth.get(name, 0.0)
            shares.append('%s %.1f%%' % (name, 100 * share) if share > 0 else '')
            check(abs(share - want) <= 0.05,
                  'sampled: %s share %s %.1f %% vs truth %.0f %%' % (fn, name, 100 * share,
                                                                   100 * want))
        n = sum(c[2] for c in cells[fn])
        print('sampled %s: %d samples, %.1f MiB estimated: %s' % (
            fn, n, total / 2**20, ' '.join(s for s in shares if s)))
    # fd's long half was freed; nothing of fa..fd is live at exit.
    for fn in ('fa', 'fb', 'fc', 'fd'):
        live = sum(c[4] for c in cells[fn] if c[1] == 'live')
        check(live == 0, 'sampled: %s has %d live bytes at exit' % (fn, live))
    freed_c = sum(c[4] for c in cells['fc'] if c[1] != 'live')
    cross_c = sum(c[4] for c in cells['fc'] if c[1] == 'cross')
    if check(freed_c > 0, 'sampled: fc has no frees'):
        print('sampled fc: %.1f %% of freed bytes freed by another thread' % (
            100 * cross_c / freed_c))
        check(cross_c >= 0.95 * freed_c, 'sampled: fc cross-thread %.1f %% < 95 %%' % (
            100 * cross_c / freed_c))
    for fn in ('fa', 'fb', 'fd'):
        cross = sum(c[4] for c in cells[fn] if c[1] == 'cross')
        check(cross == 0, 'sampled: %s has cross-thread frees' % fn)
    n_e, s_e = counts['fe']
    truth_e = n_e * s_e
    p = 1 - math.exp(-s_e / T)
    sigma = math.sqrt(n_e * s_e * s_e * (1 / p - 1))
    live_e = sum(c[4] for c in cells['fe'] if c[1] == 'live')
    freed_e = sum(c[4] for c in cells['fe'] if c[1] != 'live')
    print('sampled fe: %.0f live bytes estimated (truth %d, 3 sigma %.0f)' % (live_e, truth_e,
                                                                              3 * sigma))
    check(abs(live_e - truth_e) <= 3 * sigma, 'sampled: fe live %.0f bytes vs %d (3 sigma %.0f)'
          % (live_e, truth_e, 3 * sigma))
    check(freed_e == 0, 'sampled: fe freed')
    return path


def check_exact(args, syms, tsc, name, extra=None):
    """The exact run; tsc '0': births on CLOCK_MONOTONIC (HEAP_PROFILE_BIRTH_TSC=0), '1': on the
    TSC where the machine's counter qualifies (else CLOCK_MONOTONIC too; the log names it).
    extra: more settings (the run with dumps during the run)."""
    workdir = os.path.join(args.workdir, name)
    os.makedirs(workdir)
    env = {'HEAP_PROFILE_LIFETIMES': '1', 'HEAP_PROFILE_FREE_STACKS': '1',
           'TCMALLOC_SAMPLE_PARAMETER': '1', 'HEAP_PROFILE_BIRTH_TSC': tsc,
           'PERFTOOLS_VERBOSE': '1'}
    env.update(extra or {})
    counts, stderr = run(args, workdir, env, 16)
    if extra:
        dumps = [f for f in os.listdir(workdir) if f.endswith('.heap') and '.peak.' not in f]
        print('exact, %s: %d dumps' % (name, len(dumps)))
        check(len(dumps) >= 5, 'exact, %s: %d dumps, not one per interval' % (name, len(dumps)))
    clock = [l for l in stderr.splitlines() if 'birth clock' in l]
    print('exact, HEAP_PROFILE_BIRTH_TSC=%s: %s' % (tsc, clock))
    check(len(clock) == 1 and (tsc == '1' or clock[0].endswith('CLOCK_MONOTONIC')),
          'exact: birth clock %r with HEAP_PROFILE_BIRTH_TSC=%s' % (clock, tsc))
    path = last_dump(workdir)
    if not check(path is not None, 'exact: no dump'):
        return
    cells = parse_lifetimes(path, syms)
    for fn in SITES:
        n, size = counts[fn]
        got_n = sum(c[2] for c in cells[fn])
        got_b = sum(c[3] for c in cells[fn])
        est = sum(c[4] for c in cells[fn])
        check(got_n == n and got_b == n * size and est == got_b,
              'exact: %s %d objects %d bytes (estimated %d), truth %d objects %d bytes' % (
                  fn, got_n, got_b, est, n, n * size))

    def objects(fn, pred):
        return sum(c[2] for c in cells[fn] if pred(c))
    n_b = counts['fb'][0]
    check(objects('fb', lambda c: c[0] == 10**7 and c[1] == 'same') == n_b,
          'exact: fb not all in [10 ms, 100 ms) freed by their thread')
    n_d = counts['fd'][0]
    check(objects('fd', lambda c: c[0] == 10**9 and c[1] == 'same') == n_d // 2,
          'exact: fd long half not exactly %d objects in [1 s, 10 s)' % (n_d // 2))
    short_d = objects('fd', lambda c: c[0] < MS)
    check(n_d // 2 - short_d <= max(1, n_d // 2000),
          'exact: fd short half %d of %d under 1 ms' % (short_d, n_d // 2))
    n_a = counts['fa'][0]
    short_a = objects('fa', lambda c: c[0] < MS)
    check(n_a - short_a <= n_a // 1000, 'exact: fa %d of %d under 1 ms' % (short_a, n_a))
    n_c = counts['fc'][0]
    check(objects('fc', lambda c: c[1] == 'cross') == n_c, 'exact: fc not all cross-thread')
    check(objects('fe', lambda c: c[1] == 'live') == counts['fe'][0], 'exact: fe not all live')
    # Free stacks: the leaf frame of the free.
    free_fns = {fn: set(c[5] for c in cells[fn] if c[1] != 'live') for fn in ('fa', 'fc')}
    print('exact: fa %d/%d under 1 ms, fd short %d/%d; free sites: fa %s, fc %s' % (
        short_a, n_a, short_d, n_d // 2, sorted(map(str, free_fns['fa'])),
        sorted(map(str, free_fns['fc']))))
    check(free_fns['fc'] == {'Freer'}, 'exact: fc freed in %s, not Freer' % free_fns['fc'])
    check(free_fns['fa'] == {'main'}, 'exact: fa freed in %s, not main' % free_fns['fa'])


def check_pprof_tool(args, path):
    if not args.pprof_tool:
        return
    def report(flag):
        p = subprocess.run([args.pprof_tool, flag, '--top=5', args.program, path],
                           capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, 'pprof-tool %s failed: %s' % (flag, p.stderr[-800:]))
        print('$ pprof-tool %s --top=5\n%s' % (flag, p.stdout))
        rows = [l.split()[-1] for l in p.stdout.splitlines()  # rows with a flat value
                if re.match(r'^\s*[\d.]*[1-9][\d.]*\w*\s+[\d.]+%', l)]
        return rows, p.stdout
    rows, _ = report('--lifetime=<1ms')  # fa, fd's short half and most of fc: ~64 MiB each
    check('fa' in rows and 'fd' in rows and 'fb' not in rows and 'fe' not in rows,
          '--lifetime=<1ms: %s, not fa and fd without fb (50 ms) and fe (live)' % rows)
    rows, _ = report('--lifetime=cross')
    check(rows == ['fc'], '--lifetime=cross: %s, not fc alone' % rows)
    rows, _ = report('--lifetime=live')
    check(rows[:1] == ['fe'], '--lifetime=live: fe not first: %s' % rows)
    p = subprocess.run([args.pprof_tool, '--lifetime=<3ms', args.program, path],
                       capture_output=True, text=True, timeout=60)
    check(p.returncode == 2 and p.stderr.count('\n') <= 2 and 'lifetime' in p.stderr,
          'a lifetime bound that is not a decade: one line and status 2, got %d %r' % (
              p.returncode, p.stderr))


def oracles(args, path):
    oracles_read(args.program, path, args.workdir, 'a dump with lifetime lines', r'\bfe\b')


def main():
    args = workload_args()
    syms = load_symbols(args.program)

    # Off by default: no lifetime lines; a malformed value is one line and the default.
    off = os.path.join(args.workdir, 'off')
    os.makedirs(off)
    _, stderr = run(args, off, {'HEAP_PROFILE_LIFETIMES': 'maybe',
                                'TCMALLOC_SAMPLE_PARAMETER': str(T)}, 16)
    lines = [l for l in stderr.splitlines() if 'HEAP_PROFILE_LIFETIMES' in l]
    check(len(lines) == 1 and 'ignoring' in lines[0], 'malformed value: %r' % lines)
    path = last_dump(off)
    if check(path is not None, 'off: no dump'):
        with open(path) as f:
            check('# heapkit: lifetime' not in f.read(), 'lifetime lines without the setting')

    path = check_sampled(args, syms)
    for tsc in ('1', '0'):  # both birth clocks (exact mode's slot births)
        check_exact(args, syms, tsc, 'exact_tsc' + tsc)
    # Dumps fired by allocations and by frees during the run, with the peak tracker and ages on:
    # the records around each dump (exact mode's allocation and free paths hand those over to
    # their out-of-line halves) are still all counted.
    check_exact(args, syms, '1', 'exact_dumps',
                {'HEAP_PROFILE_ALLOCATION_INTERVAL': str(2 << 20),
                 'HEAP_PROFILE_DEALLOCATION_INTERVAL': str(3 << 20),
                 'HEAP_PROFILE_PEAK': '1', 'HEAP_PROFILE_AGES': '1'})
    if path:
        check_pprof_tool(args, path)
        oracles(args, path)
    return verdict('lifetime')


if __name__ == '__main__':
    sys.exit(main())
