#!/usr/bin/env python3
"""Growth windows (HEAP_PROFILE_AGES=1, pprof-tool --since) against growth_workload.cc.

The workload: a bounded 64 MiB cache (fcache, 16 KiB entries) that replaces a quarter of its
entries every tick, and fl() leaking 1 MiB per tick (4 KiB objects); a dump after each of 20
ticks. (The same shape as "a 100 MiB cache with churn plus a leak of 1 MiB/s, the last 10 of
60 one-second dumps", scaled to run in about a second.) Truth for --since=10 on dump 20: fl grew
by exactly 10 MiB, the cache by exactly 0 (its size is constant); the workload prints how many
cache entries were allocated in the window and are live at the end (new) and how many that were
live at dump 10 it freed (old freed).

Sampled runs (period T = 64 KiB): pprof-tool's growth per function (--show_bytes) must have
  * fl within 3 sigma of 10 MiB, sigma^2 = B s (1/p - 1) (Horvitz-Thompson: B the true bytes,
    s the object size, p = 1 - exp(-s/T));
  * fcache within 3 sigma of 0: its growth is (new - old freed), two independent estimates, so
    sigma^2 = (new + old freed) s^2 (1/p - 1);
  * fl ranked first (growth fl - fcache has mean 10 MiB and sd ~2.8 MiB: P(< 0) ~ 2e-4);
  * the hints: fl leak-like; fcache's churning stack cache-like (its filling stack, which
    only loses objects, is "shrinking").
A run misses with probability <= ~0.6 % (two 3-sigma bounds); 4 runs, at most 1 may miss
(P(2 or more misses) < 2e-4).
Exact mode (TCMALLOC_SAMPLE_PARAMETER=1): fl exactly 10 MiB, fcache exactly 0.
Bad input: --since past the dump, a dump without age lines: status 2 and one line.
google-pprof and go tool pprof read a dump with age lines (when installed).
"""
import math
import os
import re
import subprocess
import sys

T = 65536
TICKS, SINCE = 20, 10

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '../../common'))
from driver_checks import check, clean_env, oracles_read, verdict, workload_args  # noqa: E402


def run(args, workdir, env):
    full = clean_env()
    full.update(env)
    full.update({'LD_PRELOAD': args.preload, 'HEAPPROFILE': os.path.join(workdir, 'prof'),
                 'HEAP_PROFILE_INUSE_INTERVAL': '0', 'HEAP_PROFILE_ALLOCATION_INTERVAL': '0'})
    p = subprocess.run([args.program, str(TICKS), str(SINCE)], env=full, capture_output=True,
                       text=True, timeout=60)
    if not check(p.returncode == 0, 'workload failed (%d): %s' % (p.returncode, p.stderr[-800:])):
        return None
    truth = {}
    for line in p.stdout.splitlines():
        words = line.split()
        for k, v in zip(words[::2], words[1::2]):
            truth[k] = int(v)
    return truth


def since_report(args, path, since=SINCE):
    p = subprocess.run([args.pprof_tool, '--since=%d' % since, '--text', '--show_bytes',
                        args.program, path], capture_output=True, text=True, timeout=120)
    rows = {}
    order = []
    for line in p.stdout.splitlines():
        m = re.match(r'^\s*(-?\d+)\s+-?[\d.]+%\s+-?[\d.]+%\s+-?\d+\s+-?[\d.]+%\s+(\S+)$', line)
        if m:
            rows[m.group(2)] = int(m.group(1))
            if int(m.group(1)) != 0:
                order.append(m.group(2))
    hints = {}  # function -> the hints of its stacks (fcache has two: the fill, the churn)
    for fn, hint in re.findall(r'^Age hint: (\w+): .*? growth, ([\w -]+?):', p.stdout, re.M):
        hints.setdefault(fn, set()).add(hint)
    return p, rows, order, hints


def sampled_run(args, i):
    workdir = os.path.join(args.workdir, 'seed%d' % i)
    os.makedirs(workdir)
    truth = run(args, workdir, {'HEAP_PROFILE_AGES': '1', 'TCMALLOC_SAMPLE_PARAMETER': str(T)})
    if truth is None:
        return False, None
    path = os.path.join(workdir, 'prof.%04d.heap' % TICKS)
    p, rows, order, hints = since_report(args, path)
    if not check(p.returncode == 0, 'pprof-tool --since failed: %s' % p.stderr[-800:]):
        return False, None
    s_l, s_e = truth['leak'], truth['entry']
    p_l, p_e = 1 - math.exp(-s_l / T), 1 - math.exp(-s_e / T)
    sigma_l = math.sqrt(truth['fl_window'] * s_l * (1 / p_l - 1))
    churn = truth['cache_new'] + truth['cache_old_freed']
    sigma_c = math.sqrt(churn * s_e * s_e * (1 / p_e - 1))
    fl, cache = rows.get('fl', 0), rows.get('fcache', 0)
    misses = []
    if abs(fl - truth['fl_window']) > 3 * sigma_l:
        misses.append('fl %d vs %d (3 sigma %.0f)' % (fl, truth['fl_window'], 3 * sigma_l))
    if abs(cache) > 3 * sigma_c:
        misses.append('fcache %d vs 0 (3 sigma %.0f)' % (cache, 3 * sigma_c))
    if order[:1] != ['fl']:
        misses.append('fl not ranked first: %s' % order)
    if hints.get('fl') != {'leak-like'} or 'cache-like' not in hints.get('fcache', set()):
        misses.append('hints %s' % hints)
    print('seed %d: fl %.2f MiB (truth %.2f, 3 sigma %.2f), fcache %.2f MiB (3 sigma %.2f), '
          'order %s, hints %s%s' % (i, fl / 2**20, truth['fl_window'] / 2**20,
                                    3 * sigma_l / 2**20, cache / 2**20, 3 * sigma_c / 2**20,
                                    order[:2], hints, ('  MISS: ' + '; '.join(misses))
                                    if misses else ''))
    if i == 0:
        print(p.stdout)
    return not misses, path


def oracles(args, path):
    oracles_read(args.program, path, args.workdir, 'a dump with age lines', r'\bfl\b')


def main():
    args = workload_args(lambda ap: ap.add_argument('--seeds', type=int, default=4))

    # Exact mode: exact.
    exact = os.path.join(args.workdir, 'exact')
    os.makedirs(exact)
    truth = run(args, exact, {'HEAP_PROFILE_AGES': '1', 'TCMALLOC_SAMPLE_PARAMETER': '1'})
    if truth is not None:
        p, rows, order, hints = since_report(args, os.path.join(exact, 'prof.%04d.heap' % TICKS))
        print('exact: fl %d (truth %d), fcache %d (truth 0), hints %s' % (
            rows.get('fl', 0), truth['fl_window'], rows.get('fcache', 0), hints))
        check(p.returncode == 0 and rows.get('fl') == truth['fl_window'] and
              rows.get('fcache', 0) == 0, 'exact: --since=%d %s' % (SINCE, p.stdout + p.stderr))

    # Bad input: one line, status 2.
    path = os.path.join(exact, 'prof.%04d.heap' % TICKS)
    p, _, _, _ = since_report(args, path, since=TICKS)
    check(p.returncode == 2 and p.stderr.count('\n') == 1 and 'choose 0 <= N < %d' % TICKS
          in p.stderr, '--since past the dump: %d %r' % (p.returncode, p.stderr))
    plain = os.path.join(args.workdir, 'plain')
    os.makedirs(plain)
    run(args, plain, {'TCMALLOC_SAMPLE_PARAMETER': str(T)})
    p, _, _, _ = since_report(args, os.path.join(plain, 'prof.%04d.heap' % TICKS))
    check(p.returncode == 2 and p.stderr.count('\n') == 1 and 'HEAP_PROFILE_AGES' in p.stderr,
          '--since on a dump without age lines: %d %r' % (p.returncode, p.stderr))

    results = [sampled_run(args, i) for i in range(args.seeds)]
    missed = sum(1 for ok, _ in results if not ok)
    print('sampled: %d of %d runs within every bound (at most 1 may miss)' % (
        args.seeds - missed, args.seeds))
    check(missed <= 1, 'sampled: %d of %d runs missed' % (missed, args.seeds))
    good = next((p for ok, p in results if ok and p), None)
    if good:
        oracles(args, good)
    return verdict('growth-window')


if __name__ == '__main__':
    sys.exit(main())
